"""Benchmarks against the peers: the DVM paper's evaluation, on this CPU.

Usage (from the repository root; `make bench` / `make bench-quick` install
the `bench` extra first):

    .venv/bin/python benchmarks/run.py            # full run (~25 min on 2 cores)
    .venv/bin/python benchmarks/run.py --quick    # a few minutes, fewer shapes
    .venv/bin/python benchmarks/run.py --report-only   # redo docs from the JSON

Each workload walks a stream of dynamic shapes (log-uniform, fixed seeds),
calling every system `--reps` times per shape, interleaved per shape in this
one process: this project (`dvm.compile` once per workload), numpy eager,
torch eager, numexpr, TorchInductor in recompile mode (`dynamic=False`) and
in dynamic mode (`dynamic=True`), and the ahead-of-time peers ONNX Runtime and
IREE (exported once to ONNX with dynamic dims). The results go to a JSON file; the report
(markdown and PNG figures) is generated from it. See docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(BENCH))

from suite.machine import set_thread_env  # noqa: E402  (stdlib only)

FULL_SHAPES = {
    "matmul": 30,
    "layernorm": 30,
    "addmm_relu": 30,
    "addmm_gelu": 30,
    "if_else_add": 30,
    "gelu": 30,
    "softmax": 15,
    "bert_layer": 8,
    "mmoe": 10,
}
"""Shapes per stream in the full run. The six cheap workloads use the
baseline's 30; the others fewer, because Inductor's recompile mode spends
~5 s (softmax), ~15 s (MMoE) and ~25 s (BERT) compiling each new shape."""
QUICK_SHAPES = {name: (2 if name in ("bert_layer", "mmoe") else 3) for name in FULL_SHAPES}
FULL_REPS, QUICK_REPS = 10, 5


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer shapes and calls (a few minutes)")
    ap.add_argument("--workloads", help="comma-separated subset (default: all)")
    ap.add_argument("--systems", help="comma-separated subset of systems (default: all)")
    ap.add_argument("--shapes", type=int, help="shapes per stream for every workload")
    ap.add_argument("--reps", type=int, help="calls per shape (default 10, quick 5)")
    ap.add_argument("--threads", type=int, default=int(os.environ.get("BENCH_THREADS", "2")))
    ap.add_argument("--examples", type=Path, help="the shared examples folder")
    ap.add_argument("--out", type=Path, help="results JSON (default: results/latest.json)")
    ap.add_argument("--report", type=Path, help="markdown report to write")
    ap.add_argument("--figures", type=Path, help="folder for the PNG figures")
    ap.add_argument("--report-only", action="store_true", help="only regenerate the report")
    ap.add_argument("--no-report", action="store_true", help="only write the JSON")
    ap.add_argument(
        "--wait-idle",
        type=float,
        metavar="LOAD",
        help="first wait (up to 10 min) for the 1-min load average to drop below LOAD",
    )
    args = ap.parse_args(argv)
    default_out = BENCH / "results" / ("quick.json" if args.quick else "latest.json")
    args.out = args.out or default_out
    if args.quick:
        args.report = args.report or BENCH / "results" / "quick.md"
        args.figures = args.figures or BENCH / "results" / "quick"
    else:
        args.report = args.report or REPO / "docs" / "benchmarks.md"
        args.figures = args.figures or REPO / "docs" / "benchmarks"
    return args


def wait_idle(limit: float, max_wait_s: float = 600.0) -> dict[str, object]:
    """Wait until the 1-min load average is below `limit` (or give up)."""
    from suite.machine import loadavg

    t0 = time.perf_counter()
    load = loadavg()
    if load and load[0] >= limit:
        print(f"waiting for the 1-min load average to drop below {limit} (now {load[0]})")
    while load and load[0] >= limit and time.perf_counter() - t0 < max_wait_s:
        time.sleep(10)
        load = loadavg()
    return {"limit": limit, "waited_s": round(time.perf_counter() - t0, 1), "loadavg": load}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.report_only:
        from suite.report import write_report

        write_report(args.out, args.report, args.figures)
        print(f"wrote {args.report} and figures in {args.figures}")
        return 0

    # Thread counts must be in the environment before numpy/torch load.
    set_thread_env(args.threads)
    idle = wait_idle(args.wait_idle) if args.wait_idle else None
    t_process = time.perf_counter()
    from suite.bench import run_benchmark

    run_benchmark(args, FULL_SHAPES, QUICK_SHAPES, FULL_REPS, QUICK_REPS, t_process, idle)
    if not args.no_report:
        from suite.report import write_report

        write_report(args.out, args.report, args.figures)
        print(f"wrote {args.out}, {args.report} and figures in {args.figures}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
