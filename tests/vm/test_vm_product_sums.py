"""A `mul` whose product only the `reduce sum` after it reads runs as one matmul.

Each recognized form gives numpy's result in a first (unplanned) launch and a
planned one, and a spy on what each executor calls proves the pattern fired; the
near misses (the product read again, in the loop's next pass or after the loop, a
sum over two axes, integers, an operand not broadcast along the later axes) give
numpy's result as two instructions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dvm.vm as vm
from dvm.vm import bind, planned, product_sums, unplanned
from dvm.vm.static import static_info

ROWS = 4
"""Rows per tile (grid axis 0)."""

HEAD = """\
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = {rows}
slot s3 = s0 s2 ceildiv
slot s4 = 0
slot s5 = 1
slot s6 = 8192
slot s7 = 16384
slot s8 = 24576
slot s9 = 32768
"""


def rows_program(dtype: str, row_weight: bool, keepdims: bool, body: str) -> str:
    """x (R, C) times w, (1, C) or (R, C), summed over each row: out (R, 1) or (R,)."""
    w_view = "(s5 s4) (s1 s5)" if row_weight else "(s0 s1 g0 s2) (s1 s5)"
    out_view = "(s0 s5 g0 s2) (s5 s4)" if keepdims else "(s0 s5 g0 s2)"
    return f"""\
arg a0 {dtype} 2
arg a1 {dtype} {1 if row_weight else 2}
arg a2 {dtype} {2 if keepdims else 1}
{HEAD.format(rows=ROWS)}grid s3
reg r0 {dtype} (s2, s1) at s4
reg r1 {dtype} ({"s5" if row_weight else "s2"}, s1) at s6
reg r2 {dtype} (s2, s1) at s7
reg r3 {dtype} ({"s2, s5" if keepdims else "s2"}) at s8
reg r4 {dtype} (s2, s5) at s9
view v0 a0 offset s4 (s0 s1 g0 s2) (s1 s5)
view v1 a1 offset s4 {w_view}
view v2 a2 offset s4 {out_view}
{body}"""


ROW_SUM = """\
load r0, v0
load r1, v1
mul r2, r0, r1
reduce r3, r2, sum, {1}, [{keep}]
store v2, r3
"""

SQUARES = """\
load r0, v0
mul r2, r0, r0
reduce r3, r2, sum, {1}, [keepdims]
store v2, r3
"""

READ_AGAIN = """\
load r0, v0
load r1, v1
mul r2, r0, r1
reduce r3, r2, sum, {1}, [keepdims]
reduce r4, r2, max, {1}, [keepdims]
add r3, r3, r4
store v2, r3
"""


OUT_COLUMNS = "(s0 s12 g0 s2) (s5 s4) (s12 s5)"
"""out (R, 1, 16)."""


def experts_program(weight_shape: str, axes: str, body: str, out_view: str = OUT_COLUMNS) -> str:
    """x (R, E, 16) and w (R, E, 1) ("experts") or (R, 1, 16), the experts walked two
    at a time (loop l0); out (R, 1, 16), or as `out_view` gives (reduced over `axes`)."""
    out_dims = "(s2, s5, s12)" if out_view == OUT_COLUMNS else "(s2, s5, s5)"
    e_tile = "s10" if weight_shape == "experts" else "s5"
    w_view = (
        "(s0 s1 g0 s2) (s1 s5 l0 s10) (s5 s4)"
        if weight_shape == "experts"
        else "(s0 s12 g0 s2) (s5 s4) (s12 s5)"
    )
    return f"""\
arg a0 f32 3
arg a1 f32 3
arg a2 f32 3
{HEAD.format(rows=ROWS)}slot s10 = 2
slot s11 = s1 s10 ceildiv
slot s12 = 16
slot s13 = s1 16 mul
grid s3
reg r0 f32 (s2, s10, s12) at s4
reg r1 f32 (s2, {e_tile}, {"s5" if weight_shape == "experts" else "s12"}) at s6
reg r2 f32 (s2, s5, s12) at s7
reg r3 f32 {out_dims} at s8
reg r4 f32 (s2, s10, s12) at s9
view v0 a0 offset s4 (s0 s13 g0 s2) (s1 s12 l0 s10) (s12 s5)
view v1 a1 offset s4 {w_view}
view v2 a2 offset s4 {out_view}
fill r3, #0.0, (v2[0], v2[1], v2[2])
{body.replace("AXES", axes)}store v2, r3
"""


EXPERTS = """\
loop s11
  load r0, v0
  load r1, v1
  mul r0, r0, r1
  reduce r2, r0, sum, AXES, [keepdims]
  add r3, r3, r2
endloop
"""

SHAPE_READ = """\
load r0, v0
load r1, v1
mul r2, r0, r1
reduce r3, r2, sum, {1}, [keepdims]
fill r4, #1.0, (r2[0], s5)
add r3, r3, r4
store v2, r3
"""

AFTER_THE_LOOP = (
    EXPERTS
    + """\
reduce r2, r0, sum, {1}, [keepdims]
add r3, r3, r2
"""
)

NEXT_PASS = """\
fill r4, #0.0, (v2[0], s10, s12)
loop s11
  load r0, v0
  load r1, v1
  add r0, r0, r4
  mul r4, r0, r1
  reduce r2, r4, sum, {1}, [keepdims]
  add r3, r3, r2
endloop
"""


def spied(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts of the matmuls the unplanned executor runs for a pair, and of the pairs
    the planned one binds as one."""
    counts = {"unplanned": 0, "planned": 0}

    def run(*args: Any) -> None:
        counts["unplanned"] += 1
        product_sums.product_sum_into(*args)

    def binding(*args: Any) -> Any:
        counts["planned"] += 1
        return bind.bind_product_sum(*args)

    monkeypatch.setattr(unplanned, "product_sum_into", run)
    monkeypatch.setattr(planned, "bind_product_sum", binding)
    return counts


def run_both(text: str, args: list[np.ndarray], out: np.ndarray) -> list[np.ndarray]:
    """The program's result in a first (unplanned) launch and in a planned one."""
    program = vm.load(vm.encode(vm.assemble(text)))
    spec = vm.specialize(program, [a.shape for a in (*args, out)], lazy=True)
    got = []
    for _ in ("unplanned", "planned"):
        result = np.full_like(out, np.nan if out.dtype.kind == "f" else -1)
        vm.launch(spec, [*args, result])
        got.append(result)
    assert spec.planned or not out.size  # (an empty grid is never planned)
    return got


def pairs(text: str) -> dict[int, int]:
    """The program's `mul`s that may run with their reduce as one matmul."""
    program = vm.load(vm.encode(vm.assemble(text)))
    return product_sums.product_sums(program.code, static_info(program).loops, program.registers)


def check(got: list[np.ndarray], want: np.ndarray, dtype: Any = np.float32) -> None:
    tol = 1e-5 if np.dtype(dtype) == np.float32 else 1e-12
    for result in got:
        np.testing.assert_allclose(result, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("row_weight", [True, False], ids=["row-weight", "elementwise"])
@pytest.mark.parametrize("keepdims", [True, False])
@pytest.mark.parametrize("rows", [0, 1, 9])
def test_a_row_sum_of_products_is_one_matmul(
    dtype: str, row_weight: bool, keepdims: bool, rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """sum(x * w, -1): a matrix-vector product for a row of weights, a batch of
    row-times-column products for a weight per element."""
    np_dtype = np.dtype(np.float32 if dtype == "f32" else np.float64)
    rng = np.random.default_rng(rows)
    x = rng.standard_normal((rows, 24)).astype(np_dtype)
    w = rng.standard_normal(24 if row_weight else (rows, 24)).astype(np_dtype)
    want = (x * w).sum(-1, keepdims=keepdims)
    counts = spied(monkeypatch)
    body = ROW_SUM.replace("{keep}", "keepdims" if keepdims else "")
    got = run_both(rows_program(dtype, row_weight, keepdims, body), [x, w], want)
    check(got, want, np_dtype)
    assert counts["unplanned"] == -(-rows // ROWS)  # once per tile
    assert counts["planned"] >= min(rows, 1)


def test_a_sum_of_squares_is_one_matmul(monkeypatch: pytest.MonkeyPatch) -> None:
    """LayerNorm's variance: both operands one register."""
    x = np.random.default_rng(1).standard_normal((10, 40)).astype(np.float32)
    counts = spied(monkeypatch)
    got = run_both(rows_program("f32", True, True, SQUARES), [x, x[0]], np.empty((10, 1), x.dtype))
    check(got, (x * x).sum(-1, keepdims=True))
    assert counts["unplanned"] == 3 and counts["planned"] >= 1


@pytest.mark.parametrize("experts", [1, 5, 8])
def test_a_weighted_sum_over_experts_is_one_matmul(
    experts: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MMoE's gate: sum over a middle axis of x (R, E, 16) times w (R, E, 1), in a loop
    over chunks of experts that reloads the product's register each pass."""
    rng = np.random.default_rng(experts)
    x = rng.standard_normal((7, experts, 16)).astype(np.float32)
    w = rng.standard_normal((7, experts, 1)).astype(np.float32)
    counts = spied(monkeypatch)
    text = experts_program("experts", "{1}", EXPERTS)
    assert pairs(text)
    got = run_both(text, [x, w], np.empty((7, 1, 16), np.float32))
    check(got, (x * w).sum(1, keepdims=True))
    assert counts["unplanned"] == 2 * -(-experts // 2)  # two tiles, per loop pass
    assert counts["planned"] >= 1


def test_a_product_read_again_is_two_instructions(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(2)
    x, w = rng.standard_normal((9, 24)).astype(np.float32), rng.standard_normal(24)
    w = w.astype(np.float32)
    text = rows_program("f32", True, True, READ_AGAIN)
    assert not pairs(text)
    got = run_both(text, [x, w], np.empty((9, 1), np.float32))
    p = x * w
    check(got, p.sum(-1, keepdims=True) + p.max(-1, keepdims=True))


def test_a_product_whose_shape_is_read_is_two_instructions() -> None:
    """A SHAPE operand reading a dim of the product reads the register."""
    rng = np.random.default_rng(10)
    x, w = rng.standard_normal((9, 24)).astype(np.float32), rng.standard_normal(24)
    text = rows_program("f32", True, True, SHAPE_READ)
    assert not pairs(text)
    got = run_both(text, [x, w.astype(np.float32)], np.empty((9, 1), np.float32))
    check(got, (x * w.astype(np.float32)).sum(-1, keepdims=True) + 1)


def test_a_product_read_after_the_loop_is_two_instructions() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((7, 5, 16)).astype(np.float32)
    w = rng.standard_normal((7, 5, 1)).astype(np.float32)
    text = experts_program("experts", "{1}", AFTER_THE_LOOP)
    assert not pairs(text)
    got = run_both(text, [x, w], np.empty((7, 1, 16), np.float32))
    p = x * w
    check(got, p.sum(1, keepdims=True) + p[:, 4:].sum(1, keepdims=True))  # last pass: e = 4


def test_a_product_read_in_the_next_pass_is_not_a_pair() -> None:
    """The product register is read by the next pass before it is written."""
    assert not pairs(experts_program("experts", "{1}", NEXT_PASS))


def test_a_sum_over_two_axes_is_two_instructions(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 4, 16)).astype(np.float32)
    w = rng.standard_normal((6, 4, 1)).astype(np.float32)
    text = experts_program("experts", "{1, 2}", EXPERTS, "(s0 s5 g0 s2) (s5 s4) (s5 s4)")
    counts = spied(monkeypatch)
    assert not pairs(text)
    got = run_both(text, [x, w], np.empty((6, 1, 1), np.float32))
    check(got, (x * w).sum((1, 2), keepdims=True))
    assert counts == {"unplanned": 0, "planned": 0}


def test_an_operand_broadcast_along_the_later_axes_is_two_instructions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """x (R, E, 16) times w (R, 1, 16) summed over E: no operand has extent 1 after the
    summed axis, so no matmul computes it (and the tile's shapes say so)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((7, 5, 16)).astype(np.float32)
    w = rng.standard_normal((7, 1, 16)).astype(np.float32)
    counts = spied(monkeypatch)
    text = experts_program("columns", "{1}", EXPERTS)
    assert pairs(text)  # (the instructions alone allow it)
    got = run_both(text, [x, w], np.empty((7, 1, 16), np.float32))
    check(got, (x * w).sum(1, keepdims=True))
    assert counts == {"unplanned": 0, "planned": 0}


def test_integers_are_two_instructions() -> None:
    rng = np.random.default_rng(6)
    x = rng.integers(-100, 100, (9, 24)).astype(np.int32)
    w = rng.integers(-100, 100, 24).astype(np.int32)
    text = rows_program("i32", True, True, ROW_SUM.replace("{keep}", "keepdims"))
    assert not pairs(text)
    got = run_both(text, [x, w], np.empty((9, 1), np.int32))
    for result in got:
        np.testing.assert_array_equal(result, (x * w).sum(-1, keepdims=True))


Shapes = tuple[tuple[int, ...], tuple[int, ...], int]


@pytest.mark.parametrize(
    ("a", "b", "axis"),
    [
        ((3, 5), (3, 5), 1),
        ((3, 5), (1, 5), 1),
        ((1, 5), (3, 5), 1),
        ((5,), (5,), 0),
        ((2, 3, 5), (3, 5), 2),
        ((2, 1, 5), (1, 4, 5), 2),
        ((2, 6, 4), (2, 6, 1), 1),
        ((2, 6, 1), (2, 6, 4), 1),
        ((1, 6, 1), (3, 6, 4), 1),
        ((2, 6, 4, 3), (1, 6, 1, 1), 1),
        ((2, 0, 4), (2, 0, 1), 1),
        ((0, 5), (0, 5), 1),
        ((1, 5), (1, 5), 1),  # a tile times itself: one row
        ((2, 3, 5), (2, 3, 5), 2),  # a batch of rows
        ((4, 0), (4, 0), 1),  # nothing summed
    ],
)
def test_plans_compute_the_sum_of_products(
    a: tuple[int, ...], b: tuple[int, ...], axis: int
) -> None:
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal(a), rng.standard_normal(b)
    want = (x * y).sum(axis)
    plan = product_sums.plan_for(a, b, axis)
    assert plan is not None
    out = np.full(want.shape, np.nan)
    product_sums.product_sum_into(plan, x, y, out)
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    ("a", "b", "axis"),
    [
        ((3, 5), (3, 1), 1),  # broadcast along the summed axis
        ((2, 6, 4), (2, 1, 4), 1),  # neither operand 1 after the axis
        ((2, 6, 4), (6, 1), 1),  # ranks differ for a middle axis
        ((2, 6, 4), (2, 6, 4), 0),
    ],
)
def test_no_plan_where_no_matmul_computes_it(
    a: tuple[int, ...], b: tuple[int, ...], axis: int
) -> None:
    assert product_sums.plan_for(a, b, axis) is None


def test_the_switch_turns_the_pattern_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(product_sums, "ENABLED", False)
    assert not pairs(rows_program("f32", True, True, SQUARES))


DOT = """\
arg a0 f32 1
arg a1 f32 1
arg a2 f32 1
params 0
slot s0 = dim(a0,0)
slot s1 = 0
slot s2 = 1
slot s3 = 8192
slot s4 = 16384
slot s5 = 24576
grid s2
reg r0 f32 (s0) at s1
reg r1 f32 (s0) at s3
reg r2 f32 (s0) at s4
reg r3 f32 (s2) at s5
view v0 a0 offset s1 (s0 s2)
view v1 a1 offset s1 (s0 s2)
view v2 a2 offset s1 (s2 s1)
load r0, v0
load r1, v1
mul r2, r0, r1
reduce r3, r2, sum, {0}, [keepdims]
store v2, r3
"""


def test_a_dot_product_is_one_matmul_and_holds_blas(monkeypatch: pytest.MonkeyPatch) -> None:
    """Vectors' dot product: a sum over a rank-1 tile calls BLAS only as a matmul with
    the mul before it, so its launches hold BLAS at one thread too."""
    program = vm.load(vm.encode(vm.assemble(DOT)))
    assert static_info(program).uses_blas
    rng = np.random.default_rng(8)
    x, y = rng.standard_normal((2, 100)).astype(np.float32)
    counts = spied(monkeypatch)
    check(run_both(DOT, [x, y], np.empty(1, np.float32)), np.array([x @ y]))
    assert counts["unplanned"] == 1 and counts["planned"] == 1
