"""Ordering a block's ops when passes turn groups of ops into one op.

A pass that replaces a group of ops by one op (a kernel, a stack) first
*schedules* the block: it orders the ops so that each group's ops are
consecutive. A rewrite pattern can then replace the group, at its first op,
without moving anything else."""

from __future__ import annotations

import heapq
import operator
from collections.abc import Sequence
from functools import cache

from xdsl.ir import Block, Operation
from xdsl.traits import IsolatedFromAbove

from dvm.dialects.walk import append_op, block_ops, ops_within


def top_level(op: Operation, block: Block) -> Operation | None:
    """The ancestor of `op` that sits directly in `block` (None if outside it)."""
    current: Operation | None = op
    while current is not None and current.parent_block() is not block:
        current = current.parent_op()
    return current


def dependencies(op: Operation, block: Block) -> set[Operation]:
    """The ops of `block` whose results `op` (or an op inside it) uses. The ops inside
    an op isolated from above (a kernel) use only values made inside it: only its own
    operands are looked at, not its body (most of a program's ops)."""
    found: set[Operation] = set()
    for inner in (op,) if not op.regions or isolated(type(op)) else ops_within(op):
        for v in inner.operands:
            owner = v.owner
            top = top_level(owner, block) if isinstance(owner, Operation) else None
            if top is not None and top is not op:
                found.add(top)
    return found


@cache
def isolated(kind: type[Operation]) -> bool:
    """Whether ops of `kind` are isolated from above (their bodies use no outer value)."""
    return kind.has_trait(IsolatedFromAbove)


Node = Operation | Sequence[Operation]


def schedule(block: Block, groups: Sequence[Sequence[Operation]]) -> None:
    """Order `block` so that each group's ops are consecutive (in their order), where
    the op that replaces the group may stand: every value is defined before its uses
    (counting uses inside nested regions), with each group as one op, and otherwise
    the original order is kept."""
    order = [
        op for node in dependency_order(block, nodes_of(block, groups)) for op in members(node)
    ]
    now = block_ops(block)
    if len(order) == len(now) and all(map(operator.is_, order, now)):
        return  # (in that order already: nothing moves)
    for op in order:
        op.detach()
        append_op(block, op)


def nodes_of(block: Block, groups: Sequence[Sequence[Operation]]) -> list[Node]:
    """The ops of `block`, each group as one node at the place of its first op."""
    in_group = {id(op): g for g in groups for op in g}
    nodes: list[Node] = []
    seen: set[int] = set()
    for op in block.ops:
        g = in_group.get(id(op))
        if g is None:
            nodes.append(op)
        elif id(g) not in seen:
            seen.add(id(g))
            nodes.append(g)
    return nodes


def members(node: Node) -> Sequence[Operation]:
    return [node] if isinstance(node, Operation) else node


def dependency_order(block: Block, nodes: list[Node]) -> list[Node]:
    """Kahn's algorithm, taking the earliest ready node each time (a heap of them)."""
    node_of = {id(op): i for i, n in enumerate(nodes) for op in members(n)}
    users: list[set[int]] = [set() for _ in nodes]
    waiting = [0] * len(nodes)
    """How many nodes each one still waits for."""
    for i, n in enumerate(nodes):
        deps = {node_of[id(d)] for op in members(n) for d in dependencies(op, block)} - {i}
        waiting[i] = len(deps)
        for d in deps:
            users[d].add(i)
    ready = [i for i, count in enumerate(waiting) if count == 0]
    ordered: list[Node] = []
    while ready:
        i = heapq.heappop(ready)
        ordered.append(nodes[i])
        for user in users[i]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, user)
    assert len(ordered) == len(nodes), "the nodes depend on each other in a cycle"
    return ordered
