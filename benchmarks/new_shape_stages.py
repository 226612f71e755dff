"""Where the benchmark suite's per-new-shape cost goes, stage by stage.

Run: .venv/bin/python benchmarks/new_shape_stages.py [--workloads layernorm,gelu --evict]

For each workload, the suite's stream of shapes (`suite.workloads`, its seeds) is walked
as the suite walks it for dvm: at each new shape a first call, 9 repeats, a pause and
numpy's 10 calls, a collection, and a call at the now known shape (the suite's "call
after the pause"). Each of the two calls is timed whole and around its stages: the
host's signature and cache, and at a new signature its argument binder and guards
(`CompiledProgram.specialized`), each kernel's plan
(output sizes, fast path, specialization, input check: `Kernel.plan`) and its launch
(`Kernel.run` but for its `Kernel.bind`, and `vm.launch_stack`: a planned shape's launch
runs its bound closure there without calling `vm.launch`), plus any of the unplanned
launch's memo-miss functions named with --functions
(`broadcast_pair,new_view,fits,plan_for`). It prints the medians over the shapes of
the first call minus the call after the pause, in ms (the wall time's 90th percentile
too), with `--per-shape` each shape's.

Beside the wall time, each call's CPU time is taken, the process's (`cpu`: every thread,
BLAS's spinning ones included) and the calling thread's (`thread`), and the page faults
of the process (`faults`, counted): a difference of wall time that the CPU time does not
show is time the call waited (for a core, a worker, BLAS's threads) and is the machine's;
faults are first touches of memory no earlier call mapped.

The suite runs its other systems between dvm's calls; `--evict` stands for them with
torch's eager run of the workload (three calls) and a 32 MiB write before each of the
two calls, so that both meet caches that hold other work, as in a full run.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

os.environ["DVM_CACHE"] = "off"  # every kernel compiled, with its fast path (as the suite's)
from run import set_thread_env  # (before numpy: the suite's thread counts)

set_thread_env(2)

import numpy as np  # noqa: E402
from suite.systems import dvm_warmup  # noqa: E402
from suite.workloads import Workload, make_workloads  # noqa: E402

import dvm  # noqa: E402
from dvm import launches, runtime  # noqa: E402
from dvm.vm import unplanned  # noqa: E402

STAGES = ("host", "plan", "launch")


@contextmanager
def timed_stages(spent: dict[str, float], functions: list[str]) -> Iterator[None]:
    """Each stage's and function's time added into `spent` while the block runs (the
    functions are bound into launch functions generated inside the block)."""
    places: list[tuple[Any, str, str]] = [
        (runtime.CompiledProgram, "specialized", "host"),
        (launches.Kernel, "plan", "plan"),
        (launches.Kernel, "bind", "bind"),
        (launches.Kernel, "run", "launch"),
        (launches.vm, "launch_stack", "launch"),
        *[(unplanned, name, name) for name in functions],
    ]
    saved = [getattr(owner, name) for owner, name, _ in places]

    def wrapped(fn: Callable[..., Any], label: str) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            bound = spent.get("bind", 0.0)  # (a run's own bind is no part of its launch)
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                took = time.perf_counter() - t0
                if label == "launch":
                    took -= spent.get("bind", 0.0) - bound
                spent[label] = spent.get(label, 0.0) + took

        return timed

    for (owner, name, label), fn in zip(places, saved, strict=True):
        setattr(owner, name, wrapped(fn, label))
    try:
        yield
    finally:
        for (owner, name, _), fn in zip(places, saved, strict=True):
            setattr(owner, name, fn)


def other_work(w: Workload, args: tuple[Any, ...], scratch: np.ndarray, evict: bool) -> None:
    """What the suite's other systems do between dvm's calls, roughly (see `--evict`)."""
    if evict:
        import torch

        tensors = tuple(torch.from_numpy(a) for a in args)
        for _ in range(3):
            w.torch(*tensors)
        np.add(scratch, 1.0, out=scratch)


def stream(
    w: Workload, index: int, shapes: int, evict: bool, spent: dict[str, float], per_shape: bool
) -> None:
    """The workload's stream; prints the medians of first call minus the call after the
    pause, whole and per stage (the stages timed into `spent`)."""
    rng = np.random.default_rng(1000 + index)  # the suite's seed for its index-th workload
    program = dvm.compile(w.program)
    scratch = np.ones(8 << 20, np.float32)
    rows: list[dict[str, float]] = []
    for shape in w.sampler(shapes):
        args = w.make_inputs(shape, rng)
        calls = []
        for known in (False, True):
            if known:
                for _ in range(9):
                    program(*args)
                time.sleep(0.03)
            other_work(w, args, scratch, evict)
            if known:
                for _ in range(10):
                    w.numpy(*args)
                time.sleep(0.2 if w.uses_blas else 0.03)
            gc.collect()
            spent.clear()
            calls.append(timed_call(program, args, spent))
        first, after = calls
        rows.append({k: first.get(k, 0.0) - after.get(k, 0.0) for k in first.keys() | after})
        if per_shape:
            print(f"    {shape}: " + "  ".join(row_text(rows[-1], first)), flush=True)
        time.sleep(0.03)
    print(f"  {w.name:10s} " + "  ".join(median_text(rows)), flush=True)


def timed_call(program: Any, args: tuple[Any, ...], spent: dict[str, float]) -> dict[str, float]:
    """One call of `program`: its wall time, the CPU time of the process and of the
    calling thread, the page faults of the process, and the stages timed into `spent`."""
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    cpu, thread, t0 = time.process_time(), time.thread_time(), time.perf_counter()
    program(*args)
    call = time.perf_counter() - t0
    got = {"call": call, "cpu": time.process_time() - cpu, "thread": time.thread_time() - thread}
    got["faults"] = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    got.update(spent)
    got.pop("bind", None)
    return got


def row_text(row: dict[str, float], first: dict[str, float]) -> list[str]:
    """One shape's differences (ms; faults counted), and the first call's wall and faults."""
    out = [f"{k} {row.get(k, 0.0) * 1e3:.3f}" for k in ("call", "cpu", "thread", *STAGES)]
    out.append(f"faults {row.get('faults', 0):.0f}")
    return [*out, f"(first call {first['call'] * 1e3:.2f} ms, {first['faults']:.0f} faults)"]


def median_text(rows: list[dict[str, float]]) -> list[str]:
    """The medians over the shapes of each difference (ms; faults counted, with their
    mean), and the 90th percentile of the wall time's."""
    fixed = ("call", "cpu", "thread", *STAGES, "faults")
    labels = [*fixed, *sorted(set().union(*rows) - set(fixed))]
    out = []
    for k in labels:
        values = sorted(r.get(k, 0.0) for r in rows)
        if k == "faults":
            out.append(
                f"faults {statistics.median(values):.0f} (mean {statistics.mean(values):.0f})"
            )
        else:
            out.append(f"{k} {statistics.median(values) * 1e3:.3f}")
        if k == "call":
            out.append(f"(p90 {values[int(0.9 * (len(values) - 1))] * 1e3:.3f})")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--workloads", default="layernorm,gelu,softmax,matmul")
    ap.add_argument("--shapes", type=int, default=30)
    ap.add_argument("--functions", default="", help="unplanned-launch functions to time too")
    ap.add_argument("--evict", action="store_true", help="other work before each call")
    ap.add_argument("--per-shape", action="store_true", help="each shape's differences too")
    a = ap.parse_args()
    dvm_warmup()
    workloads = make_workloads()
    order = list(workloads)
    functions = [f for f in a.functions.split(",") if f]
    load = os.getloadavg()[0]
    print(f"First call minus the call after the pause, medians in ms (load {load:.1f})")
    spent: dict[str, float] = {}
    with timed_stages(spent, functions):
        for name in a.workloads.split(","):
            if name not in workloads:
                sys.exit(f"unknown workload {name}; use some of {','.join(order)}")
            stream(workloads[name], order.index(name), a.shapes, a.evict, spent, a.per_shape)


if __name__ == "__main__":
    main()
