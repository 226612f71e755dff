"""Collectives at run time: the world a program runs in, and its communication steps.

A `World` is the group of processes a compiled program's collectives span
(`dvm.dialects.collectives`). `world_of(group)` makes one for `dvm.compile`'s `group`:
a `torch.distributed` process group (None: the default group, if one is initialized),
or, when torch has no initialized group, the world of one process, which needs no torch.

`TorchWorld` runs each collective with `torch.distributed` (the `gloo` backend on CPU)
on the numpy buffers themselves, through `torch.from_numpy`: an all-reduce reduces a
copy of its operand (its result) in place; an all-gather along axis 0 gathers into its
result, along another axis into a stack of the parts that one concatenation lays out;
a reduce-scatter along axis 0 reads its operand as it is, along another axis a copy
that puts each rank's part in one block. Element types gloo does not reduce travel as
one it does: i16 and ui16 as i32, ui32 as i64, ui64 as i64 bits (for max and min with
the top bit flipped, which orders them as unsigned); bf16 as torch's bf16. A gather
moves bytes: every type travels as a type of its width.

A collective that fails (a peer died, or did not arrive within the group's timeout)
is an `ExecutionError` naming the op, the rank and the world size.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from dvm.errors import CompileError, ExecutionError
from dvm.numerics import is_bfloat16

if TYPE_CHECKING:
    from xdsl.ir import Operation

Array = np.ndarray[Any, Any]

WIDENED = {
    np.dtype(np.int16): np.dtype(np.int32),
    np.dtype(np.uint16): np.dtype(np.int32),
    np.dtype(np.uint32): np.dtype(np.int64),
}
"""Integer types gloo does not reduce, and the type each is reduced in (every sum and
product wraps to the same bits once converted back)."""

SAME_WIDTH = {1: np.uint8, 2: np.float16, 4: np.int32, 8: np.int64}
"""The type an all-gather moves elements of each width as (gloo copies them)."""

TOP_BIT = np.int64(-(2**63))
SOURCE_LOCATION = re.compile(r"^\[[^\]]*\.(?:cc|cpp|h):\d+\]\s*")


class World:
    """The world of one process: every collective is the identity."""

    rank = 0

    def size(self) -> int:
        return 1

    def all_reduce(self, x: Array, kind: str) -> Array:
        return x

    def all_gather(self, x: Array, axis: int) -> Array:
        return x

    def reduce_scatter(self, x: Array, axis: int, kind: str) -> Array:
        return x


SINGLE_PROCESS = World()


class TorchWorld(World):
    """The processes of a `torch.distributed` process group (None: the default one)."""

    def __init__(self, group: Any = None):
        import torch.distributed as dist

        self.dist, self.group = dist, group
        self.rank = dist.get_rank(group)
        self.ops = {
            "sum": dist.ReduceOp.SUM,
            "max": dist.ReduceOp.MAX,
            "min": dist.ReduceOp.MIN,
            "prod": dist.ReduceOp.PRODUCT,
        }

    def size(self) -> int:
        return self.dist.get_world_size(self.group)

    def all_reduce(self, x: Array, kind: str) -> Array:
        out, restore = reducible(x, kind)
        self.dist.all_reduce(torch_view(out), op=self.ops[kind], group=self.group)
        return restore(out)

    def all_gather(self, x: Array, axis: int) -> Array:
        world = self.size()
        part = np.ascontiguousarray(x).view(SAME_WIDTH[x.dtype.itemsize])
        stacked = np.empty((world, *x.shape), part.dtype)
        # (torch takes the stack as its ranks' parts one after another along axis 0)
        flat = stacked.reshape(world * x.shape[0], *x.shape[1:])
        self.dist.all_gather_single(torch_view(flat), torch_view(part), self.group)
        stacked = stacked.view(x.dtype)
        if axis == 0:
            return stacked.reshape(world * x.shape[0], *x.shape[1:])
        return np.concatenate(list(stacked), axis=axis)

    def reduce_scatter(self, x: Array, axis: int, kind: str) -> Array:
        world = self.size()
        shape = list(x.shape)
        shape[axis] //= world
        blocks = x.reshape(*x.shape[:axis], world, shape[axis], *x.shape[axis + 1 :])
        source, restore = reducible(np.moveaxis(blocks, axis, 0), kind)
        out = np.empty(shape, source.dtype)
        flat = source.reshape(world * shape[0], *shape[1:])
        self.dist.reduce_scatter_single(
            torch_view(out), torch_view(flat), op=self.ops[kind], group=self.group
        )
        return restore(out)


def torch_view(x: Array) -> Any:
    """`x` as a torch tensor sharing its memory (bf16 through its bits)."""
    import torch

    if is_bfloat16(x.dtype):
        return torch.from_numpy(x.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(x)


def reducible(x: Array, kind: str) -> tuple[Array, Callable[[Array], Array]]:
    """A contiguous array of a type gloo reduces, of `x`'s values, that the collective
    may write (never `x` itself), and the function back to `x`'s type."""
    dtype = x.dtype
    if dtype in WIDENED:
        return x.astype(WIDENED[dtype]), lambda out: out.astype(dtype)
    if dtype == np.uint64:
        bits = np.array(x, order="C").view(np.int64)
        if kind in ("max", "min"):
            bits ^= TOP_BIT
            return bits, lambda out: (out ^ TOP_BIT).view(dtype)
        return bits, lambda out: out.view(dtype)
    return np.array(x, order="C"), lambda out: out


def world_of(group: Any = None) -> World:
    """The world of `dvm.compile`'s `group`: a torch process group's, the default
    group's (`group` None, torch's default group initialized), else one process.
    Torch is imported only when it is already: a process that never imported
    `torch.distributed` has no process group."""
    dist = sys.modules.get("torch.distributed")
    if group is None and (dist is None or not dist.is_initialized()):
        return SINGLE_PROCESS
    try:
        return TorchWorld(group)
    except (ImportError, RuntimeError, ValueError) as e:
        raise CompileError(f"no process group for the collectives: {reason(e)}") from e


def run_collective(world: World, op: Operation, x: Array) -> Array:
    """One collective of `world` on this process's operand `x`."""
    from dvm.dialects.collectives import AllGatherOp, AllReduceOp, ReduceScatterOp
    from dvm.passes.errors import located

    try:
        if isinstance(op, AllReduceOp):
            return world.all_reduce(x, op.reduction)
        if isinstance(op, AllGatherOp):
            return world.all_gather(x, op.along)
        assert isinstance(op, ReduceScatterOp)
        return world.reduce_scatter(x, op.along, op.reduction)
    except RuntimeError as e:  # torch's DistBackendError and gloo's errors
        raise ExecutionError(
            f"{located(op)}: the collective failed on rank {world.rank} of a world of "
            f"{world.size()}: {reason(e)}"
        ) from e


def reason(e: Exception) -> str:
    """The first line of a torch error, without the source location gloo starts it with
    (`[.../pair.cc:553] Connection closed by peer ...`)."""
    text = str(e).strip()
    first = text.splitlines()[0] if text else type(e).__name__
    return SOURCE_LOCATION.sub("", first)
