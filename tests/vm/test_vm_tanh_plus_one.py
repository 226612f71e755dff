"""A float `tanh` updated in place by an `add` of 1 runs as one logistic.

The pair gives 1 + tanh(a) in a first (unplanned) launch and a planned one, the same
bits in both, whether the tile is large enough for the logistic or not; a spy on
what each executor calls proves which way ran. The near misses (an add of 2, an add
into another register, a float16 register, the add's result stored directly) stay
two instructions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import dvm.vm as vm
from dvm.vm import bind, tanh_plus_one, unplanned

ROWS = 64
"""Rows per tile (grid axis 0): a 64 x 128 tile is at least `tanh_plus_one.LEAST`."""


def program(dtype: str, body: str) -> str:
    """x (R, C) -> out (R, C), ROWS rows per tile, through `body`."""
    return f"""\
arg a0 {dtype} 2
arg a1 {dtype} 2
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = {ROWS}
slot s3 = s0 s2 ceildiv
slot s4 = 0
slot s5 = 1
slot s6 = 65536
grid s3
reg r0 {dtype} (s2, s1) at s4
reg r1 {dtype} (s2, s1) at s6
view v0 a0 offset s4 (s0 s1 g0 s2) (s1 s5)
view v1 a1 offset s4 (s0 s1 g0 s2) (s1 s5)
{body}"""


GELU_TAIL = """\
load r0, v0
tanh r1, r0
add.rs r1, r1, #1.0
mul r1, r1, r0
store v1, r1
"""

SCALAR_FIRST = GELU_TAIL.replace("add.rs r1, r1, #1.0", "add.sr r1, #1.0, r1")
TWO = GELU_TAIL.replace("#1.0", "#2.0")
ELSEWHERE = GELU_TAIL.replace(
    "add.rs r1, r1, #1.0\nmul r1, r1, r0", "add.rs r0, r1, #1.0\nmul r1, r1, r0"
)
STORED = "load r0, v0\ntanh r1, r0\nadd.rs r1, r1, #1.0\nstore v1, r1\n"


def pairs(text: str) -> dict[int, int]:
    p = vm.load(vm.encode(vm.assemble(text)))
    return tanh_plus_one.tanh_plus_one_pairs(p.code, p.registers)


def spied(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the tiles the pair ran on as one logistic (both executors call
    `tanh_plus_one_into`, which takes the logistic from LEAST elements)."""
    sizes: list[int] = []

    def run(a: np.ndarray, out: np.ndarray) -> None:
        if out.size >= tanh_plus_one.LEAST:
            sizes.append(out.size)
        tanh_plus_one.tanh_plus_one_into(a, out)

    monkeypatch.setattr(unplanned, "tanh_plus_one_into", run)
    monkeypatch.setattr(bind, "tanh_plus_one_into", run)
    return sizes


def run_both(text: str, x: np.ndarray) -> list[np.ndarray]:
    """The program's result in a first (unplanned) launch and in a planned one."""
    p = vm.load(vm.encode(vm.assemble(text)))
    spec = vm.specialize(p, [x.shape, x.shape], lazy=True)
    got = []
    for _ in ("unplanned", "planned"):
        out = np.full_like(x, np.nan)
        vm.launch(spec, [x, out])
        got.append(out)
    assert spec.planned
    return got


def inputs(shape: tuple[int, int], dtype: Any) -> np.ndarray:
    """Normal values times 4, with the edges: an exp that overflows, a 1 + tanh that
    float32 rounds to 0, both infinities, a NaN."""
    x = (np.random.default_rng(0).standard_normal(shape) * 4).astype(dtype)
    x.flat[:6] = [-1000.0, -30.0, np.inf, -np.inf, np.nan, 0.0]
    return x


def test_the_pairs_are_a_float_tanh_and_an_add_of_one_in_place() -> None:
    assert pairs(program("f32", GELU_TAIL)) == {1: 2}
    assert pairs(program("f64", GELU_TAIL)) == {1: 2}
    assert pairs(program("f32", SCALAR_FIRST)) == {1: 2}
    assert pairs(program("f32", TWO)) == {}
    assert pairs(program("f32", ELSEWHERE)) == {}
    assert pairs(program("f16", GELU_TAIL)) == {}


@pytest.mark.parametrize(
    ("dtype", "body"),
    [(np.float32, GELU_TAIL), (np.float64, GELU_TAIL), (np.float32, SCALAR_FIRST)],
)
def test_a_large_tile_runs_the_logistic_in_both_executors(
    monkeypatch: pytest.MonkeyPatch, dtype: Any, body: str
) -> None:
    sizes = spied(monkeypatch)
    x = inputs((150, 128), dtype)  # tiles of 64, 64 and 22 rows
    first, planned = run_both(program(np.dtype(dtype).name.replace("float", "f"), body), x)
    with np.errstate(all="ignore"):
        want = (1 + np.tanh(x.astype(np.float64))) * x.astype(np.float64)
    tol = 1e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(first, want, rtol=tol, atol=tol)
    np.testing.assert_array_equal(first, planned)
    assert first[0, 0] == 0.0  # the limit
    assert first[0, 1] == pytest.approx(-30 * 2 / (1 + np.exp(60)), rel=1e-5)  # every digit
    assert sorted(set(sizes)) == [64 * 128]  # both executors; the tail tile is small


def test_a_small_tile_and_a_stored_add_keep_the_two_instructions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sizes = spied(monkeypatch)
    small = inputs((64, 40), np.float32)  # one tile of 2560 elements
    with np.errstate(all="ignore"):
        want = (np.tanh(small) + np.float32(1)) * small
    for got in run_both(program("f32", GELU_TAIL), small):
        np.testing.assert_array_equal(got, want)
    x = inputs((150, 128), np.float32)
    with np.errstate(all="ignore"):
        stored = np.tanh(x) + np.float32(1)
    for got in run_both(program("f32", STORED), x):
        np.testing.assert_array_equal(got, stored)
    assert sizes == []
