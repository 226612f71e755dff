"""`expand-arg-reductions`: each argmax and argmin as reductions that kernels hold
(and a small top_k as rounds of them).

An argmax has no instruction of its own: it is a max over its axis, a compare
of the row with it (or `isnan`), an iota of the positions, a select and a min
of the indices (`dvm.passes.scans.expand_arg_reduction`), which `fuse` then
fuses with the argmax's producers and consumers as any reductions (a softmax
and its argmax are one kernel). It runs after `symbolic-shapes` (the new ops
carry the shapes it gave the argmax) and before `fuse`; an argmax left as it is
runs on the host, between kernels. A top_k with k up to `TOP_K_ROUNDS` becomes k
rounds of an argmax over the elements not taken yet (`expand_top_k`), which
beat its own kernel's merge on a router's top-2; a larger k stays that kernel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from dvm.dialects import tensor as t
from dvm.dialects.scans import ArgReduceOp, TopKOp
from dvm.dialects.walk import ops_within
from dvm.passes.domain import OpSet
from dvm.passes.scans import TOP_K_ROUNDS, expand_arg_reduction, expand_top_k
from dvm.passes.symbolic_shapes import ensure_shapes


class ExpandArgReduction(RewritePattern):
    """An argmax or argmin outside kernels, as reductions; a top_k with k up to
    `TOP_K_ROUNDS`, as k rounds of them."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op.parent_op(), t.KernelBodyOp):
            return
        if isinstance(op, ArgReduceOp):
            new, result = expand_arg_reduction(op)
            rewriter.replace(op, new, [result])
        elif isinstance(op, TopKOp) and 0 < op.count <= TOP_K_ROUNDS:
            new, results = expand_top_k(op)
            rewriter.replace(op, new, results)


@dataclass(frozen=True)
class ExpandArgReductionsPass(ModulePass):
    """Rewrite every argmax and argmin as reductions that kernels hold."""

    name = "expand-arg-reductions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        expandable = False
        for inner in ops_within(op):
            if inner in FUNCS:
                func = cast(FuncOp, inner)
                if func.body.blocks:
                    ensure_shapes(func)
            elif inner in EXPANDED:
                expandable = True
        if expandable:  # (the rewrite walker costs more than the walk: most programs have none)
            walker = PatternRewriteWalker(ExpandArgReduction(), apply_recursively=False)
            walker.rewrite_module(op)


FUNCS = OpSet(FuncOp)
EXPANDED = OpSet(ArgReduceOp, TopKOp)
"""What `ExpandArgReduction` may rewrite."""
