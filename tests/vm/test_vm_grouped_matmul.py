"""The VM's grouped matmul instruction `gmma`, from assembled programs.

Both executors (a launch run unplanned and a planned one) must give numpy's
grouped matmul, tail tiles included, and refuse sizes that do not split the
rows (a negative size, more rows than there are) with a GroupSizeError.
"""

from __future__ import annotations

import numpy as np
import pytest

import dvm.vm as vm
from dvm.vm.grouped_matmul import GroupSizeError

TILE_ROWS = 4
PROGRAM = f"""\
arg a0 f32 2
arg a1 i32 1
arg a2 f32 3
arg a3 f32 2
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = dim(a2,0)
slot s3 = dim(a2,2)
slot s4 = {TILE_ROWS}
slot s5 = 1
slot s6 = 0
slot s7 = s0 s4 ceildiv
slot s8 = s1 s3 mul
slot s9 = s2 4 mul 63 add 64 floordiv 64 mul
slot s10 = s4 s1 mul 4 mul 63 add 64 floordiv 64 mul s9 add
slot s11 = s2 s8 mul 4 mul 63 add 64 floordiv 64 mul s10 add
grid s7
reg r0 i32 (s2) at s6
reg r1 f32 (s4, s1) at s9
reg r2 f32 (s2, s1, s3) at s10
reg r3 f32 (s4, s3) at s11
view v0 a1 offset s6 (s2 s5)
view v1 a0 offset s6 (s0 s1 g0 s4) (s1 s5)
view v2 a2 offset s6 (s2 s8) (s1 s3) (s3 s5)
view v3 a0 offset s6 (s0 s1 g0 s4)
view v4 a3 offset s6 (s0 s3 g0 s4) (s3 s5)
load r0, v0
load r1, v1
load r2, v2
gmma r3, r1, r2, r0, v3
store v4, r3
"""


def grouped(x: np.ndarray, sizes: np.ndarray, w: np.ndarray) -> np.ndarray:
    out = np.zeros((x.shape[0], w.shape[2]), x.dtype)
    ends = np.cumsum(sizes)
    for g, (end, size) in enumerate(zip(ends, sizes, strict=True)):
        out[end - size : end] = x[end - size : end] @ w[g]
    return out


def operands(rows: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((rows, 5)).astype(np.float32), rng.standard_normal((3, 5, 6)).astype(
        np.float32
    )


@pytest.mark.parametrize("unplanned", [True, False])
@pytest.mark.parametrize(
    ("rows", "sizes"), [(10, [3, 0, 5]), (10, [0, 0, 10]), (1, [1, 0, 0]), (0, [0, 0, 0])]
)
def test_gmma_matches_numpy_in_both_executors(rows: int, sizes: list[int], unplanned: bool) -> None:
    """Tiles of 4 rows: groups cross tiles, the last tile is short, rows past the
    last group are zero."""
    program = vm.load(vm.encode(vm.assemble(PROGRAM)))
    x, w = operands(rows, rows)
    g = np.array(sizes, np.int32)
    y = np.full((rows, 6), np.nan, np.float32)
    vm.launch(program, [x, g, w, y], unplanned=unplanned, fresh=True)
    np.testing.assert_allclose(y, grouped(x, g, w), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("unplanned", [True, False])
@pytest.mark.parametrize(
    ("sizes", "message"),
    [([3, -1, 5], "group 1 has a negative size -1"), ([3, 5, 3], "add up to 11 or more rows")],
)
def test_gmma_refuses_sizes_that_do_not_split_the_rows(
    sizes: list[int], message: str, unplanned: bool
) -> None:
    program = vm.load(vm.encode(vm.assemble(PROGRAM)))
    x, w = operands(10, 0)
    y = np.zeros((10, 6), np.float32)
    with pytest.raises(GroupSizeError, match=message):
        vm.launch(program, [x, np.array(sizes, np.int32), w, y], unplanned=unplanned, fresh=True)


def test_the_validator_types_gmma() -> None:
    bad = PROGRAM.replace("arg a1 i32 1", "arg a1 f32 1").replace("reg r0 i32", "reg r0 f32")
    with pytest.raises(vm.BytecodeError, match="dtype mismatch"):
        vm.load(vm.encode(vm.assemble(bad)))
    aliased = PROGRAM.replace("gmma r3, r1, r2, r0, v3", "gmma r1, r1, r2, r0, v3")
    with pytest.raises(vm.BytecodeError):
        vm.load(vm.encode(vm.assemble(aliased)))


@pytest.mark.parametrize("unplanned", [True, False])
def test_a_rows_view_tiled_unlike_the_rows_is_refused(unplanned: bool) -> None:
    """The rows view's tile must be the tile's rows: else rows would be misnumbered."""
    text = PROGRAM.replace(
        "view v3 a0 offset s6 (s0 s1 g0 s4)", "view v3 a0 offset s6 (s0 s1 g0 s5)"
    )
    program = vm.load(vm.encode(vm.assemble(text)))
    x, w = operands(10, 0)
    y = np.zeros((10, 6), np.float32)
    with pytest.raises(vm.BytecodeError, match="gmma rows differ"):
        vm.launch(
            program, [x, np.array([3, 0, 5], np.int32), w, y], unplanned=unplanned, fresh=True
        )
