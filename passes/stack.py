"""The `stack` pass: launch independent kernels together.

After `fuse`, a block holds `tensor.fusion` kernels. Kernels none of which
depends on another (directly or through any other op) are wrapped into one
`tensor.stack`, so they cost one launch instead of several (DVM's
stacking-based fusion):

- `parallel` (stacking in space): the kernels run side by side, the cores
  shared among them; good when each kernel alone is too small to fill the
  cores, as with the q, k and v projections of a BERT layer or the gates of
  an MMoE;
- `sequence` (stacking in time): the kernels run one after another inside
  one launch.

Why: with dynamic shapes many kernels are small, and launching each costs
more than running it.

How: an analysis of each block picks the sets (`independent_sets`) and
schedules the block so that each set's kernels are consecutive; then
`stack_kernels` wraps each set, at its first kernel, into a stack.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, Region
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from dvm.dialects import tensor as t
from dvm.dialects.expr import shape_attr
from dvm.dialects.walk import ops_within
from dvm.passes.blocks import dependencies, schedule
from dvm.passes.symbolic import SHAPES, shape_of


def independent_sets(block: Block, limit: int) -> list[list[t.FusionOp]]:
    """Greedy: each kernel joins the open set when it depends on none of its
    members; sets of one are dropped.

    Sets are numbered in the order they open, so an op depends on a member of the
    open set exactly when the latest set any op it depends on (directly or not)
    belongs to is the open one: one number per op, not all of its ancestors."""
    latest: dict[Operation, int] = {}
    """For each op, the latest set that it or an op it depends on belongs to (-1: none)."""
    sets: list[list[t.FusionOp]] = []
    current: list[t.FusionOp] = []
    for op in block.ops:
        reached = max((latest[d] for d in dependencies(op, block)), default=-1)
        if isinstance(op, t.FusionOp):
            if current and (len(current) >= limit or reached == len(sets)):
                sets.append(current)
                current = []
            current.append(op)
            reached = len(sets)
        latest[op] = reached
    sets.append(current)
    return [s for s in sets if len(s) > 1]


def stack_kernels(kernels: Sequence[t.FusionOp], mode: str) -> None:
    """Wrap `kernels`, a planned set (consecutive: the block is scheduled so), into one
    `tensor.stack` at the place of the first; its results replace the kernels' results
    outside it."""
    results = [r for k in kernels for r in k.results]
    stack = t.StackOp(mode, [r.type for r in results], Region(Block()))
    stack.attributes[SHAPES] = ArrayAttr([shape_attr(shape_of(r)) for r in results])
    Rewriter.insert_op(stack, InsertPoint.before(kernels[0]))
    body = stack.body.block
    for kernel in kernels:
        kernel.detach()
        body.add_op(kernel)
    body.add_op(t.YieldOp(*results))
    for old, new in zip(results, stack.results, strict=True):
        old.replace_uses_with_if(new, lambda use: use.operation.parent_op() is not stack)
        new.name_hint = old.name_hint


@dataclass(frozen=True)
class StackPass(ModulePass):
    """Wrap independent `tensor.fusion` kernels into `tensor.stack` launches."""

    name = "stack"

    mode: str = "parallel"
    """`parallel` (in space, over the cores) or `sequence` (in time)."""
    max_kernels: int = 8
    """The most kernels in one stack."""

    def __post_init__(self) -> None:
        if self.mode not in t.STACK_MODES:
            raise ValueError(f"stack: mode must be one of {t.STACK_MODES}, got {self.mode!r}")
        if self.max_kernels < 2:
            raise ValueError(f"stack: max-kernels must be at least 2, got {self.max_kernels}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        sets: list[list[t.FusionOp]] = []
        for block in blocks_to_stack(op):
            found = independent_sets(block, self.max_kernels)
            if found:
                schedule(block, found)
            sets += found
        for kernels in sets:  # (where they are: a rewrite walk would visit every op)
            stack_kernels(kernels, self.mode)


def blocks_to_stack(module: ModuleOp) -> list[Block]:
    """The blocks of every function, at any depth, but kernels' and stacks' bodies."""
    return [
        block
        for func in ops_within(module)
        if isinstance(func, FuncOp)
        for op in ops_within(func)
        for region in op.regions
        for block in region.blocks
        if not isinstance(op, t.FusionOp | t.StackOp)
    ]
