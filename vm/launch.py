"""Stage 4: launching. `launch` runs a specialization (or a program) on arrays.

A launch checks its arrays against the specialization (`LaunchError`), then
runs it on the device's cores, one launch at a time per device. A
specialization's first launches run unplanned (`unplanned.py`: no tile plan, one
generated function per program): on the calling thread when small, else, when its
tiles write disjoint memory, on the cores, each running chunks of the grid's first
axis. Later ones run planned (`planned.py`): the tile classes bound per core, the
tiles inline on the calling thread when few, else shared among the cores, each
taking the next chunk of about tiles/(8 cores) until none are left (so a core
slowed down by other work takes fewer). BLAS is held at one thread while a
launch that calls it runs (else OpenBLAS's own threads spin against the
cores), except a planned launch on the calling thread alone whose gemms BLAS
would share among its threads (`BLAS_SHARED_GEMM`): a matmul of one tile, as
the host's matmuls are, or of large gemms (`BLAS_THREADS_GEMM`), whose tiles
then run in turn; BLAS's own threads then share each gemm, as in numpy's `@`.
So do an unplanned launch's gemms on the calling thread, outside a call that holds
BLAS (inside one too from BLAS_THREADS_GEMM). `launch_stack` runs independent launches as one.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from dvm.vm import blas, plan
from dvm.vm.device import DeviceSpec
from dvm.vm.errors import LaunchError
from dvm.vm.kernels import QUIET
from dvm.vm.memory import DeviceMemory, Job, Kept, device_memory, pool, trim
from dvm.vm.plan import BLAS_SHARED_GEMM, BLAS_THREADS_GEMM, Specialization
from dvm.vm.program import ARRAY_DTYPE, ARRAY_SHAPE, C_CONTIGUOUS, Program
from dvm.vm.specialize import fast_function, specialize
from dvm.vm.static import static_info
from dvm.vm.unplanned import generated
from dvm.vm.unplanned_calls import fail

if TYPE_CHECKING:
    from dvm.vm.planned import Executable
    from dvm.vm.stats import CoreStats, LaunchStats

FIRST_INLINE_BYTES = 1 << 20
"""A multi-core executable's first launch runs on one core when it moves less than this:
binding the other cores' classes costs more than they save on a shape that may not come
back; they bind when the shape does."""

SHARED_PLAN_PRICE = 3
"""What planning a launch whose unplanned launches the cores share costs per core, in
the patience's unit (`Specializer`: about one tile class typed and bound): each core
binds each class, the full tiles' and the tail's, after the planner types them. So
such a launch counts its instructions once per this many per core toward `plan_after`.
At 1M float32 on 2 cores, planning cost 0.5-0.85 ms of CPU while a planned launch
saved 0.01-0.1 ms on a shared unplanned one (`benchmarks/lazy.py --plan-cost`): at 16
times its instructions the patience planned such a shape at its third or fourth call,
which the calls after it seldom repay."""


def prepare(program: Program, device: DeviceSpec, launcher: bool = True) -> Program:
    """Do at once what every shape of `program` shares and its first launch would do
    otherwise: validation, the fast path (for `device`) and, with `launcher`, the
    unplanned executor's code, so that a first call pays only for its shape (without it,
    the program's first launch makes that code, once). Returns the program. (The device's
    local memory is mapped as launches reach it: see `DeviceMemory.reach`.)"""
    fast_function(program, device)
    if launcher:
        generated(program)
    return program


def launch(
    target: Program | Specialization,
    args: Sequence[np.ndarray],
    params: Sequence[int] = (),
    *,
    device: DeviceSpec | None = None,
    cores: int | None = None,
    stats: bool = False,
    trace: bool = False,
    fresh: bool = False,
    unplanned: bool = False,
    checked: bool = False,
) -> LaunchStats | None:
    """Run a program (specialized for the args' shapes) or a specialization on `args`.

    `cores` caps the cores used (default: the device's vector cores, or its
    cube cores for a program with `mma`, at most the host's CPUs and the
    number of tiles; small launches use one). With `stats` (or `trace`),
    returns a LaunchStats; otherwise None. `fresh` promises that the arrays the
    program writes were just allocated (no argument read shares memory with them),
    which skips the overlap test that decides whether loads may read in place.
    `checked` promises more, for a specialization: the arrays have its shapes and
    dtypes, in C order (the runtime keys its plans by its inputs' shapes and dtypes,
    checks a new plan's inputs with `check_inputs` and allocates the outputs), so the
    launch checks none of them.

    A launch that can write nothing (no argument the program stores to has an element)
    runs no tile: it costs the same whatever its empty grid's extents. A
    specialization's first launch runs unplanned when its arguments are small (on the
    calling thread) or its tiles independent (`shares_unplanned`: on the cores), and so
    do later ones until they have run its `plan_after` instructions (`Specializer`'s
    patience); the next plans it. `unplanned` asks for an unplanned launch again while
    it is not planned: a caller that launches one specialization several times for one
    request (a kernel shared by identical launches) pays planning only when the shape
    comes back.
    """
    if isinstance(target, Program):
        spec = _specialization(target, args, params, device)
        _check_args(spec, args, fresh)
    else:
        spec = target
        if not checked:
            _check_args(spec, args, fresh)
    if spec.idle:
        return _stats([], 0, 0, 0, 1) if stats or trace else None
    alias = bool(spec.alias_args) if fresh else _may_alias(spec, args)
    memory = spec.memory
    if memory is None:
        memory = spec.memory = device_memory(spec.device)
    if cores is None and not (stats or trace):
        ready = spec.ready[alias]
        if ready is not None:  # a known shape's launch on one core
            with memory.lock:
                return ready(args)
    # One launch at a time per device. Planning may evaluate the slots again for more
    # cores (`Specialization.retile`): under the lock, no unplanned launch reads them.
    with memory.lock:
        if spec.may_run_unplanned(unplanned):
            spec.launched = True
            if not spec.planned and cores is None and not (stats or trace):
                if spec.small:
                    return _unplanned_launch(spec, args, alias, memory)
                if spec.shares_unplanned:
                    return _shared_unplanned_launch(spec, args, alias, memory)
        if cores is None:
            n = spec.default_cores
            if not n:
                n = spec.default_cores = _default_cores(spec)
        else:
            n = 1 if spec.plan.inline else _planned_cores([spec], cores)
        ex = _executable(spec, n, stats or trace, alias)
        threads = cores is None and _on_blas_threads([spec], n)
        if cores is None and n == 1 and not (stats or trace):
            spec.ready[alias] = _inline_runner(ex, threads)
        if threads:
            return _blas_threads(_run, ex, args, trace, False)
        return _run(ex, args, trace, ex.uses_blas)


def _on_blas_threads(specs: Sequence[Specialization], n: int) -> bool:
    """Whether launches run on `n` cores leave BLAS its own threads: on the calling thread
    alone, with a gemm BLAS would share among them (BLAS_SHARED_GEMM)."""
    return n == 1 and max(spec.plan.largest_gemm for spec in specs) >= BLAS_SHARED_GEMM


def _inline_runner(ex: Executable, threads: bool) -> Callable[[Sequence[np.ndarray]], None]:
    """A launch of `ex`, bound to one core, as one closure: what `_run` does for it, which
    a known shape's launches then call directly (a tiny launch's overhead is mostly
    Python frames); `threads`: its gemms run on BLAS's threads (BLAS_SHARED_GEMM)."""
    run = ex.caller_runner(*_quiet())
    if threads:
        return partial(_blas_threads, run)
    if not ex.uses_blas:
        return run
    return blas.holding(run)


def _quiet() -> tuple[Callable[[], Any], Callable[[Any], None]]:
    """What enters numpy's quiet error state and what leaves it, for a launch's closure
    (`Executable.caller_runner`): its context variable's own set and reset when numpy's
    private names are there, else its errstate."""
    var, ignore = QUIET.var, QUIET.ignore
    if var is None or ignore is None:
        return QUIET.enter, QUIET.exit
    return partial(var.set, ignore), var.reset


def _default_cores(spec: Specialization) -> int:
    """The cores a launch uses when the caller does not say: one when it is small, or when
    its gemms are large enough for BLAS's own threads (BLAS_THREADS_GEMM)."""
    if spec.plan.inline or spec.plan.largest_gemm >= BLAS_THREADS_GEMM:
        return 1
    return _planned_cores([spec], None)


def launch_stack(
    members: Sequence[tuple[Specialization, Sequence[np.ndarray], bool]],
    *,
    fresh: bool = False,
    in_turn: bool = True,
    checked: bool = False,
) -> None:
    """Run independent launches as one (a `tensor.stack`): one hold of the device's
    launch lock and of BLAS, and the cores drain all the members' tiles from one
    counter, so kernels too small to fill the cores each share them side by side.
    With `in_turn`, the members' chunks of tiles alternate (chunk i of each member,
    then chunk i + 1), so that members reading the same rows, as a stack of
    projections of one input does, read them while they are in cache; else each
    member's tiles come before the next one's.

    Members are (specialization, args, unplanned), `unplanned`, `fresh` and `checked`
    as for `launch`. A member whose launch runs unplanned (on the calling thread)
    runs by itself first, and so does one for another device than the first's."""
    if not members:
        return
    device = members[0][0].device
    stacked: list[tuple[Specialization, Sequence[np.ndarray], bool]] = []
    for spec, args, unplanned in members:
        if spec.idle:
            if not checked:
                _check_args(spec, args)
        elif spec.device is not device or (
            spec.may_run_unplanned(unplanned) and spec.small and not spec.planned
        ):
            launch(spec, args, fresh=fresh, unplanned=unplanned, checked=checked)
        else:
            if not checked:
                _check_args(spec, args)
            alias = bool(spec.alias_args) if fresh else _may_alias(spec, args)
            stacked.append((spec, args, alias))
    if not stacked:
        return
    memory = device_memory(device)
    with memory.lock:
        n = _planned_cores([spec for spec, _, _ in stacked], None)
        for spec, _, _ in stacked:
            spec.launched = True
        if _on_blas_threads([spec for spec, _, _ in stacked], n):
            _blas_threads(_run_quietly, _run_stack, stacked, n, in_turn)
            return
        uses_blas = any(spec.uses_blas for spec, _, _ in stacked)
        _blas_held(uses_blas, _run_quietly, _run_stack, stacked, n, in_turn)


def stack_runner(
    members: Sequence[tuple[Specialization, bool]],
) -> Callable[[Sequence[Sequence[np.ndarray]]], None] | None:
    """A stack's launch at known shapes as one closure taking each member's arrays, as
    a known launch's closure is one (`Specialization.ready`): `launch_stack` of planned
    members (specialization, alias) on the calling thread, one after the other, under
    the device's lock and one hold of BLAS. None where `launch_stack` would do anything
    else: a member not planned yet, idle or for another device, the stack shared among
    the cores, gemms on BLAS's threads."""
    specs = [spec for spec, _ in members]
    if not specs:
        return None
    device = specs[0].device
    if any(s.idle or not s.planned or s.device is not device for s in specs):
        return None
    n = _planned_cores(specs, None)
    if n != 1 or _on_blas_threads(specs, n):
        return None
    runners = [_executable(s, 1, False, alias).caller_runner(*_quiet()) for s, alias in members]
    lock = device_memory(device).lock

    def run_members(arrays: Sequence[Sequence[np.ndarray]]) -> None:
        for run, args in zip(runners, arrays, strict=True):
            run(args)

    held = run_members
    if any(spec.uses_blas for spec in specs):
        held = blas.holding(run_members)

    def run(arrays: Sequence[Sequence[np.ndarray]]) -> None:
        with lock:
            held(arrays)

    return run


def _run_stack(
    stacked: Sequence[tuple[Specialization, Sequence[np.ndarray], bool]], n: int, in_turn: bool
) -> None:
    """The members' tiles, on executables bound to `n` cores: member by member on the
    calling thread when one core runs them, or when one is new and they move less
    than FIRST_INLINE_BYTES (as `_run_held` decides for one launch); else drained by
    the cores, each member with an executable of its own (a specialization met twice
    takes a copy, as an executable holds its launch's arrays while it runs)."""
    mains = [_executable(spec, n, False, alias) for spec, _, alias in stacked]
    first = any(ex.launches == 0 for ex in mains)
    for ex in mains:
        ex.launches += 1
    moved = sum(spec.plan.global_bytes for spec, _, _ in stacked)
    inline = n == 1 or (first and moved < FIRST_INLINE_BYTES)
    executables = mains
    if not inline:
        copies: dict[int, int] = {}
        executables = []
        for spec, _, alias in stacked:
            copy = copies[id(spec)] = copies.get(id(spec), -1) + 1
            executables.append(_executable(spec, n, False, alias, copy))
    try:
        for ex, (_, args, _) in zip(executables, stacked, strict=True):
            ex.set_args(args)
            if inline:
                ex.run_all()
        if not inline:
            pool().run(_share_tiles(executables, n, in_turn))
    finally:
        for ex in executables:
            ex.clear_args()


def _unplanned_launch(
    spec: Specialization, args: Sequence[np.ndarray], alias: bool, memory: DeviceMemory
) -> None:
    """A first launch without planning or binding (see `unplanned.py`), on the
    calling thread. Its Python work holds the GIL, so cores stepping through vector
    tiles side by side wait for each other; and a worker thread that slept since the
    last call wakes late (the longer it slept, the later), which a first call meets
    after whatever came before it. Sharing even a small mma's grid, whose tiles run in
    BLAS without the GIL, costs more on streams of new shapes than it saves (see
    docs/performance.md). Its gemms, on the calling thread alone, run on BLAS's own
    threads (as a planned launch's from BLAS_SHARED_GEMM: OpenBLAS keeps smaller ones
    on one), unless the call holds BLAS for several launches (`with_blas_held`) and
    they are below BLAS_THREADS_GEMM (from which a planned launch's gemms run on them
    too)."""
    if not spec.walked:  # its registers stay where they are until it is planned
        _reach_registers(memory, spec, alias, 0)
    kept = memory.unplanned
    if _gemms_on_blas_threads(spec):
        spec.walked += _blas_threads(_run_quietly, run_unplanned, spec, args, kept, alias)
        return
    hold = spec.uses_blas and not (spec.has_mma and not blas.HELD_FROM[0])
    spec.walked += _blas_held(hold, _run_quietly, run_unplanned, spec, args, kept, alias)


def run_unplanned(spec: Specialization, args: Sequence[np.ndarray], kept: Kept, alias: bool) -> int:
    """Run a launch of `spec` on `args` unplanned with the local memory of `kept`, once
    it is known to stay within the work bound; returns the instructions it ran. `alias`:
    whether loads may keep views of global memory (none read shares one written)."""
    s = spec.slots
    dec = generated(spec.program)
    got = dec.bound(s)
    if got is None:
        g = next(g for g in spec.program.grid if s[g] < 0)
        raise fail(spec, -1, "negative grid extent", f"s{g} = {s[g]}")
    extents, steps = got
    if steps > spec.max_steps:
        raise fail(spec, -1, "too many steps", f"{steps} > {spec.max_steps}")
    if not steps:  # an extent of 0: no tile, however many the other extents would walk
        return 0
    trim(kept)
    dec.launch(spec, args, kept, extents, alias, range(extents[0]))
    return steps


def _shared_unplanned_launch(
    spec: Specialization, args: Sequence[np.ndarray], alias: bool, memory: DeviceMemory
) -> None:
    """A large launch without planning or binding, its tiles shared among the cores:
    each core runs the next chunk of the grid's first axis (about tiles/(8 cores) of
    it, from a shared counter) with the unplanned function, in its own local memory.
    Each core calls that function once, its tiles drawn chunk by chunk as it asks for
    the next (`_taken_tiles`): what the function does once per call (each argument's
    whole view, the scalars typed from slots) is then done once per core, not per
    chunk. Planning and binding, about ten times the Python of this launch, wait until
    the shape comes back often (`plan_after`, `SHARED_PLAN_PRICE`); its gemms run on one
    BLAS thread per core. A launch with fewer than two tiles along that axis, on one
    core, or whose gemms BLAS's own threads would share (BLAS_THREADS_GEMM) runs as
    `_unplanned_launch`, which also raises what is wrong with its grid."""
    dec = generated(spec.program)
    work = dec.bound(spec.slots)
    n = min(len(memory.kept), len(pool().queues) + 1, spec.device.cores_for(spec.has_mma))
    if work is None or not 0 < work[1] <= spec.max_steps or work[0][0] < 2 or n < 2:
        return _unplanned_launch(spec, args, alias, memory)
    if _gemms_on_blas_threads(spec):  # (on BLAS's threads)
        return _unplanned_launch(spec, args, alias, memory)
    extents, steps = work
    if not spec.walked:
        _reach_registers(memory, spec, alias, None)

    tiles = _taken_tiles(_chunks(0, extents[0], n))

    def job(core: int) -> Callable[[int, int], None]:
        kept = memory.kept[core]
        trim(kept)
        return lambda _lo, _hi: dec.launch(spec, args, kept, extents, alias, tiles())

    jobs: list[Job] = [(job(core), 0, 0) for core in range(n)]
    _blas_held(spec.uses_blas, _run_quietly, pool().run, jobs)
    spec.walked += -(-steps // (n * SHARED_PLAN_PRICE))  # (at least 1: it has walked)
    spec.shared_launches += 1
    return None


def _taken_tiles(chunks: Sequence[Chunk]) -> Callable[[], Iterator[int]]:
    """A maker of iterators, one per core, over the tiles of the chunks that core takes
    from a shared counter: a chunk is taken when the core has run the last one's tiles,
    so a core slowed down by other work takes fewer."""
    counter = itertools.count()  # next() is atomic under the GIL

    def tiles() -> Iterator[int]:
        while (i := next(counter)) < len(chunks):
            _, lo, hi = chunks[i]
            yield from range(lo, hi)

    return tiles


def _gemms_on_blas_threads(spec: Specialization) -> bool:
    """Whether an mma of the specialization does a gemm, in a full tile, of at least
    BLAS_THREADS_GEMM multiply-adds (M*N*K, from its registers' largest shapes: the
    planner's `largest_gemm`, known without planning), which BLAS's own threads share."""
    if not spec.has_mma:
        return False
    s = spec.slots
    gemms = [s[m] * s[n] * s[k] for m, n, k in static_info(spec.program).gemm_slots]
    return max(gemms, default=0) >= BLAS_THREADS_GEMM


def _reach_registers(
    memory: DeviceMemory, spec: Specialization, alias: bool, core: int | None
) -> None:
    """Map the local memory (of `core`, or every core's) that an unplanned launch's
    registers use. A program with an mma skips the registers the launch never writes:
    its alias registers when it reads them in place (`alias`), a matmul's operands, whose
    registers in cube memory span 17 MiB per core at 536x3419x706, which the first call
    would fault in for nothing; and those only ops writing a store's tile write (a
    matmul's result, whose pages a first call at a new shape faulted in for nothing)."""
    if not spec.has_mma:
        memory.reach(spec.registers_end, core)
        return
    itemsizes = static_info(spec.program).itemsizes
    for r in generated(spec.program).mapped[alias]:  # (a matmul's: none)
        offset, n = spec.registers[r]
        memory.reach(offset + n * itemsizes[r], core, offset)


def _run_quietly(fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args) with numpy's float errors ignored on this thread."""
    quiet = QUIET.enter()
    try:
        return fn(*args)
    finally:
        QUIET.exit(quiet)


def _specialization(
    program: Program,
    args: Sequence[np.ndarray],
    params: Sequence[int],
    device: DeviceSpec | None,
) -> Specialization:
    """The program's specialization for these arrays' shapes (a dict hit when seen before)."""
    try:
        key = (tuple([a.shape for a in args]), tuple(params), device)
    except AttributeError:
        raise LaunchError("arguments must be numpy arrays") from None
    seen: dict[Any, Specialization] = program.cache.by_launch
    spec = seen.get(key)
    if spec is None:
        spec = seen[key] = specialize(program, key[0], params, device)
    return spec


def _check_args(spec: Specialization, args: Sequence[np.ndarray], fresh: bool = False) -> None:
    """Arrays must be exactly what the specialization was checked for (`_fit`); those it
    writes writeable, unless `fresh` promises they were just allocated."""
    if len(args) == len(spec.shapes) and _fit(spec, args):
        if fresh:
            return
        for i in spec.stored_args:
            if not args[i].flags.writeable:
                raise LaunchError(f"a{i}: the program writes it, but the array is read-only")
        return
    _check_args_slowly(spec, args)


def _check_args_slowly(spec: Specialization, args: Sequence[np.ndarray]) -> None:
    """The full check, with a message naming the first argument that does not fit."""
    p = spec.program
    if len(args) != len(p.args):
        raise LaunchError(f"program takes {len(p.args)} arguments, got {len(args)}")
    for i, a in enumerate(args):
        _check_array(spec, i, a)
        if i in spec.stored_args and not a.flags.writeable:
            raise LaunchError(f"a{i}: the program writes it, but the array is read-only")


def check_inputs(
    spec: Specialization, inputs: Sequence[np.ndarray], layout: tuple[Any, ...] | None = None
) -> None:
    """The first arrays of a launch, `inputs`, must be numpy arrays of the shapes,
    dtypes and order the specialization expects: what a caller that passes `checked` to
    `launch` checks once per specialization (a LaunchError names the first that does
    not fit, as a launch's own check would). `layout`: the inputs' shapes, then their
    dtypes, when the caller holds them already (a kernel's plan key)."""
    if not _fit(spec, inputs, layout):
        for i, a in enumerate(inputs):
            _check_array(spec, i, a)


def _fit(
    spec: Specialization, arrays: Sequence[np.ndarray], layout: tuple[Any, ...] | None = None
) -> bool:
    """Whether `arrays` are C-contiguous numpy arrays of the shapes and dtypes of the
    specialization's first arguments (`layout`, when given, their shapes then dtypes),
    tested in C: launches of small tiles cannot afford a Python loop per argument (a
    full slice of a tuple is the tuple itself)."""
    n = len(arrays)
    try:
        if layout is None:
            layout = (*map(ARRAY_SHAPE, arrays), *map(ARRAY_DTYPE, arrays))
        return (
            layout[:n] == spec.shapes[:n]
            and layout[n:] == spec.arg_dtypes[:n]
            and all(map(C_CONTIGUOUS, arrays))
        )
    except AttributeError:  # something that is no array
        return False


def _check_array(spec: Specialization, i: int, a: np.ndarray) -> None:
    """Argument i must be a C-contiguous numpy array of its dtype and shape."""
    decl, shape = spec.program.args[i], spec.shapes[i]
    if not isinstance(a, np.ndarray):
        raise LaunchError(f"a{i}: expected a numpy array, got {type(a).__name__}")
    if a.dtype != decl.dtype.np or a.shape != shape:
        raise LaunchError(
            f"a{i}: expected {decl.dtype.text}{list(shape)}, got {a.dtype}{list(a.shape)}"
        )
    if not a.flags.c_contiguous:
        raise LaunchError(f"a{i}: array must be C-contiguous")


def _planned_cores(specs: Sequence[Specialization], cores: int | None) -> int:
    """Cores for a planned launch of `specs` (one, or a stack's members): one if it is
    small, else the device's, capped by tiles, CPUs and `cores`."""
    tiles = sum(spec.plan.tiles for spec in specs)
    if tiles < 2:
        return 1
    work = sum(spec.plan.global_bytes / static_info(spec.program).share_bytes for spec in specs)
    if work < 1 or _small_gemms(specs):
        return 1  # too little work together for the cores (`Static.share_bytes`)
    dev = specs[0].device
    n = dev.cube_cores if any(spec.has_mma for spec in specs) else dev.vector_cores
    n = min(n, len(pool().queues) + 1, tiles)
    return max(1, min(n, cores) if cores else n)


def _small_gemms(specs: Sequence[Specialization]) -> bool:
    """Whether a stack of launches that all have an mma does too few multiply-adds and
    moves too few bytes to share the cores (`plan.SHARE_GEMM`)."""
    if len(specs) < 2 or not all(spec.has_mma for spec in specs):
        return False
    gemms = sum(spec.plan.gemms for spec in specs)
    moved = sum(spec.plan.global_bytes for spec in specs)
    return gemms < plan.SHARE_GEMM and moved < plan.SHARE_GEMM_BYTES


def _may_alias(spec: Specialization, args: Sequence[np.ndarray]) -> bool:
    """Alias (and forwarded) loads are safe unless an argument they read shares memory with
    one written."""
    if not spec.alias_args:
        return False
    return not any(
        np.may_share_memory(args[i], args[j]) for i in spec.alias_args for j in spec.stored_args
    )


def _executable(
    spec: Specialization, n: int, stats: bool, alias: bool, copy: int = 0
) -> Executable:
    """The bound executable for (n cores, stats, alias), made on first use and kept; a
    stacked launch running one specialization several times takes a copy for each."""
    key = (n, stats, alias, copy)
    ex = spec.executables.get(key)
    if ex is None:
        from dvm.vm.planned import Executable  # (unplanned launches never import it)

        spec.plan  # noqa: B018 (planning may tile anew: then the registers are final)
        ex = spec.executables[key] = Executable(spec, n, stats, alias)
    return ex


def _share_tiles(executables: Sequence[Executable], n: int, in_turn: bool = True) -> list[Job]:
    """One job per core for the tiles of `executables` (one launch, or a stack's members,
    all bound to `n` cores): each core takes the next chunk of about tiles/(8n) tiles
    from a shared counter until none are left, so a core slowed down (by other
    processes, or slower tiles) takes fewer. With `in_turn`, the members' chunks
    alternate (chunk i of each, then chunk i + 1); else each member's come first."""
    chunked = [_chunks(m, ex.plan.tiles, n) for m, ex in enumerate(executables)]
    if in_turn:
        chunks = [c for row in itertools.zip_longest(*chunked) for c in row if c is not None]
    else:
        chunks = [c for member in chunked for c in member]
    return _draining_jobs(n, chunks, lambda core: [ex.runners[core] for ex in executables])


Chunk = tuple[int, int, int]
"""(member, first tile, end tile): tiles lo..hi of one member of a launch."""


def _chunks(member: int, tiles: int, n: int) -> list[Chunk]:
    """`member`'s tiles cut into chunks of about tiles/(8n): small enough that cores
    finish together, large enough that taking one costs little."""
    step = max(1, tiles // (8 * n))
    return [(member, lo, min(lo + step, tiles)) for lo in range(0, tiles, step)]


def _draining_jobs(
    n: int, chunks: Sequence[Chunk], runners: Callable[[int], Sequence[Callable[[int, int], None]]]
) -> list[Job]:
    """One job per core: each takes the next chunk from a shared counter until none are
    left and runs it with its own runner of the chunk's member (`runners(core)`)."""
    counter = itertools.count()  # next() is atomic under the GIL

    def job(core: int) -> Callable[[int, int], None]:
        mine = runners(core)

        def drain(_lo: int, _hi: int) -> None:
            while (i := next(counter)) < len(chunks):
                m, lo, hi = chunks[i]
                mine[m](lo, hi)

        return drain

    return [(job(core), 0, 0) for core in range(n)]


def _run(ex: Executable, args: Sequence[np.ndarray], trace: bool, hold: bool) -> LaunchStats | None:
    """Bind this launch's arrays, run the tiles (inline or on the pool), collect stats;
    `hold`: with BLAS held at one thread."""
    ex.set_args(args)
    try:
        return _blas_held(hold, _run_held, ex, args, trace)
    finally:
        ex.clear_args()


def with_blas_held(device: DeviceSpec, fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args) with BLAS held at one thread throughout: for a caller about to make
    several launches on `device` that call BLAS, whose own holds then find one thread
    and set nothing (one C call instead of three). The count is process-wide, so holds
    of several threads (or nested ones) are one hold: the first takes the count, the
    last gives it back, under the device's launch lock: never while another thread's
    launch runs, which found it held and so will not give it back itself. (Without a
    direct handle on OpenBLAS, each launch holds it by itself.)"""
    if blas.threads() is None:
        return fn(*args)
    with _HOLDERS.lock:
        if not _HOLDERS.count:
            blas.HELD_FROM[0] = blas.one_thread() or 1
        _HOLDERS.count += 1
    try:
        return fn(*args)
    finally:
        with _HOLDERS.lock:
            _HOLDERS.count -= 1
            if not _HOLDERS.count:
                threads, blas.HELD_FROM[0] = blas.HELD_FROM[0], 0
                if threads != 1:
                    with device_memory(device).lock:
                        blas.restore(threads)


class _Holders:
    """The holds of `with_blas_held` in progress, in all threads (the lock guards the
    count and the OpenBLAS count it took, `blas.HELD_FROM`)."""

    lock = threading.Lock()
    count = 0


_HOLDERS = _Holders()


def _blas_threads(fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args), BLAS free to use the threads the process gave it (given back for the
    run when an enclosing `with_blas_held` holds it at one)."""
    before = blas.all_threads()
    try:
        return fn(*args)
    finally:
        blas.restore_count(before)


def _blas_held(uses_blas: bool, fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args), with BLAS held at one thread if the program calls it (the VM's cores
    are the parallelism)."""
    if not uses_blas:
        return fn(*args)
    threads = blas.one_thread()
    if threads is None:  # no direct handle on OpenBLAS: threadpoolctl
        with blas.threadpool_limit():
            return fn(*args)
    try:
        return fn(*args)
    finally:
        blas.restore(threads)


def _run_held(ex: Executable, args: Sequence[np.ndarray], trace: bool) -> LaunchStats | None:
    """`_run` once BLAS is held."""
    first = ex.launches == 0
    ex.launches += 1
    if not ex.stats and (ex.n == 1 or (first and ex.plan.global_bytes < FIRST_INLINE_BYTES)):
        quiet = QUIET.enter()
        try:
            ex.run_all()
        finally:
            QUIET.exit(quiet)
        return None
    ntiles = ex.plan.tiles
    if ex.stats:
        for core in ex.cores:
            assert core.stats is not None
            core.stats.reset(trace)
    t0 = time.perf_counter_ns()
    quiet = QUIET.enter()
    try:
        if ex.n == 1:
            ex.run_all()
        else:
            pool().run(_share_tiles([ex], ex.n))
    finally:
        QUIET.exit(quiet)
    t1 = time.perf_counter_ns()
    if not ex.stats:
        return None
    return _stats([c.stats for c in ex.cores if c.stats is not None], t0, t1, ntiles, ex.n)


def _stats(cores: list[CoreStats], t0: int, t1: int, tiles: int, n: int) -> LaunchStats:
    """`LaunchStats.collect`, its module imported by the first instrumented launch: the
    others never need it."""
    from dvm.vm.stats import LaunchStats

    return LaunchStats.collect(cores, t0, t1, tiles, n)
