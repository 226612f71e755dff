"""The simulated device's memories and cores: what every launch on a device shares.

`device_memory(device)` holds one local memory per core (an aligned byte
buffer; registers are numpy views into it) and a lock that makes launches on
the device run one at a time, like one device stream; `pool()` is the
process-wide set of worker threads, one per CPU but the calling one.
"""

from __future__ import annotations

import mmap
import os
import queue
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from dvm.vm.device import DeviceSpec
from dvm.vm.heap import keep_freed_memory


class Kept(NamedTuple):
    """What unplanned launches keep beside a local memory across launches (bounded):
    register views by ((offset, capacity), dtype number, shape), scratch arrays by
    (shape, dtype), and the ((offset, capacity), shape) pairs of registers known to fit
    tiles of that shape without a view (`unplanned_calls.fits`). Its DeviceMemory
    holds it."""

    mem: np.ndarray
    local: np.ndarray
    """What register views are views of (their `base`: numpy's is the owner)."""
    views: dict[Any, Any]
    scratch: dict[Any, Any]
    fitted: set[Any]


MAX_KEPT_VIEWS, MAX_KEPT_SCRATCH = 4096, 64
"""Beyond these, what a `Kept` holds is dropped before a launch (a stream of shapes
keeps adding views)."""


def trim(kept: Kept) -> None:
    """Drop what `kept` holds once it has grown past its bounds."""
    if len(kept.views) > MAX_KEPT_VIEWS or len(kept.scratch) > MAX_KEPT_SCRATCH:
        kept.views.clear()
        kept.scratch.clear()
    if len(kept.fitted) > MAX_KEPT_VIEWS:
        kept.fitted.clear()


def kept_for(mem: np.ndarray) -> Kept:
    """What unplanned launches keep beside local memory `mem`, empty."""
    return Kept(mem, mem if mem.base is None else mem.base, {}, {}, set())


Job = tuple[Callable[[int, int], None], int, int]
"""One core's share of a launch for the pool: fn(lo, hi) runs it."""


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
            raw = zeroed_without_huge_pages(size + align)
            start = -raw.ctypes.data % align
            self.buffers.append(raw[start : start + size])
        self.kept = [kept_for(buffer) for buffer in self.buffers]
        """Per core, what unplanned launches keep beside its memory."""
        self.unplanned = self.kept[0]
        """What unplanned launches on the calling thread keep beside core 0's memory."""
        self.mapped: list[list[tuple[int, int]]] = [[] for _ in range(cores)]
        """Per core: the byte ranges [start, end) of its buffer that are mapped, sorted,
        apart (see `reach`)."""
        self.touched = [0] * cores
        """Per core: bytes at the start of its buffer that are all mapped (the common
        check: most reaches end below it)."""

    def reach(self, nbytes: int, core: int | None = None, start: int = 0) -> None:
        """Map the pages of bytes `start` to `nbytes` of `core`'s buffer (of every core's
        when None) before a launch's tiles use them (the caller holds `lock`, or is that
        core binding its registers): the buffers are zeroed lazily, so a tile that
        reached a page first would pay its fault inside the tile. Memory is mapped as
        launches reach it: an unplanned launch maps what its registers reach, a planned
        one each register view a core binds (`planned.Core.reg`), that view's bytes
        only. So a program compiled but never called at a large shape never maps the
        whole memory (64 MiB on a host with a large L3), and a matmul that reads its
        operands in place maps none of the memory their registers span, only its result
        register's (at 536x3419x706, 13 MiB per core below it, whose faults would cost
        its first call more than its gemm)."""
        for c in range(len(self.buffers)) if core is None else (core,):
            if nbytes > self.touched[c]:
                self._map(c, max(start, self.touched[c]), nbytes)

    def _map(self, core: int, start: int, end: int) -> None:
        """Map bytes `start` to `end` of `core`'s buffer where no reach has mapped them
        (mapped bytes may hold a register's data: never refilled)."""
        if start >= end:
            return
        buffer, spans = self.buffers[core], []
        gap, lo, hi = start, start, end
        for s, e in self.mapped[core]:
            if e < start or s > end:  # apart from [start, end)
                spans.append((s, e))
                continue
            if s > gap:
                buffer[gap:s].fill(0)
            gap, lo, hi = max(gap, e), min(lo, s), max(hi, e)
        if gap < end:
            buffer[gap:end].fill(0)
        spans.append((lo, hi))
        spans.sort()
        self.mapped[core] = spans
        self.touched[core] = spans[0][1] if spans[0][0] == 0 else 0


def zeroed_without_huge_pages(nbytes: int) -> np.ndarray:
    """`nbytes` zero bytes that the kernel maps in base pages, not transparent huge pages
    (where the system has madvise). numpy advises its large allocations for huge pages,
    and then the first touch of a register faults in, and zeroes, a whole 2 MiB page:
    a register mapped high in a local memory cost a first call its size several times
    over. Base pages cost their faults where a launch reaches; the steady state, whose
    registers stay within a few MiB, does not miss the huge pages' TLB reach."""
    if not hasattr(mmap, "MADV_NOHUGEPAGE"):
        return np.zeros(nbytes, np.uint8)
    anonymous = mmap.mmap(-1, nbytes)  # zeroed by the kernel, mapped as touched
    anonymous.madvise(mmap.MADV_NOHUGEPAGE)
    return np.frombuffer(anonymous, np.uint8)


_MEMORIES: dict[DeviceSpec, DeviceMemory] = {}


_MEMORIES_LOCK = threading.Lock()


def device_memory(device: DeviceSpec) -> DeviceMemory:
    """The (lazily allocated) local memories of `device`'s cores, as many as the worker
    threads (and the calling thread) run at once."""
    mem = _MEMORIES.get(device)  # a dict read is atomic: the lock is for the first
    if mem is not None:
        return mem
    with _MEMORIES_LOCK:
        mem = _MEMORIES.get(device)
        if mem is None:
            keep_freed_memory()  # new shapes' outputs in mapped pages (see `heap.py`)
            cores = min(max(device.vector_cores, device.cube_cores), workers() + 1)
            mem = _MEMORIES[device] = DeviceMemory(device, max(cores, 1))
        return mem


class Pool:
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
            outcome: BaseException | None = None
            try:
                fn(lo, hi)
            except BaseException as e:  # report to the launching thread
                outcome = e
            fn = None  # a job may hold its launch's arrays: let go before reporting
            done.put(outcome)

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


_POOL: list[Pool] = []
_POOL_LOCK = threading.Lock()


def workers() -> int:
    """How many worker threads the pool has (or will have): one per CPU but the calling
    one. The local memories are counted by it without starting them: a first call
    whose launches all run on the calling thread starts no thread (starting one waits
    for it to run, milliseconds on a busy machine)."""
    return max((os.cpu_count() or 1) - 1, 0)


def pool() -> Pool:
    """The process-wide worker pool (`workers()` threads), made on first use: once,
    whichever threads launch first (two pools would leave one's threads idle)."""
    if not _POOL:  # (a list read is atomic: the lock is for the first)
        with _POOL_LOCK:
            if not _POOL:
                _POOL.append(Pool(workers()))
    return _POOL[0]
