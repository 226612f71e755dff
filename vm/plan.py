"""What specialization produces and the executors run: a Specialization and its plan.

A `Specialization` is a program bound to concrete argument shapes: its slot
values, its registers' places in local memory and its views (`ViewPlan`),
all checked. Its `GridPlan` cuts the grid and every loop into tile classes
(runs of counter values whose tiles have equal extents) and gives each class
a body of typed instructions (`OpNode`, `LoopNode`), which the planned
executor binds to numpy views. The unplanned executor runs a first small
launch without it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

import numpy as np

from dvm.vm.device import DeviceSpec
from dvm.vm.isa import Cat
from dvm.vm.program import Instr, Program

DEFAULT_MAX_STEPS = 1 << 34
"""Largest number of instructions (and tiles) one launch may execute."""

INLINE_BYTES = 256 * 1024
"""Launches moving fewer global bytes than this run on the calling thread."""

BLAS_THREADS_GEMM = 1 << 24
"""A launch whose largest gemm does at least this many multiply-adds (256^3) runs its
tiles on the calling thread and lets BLAS use its own threads for each: one sgemm
on all the CPUs, its threads sharing the packed panels, beats one single-threaded
sgemm per core (by about 20% at 1024^3), and OpenBLAS's threads, which spin for a
while after each of numpy's own multithreaded calls, then do the work instead of
taking a core from the VM (which halved a VM matmul run right after numpy's `@`).
Below it, a launch whose tiles the cores share (a batch of smaller gemms) holds BLAS at
one thread: a small gemm on several BLAS threads slows down many times when another
CPU is busy; one on the calling thread alone still lets BLAS's threads share each gemm
from BLAS_SHARED_GEMM on."""

BLAS_SHARED_GEMM = 1 << 18
"""Multiply-adds from which a planned launch on the calling thread alone lets BLAS's
threads share each of its gemms, as numpy's `@` does: OpenBLAS's own threshold (64^3),
below which it runs a gemm on one thread whatever its count, so a launch of smaller ones
keeps it held (two C calls fewer). At 27x446x909: 0.17 ms on BLAS's two threads, 0.21 on
one, 0.39 as the VM's two cores of one thread each (a worker wakes tens of microseconds
late and each core packs all of B). With another process busy on a CPU, BLAS's threads
wait for it, numpy's alike: a scheduler tick (4-16 ms) per call where one thread per
core, which takes the other's tiles, would not (see docs/performance.md, "BLAS")."""

SHARE_WORK = 2_000_000
"""Estimated work (in passes of a plain elementwise op over one element, about 0.1 ns
each on one core: see `instruction_work`) below which a launch gains nothing from
sharing its tiles among the cores: waking a worker and handing the interpreter lock
back and forth at every numpy call cost tens of microseconds, and a second core
speeds a memory-bound launch up by about a third, not a half."""

SHARE_GEMM = 4_000_000
"""Multiply-adds below which a stack of launches that all have an mma, moving fewer
than SHARE_GEMM_BYTES in all, runs on one core: its gemms are numpy calls of a few
microseconds, between which the cores take turns at the interpreter lock, so a
second core adds its wake-up and the lock's hand-offs more than it saves (MMoE's
three projections at 569 rows and 4 experts, 1.3M multiply-adds: 81 us on one
core, 124 us on two)."""

SHARE_GEMM_BYTES = 2 << 20
"""(See SHARE_GEMM.)"""

CHEAP_UNARY = frozenset(
    {"neg", "abs", "floor", "ceil", "round", "trunc", "logical_not", "isfinite", "isinf"}
    | {"isnan", "sign", "bitwise_not"}
)
"""Unary ops as cheap per element as an add; the others (exp, tanh, erf, sqrt, ...)
cost several times more."""

UNPLANNED_BYTES = 1 << 20
"""A first launch whose arguments hold fewer bytes than this runs unplanned, on the
calling thread; larger ones are planned at once: their work dwarfs planning, and the
planned executor spreads it over the cores."""

Shape = tuple[int, ...]


def share_bytes(program: Program, has_mma: bool) -> int:
    """The global bytes from which a launch of the program shares its tiles among the
    cores: INLINE_BYTES, or more for a program doing less work per byte than SHARE_WORK
    over INLINE_BYTES (an add of two arrays reaches SHARE_WORK at about 6 MB, softmax
    at about 1 MB). A program with an mma keeps INLINE_BYTES: its work grows with the
    inner dim, which its bytes do not tell."""
    if has_mma:
        return INLINE_BYTES
    work = sum(map(instruction_work, program.code))  # per element of a tile
    per_element = sum(a.dtype.np.itemsize for a in program.args)
    return max(INLINE_BYTES, math.ceil(SHARE_WORK * per_element / max(work, 1)))


def instruction_work(ins: Instr) -> int:
    """An instruction's work per element of its tile, in passes of a plain elementwise op
    (an estimate: a loop's body counts once, as for one pass)."""
    cat, name = ins.op.cat, ins.op.name.split(".")[0]
    if cat in (Cat.LOOP, Cat.ENDLOOP, Cat.NOP):
        return 0
    if cat is Cat.UNARY:
        return 1 if name in CHEAP_UNARY else 5
    if cat in (Cat.BINARY, Cat.BINARY_RS, Cat.BINARY_SR):
        return {"pow": 5, "div": 2}.get(name, 1)
    if cat is Cat.REDUCE:
        return 2
    return 1


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
    """Set by the planned executor when the store that follows is fused into this op:
    the view whose current tile this op writes directly (see `planned.fused_stores`)."""


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
    """Small enough (less traffic than its program's `Static.share_bytes`, or one tile) to
    run on the calling thread."""
    largest_gemm: int = 0
    """The most multiply-adds (M*N*K, per matrix of a batch) of an `mma` in a tile; 0
    without one. At BLAS_THREADS_GEMM or more, BLAS's threads run the gemms."""
    gemms: int = 0
    """The multiply-adds of every `mma` of one launch (see `SHARE_GEMM`)."""


class Replanner(Protocol):
    """What a Specialization asks of the specializer that made it (`specialize.Specializer`)."""

    def plan(self, spec: Specialization) -> GridPlan: ...

    def again(self, shapes: tuple[Shape, ...], params: tuple[int, ...], cores: int) -> Any: ...


@dataclass(eq=False, slots=True)
class Specialization:
    """A program bound to concrete shapes: slot values, checked layout and the tile plan
    (slots: a new shape makes one, and its 28 fields then fill a fixed layout, not a dict)."""

    program: Program
    device: DeviceSpec
    shapes: tuple[Shape, ...]
    params: tuple[int, ...]
    slots: tuple[int, ...]
    registers: tuple[tuple[int, int], ...]
    """(byte offset, capacity in elements) per register."""
    registers_end: int
    """The local-memory byte just past the highest register (what a first unplanned
    launch maps: the fast path finds it as it checks the registers)."""
    views: tuple[ViewPlan, ...]
    specializer: Replanner = field(repr=False)
    """Plans the tile classes, when `plan` is first needed (most shapes of a stream are
    never planned: their one launch runs unplanned)."""
    has_mma: bool
    uses_blas: bool
    """Whether some instruction calls BLAS (mma, or a row sum done as a matrix-vector product)."""
    stored_args: frozenset[int]
    alias_regs: frozenset[int]
    """Registers written only by loads from arguments the program never stores to."""
    alias_args: frozenset[int]
    """The arguments loads read that the program never writes: alias registers' loads, and
    loads the planned executor may forward, read them in place."""
    arg_dtypes: tuple[np.dtype, ...]
    """Each argument's dtype (the program's): with `shapes`, launch's fast check."""
    cores: int = 1
    """The cores the slots were evaluated for (tile sizes give each core a share; 1
    when no slot reads the count)."""
    small: bool = False
    """Whether its arguments hold fewer than UNPLANNED_BYTES: a first launch then runs
    unplanned."""
    idle: bool = False
    """Whether no argument the program stores to has an element: a launch can write
    nothing, so it runs no tile (however many empty tiles its grid has)."""
    shared: bool = False
    """Whether its launches share the work among the cores once planned: `plan` then
    evaluates the slots again for the device's cores if they were for fewer."""
    shares_unplanned: bool = False
    """Whether its unplanned launches share the tiles among the cores: it is not small
    (its slots are for the device's cores), shared, and its tiles are independent
    (`Static.independent_tiles`)."""
    executables: dict[tuple[int, bool, bool, int], Any] = field(default_factory=dict, repr=False)
    """Per-core bound closures by (cores, stats, alias, copy), built by the planned
    executor on first launch and reused (a stack the cores drain takes a copy per
    repeated member)."""
    default_cores: int = field(default=0, repr=False)
    """Cores a launch uses when the caller does not say (0: not decided yet)."""
    memory: Any = field(default=None, repr=False)
    """The device's local memories (`memory.DeviceMemory`), found on first launch."""
    max_steps: int = DEFAULT_MAX_STEPS
    """The work bound a launch may not exceed."""
    ready: list[Any] = field(default_factory=[None, None].copy, repr=False)  # (no frame)
    """Per alias (False, True): a known shape's launch on one core as one closure, once
    its executable is bound (`launch._inline_runner`); None until then."""
    launched: bool = field(default=False, repr=False)
    """Whether a launch ran: the first may run unplanned."""
    walked: int = field(default=0, repr=False)
    """Instructions its unplanned launches have run."""
    shared_launches: int = field(default=0, repr=False)
    """Its unplanned launches whose tiles the cores shared (`shares_unplanned`)."""
    plan_after: int = 0
    """Its launches run unplanned (when small) until they have run this many
    instructions (0: only the first; see `Specializer`)."""
    _plan: GridPlan | None = field(default=None, repr=False)

    def may_run_unplanned(self, unplanned: bool) -> bool:
        """Whether a launch may still run unplanned (when small and not planned): the
        first, one asked to (`unplanned`), and those before `plan_after` instructions."""
        return unplanned or not self.launched or self.walked < self.plan_after

    @property
    def plan(self) -> GridPlan:
        """The tile classes and work bound (planned on first use; may raise BytecodeError)."""
        if self._plan is None:
            if self.shared:
                cores = self.device.cores_for(self.has_mma)
                if self.cores < cores:
                    self.retile(cores)
            self._plan = self.specializer.plan(self)
        return self._plan

    def retile(self, cores: int) -> None:
        """Evaluate the slots again for `cores` (before planning: nothing is bound to
        the old values yet). A first launch runs unplanned on one core with tiles for
        one; the planned launches that follow get one tile per core."""
        again = self.specializer.again(self.shapes, self.params, cores)
        self.slots, self.registers, self.views = again.slots, again.registers, again.views
        self.registers_end = again.registers_end
        self.cores = cores

    @property
    def planned(self) -> bool:
        return self._plan is not None
