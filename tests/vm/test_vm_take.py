"""The VM's `take`: an indexed load whose view's last dim is the one indexed."""

from __future__ import annotations

import numpy as np
import pytest

from dvm import vm

# out[i, j] = x[idx[i], j]: x (V, D), idx (N, 1) i32, tiles of 4 rows by a grid axis
# and 4 columns by a loop; the view reads x at stride 0 along the rows and walks
# x's rows whole as its last dim.
TAKE = """\
arg a0 f32 2
arg a1 i32 2
arg a2 f32 2
params 0
slot s0 = dim(a1,0)
slot s1 = dim(a0,1)
slot s2 = 4
slot s3 = s0 s2 ceildiv
slot s4 = 0
slot s5 = 1
slot s6 = s1 s2 ceildiv
slot s7 = dim(a0,0)
slot s8 = 64
slot s9 = 128
grid s3
reg r0 i32 (s2, s5) at s4
reg r1 f32 (s2, s2) at s8
view v0 a1 offset s4 (s0 s5 g0 s2) (s5 s4)
view v1 a0 offset s4 (s0 s4 g0 s2) (s1 s5 l0 s2) (s7 s1)
view v2 a2 offset s4 (s0 s1 g0 s2) (s1 s5 l0 s2)
load r0, v0
loop s6
take r1, v1, r0
store v2, r1
endloop
"""


def run(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    loaded = vm.load(vm.encode(vm.assemble(TAKE)))
    out = np.full((idx.shape[0], x.shape[1]), np.nan, np.float32)
    vm.launch(loaded, [x, idx, out])
    return out


@pytest.mark.parametrize(("v", "d", "n"), [(1, 1, 1), (5, 7, 9), (13, 30, 3), (3, 5, 0)])
def test_take_picks_rows_planned_and_unplanned(v: int, d: int, n: int) -> None:
    rng = np.random.default_rng(v)
    x = rng.standard_normal((v, d)).astype(np.float32)
    idx = rng.integers(0, v, (n, 1)).astype(np.int32)
    for _ in range(3):  # the first launch runs unplanned, the next ones planned
        np.testing.assert_array_equal(run(x, idx), x[idx[:, 0]])


@pytest.mark.parametrize("bad", [-1, 5])
def test_an_index_outside_the_dim_is_an_error(bad: int) -> None:
    x = np.ones((5, 3), np.float32)
    idx = np.array([[0], [bad]], np.int32)
    for _ in range(2):
        with pytest.raises(vm.TakeIndexError, match=f"index {bad} is out of range"):
            run(x, idx)


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (("reg r0 i32", "reg r0 f32"), "dtype mismatch"),
        (("reg r1 f32 (s2, s2)", "reg r1 i32 (s2, s2)"), "dtype mismatch"),
        (("(s7 s1)\n", "\n"), "rank mismatch"),
    ],
)
def test_the_validator_rejects_a_bad_take(edit: tuple[str, str], reason: str) -> None:
    with pytest.raises(vm.BytecodeError, match=reason):
        vm.load(vm.encode(vm.assemble(TAKE.replace(*edit, 1))))
