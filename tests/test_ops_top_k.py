"""`tensor.top_k` for any static k as a kernel of its own on the VM, at every level.

The kernel walks the axis in chunks and merges each into a carry of the k largest
so far (the VM's `top_k`): any k, from 0 to the axis's length, on shapes with 0, 1,
primes and long axes, on both device presets, in every dtype the op takes, with
NaN, infinities, extremes and ties, matching numpy's order (largest first, NaN
first, equal ones by the lower index).
"""

from __future__ import annotations

import pytest
from test_ops_slices import LEVELS, PRESETS, check, lowered
from test_ops_vmops import numpy_top_k, top_case, top_program

from dvm.lowering.scans import top_k_fits
from dvm.lowering.tensor_to_tile import DEVICES

TILED = LEVELS[1]
"""The pipeline up to tile IR, for a device (`%s`)."""


def shapes_for(k: int, axis: int) -> list[tuple[int, int]]:
    """The axis of length k, k + 1, a prime above both, 3001 and 10007 (long: many
    chunks), with 1, a prime and 0 across it."""
    along = sorted({k, k + 1, max(13, k + 2), 3001, 10007} - {0})
    across = [1, 3, 17]
    rows = [(n, across[i % 3]) for i, n in enumerate(along)] + [(max(k, 1), 0)]
    return rows if axis == 0 else [(m, n) for n, m in rows]


@pytest.mark.parametrize("device", PRESETS)
@pytest.mark.parametrize(("element", "k", "axis"), [
    ("f32", 0, 1), ("f32", 1, 0), ("f32", 9, 1), ("f32", 3001, 1), ("f32", 2000, 0), ("f16", 12, 1),
    ("bf16", 40, 0), ("i8", 17, 1), ("ui8", 100, 1), ("i64", 25, 0), ("i1", 11, 1),
    ("f64", 513, 1), ("ui32", 10, 0), ("i16", 3, 1),
])  # fmt: skip
def test_top_k_of_any_k_runs_as_a_kernel_and_matches_numpy(
    device: str, element: str, k: int, axis: int
) -> None:
    src = top_program(element, k, axis)
    fused = str(lowered(src, "symbolic-shapes,fuse"))
    assert "tensor.top_k %x" in fused and "tensor.fusion" in fused
    tiled = str(
        lowered(src, f"symbolic-shapes,fuse,stack,convert-tensor-to-tile{{device={device}}}")
    )
    assert "tile.top_k" in tiled
    cases = [(top_case(s, element, i),) for i, s in enumerate(shapes_for(k, axis))]
    check(src, device, cases, lambda x: numpy_top_k(x, k, axis))


def test_k_as_long_as_the_axis_sorts_it() -> None:
    """k = the axis's length (static): the whole axis in descending order."""
    src = top_program("f32", 10007, 1).replace("tensor<?x?xf32>", "tensor<?x10007xf32>")
    cases = [(top_case((3, 10007), "f32", 1),), (top_case((0, 10007), "f32", 2),)]
    check(src, "host", cases, lambda x: numpy_top_k(x, 10007, 1))


def test_a_carry_too_large_for_the_local_memory_stays_on_the_host() -> None:
    """A row of the carry must fit a core's local memory; a larger k is a host step."""
    device = DEVICES["ascend910b"]()
    src = top_program("f64", 20000, 1)
    tiled = str(
        lowered(src, "symbolic-shapes,fuse,stack,convert-tensor-to-tile{device=ascend910b}")
    )
    assert "tile.top_k" not in tiled and "tensor.top_k" in tiled
    ops = [op for op in lowered(src, "symbolic-shapes,fuse").walk() if op.name == "tensor.top_k"]
    assert not top_k_fits(ops[0], device)
    check(
        src, "ascend910b", [(top_case((2, 20011), "f64", 3),)], lambda x: numpy_top_k(x, 20000, 1)
    )
