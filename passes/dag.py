"""A DAG whose nodes merge, kept acyclic, with a topological order kept up to date.

`fuse` asks, for each pair of groups it might merge, whether a path leaves one and
re-enters the other through a third node (merging them would make a kernel that
depends on itself). Walking the whole graph for each question makes fusion
quadratic in program size. Here every node has a position in a topological order;
a path from `a` to `b` only visits nodes positioned between them, so a search is
bounded by that range, and most questions (a producer and its consumer) visit
nothing. A merge reorders only the nodes in that range (Pearce and Kelly's online
topological order, as XLA's `GraphCycles` keeps it for fusion).
"""

from __future__ import annotations

from collections.abc import Iterable


class MergeableDag:
    """Nodes 0..count-1, given in a topological order; merged nodes are represented
    by one of them (`find`)."""

    def __init__(self, count: int, edges: Iterable[tuple[int, int]]):
        self.position = list(range(count))
        """Each representative's place in the topological order."""
        self.parent = list(range(count))
        self.succ: list[set[int]] = [set() for _ in range(count)]
        self.pred: list[set[int]] = [set() for _ in range(count)]
        for a, b in edges:
            if a != b:
                self.succ[a].add(b)
                self.pred[b].add(a)
        self.visits = 0
        """Nodes the searches visited so far: what the questions cost."""

    def find(self, node: int) -> int:
        """The node that stands for `node` and everything merged with it."""
        root = node
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[node] != root:
            self.parent[node], node = root, self.parent[node]
        return root

    def would_cycle(self, a: int, b: int) -> bool:
        """Whether merging the nodes `a` and `b` would close a cycle: a path from one to
        the other through some third node."""
        first, last = sorted((a, b), key=self.position.__getitem__)
        return self.between(first, last) is None

    def merge(self, a: int, b: int) -> int:
        """Merge `a` and `b` (which must not close a cycle); returns the node that
        stands for both. Of the nodes between them in the order, those the first
        reaches move after the merged node, those that reach the last before it."""
        first, last = sorted((a, b), key=self.position.__getitem__)
        after = self.between(first, last)
        assert after is not None, "the merge would close a cycle"
        before = self.reaching(last, first)
        places = sorted(self.position[n] for n in (*before, first, last, *after))
        kept, gone = sorted((a, b), key=self.degree, reverse=True)  # move the fewer edges
        by_place = self.position.__getitem__
        ordered = [*sorted(before, key=by_place), kept, *sorted(after, key=by_place)]
        places = places[: len(before) + 1] + places[len(before) + 2 :]  # one place spare
        for node, place in zip(ordered, places, strict=True):
            self.position[node] = place
        self.absorb(kept, gone)
        return kept

    def degree(self, node: int) -> int:
        return len(self.succ[node]) + len(self.pred[node])

    def between(self, first: int, last: int) -> set[int] | None:
        """The nodes that paths from `first` reach before `last` in the order (not
        through `last`); None if one of them leads on to `last`."""
        bound = self.position[last]
        found = {n for n in self.succ[first] if n != last and self.position[n] < bound}
        stack = list(found)
        while stack:
            node = stack.pop()
            self.visits += 1
            if last in self.succ[node]:
                return None
            for n in self.succ[node]:
                if n not in found and self.position[n] < bound:
                    found.add(n)
                    stack.append(n)
        return found

    def reaching(self, last: int, first: int) -> set[int]:
        """The nodes after `first` in the order with a path to `last` (not through
        `first`)."""
        bound = self.position[first]
        found = {n for n in self.pred[last] if n != first and self.position[n] > bound}
        stack = list(found)
        while stack:
            node = stack.pop()
            self.visits += 1
            for n in self.pred[node]:
                if n not in found and self.position[n] > bound:
                    found.add(n)
                    stack.append(n)
        return found

    def indirect(self, nodes: list[int]) -> list[int]:
        """For each of `nodes` (representatives), the set of `nodes` (bit k standing for
        `nodes[k]`) that it reaches, or that reach it, through some third node: those
        `would_cycle` refuses to merge it with, for all pairs at once. Each node's
        descendants (then ancestors) among `nodes` are made from its successors'
        (predecessors'), in topological order, and dropped once all who need them have
        read them."""
        bits = {n: 1 << k for k, n in enumerate(nodes)}
        found = dict.fromkeys(nodes, 0)
        order = sorted(
            (n for n in range(len(self.parent)) if self.parent[n] == n),
            key=self.position.__getitem__,
        )
        for edges, inverse, walk in (
            (self.succ, self.pred, reversed(order)),
            (self.pred, self.succ, order),
        ):
            beyond: dict[int, int] = {}
            """Each node's descendants (ancestors) among `nodes`, until no one needs it."""
            waiting = {n: len(inverse[n]) for n in order}
            for node in walk:
                mask = 0
                for n in edges[node]:
                    mask |= beyond[n]
                if node in found:  # through a neighbour: not the neighbour itself
                    found[node] |= mask
                for n in edges[node]:
                    mask |= bits.get(n, 0)
                    waiting[n] -= 1
                    if not waiting[n]:
                        del beyond[n]
                if waiting[node]:
                    beyond[node] = mask
        return [found[n] for n in nodes]

    def absorb(self, kept: int, gone: int) -> None:
        """Give `gone`'s edges to `kept` and make `kept` stand for it."""
        for n in self.succ[gone]:
            self.pred[n].discard(gone)
            if n != kept:
                self.pred[n].add(kept)
                self.succ[kept].add(n)
        for n in self.pred[gone]:
            self.succ[n].discard(gone)
            if n != kept:
                self.succ[n].add(kept)
                self.pred[kept].add(n)
        self.succ[gone].clear()
        self.pred[gone].clear()
        self.parent[gone] = kept
