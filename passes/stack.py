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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from dvm.dialects import tensor as t
from dvm.passes.blocks import dependencies, rebuild_block
from dvm.passes.symbolic import SHAPES, shape_attr, shape_of


def independent_sets(block: Block, limit: int) -> list[list[Operation]]:
    """Greedy: each kernel joins the open set when it depends on none of its
    members; sets of one are dropped.

    Sets are numbered in the order they open, so an op depends on a member of the
    open set exactly when the latest set any op it depends on (directly or not)
    belongs to is the open one: one number per op, not all of its ancestors."""
    latest: dict[Operation, int] = {}
    """For each op, the latest set that it or an op it depends on belongs to (-1: none)."""
    sets: list[list[Operation]] = []
    current: list[Operation] = []
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


def emit_stack(block: Block, kernels: Sequence[Operation], mode: str) -> None:
    results: list[SSAValue] = [r for k in kernels for r in k.results]
    body = Block()
    for k in kernels:
        k.detach()
        body.add_op(k)
    body.add_op(t.YieldOp(*results))
    stack = t.StackOp(mode, [r.type for r in results], Region(body))
    stack.attributes[SHAPES] = ArrayAttr([shape_attr(shape_of(r)) for r in results])
    block.add_op(stack)
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
        for func in op.walk():
            if not isinstance(func, FuncOp):
                continue
            for block in [b for o in func.walk() for r in o.regions for b in r.blocks]:
                if isinstance(block.parent_op(), t.FusionOp | t.StackOp):
                    continue
                self.stack_block(block)

    def stack_block(self, block: Block) -> None:
        sets = independent_sets(block, self.max_kernels)
        if sets:
            rebuild_block(block, sets, lambda kernels: emit_stack(block, kernels, self.mode))
