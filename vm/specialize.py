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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any, NamedTuple

import numpy as np

from dvm.vm.binary import layout
from dvm.vm.checks import FastFn, compile_fast, overlaps_itself
from dvm.vm.device import DeviceSpec
from dvm.vm.errors import BytecodeError
from dvm.vm.isa import Cat, ExprOp, ExtentKind, Kind, ReduceKind, ScalarTag
from dvm.vm.program import MAX_ARRAY_BYTES, Index, Instr, Offsets, Program, Scalar
from dvm.vm.slots import I64_MAX, SlotFn, compile_slots
from dvm.vm.validate import LoopInfo, validate

DEFAULT_MAX_STEPS = 1 << 34
"""Largest number of instructions (and tiles) one launch may execute."""

INLINE_BYTES = 256 * 1024
"""Launches moving fewer global bytes than this run on the calling thread."""

TIER0_BYTES = 1 << 20
"""A first launch whose arguments hold fewer bytes than this runs unplanned (tier 0, see
`dynamic.py`), on the calling thread; larger ones go straight to tier 1: their work
dwarfs planning, and tier 1 spreads it over the cores."""

MAX_CACHED = 512
"""Specializations a program keeps (the oldest is dropped first)."""

MAX_PLAN_NODES = 100_000
"""Largest number of (tile class, instruction) pairs a specialization may plan."""

Shape = tuple[int, ...]


# --------------------------------------------------------------------------
# Plan data: what the interpreter binds


class ViewPlan(NamedTuple):
    """A view with its slot values, as numpy takes them (offset and strides in bytes, a
    stride 0 for a dim of one element); how it is tiled."""

    arg: int
    byte_offset: int
    sizes: Shape
    byte_strides: Shape
    """Empty for a natural view (its argument, reshaped)."""
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


class GridPlan(NamedTuple):
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
    planner: _Specializer | Specializer = field(repr=False)
    """Plans the tile classes; `plan` calls it once, when first needed. Until then it
    may be the program's Specializer: most shapes of a stream are never planned, so the
    per-shape planner is made only when one is (`planner_for`)."""
    has_mma: bool
    uses_blas: bool
    """Whether some instruction calls BLAS (mma, or a row sum done as a matrix-vector product)."""
    stored_args: frozenset[int]
    alias_regs: frozenset[int]
    """Registers written only by loads from arguments the program never stores to."""
    alias_args: frozenset[int]
    """The arguments loads read that the program never writes: alias registers' loads, and
    loads the interpreter may forward, read them in place."""
    arg_dtypes: tuple[np.dtype, ...]
    """Each argument's dtype (the program's): with `shapes`, launch's fast check."""
    cores: int = 1
    """The cores the slots were evaluated for (tile sizes give each core a share; 1
    when no slot reads the count)."""
    tier0: bool = False
    """Whether its arguments hold fewer than TIER0_BYTES: a first launch then runs
    unplanned (tier 0, see `dynamic.py`)."""
    shared: bool = False
    """Whether its launches share the work among the cores once planned: `plan` then
    evaluates the slots again for the device's cores if they were for fewer."""
    executables: dict[tuple[int, bool, bool, int], Any] = field(default_factory=dict, repr=False)
    """Per-core bound closures by (cores, stats, alias, copy), built by the interpreter on
    first launch and reused (a stack the cores drain takes a copy per repeated member)."""
    default_cores: int = field(default=0, repr=False)
    """Cores a launch uses when the caller does not say (0: not decided yet)."""
    memory: Any = field(default=None, repr=False)
    """The device's local memories (the interpreter's DeviceMemory), found on first launch."""
    max_steps: int = DEFAULT_MAX_STEPS
    """The work bound a launch may not exceed."""
    launched: bool = field(default=False, repr=False)
    """Whether a launch ran: the first may run without a plan (see `dynamic.py`)."""
    _plan: GridPlan | None = field(default=None, repr=False)

    @property
    def plan(self) -> GridPlan:
        """The tile classes and work bound (planned on first use; may raise BytecodeError)."""
        if self._plan is None:
            if self.shared:
                cores = device_cores(self.device, self.has_mma)
                if self.cores < cores:
                    self.retile(cores)
            planner = self.planner = self.planner.planner_for(self)
            self._plan = planner()
        return self._plan

    def retile(self, cores: int) -> None:
        """Evaluate the slots again for `cores` (before planning: nothing is bound to
        the old values yet). A first launch runs on one core (see `dynamic.py`) with
        tiles for one; the planned launches that follow get one tile per core."""
        again = self.planner.again(self.shapes, self.params, cores)
        self.slots, self.registers, self.views = again.slots, again.registers, again.views
        self.planner, self.cores = again.planner, cores

    @property
    def planned(self) -> bool:
        return self._plan is not None

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
    lazy: bool = False,
) -> Specialization:
    """Validate `program` (once), then specialize it; cached by its arguments.

    With `lazy`, the tile classes are planned when a launch first needs them (a small
    first launch does not: see `dynamic.py`, and `Specializer` for the cores its
    slots are evaluated for); otherwise now, so that every shape-dependent error is
    raised here."""
    device = device or DeviceSpec.host()
    key = (tuple(map(tuple, shapes)), tuple(params))
    cache: dict[Any, Specialization] = program.cache.setdefault("specializations", {})
    spec = cache.get((key, device, max_steps))
    if spec is None:
        spec = Specializer(program, device, max_steps)(*key, tiered=lazy)
        if len(cache) >= MAX_CACHED:
            del cache[next(iter(cache))]  # the oldest: dicts keep insertion order
            program.cache.pop("by_launch", None)
        cache[(key, device, max_steps)] = spec
    if not lazy:
        spec.plan  # noqa: B018 (planning raises what is wrong with the shapes)
    return spec


class Specializer:
    """Specializes one program for one device, without a cache: for a caller that keeps
    the specializations itself (the runtime keeps one per kernel and launch shape). Its
    specializations plan their tile classes when a launch first needs them.

    Tile sizes may depend on the cores a launch shares its work among (the `cores`
    leaf of a slot). A first launch of a small shape runs on one core (tier 0), so its
    slots are evaluated for one: every tile it walks costs a pass of Python dispatch.
    Planning evaluates them again for the device's cores when the planned launches will
    share the work (see `Specialization.retile`)."""

    def __init__(
        self,
        program: Program,
        device: DeviceSpec | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
    ) -> None:
        self.program = program
        self.static = static_info(program)  # validates the program
        self.device = device or DeviceSpec.host()
        self.max_steps = max_steps

    @cached_property
    def fast(self) -> FastFn:
        """The generated fast path: `vm.prepare` makes it ahead, else the first call."""
        return fast_function(self.program, self.device)

    def __call__(
        self, shapes: Sequence[Sequence[int]], params: Sequence[int] = (), tiered: bool = True
    ) -> Specialization:
        """The program bound to these argument shapes and params (a BytecodeError or
        ValueError says what does not fit). Without `tiered`, the slots are evaluated
        for the device's cores at once (for a caller that plans now)."""
        cores = None if tiered else device_cores(self.device, self.static.has_mma)
        return _bind(self, shapes, params, cores)

    def again(
        self, shapes: Sequence[Sequence[int]], params: Sequence[int], cores: int | None
    ) -> Specialization:
        """The program bound to these shapes and params, its slots evaluated for `cores`."""
        return _bind(self, shapes, params, cores)

    def planner_for(self, spec: Specialization) -> _Specializer:
        """A new planner for one of its specializations."""
        return self.walker().planner_for(spec)

    def walker(self) -> _Specializer:
        """A per-shape specializer: the table walk (which names a failed check) and the
        planner."""
        return _Specializer(self.program, self.static, self.device, self.max_steps, self.fast)


def _bind(
    maker: Specializer | _Specializer,
    shapes: Sequence[Sequence[int]],
    params: Sequence[int],
    cores: int | None,
) -> Specialization:
    """Run the fast path for these shapes and make their Specialization (see
    `_Specializer.run`). Only a failed check walks the tables, which says which check
    and why; `maker` plans the specialization later (see `Specialization.planner`)."""
    dims: tuple[Shape, ...]
    values: tuple[int, ...]
    nbytes: int
    used: int  # the cores the slots were evaluated for
    s: Any  # the slot values, or the index of one outside int64
    # Slots that read the cores are for one below TIER0_BYTES, where a first launch runs
    # on the calling thread (see `interpreter._run_unplanned`).
    try:
        dims, values, nbytes, used, s, got = maker.fast(shapes, params, cores, TIER0_BYTES)
    except (TypeError, ValueError):
        maker.walker().check_call(shapes, params)  # says which argument does not fit
        raise
    if type(s) is int or got is None:
        walker = maker.walker()
        s, regs, views = walker.walk(s, dims)
        maker = walker  # made already: it plans the shape if one is ever planned
    else:
        regs, views = got
    st = maker.static
    assert st.program is not None  # (`static_info` keeps it)
    return Specialization(
        st.program,
        maker.device,
        dims,
        values,
        s,
        regs,
        views,
        maker,
        st.has_mma,
        st.uses_blas,
        st.stored,
        st.alias_regs,
        st.alias_args,
        st.arg_dtypes,
        cores=used,
        tier0=nbytes < TIER0_BYTES,
        shared=nbytes >= INLINE_BYTES,  # planned launches then use several cores
        max_steps=maker.max_steps,
    )


def device_cores(device: DeviceSpec, has_mma: bool) -> int:
    """The device's cores for a program (cube cores for one with an mma)."""
    return device.cube_cores if has_mma else device.vector_cores


def _validated(program: Program) -> tuple[LoopInfo, SlotFn]:
    """Static validation and slot compilation, memoized in the program."""
    got = program.cache.get("validated")
    if got is None:
        got = (validate(program), compile_slots(program.slots))
        program.cache["validated"] = got
    return got


# --------------------------------------------------------------------------
# What depends only on the program: computed once, at the first specialization


class InstrInfo(NamedTuple):
    """An instruction with what planning needs of it, resolved once per program."""

    ins: Instr
    cat: Cat
    regs: tuple[tuple[int, int, bool], ...]
    """(operand position, register, whether it is read) of each REG operand."""
    dst: int
    """The register the instruction writes, or -1."""
    n_operands: int


@dataclass(frozen=True)
class Static:
    """The shape-independent facts about a validated program that every
    specialization uses: decided once, so a new shape only does arithmetic."""

    loops: LoopInfo
    slot_fn: SlotFn
    instrs: tuple[InstrInfo, ...]
    tiled: tuple[tuple[tuple[int, int, int], ...], ...]
    """Per view: (dim, index source, position in that source's class key) of each tiled dim."""
    pairs: dict[int, tuple[tuple[int, int], ...]]
    """Per index source: the (view, dim) pairs it tiles, in class-key order."""
    stored: frozenset[int]
    stored_views: frozenset[int]
    """The views stores and store_accs write through."""
    has_mma: bool
    uses_blas: bool
    alias_regs: frozenset[int]
    alias_args: frozenset[int]
    itemsizes: tuple[int, ...]
    """Bytes per element of each register."""
    reg_dtypes: tuple[np.dtype, ...]
    arg_dtypes: tuple[np.dtype, ...]
    planners: tuple[Planner | None, ...]
    """Per instruction: its specialized shape inference, if it has one."""
    alias_operands: tuple[bool, ...]
    """Per instruction: whether a REG operand is an alias register."""
    reads_cores: bool
    """Whether some slot reads the cores a launch is tiled for."""
    fast_paths: dict[tuple[int, int, int], FastFn] = field(default_factory=dict)
    """Per (local memory bytes, alignment, cores) of a device: the compiled fast path."""
    program: Program | None = None
    _binders: dict[frozenset[int], list[Any]] = field(default_factory=dict)

    def binders(self, alias: frozenset[int]) -> list[Any]:
        """Per instruction, its binder when `alias` are the alias registers (see
        `kernels.binders`; made once per program and set)."""
        got = self._binders.get(alias)
        if got is None:
            from dvm.vm.kernels import binders

            assert self.program is not None
            dtypes = [r.dtype.np for r in self.program.registers]
            got = self._binders[alias] = binders(self.program.code, dtypes, alias)
        return got


def fast_function(program: Program, device: DeviceSpec) -> FastFn:
    """The program's generated fast path (`checks.py`) for the device (compiled once)."""
    st = static_info(program)
    memory = device.memory_bytes(st.has_mma)  # a cube program's registers: cube memory
    key = (memory, device.alignment, device_cores(device, st.has_mma))
    fast = st.fast_paths.get(key)
    if fast is None:
        fast = st.fast_paths[key] = compile_fast(program, *key, st.reads_cores, ViewPlan)
    return fast


def static_info(program: Program) -> Static:
    """The program's Static facts (validating it first), memoized in the program."""
    got = program.cache.get("static")
    if got is None:
        loops, slot_fn = _validated(program)
        got = program.cache["static"] = _static(program, loops, slot_fn)
    return got


def copied_read(ins: Instr) -> int | None:
    """The register a max or min reduction reads (else None), whose loads keep their
    copies: no alias register, no forwarding. On data that comes from main memory,
    numpy runs these reductions up to 2.3x slower than on a tile just copied (f32 rows
    of 128: 1.4 against 0.6 ns per element, copy included; about even for rows of 256
    and more, and 0.49 against 0.57 on data already in the last-level cache). Softmax
    over 4M elements ran 25-35% faster."""
    if ins.op.cat is Cat.REDUCE and ins.operands[2] in (ReduceKind.MAX, ReduceKind.MIN):
        return ins.operands[1]
    return None


def in_place_writer(code: Sequence[Instr | None], i: int) -> int | None:
    """Where load i of a straight-line run of `code` (None marks a loop, which ends the
    run) may skip its copy: the index of the instruction that next writes its register r
    and reads r in place (`sub r, r, x`), else None. The load then keeps a view of the
    global tile and the readers up to that writer read it there; the writer writes the
    register, whose contents afterwards are the same as with the copy. Not past a store
    (which could change the global tile), nor for a writer that is an mma (which
    accumulates into its destination) or a load, nor when a max or min reduction reads r
    first (`copied_read`)."""
    load = code[i]
    assert load is not None
    r = load.operands[0]
    for j in range(i + 1, len(code)):
        ins = code[j]
        if ins is None:
            return None
        cat = ins.op.cat
        if cat in (Cat.STORE, Cat.STORE_ACC, Cat.LOOP) or copied_read(ins) == r:
            return None
        if cat not in NO_DESTINATION and ins.operands[0] == r:
            in_place = cat is not Cat.MMA and cat is not Cat.LOAD and r in read_registers(ins)
            return j if in_place else None
    return None


def _static(p: Program, loops: LoopInfo, slot_fn: SlotFn) -> Static:
    instrs = []
    for ins in p.code:
        regs = tuple(register_operands(ins))
        writes = bool(ins.op.operands) and ins.op.operands[0][1] is Kind.REG
        dst = ins.operands[0] if writes and ins.op.cat not in NO_DESTINATION else -1
        instrs.append(InstrInfo(ins, ins.op.cat, regs, dst, len(ins.operands)))
    pairs: dict[int, list[tuple[int, int]]] = {}
    tiled = []
    for vi, v in enumerate(p.views):
        dims = []
        for d, vd in enumerate(v.dims):
            if vd.index != Index.NONE and vd.tile is not None:
                group = pairs.setdefault(vd.index, [])
                dims.append((d, vd.index, len(group)))
                group.append((vi, d))
        tiled.append(tuple(dims))
    stored_views = frozenset(
        ins.operands[0] for ins in p.code if ins.op.cat in (Cat.STORE, Cat.STORE_ACC)
    )
    stored = frozenset(p.views[v].arg for v in stored_views)
    has_mma = any(ins.op.cat is Cat.MMA for ins in p.code)
    uses_blas = has_mma or any(
        ins.op.cat is Cat.REDUCE and ins.operands[2] is ReduceKind.SUM for ins in p.code
    )
    ok: set[int] = set()
    bad: set[int] = set()
    for ins in p.code:
        if ins.op.cat is Cat.LOAD:
            r = ins.operands[0]
            (bad if p.views[ins.operands[1]].arg in stored else ok).add(r)
        elif ins.op.operands and ins.op.operands[0][1] is Kind.REG:
            bad.add(ins.operands[0])
        if (copied := copied_read(ins)) is not None:
            bad.add(copied)
    alias_regs = frozenset(ok - bad)
    alias_args = frozenset(  # read by alias or forwarded loads: never written
        p.views[ins.operands[1]].arg
        for ins in p.code
        if ins.op.cat is Cat.LOAD and p.views[ins.operands[1]].arg not in stored
    )
    return Static(
        loops,
        slot_fn,
        tuple(instrs),
        tuple(tiled),
        {src: tuple(group) for src, group in pairs.items()},
        stored,
        stored_views,
        has_mma,
        uses_blas,
        alias_regs,
        alias_args,
        tuple(r.dtype.np.itemsize for r in p.registers),
        tuple(r.dtype.np for r in p.registers),
        tuple(a.dtype.np for a in p.args),
        tuple(_planner(k, info) for k, info in enumerate(instrs)),
        tuple(any(r in alias_regs for _, r, _ in info.regs) for info in instrs),
        any(t.op is ExprOp.CORES for slot in p.slots for t in slot.expr),
        program=p,
    )


NO_DESTINATION = (Cat.STORE, Cat.STORE_ACC, Cat.LOOP, Cat.ENDLOOP, Cat.NOP)
"""The categories whose operand 0 is not a register they write."""

_node = partial(tuple.__new__, OpNode)
"""OpNode from a 7-tuple without the NamedTuple's Python-level __new__ (planning builds many)."""

Planner = Callable[["_Specializer", dict[int, Any], list["Shape | None"]], "OpNode"]
"""Shape inference of one instruction: (specializer, class context, register shapes) -> node."""


def _planner(k: int, info: InstrInfo) -> Planner | None:
    """Shape inference specialized to instruction `k`, for the frequent categories (the
    others use the generic `_Specializer.op`). Same checks, same nodes, fewer steps."""
    ins, cat = info.ins, info.cat
    o = ins.operands
    if cat is Cat.LOAD:
        d, v = o

        def load(sp: _Specializer, ctx: dict[int, Any], state: list[Shape | None]) -> OpNode:
            t = sp.tile(k, ctx, v)
            prev = state[d]
            sp.put(k, d, t, state)
            return _node((k, ins, (prev, None), t, t, None, None))

        return load
    if cat is Cat.STORE or cat is Cat.STORE_ACC:
        v, r = o[0], o[1]
        pad = (None,) * (len(o) - 2)

        def store(sp: _Specializer, ctx: dict[int, Any], state: list[Shape | None]) -> OpNode:
            sh = state[r]
            if sh is None:
                raise sp.fail("code", k, "register read before written", f"r{r}")
            t = sp.tile(k, ctx, v)
            if sh != t:
                raise sp.fail("code", k, "stored tile shape mismatch", f"r{r} {sh} vs {t}")
            return _node((k, ins, (None, sh, *pad), None, t, None, None))

        return store
    if cat is Cat.UNARY:
        d, a = o

        def unary(sp: _Specializer, ctx: dict[int, Any], state: list[Shape | None]) -> OpNode:
            x = state[a]
            if x is None:
                raise sp.fail("code", k, "register read before written", f"r{a}")
            prev = state[d]
            sp.put(k, d, x, state)
            return _node((k, ins, (prev, x), x, None, None, None))

        return unary
    if cat is Cat.BINARY:
        d, a, b = o

        def binary(sp: _Specializer, ctx: dict[int, Any], state: list[Shape | None]) -> OpNode:
            x, y = state[a], state[b]
            if x is None or y is None:
                raise sp.fail(
                    "code", k, "register read before written", f"r{a if x is None else b}"
                )
            out = x if x == y else sp.broadcast(k, x, y)
            prev = state[d]
            sp.put(k, d, out, state)
            return _node((k, ins, (prev, x, y), out, None, None, None))

        return binary
    if cat is Cat.FILL:
        d, value, shape = o

        def fill(sp: _Specializer, ctx: dict[int, Any], state: list[Shape | None]) -> OpNode:
            target = sp.shape_operand(k, ctx, shape, state)
            prev = state[d]
            sp.put(k, d, target, state)
            return _node((k, ins, (prev, None, None), target, target, sp.scalar(value), None))

        return fill
    if cat is Cat.MMA:
        d, ra, rb, flags = o
        acc = bool(flags & 4)

        def mma(sp: _Specializer, ctx: dict[int, Any], state: list[Shape | None]) -> OpNode:
            c, a, b = state[d], state[ra], state[rb]
            for r, x in ((d, c if acc else ()), (ra, a), (rb, b)):
                if x is None:
                    raise sp.fail("code", k, "register read before written", f"r{r}")
            assert a is not None and b is not None
            m, ka = (a[-1], a[-2]) if flags & 1 else (a[-2], a[-1])
            kb, n = (b[-1], b[-2]) if flags & 2 else (b[-2], b[-1])
            if ka != kb:
                raise sp.fail("code", k, "mma inner dims differ", f"{a} @ {b}")
            batch = a[:-2] if a[:-2] == b[:-2] else sp.broadcast(k, a[:-2], b[:-2])
            out = (*batch, m, n)
            if acc and c != out:
                raise sp.fail("code", k, "mma accumulator shape mismatch", f"{c} vs {out}")
            sp.put(k, d, out, state)
            return _node((k, ins, (c, a, b, None), out, None, None, None))

        return mma
    if cat is Cat.REDUCE:
        d, src, _, axes, flags = o
        keep = bool(flags & 1)

        def reduce(sp: _Specializer, ctx: dict[int, Any], state: list[Shape | None]) -> OpNode:
            x = state[src]
            if x is None:
                raise sp.fail("code", k, "register read before written", f"r{src}")
            if keep:
                out = tuple([1 if axes >> i & 1 else n for i, n in enumerate(x)])
            else:
                out = tuple([n for i, n in enumerate(x) if not axes >> i & 1])
            prev = state[d]
            sp.put(k, d, out, state)
            return _node((k, ins, (prev, x, None, None, None), out, None, None, None))

        return reduce
    if cat is Cat.BINARY_RS or cat is Cat.BINARY_SR:
        rs = cat is Cat.BINARY_RS
        d, a, sc = (o[0], o[1], o[2]) if rs else (o[0], o[2], o[1])
        imm = sc.tag is ScalarTag.IMM
        value, slot = sc.value, 0 if imm else int(sc.value)

        def scalar(sp: _Specializer, ctx: dict[int, Any], state: list[Shape | None]) -> OpNode:
            x = state[a]
            if x is None:
                raise sp.fail("code", k, "register read before written", f"r{a}")
            prev = state[d]
            sp.put(k, d, x, state)
            shapes = (prev, x, None) if rs else (prev, None, x)
            return _node((k, ins, shapes, x, None, value if imm else sp.s[slot], None))

        return scalar
    return None


# --------------------------------------------------------------------------
# The specializer


class _Specializer:
    """Evaluates slots, checks layout and bounds, and plans tile classes."""

    def __init__(
        self,
        p: Program,
        static: Static,
        device: DeviceSpec,
        max_steps: int,
        fast: FastFn | None = None,
    ) -> None:
        self.p = p
        self.fast = fast or fast_function(p, device)
        self.static = static
        self.instrs = static.instrs
        self.loops = static.loops
        self.device = device
        self.max_steps = max_steps
        self._offsets: Offsets | None = p.offsets
        self.nodes = 0
        self.s: tuple[int, ...] = ()
        # tuples of ints, which the garbage collector stops tracking: a specialization
        # keeps its specializer (for planning) while it is cached
        self.caps: tuple[int, ...] = ()
        self.sizes: tuple[Shape, ...] = ()
        """Each view's sizes."""
        self.keys: dict[int, tuple[tuple[int, int], ...]] = {}
        """Per index source: (size, tile) of each pair it tiles."""

    # -- errors ------------------------------------------------------------

    def fail(self, table: str, i: int, reason: str, detail: str = "") -> BytecodeError:
        """A BytecodeError pointing at a table entry or instruction of the binary."""
        if self._offsets is None:
            self._offsets = layout(self.p)
        o = self._offsets
        at = o.grid if table == "grid" else getattr(o, table)[i] if table != "none" else -1
        return BytecodeError(at, reason, detail)

    # -- steps -------------------------------------------------------------

    def run(
        self, shapes: Sequence[Sequence[int]], params: Sequence[int], cores: int | None
    ) -> Specialization:
        """All the steps, in order; returns the finished Specialization, which this
        specializer plans. The slots are evaluated for `cores` (None: one if tier 0 may
        take the first launch, else the device's; see `Specializer`)."""
        return _bind(self, shapes, params, cores)

    def walker(self) -> _Specializer:
        """Itself: it walks the tables and plans (see `Specializer.walker`)."""
        return self

    def walk(
        self, s: tuple[int, ...] | int, dims: tuple[Shape, ...]
    ) -> tuple[tuple[int, ...], tuple[tuple[int, int], ...], tuple[ViewPlan, ...]]:
        """The slots, registers and views by the table walk, which raises the error of
        the check the fast path failed."""
        if isinstance(s, int):
            raise self.fail("slots", s, "slot value out of int64 range")
        self.s = s
        regs = self.place_registers()
        views = tuple(self.view(i, dims) for i in range(len(self.p.views)))
        return s, regs, views

    def planner_for(self, spec: Specialization) -> _Specializer:
        """This specializer, ready to plan `spec`: the slots, and what planning reads of
        the registers and views."""
        self.s = spec.slots
        views = spec.views
        self.caps = tuple([cap for _, cap in spec.registers])
        self.sizes = tuple([vp.sizes for vp in views])
        self.keys = {
            src: tuple([(views[v].sizes[d], self.view_tile(views[v], d)) for v, d in group])
            for src, group in self.static.pairs.items()
        }
        return self

    def again(
        self, shapes: Sequence[Sequence[int]], params: Sequence[int], cores: int | None
    ) -> Specialization:
        """The same program and shapes specialized anew, for `cores`."""
        fresh = _Specializer(self.p, self.static, self.device, self.max_steps, self.fast)
        return fresh.run(shapes, params, cores)

    @staticmethod
    def view_tile(vp: ViewPlan, d: int) -> int:
        """The tile size of tiled dim `d` of a view."""
        for dim, _, t in vp.tiled:
            if dim == d:
                return t
        raise AssertionError(d)

    def check_call(self, shapes: Sequence[Sequence[int]], params: Sequence[int]) -> None:
        """The caller's shapes and params must match the program's header."""
        p = self.p
        if len(shapes) != len(p.args):
            raise ValueError(f"program takes {len(p.args)} arguments, got {len(shapes)} shapes")
        for i, (s, a) in enumerate(zip(shapes, p.args, strict=True)):
            if len(s) != a.rank:
                raise ValueError(f"argument a{i}: shape {s} does not fit rank {a.rank}")
            if any(not 0 <= n <= I64_MAX for n in s):  # (slots.DIM_RANGE)
                raise ValueError(f"argument a{i}: shape {s} has a dim outside 0..2**63-1")
        if len(params) != p.n_params:
            raise ValueError(f"program takes {p.n_params} params, got {len(params)}")

    def eval_slots(self, shapes: tuple[Shape, ...], params: tuple[int, ...], cores: int) -> None:
        """Run the compiled slot function; a slot outside int64 is an error."""
        got = self.static.slot_fn(shapes, params, cores)
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
        """Registers must be aligned, inside local memory (cube memory for a program
        with an mma), and pairwise disjoint."""
        out: list[tuple[int, int]] = []
        spans: list[tuple[int, int, int]] = []
        dev = self.device
        cube = self.static.has_mma
        memory = dev.memory_bytes(cube)
        s = self.s
        for i, (r, item) in enumerate(zip(self.p.registers, self.static.itemsizes, strict=True)):
            cap = 1
            for d in r.shape:
                n = s[d]
                if n < 0:
                    raise self.fail("registers", i, "negative register dim", f"s{d} = {n}")
                cap *= n
            off = s[r.offset]
            if off < 0:
                raise self.fail("registers", i, "negative register offset", f"s{r.offset} = {off}")
            nbytes = cap * item
            if off % dev.alignment:
                raise self.fail("registers", i, "misaligned register", f"{off} % {dev.alignment}")
            if off + nbytes > memory:
                raise self.fail(
                    "registers",
                    i,
                    f"register exceeds {'cube' if cube else 'local'} memory",
                    f"r{i}: bytes {off}..{off + nbytes} > {memory}",
                )
            if nbytes:
                spans.append((off, off + nbytes, i))
            out.append((off, cap))
        self.caps = tuple([cap for _, cap in out])
        spans.sort()
        for (_, end, a), (start, _, b) in itertools.pairwise(spans):
            if start < end:
                raise self.fail("registers", max(a, b), "registers overlap", f"r{a} and r{b}")
        return tuple(out)

    def view(self, i: int, shapes: tuple[Shape, ...]) -> ViewPlan:
        """Slot values of a view, and the proof that it stays inside its argument."""
        v = self.p.views[i]
        s = self.s
        sizes = tuple([s[d.size] for d in v.dims])
        if any(n < 0 for n in sizes):
            for d in v.dims:
                self.nonneg("views", i, d.size, "view size")
        strides = tuple([s[d.stride] for d in v.dims])
        offset = s[v.offset]
        tiled = tuple(
            (k, d.index, self.nonneg("views", i, d.tile, "tile size"))
            for k, d in enumerate(v.dims)
            if d.index != Index.NONE and d.tile is not None
        )
        numel = math.prod(shapes[v.arg])
        item = self.static.arg_dtypes[v.arg].itemsize
        if nominal_bytes(sizes, item) > MAX_ARRAY_BYTES:
            raise self.fail("views", i, "view too large", f"sizes {sizes}")
        empty = 0 in sizes
        natural = False
        if not empty:
            lo = hi = offset
            acc, dense = 1, True
            for n, st in zip(reversed(sizes), reversed(strides), strict=True):
                reach = (n - 1) * st
                if reach < 0:
                    lo += reach
                else:
                    hi += reach
                if n != 1 and st != acc:
                    dense = False
                acc *= n
            if lo < 0 or hi >= numel:
                raise self.fail(
                    "views", i, "view out of bounds", f"elements {lo}..{hi} of a{v.arg} ({numel})"
                )
            natural = offset == 0 and dense and acc == numel
            if not natural and i in self.static.stored_views and overlaps_itself(sizes, strides):
                raise self.fail("views", i, "store view overlaps itself", f"sizes {sizes}")
        steps = () if natural else tuple(_byte_strides(sizes, strides, item))
        return ViewPlan(v.arg, offset * item, sizes, steps, tiled, empty, natural)

    # -- tile classes --------------------------------------------------------

    def segments(self, source: int, n: int) -> list[tuple[int, int, tuple[int, ...]]]:
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
        bounds = sorted(cuts)
        out = []
        for lo, hi in itertools.pairwise(bounds):
            key = tuple(
                [
                    (tile if size - lo * tile >= tile else max(0, size - lo * tile))
                    if tile > 0
                    else 0
                    for size, tile in pairs
                ]
            )
            out.append((lo, hi, key))
        return out

    def __call__(self) -> GridPlan:
        """The specialization's planner: `plan_grid`."""
        return self.plan_grid()

    def plan_grid(self) -> GridPlan:
        """Tile classes of the grid (product of per-axis classes) and the work bound."""
        extents = tuple([self.s[g] for g in self.p.grid])
        if min(extents) < 0:
            for g in self.p.grid:
                self.nonneg("grid", 0, g, "grid extent")
        ntiles = math.prod(extents)
        axis_segments, keys, counts = [], [], []
        for a, n in enumerate(extents):
            ids: dict[tuple[int, ...], int] = {}
            segs, axis_keys, axis_counts = [], [], []
            for lo, hi, key in self.segments(Index.grid(a), n):
                c = ids.get(key)
                if c is None:
                    c = ids[key] = len(axis_keys)
                    axis_keys.append(key)
                    axis_counts.append(0)
                axis_counts[c] += hi - lo
                segs.append((lo, hi, c))
            axis_segments.append(tuple(segs))
            keys.append(axis_keys)
            counts.append(axis_counts)
        bodies: dict[tuple[int, ...], Body] = {}
        steps, nbytes = ntiles, 0
        n_regs, n_code = len(self.p.registers), len(self.instrs)
        sources = [Index.GRID0 + a for a in range(len(extents))]
        for combo in itertools.product(*[range(len(k)) for k in keys]):
            ctx: dict[int, Any] = {
                src: keys[a][c] for a, (src, c) in enumerate(zip(sources, combo, strict=True))
            }
            body, _ = self.body(0, n_code, ctx, [None] * n_regs)
            bodies[combo] = body
            count = 1
            for a, c in enumerate(combo):
                count *= counts[a][c]
            body_steps, body_bytes = self.cost(body)
            steps += count * body_steps
            nbytes += count * body_bytes
        if steps > self.max_steps:
            raise self.fail("grid", 0, "too many steps", f"{steps} > {self.max_steps}")
        inline = ntiles < 2 or nbytes < INLINE_BYTES
        return GridPlan(extents, tuple(axis_segments), bodies, steps, nbytes, ntiles, inline)

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
                elif cat is Cat.STORE or cat is Cat.STORE_ACC:
                    nbytes += math.prod(n.extents) * items[n.ins.operands[1]]
            if steps > self.max_steps:
                raise self.fail("grid", 0, "too many steps", f"> {self.max_steps}")
        return steps, nbytes

    # -- shape inference -----------------------------------------------------

    def body(
        self, start: int, end: int, ctx: dict[int, Any], state: list[Shape | None]
    ) -> tuple[Body, list[Shape | None]]:
        """Type code[start:end] for one tile class; returns nodes and the register shapes after."""
        nodes: list[Node] = []
        k = start
        instrs = self.instrs
        planners = self.static.planners
        op = self.op
        while k < end:
            self.nodes += 1
            if self.nodes > MAX_PLAN_NODES:
                raise self.fail("code", k, "too many tile classes")
            plan = planners[k]
            if plan is not None:
                nodes.append(plan(self, ctx, state))
                k += 1
                continue
            info = instrs[k]
            cat = info.cat
            if cat is Cat.LOOP:
                stop = self.loops.end_of[k]
                node, state = self.loop(k, stop, ctx, state)
                nodes.append(node)
                k = stop + 1
                continue
            if cat is not Cat.NOP:
                nodes.append(op(k, info, ctx, state))
            k += 1
        return tuple(nodes), state

    def loop(
        self, k: int, stop: int, ctx: dict[int, Any], state: list[Shape | None]
    ) -> tuple[LoopNode, list[Shape | None]]:
        """Each run of equal-extent iterations gets its own body; carried shapes must be stable."""
        level = self.loops.depth_at[k]
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
        return LoopNode(k, level, tuple(segs)), state

    def extent(self, k: int, ctx: dict[int, Any], view: int, dim: int) -> int:
        """Extent of dim `dim` of view `view` in the tile class `ctx`."""
        for d, src, pos in self.static.tiled[view]:
            if d == dim:
                key = ctx.get(src)
                if key is None:
                    raise self.fail("code", k, "view tiled by a loop that does not enclose it")
                return key[pos]
        return self.sizes[view][dim]

    def tile(self, k: int, ctx: dict[int, Any], view: int) -> Shape:
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

    def op(self, k: int, info: InstrInfo, ctx: dict[int, Any], state: list[Shape | None]) -> OpNode:
        """Shapes of the operands, the result shape, and the checks between them."""
        shapes: list[Shape | None] = [None] * info.n_operands
        for pos, v, reads in info.regs:
            sh = state[v]
            if sh is None and reads:
                raise self.fail("code", k, "register read before written", f"r{v}")
            shapes[pos] = sh
        ins = info.ins
        out, extents, scalar = _INFER[info.cat](self, k, ins, ctx, shapes, state)
        if out is not None:
            self.put(k, ins.operands[0], out, state)
        return OpNode(k, ins, tuple(shapes), out, extents, scalar)

    def put(self, k: int, dst: int, out: Shape, state: list[Shape | None]) -> None:
        """Give register `dst` the shape `out` (instruction k's result), which must fit."""
        n = math.prod(out)
        if n == 0 and nominal_bytes(out, 8) > MAX_ARRAY_BYTES:
            raise self.fail("code", k, "tile too large", f"{out}")
        if n > self.caps[dst]:
            raise self.fail(
                "code", k, "tile does not fit register", f"r{dst}: {out} > {self.caps[dst]}"
            )
        state[dst] = out

    def shape_operand(
        self, k: int, ctx: dict[int, Any], shape: tuple, state: list[Shape | None]
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


def _only_initialized(entry: list[Shape | None], after: list[Shape | None]) -> bool:
    """Whether `after` differs from `entry` only in registers `entry` had no shape for."""
    for e, a in zip(entry, after, strict=True):  # noqa: SIM110 (no generator frame per register)
        if e is not None and e != a:
            return False
    return True


def broadcast_shapes(shapes: list[Shape]) -> Shape | None:
    """numpy's broadcasting rule on shapes; None when they do not broadcast."""
    if len(shapes) == 2 and len(shapes[0]) == len(shapes[1]):
        out = []
        for x, y in zip(shapes[0], shapes[1], strict=True):
            if x == y or y == 1:
                out.append(x)
            elif x == 1:
                out.append(y)
            else:
                return None
        return tuple(out)
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


def _byte_strides(sizes: Shape, strides: Shape, item: int) -> list[int]:
    """numpy's strides of a view: bytes, 0 for a dim of one element."""
    return [t * item if n > 1 else 0 for n, t in zip(sizes, strides, strict=True)]


def nominal_bytes(shape: Shape, itemsize: int) -> int:
    """What numpy checks against its size limit: the product of the non-zero dims."""
    return math.prod(max(n, 1) for n in shape) * itemsize


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


_READ: dict[int, tuple[Instr, frozenset[int]]] = {}


def read_registers(ins: Instr) -> frozenset[int]:
    """The registers `ins` reads (memoized by identity: programs share their Instr objects)."""
    got = _READ.get(id(ins))
    if got is None or got[0] is not ins:
        got = (ins, frozenset(reg for _, reg, read in register_operands(ins) if read))
        if len(_READ) > 65536:
            _READ.clear()
        _READ[id(ins)] = got
    return got[1]


def _writes_only(ins: Instr) -> bool:
    """Whether operand 0 is only written (not read) by this instruction."""
    cat = ins.op.cat
    if cat is Cat.MMA:
        return not ins.operands[3] & 4
    return cat not in NO_DESTINATION


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
    a, b = sh[1], sh[2]
    return (a if a == b else s.broadcast(k, a, b)), None, None


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
