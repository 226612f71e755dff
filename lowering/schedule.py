"""Ordering a fused kernel's ops so that fewer tiles are alive at once.

A vector kernel's tiles (and a matmul epilogue's output tiles) are as large as
memory allows for the bytes its live tiles hold per element
(`tensor_to_tile.live_bytes`), and which tiles are alive at once follows the
order of the fusion's ops. A frontend writes them in its source's order:
`0.5 * x * (1 + tanh(...))` makes `0.5 * x` first and holds it beside the whole
chain that follows, a tile more than the same function written
`x * (1 + tanh(...)) * 0.5` needs, so every tile is smaller and the kernel runs
more of them. `schedule` moves each elementwise op whose first user comes later
to just before that user, where that lowers the live bytes. Each op reads the
same operands, so it makes the same values; only a matmul's last bits follow its
tiles' sizes, as they do at any other tiling (BLAS sums in its panels' order).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import Block, Operation

from dvm.passes.domain import ELEMENTWISE_KINDS


def schedule(
    ops: Sequence[Operation], cost: Callable[[list[Operation]], int], current: int
) -> list[Operation] | None:
    """A new order of `ops` (a block's, its terminator left out) of lower `cost` than
    theirs, `current`, or None if none was found. From the last op to the first, an
    elementwise op whose first user is not next is tried just before that user,
    together with the ops that feed only it (a chain made early for a late user moves
    as one: alone, its last op would keep the one before alive instead); a move is
    kept when it lowers the cost. A group moves down to its first outside user, after
    the ops that define its operands: the order stays one that defines each value
    before its uses."""
    order, best, found = list(ops), current, False
    position = {o: k for k, o in enumerate(order)}
    for op in reversed(ops):
        if op not in ELEMENTWISE_KINDS or op.regions:
            continue
        i, users = position[op], users_of(op)
        j = min((position.get(u, len(order)) for u in users), default=0)
        if all(not o.operands for o in order[i + 1 : j]):
            continue  # its first user is next, or only constants come between
        group = feeding_only(op)
        rest = [o for o in order if o not in group]
        at = next((k for k, o in enumerate(rest) if o in users), len(rest))
        trial = [*rest[:at], *(o for o in order if o in group), *rest[at:]]
        trial_cost = cost(trial)
        if trial_cost < best:
            order, best, found = trial, trial_cost, True
            position = {o: k for k, o in enumerate(order)}
    return order if found else None


def feeding_only(op: Operation) -> set[Operation]:
    """`op` and the elementwise ops of its block whose results only it uses, directly
    or through others of them."""
    block = op.parent_block()
    group = {op}
    pending = [op]
    while pending:
        for value in pending.pop().operands:
            producer = value.owner
            if (
                isinstance(producer, Operation)
                and producer not in group
                and producer in ELEMENTWISE_KINDS
                and not producer.regions
                and producer.parent_block() is block
                and all(use.operation in group for r in producer.results for use in r.uses)
            ):
                group.add(producer)
                pending.append(producer)
    return group


def users_of(op: Operation) -> set[Operation]:
    """The ops of `op`'s block that use one of its results (or hold such a use in
    their regions)."""
    block = op.parent_block()
    users: set[Operation] = set()
    for result in op.results:
        for use in result.uses:
            user: Operation | None = use.operation
            while user is not None and user.parent_block() is not block:
                user = user.parent_op()
            if user is not None:
                users.add(user)
    return users


def reorder(block: Block, order: Sequence[Operation]) -> None:
    """Put `order` (every op of `block` but its terminator) in that order."""
    terminator = block.last_op
    assert terminator is not None
    for op in order:
        op.detach()
        block.insert_op_before(op, terminator)
