"""Rewriting a block's op list when passes turn groups of ops into one op."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import Block, Operation


def top_level(op: Operation, block: Block) -> Operation | None:
    """The ancestor of `op` that sits directly in `block` (None if outside it)."""
    current: Operation | None = op
    while current is not None and current.parent_block() is not block:
        current = current.parent_op()
    return current


Node = Operation | Sequence[Operation]


def rebuild_block(
    block: Block,
    groups: Sequence[Sequence[Operation]],
    emit: Callable[[Sequence[Operation]], None],
) -> None:
    """Re-emit `block` in dependency order: each op in no group is moved to
    the end in turn, and `emit(group)` appends the op that replaces a group.

    The order is topological (every value before its uses, counting uses
    inside nested regions) and otherwise keeps the original order.
    """
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
    for node in dependency_order(block, nodes):
        if isinstance(node, Operation):
            node.detach()
            block.add_op(node)
        else:
            emit(node)


def members(node: Node) -> Sequence[Operation]:
    return [node] if isinstance(node, Operation) else node


def dependency_order(block: Block, nodes: list[Node]) -> list[Node]:
    """Kahn's algorithm, taking the earliest ready node each time."""
    node_of = {id(op): i for i, n in enumerate(nodes) for op in members(n)}
    deps: list[set[int]] = [set() for _ in nodes]
    for i, n in enumerate(nodes):
        for op in members(n):
            for inner in op.walk():
                for v in inner.operands:
                    owner = v.owner
                    top = top_level(owner, block) if isinstance(owner, Operation) else None
                    if top is not None and node_of[id(top)] != i:
                        deps[i].add(node_of[id(top)])
    done: set[int] = set()
    ordered: list[Node] = []
    while len(ordered) < len(nodes):
        ready = next(i for i in range(len(nodes)) if i not in done and deps[i] <= done)
        done.add(ready)
        ordered.append(nodes[ready])
    return ordered
