"""The grouped matmul instruction's numpy kernel (`gmma`).

`gmma dst, a, b, sizes, rows` multiplies each row of the tile `a` (rows x K)
by the matrix of its group, `b[g]` (b is groups x K x N): the rows of the
whole operand are split into consecutive groups, group g holding `sizes[g]`
rows, and row i of the tile is row `start + i` of the operand, `start` being
where the current tile of view `rows` begins along its dim 0 (whose size is
the operand's row count). Rows past the last group are zero.

The sizes are data read at run time, so one program serves every split; they
are checked before any row is computed: a negative size, or sizes adding up to
more than the operand's rows, is a `GroupSizeError`, never a wrong answer. A
float narrower than f32 is multiplied in f32 and rounded once, as `mma` does.
"""

from __future__ import annotations

import numpy as np

from dvm.vm.narrow import widen_into, widened


class GroupSizeError(ValueError):
    """A `gmma`'s group sizes do not split the operand's rows: one is negative, or
    they add up to more rows than there are."""


def group_ends(sizes: np.ndarray, rows: int) -> np.ndarray:
    """Where each group ends (exclusive), after checking the sizes against `rows`."""
    sizes = np.asarray(sizes)
    negative = np.flatnonzero(sizes < 0)
    if negative.size:
        g = int(negative[0])
        raise GroupSizeError(f"gmma: group {g} has a negative size {int(sizes[g])}")
    # each size is at most `rows` before the sum is taken, so the sum cannot overflow
    too_big = np.flatnonzero(sizes > rows)
    total = int(sizes[too_big[0]]) if too_big.size else int(np.sum(sizes, dtype=np.int64))
    if total > rows:
        raise GroupSizeError(
            f"gmma: the group sizes add up to {total} or more rows, but there are {rows}"
        )
    return np.cumsum(sizes, dtype=np.int64)


def grouped_mma(
    a: np.ndarray, b: np.ndarray, sizes: np.ndarray, start: int, rows: int, out: np.ndarray
) -> None:
    """out[i] = a[i] @ b[group of row start + i], zero past the last group (see the
    module docstring); `rows` is the operand's row count the sizes must fit."""
    ends = group_ends(sizes, rows)
    begins = ends - np.asarray(sizes, dtype=np.int64)
    stop = start + a.shape[0]
    out[...] = 0
    wide = widened(out.dtype)
    for g in np.flatnonzero((begins < stop) & (ends > start) & (ends > begins)):
        lo, hi = max(int(begins[g]), start) - start, min(int(ends[g]), stop) - start
        if wide is None:
            np.matmul(a[lo:hi], b[g], out=out[lo:hi])
            continue
        part_a = np.empty(a[lo:hi].shape, wide)
        part_b = np.empty(b[g].shape, wide)
        widen_into(part_a, a[lo:hi])
        widen_into(part_b, b[g])
        np.copyto(out[lo:hi], part_a @ part_b, casting="same_kind")
