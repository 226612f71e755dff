"""The ops inside an op, listed in one go.

xDSL's `Operation.walk` is a chain of generators, an op's, its regions' and its
blocks', each block's ops read through an iterator object: some 60 interpreted
bytecodes an op, and the passes walk a whole program a few dozen times in a compile.
`ops_within` follows each block's linked list of ops itself (a fifth of that), in the
same order. It is a list made before the caller looks at it: an op the caller adds or
erases afterwards does not change it (the passes that change the IR as they go list
the ops first).

An op isolated from above (a kernel, a fusion, a bytecode program) is replaced or
erased without a walk of what is inside it (`replace_isolated`, `erase_isolated`)."""

from __future__ import annotations

from xdsl.ir import Block, Operation
from xdsl.traits import IsolatedFromAbove


def ops_within(op: Operation) -> list[Operation]:
    """`op` and every op nested in it, in `op.walk()`'s order: an op before the ops in
    its regions, regions and blocks in order."""
    found: list[Operation] = []
    _add_nested(op, found)
    return found


def ops_inside(op: Operation) -> list[Operation]:
    """Every op nested in `op` (not `op` itself), in `ops_within`'s order."""
    found: list[Operation] = []
    _add_nested(op, found)
    del found[0]
    return found


def _add_nested(op: Operation, found: list[Operation]) -> None:
    # (the linked lists' own fields: xDSL's properties over them cost a frame a step)
    found.append(op)
    for region in op.regions:
        block = region._first_block  # pyright: ignore[reportPrivateUsage]
        while block is not None:
            inner = block._first_op  # pyright: ignore[reportPrivateUsage]
            while inner is not None:
                if inner.regions:
                    _add_nested(inner, found)
                else:
                    found.append(inner)
                inner = inner._next_op  # pyright: ignore[reportPrivateUsage]
            block = block._next_block  # pyright: ignore[reportPrivateUsage]


def block_ops(block: Block) -> list[Operation]:
    """The ops of `block`, in order, read off its linked list: xDSL's iterator over
    `block.ops` runs two Python calls an op (its `__next__`, then the op's `next_op`).
    A list made before the caller looks at it, as `ops_within`'s."""
    found: list[Operation] = []
    op = block._first_op  # pyright: ignore[reportPrivateUsage]
    while op is not None:
        found.append(op)
        op = op._next_op  # pyright: ignore[reportPrivateUsage]
    return found


def replace_isolated(op: Operation, replacement: Operation) -> None:
    """`Rewriter.replace_op(op, replacement)` for an op isolated from above: the uses
    of its results go to the replacement's (named as `replace_op` names them), and the
    op leaves its block with its own operands' uses dropped. xDSL's erasure walks every
    op inside it to drop theirs, which no value outside it holds."""
    block = op.parent_block()
    assert block is not None and op.has_trait(IsolatedFromAbove)
    block.insert_op_after(replacement, op)
    for old, new in zip(op.results, replacement.results, strict=True):
        old.replace_all_uses_with(new)
        if new.name_hint is None:
            new.name_hint = op.results[0].name_hint
    erase_isolated(op)


def erase_isolated(op: Operation) -> None:
    """`Rewriter.erase_op(op)` for an op isolated from above whose results are unused
    (see `replace_isolated`)."""
    block = op.parent_block()
    assert block is not None and op.has_trait(IsolatedFromAbove)
    if any(result.first_use is not None for result in op.results):
        raise ValueError(f"erasing {op.name}, whose results are still used")
    op.operands = ()
    block.detach_op(op)
