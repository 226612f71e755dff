"""The VM's `top_k`: a carry of the k largest along one axis, merged with a chunk.

The merge itself (`top_k_into`), which both executors and the tile interpreter
run; the unplanned executor's writer of the instruction (`write_top_k`), which
checks the registers' shapes as the planner does (`shapes.top_k_mismatch`).
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from dvm.numerics import is_bfloat16
from dvm.vm.shapes import top_k_mismatch


def top_k_unfilled(dtype: np.dtype) -> int:
    """The index a top_k carry's unfilled places hold: above every index, and exact as
    the float immediate a `fill` takes (the largest i64 is not)."""
    return min(int(np.iinfo(dtype).max), 2**53)


def top_k_into(
    values: np.ndarray, indices: np.ndarray, src: np.ndarray, positions: np.ndarray, axis: int
) -> None:
    """values and indices (k along `axis`), in place: the k largest of values and src
    along `axis`, with their indices (positions: src's): largest first, NaN above every
    number, equal ones by the lower index (the order of `tensor.top_k`). A carry that
    is not yet full holds `top_k_unfilled` indices (and the lowest value), which lose
    every tie."""
    k, m = values.shape[axis], src.shape[axis]
    if k == 0 or m == 0:
        return
    at = np.broadcast_to(positions, src.shape).astype(indices.dtype, copy=False)
    unfilled = top_k_unfilled(indices.dtype)
    if m >= k and (np.take(indices, 0, axis=axis) == unfilled).all():  # the first chunk
        both, where = src, at
    else:
        both = np.concatenate([values, src], axis=axis)
        where = np.concatenate([indices, at], axis=axis)
        if (np.diff(where, axis=axis) < 0).any():  # unfilled places first: order by index
            by_index = np.argsort(where, axis=axis, kind="stable")
            both = np.take_along_axis(both, by_index, axis=axis)
            where = np.take_along_axis(where, by_index, axis=axis)
    keys = both.astype(np.float32) if both.dtype == np.float16 or is_bfloat16(both.dtype) else both
    # descending and stable: a stable ascending sort of the reversed axis, reversed
    # (numpy sorts NaN last, so it comes first; no negation, which unsigned and
    # integers' minimum would not survive)
    n = both.shape[axis]
    ascending = np.argsort(np.flip(keys, axis), axis=axis, kind="stable")
    first = n - 1 - np.flip(np.take(ascending, np.arange(n - k, n), axis=axis), axis)
    values[...] = np.take_along_axis(both, first, axis=axis)
    indices[...] = np.take_along_axis(where, first, axis=axis)


def top_k_checked(
    values: np.ndarray, indices: np.ndarray, src: np.ndarray, positions: np.ndarray, axis: int
) -> tuple[str, str] | None:
    """`top_k_into`, unless the shapes do not fit: then (reason, detail)."""
    mismatch = top_k_mismatch(values.shape, indices.shape, src.shape, positions.shape, axis)
    if mismatch is None:
        top_k_into(values, indices, src, positions, axis)
    return mismatch


class Writer(Protocol):
    """What `write_top_k` asks of the unplanned executor's `Launcher`."""

    def read(self, k: int, r: int, pad: str) -> str: ...

    def constant(self, name: str, value: Any) -> str: ...

    def emit(self, pad: str, *lines: str) -> None: ...


def write_top_k(g: Writer, k: int, ops: tuple[Any, ...], pad: str) -> None:
    """Unplanned: top_k_into the values and indices registers, unless their shapes do
    not fit (an error naming instruction k)."""
    registers = ", ".join(g.read(k, r, pad) for r in ops[:4])
    fn = g.constant("_top_k_checked", top_k_checked)
    call = f"m = {fn}({registers}, {ops[4].bit_length() - 1})"
    g.emit(pad, call, f"if m: raise _fail(S, {k}, *m)")
