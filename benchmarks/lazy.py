"""Plain numpy against `dvm.lazy` on streams of new shapes, compiles included.

Run: .venv/bin/python benchmarks/lazy.py [--shapes 12 --calls 3 --rows 1024 --cols 1024]
     .venv/bin/python benchmarks/lazy.py --profile [--cpu]   (where a warm lazy call's time goes)
     .venv/bin/python benchmarks/lazy.py --plan-cost [--rows 1000]   (planning against its gain)
     .venv/bin/python benchmarks/lazy.py --alone [--calls 3]   (the warm lazy streams alone)

Each function (LayerNorm, a GELU chain, softmax) runs, in one process, on a stream
of --shapes new shapes (rows varying around --rows, so each holds about
rows x cols elements), --calls times per shape (each call ends with `np.asarray`, a
sync point), in plain numpy and on lazy arrays. The two streams run in turn, shape
by shape (numpy's calls at a shape, then lazy's, and the other way round at the next
shape), so that both meet the same load on a shared machine and each side's first
call at a shape follows the other side's calls as often: a call right after numpy's
finds its input evicted from the caches by numpy's temporaries (20-25 MB of them at
1M elements), which costs the next call 0.2-0.45 ms. Each stream's time is the sum of
its calls'. This runs twice:
first with an empty compile cache (a temporary folder: the lazy stream's one compile
goes through the whole pipeline), then, after `lazy.reset()`, with the entry the
first wrote (the compile is a cache hit). Reported per function: each stream's time
and numpy's over lazy's (the lazy streams include their compile, also given alone),
numpy's CPU time over lazy's in the warm streams (every thread's: lazy's launches
share the cores, so its CPU time exceeds its wall time on an idle machine, and on a
busy one the CPU ratio swings less than the wall ratio), the medians of a call at a
shape already met (lazy: and its p90) and of a first call at a new shape (lazy: its
specialization), and what recording costs per op (a function recorded without being
flushed, median over repeats, divided by the ops it records). A lazy call at a known
shape that plans a kernel's launch (once its launches at that shape have run the
plan patience, `launches.PLAN_PATIENCE`: often the third call at 1M elements) is
counted apart from the other repeats: the median of those calls and how many
there were.

Costs paid once per process are taken before the streams, for both sides alike: the
compiler's start-up (its imports and sympy's, paid by the first compile of a process)
is taken and printed, so is the VM's (the first launch at a large shape maps the cores'
local memories and starts the worker threads: a millisecond or two, once), and every
function runs once in numpy on the stream's largest shape, so that numpy's first stream
does not pay for growing the heap its temporaries come from (tens of milliseconds of
page faults, once). What a compile pays the first time it meets a kind of op (xDSL's
parser for it, the passes' tables) stays in the cold streams. The machine's load average is
printed: on a shared machine, compare ratios from one run, not times across runs.

With --profile, the same stream runs with the segment compiled before it (warm), and
each lazy call is split into its parts: recording (the function on lazy arrays), the
segment's key (`select`), finding its program, the program's host checks of a new
signature, its kernels' launch plans (the VM's specialization), the launches, the rest
of the program's call (output allocation, host steps, the results' check) and the rest
of the flush (arguments, giving the results to their nodes). Beside it, per call, the
bare program (a second `dvm.compile` of the segment's text, meeting each shape anew as
the lazy one does) and numpy, in turn, in every order. Medians in microseconds, of the
first call at a shape and of the others; with --cpu, in CPU time (the process's,
every thread's: a launch's parts on the cores count twice or more).

With --plan-cost, each function's kernel at one shape (--rows x --cols) is launched on
the VM alone, in turn: unplanned (its tiles shared among the cores, as the calls before
its patience is spent run), planned, and planned at once on a new specializer (the
launch that plans: planning, binding each core's tile classes, the run). Medians of
the process's CPU time (every thread's) in ms: what planning costs beyond a planned
launch, and what a planned launch saves on an unplanned one (`vm/launch.py`'s
`SHARED_PLAN_PRICE` weighs the two).

With --alone, each function's lazy stream runs warm (its segment compiled, the VM
started), without numpy's calls between: its wall time and CPU time (every
thread's), which a busy machine swings less.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

import dvm
from dvm import launches, lazy, runtime
from dvm.lazy import segment
from dvm.lazy.record import TRACE


def layernorm(x: Any) -> Any:
    mu = x.mean(-1, keepdims=True)
    d = x - mu
    var = (d * d).mean(-1, keepdims=True)
    return d / np.sqrt(var + 1e-5) * 1.5 + 0.25


def gelu(x: Any) -> Any:
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def softmax(x: Any) -> Any:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


FUNCTIONS: dict[str, Callable[[Any], Any]] = {
    "layernorm": layernorm,
    "gelu": gelu,
    "softmax": softmax,
}


@dataclass
class Stream:
    """One side's calls of a stream: their times at a new shape, at a known one, and
    (lazy) at a known one whose call planned a kernel's launch; and the CPU seconds of
    all of them, every thread's."""

    firsts: list[float] = field(default_factory=list)
    repeats: list[float] = field(default_factory=list)
    planning: list[float] = field(default_factory=list)
    cpu: float = 0.0

    @property
    def total(self) -> float:
        return sum(self.firsts) + sum(self.repeats) + sum(self.planning)


def planned_launches() -> int:
    """How many launch shapes the compiled segments' kernels have planned (bound tile
    classes) so far: a call that adds one paid for planning and binding."""
    count = 0
    for entry in segment.PROGRAMS.values():
        variants = entry.program.variants.values() if entry.program is not None else ()
        for variant in variants:
            for kernel in variant.kernels.values():
                specs = [spec for _, spec, _ in kernel.plans.values() if spec is not None]
                count += sum(spec.planned for spec in specs)
    return count


def streams(
    function: Callable[[Any], Any], inputs: list[np.ndarray[Any, Any]], calls: int
) -> tuple[Stream, Stream, float]:
    """The function's stream in numpy and on lazy arrays (from no compiled segment),
    shape by shape in turn, so that both meet the same load; and the lazy side's
    compile seconds."""
    lazy.reset()
    sides = Stream(), Stream()
    turns = [(sides[0], np.asarray), (sides[1], lazy.asarray)]
    for i, x in enumerate(inputs):
        for side, wrap in turns if i % 2 == 0 else turns[::-1]:  # each side first in turn
            for k in range(calls):
                plans = planned_launches() if wrap is lazy.asarray else 0
                cpu, start = time.process_time(), time.perf_counter()
                np.asarray(function(wrap(x)))
                elapsed = time.perf_counter() - start
                side.cpu += time.process_time() - cpu
                if k == 0:
                    side.firsts.append(elapsed)
                elif wrap is lazy.asarray and planned_launches() > plans:
                    side.planning.append(elapsed)
                else:
                    side.repeats.append(elapsed)
    return sides[0], sides[1], lazy.stats()["compile_seconds"]


def recording_cost(function: Callable[[Any], Any], x: np.ndarray[Any, Any]) -> float:
    """Microseconds per recorded op (nothing flushed)."""
    small = lazy.asarray(x[:2])
    times = []
    for _ in range(200):
        before = lazy.stats()["ops_recorded"]
        t0 = time.perf_counter()
        y = function(small)
        elapsed = time.perf_counter() - t0
        ops = lazy.stats()["ops_recorded"] - before
        times.append(elapsed / ops)
        del y
    lazy.sync()
    return statistics.median(times) * 1e6


def ms(values: list[float], q: float) -> str:
    return f"{np.quantile(values, q) * 1e3:7.2f}" if values else f"{'-':>7}"  # (no such call)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", type=int, default=12)
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--rows", type=int, default=1024)
    parser.add_argument("--cols", type=int, default=1024)
    parser.add_argument("--profile", action="store_true", help="split a warm lazy call")
    parser.add_argument("--cpu", action="store_true", help="--profile in CPU time")
    parser.add_argument("--plan-cost", action="store_true", help="planning against its gain")
    parser.add_argument("--alone", action="store_true", help="the warm lazy streams alone")
    options = parser.parse_args()
    rng = np.random.default_rng(0)
    if options.plan_cost:
        x = rng.standard_normal((options.rows, options.cols)).astype(np.float32)
        return plan_cost(x)
    rows = rng.integers(options.rows // 2, options.rows * 3 // 2, options.shapes)
    inputs = [rng.standard_normal((int(r), options.cols)).astype(np.float32) for r in rows]
    with tempfile.TemporaryDirectory() as cache:
        os.environ["DVM_CACHE_DIR"] = cache  # empty: the first lazy stream compiles cold
        os.environ.pop("DVM_CACHE", None)
        start = time.perf_counter()
        # the compiler's start-up: a segment with a reduction, whose sizes are the first
        # sums of symbolic terms in the process (sympy imports its tensor module then)
        np.asarray((lazy.asarray(np.ones((2, 2), np.float32)) * 2).sum(axis=-1))
        startup = time.perf_counter() - start
        largest = max(inputs, key=len)
        start = time.perf_counter()  # the VM's start-up: the same segment at a large shape
        np.asarray((lazy.asarray(largest) * 2).sum(axis=-1))
        vm_startup = time.perf_counter() - start
        for function in FUNCTIONS.values():  # numpy's heap grown, as a process does once
            function(largest)
        print(f"load average {os.getloadavg()[0]:.2f}; {options.shapes} shapes x "
              f"{options.calls} calls, about {options.rows} x {options.cols} f32; start-up: "
              f"the compiler's {startup:.2f} s, the VM's {vm_startup * 1e3:.1f} ms")  # fmt: skip
        if options.profile:
            CLOCK[0] = time.process_time if options.cpu else time.perf_counter
            profile(inputs, options.calls)
            return
        if options.alone:
            return alone(inputs, options.calls)
        measure(inputs, options.calls)
    print(
        "np s, cold s: the streams in turn with an empty compile cache; np s, warm s: "
        "again, its entry written; ratio: numpy's over lazy's (above 1: lazy is faster); "
        "cpu: numpy's CPU time over lazy's, warm (every thread's); compile: the lazy "
        "stream's compile, cold/warm; rep: a call at a known shape (lazy: the warm "
        "stream's that planned nothing, and its p90); plan: the warm stream's calls that "
        "planned a launch, median/count; new: a first call at a new shape; ms"
    )


def measure(inputs: list[np.ndarray[Any, Any]], calls: int) -> None:
    """One row per function: numpy and lazy in turn with a cold compile cache, then
    again with the entry written."""
    columns = ["np s", "cold s", "ratio", "np s", "warm s", "ratio", "cpu", "compile"]
    columns += ["np rep", "lz rep", "lz p90", "lz plan", "np new", "lz new"]
    print(f"{'function':10} " + " ".join(f"{c:>7}" for c in columns) + f" {'us/op':>6}")
    for name, function in FUNCTIONS.items():
        numpy_cold, cold, cold_compile = streams(function, inputs, calls)
        numpy_warm, warm, warm_compile = streams(function, inputs, calls)
        for x in inputs:  # the results agree
            np.testing.assert_allclose(
                np.asarray(function(lazy.asarray(x))), function(x), rtol=1e-4, atol=1e-4
            )
        per_op = recording_cost(function, inputs[0])
        numpy_repeats = numpy_cold.repeats + numpy_warm.repeats
        numpy_firsts = numpy_cold.firsts[1:] + numpy_warm.firsts[1:]
        planning = f"{ms(warm.planning, 0.5).strip()}/{len(warm.planning)}"
        print(
            f"{name:10} {numpy_cold.total:7.3f} {cold.total:7.3f} "
            f"{numpy_cold.total / cold.total:7.2f} {numpy_warm.total:7.3f} {warm.total:7.3f} "
            f"{numpy_warm.total / warm.total:7.2f} {numpy_warm.cpu / warm.cpu:7.2f} "
            f"{f'{cold_compile * 1e3:.0f}/{warm_compile * 1e3:.0f}':>7} "
            f"{ms(numpy_repeats, 0.5)} {ms(warm.repeats, 0.5)} {ms(warm.repeats, 0.9)} "
            f"{planning:>7} {ms(numpy_firsts, 0.5)} {ms(warm.firsts[1:], 0.5)} {per_op:6.1f}"
        )


CLOCK: list[Callable[[], float]] = [time.perf_counter]
"""What `--profile` times with: wall time, or with `--cpu` the process's CPU time (every
thread's), which a busy machine swings less."""

PARTS = ["record", "key", "find", "host", "plans", "launch", "call", "flush", "total"]
"""A lazy call's parts (`--profile`); `call` and `flush`: what the others leave of the
program's call and of the flush."""


class Timed:
    """Times the calls of some functions of the compiler (by patching them), per part."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self.patched: list[tuple[Any, str, Any]] = []

    def patch(self, owner: Any, name: str, part: str) -> None:
        original = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = CLOCK[0]()
            try:
                return original(*args, **kwargs)
            finally:
                self.spent[part] = self.spent.get(part, 0.0) + CLOCK[0]() - start

        self.patched.append((owner, name, original))
        setattr(owner, name, timed)

    def restore(self) -> None:
        for owner, name, original in reversed(self.patched):
            setattr(owner, name, original)


ORDERS = list(itertools.permutations(["lazy", "bare", "numpy"]))
"""The orders the three sides of a profiled call take, in turn: each follows each other
as often (a call right after numpy's finds its input evicted by numpy's temporaries)."""


def profile(inputs: list[np.ndarray[Any, Any]], calls: int) -> None:
    """Per function, the median of each part of a warm lazy call (`PARTS`), of the
    bare program's call and of numpy's, at a new shape and at a known one, in us."""
    print(f"{'function':10} {'call':6} " + " ".join(f"{p:>6}" for p in PARTS) + "   bare  numpy")
    for name, function in FUNCTIONS.items():
        lazy.reset()
        np.asarray(function(lazy.asarray(inputs[0][:2])))  # compiled: the stream is warm
        (entry,) = segment.PROGRAMS.values()
        bare = dvm.compile(entry.text)
        rows: dict[str, list[list[float]]] = {"new": [], "known": []}
        for i, x in enumerate(inputs):
            for k in range(calls):
                arguments = bare_arguments(function, x)
                times = {}
                for side in ORDERS[(i * calls + k) % len(ORDERS)]:
                    start = CLOCK[0]()
                    if side == "lazy":
                        times[side] = split_call(function, x)
                    elif side == "bare":
                        bare(*arguments)
                    else:
                        np.asarray(function(x))
                    times.setdefault(side, [CLOCK[0]() - start])
                rows["known" if k else "new"].append(
                    [*times["lazy"], times["bare"][0]] + times["numpy"]
                )
        for kind, values in rows.items():
            medians = np.median(np.array(values), axis=0) * 1e6
            print(f"{name:10} {kind:6} " + " ".join(f"{v:6.0f}" for v in medians))


def alone(inputs: list[np.ndarray[Any, Any]], calls: int) -> None:
    """Per function, its warm lazy stream by itself: wall and CPU ms."""
    for name, function in FUNCTIONS.items():
        lazy.reset()
        np.asarray(function(lazy.asarray(inputs[0][:2])))  # compiled: the stream is warm
        cpu, start = time.process_time(), time.perf_counter()
        for x in inputs:
            for _ in range(calls):
                np.asarray(function(lazy.asarray(x)))
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        print(f"{name:10} wall {wall * 1e3:7.1f} ms, CPU {cpu * 1e3:7.1f} ms")


def plan_cost(x: np.ndarray[Any, Any]) -> None:
    """Per function, the CPU time of its kernel's launch on `x` unplanned, planned, and
    planning (see the module's doc), in turn; medians in ms."""
    print(f"load average {os.getloadavg()[0]:.2f}; {x.shape[0]} x {x.shape[1]} f32, CPU ms")
    print(f"{'function':10} {'unplanned':>9} {'planned':>8} {'planning':>8}")
    for name, function in FUNCTIONS.items():
        lazy.reset()
        np.asarray(function(lazy.asarray(x)))
        (entry,) = segment.PROGRAMS.values()
        kernels = [k for v in entry.program.variants.values() for k in v.kernels.values()]
        kernel = next(k for k in kernels if k.plans)  # (the variant this shape runs)
        (_, spec, _), *_ = kernel.plans.values()
        times = launch_times(partial(dvm.vm.Specializer, kernel.program, kernel.device), spec, x)
        print(f"{name:10} " + " ".join(f"{ms(t, 0.5):>{len(k)}}" for k, t in times.items()))


def launch_times(
    specializer: Callable[..., Any], spec: Any, x: np.ndarray[Any, Any], rounds: int = 30
) -> dict[str, list[float]]:
    """CPU seconds of launches at `spec`'s shapes on `x` (the other arguments made
    anew), each side first in turn: unplanned, planned, and the launch that plans."""
    args = [np.empty(shape, t) for shape, t in zip(spec.shapes, spec.arg_dtypes, strict=True)]
    args[spec.shapes.index(x.shape)] = x  # (the input; scalars stay as they are)

    def specialized(patience: int) -> Any:
        return specializer(patience=patience)(spec.shapes, spec.params)

    unplanned, planned = specialized(1 << 40), specialized(0)
    for launch in (unplanned, planned, planned, planned):
        dvm.vm.launch(launch, args, fresh=True, checked=True)
    assert planned.planned and not unplanned.planned and unplanned.shares_unplanned
    times: dict[str, list[float]] = {"unplanned": [], "planned": [], "planning": []}
    for i in range(rounds):
        planning = specialized(0)
        dvm.vm.launch(planning, args, fresh=True, checked=True)  # its first: unplanned
        sides = [("unplanned", unplanned), ("planned", planned), ("planning", planning)]
        for side, launch in sides[i % 3 :] + sides[: i % 3]:
            start = time.process_time()
            dvm.vm.launch(launch, args, fresh=True, checked=True)
            times[side].append(time.process_time() - start)
    return times


def bare_arguments(function: Callable[[Any], Any], x: np.ndarray[Any, Any]) -> list[Any]:
    """What the lazy call's program is called with on `x` (recorded, not run)."""
    y = function(lazy.asarray(x))
    found = segment.select(TRACE.nodes, [y._node])
    TRACE.nodes = []
    assert found is not None
    return [a.value for a in found.args] + found.index_values()


def split_call(function: Callable[[Any], Any], x: np.ndarray[Any, Any]) -> list[float]:
    """One lazy call of `function` on `x`, timed by part (`PARTS`, in seconds)."""
    timed = Timed()
    timed.patch(segment, "select", "key")
    timed.patch(segment, "compiled", "find")
    timed.patch(runtime.CompiledProgram, "__call__", "program")
    timed.patch(runtime.CompiledProgram, "specialize", "host")
    timed.patch(launches.Kernel, "plan", "plans")
    timed.patch(dvm.vm, "launch", "launch")
    try:
        start = CLOCK[0]()
        y = function(lazy.asarray(x))
        recorded = CLOCK[0]()
        np.asarray(y)
        end = CLOCK[0]()
    finally:
        timed.restore()
    spent = timed.spent
    inner = sum(spent.get(p, 0.0) for p in ("host", "plans", "launch"))
    call = spent.get("program", 0.0) - inner
    flush = end - recorded - spent.get("key", 0.0) - spent.get("find", 0.0) - spent["program"]
    own = [spent.get(p, 0.0) for p in ("key", "find", "host", "plans", "launch")]
    return [recorded - start, *own, call, flush, end - start]


if __name__ == "__main__":
    main()
