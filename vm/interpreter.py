"""Stage 4b: execution. `launch` runs a specialization's grid over the cores.

Each core is a thread with its own local memory (one preallocated, aligned
byte buffer; registers are numpy views into it) and its own bound copy of
every tile class's instruction list (`kernels.binders`). Cores are bound on
the first launch of a specialization and reused, so a steady-state launch
only builds one numpy view per argument view, splits the tiles over the
cores and runs `for f in body: f()` per tile.

Tiles are shared dynamically: each core takes the next chunk of about
n/(8N) tiles until none are left, so a core slowed down by other work takes
fewer. Small launches (one tile, or little memory traffic) run inline on
the calling thread. Worker threads are persistent; BLAS is held at one
thread while a multi-core launch that calls BLAS runs (else OpenBLAS's own
threads spin against ours).
"""

from __future__ import annotations

import bisect
import itertools
import math
import os
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dvm.vm import blas, dynamic
from dvm.vm.device import DeviceSpec
from dvm.vm.isa import Cat
from dvm.vm.kernels import QUIET, Fn, bind_op, fusable, global_view, make_slicer
from dvm.vm.program import ARRAY_DTYPE, ARRAY_SHAPE, C_CONTIGUOUS, Index, Program
from dvm.vm.specialize import (
    INLINE_BYTES,
    Body,
    LoopNode,
    OpNode,
    Shape,
    Specialization,
    ViewPlan,
    fast_function,
    in_place_writer,
    read_registers,
    static_info,
)
from dvm.vm.stats import CoreStats, LaunchStats

FIRST_INLINE_BYTES = 1 << 20
"""A multi-core executable's first launch runs on one core when it moves less than this:
binding the other cores' classes costs more than they save on a shape that may not come
back; they bind when the shape does."""

Job = tuple[Callable[[int, int], None], int, int]
"""One core's share of a launch for the pool: fn(lo, hi) runs it."""


class LaunchError(ValueError):
    """Arrays that do not match the specialization (dtype, shape, layout, writability)."""


# --------------------------------------------------------------------------
# Cores


class Core:
    """One simulated core: local memory, tile counters, and bound tile bodies."""

    def __init__(
        self,
        spec: Specialization,
        g: list[np.ndarray],
        locks: Sequence[threading.Lock],
        alias_regs: frozenset[int],
        mem: np.ndarray,
        scratch: dict[np.dtype, np.ndarray] | None = None,
        forwarding: bool = False,
    ) -> None:
        self.spec = spec
        self.mem = mem
        self.idx = [0] * 11
        self.g = g
        self.views: Sequence[ViewPlan] = spec.views
        self.acc_locks = locks
        self.alias_regs = alias_regs
        self.alias: list[Any] = [None] * len(spec.registers)
        static = static_info(spec.program)
        self.alias_operands = static.alias_operands
        self.binders = static.binders(alias_regs)
        self._slicers: dict[int, Callable[[np.ndarray], np.ndarray] | None] = {}
        self._scratch = scratch
        self._dtypes = static.reg_dtypes
        self._starts = [
            off // item if off % item == 0 else -1
            for (off, _), item in zip(spec.registers, static.itemsizes, strict=True)
        ]
        self._typed: dict[np.dtype, np.ndarray] = {}
        self._regs: dict[tuple[int, Shape], np.ndarray] = {}
        self.stats: CoreStats | None = None
        self.fused: dict[tuple[int, ...], dict[int, int]] = {}
        self.forwarding = forwarding
        """Whether loads may be forwarded (no argument read shares memory with one written)."""
        self.dynamic = False
        """While binding forwarded readers: every alias register is fetched per call."""

    def reg(self, r: int, shape: Shape) -> np.ndarray:
        """Register `r` viewed with `shape` (its first prod(shape) elements, row-major)."""
        key = (r, shape)
        got = self._regs.get(key)
        if got is None:
            dtype, start = self._dtypes[r], self._starts[r]
            if start < 0:  # a byte offset that is no multiple of the element size
                off, n = self.spec.registers[r][0], math.prod(shape) * dtype.itemsize
                got = self._regs[key] = self.mem[off : off + n].view(dtype).reshape(shape)
                return got
            base = self._typed.get(dtype)
            if base is None:
                usable = len(self.mem) // dtype.itemsize * dtype.itemsize
                base = self._typed[dtype] = self.mem[:usable].view(dtype)
            got = self._regs[key] = base[start : start + math.prod(shape)].reshape(shape)
        return got

    def dtype(self, r: int) -> np.dtype:
        """The numpy dtype of register `r`."""
        return self._dtypes[r]

    def slicer(self, v: int) -> Callable[[np.ndarray], np.ndarray] | None:
        """The function cutting view `v`'s current tile out of its launch view (None: the
        tile is the whole view); one per view and core."""
        if v in self._slicers:
            return self._slicers[v]
        vp = self.views[v]
        got = self._slicers[v] = None if self._one_tile(vp) else make_slicer(vp, self.idx)
        return got

    def _one_tile(self, vp: ViewPlan) -> bool:
        """Whether each tiled dim of `vp` is tiled by a grid axis of one tile as large as
        the dim: the tile is the whole view, whatever the launch (a tiny launch's case,
        which then slices nothing per call)."""
        extents = self.spec.plan.extents
        return all(
            Index.is_grid(src) and extents[src - Index.GRID0] == 1 and tile >= vp.sizes[d]
            for d, src, tile in vp.tiled
        )

    def scratch(self, shape: Shape, dtype: np.dtype) -> np.ndarray:
        """A temporary of `shape` that only one instruction uses at a time (this core's,
        shared by the classes and executables of its device: launches take turns)."""
        pool = self._scratch if self._scratch is not None else {}
        self._scratch = pool
        n = math.prod(shape)
        buf = pool.get(dtype)
        if buf is None or buf.size < n:
            buf = pool[dtype] = np.empty(max(n, 1), dtype)
        return buf[:n].reshape(shape)

    def bind_class(self, key: tuple[int, ...], body: Body) -> list[Fn]:
        """Callables for the tile class `key` of the grid (its fused stores found once
        per executable, shared by the cores)."""
        fused = self.fused.get(key)
        if fused is None:
            fused = self.fused[key] = fused_stores(body)
        return self.bind(body, fused)

    def bind(self, body: Body, fused: dict[int, int] | None = None) -> list[Fn]:
        """Callables for a tile body; loops become one callable each. In the tile's top
        level, an op whose result is only stored writes the global tile directly; a load
        whose register is next overwritten in place is forwarded (see `forwarded_loads`)."""
        out: list[Fn] = []
        binders = self.binders
        forward = forwarded_loads(body, self.alias_regs) if self.forwarding else {}
        if not fused and not forward and self.stats is None:
            for node in body:
                if type(node) is LoopNode:
                    out.append(self._bind_loop(node))
                    continue
                fn = binders[node.k](node, self)  # type: ignore[union-attr, arg-type]
                if fn is not None:
                    out.append(fn)
            return out
        fused = fused or {}
        elided = set(fused.values())
        stats = self.stats is not None
        base, windows = self.alias_regs, {}  # forwarded register -> index of its last reader
        for i, node in enumerate(body):
            if type(node) is LoopNode:
                out.append(self._bind_loop(node))
                continue
            assert isinstance(node, OpNode)
            if i in elided:
                if stats:
                    out.append(self._instrument(node, _nothing))
                continue
            j = fused.get(i)
            if j is not None:
                store = body[j]
                assert isinstance(store, OpNode)
                k, ins, shapes, out_shape, extents, scalar, _ = node
                node = OpNode(k, ins, shapes, out_shape, extents, scalar, store.ins.operands[0])
            end = forward.get(i)
            if end is not None:
                windows[node.ins.operands[0]] = end
            if windows:
                self.alias_regs, self.dynamic = base | frozenset(windows), True
                try:
                    fn = bind_op(node, self)
                finally:
                    self.alias_regs, self.dynamic = base, False
                windows = {r: e for r, e in windows.items() if e > i}
            else:
                fn = binders[node.k](node, self)
            if fn is not None:
                out.append(self._instrument(node, fn) if stats else fn)
        return out

    def _bind_loop(self, node: LoopNode) -> Fn:
        """A loop runs each segment's body for its iterations, setting the loop counter."""
        idx, c = self.idx, 3 + node.level
        segs = [(lo, hi, self.bind(body)) for lo, hi, body in node.segments]

        def loop() -> None:
            for lo, hi, fns in segs:
                for j in range(lo, hi):
                    idx[c] = j
                    for f in fns:
                        f()

        return loop

    def _instrument(self, node: OpNode, fn: Fn) -> Fn:
        """Wrap `fn` to count the instruction, its global bytes and its numpy time."""
        st = self.stats
        assert st is not None
        name, cat = node.ins.op.name, node.ins.op.cat
        nbytes = math.prod(node.extents or ()) * self._itemsize(node)
        read = nbytes if cat is Cat.LOAD else 0
        written = nbytes if cat in (Cat.STORE, Cat.STORE_ACC) else 0
        if cat is Cat.STORE_ACC:
            read = nbytes
        top = self._reg_end(node.ins.operands[0], node.out) if node.out is not None else 0
        if cat is Cat.LOAD and node.ins.operands[0] in self.alias_regs:
            top = 0  # an alias load keeps a view of global memory: no local bytes
        clock = time.perf_counter_ns

        def counted() -> None:
            t0 = clock()
            fn()
            t1 = clock()
            st.numpy_ns += t1 - t0
            st.count(name, read, written, top)
            if st.events is not None:
                st.events.append((name, t0, t1))

        return counted

    def _itemsize(self, node: OpNode) -> int:
        """Bytes per element moved by a load/store (0 for other instructions)."""
        cat = node.ins.op.cat
        if cat not in (Cat.LOAD, Cat.STORE, Cat.STORE_ACC):
            return 0
        r = node.ins.operands[0 if cat is Cat.LOAD else 1]
        return self.spec.program.registers[r].dtype.np.itemsize

    def _reg_end(self, r: int, shape: Shape | None) -> int:
        """The local-memory byte just past register `r` at `shape`."""
        off, _ = self.spec.registers[r]
        item = self.spec.program.registers[r].dtype.np.itemsize
        return off + math.prod(shape or ()) * item


def _nothing() -> None:
    """An elided store (its producer already wrote the tile); counted in stats mode."""


_MEMORY = (Cat.LOAD, Cat.STORE, Cat.STORE_ACC)


def forwarded_loads(body: Body, alias_regs: frozenset[int]) -> dict[int, int]:
    """Loads of this straight-line body that need not copy, each with the instruction
    that then writes its register in place ({load: writer}; see
    `specialize.in_place_writer`). Only bound when no argument the program reads shares
    memory with one it writes."""
    code = [None if isinstance(node, LoopNode) else node.ins for node in body]
    out: dict[int, int] = {}
    for i, node in enumerate(body):
        ins = code[i]
        if ins is None or ins.op.cat is not Cat.LOAD or ins.operands[0] in alias_regs:
            continue
        assert isinstance(node, OpNode)
        if not node.extents or 0 in node.extents:
            continue
        w = in_place_writer(code, i)
        if w is not None:
            out[i] = w
    return out


def fused_stores(body: Body) -> dict[int, int]:
    """Pairs (producer, store) in a straight-line tile body that can fuse: the producer
    then writes the stored view's tile itself, saving a copy of the tile.

    Safe when: the producer is `fusable`, writing register r with exactly the tile's
    shape; between it and the store nothing touches r and nothing touches global
    memory (so no load sees the early write and no store is reordered past it); and
    after the store nothing reads r (the value exists only in global memory then).
    """
    pairs: dict[int, int] = {}
    for j, node in enumerate(body):
        if isinstance(node, LoopNode) or node.ins.op.cat is not Cat.STORE:
            continue
        r = node.ins.operands[1]
        i = _producer(body, j, r)
        if i is not None and not any(_reads(n, r) for n in body[j + 1 :]):
            pairs[i] = j
    return pairs


def _producer(body: Body, j: int, r: int) -> int | None:
    """The instruction before store `j` that computes register r, if fusable."""
    store = body[j]
    assert isinstance(store, OpNode)
    for i in range(j - 1, -1, -1):
        n = body[i]
        if isinstance(n, LoopNode) or n.ins.op.cat in _MEMORY:
            return None
        if n.ins.operands[0] == r:
            ok = fusable(n.ins) and n.out == store.extents and n.store_to is None
            return i if ok else None
        if _reads(n, r):
            return None
    return None


def _reads(node: OpNode | LoopNode, r: int) -> bool:
    """Whether `node` (or anything in a loop) may read register r."""
    if isinstance(node, LoopNode):
        return any(_reads(n, r) for _, _, sub in node.segments for n in sub)
    return r in read_registers(node.ins)


class Executable:
    """A specialization bound to `n` cores: what one launch at a time uses."""

    def __init__(self, spec: Specialization, n: int, stats: bool, alias: bool) -> None:
        self.spec = spec
        self.n = n
        self.stats = stats
        self.alias = alias
        self.g: list[np.ndarray] = [np.empty(0)] * len(spec.views)
        self._unbound = list(self.g)
        self._unbound_alias = [None] * len(spec.registers)
        locks = [threading.Lock() for _ in spec.program.args]
        regs = spec.alias_regs if alias else frozenset()
        self.memory = device_memory(spec.device)
        self.cores = [
            Core(spec, self.g, locks, regs, self.memory.buffers[c], self.memory.scratch[c], alias)
            for c in range(n)
        ]
        self.launches = 0
        self.single: list[Fn] | None = None
        """A one-tile plan's functions, once bound (see `run_all`)."""
        self.runners: list[Callable[[int, int], None]] = []
        self.fns_of: list[Callable[[tuple[int, ...]], list[Fn]]] = []
        plan = spec.plan
        self._strides = [math.prod(plan.extents[a + 1 :]) for a in range(len(plan.extents))]
        self._starts = [[lo for lo, _, _ in segs] for segs in plan.axis_segments]
        dtypes = spec.arg_dtypes
        # A launch's arrays have the specialization's shapes (`_check_args`), so which
        # views are their whole argument is known now; the others are cut per launch,
        # and an empty one (a zero dim) reads and writes an empty array.
        views = list(enumerate(spec.views))
        whole = [v.natural and spec.shapes[v.arg] == v.sizes for v in spec.views]
        self._whole = [(i, v.arg) for i, v in views if whole[i]]
        self._cut = [
            (i, v, np.empty(v.sizes, dtypes[v.arg]) if v.empty else None)
            for i, v in views
            if not whole[i]
        ]
        self._alias_tiles = [core.alias for core in self.cores] if regs else []
        fused: dict[tuple[int, ...], dict[int, int]] = {}
        for core in self.cores:
            if stats:
                core.stats = CoreStats()
            core.fused = fused
            self.runners.append(self._runner(core))

    def _runner(self, core: Core) -> Callable[[int, int], None]:
        """The function that runs linear tile ids [lo, hi) on `core`. Each tile class is
        bound on this core the first time the core runs one of its tiles."""
        plan, idx = self.spec.plan, core.idx
        bound: dict[tuple[int, ...], list[Fn]] = {}

        def fns_of(key: tuple[int, ...]) -> list[Fn]:
            got = bound.get(key)
            if got is None:
                got = bound[key] = core.bind_class(key, plan.bodies[key])
            return got

        self.fns_of.append(fns_of)
        if len(plan.extents) == 1:
            segs = [(lo, hi, (c,)) for lo, hi, c in plan.axis_segments[0]]

            def run_1d(lo: int, hi: int) -> None:
                for s_lo, s_hi, key in segs:
                    a, b = max(lo, s_lo), min(hi, s_hi)
                    if a < b:
                        fns = fns_of(key)
                        for i in range(a, b):
                            idx[0] = i
                            for f in fns:
                                f()

            return run_1d
        strides, starts, segments = self._strides, self._starts, self.spec.plan.axis_segments

        def run_nd(lo: int, hi: int) -> None:
            for t in range(lo, hi):
                key = []
                for a, st in enumerate(strides):
                    i, t = divmod(t, st)
                    idx[a] = i
                    key.append(segments[a][bisect.bisect_right(starts[a], i) - 1][2])
                for f in fns_of(tuple(key)):
                    f()

        return run_nd

    def run_all(self) -> None:
        """Run every tile on core 0, class by class (an inline launch)."""
        if self.single is not None:
            for f in self.single:
                f()
            return
        plan = self.spec.plan
        if plan.tiles == 1:  # its class's functions, kept (the tile index stays 0)
            key = tuple([next(c for lo, hi, c in segs if lo < hi) for segs in plan.axis_segments])
            self.single = self.fns_of[0](key)
            for f in self.single:
                f()
            return
        if len(plan.extents) == 1:
            self.runners[0](0, plan.tiles)
            return
        idx, fns_of = self.cores[0].idx, self.fns_of[0]
        if len(plan.extents) == 2:
            rows, cols = plan.axis_segments
            for lo0, hi0, c0 in rows:
                for lo1, hi1, c1 in cols:
                    if lo0 == hi0 or lo1 == hi1:
                        continue
                    fns = fns_of((c0, c1))
                    for i in range(lo0, hi0):
                        idx[0] = i
                        for j in range(lo1, hi1):
                            idx[1] = j
                            for f in fns:
                                f()
            return
        planes, rows, cols = plan.axis_segments  # three grid axes
        for lo0, hi0, c0 in planes:
            for lo1, hi1, c1 in rows:
                for lo2, hi2, c2 in cols:
                    if lo0 == hi0 or lo1 == hi1 or lo2 == hi2:
                        continue
                    fns = fns_of((c0, c1, c2))
                    for i in range(lo0, hi0):
                        idx[0] = i
                        for j in range(lo1, hi1):
                            idx[1] = j
                            for k in range(lo2, hi2):
                                idx[2] = k
                                for f in fns:
                                    f()

    def set_args(self, args: Sequence[np.ndarray]) -> None:
        """Build this launch's numpy view of every view over its argument (arrays of
        exactly the specialization's shapes)."""
        g = self.g
        for i, a in self._whole:
            g[i] = args[a]
        for i, vp, empty in self._cut:
            g[i] = global_view(vp, args[vp.arg], empty)

    def clear_args(self) -> None:
        """Let go of the launch's arrays (and of the tiles of them alias registers hold):
        an executable kept for its shape must not keep arrays its caller dropped alive,
        or the allocator maps fresh pages for the next shape's (docs/performance.md §19)."""
        self.g[:] = self._unbound
        for held in self._alias_tiles:
            held[:] = self._unbound_alias


# --------------------------------------------------------------------------
# Device memory and the worker pool


class DeviceMemory:
    """The local memories of one device's cores, shared by every executable.

    Executables bind register views into these buffers once; `lock` makes
    launches on a device run one at a time (like one device stream), so two
    executables never use the same local memory at once. Sharing keeps the
    memory bounded however many shapes get specialized.
    """

    def __init__(self, device: DeviceSpec, cores: int) -> None:
        self.lock = threading.Lock()
        align = max(device.alignment, 64)
        self.buffers: list[np.ndarray] = []
        self.scratch: list[dict[np.dtype, np.ndarray]] = [{} for _ in range(cores)]
        """Per core: temporaries by dtype (see `Core.scratch`)."""
        # One buffer per core, as large as the larger of its memories: a cube program
        # (with an mma) uses the cube memory, a vector program the first
        # local_memory_bytes (specialization checks which). Untouched pages cost nothing.
        size = max(device.memory_bytes(False), device.memory_bytes(True))
        for _ in range(cores):
            raw = np.zeros(size + align, np.uint8)
            start = -raw.ctypes.data % align
            self.buffers.append(raw[start : start + size])
        self.tier0 = dynamic.kept_for(self.buffers[0])
        """What tier 0, which runs on the calling thread, keeps beside core 0's memory."""
        self.touched = 0
        """Bytes at the start of each buffer whose pages are mapped (see `touch`)."""

    def touch(self, nbytes: int) -> None:
        """Map the pages of each core's first `nbytes` now, as a device's memory exists
        before its first kernel: the buffers are zeroed lazily, so a launch that reached
        a page first would pay its fault (2.6-5 us per 4 KiB page on this host: a
        first call at a larger shape than any before took milliseconds more)."""
        if nbytes > self.touched:
            with self.lock:
                for buffer in self.buffers:
                    buffer[self.touched : nbytes].fill(0)
                self.touched = max(self.touched, nbytes)


_MEMORIES: dict[DeviceSpec, DeviceMemory] = {}
_MEMORIES_LOCK = threading.Lock()


def device_memory(device: DeviceSpec) -> DeviceMemory:
    """The (lazily allocated) local memories of `device`'s cores that this host can run."""
    mem = _MEMORIES.get(device)  # a dict read is atomic: the lock is for the first
    if mem is not None:
        return mem
    with _MEMORIES_LOCK:
        mem = _MEMORIES.get(device)
        if mem is None:
            cores = min(max(device.vector_cores, device.cube_cores), len(_pool().queues) + 1)
            mem = _MEMORIES[device] = DeviceMemory(device, max(cores, 1))
        return mem


class _Pool:
    """Persistent worker threads, each with its own job queue."""

    def __init__(self, n: int) -> None:
        self.lock = threading.Lock()
        self.queues: list[queue.SimpleQueue[Any]] = []
        for _ in range(n):
            q: queue.SimpleQueue[Any] = queue.SimpleQueue()
            threading.Thread(target=self._work, args=(q,), daemon=True, name="dvm-core").start()
            self.queues.append(q)

    def _work(self, q: queue.SimpleQueue[Any]) -> None:
        """A worker thread: run (runner, lo, hi) jobs forever, reporting each outcome."""
        np.seterr(all="ignore")  # this thread's numpy context: no warnings, never raise
        while True:
            fn, lo, hi, done = q.get()
            try:
                fn(lo, hi)
                done.put(None)
            except BaseException as e:  # report to the launching thread
                done.put(e)

    def run(self, jobs: list[Job]) -> None:
        """Run job 0 on the calling thread and the rest on workers; wait for all."""
        done: queue.SimpleQueue[BaseException | None] = queue.SimpleQueue()  # per launch:
        # an interrupted launch cannot leave stale results for the next one
        with self.lock:
            for q, (fn, lo, hi) in zip(self.queues, jobs[1:], strict=False):
                q.put((fn, lo, hi, done))
            fn, lo, hi = jobs[0]
            first: BaseException | None = None
            try:
                fn(lo, hi)
            except BaseException as e:
                first = e
            errors = [done.get() for _ in jobs[1:]]
            for e in [first, *errors]:
                if e is not None:
                    raise e


_POOL: list[_Pool] = []


def _pool() -> _Pool:
    """The process-wide worker pool (os.cpu_count() - 1 threads), made on first use."""
    if not _POOL:
        _POOL.append(_Pool(max((os.cpu_count() or 1) - 1, 0)))
    return _POOL[0]


_BLAS: list[Any] = []


def _blas_one_thread() -> Any:
    """A context holding BLAS at one thread (the controller is built once, ~ms)."""
    if not _BLAS:
        from threadpoolctl import ThreadpoolController

        _BLAS.append(ThreadpoolController())
    return _BLAS[0].limit(limits=1, user_api="blas")


# --------------------------------------------------------------------------
# Launch


def prepare(program: Program, device: DeviceSpec) -> Program:
    """Do at once what every shape of `program` shares and its first launch would do
    otherwise: validation, the fast path (for `device`), tier 0's decoding and
    mapping the device's local memory, so that a first call pays only for its shape.
    Returns the program."""
    fast_function(program, device)
    dynamic.decoded(program)
    device_memory(device).touch(device.memory_bytes(static_info(program).has_mma))
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
) -> LaunchStats | None:
    """Run a program (specialized for the args' shapes) or a specialization on `args`.

    `cores` caps the cores used (default: the device's vector cores, or its
    cube cores for a program with `mma`, at most the host's CPUs and the
    number of tiles; small launches use one). With `stats` (or `trace`),
    returns a LaunchStats; otherwise None. `fresh` promises that the arrays the
    program writes were just allocated (no argument read shares memory with them),
    which skips the overlap test that decides whether loads may read in place.

    A specialization's first launch runs unplanned (tier 0) when its arguments are
    small; later launches plan it. `unplanned` asks for tier 0 again while it is not
    planned: a caller that launches one specialization several times for one request
    (a kernel shared by identical launches) pays planning only when the shape comes back.
    """
    spec = target
    if isinstance(target, Program):
        spec = _specialization(target, args, params, device)
    assert isinstance(spec, Specialization)
    _check_args(spec, args)
    alias = bool(spec.alias_args) if fresh else _may_alias(spec, args)
    memory = spec.memory
    if memory is None:
        memory = spec.memory = device_memory(spec.device)
    # One launch at a time per device. Planning may evaluate the slots again for more
    # cores (`Specialization.retile`): under the lock, no tier-0 launch reads them.
    with memory.lock:
        if not spec.launched or unplanned:
            spec.launched = True
            if spec.tier0 and not spec.planned and cores is None and not (stats or trace):
                return _run_unplanned(spec, args, alias, memory)
        if cores is None:
            n = spec.default_cores
            if not n:
                n = spec.default_cores = 1 if spec.plan.inline else _planned_cores([spec], None)
        else:
            n = 1 if spec.plan.inline else _planned_cores([spec], cores)
        return _run(_executable(spec, n, stats or trace, alias), args, trace)


def launch_stack(
    members: Sequence[tuple[Specialization, Sequence[np.ndarray], bool]],
    *,
    fresh: bool = False,
    in_turn: bool = True,
) -> None:
    """Run independent launches as one (a `tensor.stack`): one hold of the device's
    launch lock and of BLAS, and the cores drain all the members' tiles from one
    counter, so kernels too small to fill the cores each share them side by side.
    With `in_turn`, the members' chunks of tiles alternate (chunk i of each member,
    then chunk i + 1), so that members reading the same rows, as a stack of
    projections of one input does, read them while they are in cache; else each
    member's tiles come before the next one's.

    Members are (specialization, args, unplanned), `unplanned` and `fresh` as for
    `launch`. A member whose launch runs unplanned (tier 0, on the calling thread)
    runs by itself first, and so does one for another device than the first's."""
    if not members:
        return
    device = members[0][0].device
    stacked: list[tuple[Specialization, Sequence[np.ndarray], bool]] = []
    for spec, args, unplanned in members:
        if spec.device is not device or (
            (unplanned or not spec.launched) and spec.tier0 and not spec.planned
        ):
            launch(spec, args, fresh=fresh, unplanned=unplanned)
        else:
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
        uses_blas = any(spec.uses_blas for spec, _, _ in stacked)
        _blas_held(uses_blas, _run_quietly, _run_stack, stacked, n, in_turn)


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
            _pool().run(_share_tiles(executables, n, in_turn))
    finally:
        for ex in executables:
            ex.clear_args()


def _run_unplanned(
    spec: Specialization, args: Sequence[np.ndarray], alias: bool, memory: DeviceMemory
) -> None:
    """A first launch without planning or binding (tier 0, see `dynamic.py`), on the
    calling thread. Its Python work holds the GIL, so cores stepping through vector
    tiles side by side wait for each other; and a worker thread that slept since the
    last call wakes late (on this host a round trip to it took 22 us back to back, 50
    us after 1 ms idle, 170 us after 10 ms), which a first call meets after whatever
    came before it. Sharing an mma's grid, whose tiles run in BLAS without the GIL,
    was measured too and lost on streams of new shapes (see docs/performance.md)."""
    _blas_held(spec.uses_blas, _run_quietly, dynamic.first_launch, spec, args, memory.tier0, alias)


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
    seen = program.cache.setdefault("by_launch", {})
    spec = seen.get(key)
    if spec is None:
        spec = seen[key] = program.specialize(key[0], params, device)
    return spec


def _check_args(spec: Specialization, args: Sequence[np.ndarray]) -> None:
    """Arrays must be exactly what the specialization was checked for (tested in C:
    launches of small tiles cannot afford a Python loop per argument)."""
    try:
        fits = (
            tuple(map(ARRAY_SHAPE, args)) == spec.shapes
            and tuple(map(ARRAY_DTYPE, args)) == spec.arg_dtypes
            and all(map(C_CONTIGUOUS, args))
        )
    except AttributeError:  # something that is no array
        fits = False
    if fits:
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
    for i, (a, decl, shape) in enumerate(zip(args, p.args, spec.shapes, strict=True)):
        if not isinstance(a, np.ndarray):
            raise LaunchError(f"a{i}: expected a numpy array, got {type(a).__name__}")
        if a.dtype != decl.dtype.np or a.shape != shape:
            raise LaunchError(
                f"a{i}: expected {decl.dtype.text}{list(shape)}, got {a.dtype}{list(a.shape)}"
            )
        if not a.flags.c_contiguous:
            raise LaunchError(f"a{i}: array must be C-contiguous")
        if i in spec.stored_args and not a.flags.writeable:
            raise LaunchError(f"a{i}: the program writes it, but the array is read-only")


def _planned_cores(specs: Sequence[Specialization], cores: int | None) -> int:
    """Cores for a planned launch of `specs` (one, or a stack's members): one if it is
    small, else the device's, capped by tiles, CPUs and `cores`."""
    tiles = sum(spec.plan.tiles for spec in specs)
    if tiles < 2 or sum(spec.plan.global_bytes for spec in specs) < INLINE_BYTES:
        return 1
    dev = specs[0].device
    n = dev.cube_cores if any(spec.has_mma for spec in specs) else dev.vector_cores
    n = min(n, len(_pool().queues) + 1, tiles)
    return max(1, min(n, cores) if cores else n)


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
        ex = spec.executables[key] = Executable(spec, n, stats, alias)
    return ex


def _share_tiles(executables: Sequence[Executable], n: int, in_turn: bool = True) -> list[Job]:
    """One job per core for the tiles of `executables` (one launch, or a stack's members,
    all bound to `n` cores): each core takes the next chunk of about tiles/(8n) tiles
    from a shared counter until none are left, so a core slowed down (by other
    processes, or slower tiles) takes fewer. With `in_turn`, the members' chunks
    alternate (chunk i of each, then chunk i + 1); else each member's come first."""
    chunked = []
    for m, ex in enumerate(executables):
        tiles = ex.spec.plan.tiles
        step = max(1, tiles // (8 * n))
        chunked.append([(m, lo, min(lo + step, tiles)) for lo in range(0, tiles, step)])
    if in_turn:
        chunks = [c for row in itertools.zip_longest(*chunked) for c in row if c is not None]
    else:
        chunks = [c for member in chunked for c in member]
    counter = itertools.count()  # next() is atomic under the GIL

    def job(core: int) -> Callable[[int, int], None]:
        runners = [ex.runners[core] for ex in executables]

        def drain(_lo: int, _hi: int) -> None:
            while (i := next(counter)) < len(chunks):
                m, lo, hi = chunks[i]
                runners[m](lo, hi)

        return drain

    return [(job(c), 0, 0) for c in range(n)]


def _run(ex: Executable, args: Sequence[np.ndarray], trace: bool) -> LaunchStats | None:
    """Bind this launch's arrays, run the tiles (inline or on the pool), collect stats."""
    ex.set_args(args)
    try:
        return _blas_held(ex.spec.uses_blas, _run_held, ex, args, trace)
    finally:
        ex.clear_args()


def with_blas_held(device: DeviceSpec, fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args) with BLAS held at one thread throughout: for a caller about to make
    several launches on `device` that call BLAS, whose own holds then find one thread
    and set nothing (one C call instead of three). The count is given back under the
    device's launch lock: never while another thread's launch runs, which found it
    held and so will not give it back itself. (Without a direct handle on OpenBLAS,
    each launch holds it by itself.)"""
    threads = blas.one_thread()
    if threads is None:
        return fn(*args)
    try:
        return fn(*args)
    finally:
        if threads != 1:
            with device_memory(device).lock:
                blas.restore(threads)


def _blas_held(uses_blas: bool, fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args), with BLAS held at one thread if the program calls it (the VM's cores
    are the parallelism)."""
    threads = blas.one_thread() if uses_blas else 1
    if threads is None:  # no direct handle on OpenBLAS: threadpoolctl
        with _blas_one_thread():
            return fn(*args)
    try:
        return fn(*args)
    finally:
        blas.restore(threads)


def _run_held(ex: Executable, args: Sequence[np.ndarray], trace: bool) -> LaunchStats | None:
    """`_run` once BLAS is held."""
    first = ex.launches == 0
    ex.launches += 1
    if not ex.stats and (ex.n == 1 or (first and ex.spec.plan.global_bytes < FIRST_INLINE_BYTES)):
        quiet = QUIET.enter()
        try:
            ex.run_all()
        finally:
            QUIET.exit(quiet)
        return None
    ntiles = ex.spec.plan.tiles
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
            _pool().run(_share_tiles([ex], ex.n))
    finally:
        QUIET.exit(quiet)
    t1 = time.perf_counter_ns()
    if not ex.stats:
        return None
    return LaunchStats.collect(
        [c.stats for c in ex.cores if c.stats is not None], t0, t1, ntiles, ex.n
    )
