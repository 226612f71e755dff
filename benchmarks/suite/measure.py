"""The measurement loop: one workload's stream of shapes over every system.

At each shape of the stream, every system in turn is called `reps` times
back to back, each call timed on its own (their sum, over the stream, is the
system's *stream total*; the first is its *first-call latency* for that new
shape, which includes any compile or specialization). Calls 2..reps, plus a
few extra calls when they are tiny, give the *steady-state* median. Systems
are interleaved per shape, in one process, so every ratio compares runs made
side by side under the same machine conditions.

Between systems the loop sleeps briefly, outside the timed region: OpenBLAS
worker threads keep spinning ~0.13 s after a GEMM and would stall the next
system's threads on a 2-core machine; OpenMP workers spin briefly too.

Every system's first output at every shape is checked against numpy's.

A first call pays for more than the new shape: it follows the pause and the
other systems' work, so the core wakes from idle and the system's code and data
are out of the caches (on this machine a 30x100 numpy LayerNorm's first call
after a 20 ms pause costs about 0.14 ms more than the next). So after every
system has met the shape, the systems whose per-shape cost the report states
(`PAUSE_CONTROL`) are called once more, each after the same collection and
pauses: a call at a shape already seen, in the first call's conditions. The
first call minus that one is what the new shape itself cost.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from suite.machine import loadavg
from suite.systems import INDUCTOR, System, to_numpy
from suite.workloads import Shape, Workload

Progress = Callable[[str], None]

PAUSE_CONTROL = ("dvm", "numpy", "torch_dvm", "dvm_lazy")
"""The systems timed once more at each shape, after a pause (the module's docstring)."""


@dataclass
class Settings:
    """How each (system, shape) pair is measured."""

    reps: int = 10
    """Calls per shape in the stream (the first one meets the shape for the first time)."""
    steady_budget_s: float = 0.02
    """Extra steady-state calls are added while cheap, up to about this much time."""
    steady_max: int = 100
    """At most this many steady-state calls in all."""
    quiesce_s: float = 0.03
    """Pause after each system (OpenMP spin-down), outside the timed region."""
    quiesce_blas_s: float = 0.2
    """Pause after a numpy/numexpr GEMM (OpenBLAS workers spin ~0.13 s)."""
    rtol: float = 1e-3
    """Relative tolerance of the check against numpy (float32)."""
    atol_scale: float = 1e-4
    """Absolute tolerance, as a fraction of the largest reference magnitude
    (BLAS implementations sum in different orders)."""


def check(out: tuple[np.ndarray, ...], ref: tuple[np.ndarray, ...], s: Settings) -> dict[str, Any]:
    """Compare a system's outputs with numpy's: shapes, dtypes and values."""
    if len(out) != len(ref):
        return {"ok": False, "why": f"{len(out)} results, numpy has {len(ref)}"}
    worst_abs, worst_rel, ok, why = 0.0, 0.0, True, ""
    for o, r in zip(out, ref, strict=True):
        if o.shape != r.shape:
            return {"ok": False, "why": f"shape {o.shape}, numpy {r.shape}"}
        if o.dtype != r.dtype:
            ok, why = False, f"dtype {o.dtype}, numpy {r.dtype}"
        if r.size == 0:
            continue
        scale = max(1.0, float(np.max(np.abs(r))))
        err = float(np.max(np.abs(o.astype(np.float64) - r)))
        err = err if math.isfinite(err) else math.inf  # NaN counts as the worst
        worst_abs = max(worst_abs, err)
        worst_rel = max(worst_rel, err / scale)
        if not np.allclose(o, r, rtol=s.rtol, atol=s.atol_scale * scale):
            ok, why = False, why or f"max abs error {err:.3g} (scale {scale:.3g})"
    return {"ok": ok, "max_abs_err": worst_abs, "max_rel_err": worst_rel, "why": why}


def counters_snapshot() -> dict[str, Counter[str]]:
    """A copy of dynamo's global counters."""
    from torch._dynamo.utils import counters

    return {k: Counter(v) for k, v in counters.items()}


def counters_delta(
    before: dict[str, Counter[str]], after: dict[str, Counter[str]]
) -> dict[str, dict[str, int]]:
    """What dynamo counted between two snapshots (only what grew)."""
    out: dict[str, dict[str, int]] = {}
    for group, values in after.items():
        grown = {
            k.splitlines()[0][:120]: v - before.get(group, Counter())[k]
            for k, v in values.items()
            if v - before.get(group, Counter())[k] > 0
        }
        if grown:
            out[group] = grown
    return out


def merge_counts(total: dict[str, dict[str, int]], delta: dict[str, dict[str, int]]) -> None:
    """Add a counters delta into a running total."""
    for group, values in delta.items():
        into = total.setdefault(group, {})
        for k, v in values.items():
            into[k] = into.get(k, 0) + v


def time_system(
    system: System, args: Sequence[Any], s: Settings
) -> tuple[dict[str, Any], tuple[np.ndarray, ...]]:
    """The stream calls and steady-state calls of one system at one shape."""
    fn = system.fn
    calls: list[float] = []
    first: Any = None
    for i in range(s.reps):
        t0 = time.perf_counter()
        result = fn(*args)
        calls.append(time.perf_counter() - t0)
        if i == 0:
            first = result
        del result
    steady = calls[1:]
    est = statistics.median(steady) if steady else calls[0]
    extra = min(s.steady_max, int(s.steady_budget_s / max(est, 1e-7))) - len(steady)
    for _ in range(max(extra, 0)):
        t0 = time.perf_counter()
        fn(*args)
        steady.append(time.perf_counter() - t0)
    row = {
        "calls": calls,
        "steady_med": statistics.median(steady) if steady else calls[0],
        "steady_min": min(steady) if steady else calls[0],
        "n_steady": len(steady),
    }
    return row, to_numpy(first)


def vm_stats(program: Any, args: Sequence[Any]) -> dict[str, Any]:
    """dvm's VM statistics for one call (the shape already specialized)."""
    program(*args)
    _, launches = program.profile(*args)
    kernels = []
    for name, st in launches:
        kernels.append(
            {
                "kernel": name,
                "instructions": st.total_instructions,
                "by_opcode": dict(st.instructions),
                "tiles": st.tiles,
                "cores": st.cores,
                "bytes_read": st.bytes_read,
                "bytes_written": st.bytes_written,
                "peak_local_memory": st.peak_local_memory,
                "wall_s": st.wall_s,
                "numpy_s": st.numpy_s,
                "dispatch_s": st.dispatch_s,
            }
        )
    return {"kernels": kernels}


def representative(workload: Workload, shapes: Sequence[Shape]) -> Shape:
    """The stream's median shape by size (for the VM statistics)."""
    ordered = sorted(shapes, key=workload.elements)
    return ordered[(len(ordered) - 1) // 2]


def pause(workload: Workload, system: System, s: Settings) -> None:
    """The pause after a system's calls, outside the timed region."""
    blas = workload.uses_blas and system.name in ("numpy", "numexpr")
    time.sleep(s.quiesce_blas_s if blas else s.quiesce_s)


def time_after_pause(
    workload: Workload,
    systems: list[System],
    records: dict[str, dict[str, Any]],
    t_args: tuple[Any, ...],
    np_args: tuple[Any, ...],
    s: Settings,
) -> None:
    """One more call of each `PAUSE_CONTROL` system at the shape it has just met, after
    the collection and pauses its first call followed: `after_pause` in its record."""
    gc.collect()
    for system in systems:
        if system.name not in PAUSE_CONTROL or "calls" not in records[system.name]:
            continue
        args = t_args if system.takes_torch else np_args
        t0 = time.perf_counter()
        system.fn(*args)
        records[system.name]["after_pause"] = time.perf_counter() - t0
        pause(workload, system, s)


def run_workload(
    workload: Workload,
    systems: list[System],
    shapes: Sequence[Shape],
    s: Settings,
    seed: int,
    progress: Progress,
    advance: Callable[[], None],
) -> dict[str, Any]:
    """Measure one workload's stream over `systems`; returns its JSON record."""
    rng = np.random.default_rng(seed)
    torch_mod: Any = None
    if any(sy.takes_torch for sy in systems):
        import torch

        torch_mod = torch
    dynamo: dict[str, dict[str, dict[str, int]]] = {n: {} for n in INDUCTOR}
    rows: list[dict[str, Any]] = []
    seen: dict[Shape, int] = {}
    t_start = time.perf_counter()
    load_start = loadavg()
    for si, shape in enumerate(shapes):
        np_args = workload.make_inputs(shape, rng)
        t_args = tuple(torch_mod.from_numpy(a) for a in np_args) if torch_mod else ()
        row: dict[str, Any] = {"shape": list(shape), "systems": {}}
        if shape in seen:
            row["repeat_of"] = seen[shape]
        seen.setdefault(shape, si)
        outputs: dict[str, tuple[np.ndarray, ...]] = {}
        gc.collect()
        for system in systems:
            progress(f"{workload.name} #{si + 1}/{len(shapes)} {tuple(shape)} {system.name}")
            system.enter()
            args = t_args if system.takes_torch else np_args
            before = counters_snapshot() if system.name in INDUCTOR else None
            try:
                rec, out = time_system(system, args, s)
                outputs[system.name] = out
            except Exception as e:  # a failing system is recorded, the stream goes on
                rec = {"error": repr(e)[:500], "traceback": traceback.format_exc()[-3000:]}
            if before is not None:
                merge_counts(dynamo[system.name], counters_delta(before, counters_snapshot()))
            row["systems"][system.name] = rec
            pause(workload, system, s)
        time_after_pause(workload, systems, row["systems"], t_args, np_args, s)
        ref = outputs.get("numpy")
        if ref is None:
            ref = to_numpy(workload.numpy(*np_args))
        for name, out in outputs.items():
            if name != "numpy":
                row["systems"][name]["check"] = check(out, ref, s)
        rows.append(row)
        del np_args, t_args, outputs, ref
        advance()
    record: dict[str, Any] = {
        "program": str(workload.program),
        "shape_names": workload.shape_names,
        "paper": workload.paper,
        "systems": [sy.name for sy in systems],
        "shapes": [list(sh) for sh in shapes],
        "per_shape": rows,
        "wall_s": time.perf_counter() - t_start,
        "loadavg_start": load_start,
        "loadavg_end": loadavg(),
        "dynamo": {k: v for k, v in dynamo.items() if any(sy.name == k for sy in systems)},
    }
    record["one_time_s"] = {
        sy.name: sy.compile_s for sy in systems if sy.compile_s is not None and sy.name != "dvm"
    }
    dvm_system = next((sy for sy in systems if sy.name == "dvm"), None)
    if dvm_system is not None:
        record["dvm_compile_s"] = dvm_system.compile_s
        shape = representative(workload, shapes)
        progress(f"{workload.name} VM stats at {tuple(shape)}")
        args = workload.make_inputs(shape, np.random.default_rng(seed + 1))
        try:
            record["vm_stats"] = {"shape": list(shape), **vm_stats(dvm_system.program, args)}
        except Exception as e:
            record["vm_stats"] = {"shape": list(shape), "error": repr(e)[:500]}
    return record
