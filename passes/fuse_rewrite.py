"""What replaces each group `fuse` planned: a `tensor.fusion` of its ops, or for a
guarded choice a `tensor.choice` between the fused kernel and the two apart.

A kernel's ops move into it; a choice's kernels repeat them, so they are cloned."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import ArrayAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from dvm.dialects import tensor as t
from dvm.dialects.attrs import i64_attr
from dvm.dialects.expr import ConditionAttr, shape_attr
from dvm.dialects.walk import append_op, block_ops
from dvm.passes.domain import Domain
from dvm.passes.kernel_inputs import is_splat_constant
from dvm.passes.symbolic import SHAPE, SHAPES, shape_of

ASSUME = "dvm.assume"
"""On a kernel inside a guarded choice: the size equalities it may assume."""
BOUNDED = "dvm.bounded"
"""On a kernel inside a guarded choice: the sizes it may assume bounded (`n <= 512`)."""


@dataclass
class KernelPlan:
    """A `tensor.fusion` to build of `ops` (in block order; moved into it, or cloned for
    a choice) over `domain`, reading `inputs` and yielding `outputs`."""

    ops: list[Operation]
    kind: str
    domain: Domain
    inputs: list[SSAValue]
    outputs: list[SSAValue]


@dataclass
class ChoicePlan:
    """A guarded `tensor.choice`: the `fused` kernel where the sizes meet the conditions
    (`assumed` equalities, `bounded` sizes), `first` and `second` apart otherwise."""

    fused: KernelPlan
    first: KernelPlan
    second: KernelPlan
    assumed: list[ConditionAttr]
    bounded: list[ConditionAttr]

    @property
    def ops(self) -> list[Operation]:
        return self.fused.ops

    @property
    def outputs(self) -> list[SSAValue]:
        return self.fused.outputs


Plan = KernelPlan | ChoicePlan


def replace_groups(plans: Sequence[Sequence[Plan]], blocks: Sequence[Block]) -> None:
    """Replace each planned group, at its first op (the block is scheduled so that its
    ops are consecutive), by its `tensor.fusion` or guarded `tensor.choice`; then erase
    each constant of `blocks` that no op uses any more (its users' kernels copied it in).

    `plans` holds each of `blocks`' plans in block order, nested blocks first. A block's
    groups are replaced from the last: a group before the groups whose results it reads
    (and a nested block's before its outer block's), so the values its plan names are
    still in place (the later replacement of the producers' results reaches the new
    op's operands as any other use)."""
    for block_plans in plans:
        for plan in reversed(block_plans):
            replace_group(plan)
    for block in blocks:
        for op in reversed(block_ops(block)):
            if isinstance(op, arith.ConstantOp) and op.result.first_use is None:
                Rewriter.erase_op(op)


def replace_group(plan: Plan) -> None:
    if isinstance(plan, KernelPlan) and not any(member.regions for member in plan.ops):
        return move_into_kernel(plan)
    replacement = build_kernel(plan) if isinstance(plan, KernelPlan) else build_choice(plan)
    annotate_results(replacement, plan.outputs)
    Rewriter.insert_op(replacement, InsertPoint.before(plan.ops[0]))
    for old, new in zip(plan.outputs, replacement.results, strict=True):
        old.replace_all_uses_with(new)
        new.name_hint = old.name_hint
    for member in reversed(plan.ops):
        Rewriter.erase_op(member, safe_erase=False)


def move_into_kernel(plan: KernelPlan) -> None:
    """Replace the plan's ops by their kernel, moving them into it: what `build_kernel`
    and the erasure of the ops make, without the clones and the erasure (a guarded
    choice's kernels clone them: they repeat them). Each op's operands are mapped to
    the kernel's; so none may hold ops of its own, whose operands `clone` would map."""
    body = Block(arg_types=[v.type for v in plan.inputs])
    mapping = kernel_arguments(plan, body)
    output_types = [v.type for v in plan.outputs]
    kernel = t.FusionOp(
        plan.kind, plan.inputs, output_types, Region(body), describe_domain(plan.domain)
    )
    annotate_results(kernel, plan.outputs)
    Rewriter.insert_op(kernel, InsertPoint.before(plan.ops[0]))
    for op in plan.ops:
        copy_constants(op, body, mapping)
        op.detach()
        op.operands = [mapping.get(v, v) for v in op.operands]
        append_op(body, op)
    body.add_op(t.YieldOp(*plan.outputs))
    for old, new in zip(plan.outputs, kernel.results, strict=True):
        for use in [u for u in old.uses if not kernel.is_ancestor(u.operation)]:
            use.operation.operands[use.index] = new
        new.name_hint = old.name_hint


def build_choice(plan: ChoicePlan) -> t.ChoiceOp:
    fused = build_kernel(plan.fused)
    for key, conditions in ((ASSUME, plan.assumed), (BOUNDED, plan.bounded)):
        if conditions:
            fused.attributes[key] = ArrayAttr(conditions)
    annotate_results(fused, plan.outputs)  # the shapes last, where symbolic-shapes puts them
    apart = [build_kernel(p) for p in (plan.first, plan.second)]
    apart_results = {
        v: r
        for k, p in zip(apart, (plan.first, plan.second), strict=True)
        for v, r in zip(p.outputs, k.results, strict=True)
    }
    # One apart kernel may use what the other computes: take it from that kernel
    # (the uses of the old value are replaced with the choice's result, which inside
    # the choice would be a use before definition), and put the producer first.
    for kernel in apart:
        for i, v in enumerate(kernel.operands):
            if v in apart_results:
                kernel.operands[i] = apart_results[v]
    if any(r in apart[0].operands for r in apart[1].results):
        apart.reverse()
    then_body = Block([fused, t.YieldOp(*fused.results)])
    else_body = Block([*apart, t.YieldOp(*(apart_results[v] for v in plan.outputs))])
    return t.ChoiceOp(
        [*plan.assumed, *plan.bounded],
        [v.type for v in plan.outputs],
        Region(then_body),
        Region(else_body),
    )


def build_kernel(plan: KernelPlan) -> t.FusionOp:
    """A fusion op computing the plan's outputs from clones of its ops."""
    body = Block(arg_types=[v.type for v in plan.inputs])
    mapping = kernel_arguments(plan, body)
    for op in plan.ops:
        copy_constants(op, body, mapping)
        body.add_op(op.clone(value_mapper=mapping))
    body.add_op(t.YieldOp(*(mapping[v] for v in plan.outputs)))
    kernel = t.FusionOp(
        plan.kind,
        plan.inputs,
        [v.type for v in plan.outputs],
        Region(body),
        describe_domain(plan.domain),
    )
    annotate_results(kernel, plan.outputs)
    for source, result in zip(plan.outputs, kernel.results, strict=True):
        result.name_hint = source.name_hint
    return kernel


def kernel_arguments(plan: KernelPlan, body: Block) -> dict[SSAValue, SSAValue]:
    """Each input of the plan's kernel, to the argument of `body` that holds it."""
    mapping: dict[SSAValue, SSAValue] = dict(zip(plan.inputs, body.args, strict=True))
    for v, arg in mapping.items():
        arg.name_hint = v.name_hint
    return mapping


def copy_constants(op: Operation, body: Block, mapping: dict[SSAValue, SSAValue]) -> None:
    """Copy into `body` each splat constant `op` reads that `mapping` does not map."""
    for v in op.operands:
        owner = v.owner
        if v not in mapping and isinstance(owner, Operation) and is_splat_constant(owner):
            constant = owner.clone()
            append_op(body, constant)
            mapping[v] = constant.results[0]


def describe_domain(domain: Domain) -> dict[str, Attribute]:
    """What a student sees on a kernel: its iteration domain and reduced axes."""
    attrs: dict[str, Attribute] = {"dvm.domain": shape_attr(domain.sizes)}
    if domain.reduced:
        attrs["dvm.reduced"] = ArrayAttr([i64_attr(a) for a in sorted(domain.reduced)])
    return attrs


def annotate_results(op: Operation, sources: Sequence[SSAValue]) -> None:
    """Give `op`'s results the shapes of `sources`: one `dvm.shape`, or `dvm.shapes`
    for several (never both: `shape_of` reads `dvm.shape` first)."""
    shapes = [shape_attr(shape_of(v)) for v in sources]
    for key in (SHAPE, SHAPES):
        op.attributes.pop(key, None)
    if len(shapes) == 1:
        op.attributes[SHAPE] = shapes[0]
    elif shapes:
        op.attributes[SHAPES] = ArrayAttr(shapes)
