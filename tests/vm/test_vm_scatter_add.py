"""The VM's `scatter_add`: an indexed store that adds, in order, duplicates accumulating."""

from __future__ import annotations

import numpy as np
import pytest

from dvm import vm

# out[idx[i], j] += upd[i, j]: upd (N, D), idx (N, 1) i32, out (V, D); columns in
# tiles of 4 by a grid axis, rows in chunks of 4 by a loop. The out view spans one
# row at stride 0 (every update row goes to it), the column tile, and out's rows
# whole as its last dim, the one indexed.
SCATTER = """\
arg a0 f32 2
arg a1 i32 2
arg a2 f32 2
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = 4
slot s3 = s1 s2 ceildiv
slot s4 = 0
slot s5 = 1
slot s6 = s0 s2 ceildiv
slot s7 = dim(a2,0)
slot s8 = 64
grid s3
reg r0 i32 (s2, s5) at s4
reg r1 f32 (s2, s2) at s8
view v0 a1 offset s4 (s0 s5 l0 s2) (s5 s4)
view v1 a0 offset s4 (s0 s1 l0 s2) (s1 s5 g0 s2)
view v2 a2 offset s4 (s5 s4) (s1 s5 g0 s2) (s7 s1)
loop s6
load r0, v0
load r1, v1
scatter_add v2, r1, r0
endloop
"""


def run(base: np.ndarray, idx: np.ndarray, upd: np.ndarray, text: str = SCATTER) -> np.ndarray:
    loaded = vm.load(vm.encode(vm.assemble(text)))
    out = base.copy()
    vm.launch(loaded, [upd, idx, out])
    return out


@pytest.mark.parametrize(("v", "d", "n"), [(1, 1, 1), (5, 7, 9), (13, 30, 41), (3, 5, 0)])
def test_scatter_add_accumulates_in_order_planned_and_unplanned(v: int, d: int, n: int) -> None:
    """Row and column tails; repeated rows add in numpy's `add.at` order, bit for bit."""
    rng = np.random.default_rng(v + n)
    base = rng.standard_normal((v, d)).astype(np.float32)
    upd = rng.standard_normal((n, d)).astype(np.float32)
    idx = rng.integers(0, v, (n, 1)).astype(np.int32)
    want = base.copy()
    np.add.at(want, idx[:, 0], upd)
    for _ in range(3):  # the first launch runs unplanned, the next ones planned
        np.testing.assert_array_equal(run(base, idx, upd), want)


@pytest.mark.parametrize("bad", [-1, 5])
def test_an_index_outside_the_dim_is_an_error(bad: int) -> None:
    base, upd = np.zeros((5, 3), np.float32), np.ones((2, 3), np.float32)
    idx = np.array([[0], [bad]], np.int32)
    for _ in range(2):
        with pytest.raises(vm.TakeIndexError, match=f"scatter_add: index {bad} is out of range"):
            run(base, idx, upd)


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (("reg r0 i32", "reg r0 f32"), "dtype mismatch"),
        (("reg r1 f32 (s2, s2)", "reg r1 i32 (s2, s2)"), "dtype mismatch"),
        (("(s7 s1)\n", "\n"), "rank mismatch"),
    ],
)
def test_the_validator_rejects_a_bad_scatter_add(edit: tuple[str, str], reason: str) -> None:
    with pytest.raises(vm.BytecodeError, match=reason):
        vm.load(vm.encode(vm.assemble(SCATTER.replace(*edit, 1))))


def test_a_tile_that_does_not_fit_the_updates_is_an_error_at_launch() -> None:
    """The view's tile spans all 7 columns where the updates hold 4."""
    text = SCATTER.replace("(s5 s4) (s1 s5 g0 s2) (s7 s1)", "(s5 s4) (s1 s5) (s7 s1)")
    base, upd = np.zeros((3, 7), np.float32), np.ones((2, 7), np.float32)
    idx = np.zeros((2, 1), np.int32)
    for _ in range(2):  # unplanned, then planned
        with pytest.raises(vm.BytecodeError, match="stored tile shape mismatch"):
            run(base, idx, upd, text)
