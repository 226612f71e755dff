"""The ops inside an op, listed in one go.

xDSL's `Operation.walk` is a chain of generators, an op's, its regions' and its
blocks', each block's ops read through an iterator object: some 60 interpreted
bytecodes an op, and the passes walk a whole program a few dozen times in a compile.
`ops_within` follows each block's linked list of ops itself (a fifth of that), in the
same order. It is a list made before the caller looks at it: an op the caller adds or
erases afterwards does not change it (the passes that change the IR as they go list
the ops first).

An op isolated from above (a kernel, a fusion, a bytecode program) is replaced or
erased without a walk of what is inside it (`replace_isolated`, `erase_isolated`), and
an op that holds no ops is appended to a block by linking it there (`append_op`)."""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.ir import Attribute, Block, Operation
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


def append_op(block: Block, op: Operation) -> None:
    """`block.add_op(op)`: xDSL's runs some 100 interpreted bytecodes an op, its checks
    among them (that `op` is in no block, and does not hold `block`: it cannot when it
    holds no ops). An op in no block and without regions is linked at the end of the
    block's list of ops here, about a third of that; any other goes through `add_op`."""
    if op.regions or op.parent is not None:
        block.add_op(op)
        return
    last = block._last_op  # pyright: ignore[reportPrivateUsage]
    op.parent = block
    op._prev_op, op._next_op = last, None  # pyright: ignore[reportPrivateUsage]
    if last is None:
        block._first_op = op  # pyright: ignore[reportPrivateUsage]
    else:
        last._next_op = op  # pyright: ignore[reportPrivateUsage]
    block._last_op = op  # pyright: ignore[reportPrivateUsage]


def block_of(ops: Iterable[Operation], arg_types: Iterable[Attribute] = ()) -> Block:
    """`Block(ops, arg_types=arg_types)`, its ops appended by `append_op`."""
    block = Block(arg_types=arg_types)
    for op in ops:
        append_op(block, op)
    return block
