"""Whole kernels, hand-assembled, against numpy: tails, reductions, matmul, views."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import numpy as np
import pytest
import vm_programs as P
from tolerances import matmul_atol, sum_atol

import dvm.vm as vm
from dvm import numerics
from dvm.vm.kernels import WHOLE_SUM_BLAS

F32 = np.float32

static = importlib.import_module("dvm.vm.static")
planned = importlib.import_module("dvm.vm.planned")
unplanned = importlib.import_module("dvm.vm.unplanned")


def _program(text: str) -> vm.Program:
    """Assemble, and check text -> binary -> text is the identity on the way."""
    prog = vm.assemble(text)
    data = vm.encode(prog)
    assert vm.disassemble(data) == text
    return vm.load(data)


@pytest.mark.parametrize("rows", [0, 1, 2, 63, 64, 65, 97, 1000])
@pytest.mark.parametrize("cols", [0, 1, 13, 128])
def test_elementwise_chain_tails(rows: int, cols: int, rng: np.random.Generator) -> None:
    prog = _program(P.elementwise_chain(tile=64))
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    y = np.full_like(x, np.nan)
    vm.launch(prog, [x, y])
    want = np.tanh(np.exp(-np.abs(x)) * np.float32(2.5) + x)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)


def test_elementwise_chain_large_multicore(rng: np.random.Generator) -> None:
    prog = _program(P.elementwise_chain(tile=32))
    x = rng.standard_normal((3001, 257)).astype(np.float32)
    y = np.empty_like(x)
    st = vm.launch(prog, [x, y], stats=True)
    assert st is not None
    np.testing.assert_allclose(y, np.tanh(np.exp(-np.abs(x)) * np.float32(2.5) + x), rtol=1e-6)
    assert st.tiles == 94
    assert st.instructions["load"] == 94
    assert st.bytes_read == x.nbytes and st.bytes_written == y.nbytes


def _layernorm_ref(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    d = x - mean
    var = (d * d).mean(axis=-1, keepdims=True)
    return d * (1.0 / np.sqrt(var + np.float32(1e-5))) * w + b


@pytest.mark.parametrize(
    ("rows", "cols", "tile"),
    [(0, 8, 4), (1, 1, 4), (5, 7, 4), (37, 100, 8), (64, 1024, 16), (129, 33, 128)],
)
def test_layernorm(rows: int, cols: int, tile: int, rng: np.random.Generator) -> None:
    prog = _program(P.layernorm(rows_param=True))
    x = rng.standard_normal((rows, cols)).astype(np.float32) * 3 + 1
    w = rng.standard_normal(cols).astype(np.float32)
    b = rng.standard_normal(cols).astype(np.float32)
    y = np.full_like(x, np.nan)
    vm.launch(prog, [x, w, b, y], params=[tile])
    np.testing.assert_allclose(y, _layernorm_ref(x, w, b), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize(("rows", "cols"), [(0, 5), (1, 1), (7, 3), (33, 50), (100, 17)])
def test_column_stats_store_acc(rows: int, cols: int, rng: np.random.Generator) -> None:
    prog = _program(P.column_stats(tile_rows=8, tile_cols=16))
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    s = np.zeros(cols, np.float32)
    m = np.full(cols, -np.inf, np.float32)
    vm.launch(prog, [x, s, m])
    positive = np.where(x > 0, x, 0)
    np.testing.assert_allclose(s, positive.sum(axis=0), rtol=1e-6, atol=sum_atol(positive, 0, F32))
    np.testing.assert_array_equal(m, x.max(axis=0, initial=-np.inf))


def test_column_stats_many_cores_atomic(rng: np.random.Generator) -> None:
    """Many tiles accumulate into the same columns from both cores."""
    prog = _program(P.column_stats(tile_rows=8, tile_cols=16))
    x = rng.standard_normal((4000, 40)).astype(np.float32)
    s = np.zeros(40, np.float32)
    m = np.full(40, -np.inf, np.float32)
    st = vm.launch(prog, [x, s, m], stats=True)
    assert st is not None and st.cores >= 1
    positive = np.where(x > 0, x, 0)
    np.testing.assert_allclose(s, positive.sum(axis=0), rtol=1e-6, atol=sum_atol(positive, 0, F32))
    np.testing.assert_array_equal(m, x.max(axis=0))


@pytest.mark.parametrize(
    ("m", "k", "n"), [(0, 3, 4), (3, 0, 4), (1, 1, 1), (31, 17, 33), (64, 48, 32), (70, 100, 65)]
)
@pytest.mark.parametrize("transpose_b", [False, True])
def test_addmm_relu_k_loop(
    m: int, k: int, n: int, transpose_b: bool, rng: np.random.Generator
) -> None:
    prog = _program(P.addmm_relu(tm=32, tn=32, tk=16, transpose_b=transpose_b))
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    out = np.full((m, n), np.nan, np.float32)
    b_arg = np.ascontiguousarray(b.T) if transpose_b else b
    vm.launch(prog, [a, b_arg, bias, out])
    atol = matmul_atol(a, b, F32, extra_terms=1)
    np.testing.assert_allclose(out, np.maximum(a @ b + bias, 0), rtol=1e-6, atol=atol)


def test_matmul_multicore_keeps_blas_single_threaded(rng: np.random.Generator) -> None:
    prog = _program(P.addmm_relu(tm=64, tn=64, tk=64))
    a = rng.standard_normal((512, 256)).astype(np.float32)
    b = rng.standard_normal((256, 384)).astype(np.float32)
    bias = rng.standard_normal(384).astype(np.float32)
    out = np.empty((512, 384), np.float32)
    vm.launch(prog, [a, b, bias, out])
    atol = matmul_atol(a, b, F32, extra_terms=1)
    np.testing.assert_allclose(out, np.maximum(a @ b + bias, 0), rtol=1e-6, atol=atol)


WHOLE_SUM = """\
arg a0 f32 2
arg a1 f32 2
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = 0
slot s3 = 1
slot s4 = 64 s0 s1 mul 16 ceildiv mul
grid s3
reg r0 f32 (s0, s1) at s2
reg r1 f32 (s3, s3) at s4
view v0 a0 offset s2 (s0 s1) (s1 s3)
view v1 a1 offset s2 (s3 s2) (s3 s2)
load r0, v0
reduce r1, r0, sum, {0,1}, [keepdims]
store v1, r1
"""
"""The sum of a whole 2-D array, as one tile (a reduction over two axes)."""


def test_only_float_sums_hold_blas(monkeypatch: pytest.MonkeyPatch) -> None:
    """A launch holds BLAS at one thread only when its program may call it: an mma, or a
    float sum over one axis or every axis of a 2-D or larger tile (a product with a
    ones vector); a max or an integer sum runs `add.reduce` and holds nothing."""
    static_info = importlib.import_module("dvm.vm.static").static_info
    blas = importlib.import_module("dvm.vm.blas")
    holds: list[int] = []
    one_thread = blas.one_thread
    monkeypatch.setattr(blas, "one_thread", lambda: holds.append(1) or one_thread())
    assert static_info(_program(P.reduce_op("sum", "f32", "{1}", True))).uses_blas
    assert static_info(_program(P.reduce_op("sum", "f64", "{0}", True))).uses_blas
    assert static_info(_program(WHOLE_SUM)).uses_blas
    assert not static_info(_program(P.reduce_op("max", "f32", "{1}", True))).uses_blas
    assert not static_info(_program(P.reduce_op("sum", "i32", "{1}", True))).uses_blas
    x = np.random.default_rng(2).standard_normal((40, 30)).astype(np.float32)
    vm.launch(_program(P.reduce_op("max", "f32", "{1}", True)), [x, np.empty((40, 1), np.float32)])
    assert holds == []
    rows = np.random.default_rng(2).standard_normal((400, 30)).astype(np.float32)
    row_sum_text = P.reduce_op("sum", "f32", "{1}", True, tile_rows=400)
    row_sum = _program(row_sum_text.replace("slot s6 = 4096", "slot s6 = 65536"))
    vm.launch(row_sum, [rows, np.empty((400, 1), np.float32)])
    assert holds  # the row sum of a tile OpenBLAS could thread held it


@pytest.mark.parametrize(("shape", "held"), [((40, 30), False), ((100, 100), True)])
def test_a_planned_launch_holds_blas_only_where_it_could_thread(
    monkeypatch: pytest.MonkeyPatch, shape: tuple[int, int], held: bool
) -> None:
    """A planned launch on the calling thread whose BLAS calls are all too small for
    OpenBLAS to thread (every register under OPENBLAS_ONE_THREAD_ELEMENTS) holds nothing;
    a sum of a tile as large holds BLAS at one thread. Both give numpy's sum."""
    blas = importlib.import_module("dvm.vm.blas")
    holds: list[int] = []
    one_thread = blas.one_thread
    monkeypatch.setattr(blas, "one_thread", lambda: holds.append(1) or one_thread())
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    spec = vm.specialize(_program(WHOLE_SUM), [x.shape, (1, 1)], lazy=True)
    out = np.empty((1, 1), np.float32)
    vm.launch(spec, [x, out])  # unplanned
    holds.clear()
    vm.launch(spec, [x, out])
    assert spec.planned and bool(holds) is held
    np.testing.assert_allclose(out[0, 0], x.sum(dtype=np.float64), rtol=1e-5)


@pytest.mark.parametrize("dtype", ["f32", "f64", "i32"])
@pytest.mark.parametrize("shape", [(100, 90), (40, 30), (1, 7), (9, 1), (0, 5), (5, 0)])
def test_a_whole_sum_is_the_same_planned_or_not(dtype: str, shape: tuple[int, int]) -> None:
    """A float sum over every axis of a tile of WHOLE_SUM_BLAS elements or more runs as the
    sum of BLAS row sums (`kernels.sum_of_row_sums`), of a smaller one as `add.reduce`, in
    both executors: the same bits unplanned and planned, those of numpy's sum of `x @
    ones` or of its `add.reduce`, 0 over no elements; an integer sum stays exact."""
    np_dtype = vm.isa.DTYPE_BY_TEXT[dtype].np
    prog = _program(WHOLE_SUM.replace("f32", dtype).replace("16 ceildiv", "8 ceildiv"))
    x = (np.random.default_rng(3).standard_normal(shape) * 8).astype(np_dtype)
    spec = vm.specialize(prog, [x.shape, (1, 1)], lazy=True)
    outs = []
    for _ in range(2):  # unplanned, then planned
        out = np.full((1, 1), 99, np_dtype)
        vm.launch(spec, [x, out])
        outs.append(out)
    assert spec.planned
    np.testing.assert_array_equal(outs[0], outs[1])
    if dtype == "i32" or x.size < WHOLE_SUM_BLAS:
        want = np.add.reduce(x, axis=(0, 1), keepdims=True, initial=0)
    else:
        want = (x @ np.ones(shape[1], np_dtype)).sum(keepdims=True).reshape(1, 1)
    np.testing.assert_array_equal(outs[0], want)


def test_a_plan_knows_its_largest_gemm() -> None:
    """32 x 32 output tiles, K in chunks of 16; the edge tiles' gemms are smaller."""
    prog = _program(P.addmm_relu(tm=32, tn=32, tk=16))
    assert (
        vm.specialize(prog, [(70, 100), (100, 65), (65,), (70, 65)]).plan.largest_gemm
        == 32 * 32 * 16
    )
    assert vm.specialize(prog, [(5, 3), (3, 4), (4,), (5, 4)]).plan.largest_gemm == 5 * 4 * 3
    vector = _program(P.elementwise_chain())
    assert vm.specialize(vector, [(10, 3), (10, 3)]).plan.largest_gemm == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_max_and_min_with_a_scalar_match_numpy_bit_for_bit(dtype: type) -> None:
    """Planned max/min with an immediate take it as a tile of that value, or a row for a
    tile beyond FULL_SCALAR_ELEMENTS (numpy's faster loops): the same results as the 0-d
    scalar, NaN, signed zeros and infinities included."""
    kernels = importlib.import_module("dvm.vm.kernels")
    dt = np.dtype(dtype)
    tile = kernels.scalar_operand(np.maximum, 0.0, dt, (4, 3))
    assert tile.shape == (4, 3) and not tile.flags.writeable and not tile.any()
    big = (kernels.FULL_SCALAR_ELEMENTS // 64 + 1, 64)
    row = kernels.scalar_operand(np.maximum, 0.0, dt, big)
    assert row.shape == (64,) and not row.flags.writeable
    assert kernels.scalar_operand(np.add, 0.0, dt, (4, 64)).shape == ()
    narrow = (kernels.FULL_SCALAR_ELEMENTS, 3)  # too large for a tile, too narrow for a row
    assert kernels.scalar_operand(np.maximum, 0.0, dt, narrow).shape == ()
    if dt.kind == "f":  # -0.0 is a value of its own
        assert np.signbit(kernels.scalar_operand(np.minimum, -0.0, dt, (5, 7))).all()
        assert np.isnan(kernels.scalar_operand(np.minimum, np.nan, dt, (5, 7))).all()
    rng = np.random.default_rng(8)
    x = (rng.standard_normal((96, 64)) * 100).astype(dtype)
    if dt.kind == "f":
        x.flat[::7] = np.nan
        x.flat[1::7] = -0.0
        x.flat[2::7] = -np.inf
    zero = kernels.typed_scalar(0.0, dt)
    for fn in (np.maximum, np.minimum):
        for shape in (x.shape, big):  # a tile, then a row
            got = fn(x, kernels.scalar_operand(fn, 0.0, dt, shape))
            np.testing.assert_array_equal(got.view(np.uint8), fn(x, zero).view(np.uint8))


def test_an_immediate_minus_zero_is_not_the_zero_met_before() -> None:
    """-0.0 equals 0.0 and hashes alike, but `mul.rs r, r, #-0.0` gives -0.0 times a
    positive element: the scalars kept for binding tell them apart."""
    prog = _program(P.single_op("mul", "f32", "f32", form="rs", scalar="#0.0"))
    negative = _program(P.single_op("mul", "f32", "f32", form="rs", scalar="#-0.0"))
    x = np.arange(1, 33, dtype=np.float32)
    for p in (prog, negative):  # the 0.0 first, as a program met before
        out = np.empty_like(x)
        vm.launch(p, [x, x, out])
    assert np.signbit(out).all()  # the last: -0.0 * x
    kernels = importlib.import_module("dvm.vm.kernels")
    f32 = np.dtype(np.float32)
    kernels.scalar_operand(np.maximum, 0.0, f32, (4, 64))
    assert np.signbit(kernels.scalar_operand(np.maximum, -0.0, f32, (4, 64))).all()


@pytest.mark.parametrize(("rows", "cols"), [(0, 0), (1, 1), (5, 3), (8, 8), (17, 9), (40, 33)])
def test_transposed_and_broadcast_views(rows: int, cols: int, rng: np.random.Generator) -> None:
    prog = _program(P.transpose_broadcast(tile=8))
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    row = rng.standard_normal(cols).astype(np.float32)
    out = np.full((cols, rows), np.nan, np.float32)
    vm.launch(prog, [x, row, out])
    np.testing.assert_array_equal(out, x.T + row[:, None])


def test_specialization_is_cached_and_reused() -> None:
    prog = _program(P.elementwise_chain())
    s1 = vm.specialize(prog, [(10, 3), (10, 3)])
    s2 = vm.specialize(prog, [(10, 3), (10, 3)])
    assert s1 is s2
    x = np.ones((10, 3), np.float32)
    y = np.empty_like(x)
    vm.launch(s1, [x, y])
    vm.launch(s1, [x, y])
    assert len(s1.executables) == 1


FUSION = """\
arg a0 f32 1
arg a1 f32 1
arg a2 f32 1
params 0
slot s0 = dim(a0,0)
slot s1 = 8
slot s2 = s0 s1 ceildiv
slot s3 = 0
slot s4 = 1
slot s5 = 64
slot s6 = 128
grid s2
reg r0 f32 (s1) at s3
reg r1 f32 (s1) at s5
reg r2 f32 (s1) at s6
view v0 a0 offset s3 (s0 s4 g0 s1)
view v1 a1 offset s3 (s0 s4 g0 s1)
view v2 a2 offset s3 (s0 s4 g0 s1)
load r0, v0
add r1, r0, r0
store v1, r1
mul r2, r1, r1
exp r2, r2
store v2, r2
"""


def test_store_fusion_only_when_the_value_is_dead() -> None:
    """r1 is read after its store (no fusion); r2 is not (exp writes v2's tile directly)."""
    prog = _program(FUSION)
    spec = vm.specialize(prog, [(21,)] * 3)
    (body, *_) = spec.plan.bodies.values()
    assert planned.fused_stores(body) == {4: 5}
    x = np.linspace(-1, 1, 21, dtype=np.float32)
    y, z = np.empty_like(x), np.empty_like(x)
    vm.launch(spec, [x, y, z])
    np.testing.assert_array_equal(y, x + x)
    np.testing.assert_allclose(z, np.exp((x + x) * (x + x)), rtol=1e-6)
    st = vm.launch(spec, [x, y, z], stats=True)
    assert st is not None and st.instructions["store"] == 6 and st.bytes_written == 2 * x.nbytes
    vm.launch(spec, [x, x, z])  # in place: x is overwritten tile by tile after being read
    np.testing.assert_allclose(
        z, np.exp((2 * np.linspace(-1, 1, 21, dtype=np.float32)) ** 2), rtol=1e-6
    )


SCALAR_ARG = """\
arg a0 f32 2
arg a1 f32 0
arg a2 f32 2
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = 4
slot s3 = s0 s2 ceildiv
slot s4 = 0
slot s5 = 1
slot s6 = 1024
grid s3
reg r0 f32 (s2, s1) at s4
reg r1 f32 () at s6
view v0 a0 offset s4 (s0 s1 g0 s2) (s1 s5)
view v1 a1 offset s4
view v2 a2 offset s4 (s0 s1 g0 s2) (s1 s5)
load r0, v0
load r1, v1
sub r0, r0, r1
store v2, r0
"""


@pytest.mark.parametrize("rows", [0, 3, 9])
def test_rank0_argument_broadcasts(rows: int) -> None:
    prog = _program(SCALAR_ARG)
    x = np.arange(rows * 5, dtype=np.float32).reshape(rows, 5)
    out = np.empty_like(x)
    vm.launch(prog, [x, np.array(2.5, np.float32), out])
    np.testing.assert_array_equal(out, x - np.float32(2.5))


BATCHED_MMA = """\
arg a0 f32 3
arg a1 f32 3
arg a2 f32 3
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = dim(a0,2)
slot s3 = dim(a1,1)
slot s4 = 0
slot s5 = 1
slot s6 = s1 s2 mul
slot s7 = s1 s3 mul
slot s8 = s0 s1 mul s2 mul 4 mul 63 add 64 floordiv 64 mul
slot s9 = s0 s2 mul s3 mul 4 mul 63 add 64 floordiv 64 mul s8 add
slot s10 = s3 s2 mul
grid s5
reg r0 f32 (s0, s1, s2) at s4
reg r1 f32 (s0, s3, s2) at s8
reg r2 f32 (s0, s1, s3) at s9
view v0 a0 offset s4 (s0 s6) (s1 s2) (s2 s5)
view v1 a1 offset s4 (s0 s10) (s3 s2) (s2 s5)
view v2 a2 offset s4 (s0 s7) (s1 s3) (s3 s5)
load r0, v0
load r1, v1
mma r2, r0, r1, [tb]
mma r2, r0, r1, [tb,acc]
store v2, r2
"""


@pytest.mark.parametrize(("b", "m", "k", "n"), [(1, 1, 1, 1), (3, 4, 5, 2), (2, 0, 3, 4)])
def test_batched_mma_with_transpose(
    b: int, m: int, k: int, n: int, rng: np.random.Generator
) -> None:
    """out[i] = 2 * a[i] @ bt[i].T: rank-3 registers, `tb` and an accumulate."""
    prog = _program(BATCHED_MMA)
    a = rng.standard_normal((b, m, k)).astype(np.float32)
    bt = rng.standard_normal((b, n, k)).astype(np.float32)
    out = np.full((b, m, n), np.nan, np.float32)
    vm.launch(prog, [a, bt, out])
    b = bt.transpose(0, 2, 1)
    atol = 2 * matmul_atol(a, b, F32, extra_terms=1)
    np.testing.assert_allclose(out, 2 * a @ b, rtol=1e-6, atol=atol)


def test_blas_is_held_at_one_thread_during_a_launch_and_restored() -> None:
    """blas.one_thread/restore: OpenBLAS runs on the calling thread inside launches."""
    import importlib

    blas = importlib.import_module("dvm.vm.blas")
    found = blas.threads()
    if found is None:
        pytest.skip("numpy's BLAS is not an OpenBLAS with thread controls")
    get, _ = found
    before = get()
    held = blas.one_thread()
    assert held == before and get() == 1
    blas.restore(held)
    assert get() == before


def test_the_memory_map_names_the_openblas_threadpoolctl_finds() -> None:
    """The VM finds numpy's OpenBLAS in the process's memory map (threadpoolctl, which
    finds the same libraries, costs a fresh process's first call tens of ms)."""
    blas = importlib.import_module("dvm.vm.blas")
    if not Path("/proc/self/maps").exists():
        pytest.skip("no memory map to read: threadpoolctl finds the library")
    assert sorted(blas._mapped_openblas()) == sorted(blas._threadpoolctl_openblas())


FORWARD = """\
arg a0 f32 1
arg a1 f32 1
params 0
slot s0 = dim(a0,0)
slot s1 = 8
slot s2 = s0 s1 ceildiv
slot s3 = 0
slot s4 = 1
slot s5 = 64
grid s2
reg r0 f32 (s1) at s3
reg r1 f32 (s1) at s5
view v0 a0 offset s3 (s0 s4 g0 s1)
view v1 a1 offset s3 (s0 s4 g0 s1)
load r0, v0
abs r1, r0
sub r0, r0, r1
mul r0, r0, r0
store v1, r0
"""


def test_forwarded_load_reads_the_global_tile_until_its_register_is_overwritten() -> None:
    """load r0 is forwarded: abs and the in-place sub read x's tile, sub writes r0; an
    in-place launch (x is also the output) copies instead."""
    prog = _program(FORWARD)
    spec = vm.specialize(prog, [(21,)] * 2)
    (body, *_) = spec.plan.bodies.values()
    assert planned.forwarded_loads(body, frozenset()) == {0: 2}
    x = np.linspace(-1, 1, 21, dtype=np.float32)
    want = (x - np.abs(x)) ** 2
    y = np.full_like(x, np.nan)
    vm.launch(spec, [x, y])
    np.testing.assert_array_equal(y, want)
    first = vm.Specializer(prog)([(21,)] * 2)  # its first launch runs unplanned
    y = np.full_like(x, np.nan)
    vm.launch(first, [x, y])
    assert not first.planned
    np.testing.assert_array_equal(y, want)
    np.testing.assert_array_equal(x, np.linspace(-1, 1, 21, dtype=np.float32))
    st = vm.launch(spec, [x, y], stats=True)
    assert st is not None and st.instructions["load"] == 3
    z = x.copy()
    vm.launch(spec, [z, z])
    np.testing.assert_array_equal(z, want)


@pytest.mark.parametrize("text", [FUSION, FORWARD])
def test_what_a_body_learns_from_its_instructions_holds_at_every_shape(text: str) -> None:
    """Fused stores and forwarded loads found through the program's kept facts (found at
    the first shape, its shape checked at each) are those found from each body alone:
    at tiles of every size, and with no element."""
    prog = _program(text)
    facts = static.static_info(prog).body_facts
    for n in (21, 8, 3, 0, 40):
        spec = vm.specialize(prog, [(n,)] * len(prog.args))
        for body in spec.plan.bodies.values():
            assert planned.fused_stores(body, facts) == planned.fused_stores(body)
            got = planned.forwarded_loads(body, frozenset(), facts)
            assert got == planned.forwarded_loads(body, frozenset())
            assert got == ({} if text is FUSION or n == 0 else {0: 2})
    assert facts  # kept


ROW_SHIFT = FUSION.split("load")[0] + (  # FUSION's declarations; a2 goes unused
    "load r0, v0\nreduce r1, r0, {kind}, {{0}}, [keepdims]\nsub {dst}, r0, r1\nstore v1, {dst}\n"
)


@pytest.mark.parametrize("kind", ["max", "min", "sum"])
def test_a_max_or_min_reduction_reads_a_copied_load(kind: str) -> None:
    """numpy's max and min reductions over short rows run slower on data from main memory
    than on a tile just copied, so the loads they read are neither forwarded (r0 overwritten
    in place) nor aliases (r0 only read); a sum's load still is both. Same results."""
    x = np.linspace(-1, 1, 21, dtype=np.float32)
    rows = np.pad(x, (0, 3), constant_values=np.nan).reshape(3, 8)
    want = (rows - getattr(np, f"nan{kind}")(rows, axis=1, keepdims=True)).ravel()[:21]
    copied = kind != "sum"
    for dst in ("r0", "r2"):
        prog = _program(ROW_SHIFT.format(kind=kind, dst=dst))
        spec = vm.specialize(prog, [(21,)] * 3)
        (body, *_) = spec.plan.bodies.values()
        if dst == "r0":
            assert planned.forwarded_loads(body, frozenset()) == ({} if copied else {0: 2})
            assert bool(unplanned.Launcher(prog).forwarded) is not copied
        else:
            assert (0 in static.static_info(prog).alias_regs) is not copied
        for launchable in (spec, vm.Specializer(prog)([(21,)] * 3)):  # planned, unplanned
            y = np.full_like(x, np.nan)
            vm.launch(launchable, [x, y, np.zeros_like(x)])
            np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)


def test_unplanned_launch_writes_an_elementwise_chain_in_place() -> None:
    """Unplanned, an op whose destination is its operand writes that register's view in
    place once the register holds its own view (not a forwarded load's global tile); a
    ufunc takes its `out` by position, the last argument."""
    chain = unplanned.Launcher(_program(P.elementwise_chain(tile=8))).source()
    assert "F2(r1, r1)" in chain and "F3(r1, r1)" in chain  # neg, exp
    forwarded = unplanned.Launcher(_program(FORWARD)).source()
    # sub r0, r0, r1 after load r0 (forwarded): r0 first gets a view of its own
    writes_r0 = re.search(r"\bF\d+\([^()]*\br0\)", forwarded)
    assert writes_r0 is None and "out=r0" not in forwarded and ": o = r0" not in forwarded


MMA_F16 = """\
arg a0 f16 2
arg a1 f16 2
arg a2 f16 2
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = dim(a1,1)
slot s3 = 0
slot s4 = 1
slot s5 = s0 s1 mul 2 mul 63 add 64 floordiv 64 mul
slot s6 = s1 s2 mul 2 mul 63 add 64 floordiv 64 mul s5 add
grid s4
reg r0 f16 (s0, s1) at s3
reg r1 f16 (s1, s2) at s5
reg r2 f16 (s0, s2) at s6
view v0 a0 offset s3 (s0 s1) (s1 s4)
view v1 a1 offset s3 (s1 s2) (s2 s4)
view v2 a2 offset s3 (s0 s2) (s2 s4)
load r0, v0
load r1, v1
mma r2, r0, r1, []
store v2, r2
"""
"""out = a @ b in f16, one tile: the mma writes the stored tile directly."""


def _f16_operands(rng: np.random.Generator, m: int, k: int, n: int) -> tuple[np.ndarray, ...]:
    a = (rng.standard_normal((m, k)) / 4).astype(np.float16)
    b = (rng.standard_normal((k, n)) / 4).astype(np.float16)
    return a, b


@pytest.mark.parametrize("lazy", [True, False], ids=["unplanned", "planned"])
@pytest.mark.parametrize("read_only", [True, False], ids=["alias", "copied"])
def test_f16_mma_multiplies_in_f32_and_rounds_once(
    lazy: bool, read_only: bool, rng: np.random.Generator
) -> None:
    """numpy's f16 matmul accumulates in f16 (and without BLAS); an f16 mma multiplies
    in f32 and rounds once, as `dvm.numerics.matmul` does, planned or not, with its
    operands read in place (alias loads) or copied, into the tile the store writes."""
    a, b = _f16_operands(rng, 24, 700, 40)
    want = numerics.matmul(a, b)
    prog = _program(MMA_F16)
    out = np.zeros((24, 40), np.float16)
    spec = vm.specialize(prog, [a.shape, b.shape, out.shape], lazy=lazy)
    for _ in range(2):
        args = [a, b, out] if read_only else [a.copy(), b.copy(), out]
        vm.launch(spec, args, fresh=read_only)
        np.testing.assert_array_max_ulp(out, want, maxulp=1)


@pytest.mark.parametrize("lazy", [True, False], ids=["unplanned", "planned"])
def test_f16_addmm_accumulates_each_chunk_in_f32(lazy: bool, rng: np.random.Generator) -> None:
    """An accumulating f16 mma (the K loop of addmm) adds its accumulator in f32 and
    rounds once per chunk: with one chunk, the f32 product rounded once."""
    prog = _program(P.addmm_relu(tm=32, tn=32, tk=512).replace("f32", "f16"))
    a, b = _f16_operands(rng, 40, 500, 33)
    bias = (rng.standard_normal(33) / 4).astype(np.float16)
    want = np.maximum(numerics.matmul(a, b) + bias, np.float16(0))
    out = np.zeros((40, 33), np.float16)
    spec = vm.specialize(prog, [a.shape, b.shape, bias.shape, out.shape], lazy=lazy)
    for _ in range(2):
        vm.launch(spec, [a, b, bias, out])
        np.testing.assert_array_max_ulp(out, want, maxulp=1)
