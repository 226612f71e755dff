"""`sink-into-branches`: an elementwise consumer of an `scf.if` result moved into
every branch, so that each branch fuses it with the op that made the result.

    %y = scf.if %c { %t = add %x, 1; yield %t } else { %t = sub %x, 1; yield %t }
    %r = add %y, %x

becomes

    %r = scf.if %c { %t = add %x, 1; %r = add %t, %x; yield %r }
         else      { %t = sub %x, 1; %r = add %t, %x; yield %r }

and `fuse` makes each branch one kernel: one launch and one pass over memory
where there were two (the branch's kernel, then the consumer's).

The rule. An op `c` sinks into an `scf.if` `i` when

- `c` is elementwise (`ELEMENTWISE_KINDS`: unary, binary, convert, select,
  clamp) and sits in the block of `i`;
- every other operand of `c` is defined before `i` (so it is visible inside
  the branches); an operand defined between `i` and `c` keeps `c` where it is;
- in every branch, each result of `i` that `c` reads is yielded by an op the
  consumer can fuse with: a vector or matmul op of that branch (not one that is
  a kernel of its own, such as a concat), or an inner `scf.if` whose branches
  all yield such an op (the consumer then sinks into it too). A branch that
  yields a value defined outside it (an argument passed through) keeps `c`
  out: sinking would give that branch a kernel for `c` alone and could break
  `c`'s fusion with its own consumers after the `if`.

What is duplicated is `c` alone, one copy per branch; its operands are not.
The `if` yields `c`'s result in its place; a result of `i` that `c` read stays
yielded while other ops still read it (a branch's kernel then writes both), and
is dropped when `c` was its last reader. Sinking repeats, so a chain of
elementwise ops after an `if` moves in whole. `scf.for` and `scf.while` are
left alone: their bodies run many times, and what they carry is not a branch.

It runs after `symbolic-shapes` and before `fuse`. The shapes are inferred again
when a move could change them; a consumer that broadcasts nothing, read from
branches that yield the `if`'s own shape, keeps its shape, which the new `if` takes.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from dvm.dialects.walk import ops_within
from dvm.passes.concat_sinking import infer_shapes_again
from dvm.passes.domain import ELEMENTWISE_KINDS, MATMULS, OWN_KERNEL_KINDS, VECTOR, OpSet
from dvm.passes.symbolic import GUARDS, SHAPE, SHAPES, shape_of
from dvm.passes.symbolic_shapes import branches, yielded

FUSIBLE_KINDS = OpSet(*VECTOR, *MATMULS)
"""Ops a sunk consumer may fuse with (but for `OWN_KERNEL_KINDS`)."""


def fusible_yield(value: SSAValue, block: Block) -> bool:
    """Whether `value`, yielded by `block`, comes from an op of `block` that an
    elementwise consumer fuses with (through inner `if`s)."""
    owner = value.owner
    if not isinstance(owner, Operation) or owner.parent_block() is not block:
        return False
    if isinstance(owner, scf.IfOp):
        assert isinstance(value, OpResult)
        inner = branches(owner)
        return len(inner) == 2 and all(fusible_yield(yielded(b)[value.index], b) for b in inner)
    return owner in FUSIBLE_KINDS and owner not in OWN_KERNEL_KINDS


def defined_before(value: SSAValue, op: Operation) -> bool:
    """Whether `value` is visible at `op` (a value of `op`'s block defined before it,
    or one of an enclosing block); `value` is visible somewhere in `op`'s block."""
    owner = value.owner
    if not isinstance(owner, Operation) or owner.parent_block() is not op.parent_block():
        return True
    return owner.is_before_in_block(op)


def sinks_into(consumer: Operation, op: scf.IfOp) -> bool:
    """Whether the rule (see the module's doc) moves `consumer` into `op`'s branches."""
    if consumer not in ELEMENTWISE_KINDS or consumer.parent_block() is not op.parent_block():
        return False
    inner = branches(op)
    if len(inner) != 2 or len(consumer.results) != 1:
        return False
    for v in consumer.operands:
        if isinstance(v, OpResult) and v.op is op:
            if not all(fusible_yield(yielded(b)[v.index], b) for b in inner):
                return False
        elif not defined_before(v, op):
            return False
    return True


def sink_first_consumer(op: scf.IfOp) -> tuple[scf.IfOp, bool] | None:
    """The `if` that replaces `op` once the first consumer of its results that the rule
    allows moved into its branches, and whether every shape stayed as inferring them
    again would make it (`annotated_in_place`); None when no consumer sinks."""
    block = op.parent_block()
    if block is None:
        return None
    users = {use.operation for r in op.results for use in r.uses}
    candidates = sorted(
        (u for u in users if u.parent_block() is block), key=block.get_operation_index
    )
    consumer = next((u for u in candidates if sinks_into(u, op)), None)
    if consumer is None:
        return None
    settled = annotated_in_place(consumer, op)
    new = sink(consumer, op, PatternRewriter(op))
    if settled:
        new.attributes[SHAPE] = consumer.attributes[SHAPE]
    return new, settled


def annotated_in_place(consumer: Operation, op: scf.IfOp) -> bool:
    """Whether sinking `consumer` into `op` leaves every shape and guard as inferring
    them again would make, once the new `if` takes `consumer`'s shape: `consumer` is
    the `if`'s only reader, broadcasts nothing (so its copies make no guard), and every
    branch yields exactly the shape of the `if` result it reads (so joining the
    branches makes no fresh symbol)."""
    if SHAPE not in consumer.attributes or any(
        use.operation is not consumer for r in op.results for use in r.uses
    ):
        return False
    shape = shape_of(consumer.results[0])
    if any(shape_of(v) != shape for v in consumer.operands):
        return False
    read = [v for v in consumer.operands if isinstance(v, OpResult) and v.owner is op]
    return all(shape_of(yielded(b)[v.index]) == shape for b in branches(op) for v in read)


def sink(consumer: Operation, op: scf.IfOp, rewriter: PatternRewriter) -> scf.IfOp:
    """Clone `consumer` into each branch, reading what the branch yields for `op`'s
    results, and replace `op` by an `if` that also yields it (and no longer yields
    the results only `consumer` read). Returns the new `if`."""
    kept = [r for r in op.results if any(use.operation is not consumer for use in r.uses)]
    for block in branches(op):
        terminator = block.last_op
        assert isinstance(terminator, scf.YieldOp)
        values = yielded(block)
        clone = consumer.clone({r: values[r.index] for r in op.results})
        rewriter.insert(clone, InsertPoint.before(terminator))
        outputs = [values[r.index] for r in kept] + [clone.results[0]]
        rewriter.replace(terminator, scf.YieldOp(*outputs))
    attributes = {k: v for k, v in op.attributes.items() if k not in (SHAPE, SHAPES)}
    regions = [op.detach_region(r) for r in list(op.regions)]
    new = scf.IfOp(
        op.cond,
        [r.type for r in kept] + [consumer.results[0].type],
        regions[0],
        regions[1],
        attr_dict=attributes,
    )
    rewriter.insert(new, InsertPoint.before(op))
    for old, value in zip(kept, new.results, strict=False):
        old.replace_all_uses_with(value)
    consumer.results[0].replace_all_uses_with(new.results[-1])
    rewriter.erase(consumer)
    rewriter.erase(op)
    return new


@dataclass(frozen=True)
class SinkIntoBranchesPass(ModulePass):
    """Move elementwise consumers of `scf.if` results into the branches that make
    them (the rule is in the module's doc), for `fuse` to fuse them there."""

    name = "sink-into-branches"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in ops_within(op):
            if isinstance(func, FuncOp):
                sink_in_function(func)


def sink_in_function(func: FuncOp) -> None:
    """Sink what the rule allows into every `if` of `func`, outer `if`s first, each
    until none of its consumers sinks (a consumer sunk into an outer `if` may then sink
    into an inner one). Visiting the `if`s themselves, not every op as a rewrite walker
    would: with one `if`, one round is the fixed point; with more, rounds repeat until
    one moves nothing, as the walker's would."""
    ifs = [o for o in ops_within(func) if type(o) is scf.IfOp]
    moved = shapes_changed = False
    while ifs:
        sank = False
        for if_op in ifs:
            while (step := sink_first_consumer(if_op)) is not None:
                if_op, settled = step
                sank, shapes_changed = True, shapes_changed or not settled
        moved |= sank
        again = sank and len(ifs) > 1
        ifs = [o for o in ops_within(func) if type(o) is scf.IfOp] if again else []
    if moved and shapes_changed and GUARDS in func.attributes:
        infer_shapes_again(func)
