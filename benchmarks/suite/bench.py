"""The benchmark run: set-up, one-time warm-ups, every workload, the JSON file."""

from __future__ import annotations

import argparse
import datetime
import importlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from suite.machine import apply_threads, describe, gemm_probe, loadavg
from suite.measure import Settings, run_workload
from suite.systems import INDUCTOR, ORDER, build_systems, dvm_warmup, torch_compile_warmup
from suite.workloads import DEFAULT_EXAMPLES, REPO, make_workloads


def _available(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


AOT_MODULES = {"onnxruntime": ("onnxruntime", "onnx"), "iree": ("iree.compiler", "iree.runtime")}
"""What each ahead-of-time peer needs besides torch (its exporter)."""


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write the results atomically (a partial run leaves a readable file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)


def run_benchmark(
    args: argparse.Namespace,
    full_shapes: dict[str, int],
    quick_shapes: dict[str, int],
    full_reps: int,
    quick_reps: int,
    t_process: float,
    idle: dict[str, object] | None,
) -> dict[str, Any]:
    """Run the whole benchmark as `args` asks; returns (and writes) the results.
    `idle` records the wait for a quiet machine (`--wait-idle`), if any."""
    from tqdm import tqdm

    t_import = time.perf_counter()
    have_torch = _available("torch")
    t_import = time.perf_counter() - t_import
    import numpy  # noqa: F401  (after the thread environment is set)

    systems = args.systems.split(",") if args.systems else list(ORDER)
    unknown = set(systems) - set(ORDER)
    if unknown:
        raise SystemExit(f"unknown systems {sorted(unknown)}; choose from {ORDER}")
    dropped = [
        s
        for s in systems
        if (not have_torch and (s in ("torch", "torch_dvm") or s in INDUCTOR or s in AOT_MODULES))
        or not all(_available(m) for m in AOT_MODULES.get(s, ()))
    ]
    if dropped:
        print(f"not installed: skipping {dropped} (pip install -e '.[bench]')")
    systems = [s for s in systems if s not in dropped]

    workloads = make_workloads(args.examples or DEFAULT_EXAMPLES)
    names = args.workloads.split(",") if args.workloads else list(workloads)
    unknown = set(names) - set(workloads)
    if unknown:
        raise SystemExit(f"unknown workloads {sorted(unknown)}; choose from {list(workloads)}")
    table = quick_shapes if args.quick else full_shapes
    counts = {n: args.shapes or table[n] for n in names}
    reps = args.reps or (quick_reps if args.quick else full_reps)
    settings = Settings(reps=reps)

    threads = apply_threads(args.threads)
    results: dict[str, Any] = {
        "meta": {
            "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "command": " ".join([Path(sys.executable).name, *sys.argv]),
            "mode": "quick" if args.quick else "full",
            "reps": reps,
            "shapes_per_workload": counts,
            "settings": settings.__dict__,
            "threads": threads,
            "machine": describe(REPO),
            "loadavg_start": loadavg(),
            "wait_idle": idle,
            "torch_import_s": t_import,
        },
        "warmup": {},
        "workloads": {},
    }
    cache_dirs: dict[str, str] = {}
    # dvm's compile cache in a folder of the run's own: every compile is cold, as
    # Inductor's are, and the user's cache is left alone
    dvm_cache = os.environ["DVM_CACHE_DIR"] = tempfile.mkdtemp(prefix="dvm_bench_cache_")
    if any(s in INDUCTOR for s in systems):
        from suite.systems import configure_dynamo

        results["meta"]["dynamo_config"] = configure_dynamo()
        import torch._inductor.config as inductor_config

        results["meta"]["inductor_compile_threads"] = inductor_config.compile_threads
        for name in INDUCTOR:
            if name in systems:
                cache_dirs[name] = tempfile.mkdtemp(prefix=f"dvm_bench_{name}_")
        results["meta"]["inductor_cache_dirs"] = dict(cache_dirs)

    print(
        f"benchmark ({results['meta']['mode']}): {len(names)} workloads, systems {systems}, "
        f"{reps} calls per shape, {args.threads} threads; results -> {args.out}",
        flush=True,
    )
    try:
        if "dvm" in systems:
            results["warmup"]["dvm_s"] = dvm_warmup()
        for name, dynamic in INDUCTOR.items():
            if name in systems:
                print(f"Inductor warm-up ({name}) ...", flush=True)
                results["warmup"][f"{name}_s"] = torch_compile_warmup(dynamic, cache_dirs[name])
        if "torch_dvm" in systems:
            results["warmup"]["torch_dvm_s"] = torch_compile_warmup(True, None, backend="dvm")
        results["meta"]["probe_start"] = gemm_probe()
        print(
            "one-time warm-ups: "
            + ", ".join(f"{k} {v:.1f}s" for k, v in results["warmup"].items()),
            flush=True,
        )
        total = sum(counts.values())
        with tqdm(total=total, unit="shape", dynamic_ncols=True, file=sys.stderr) as bar:
            for wi, name in enumerate(names):
                workload = workloads[name]
                shapes = workload.sampler(counts[name])
                bar.set_postfix_str(f"{name}: machine probe")
                probe = gemm_probe()
                bar.set_postfix_str(f"{name}: compiling")
                bound = build_systems(workload, systems, cache_dirs)
                record = run_workload(
                    workload,
                    bound,
                    shapes,
                    settings,
                    seed=1000 + wi,
                    progress=lambda text: bar.set_postfix_str(text, refresh=False),
                    advance=lambda: bar.update(1),
                )
                record["probe"] = probe
                results["workloads"][name] = record
                bar.write(f"{name}: done in {record['wall_s']:.0f}s")
                results["meta"]["process_wall_s"] = time.perf_counter() - t_process
                write_json(args.out, results)
                del bound
        results["meta"]["probe_end"] = gemm_probe()
    finally:
        results["meta"]["loadavg_end"] = loadavg()
        results["meta"]["process_wall_s"] = time.perf_counter() - t_process
        results["meta"]["inductor_cache_files"] = {
            name: sum(len(files) for _, _, files in os.walk(d)) for name, d in cache_dirs.items()
        }
        write_json(args.out, results)
        for d in [*cache_dirs.values(), dvm_cache]:
            shutil.rmtree(d, ignore_errors=True)
    return results
