"""How one program's values are spread over the processes of a world, and back.

A `Sharding` says what each rank holds of a whole array:

- `replicate`: every rank holds the whole array;
- `split:AXIS`: rank k holds the k-th of as many equal parts along AXIS as there are
  ranks (the axis must divide by their number);
- `partial`: a partial sum, whose sum over the ranks is the array (what a
  row-parallel layer leaves before its all-reduce or reduce-scatter): each rank holds
  a float array divided by the number of ranks; rank 0 holds an integer or boolean
  array, the others zeros.

`shard` cuts a rank's part from the whole; `unshard` puts the ranks' parts together.
`dvm-run --nproc` uses them for the inputs it gives each rank and the results it
compares with the single-process program (docs/distributed.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dvm.numerics import is_float_dtype

Array = np.ndarray[Any, Any]

KINDS = ("replicate", "split", "partial")


@dataclass(frozen=True)
class Sharding:
    kind: str
    axis: int = 0
    """The axis of a split."""

    def __str__(self) -> str:
        return f"split:{self.axis}" if self.kind == "split" else self.kind


REPLICATE = Sharding("replicate")


def parse_sharding(text: str) -> Sharding:
    """`replicate`, `partial` or `split:AXIS`; a ValueError says what is wrong."""
    kind, _, axis = text.partition(":")
    if kind == "split" and axis.isdigit():
        return Sharding("split", int(axis))
    if kind in ("replicate", "partial") and not axis:
        return Sharding(kind)
    raise ValueError(f"bad sharding {text!r}: write replicate, partial or split:AXIS")


def check_sharding(what: str, sharding: Sharding, shape: Sequence[int], world: int) -> None:
    """A ValueError naming `what` if `sharding` cannot cut an array of `shape` `world` ways."""
    if sharding.kind != "split":
        return
    axis = sharding.axis
    if axis >= len(shape):
        raise ValueError(f"{what} has rank {len(shape)}: it has no axis {axis} to split")
    if shape[axis] % world:
        raise ValueError(
            f"{what} has {shape[axis]} elements along axis {axis}, "
            f"which do not split into {world} equal parts"
        )


def check_gather(what: str, sharding: Sharding, shape: Sequence[int]) -> None:
    """A ValueError naming `what` if `sharding` cannot join parts of `shape` (`unshard`)."""
    if sharding.kind == "split" and sharding.axis >= len(shape):
        raise ValueError(f"{what} has rank {len(shape)}: it has no axis {sharding.axis} to gather")


def shard(x: Array, sharding: Sharding, rank: int, world: int) -> Array:
    """Rank `rank`'s part of the whole array `x`."""
    if sharding.kind == "replicate":
        return x
    if sharding.kind == "partial":
        if is_float_dtype(x.dtype):
            return (x / world).astype(x.dtype)
        return x if rank == 0 else np.zeros_like(x)
    parts = np.split(x, world, axis=sharding.axis)
    return np.ascontiguousarray(parts[rank])


def unshard(parts: Sequence[Array], sharding: Sharding) -> Array:
    """The whole array that the ranks' `parts` make (replicated: rank 0's)."""
    if sharding.kind == "replicate":
        return parts[0]
    if sharding.kind == "partial":
        return np.sum(parts, axis=0, dtype=parts[0].dtype).astype(parts[0].dtype)
    return np.concatenate(parts, axis=sharding.axis)
