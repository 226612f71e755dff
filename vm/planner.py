"""Planning a specialization: its grid and loops cut into tile classes, each typed.

A tile class is a run of counter values (of a grid axis or a loop) whose tiles
have the same extents: the full tiles, the tail, empty tiles. For each class
of the grid (the product of its axes' classes) the planner types the program's
instructions with their shape rules (`shapes.py`), descending into each loop's
own classes, and sums the work: a launch may not take more than its bound of
steps. The planned executor (`planned.py`) then binds each class's body to
numpy views once.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from dvm.vm.binary import layout
from dvm.vm.errors import BytecodeError
from dvm.vm.isa import TRANSPOSE_A, Cat, ExtentKind
from dvm.vm.plan import Body, GridPlan, LoopNode, Node, OpNode, Shape, Specialization
from dvm.vm.program import MAX_ARRAY_BYTES, Index, Offsets, nominal_bytes
from dvm.vm.shapes import UNWRITTEN, Ctx, State
from dvm.vm.static import Static

MAX_PLAN_NODES = 100_000
"""Largest number of (tile class, instruction) pairs a specialization may plan."""

ClassKey = tuple[int, ...]
"""A tile class of one index source: the extent of each (view, dim) pair it tiles."""


class TilePlanner:
    """Plans one specialization: `plan_grid`. The rules call back `tile`, `put`,
    `shape_operand` and `fail` (the `shapes.Planner` interface)."""

    def __init__(self, static: Static, spec: Specialization, max_steps: int) -> None:
        self.static = static
        self.p = static.program
        self.max_steps = max_steps
        self._offsets: Offsets | None = self.p.offsets
        self.nodes = 0
        self.s = spec.slots
        views = spec.views
        # tuples of ints, which the garbage collector does not track
        self.caps = tuple([cap for _, cap in spec.registers])
        """Each register's capacity (elements)."""
        self.sizes = tuple([vp.sizes for vp in views])
        """Each view's sizes."""
        self.keys = {
            src: tuple([(views[v].sizes[d], views[v].tiled[j][2]) for v, d, j in group])
            for src, group in static.pair_places.items()
        }
        """Per index source: (size, tile) of each (view, dim) pair it tiles."""

    def fail(self, table: str, i: int, reason: str, detail: str = "") -> BytecodeError:
        """A BytecodeError at instruction i ("code") or at the grid ("grid")."""
        if self._offsets is None:
            self._offsets = layout(self.p)
        o = self._offsets
        return BytecodeError(o.grid if table == "grid" else o.code[i], reason, detail)

    def nonneg(self, table: str, i: int, slot: int, what: str) -> int:
        """A slot value that must not be negative (counts, extents)."""
        v = self.s[slot]
        if v < 0:
            raise self.fail(table, i, f"negative {what}", f"s{slot} = {v}")
        return v

    # -- tile classes ------------------------------------------------------------------

    def segments(self, source: int, n: int) -> list[tuple[int, int, ClassKey]]:
        """Cut counter values [0, n) into runs whose tiles have equal extents."""
        pairs = self.keys.get(source, ())
        if n <= 0:
            return []
        cuts = {0, n}
        for size, tile in pairs:
            if tile > 0:
                full = size // tile
                if 0 < full < n:
                    cuts.add(full)
                if size % tile and 0 < full + 1 < n:
                    cuts.add(full + 1)
        out = []
        for lo, hi in itertools.pairwise(sorted(cuts)):
            key = [
                (tile if size - lo * tile >= tile else max(0, size - lo * tile)) if tile > 0 else 0
                for size, tile in pairs
            ]
            out.append((lo, hi, tuple(key)))
        return out

    def axis_classes(
        self, axis: int, n: int
    ) -> tuple[tuple[tuple[int, int, int], ...], list[ClassKey], list[int]]:
        """Grid axis `axis` of `n` tiles: its (lo, hi, class) segments, each class's key
        and how many tiles each class has (segments of one class may be apart)."""
        ids: dict[ClassKey, int] = {}
        segs, keys, counts = [], [], []
        for lo, hi, key in self.segments(Index.grid(axis), n):
            c = ids.get(key)
            if c is None:
                c = ids[key] = len(keys)
                keys.append(key)
                counts.append(0)
            counts[c] += hi - lo
            segs.append((lo, hi, c))
        return tuple(segs), keys, counts

    def plan_grid(self) -> GridPlan:
        """Tile classes of the grid (product of per-axis classes) and the work bound."""
        extents = tuple([self.s[g] for g in self.p.grid])
        if min(extents) < 0:
            for g in self.p.grid:
                self.nonneg("grid", 0, g, "grid extent")
        ntiles = math.prod(extents)
        axes = [self.axis_classes(a, n) for a, n in enumerate(extents)]
        bodies: dict[tuple[int, ...], Body] = {}
        steps, nbytes, gemms = ntiles, 0, 0
        n_regs, n_code = len(self.p.registers), len(self.p.code)
        for combo in itertools.product(*[range(len(keys)) for _, keys, _ in axes]):
            ctx: Ctx = {Index.grid(a): axes[a][1][c] for a, c in enumerate(combo)}
            body, _ = self.body(0, n_code, ctx, [None] * n_regs)
            bodies[combo] = body
            count = math.prod(axes[a][2][c] for a, c in enumerate(combo))
            body_steps, body_bytes = self.cost(body)
            steps += count * body_steps
            nbytes += count * body_bytes
            if self.static.has_mma:
                gemms += count * gemm_work(body)
        if steps > self.max_steps:
            raise self.fail("grid", 0, "too many steps", f"{steps} > {self.max_steps}")
        inline = ntiles < 2 or nbytes < self.static.share_bytes
        segments = tuple(segs for segs, _, _ in axes)
        gemm = max(map(largest_gemm, bodies.values()), default=0) if self.static.has_mma else 0
        return GridPlan(extents, segments, bodies, steps, nbytes, ntiles, inline, gemm, gemms)

    def cost(self, body: Body) -> tuple[int, int]:
        """(instructions, global bytes) one execution of `body` costs."""
        steps, nbytes = 0, 0
        items = self.static.itemsizes
        for n in body:
            steps += 1
            if isinstance(n, LoopNode):
                for lo, hi, sub in n.segments:
                    s, b = self.cost(sub)
                    steps += (hi - lo) * s
                    nbytes += (hi - lo) * b
            elif n.extents is not None:
                cat = n.ins.op.cat
                if cat is Cat.LOAD:
                    nbytes += math.prod(n.extents) * items[n.ins.operands[0]]
                elif cat is Cat.SCATTER_ADD:  # reads and writes one element per update
                    nbytes += 2 * math.prod(n.shapes[1] or ()) * items[n.ins.operands[1]]
                elif cat is Cat.STORE or cat is Cat.STORE_ACC:
                    nbytes += math.prod(n.extents) * items[n.ins.operands[1]]
            if steps > self.max_steps:
                raise self.fail("grid", 0, "too many steps", f"> {self.max_steps}")
        return steps, nbytes

    # -- typing ------------------------------------------------------------------------

    def body(self, start: int, end: int, ctx: Ctx, state: State) -> tuple[Body, State]:
        """Type code[start:end] for one tile class; returns the nodes and the register
        shapes after them."""
        nodes: list[Node] = []
        k = start
        code, rules = self.p.code, self.static.rules
        while k < end:
            self.nodes += 1
            if self.nodes > MAX_PLAN_NODES:
                raise self.fail("code", k, "too many tile classes")
            rule = rules[k]
            if rule is not None:
                nodes.append(rule(self, ctx, state))
            elif code[k].op.cat is Cat.LOOP:
                stop = self.static.loops.end_of[k]
                node, state = self.loop(k, stop, ctx, state)
                nodes.append(node)
                k = stop
            k += 1
        return tuple(nodes), state

    def loop(self, k: int, stop: int, ctx: Ctx, state: State) -> tuple[LoopNode, State]:
        """Each run of equal-extent iterations gets its own body; carried shapes must be stable."""
        level = self.static.loops.depth_at[k]
        trips = self.nonneg("code", k, self.p.code[k].operands[0], "loop count")
        segs = []
        source = Index.loop(level)
        for lo, hi, key in self.segments(source, trips):
            inner = {**ctx, source: key}
            entry = list(state)
            body, state = self.body(k + 1, stop, inner, list(state))
            if hi - lo > 1 and state != entry and _only_initialized(entry, state):
                # The first iteration only gave shapes to registers that had none: a later
                # iteration cannot read them before writing them (the first would have
                # failed), so it sees the same shapes and plans the same body.
                segs.append((lo, hi, body))
            elif hi - lo > 1 and state != entry:
                second, again = self.body(k + 1, stop, inner, list(state))
                if again != state:
                    raise self.fail("code", k, "loop changes register shapes every iteration")
                segs.append((lo, lo + 1, body))
                segs.append((lo + 1, hi, second))
            else:
                segs.append((lo, hi, body))
        if k in self.static.nests and all(
            isinstance(n, LoopNode) and not n.segments for _, _, body in segs for n in body
        ):
            segs = []  # its one inner loop makes no pass: nor does it (`perfect_nests`)
        return LoopNode(k, level, tuple(segs)), state

    def extent(self, k: int, ctx: Ctx, view: int, dim: int) -> int:
        """Extent of dim `dim` of view `view` in the tile class `ctx`."""
        for d, src, pos in self.static.tiled[view]:
            if d == dim:
                key = ctx.get(src)
                if key is None:
                    raise self.fail("code", k, "view tiled by a loop that does not enclose it")
                return key[pos]
        return self.sizes[view][dim]

    def tile(self, k: int, ctx: Ctx, view: int) -> Shape:
        """The extents of view `view`'s current tile in class `ctx` (memoized in ctx under
        a negative key: an inner loop's ctx copies them, and a view that the inner loop
        tiles cannot have been computed outside it)."""
        got = ctx.get(-1 - view)
        if got is not None:
            return got
        tiled = self.static.tiled[view]
        sizes = self.sizes[view]
        if not tiled:
            out = sizes
        else:
            t = list(sizes)
            for d, src, pos in tiled:
                key = ctx.get(src)
                if key is None:
                    raise self.fail("code", k, "view tiled by a loop that does not enclose it")
                t[d] = key[pos]
            out = tuple(t)
        ctx[-1 - view] = out
        return out

    def put(self, k: int, dst: int, out: Shape, state: State) -> None:
        """Give register `dst` the shape `out` (instruction k's result), which must fit."""
        n = math.prod(out)
        if n == 0 and nominal_bytes(out, 8) > MAX_ARRAY_BYTES:
            raise self.fail("code", k, "tile too large", f"{out}")
        if n > self.caps[dst]:
            detail = f"r{dst}: {out} > {self.caps[dst]}"
            raise self.fail("code", k, "tile does not fit register", detail)
        state[dst] = out

    def shape_operand(self, k: int, ctx: Ctx, shape: tuple[Any, ...], state: State) -> Shape:
        """Evaluate a SHAPE operand (slots, view extents, register dims)."""
        out = []
        for e in shape:
            if e.kind is ExtentKind.SLOT:
                out.append(self.nonneg("code", k, e.index, "extent"))
            elif e.kind is ExtentKind.VIEW_DIM:
                out.append(self.extent(k, ctx, e.index, e.dim))
            else:
                s = state[e.index]
                if s is None:
                    raise self.fail("code", k, UNWRITTEN, f"r{e.index}")
                out.append(s[e.dim])
        return tuple(out)


def largest_gemm(body: Body) -> int:
    """The most multiply-adds (M*N*K of one matrix) of an `mma` in `body`, 0 if none."""
    most = 0
    for n in body:
        if isinstance(n, LoopNode):
            most = max([most, *[largest_gemm(sub) for _, _, sub in n.segments]])
        elif (inner := _mma_inner(n)) is not None:
            assert n.out is not None
            most = max(most, math.prod(n.out[-2:]) * inner)
    return most


def gemm_work(body: Body) -> int:
    """The multiply-adds of the `mma`s in `body`, each loop's as many times as it runs."""
    total = 0
    for n in body:
        if isinstance(n, LoopNode):
            total += sum((hi - lo) * gemm_work(sub) for lo, hi, sub in n.segments)
        elif (inner := _mma_inner(n)) is not None:
            assert n.out is not None
            total += math.prod(n.out) * inner
    return total


def _mma_inner(n: OpNode) -> int | None:
    """The extent an `mma` sums over (K), or None for another instruction or an mma
    whose shapes the plan does not know."""
    if n.ins.op.cat is not Cat.MMA or n.out is None or n.shapes[1] is None:
        return None
    a = n.shapes[1]
    return a[-2] if n.ins.operands[3] & TRANSPOSE_A else a[-1]


def _only_initialized(entry: State, after: State) -> bool:
    """Whether `after` differs from `entry` only in registers `entry` had no shape for."""
    for e, a in zip(entry, after, strict=True):  # noqa: SIM110 (no generator frame per register)
        if e is not None and e != a:
            return False
    return True
