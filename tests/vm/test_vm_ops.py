"""Every elementwise op, reduction and data-movement op of the ISA against numpy."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest
import vm_programs as P
from test_elementwise import float64_result
from tolerances import elementwise_tolerance, sum_atol

import dvm.vm as vm
from dvm import numerics
from dvm.dialects.elementwise import ELEMENTWISE
from dvm.vm import unplanned_calls
from dvm.vm.binary import layout

SIZES = [0, 1, 16, 37]

FLOAT_UNARY = sorted(
    spec.name
    for spec in ELEMENTWISE
    if spec.arity == 1 and spec.same_type and spec.operand_kind in ("float", "numeric")
)
"""Every unary instruction on floats whose result has the operand's type (op table)."""


def run_single(text: str, x: np.ndarray, y: np.ndarray, out_dtype: str) -> np.ndarray:
    prog = vm.load(vm.encode(vm.assemble(text)))
    out = np.zeros(x.shape, vm.isa.DTYPE_BY_TEXT[out_dtype].np)
    vm.launch(prog, [x, y, out])
    return out


def _inputs(rng: np.random.Generator, dtype: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    np_dtype = vm.isa.DTYPE_BY_TEXT[dtype].np
    if dtype == "i1":
        return rng.random(n) < 0.5, rng.random(n) < 0.5
    if np_dtype.kind == "i":
        return (
            rng.integers(-20, 20, n).astype(np_dtype),
            rng.integers(-5, 6, n).astype(np_dtype),
        )
    x = rng.standard_normal(n) * 3
    special = np.array([0.5, -0.5, 1.5, 2.5, np.inf, -np.inf, np.nan, 0.0])[:n]
    x[: len(special)] = special
    return x.astype(np_dtype), (rng.standard_normal(n) * 2).astype(np_dtype)


@pytest.mark.parametrize("dtype", ["f16", "f32", "f64"])
@pytest.mark.parametrize("op", FLOAT_UNARY)
def test_float_unary(op: str, dtype: str, rng: np.random.Generator) -> None:
    x, y = _inputs(rng, dtype, 37)
    want = float64_result(op, x)
    with np.errstate(all="ignore"):
        got = run_single(P.single_op(op, dtype, dtype, "unary"), x, y, dtype)
    tol = elementwise_tolerance(op, x.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def erf_program(dtype: str) -> vm.Program:
    """out = erf(x), in tiles of 4096 elements."""
    text = P.single_op("erf", dtype, dtype, "unary")
    for old, new in (
        ("s1 = 16", "s1 = 4096"),
        ("s5 = 128", "s5 = 16384"),
        ("s6 = 256", "s6 = 32768"),
    ):
        text = text.replace(f"slot {old}\n", f"slot {new}\n")
    return vm.load(vm.encode(vm.assemble(text)))


@pytest.mark.parametrize("dtype", ["f16", "f32"])
def test_erf_is_the_reference_on_a_dense_grid_planned_or_not(dtype: str) -> None:
    """The differential tests compare the VM with `dvm.interpret`, whose erf is rounded
    once from float64: the VM's is too, and gives the same values on a dense grid of
    f32 (and every f16), 0.5 included, in a first (unplanned) launch and planned."""
    if dtype == "f16":
        grid = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    else:
        grid = np.linspace(-4.5, 4.5, 200_001).astype(np.float32)
    want = numerics.erf(grid)
    prog = erf_program(dtype)
    for x, w in zip(np.array_split(grid, 4), np.array_split(want, 4), strict=True):
        spec = vm.specialize(prog, [x.shape, x.shape, x.shape], lazy=True)
        for _ in ("unplanned", "planned"):
            out = np.full_like(x, 99)
            vm.launch(spec, [x, x, out])
            np.testing.assert_array_equal(out, w)  # (NaN where NaN)
        assert spec.planned


@pytest.mark.parametrize("n", SIZES)
def test_logical_not_and_isfinite(n: int, rng: np.random.Generator) -> None:
    x, y = _inputs(rng, "f32", n)
    np.testing.assert_array_equal(
        run_single(P.single_op("isfinite", "f32", "i1", "unary"), x, y, "i1"), np.isfinite(x)
    )
    b, c = _inputs(rng, "i1", n)
    np.testing.assert_array_equal(
        run_single(P.single_op("logical_not", "i1", "i1", "unary"), b, c, "i1"), ~b
    )


NUMERIC_BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "max": np.maximum,
    "min": np.minimum,
}
COMPARE = {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


@pytest.mark.parametrize("dtype", ["i8", "i32", "i64", "f16", "f32", "f64"])
@pytest.mark.parametrize("op", sorted(NUMERIC_BINARY))
@pytest.mark.parametrize("form", ["rr", "rs", "sr"])
def test_numeric_binary(op: str, dtype: str, form: str, rng: np.random.Generator) -> None:
    x, y = _inputs(rng, dtype, 37)
    s = x.dtype.type(3)
    got = run_single(P.single_op(op, dtype, dtype, form, scalar="#3.0"), x, y, dtype)
    with np.errstate(all="ignore"):
        f = NUMERIC_BINARY[op]
        want = {"rr": lambda: f(x, y), "rs": lambda: f(x, s), "sr": lambda: f(s, x)}[form]()
    np.testing.assert_array_equal(got, want.astype(x.dtype))


@pytest.mark.parametrize("dtype", ["i32", "f32"])
@pytest.mark.parametrize("op", sorted(COMPARE))
def test_compare(op: str, dtype: str, rng: np.random.Generator) -> None:
    x, y = _inputs(rng, dtype, 37)
    got = run_single(P.single_op(op, dtype, "i1", "rr"), x, y, "i1")
    np.testing.assert_array_equal(got, COMPARE[op](x, y))
    got = run_single(P.single_op(op, dtype, "i1", "sr", scalar="#0.0"), x, y, "i1")
    np.testing.assert_array_equal(got, COMPARE[op](x.dtype.type(0), x))


@pytest.mark.parametrize("op", ["logical_and", "logical_or"])
def test_logical_binary(op: str, rng: np.random.Generator) -> None:
    x, y = _inputs(rng, "i1", 37)
    np.testing.assert_array_equal(
        run_single(P.single_op(op, "i1", "i1", "rr"), x, y, "i1"), getattr(np, op)(x, y)
    )


def test_float_div_and_pow(rng: np.random.Generator) -> None:
    x, y = _inputs(rng, "f32", 37)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(
            run_single(P.single_op("div", "f32", "f32"), x, y, "f32"), x / y
        )
        got = run_single(P.single_op("pow", "f32", "f32", "rs", "#2.0"), x, y, "f32")
        np.testing.assert_allclose(got, x**2, rtol=1e-6)
        got = run_single(P.single_op("div", "f32", "f32", "rs", "s7"), x, y, "f32")
        np.testing.assert_allclose(got, x / np.float32(3), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["i8", "i32", "i64"])
def test_int_div_rounds_toward_zero_and_by_zero_is_zero(dtype: str) -> None:
    x = np.array([7, -7, 7, -7, 0, 5, -5, 1], vm.isa.DTYPE_BY_TEXT[dtype].np)
    y = np.array([2, 2, -2, -2, 3, 0, 0, 1], x.dtype)
    got = run_single(P.single_op("div", dtype, dtype), x, y, dtype)
    np.testing.assert_array_equal(got, [3, -3, -3, 3, 0, 0, 0, 1])
    got = run_single(P.single_op("div", dtype, dtype, "sr", "#7.0"), y, x, dtype)
    np.testing.assert_array_equal(got, [3, 3, -3, -3, 2, 0, 0, 7])


def test_int_pow_negative_exponent() -> None:
    x = np.array([2, 1, -1, -1, 0, 3, 2], np.int32)
    y = np.array([-1, -5, -3, -2, -1, 2, 10], np.int32)
    got = run_single(P.single_op("pow", "i32", "i32"), x, y, "i32")
    np.testing.assert_array_equal(got, [0, 1, -1, 1, 0, 9, 1024])


def test_int_overflow_wraps_without_error() -> None:
    x = np.array([127, -128, 100], np.int8)
    y = np.array([1, -1, 100], np.int8)
    with np.errstate(over="raise"):
        got = run_single(P.single_op("add", "i8", "i8"), x, y, "i8")
    np.testing.assert_array_equal(got, (x.astype(np.int32) + y).astype(np.int8))


REDUCE = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod}


@pytest.mark.parametrize("kind", sorted(REDUCE))
@pytest.mark.parametrize("dtype", ["i32", "f32", "f64"])
@pytest.mark.parametrize("keepdims", [True, False])
@pytest.mark.parametrize(("rows", "cols"), [(0, 5), (6, 0), (1, 1), (9, 7)])
def test_reduce_rows(
    kind: str, dtype: str, keepdims: bool, rows: int, cols: int, rng: np.random.Generator
) -> None:
    np_dtype = vm.isa.DTYPE_BY_TEXT[dtype].np
    x = (rng.standard_normal((rows, cols)) * 2).astype(np_dtype)
    prog = vm.load(vm.encode(vm.assemble(P.reduce_op(kind, dtype, "{1}", keepdims))))
    out = np.full((rows, 1) if keepdims else (rows,), 99, np_dtype)
    vm.launch(prog, [x, out])
    ident = reduce_identity(kind, np_dtype)
    want = REDUCE[kind](
        x, axis=1, keepdims=keepdims, **({"initial": ident} if ident is not None else {})
    )
    atol = sum_atol(x, 1, np_dtype) if kind == "sum" and dtype != "i32" else 0
    np.testing.assert_allclose(out, want.astype(np_dtype), rtol=1e-5, atol=atol)


@pytest.mark.parametrize("kind", sorted(REDUCE))
@pytest.mark.parametrize(("rows", "cols"), [(0, 3), (5, 4)])
def test_reduce_axis0_identities(kind: str, rows: int, cols: int, rng: np.random.Generator) -> None:
    x = rng.integers(-3, 4, (rows, cols)).astype(np.int64)
    prog = vm.load(vm.encode(vm.assemble(P.reduce_op(kind, "i64", "{0}", False, tile_rows=8))))
    out = np.zeros(cols, np.int64)
    vm.launch(prog, [x, out])
    ident = reduce_identity(kind, x.dtype)
    np.testing.assert_array_equal(out, REDUCE[kind](x, axis=0, initial=ident))


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("keepdims", [True, False])
@pytest.mark.parametrize("lazy", [True, False], ids=["unplanned", "planned"])
@pytest.mark.parametrize(("rows", "cols"), [(0, 3), (5, 0), (1, 1), (8, 7), (5, 4)])
def test_float_sum_over_axis0(
    dtype: str, keepdims: bool, lazy: bool, rows: int, cols: int, rng: np.random.Generator
) -> None:
    """A float sum over an axis before the last runs as a batched matmul with a row of
    ones (`kernels.matmul_sum_axis`), planned or not; empty axes sum to 0."""
    np_dtype = vm.isa.DTYPE_BY_TEXT[dtype].np
    x = rng.standard_normal((rows, cols)).astype(np_dtype)
    prog = vm.load(vm.encode(vm.assemble(P.reduce_op("sum", dtype, "{0}", keepdims, tile_rows=8))))
    out = np.full((1, cols) if keepdims else (cols,), 99, np_dtype)
    vm.launch(vm.specialize(prog, [x.shape, out.shape], lazy=lazy), [x, out])
    want = x.sum(axis=0, keepdims=keepdims)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=sum_atol(x, 0, np_dtype))


@pytest.mark.parametrize("kind", sorted(REDUCE))
@pytest.mark.parametrize("dtype", ["f32", "i64"])
@pytest.mark.parametrize("lazy", [True, False], ids=["unplanned", "planned"])
def test_reduce_over_no_axes_is_the_input(
    kind: str, dtype: str, lazy: bool, rng: np.random.Generator
) -> None:
    """Reducing over no axes leaves every element as it is (it folds one value)."""
    np_dtype = vm.isa.DTYPE_BY_TEXT[dtype].np
    x = (rng.standard_normal((6, 3)) * 4).astype(np_dtype)
    prog = vm.load(vm.encode(vm.assemble(P.reduce_op(kind, dtype, "{}", False))))
    out = np.full_like(x, 99)
    vm.launch(vm.specialize(prog, [x.shape, out.shape], lazy=lazy), [x, out])
    np.testing.assert_array_equal(out, x)


def test_middle_axis_sum_of_a_loaded_tile_same_bits_planned_or_not(
    rng: np.random.Generator,
) -> None:
    """The sum over axis 0 reads the loaded argument in place (an alias register): a
    planned and an unplanned launch reduce it the same way, so they give the same bits."""
    x = rng.standard_normal((8, 7)).astype(np.float32)
    prog = vm.load(vm.encode(vm.assemble(P.reduce_op("sum", "f32", "{0}", True, tile_rows=8))))
    outs = []
    for lazy in (True, False):
        out = np.full((1, 7), 99, np.float32)
        vm.launch(vm.specialize(prog, [x.shape, out.shape], lazy=lazy), [x, out], fresh=True)
        outs.append(out)
    np.testing.assert_array_equal(outs[0], outs[1])


def reduce_identity(kind: str, dtype: np.dtype) -> object:
    if kind in ("sum", "prod"):
        return 0 if kind == "sum" else 1
    if dtype.kind == "f":
        return -np.inf if kind == "max" else np.inf
    info = np.iinfo(dtype)
    return info.min if kind == "max" else info.max


MOVE = """\
arg a0 f32 2
arg a1 f32 1
arg a2 i32 2
arg a3 f32 2
arg a4 f16 2
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = 0
slot s3 = 1
slot s4 = 4096
slot s5 = 8192
slot s6 = 12288
slot s7 = 16384
slot s8 = 20480
slot s9 = 24576
grid s3
reg r0 f32 (s0, s1) at s2
reg r1 f32 (s3, s1) at s4
reg r2 i32 (s0, s1) at s5
reg r3 f32 (s0, s1) at s6
reg r4 i1 (s0, s1) at s7
reg r5 f16 (s0, s1) at s8
reg r6 f32 (s0, s1) at s9
view v0 a0 offset s2 (s0 s1) (s1 s3)
view v1 a1 offset s2 (s3 s2) (s1 s3)
view v2 a2 offset s2 (s0 s1) (s1 s3)
view v3 a3 offset s2 (s0 s1) (s1 s3)
view v4 a4 offset s2 (s0 s1) (s1 s3)
load r0, v0
load r1, v1
convert r2, r0, i32
store v2, r2
broadcast r3, r1, (r0[0], s1)
lt r4, r0, r3
fill r6, #-1.0, (v0[0], v0[1])
select r3, r4, r6, r0
copy r6, r3
store v3, r6
convert r5, r6, f16
store v4, r5
"""


@pytest.mark.parametrize(("rows", "cols"), [(0, 0), (1, 1), (4, 6), (20, 30)])
def test_convert_broadcast_fill_select_copy(rows: int, cols: int, rng: np.random.Generator) -> None:
    x = (rng.standard_normal((rows, cols)) * 5).astype(np.float32)
    row = rng.standard_normal(cols).astype(np.float32)
    outs = [np.zeros((rows, cols), t) for t in (np.int32, np.float32, np.float16)]
    vm.launch(vm.load(vm.encode(vm.assemble(MOVE))), [x, row, *outs])
    np.testing.assert_array_equal(outs[0], x.astype(np.int32))
    want = np.where(x < row, np.float32(-1), x)
    np.testing.assert_array_equal(outs[1], want)
    np.testing.assert_array_equal(outs[2], want.astype(np.float16))


@pytest.mark.parametrize("lazy", [True, False], ids=["unplanned", "planned"])
@pytest.mark.parametrize(("rows", "cols"), [(7, 5), (8, 3), (1, 1), (0, 4), (9, 0)])
def test_rarer_instructions_planned_or_not(
    lazy: bool, rows: int, cols: int, rng: np.random.Generator
) -> None:
    """broadcast to view and register extents, fill and scalar ops with a param, a select
    into one of its inputs, copy, convert and nop: the same results planned or not."""
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    prog = vm.load(vm.encode(vm.assemble(P.mixed_rows(tile=4))))
    out, out16 = np.full_like(x, 99), np.full((rows, cols), 99, np.float16)
    spec = vm.specialize(prog, [x.shape, x.shape, x.shape], [3], lazy=lazy)
    vm.launch(spec, [x, out, out16])
    d = x - (x.max(axis=1, keepdims=True) if cols else 0)
    want = 1 - np.float32(3) * np.where(d > -0.5, d, np.float32(3))
    np.testing.assert_allclose(out, want, rtol=1e-6)
    np.testing.assert_array_equal(out16, want.astype(np.float16))


@pytest.mark.parametrize("in_place", [False, True], ids=["new", "in-place"])
@pytest.mark.parametrize(
    ("a", "b"),
    [
        ((3, 1), (1, 4)),
        ((3, 4), (3, 1)),
        ((3, 4), (1, 4)),
        ((0, 1), (1, 4)),
        ((1, 1), (0, 1)),
        ((2, 3), (2, 3)),
        ((3, 4), (2, 4)),
        ((0, 4), (3, 4)),
        ((3, 1), (3, 0)),
    ],
)
def test_binary_broadcasting_alike_planned_or_not(
    in_place: bool,
    a: tuple[int, int],
    b: tuple[int, int],
    rng: np.random.Generator,
) -> None:
    """Two registers broadcast by numpy's rule, dims of 0 and 1 included, in a first
    launch (which keeps the pairs it broadcasts) and planned: the same sums, or the same error at
    the same instruction (`shapes do not broadcast`; in place, a sum larger than its
    register does not fit it)."""
    prog = vm.load(vm.encode(vm.assemble(P.broadcast_add(in_place))))
    x, y = rng.standard_normal(a).astype(np.float32), rng.standard_normal(b).astype(np.float32)
    try:
        want: np.ndarray | None = x + y
    except ValueError:
        want = None
    shape = want.shape if want is not None else tuple(map(max, a, b))
    results = []
    for lazy in (True, False):
        out = np.full(shape, 99, np.float32)
        try:
            vm.launch(vm.specialize(prog, [a, b, shape], lazy=lazy), [x, y, out])
            results.append(out)
        except vm.BytecodeError as e:
            results.append((e.reason, e.offset))
    assert type(results[0]) is type(results[1])
    if isinstance(results[0], tuple):
        assert results[0] == results[1]
        expected = "shapes do not broadcast" if want is None else "tile does not fit register"
        assert results[0][0] == expected
        assert want is None or (in_place and want.size > x.size)
    else:
        assert want is not None
        np.testing.assert_array_equal(results[0], want)
        np.testing.assert_array_equal(results[1], want)


@pytest.mark.parametrize("kept", [True, False])
def test_a_first_launch_broadcasts_new_pairs_kept_or_not(
    kept: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pair of shapes an unplanned launch has not met is broadcast by `broadcast_pair`
    and kept (unless the memo is full), or fails with the instruction's offset and both
    shapes."""
    memo: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[int, ...]] = {}
    monkeypatch.setattr(unplanned_calls, "BROADCASTS", memo)
    if not kept:
        monkeypatch.setattr(unplanned_calls, "MAX_KEPT_BROADCASTS", 0)
    prog = vm.load(vm.encode(vm.assemble(P.broadcast_add())))
    spec = vm.specialize(prog, [(3, 1), (1, 4), (3, 4)], lazy=True)
    assert unplanned_calls.broadcast_pair(spec, 2, ((3, 1), (1, 4))) == (3, 4)
    assert unplanned_calls.broadcast_pair(spec, 2, ((0, 1), (1, 4))) == (0, 4)
    assert unplanned_calls.broadcast_pair(spec, 2, ((), ())) == ()
    pairs = {((3, 1), (1, 4)): (3, 4), ((0, 1), (1, 4)): (0, 4), ((), ()): ()}
    assert memo == (pairs if kept else {})
    with pytest.raises(vm.BytecodeError) as e:
        unplanned_calls.broadcast_pair(spec, 2, ((3, 4), (2, 4)))
    assert (e.value.reason, e.value.detail) == ("shapes do not broadcast", "((3, 4), (2, 4))")
    assert e.value.offset == layout(prog).code[2]


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (0, 4), (3, 5)])
def test_erf_of_any_register_shape(dtype: type, shape: tuple[int, ...]) -> None:
    """A rank-0 tile, an empty one, and a strided view of global memory (an alias load);
    f64 is `math.erf`'s."""
    erf = importlib.import_module("dvm.vm.erf").erf
    wide = np.linspace(-2, 2, 2 * math.prod(shape)).astype(dtype)
    wide = wide.reshape(*shape[:-1], 2 * shape[-1]) if shape else wide
    x = wide[..., ::2] if shape else np.asarray(dtype(0.5))
    out = np.empty(x.shape, dtype)
    erf(x, out)
    want = float64_result("erf", x) if dtype is np.float64 else numerics.erf(x)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("kind", ["sum", "prod"])
@pytest.mark.parametrize("axes", ["{0}", "{1}"])
@pytest.mark.parametrize("lazy", [True, False], ids=["unplanned", "planned"])
def test_f16_sums_and_products_accumulate_in_f32(
    kind: str, axes: str, lazy: bool, rng: np.random.Generator
) -> None:
    """As `dvm.numerics.reduce`: in f32, rounded once to f16 (numpy's own f16 sum over
    an outer axis rounds every partial sum to f16: a column of a thousand 0.1s summed to
    105.2, where f32 gives 99.98, 100 in f16)."""
    x = np.full((1000, 2), 0.1, np.float16)
    if kind == "prod":
        x = (1 + rng.standard_normal((1000, 2)) / 64).astype(np.float16)
    if axes == "{1}":
        x = np.ascontiguousarray(x.T)
    prog = vm.load(vm.encode(vm.assemble(P.reduce_op(kind, "f16", axes, False, tile_rows=2))))
    axis = int(axes[1])
    out = np.full(x.shape[1 - axis], 99, np.float16)
    vm.launch(vm.specialize(prog, [x.shape, out.shape], lazy=lazy), [x, out])
    want = numerics.reduce(kind, x, [axis], keepdims=False)  # type: ignore[arg-type]
    np.testing.assert_array_equal(out, want)
