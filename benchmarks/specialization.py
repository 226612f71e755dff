"""Per-new-shape cost of `dvm.compile` programs, and the cost of a tiny cached call.

Run: .venv/bin/python benchmarks/specialization.py [--shapes 20 --repeat 3 --parts ...]

For each example program, `p = dvm.compile(example)` once (the compile cache off, so
that each program is compiled, whatever the cache holds); then for each of
--shapes new shapes, time the first call at that shape and a repeat call at
the same shape (the best of --repeat): their difference is what a new shape
costs (argument checks, symbol binding and guards on the host, then per
kernel the VM's slot evaluation and layout checks and a first launch
without planning). It is measured on the shapes back to back ("stream")
and with other work between them ("after other work", see
`bench_new_shapes`). The table prints medians over the shapes in wall
time (the stream's, as the first call minus the repeat), in CPU time of this
process (which counts every thread: a repeat call planned for two cores
costs more CPU than wall time, so first minus repeat can read low, even
below zero, for shapes big enough to share, unless the first call shares
too, as a matmul's does), and in units of one bare numpy call
(`np.add(x, y, out=o)` on distinct one-element arrays after a second of
warm-up, in the same run): on a shared machine the times swing with the load,
the units much less. "idle" multiplies the units by IDLE_NUMPY_CALL_US, a bare
numpy call on an idle machine. "faults" is the median of the stream's first
calls' page faults.

Programs with intermediates (launch results only later launches read) are
also compiled a second time without keeping their memory for new shapes
(`launches.Arena`), and both are called on the same new shapes, each in
processes of its own taking turns: the cost per new shape and its first
calls' page faults, each way (`bench_kept_memory`).

Because the machine's noise swings those times by up to 2x, the script also
counts what does not swing: the Python bytecodes a first call interprets
beyond a repeat call, on the same shapes (`sys.settrace` with opcode events;
see `bench_bytecodes`). It is a proxy for the Python overhead a new shape
adds, not for the time of numpy's calls.

Then a tiny cached call: `p(x)` for a one-kernel program on a 2x3 input
(median of repeats of 2000 calls), also in bare-numpy-call units, and the
bytecodes one such call interprets; the
time of `dvm.compile` from text, full and from the compile cache, and of
`import dvm` and a cached compile in a fresh process; and a long stream of --stream new
shapes, one call each, timing Python's full garbage collections, which
per-shape medians never include, and the calls' p99 and longest times
(`--no-freeze` for the collector as it was before the first compile froze
the libraries). Last ("patience"), streams of new shapes each called R times,
timed for each plan patience of the runtime (`launches.PLAN_PATIENCE`: how long
a shape's launches run unplanned before they are planned). Then ("large"), GELU,
LayerNorm and softmax at new shapes of about --rows x 1024 float32: a first launch
unplanned on the cores against one planned at once (`bench_large_shapes`), and
("large-state") the same first calls against a call at a known shape in the state a
first call meets, and numpy's own (`bench_large_state`). Last ("growing"), LayerNorm
at shapes each larger than any before, with the allocator's thresholds `vm/heap.py`
sets and with glibc's defaults (`bench_growing_shapes`).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import timeit
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from suite.workloads import DEFAULT_EXAMPLES, load_reference

import dvm
from dvm import host, launches, runtime
from dvm.vm import memory as vm_memory

specializer = importlib.import_module("dvm.vm.specialize")  # (dvm.vm.specialize: a function)

EXAMPLES = DEFAULT_EXAMPLES
IDLE_NUMPY_CALL_US = 0.5
"""A bare numpy call on the benchmark machine when idle, in microseconds (a calibration:
another machine needs its own)."""


def shape_stream(name: str, n: int, rng: np.random.Generator) -> list[dict[str, int]]:
    """`n` distinct symbol assignments of moderate size for an example."""
    seen: set[tuple[tuple[str, int], ...]] = set()
    out: list[dict[str, int]] = []
    while len(out) < n:
        if name in ("matmul.mlir", "addmm_relu.mlir"):
            dims = {s: int(rng.integers(32, 300)) for s in "MKN"}
        elif name == "bert_layer.mlir":
            dims = {"B": int(rng.integers(1, 5)), "S": int(rng.integers(8, 100))}
        elif name == "softmax.mlir":
            dims = {"B": int(rng.integers(1, 9)), "S": int(rng.integers(8, 200))}
        elif name == "mmoe.mlir":
            dims = {"B": int(rng.integers(8, 300)), "E": int(rng.integers(2, 9))}
        else:
            dims = {"R": int(rng.integers(8, 400)), "C": int(rng.integers(8, 600))}
        key = tuple(sorted(dims.items()))
        if key not in seen:
            seen.add(key)
            out.append(dims)
    return out


def numpy_call() -> tuple[float, float]:
    """(wall, CPU) seconds of one bare numpy call: the best of a few thousand.

    The output is a third array: when it aliases an input numpy checks for
    overlap, which doubles the cost and would flatter everything measured in
    these units."""
    x, y, o = np.ones(1, np.float32), np.ones(1, np.float32), np.empty(1, np.float32)
    fn = partial(np.add, x, y, out=o)
    wall = min(timeit.repeat(fn, number=5000, repeat=5)) / 5000
    cpu = min(timeit.repeat(fn, number=5000, repeat=5, timer=time.process_time)) / 5000
    return wall, cpu


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall, CPU) seconds of one call."""
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def new_shape_cost(p: Any, args: list[Any], repeat: int) -> tuple[float, float, float, float, int]:
    """(wall, CPU) of the first call at a new shape minus the best of `repeat` repeats,
    the first call's wall time and the best repeat's, and the first call's page faults."""
    faults = page_faults()
    first = timed(partial(p, *args))
    faults = page_faults() - faults
    again = [timed(partial(p, *args)) for _ in range(repeat)]
    best_wall, best_cpu = min(w for w, _ in again), min(c for _, c in again)
    return first[0] - best_wall, first[1] - best_cpu, first[0], best_wall, faults


def compiled_with_patience(file: str, patience: int) -> Any:
    """The example `file` compiled while `launches.PLAN_PATIENCE` is `patience` (read at
    compile time: the program keeps it)."""
    saved, launches.PLAN_PATIENCE = launches.PLAN_PATIENCE, patience
    try:
        return dvm.compile(EXAMPLES / file)
    finally:
        launches.PLAN_PATIENCE = saved


@contextmanager
def never_unplanned() -> Iterator[None]:
    """First calls planned at once, as later calls are."""
    saved = specializer.UNPLANNED_BYTES, specializer.SHARE_UNPLANNED
    specializer.UNPLANNED_BYTES, specializer.SHARE_UNPLANNED = 0, False
    try:
        yield
    finally:
        specializer.UNPLANNED_BYTES, specializer.SHARE_UNPLANNED = saved


LARGE_DIMS: dict[str, Callable[[int], dict[str, int]]] = {
    "gelu.mlir": lambda rows: {"R": rows, "C": 1024},
    "layernorm.mlir": lambda rows: {"R": rows, "C": 1024},
    "softmax.mlir": lambda rows: {"B": 4, "S": 2 * rows},
}
"""Shapes of about rows x 1024 float32 for the `large` part."""


def bench_large_shapes(shapes: int, repeat: int, rows: int) -> None:
    """One-kernel programs at new shapes of about `rows` x 1024 float32 (rows drawn
    within a quarter of `rows`): the first call minus the best of `repeat` repeats,
    median over the shapes, with a large first launch run unplanned on the cores (the
    default) and planned at once (`never_unplanned`), each on a program of its own, both
    at every shape in turn; then, at one more shape, the bytecodes the first call
    interprets on every core, each way, and a planned repeat's."""
    ref = load_reference(EXAMPLES)
    rng = np.random.default_rng(0)
    print(f"First call at a new shape of about {rows} x 1024 float32, minus a repeat (ms)")
    print(f"  {'program':10s} wall: {'shared':>7s} {'planned':>7s} | cpu: {'shared':>7s} "
          f"{'planned':>7s} | {'repeat':>7s} | bytecodes: {'shared':>6s} {'planned':>7s} "
          f"{'repeat':>6s}")  # fmt: skip
    for file, dims in LARGE_DIMS.items():
        _, spec, _ = ref.EXAMPLES[file]
        shared, planned = dvm.compile(EXAMPLES / file), dvm.compile(EXAMPLES / file)
        drawn = rng.choice(np.arange(rows * 3 // 4, rows * 5 // 4), shapes + 1, replace=False)
        warm = ref.make_inputs(spec, dims(rows), rng)
        shared(*warm)
        with never_unplanned():
            planned(*warm)
        costs: dict[bool, list[tuple[float, ...]]] = {True: [], False: []}
        for i, r in enumerate(drawn[:-1]):
            args = ref.make_inputs(spec, dims(int(r)), rng)
            for share in (True, False) if i % 2 else (False, True):
                if share:
                    costs[True].append(new_shape_cost(shared, [a.copy() for a in args], repeat))
                else:
                    with never_unplanned():
                        costs[False].append(new_shape_cost(planned, args, repeat))
        args = ref.make_inputs(spec, dims(int(drawn[-1])), rng)
        with traced_workers():
            counts = [bytecodes(partial(shared, *args))]
            with never_unplanned():
                counts += [bytecodes(partial(planned, *args)), bytecodes(partial(planned, *args))]
        wall = [statistics.median(c[0] for c in costs[s]) * 1e3 for s in (True, False)]
        cpu = [statistics.median(c[1] for c in costs[s]) * 1e3 for s in (True, False)]
        again = statistics.median(c[3] for c in costs[True] + costs[False]) * 1e3
        print(
            f"  {file.removesuffix('.mlir'):10s}       {wall[0]:7.3f} {wall[1]:7.3f} |"
            f"      {cpu[0]:7.3f} {cpu[1]:7.3f} | {again:7.3f} |"
            f"            {counts[0]:6d} {counts[1]:7d} {counts[2]:6d}"
        )


IDLE_S = 0.005
"""How long the `large-state` part sleeps before a known shape's call."""
NEVER_PLANS = 1 << 40
"""A plan patience no benchmark's launches reach."""
IDLE_CASE = f"known, after {IDLE_S * 1e3:g} ms asleep"
LARGE_STATE_CASES = [
    f"{kind}, {case}"
    for kind in ("dvm", "numpy")
    for case in ("new shape", "known, after inputs made", IDLE_CASE)
]


@contextmanager
def calling_thread_only() -> Iterator[None]:
    """Launches with no worker thread: every tile on the calling thread, so that the
    bytecodes a call interprets there are all of its bytecodes."""
    saved = list(vm_memory._POOL)
    vm_memory._POOL[:] = [vm_memory.Pool(0)]
    try:
        yield
    finally:
        vm_memory._POOL[:] = saved


def bench_large_state(shapes: int, repeat: int, rows: int) -> None:
    """Where a first call's surcharge at a new large shape goes: the first call minus the
    best of `repeat` repeats, medians over `shapes` new shapes of about `rows` x 1024
    float32 (a first launch unplanned on the cores, as in `large`), against the same
    difference for a call at a shape already known, made in the state a first call
    meets: right after fresh inputs were made (the same work as before the first call)
    or after the process slept `IDLE_S`; and numpy's own function the same ways. The
    program never plans here (its patience is endless), so every call runs the executor
    a first call runs. A new shape's own cost is its row minus the known shape's after
    inputs were made; what is left is the state's, paid at a known shape too. Last, the
    bytecodes a call at one more new shape interprets beyond a call at it once known,
    with every tile on the calling thread (the new shape's own Python, exactly)."""
    ref = load_reference(EXAMPLES)
    rng = np.random.default_rng(1)
    print(f"First call minus a repeat at about {rows} x 1024 float32 (ms, medians)")
    print(f"  {'program':10s} {'call':34s} {'wall':>6s} {'cpu':>6s} {'repeat':>7s}")
    for file, dims in LARGE_DIMS.items():
        _, spec, numpy_fn = ref.EXAMPLES[file]
        program = compiled_with_patience(file, NEVER_PLANS)
        drawn = rng.choice(np.arange(rows * 3 // 4, rows * 5 // 4), shapes, replace=False)
        program(*ref.make_inputs(spec, dims(rows), rng))
        costs: dict[str, list[tuple[float, ...]]] = {case: [] for case in LARGE_STATE_CASES}
        for r in drawn:
            fresh = partial(ref.make_inputs, spec, dims(int(r)), rng)
            for fn, kind in ((program, "dvm"), (numpy_fn, "numpy")):
                args = fresh()
                costs[f"{kind}, new shape"].append(new_shape_cost(fn, args, repeat))
                args = fresh()
                costs[f"{kind}, known, after inputs made"].append(new_shape_cost(fn, args, repeat))
                time.sleep(IDLE_S)
                costs[f"{kind}, {IDLE_CASE}"].append(new_shape_cost(fn, args, repeat))
        name = file.removesuffix(".mlir")
        for case, measured in costs.items():
            columns = zip(*measured, strict=True)
            wall, cpu, _, again, _ = (statistics.median(c) * 1e3 for c in columns)
            print(f"  {name:10s} {case:34s} {wall:6.3f} {cpu:6.3f} {again:7.3f}")
            name = ""
        args = ref.make_inputs(spec, dims(rows * 5 // 4), rng)
        with calling_thread_only():
            new, known = (bytecodes(partial(program, *args)) for _ in range(2))
        print(
            f"  {'':10s} bytecodes: new shape {new}, known {known}, new minus known {new - known}"
        )


def bench_new_shapes(files: list[str], shapes: int, repeat: int) -> None:
    """Each program on a stream of new shapes, measured two ways.

    "stream": the shapes back to back, as a server meets them; the unit is timed
    before and after the pass. "after other work": shape by shape, the unit timed
    and the program run with unplanned launches switched off (every launch planned and
    bound first) between one shape's calls and the next shape's first call, so that the
    first call finds caches holding other work; the planned-only column is that other
    program's own cost, so both share the machine's state."""
    ref = load_reference(EXAMPLES)
    rng = np.random.default_rng(0)
    print(f"Per new shape: first call minus the best of {repeat} repeats ({shapes} shapes' median)")
    print(
        f"  {'program':12s} {'kernels':>7s} | stream: {'wall':>8s} {'cpu':>8s} {'calls':>6s}"
        f" {'idle':>8s} {'faults':>6s}"
        f" | after other work: {'cpu':>8s} {'calls':>6s} {'idle':>8s} {'first':>8s} {'repeat':>8s}"
        f" | planned only: {'cpu':>8s}"
    )
    for file in files:
        _, spec, _ = ref.EXAMPLES[file]
        stream, mixed, planned = (dvm.compile(EXAMPLES / file) for _ in range(3))
        warm = ref.make_inputs(spec, shape_stream(file, 1, rng)[0], rng)
        for p in (stream, mixed, planned):
            p(*warm)  # first-ever calls: imports, threads, device memory
        argsets = [ref.make_inputs(spec, d, rng) for d in shape_stream(file, shapes, rng)]
        unit = numpy_call()[1]
        flowing = [new_shape_cost(stream, args, repeat) for args in argsets]
        unit = (unit + numpy_call()[1]) / 2
        rows, units, plain = [], [], []
        for args in argsets:
            args = [a.copy() for a in args]  # new arrays: the shapes are new to `mixed`
            rows.append(new_shape_cost(mixed, args, repeat))
            units.append(rows[-1][1] / numpy_call()[1])
            with never_unplanned():
                plain.append(new_shape_cost(planned, args, repeat)[1])
        launches = len(mixed.profile(*argsets[-1])[1])
        s_wall = statistics.median(f[0] for f in flowing)
        s_cpu = statistics.median(f[1] for f in flowing)
        s_faults = statistics.median(f[4] for f in flowing)
        s_units = s_cpu / unit
        u = statistics.median(units)
        _, cpu, first, again, _ = (statistics.median(c) * 1e3 for c in zip(*rows, strict=True))
        print(
            f"  {file.removesuffix('.mlir'):12s} {launches:7d} | {s_wall * 1e3:14.3f}ms"
            f" {s_cpu * 1e3:6.3f}ms"
            f" {s_units:6.0f} {s_units * IDLE_NUMPY_CALL_US / 1e3:6.3f}ms {s_faults:6.0f}"
            f" | {cpu:23.3f}ms {u:6.0f} {u * IDLE_NUMPY_CALL_US / 1e3:6.3f}ms"
            f" {first:6.3f}ms {again:6.3f}ms | {statistics.median(plain) * 1e3:18.3f}ms"
        )


@contextmanager
def intermediates_kept(keep: bool) -> Iterator[None]:
    """Programs compiled inside keep their intermediates' memory (`launches.Arena`) or not."""
    saved = host.KEEP_INTERMEDIATES
    host.KEEP_INTERMEDIATES = keep
    try:
        yield
    finally:
        host.KEEP_INTERMEDIATES = saved


def page_faults() -> int:
    """Minor page faults of this process so far."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


KEPT_MEMORY_ROUNDS = 3
"""Processes per program and setting in `bench_kept_memory`."""


def bench_kept_memory(files: list[str], shapes: int, repeat: int) -> None:
    """Programs with intermediates, with and without kept memory for them, each way in
    processes of its own taking turns (KEPT_MEMORY_ROUNDS each; which goes first
    alternates), on the same new shapes: per new shape, the first call minus the best
    repeat, and the first call's page faults. Two programs in one process share one
    heap, so what one keeps alive changes the other's faults (docs/performance.md,
    "Measuring")."""
    print(
        f"Intermediates in kept memory, per new shape ({shapes} shapes' median; medians of"
        f" {KEPT_MEMORY_ROUNDS} processes each way, taking turns)"
    )
    print(
        f"  {'program':12s} {'kept':>9s} {'not kept':>9s} {'ratio':>6s} {'lower kept':>10s}"
        " | page faults: kept, not"
    )
    for file in files:
        with intermediates_kept(True):
            if not dvm.compile(EXAMPLES / file).variants[frozenset()].places:
                continue  # no intermediates to keep
        runs: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        for r in range(KEPT_MEMORY_ROUNDS):
            for keep in (True, False) if r % 2 else (False, True):
                runs[keep].append(kept_memory_process(file, keep, shapes, repeat))
        (a, fa), (b, fb) = (
            tuple(map(statistics.median, zip(*runs[k], strict=True))) for k in (True, False)
        )
        lower = sum(x[0] < y[0] for x, y in zip(runs[True], runs[False], strict=True))
        print(
            f"  {file.removesuffix('.mlir'):12s} {a * 1e3:7.3f}ms {b * 1e3:7.3f}ms {a / b:6.2f}"
            f" {lower:5d} of {len(runs[True])} | {fa:5.0f} {fb:5.0f}"
        )


def kept_memory_process(file: str, keep: bool, shapes: int, repeat: int) -> tuple[float, float]:
    """`kept_memory_costs` in a new process."""
    command = [sys.executable, __file__, "--kept-memory-run", f"{file}:{int(keep)}"]
    command += ["--shapes", str(shapes), "--repeat", str(repeat)]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), float(out[1])


def kept_memory_costs(file: str, keep: bool, shapes: int, repeat: int) -> tuple[float, float]:
    """Median cost per new shape and median page faults of the first calls of `file`
    compiled with or without kept memory, on `shape_stream`'s shapes (seed 1)."""
    ref = load_reference(EXAMPLES)
    rng = np.random.default_rng(1)
    _, spec, _ = ref.EXAMPLES[file]
    with intermediates_kept(keep):
        program = dvm.compile(EXAMPLES / file)
    program(*ref.make_inputs(spec, shape_stream(file, 1, rng)[0], rng))
    costs = [
        new_shape_cost(program, ref.make_inputs(spec, dims, rng), repeat)
        for dims in shape_stream(file, shapes, rng)
    ]
    return statistics.median(c[0] for c in costs), statistics.median(c[4] for c in costs)


def bytecodes(fn: Callable[[], object]) -> int:
    """Python bytecodes interpreted while `fn()` runs (this thread, and the workers of a
    `traced_workers` pool)."""
    return sum(bytecodes_by(fn, lambda frame: "").values())


def bytecodes_by(fn: Callable[[], object], site: Callable[[Any], str]) -> Counter[str]:
    """The bytecodes `fn()` interprets, counted by `site(frame)`: this thread's, and
    those of the workers of a `traced_workers` pool (a count per thread: no update of
    one is lost to another thread)."""
    counts: dict[int, Counter[str]] = {}

    def tracer(frame: Any, event: str, arg: object) -> Any:
        frame.f_trace_opcodes = True
        if event == "opcode":
            count = counts.get(threading.get_ident())
            if count is None:
                count = counts[threading.get_ident()] = Counter()
            count[site(frame)] += 1
        return tracer

    _WORKER_TRACE[0] = tracer
    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(None)
        _WORKER_TRACE[0] = None
    return sum(counts.values(), Counter())


_WORKER_TRACE: list[Any] = [None]
"""The tracer the workers of a `traced_workers` pool run their jobs under (None: none)."""


def _worker_trampoline(frame: Any, event: str, arg: object) -> Any:
    """The trace function a `traced_workers` thread starts with: `_WORKER_TRACE`'s for
    each frame called while `bytecodes_by` counts, else none."""
    tracer = _WORKER_TRACE[0]
    return None if tracer is None else tracer(frame, event, arg)


@contextmanager
def traced_workers() -> Iterator[None]:
    """The VM's worker pool replaced by a fresh one whose threads start under
    `_worker_trampoline` (a thread's trace function is set as it starts), so that
    `bytecodes_by` counts the Python of the tiles the cores share too."""
    saved = list(vm_memory._POOL)
    threading.settrace(_worker_trampoline)
    try:
        vm_memory._POOL[:] = [vm_memory.Pool(vm_memory.workers())]
        yield
    finally:
        threading.settrace(None)
        vm_memory._POOL[:] = saved


def bench_bytecodes(files: list[str], shapes: int) -> None:
    """Per program, the bytecodes of a first call beyond a repeat call, median over
    `shapes` new shapes of the stream: deterministic, unlike the times. Then what the
    call that plans costs, whenever the plan patience lets it come: a second program,
    planning at the second call (patience 0), counted there beyond a planned repeat."""
    ref = load_reference(EXAMPLES)
    rng = np.random.default_rng(0)
    print(f"Interpreted bytecodes per new shape: first call minus a repeat ({shapes} shapes)")
    for file in files:
        _, spec, _ = ref.EXAMPLES[file]
        p = dvm.compile(EXAMPLES / file)
        eager = compiled_with_patience(file, 0)
        warm = ref.make_inputs(spec, shape_stream(file, 1, rng)[0], rng)
        p(*warm)
        eager(*warm)
        extra, second, repeat, planning, planned = [], [], [], [], []
        for dims in shape_stream(file, shapes, rng):
            args = ref.make_inputs(spec, dims, rng)
            first = bytecodes(partial(p, *args))
            again = bytecodes(partial(p, *args))
            repeat.append(bytecodes(partial(p, *args)))
            extra.append(first - repeat[-1])
            second.append(again - repeat[-1])
            eager(*args)
            plans = bytecodes(partial(eager, *args))
            planned.append(bytecodes(partial(eager, *args)))
            planning.append(plans - planned[-1])
        print(
            f"  {file.removesuffix('.mlir'):12s} {statistics.median(extra):8.0f} more"
            f" (a repeat: {statistics.median(repeat):.0f};"
            f" the second call: {statistics.median(second):.0f} more;"
            f" the call that plans: {statistics.median(planning):.0f} more than a planned"
            f" repeat, {statistics.median(planned):.0f})"
        )


def bench_tiny_call(repeat: int) -> None:
    print("Tiny cached call (one kernel): median of repeats of 2000 calls")
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    for file, args in (("gelu.mlir", (x,)), ("layernorm.mlir", (x, x[0], x[0]))):
        p = dvm.compile(EXAMPLES / file)
        p(*args)
        ratios, times = [], []
        for _ in range(max(repeat, 7)):
            t = timeit.timeit(partial(p, *args), number=2000) / 2000
            unit, _ = numpy_call()
            times.append(t)
            ratios.append(t / unit)
        t, r = statistics.median(times), statistics.median(ratios)
        name = file.removesuffix(".mlir")
        p50, p99, longest = call_tails(partial(p, *args), 20000)
        print(
            f"  {name:10s} {x.shape}  {t * 1e6:7.1f} us = {r:4.0f} numpy calls"
            f" (idle: {r * IDLE_NUMPY_CALL_US:.0f} us); one call at a time:"
            f" p50 {p50 * 1e6:.1f} p99 {p99 * 1e6:.1f} max {longest * 1e6:.0f} us;"
            f" {bytecodes(partial(p, *args))} Python bytecodes"
        )
    wall, _ = numpy_call()
    print(f"  a bare np.add(out=) on 1 element here: {wall * 1e6:.2f} us")


def call_tails(call: Callable[[], Any], n: int) -> tuple[float, float, float]:
    """The p50, p99 and longest of `n` calls timed one by one (seconds): the tails hold
    the collector's pauses and the machine's other work, which medians hide."""
    clock = time.perf_counter
    times = []
    for _ in range(n):
        start = clock()
        call()
        times.append(clock() - start)
    times.sort()
    return times[n // 2], times[int(0.99 * (n - 1))], times[-1]


def bench_compile(repeat: int) -> None:
    """`dvm.compile` from text, in this process after one warm-up compile (sympy's and
    xDSL's caches filled, as in a server), without and with the compile cache (a hit);
    then fresh processes: `import dvm` and a compile that hits the cache. Medians."""
    n = max(repeat, 5)
    print(f"Compile from text (median of {n} after a warm-up): full | compile cache hit")
    with tempfile.TemporaryDirectory() as folder:
        os.environ["DVM_CACHE_DIR"] = folder
        for file, goal in (("layernorm.mlir", 0.1), ("bert_layer.mlir", 1.5)):
            text = (EXAMPLES / file).read_text()
            dvm.compile(text, cache=True)
            full = [timed(partial(dvm.compile, text, cache=False))[0] for _ in range(n)]
            hit = [timed(partial(dvm.compile, text, cache=True))[0] for _ in range(n)]
            print(
                f"  {file.removesuffix('.mlir'):12s} {statistics.median(full) * 1e3:7.1f} ms"
                f" (goal {goal * 1e3:.0f} ms) | {statistics.median(hit) * 1e3:7.1f} ms"
            )
        print(f"A fresh process (median of {n}): import dvm | its first compile, a cache hit")
        for file in ("gelu.mlir", "layernorm.mlir", "bert_layer.mlir"):
            runs = [fresh_process_compile(EXAMPLES / file, folder) for _ in range(n + 1)][1:]
            imports, compiles = zip(*runs, strict=True)
            print(
                f"  {file.removesuffix('.mlir'):12s} {statistics.median(imports) * 1e3:7.1f} ms"
                f" | {statistics.median(compiles) * 1e3:7.1f} ms"
            )


FRESH_COMPILE = """\
import sys, time
start = time.perf_counter()
import dvm
imported = time.perf_counter()
dvm.compile(sys.argv[1], cache=True)
print(imported - start, time.perf_counter() - imported)
"""


def fresh_process_compile(path: Path, cache_dir: str) -> tuple[float, float]:
    """In a new Python process with the compile cache in `cache_dir`: the seconds
    `import dvm` takes, and then `dvm.compile(path)`."""
    env = {**os.environ, "DVM_CACHE_DIR": cache_dir}
    # (-P: the child imports this interpreter's dvm, not a dvm/ in the working directory)
    command = [sys.executable, "-P", "-c", FRESH_COMPILE, str(path)]
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    imported, compiled = out.split()
    return float(imported), float(compiled)


LONG_STREAM = ("matmul.mlir", "layernorm.mlir", "addmm_relu.mlir")
"""The programs whose shape streams hold thousands of distinct shapes."""


def bench_long_stream(files: list[str], n: int) -> None:
    """Each program called once at each of `n` new shapes, as a server meets them:
    the pauses of Python's full (generation 2) garbage collections, which the per-shape
    medians above never see, and the calls' p99 and longest times. A collection's cost
    grows with the objects alive that are not frozen (the first compile freezes the
    imported libraries, unless --no-freeze), and their frequency with the objects each
    shape leaves alive."""
    ref = load_reference(EXAMPLES)
    rng = np.random.default_rng(1)
    pauses: list[float] = []
    started = [0.0]

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if info["generation"] == 2:
            if phase == "start":
                started[0] = time.perf_counter()
            else:
                pauses.append(time.perf_counter() - started[0])

    print(f"Long stream: one call at each of {n} new shapes")
    gc.callbacks.append(on_gc)
    try:
        for file in [f for f in files if f in LONG_STREAM]:
            _, spec, _ = ref.EXAMPLES[file]
            p = dvm.compile(EXAMPLES / file)
            p(*ref.make_inputs(spec, shape_stream(file, 1, rng)[0], rng))
            gc.collect()  # each program starts from the same state
            pauses.clear()
            calls = []
            for dims in shape_stream(file, n, rng):
                args = ref.make_inputs(spec, dims, rng)
                calls.append(timed(partial(p, *args))[0])
            total, median = sum(pauses), statistics.median(calls)
            p99, longest = sorted(calls)[int(0.99 * (len(calls) - 1))], max(calls)
            print(
                f"  {file.removesuffix('.mlir'):12s} call median {median * 1e3:6.3f}"
                f" p99 {p99 * 1e3:6.2f} max {longest * 1e3:7.2f} ms"
                f" | {len(pauses)} full collections, {total * 1e3:7.1f} ms in all,"
                f" the longest {max(pauses, default=0) * 1e3:6.1f} ms"
                f" ({gc.get_freeze_count()} objects frozen)"
            )
    finally:
        gc.callbacks.remove(on_gc)


PATIENCES = (0, 4, 8, 16, 32)
"""The plan patiences compared (`launches.PLAN_PATIENCE`; 0: the second call plans)."""
CALLS_PER_SHAPE = (1, 2, 3, 5, 10, 30)


def bench_patience(files: list[str], shapes: int) -> None:
    """Streams of new shapes, each called R times in a row, by the runtime's plan patience
    (when a shape's launches stop running unplanned and are planned): the wall time of a
    shape's R calls, median over `shapes` shapes, in ms, and its ratio to planning at the
    second call (patience 0). Each shape's R calls run on every patience's program in
    turn, starting with another program at each shape, so the load and the caches
    swing them alike."""
    ref = load_reference(EXAMPLES)
    rng = np.random.default_rng(2)
    print(f"A shape called R times: ms for its R calls, by plan patience ({shapes} shapes)")
    print(f"  {'program':12s} {'R':>3s} | " + " ".join(f"{p:>14d}" for p in PATIENCES))
    for file in files:
        _, spec, _ = ref.EXAMPLES[file]
        programs = [compiled_with_patience(file, patience) for patience in PATIENCES]
        warm = ref.make_inputs(spec, shape_stream(file, 1, rng)[0], rng)
        for p in programs:
            for _ in range(100):
                p(*warm)
        for calls in CALLS_PER_SHAPE:
            costs: list[list[float]] = [[] for _ in programs]
            for turn, dims in enumerate(shape_stream(file, shapes, rng)):
                args = ref.make_inputs(spec, dims, rng)
                for j in range(len(programs)):
                    j = (j + turn) % len(programs)
                    p, start = programs[j], time.perf_counter()
                    for _ in range(calls):
                        p(*args)
                    costs[j].append(time.perf_counter() - start)
            medians = [statistics.median(c) * 1e3 for c in costs]
            cells = " ".join(f"{m:7.3f} ({m / medians[0]:4.2f})" for m in medians)
            print(f"  {file.removesuffix('.mlir'):12s} {calls:3d} | {cells}")


GROWING_ROUNDS = 3
"""Processes per setting in `bench_growing_shapes`."""


def bench_growing_shapes(shapes: int, rows: int) -> None:
    """LayerNorm at `shapes` new shapes of `rows` + 4i rows of 1024 float32, each larger
    than any before (after 30 calls at 7/8 of `rows`), three calls each: the medians of
    each call's wall time and page faults, with the allocator's thresholds kept where
    glibc's rise ends (`vm.heap`, the default) and left at glibc's defaults
    (`heap.KEEP_FREED` off), each in processes of its own, taking turns."""
    print(f"LayerNorm at growing shapes of about {rows} x 1024 float32: calls 1, 2, 3 (ms)")
    for turn in range(GROWING_ROUNDS):
        for keep in (True, False) if turn % 2 else (False, True):
            run = [sys.executable, __file__, "--growing-run", "1" if keep else "0"]
            run += ["--shapes", str(shapes), "--rows", str(rows)]
            got = subprocess.run(run, capture_output=True, text=True, check=True).stdout.split()
            times, faults = " ".join(got[:3]), " ".join(got[3:])
            label = "thresholds kept" if keep else "glibc defaults"
            print(f"  {label:16s} {times}   page faults: {faults}")


def growing_shape_calls(keep: bool, shapes: int, rows: int) -> list[str]:
    """One process's `bench_growing_shapes`: the medians of calls 1, 2 and 3 in ms, then
    of their page faults. The inputs are drawn as float32 (no float64 temporaries),
    so no large block freed before the first call has raised glibc's thresholds."""
    heap = importlib.import_module("dvm.vm.heap")
    heap.KEEP_FREED = keep
    rng = np.random.default_rng(0)
    program = dvm.compile(EXAMPLES / "layernorm.mlir")
    scale = rng.standard_normal(1024, dtype=np.float32)

    def inputs(r: int) -> list[np.ndarray]:
        return [rng.standard_normal((r, 1024), dtype=np.float32), scale, scale]

    warm = inputs(rows * 7 // 8)
    for _ in range(30):
        program(*warm)
    calls: list[list[tuple[float, int]]] = [[], [], []]
    for i in range(shapes):
        args = inputs(rows + 4 * i)
        for k in range(3):
            faults = page_faults()
            wall, _ = timed(partial(program, *args))
            calls[k].append((wall, page_faults() - faults))
    times = [f"{statistics.median(w for w, _ in c) * 1e3:.3f}" for c in calls]
    return times + [str(int(statistics.median(f for _, f in c))) for c in calls]


def warm_up(seconds: float = 1.0) -> None:
    """Spin on tiny numpy calls first: right after start-up they read ~2x slow."""
    x, o = np.ones(1, np.float32), np.empty(1, np.float32)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        np.add(x, x, out=o)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--shapes", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--stream", type=int, default=2000, help="new shapes in the long stream")
    ap.add_argument(
        "--no-freeze",
        action="store_true",
        help="no gc.freeze() after the first compile (runtime.FREEZE_AFTER_FIRST_COMPILE)",
    )
    ap.add_argument(
        "--programs",
        default="matmul,layernorm,addmm_relu,gelu,softmax,bert_layer,mmoe",
        help="comma-separated example names",
    )
    ap.add_argument(
        "--parts",
        default=",".join(PARTS),
        help="comma-separated parts to run, in this order (a part run alone meets a fresh"
        " process: no earlier part has grown its heap)",
    )
    ap.add_argument(
        "--patience",
        type=int,
        default=launches.PLAN_PATIENCE,
        help="the runtime's plan patience in the other parts (0: the second call plans)",
    )
    ap.add_argument("--rows", type=int, default=1024, help="the `large` part's rows")
    ap.add_argument("--kept-memory-run", help=argparse.SUPPRESS)  # FILE:KEEP, one process's part
    ap.add_argument("--growing-run", help=argparse.SUPPRESS)  # KEEP, one process's part
    a = ap.parse_args()
    # every program measured is compiled: one read from the compile cache binds its
    # first new shapes by walking tables (`launches.FAST_PATH_WALKS`), which would make
    # the parts' figures depend on the cache's state ("compile" times hits itself)
    os.environ["DVM_CACHE"] = "off"
    if a.kept_memory_run:
        file, keep = a.kept_memory_run.split(":")
        print(*kept_memory_costs(file, keep == "1", a.shapes, a.repeat))
        return
    if a.growing_run:
        print(*growing_shape_calls(a.growing_run == "1", a.shapes, a.rows))
        return
    runtime.FREEZE_AFTER_FIRST_COMPILE = not a.no_freeze
    launches.PLAN_PATIENCE = a.patience
    files = [f"{n}.mlir" for n in a.programs.split(",") if n]
    parts = a.parts.split(",")
    if unknown := set(parts) - set(PARTS):
        ap.error(f"unknown parts {sorted(unknown)}; use some of {','.join(PARTS)}")
    warm_up()
    if "new-shapes" in parts:
        bench_new_shapes(files, a.shapes, a.repeat)
    if "kept-memory" in parts:
        bench_kept_memory(files, a.shapes, a.repeat)
    if "bytecodes" in parts:
        bench_bytecodes(files, a.shapes)
    if "tiny" in parts:
        bench_tiny_call(a.repeat)
    if "compile" in parts:
        bench_compile(a.repeat)
    if "stream" in parts and a.stream:
        bench_long_stream(files, a.stream)
    if "patience" in parts:
        bench_patience(files, a.shapes)
    if "large" in parts:
        bench_large_shapes(a.shapes, a.repeat, a.rows)
    if "large-state" in parts:
        bench_large_state(a.shapes, a.repeat, a.rows)
    if "growing" in parts:
        bench_growing_shapes(a.shapes, a.rows)


PARTS = (
    "new-shapes",
    "kept-memory",
    "bytecodes",
    "tiny",
    "compile",
    "stream",
    "patience",
    "large",
    "large-state",
    "growing",
)


if __name__ == "__main__":
    main()
