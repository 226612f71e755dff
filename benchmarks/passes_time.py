"""How long `symbolic-shapes,fuse,stack` takes on the BERT layer (goal: < 1 s).

Run: .venv/bin/python benchmarks/passes_time.py [--file PATH] [--repeat 7] [--cold 3]

Prints one table:
- cold: in a fresh Python process (as `dvm-opt` starts), the imports, then
  the first parse and the first run of each pass -- sympy's caches and
  xDSL's lazily built tables are empty; median over --cold processes;
- warm: in this process, after one warm-up run, the median of --repeat runs
  of parse and of each pass on a freshly parsed module;
- the whole `dvm-opt -p symbolic-shapes,fuse,stack` command, start to exit.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_FILE = ROOT.parent / "shared" / "examples" / "bert_layer.mlir"
PASSES = ("symbolic-shapes", "fuse", "stack")
GOAL_S = 1.0


def measure_once(path: str) -> dict[str, float]:
    """Seconds for the imports, the parse and each pass, in this process."""
    times: dict[str, float] = {}
    start = time.perf_counter()
    from xdsl.passes import PassPipeline

    import dvm
    from dvm.ir import make_context
    from dvm.passes import PASSES as REGISTRY

    ctx = make_context()
    pipelines = {name: PassPipeline.parse_spec(REGISTRY, name) for name in PASSES}
    times["import"] = time.perf_counter() - start
    start = time.perf_counter()
    module = dvm.parse(Path(path))
    times["parse"] = time.perf_counter() - start
    for name in PASSES:
        start = time.perf_counter()
        pipelines[name].apply(ctx, module)
        times[name] = time.perf_counter() - start
    return times


def cold_runs(path: str, runs: int) -> list[dict[str, float]]:
    """`measure_once` in `runs` fresh Python processes."""
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import passes_time;"
        "print(json.dumps(passes_time.measure_once(sys.argv[2])))"
    )
    results = []
    for _ in range(runs):
        # (-P: the child imports this interpreter's dvm, not a dvm/ in the working directory)
        out = subprocess.run(
            [sys.executable, "-P", "-c", code, str(Path(__file__).parent), path],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        results.append(json.loads(out))
    return results


def warm_runs(path: str, repeat: int) -> list[dict[str, float]]:
    """`measure_once` in this process, after a warm-up run."""
    measure_once(path)
    return [measure_once(path) for _ in range(repeat)]


def command_runs(path: str, runs: int) -> list[float]:
    """Wall seconds of the whole `dvm-opt` command."""
    dvm_opt = Path(sys.executable).parent / "dvm-opt"
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(
            [str(dvm_opt), path, "-p", ",".join(PASSES)], capture_output=True, check=True
        )
        times.append(time.perf_counter() - start)
    return times


def median(runs: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--file", default=str(DEFAULT_FILE))
    parser.add_argument("--repeat", type=int, default=7, help="warm runs (default 7)")
    parser.add_argument("--cold", type=int, default=3, help="fresh processes (default 3)")
    args = parser.parse_args()

    cold = cold_runs(args.file, args.cold)
    warm = warm_runs(args.file, args.repeat)
    command = command_runs(args.file, args.cold)

    print(f"{Path(args.file).name}: -p {','.join(PASSES)}")
    print(f"cold: median of {args.cold} fresh processes; warm: median of {args.repeat} runs\n")
    print(f"{'step':<22}{'cold (ms)':>12}{'warm (ms)':>12}")
    for key in ("import", "parse", *PASSES):
        warm_ms = "" if key == "import" else f"{1000 * median(warm, key):12.1f}"
        print(f"{key:<22}{1000 * median(cold, key):12.1f}{warm_ms:>12}")
    cold_passes = statistics.median(sum(r[p] for p in PASSES) for r in cold)
    warm_passes = statistics.median(sum(r[p] for p in PASSES) for r in warm)
    print(f"{'passes (sum)':<22}{1000 * cold_passes:12.1f}{1000 * warm_passes:12.1f}")
    print(f"{'dvm-opt command':<22}{1000 * statistics.median(command):12.1f}")
    verdict = "within" if cold_passes < GOAL_S else "over"
    print(f"\ncold, the three passes take {cold_passes:.2f} s: {verdict} the {GOAL_S:.0f} s goal")


if __name__ == "__main__":
    main()
