"""Stage 3: specialization, once per (argument shapes, params, device).

Given concrete shapes, evaluate every slot, then check what depends on
them — registers fit the local memory, are aligned and do not overlap;
every view lies inside its argument; loop counts and grid extents are
non-negative; the total work is bounded — and plan execution: the grid and
each loop are cut into *tile classes* (ranges of counter values whose tiles
have the same extents: full tiles, the tail, empty tiles), and for each
class every instruction gets its exact operand shapes (shape inference), so
the interpreter can bind numpy views once and never compute shapes again.

Nothing later re-checks: a Specialization that was built is safe to run on
arrays of its shapes.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from dvm.vm.binary import layout
from dvm.vm.device import DeviceSpec
from dvm.vm.errors import BytecodeError
from dvm.vm.isa import Cat, ExtentKind, Kind, ReduceKind, ScalarTag
from dvm.vm.program import Index, Instr, Offsets, Program, Scalar
from dvm.vm.slots import SlotFn, compile_slots
from dvm.vm.validate import LoopInfo, validate

DEFAULT_MAX_STEPS = 1 << 34
"""Largest number of instructions (and tiles) one launch may execute."""

INLINE_BYTES = 256 * 1024
"""Launches moving fewer global bytes than this run on the calling thread."""

MAX_CACHED = 512
"""Specializations a program keeps (the oldest is dropped first)."""

MAX_PLAN_NODES = 100_000
"""Largest number of (tile class, instruction) pairs a specialization may plan."""

Shape = tuple[int, ...]


# --------------------------------------------------------------------------
# Plan data: what the interpreter binds


@dataclass(frozen=True)
class ViewPlan:
    """A view with its slot values: element offset, sizes and strides; how it is tiled."""

    arg: int
    offset: int
    sizes: Shape
    strides: Shape
    tiled: tuple[tuple[int, int, int], ...]
    """(dim, index source, tile) for each tiled dim."""
    empty: bool
    natural: bool
    """Offset 0 and C-contiguous over the whole argument: the argument itself, reshaped."""


class OpNode(NamedTuple):
    """One instruction typed for one tile class (a NamedTuple: planning builds many)."""

    k: int
    ins: Instr
    shapes: tuple[Shape | None, ...]
    """Shape of each REG operand (None for other operands) *before* the instruction."""
    out: Shape | None
    """Shape the instruction gives its destination register (None if it has none)."""
    extents: Shape | None = None
    """load/store: the tile's extents; fill/broadcast: the target shape."""
    scalar: float | int | None = None
    store_to: int | None = None
    """Set by the interpreter when the store that follows is fused into this op: the view
    whose current tile this op writes directly (see `interpreter.fused_stores`)."""


class LoopNode(NamedTuple):
    """A loop: its counter level and (lo, hi, body) segments of iterations."""

    k: int
    level: int
    segments: tuple[tuple[int, int, Body], ...]


Node = OpNode | LoopNode
Body = tuple[Node, ...]


@dataclass(frozen=True)
class GridPlan:
    """The grid cut into tile classes: per axis (lo, hi, class id) segments and one body each."""

    extents: Shape
    axis_segments: tuple[tuple[tuple[int, int, int], ...], ...]
    bodies: dict[tuple[int, ...], Body]
    steps: int
    """Instructions one launch executes (for the work bound and stats)."""
    global_bytes: int
    """Bytes moved by loads and stores in one launch (to decide inline vs pool)."""
    tiles: int
    inline: bool
    """Small enough (< INLINE_BYTES of traffic, or one tile) to run on the calling thread."""


@dataclass
class Specialization:
    """A program bound to concrete shapes: slot values, checked layout and the tile plan."""

    program: Program
    device: DeviceSpec
    shapes: tuple[Shape, ...]
    params: tuple[int, ...]
    slots: tuple[int, ...]
    registers: tuple[tuple[int, int], ...]
    """(byte offset, capacity in elements) per register."""
    views: tuple[ViewPlan, ...]
    plan: GridPlan
    has_mma: bool
    uses_blas: bool
    """Whether some instruction calls BLAS (mma, or a row sum done as a matrix-vector product)."""
    stored_args: frozenset[int]
    alias_regs: frozenset[int]
    """Registers written only by loads from arguments the program never stores to."""
    alias_args: frozenset[int]
    """The arguments those loads read."""
    arg_layouts: tuple[tuple[np.dtype, Shape, Shape], ...] = ()
    """(dtype, shape, C-order byte strides) of each argument: launch's fast check."""
    executables: dict[tuple[int, bool, bool], Any] = field(default_factory=dict, repr=False)
    """Per-core bound closures, built by the interpreter on first launch and reused."""

    def launch(self, args: Sequence[np.ndarray], **kwargs: Any) -> Any:
        """Run on `args` (arrays of exactly `self.shapes`); see `interpreter.launch`."""
        from dvm.vm.interpreter import launch

        this: Any = self  # (the type checker sees this module twice via the editable install)
        return launch(this, args, **kwargs)


# --------------------------------------------------------------------------
# Entry point


def specialize(
    program: Program,
    shapes: Sequence[Sequence[int]],
    params: Sequence[int] = (),
    device: DeviceSpec | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> Specialization:
    """Validate `program` (once), then specialize it; cached by its arguments."""
    device = device or _host()
    key = (tuple(tuple(int(d) for d in s) for s in shapes), tuple(int(p) for p in params))
    cache: dict[Any, Specialization] = program.cache.setdefault("specializations", {})
    spec = cache.get((key, device, max_steps))
    if spec is None:
        loops, slot_fn = _validated(program)
        spec = _Specializer(program, loops, slot_fn, device, max_steps).run(*key)
        if len(cache) >= MAX_CACHED:
            del cache[next(iter(cache))]  # the oldest: dicts keep insertion order
            program.cache.pop("by_launch", None)
        cache[(key, device, max_steps)] = spec
    return spec


_HOST: list[DeviceSpec] = []


def _host() -> DeviceSpec:
    """DeviceSpec.host(), computed once (it reads /sys)."""
    if not _HOST:
        _HOST.append(DeviceSpec.host())
    return _HOST[0]


def _validated(program: Program) -> tuple[LoopInfo, SlotFn]:
    """Static validation and slot compilation, memoized in the program."""
    got = program.cache.get("validated")
    if got is None:
        got = (validate(program), compile_slots(program.slots))
        program.cache["validated"] = got
    return got


# --------------------------------------------------------------------------
# The specializer


class _Specializer:
    """Evaluates slots, checks layout and bounds, and plans tile classes."""

    def __init__(
        self,
        p: Program,
        loops: LoopInfo,
        slot_fn: SlotFn,
        device: DeviceSpec,
        max_steps: int,
    ) -> None:
        self.p = p
        self.loops = loops
        self.slot_fn = slot_fn
        self.device = device
        self.max_steps = max_steps
        self._offsets: Offsets | None = p.offsets
        self.nodes = 0
        self.s: tuple[int, ...] = ()
        self._pairs: dict[int, list[tuple[int, int, int, int]]] = {}
        self._pos: dict[tuple[int, int], tuple[int, int]] = {}
        self.caps: list[int] = []
        self._regs_of = [register_operands(ins) for ins in p.code]
        """Per instruction: (operand position, register, whether it is read)."""

    # -- errors ------------------------------------------------------------

    def fail(self, table: str, i: int, reason: str, detail: str = "") -> BytecodeError:
        """A BytecodeError pointing at a table entry or instruction of the binary."""
        if self._offsets is None:
            self._offsets = layout(self.p)
        o = self._offsets
        at = o.grid if table == "grid" else getattr(o, table)[i] if table != "none" else -1
        return BytecodeError(at, reason, detail)

    # -- steps -------------------------------------------------------------

    def run(self, shapes: tuple[Shape, ...], params: tuple[int, ...]) -> Specialization:
        """All the steps, in order; returns the finished Specialization."""
        self.check_call(shapes, params)
        self.eval_slots(shapes, params)
        regs = self.place_registers()
        views = tuple(self.view(i, shapes) for i in range(len(self.p.views)))
        self.views = views
        for vi, vp in enumerate(views):
            for d, src, _ in vp.tiled:
                pairs = self.pairs(src)
                self._pos[(vi, d)] = (src, [(a, b) for a, b, _, _ in pairs].index((vi, d)))
        plan = self.plan_grid()
        stored = frozenset(
            views[ins.operands[0]].arg
            for ins in self.p.code
            if ins.op.cat in (Cat.STORE, Cat.STORE_ACC)
        )
        has_mma = any(ins.op.cat is Cat.MMA for ins in self.p.code)
        uses_blas = has_mma or any(
            ins.op.cat is Cat.REDUCE and ins.operands[2] is ReduceKind.SUM for ins in self.p.code
        )
        alias_regs = self.alias_registers(stored)
        alias_args = frozenset(
            views[ins.operands[1]].arg
            for ins in self.p.code
            if ins.op.cat is Cat.LOAD and ins.operands[0] in alias_regs
        )
        return Specialization(
            self.p,
            self.device,
            shapes,
            params,
            self.s,
            regs,
            views,
            plan,
            has_mma,
            uses_blas,
            stored,
            alias_regs,
            alias_args,
            tuple(
                (a.dtype.np, s, _c_byte_strides(s, a.dtype.np.itemsize))
                for a, s in zip(self.p.args, shapes, strict=True)
            ),
        )

    def alias_registers(self, stored: frozenset[int]) -> frozenset[int]:
        """Registers whose every write is a load from an argument nothing stores to."""
        ok: set[int] = set()
        bad: set[int] = set()
        for ins in self.p.code:
            if ins.op.cat is Cat.LOAD:
                r = ins.operands[0]
                (bad if self.views[ins.operands[1]].arg in stored else ok).add(r)
            elif ins.op.operands and ins.op.operands[0][1] is Kind.REG:
                bad.add(ins.operands[0])
        return frozenset(ok - bad)

    def check_call(self, shapes: tuple[Shape, ...], params: tuple[int, ...]) -> None:
        """The caller's shapes and params must match the program's header."""
        p = self.p
        if len(shapes) != len(p.args):
            raise ValueError(f"program takes {len(p.args)} arguments, got {len(shapes)} shapes")
        for i, (s, a) in enumerate(zip(shapes, p.args, strict=True)):
            if len(s) != a.rank or any(d < 0 for d in s):
                raise ValueError(f"argument a{i}: shape {s} does not fit rank {a.rank}")
        if len(params) != p.n_params:
            raise ValueError(f"program takes {p.n_params} params, got {len(params)}")

    def eval_slots(self, shapes: tuple[Shape, ...], params: tuple[int, ...]) -> None:
        """Run the compiled slot function; a slot outside int64 is an error."""
        got = self.slot_fn(shapes, params)
        if isinstance(got, int):
            raise self.fail("slots", got, "slot value out of int64 range")
        self.s = got

    def nonneg(self, table: str, i: int, slot: int, what: str) -> int:
        """A slot value that must not be negative (sizes, counts, offsets)."""
        v = self.s[slot]
        if v < 0:
            raise self.fail(table, i, f"negative {what}", f"s{slot} = {v}")
        return v

    def place_registers(self) -> tuple[tuple[int, int], ...]:
        """Registers must be aligned, inside local memory, and pairwise disjoint."""
        out: list[tuple[int, int]] = []
        spans: list[tuple[int, int, int]] = []
        dev = self.device
        for i, r in enumerate(self.p.registers):
            cap = math.prod(self.nonneg("registers", i, d, "register dim") for d in r.shape)
            off = self.nonneg("registers", i, r.offset, "register offset")
            nbytes = cap * r.dtype.np.itemsize
            if off % dev.alignment:
                raise self.fail("registers", i, "misaligned register", f"{off} % {dev.alignment}")
            if off + nbytes > dev.local_memory_bytes:
                raise self.fail(
                    "registers",
                    i,
                    "register exceeds local memory",
                    f"r{i}: bytes {off}..{off + nbytes} > {dev.local_memory_bytes}",
                )
            if nbytes:
                spans.append((off, off + nbytes, i))
            out.append((off, cap))
        self.caps = [cap for _, cap in out]
        spans.sort()
        for (_, end, a), (start, _, b) in itertools.pairwise(spans):
            if start < end:
                raise self.fail("registers", max(a, b), "registers overlap", f"r{a} and r{b}")
        return tuple(out)

    def view(self, i: int, shapes: tuple[Shape, ...]) -> ViewPlan:
        """Slot values of a view, and the proof that it stays inside its argument."""
        v = self.p.views[i]
        sizes = tuple(self.nonneg("views", i, d.size, "view size") for d in v.dims)
        strides = tuple(self.s[d.stride] for d in v.dims)
        offset = self.s[v.offset]
        tiled = tuple(
            (k, d.index, self.nonneg("views", i, d.tile, "tile size"))
            for k, d in enumerate(v.dims)
            if d.index != Index.NONE and d.tile is not None
        )
        numel = math.prod(shapes[v.arg])
        if _nominal_bytes(sizes, self.p.args[v.arg].dtype.np.itemsize) > MAX_ARRAY_BYTES:
            raise self.fail("views", i, "view too large", f"sizes {sizes}")
        empty = 0 in sizes
        if not empty:
            lo = offset + sum(min(0, (n - 1) * st) for n, st in zip(sizes, strides, strict=True))
            hi = offset + sum(max(0, (n - 1) * st) for n, st in zip(sizes, strides, strict=True))
            if lo < 0 or hi >= numel:
                raise self.fail(
                    "views", i, "view out of bounds", f"elements {lo}..{hi} of a{v.arg} ({numel})"
                )
        natural = offset == 0 and not empty and _is_c_contiguous(sizes, strides)
        natural = natural and math.prod(sizes) == numel
        return ViewPlan(v.arg, offset, sizes, strides, tiled, empty, natural)

    # -- tile classes --------------------------------------------------------

    def pairs(self, source: int) -> list[tuple[int, int, int, int]]:
        """(view, dim, size, tile) of every view dim tiled by `source`."""
        got = self._pairs.get(source)
        if got is None:
            got = self._pairs[source] = self._find_pairs(source)
        return got

    def _find_pairs(self, source: int) -> list[tuple[int, int, int, int]]:
        """Scan the views for dims tiled by `source`."""
        return [
            (vi, d, vp.sizes[d], t)
            for vi, vp in enumerate(self.views)
            for d, src, t in vp.tiled
            if src == source
        ]

    def segments(self, source: int, n: int) -> list[tuple[int, int, tuple[int, ...]]]:
        """Cut counter values [0, n) into runs whose tiles have equal extents."""
        pairs = self.pairs(source)
        cuts = {0, n}
        for _, _, size, tile in pairs:
            if tile > 0:
                cuts.update(c for c in (size // tile, -(-size // tile)) if 0 < c < n)
        bounds = sorted(cuts)
        out = []
        for lo, hi in itertools.pairwise(bounds):
            key = tuple(max(0, min(t, s - lo * t)) if t > 0 else 0 for _, _, s, t in pairs)
            out.append((lo, hi, key))
        return out

    def plan_grid(self) -> GridPlan:
        """Tile classes of the grid (product of per-axis classes) and the work bound."""
        extents = tuple(self.nonneg("grid", 0, g, "grid extent") for g in self.p.grid)
        ntiles = math.prod(extents)
        per_axis = [self.segments(Index.grid(a), n) for a, n in enumerate(extents)]
        ids: list[dict[tuple[int, ...], int]] = [{} for _ in extents]
        axis_segments = tuple(
            tuple((lo, hi, ids[a].setdefault(key, len(ids[a]))) for lo, hi, key in segs)
            for a, segs in enumerate(per_axis)
        )
        keys = [list(d) for d in ids]
        counts = [dict.fromkeys(d.values(), 0) for d in ids]
        for a, segs in enumerate(axis_segments):
            for lo, hi, c in segs:
                counts[a][c] += hi - lo
        bodies: dict[tuple[int, ...], Body] = {}
        steps, nbytes = ntiles, 0
        for combo in itertools.product(*[range(len(k)) for k in keys]):
            ctx = {Index.grid(a): keys[a][c] for a, c in enumerate(combo)}
            body, _ = self.body(0, len(self.p.code), ctx, [None] * len(self.p.registers))
            bodies[combo] = body
            count = math.prod(counts[a][c] for a, c in enumerate(combo))
            body_steps, body_bytes = self.cost(body)
            steps += count * body_steps
            nbytes += count * body_bytes
        if steps > self.max_steps:
            raise self.fail("grid", 0, "too many steps", f"{steps} > {self.max_steps}")
        inline = ntiles < 2 or nbytes < INLINE_BYTES
        return GridPlan(extents, axis_segments, bodies, steps, nbytes, ntiles, inline)

    def cost(self, body: Body) -> tuple[int, int]:
        """(instructions, global bytes) one execution of `body` costs."""
        steps, nbytes = 0, 0
        for n in body:
            steps += 1
            if isinstance(n, LoopNode):
                for lo, hi, sub in n.segments:
                    s, b = self.cost(sub)
                    steps += (hi - lo) * s
                    nbytes += (hi - lo) * b
            elif n.extents is not None and n.ins.op.cat in (Cat.LOAD, Cat.STORE, Cat.STORE_ACC):
                item = self.p.registers[n.ins.operands[0 if n.ins.op.cat is Cat.LOAD else 1]]
                nbytes += math.prod(n.extents) * item.dtype.np.itemsize
            if steps > self.max_steps:
                raise self.fail("grid", 0, "too many steps", f"> {self.max_steps}")
        return steps, nbytes

    # -- shape inference -----------------------------------------------------

    def body(
        self, start: int, end: int, ctx: dict[int, tuple[int, ...]], state: list[Shape | None]
    ) -> tuple[Body, list[Shape | None]]:
        """Type code[start:end] for one tile class; returns nodes and the register shapes after."""
        nodes: list[Node] = []
        k = start
        while k < end:
            ins = self.p.code[k]
            self.nodes += 1
            if self.nodes > MAX_PLAN_NODES:
                raise self.fail("code", k, "too many tile classes")
            if ins.op.cat is Cat.LOOP:
                stop = self.loops.end_of[k]
                node, state = self.loop(k, stop, ctx, state)
                nodes.append(node)
                k = stop + 1
                continue
            if ins.op.cat is not Cat.NOP:
                nodes.append(self.op(k, ins, ctx, state))
            k += 1
        return tuple(nodes), state

    def loop(
        self, k: int, stop: int, ctx: dict[int, tuple[int, ...]], state: list[Shape | None]
    ) -> tuple[LoopNode, list[Shape | None]]:
        """Each run of equal-extent iterations gets its own body; carried shapes must be stable."""
        level = self.loops.depth_at[k]
        trips = self.nonneg("code", k, self.p.code[k].operands[0], "loop count")
        segs = []
        for lo, hi, key in self.segments(Index.loop(level), trips):
            inner = {**ctx, Index.loop(level): key}
            entry = list(state)
            body, state = self.body(k + 1, stop, inner, list(state))
            if hi - lo > 1 and state != entry:
                second, again = self.body(k + 1, stop, inner, list(state))
                if again != state:
                    raise self.fail("code", k, "loop changes register shapes every iteration")
                segs.append((lo, lo + 1, body))
                segs.append((lo + 1, hi, second))
            else:
                segs.append((lo, hi, body))
        return LoopNode(k, level, tuple(segs)), state

    def extent(self, k: int, ctx: dict[int, tuple[int, ...]], view: int, dim: int) -> int:
        """Extent of dim `dim` of view `view` in the tile class `ctx`."""
        where = self._pos.get((view, dim))
        if where is None:
            return self.views[view].sizes[dim]
        src, pos = where
        if src not in ctx:
            raise self.fail("code", k, "view tiled by a loop that does not enclose it")
        return ctx[src][pos]

    def tile(self, k: int, ctx: dict[int, tuple[int, ...]], view: int) -> Shape:
        """The extents of view `view`'s current tile in class `ctx`."""
        return tuple(self.extent(k, ctx, view, d) for d in range(len(self.views[view].sizes)))

    def op(
        self, k: int, ins: Instr, ctx: dict[int, tuple[int, ...]], state: list[Shape | None]
    ) -> OpNode:
        """Shapes of the operands, the result shape, and the checks between them."""
        shapes: list[Shape | None] = [None] * len(ins.operands)
        for pos, v, reads in self._regs_of[k]:
            if reads and state[v] is None:
                raise self.fail("code", k, "register read before written", f"r{v}")
            shapes[pos] = state[v]
        out, extents, scalar = _INFER[ins.op.cat](self, k, ins, ctx, shapes, state)
        if out is not None:
            dst = ins.operands[0]
            cap = self.caps[dst]
            if 0 in out and _nominal_bytes(out, 8) > MAX_ARRAY_BYTES:
                raise self.fail("code", k, "tile too large", f"{out}")
            if math.prod(out) > cap:
                raise self.fail("code", k, "tile does not fit register", f"r{dst}: {out} > {cap}")
            state[dst] = out
        return OpNode(k, ins, tuple(shapes), out, extents, scalar)

    def registers_cap(self, r: int) -> int:
        """Capacity of register `r` in elements."""
        return self.caps[r]

    def shape_operand(
        self, k: int, ctx: dict[int, tuple[int, ...]], shape: tuple, state: list[Shape | None]
    ) -> Shape:
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
                    raise self.fail("code", k, "register read before written", f"r{e.index}")
                out.append(s[e.dim])
        return tuple(out)

    def scalar(self, s: Scalar) -> float | int:
        """A SCALAR operand's value: the immediate, or the slot's value."""
        return s.value if s.tag is ScalarTag.IMM else self.s[int(s.value)]

    def broadcast(self, k: int, *shapes: Shape | None) -> Shape:
        """numpy broadcasting of the given shapes, or a 'shapes do not broadcast' error."""
        out = broadcast_shapes([s for s in shapes if s is not None])
        if out is None:
            raise self.fail("code", k, "shapes do not broadcast", str(shapes))
        return out


def broadcast_shapes(shapes: list[Shape]) -> Shape | None:
    """numpy's broadcasting rule on shapes; None when they do not broadcast."""
    first = shapes[0]
    if all(s == first for s in shapes):
        return first
    rank = max(len(s) for s in shapes)
    out = [1] * rank
    for s in shapes:
        for i, n in enumerate(s, start=rank - len(s)):
            if n != out[i]:
                if out[i] != 1 and n != 1:
                    return None
                if out[i] == 1:
                    out[i] = n
    return tuple(out)


MAX_ARRAY_BYTES = 2**62
"""numpy refuses arrays (even empty ones) whose dims multiply past this."""


def _nominal_bytes(shape: Shape, itemsize: int) -> int:
    """What numpy checks against its size limit: the product of the non-zero dims."""
    return math.prod(max(n, 1) for n in shape) * itemsize


def _c_byte_strides(shape: Shape, itemsize: int) -> Shape:
    """The byte strides numpy gives a new C-ordered array of `shape`."""
    out, acc = [], itemsize
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


def _is_c_contiguous(sizes: Shape, strides: Shape) -> bool:
    """Whether these strides lay `sizes` out row-major and dense (size-1 dims: any stride)."""
    acc = 1
    for n, st in zip(reversed(sizes), reversed(strides), strict=True):
        if n != 1 and st != acc:
            return False
        acc *= n
    return True


def register_operands(ins: Instr) -> list[tuple[int, int, bool]]:
    """(position, register, is it read) of each REG operand of `ins`."""
    kinds = [kind for _, kind in ins.op.operands]
    return [
        (pos, v, not (pos == 0 and _writes_only(ins)))
        for pos, (kind, v) in enumerate(zip(kinds, ins.operands, strict=True))
        if kind is Kind.REG
    ]


def _writes_only(ins: Instr) -> bool:
    """Whether operand 0 is only written (not read) by this instruction."""
    cat = ins.op.cat
    if cat is Cat.MMA:
        return not ins.operands[3] & 4
    return cat not in (Cat.STORE, Cat.STORE_ACC, Cat.LOOP, Cat.ENDLOOP, Cat.NOP)


# --------------------------------------------------------------------------
# Shape rules, one per category: (specializer, k, ins, ctx, operand shapes,
# register state) -> (result shape, extents, scalar)

_Ctx = dict[int, tuple[int, ...]]
_Shapes = list[Shape | None]
_Out = tuple[Shape | None, Shape | None, float | int | None]


def _i_load(s: _Specializer, k: int, ins: Instr, ctx: _Ctx, sh: _Shapes, st: _Shapes) -> _Out:
    """A load gives its register the tile's extents."""
    t = s.tile(k, ctx, ins.operands[1])
    return t, t, None


def _i_store(s: _Specializer, k: int, ins: Instr, ctx: _Ctx, sh: _Shapes, st: _Shapes) -> _Out:
    """A stored register must have exactly the tile's extents."""
    t = s.tile(k, ctx, ins.operands[0])
    if sh[1] != t:
        raise s.fail("code", k, "stored tile shape mismatch", f"r{ins.operands[1]} {sh[1]} vs {t}")
    return None, t, None


def _i_same(s: _Specializer, k: int, ins: Instr, ctx: _Ctx, sh: _Shapes, st: _Shapes) -> _Out:
    """copy/convert keep the source shape."""
    return sh[1], None, None


def _i_broadcast(s: _Specializer, k: int, ins: Instr, ctx: _Ctx, sh: _Shapes, st: _Shapes) -> _Out:
    """The target shape, which the source must broadcast to."""
    target = s.shape_operand(k, ctx, ins.operands[2], st)
    if s.broadcast(k, sh[1], target) != target:
        raise s.fail("code", k, "shapes do not broadcast", f"{sh[1]} to {target}")
    return target, target, None


def _i_fill(s: _Specializer, k: int, ins: Instr, ctx: _Ctx, sh: _Shapes, st: _Shapes) -> _Out:
    """The given shape, and the scalar's value."""
    target = s.shape_operand(k, ctx, ins.operands[2], st)
    return target, target, s.scalar(ins.operands[1])


def _i_select(s: _Specializer, k: int, ins: Instr, ctx: _Ctx, sh: _Shapes, st: _Shapes) -> _Out:
    """The three inputs broadcast together."""
    return s.broadcast(k, sh[1], sh[2], sh[3]), None, None


def _i_reduce(s: _Specializer, k: int, ins: Instr, ctx: _Ctx, sh: _Shapes, st: _Shapes) -> _Out:
    """Reduced axes become 1 (keepdims) or disappear."""
    src = sh[1] or ()
    axes, keep = ins.operands[3], ins.operands[4] & 1
    out = tuple((1 if keep else None) if axes >> d & 1 else n for d, n in enumerate(src))
    return tuple(n for n in out if n is not None), None, None


def _i_mma(s: _Specializer, k: int, ins: Instr, ctx: _Ctx, sh: _Shapes, st: _Shapes) -> _Out:
    """(batch..., m, n) from (m, k) @ (k, n) after the transposes; inner dims must agree."""
    a: Shape = sh[1] or (0, 0)
    b: Shape = sh[2] or (0, 0)
    flags = ins.operands[3]
    m, ka = (a[-1], a[-2]) if flags & 1 else (a[-2], a[-1])
    kb, n = (b[-1], b[-2]) if flags & 2 else (b[-2], b[-1])
    if ka != kb:
        raise s.fail("code", k, "mma inner dims differ", f"{a} @ {b}")
    batch = s.broadcast(k, a[:-2], b[:-2])
    out = (*batch, m, n)
    if flags & 4 and sh[0] != out:
        raise s.fail("code", k, "mma accumulator shape mismatch", f"{sh[0]} vs {out}")
    return out, None, None


def _i_unary(s: _Specializer, k: int, ins: Instr, ctx: _Ctx, sh: _Shapes, st: _Shapes) -> _Out:
    """Elementwise: the input's shape."""
    return sh[1], None, None


def _i_binary(s: _Specializer, k: int, ins: Instr, ctx: _Ctx, sh: _Shapes, st: _Shapes) -> _Out:
    """Both inputs broadcast together (numpy rules)."""
    return s.broadcast(k, sh[1], sh[2]), None, None


def _i_binary_rs(s: _Specializer, k: int, ins: Instr, ctx: _Ctx, sh: _Shapes, st: _Shapes) -> _Out:
    """The register's shape; the scalar's value."""
    return sh[1], None, s.scalar(ins.operands[2])


def _i_binary_sr(s: _Specializer, k: int, ins: Instr, ctx: _Ctx, sh: _Shapes, st: _Shapes) -> _Out:
    """The register's shape; the scalar's value."""
    return sh[2], None, s.scalar(ins.operands[1])


_INFER = {
    Cat.LOAD: _i_load,
    Cat.STORE: _i_store,
    Cat.STORE_ACC: _i_store,
    Cat.COPY: _i_same,
    Cat.CONVERT: _i_same,
    Cat.BROADCAST: _i_broadcast,
    Cat.FILL: _i_fill,
    Cat.SELECT: _i_select,
    Cat.REDUCE: _i_reduce,
    Cat.MMA: _i_mma,
    Cat.UNARY: _i_unary,
    Cat.BINARY: _i_binary,
    Cat.BINARY_RS: _i_binary_rs,
    Cat.BINARY_SR: _i_binary_sr,
}
