"""What a program costs before its first result: a fresh process's start, a compile
pass by pass, a compile cache hit, and a tiny cached call.

Run: .venv/bin/python benchmarks/compile_time.py [--processes 7] [--repeat 7]
     [--parts fresh,first,in-process,tiny] [--examples FOLDER]

Prints, with the load average (on a shared machine the times swing with it):

- cold start: in --processes fresh processes, the cache off, `import dvm` and the
  first `dvm.compile` of gelu (goal: 1 s in all); median, p90, max; and the compile's
  CPU time (it imports the compiler, xDSL and sympy);
- a cache hit in a fresh process: `import dvm`, `import numpy`, then `dvm.compile` of
  bert_layer from an entry another process wrote (goal: 20 ms beyond the imports; it
  includes importing dvm's runtime and VM, shown apart) and its first call (all dims 2 to 9), which
  imports the rest of the VM and makes each launched kernel's unplanned launcher (a hit
  leaves them to it): the two together are the honest figure; and their CPU time; then
  a call at a second shape (each dim one more): what a new shape costs a fresh process
  (its kernels walk the VM's tables: their fast paths come at the 11th shape);
- a program's first compile in a warm process, what a user pays: for each of
  FIRST_PROGRAMS, --processes new processes that import dvm and compile WARM_PROGRAM,
  then compile the program --repeat + 1 times, cache off; the
  first compile's time (median, p90) and CPU time (median) beside the repeats'
  (median): the repeat finds sympy's caches filled by the first (the answers of
  its assumption queries, its sort keys) and dvm's own (texts, tile sizes);
- the calls after a first compile (`--parts calls`, not run by default): for each of the
  small FIRST_PROGRAMS, in --processes new processes that compile and call WARM_PROGRAM
  (the VM's imports paid), the CPU time of the program's first compile, of its first
  call (all dims 2 to 9) and of calls at a second and a third shape (each dim one more):
  what a compile leaves to its kernels' first launches (their unplanned launchers, the
  fast paths at their second shapes) shows there;
- in this process, after a warm-up compile (sympy's and xDSL's caches filled, as in a
  server), each step of a compile, median of --repeat: parse, each pass of
  `dvm-pipeline`, the kernels and host steps (`variant_from_lowered`), and the whole
  `dvm.compile` with the cache off and on a hit (goals: 15 ms for programs of at most
  10 ops, 250 ms for bert_layer);
- in this process, `dvm.compile` of blocks of real models (`blocks/*.mlir`, exported from
  torch modules by `blocks/export.py`; each segment of a graph compiled on its own, as the
  torch backend does), the cache off: median and p90 of --repeat after a warm-up;
- a tiny cached call, `p(x)` for gelu on a 2x3 input: median, p99 and max of 20000
  (goal: 10 us on a quiet machine);
- the Python bytecodes each step of one compile interprets (after a warm-up), in
  thousands: the load does not swing them, so they compare two versions of the compiler
  where times on a shared machine cannot (`--parts bytecodes`, not run by default: the
  tracing is slow);
- where a first compile's extra work is (`--parts gap`, not run by default): for each
  of the small FIRST_PROGRAMS, in a new process that compiled WARM_PROGRAM, the
  bytecodes of the first compile and of a repeat, and the project's functions whose
  work (their own bytecodes and those of the library code they call: sympy, xDSL)
  grows most in the first, in thousands. It counts interpreted work only: Python's
  `compile()` of generated sources and other C code do not show.

`--parts` runs some of them: fresh, first, calls, in-process, blocks, tiny, bytecodes, gap.

Python writes no bytecode cache under PYTHONDONTWRITEBYTECODE, and then every fresh
process compiles dvm's modules again: the fresh processes run without it, as a user's
would.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import FrameType
from typing import NamedTuple

import numpy as np
from specialization import bytecodes, bytecodes_by  # this folder's: the scripts share the counter
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

import dvm
from dvm.ir import parse
from dvm.lowering.pipeline import DvmPipelinePass
from dvm.variant_ir import variant_from_lowered

EXAMPLES = Path(__file__).resolve().parents[1].parent / "shared" / "examples"
PROGRAMS = ("gelu", "layernorm", "softmax", "bert_layer")
BLOCKS = Path(__file__).resolve().parent / "blocks"
FIRST_PROGRAMS = (
    "gelu",
    "layernorm",
    "softmax",
    "if_else_add",
    "matmul",
    "addmm_relu",
    "mmoe",
    "bert_layer",
)
WARM_PROGRAM = "column_stats"
"""What a process compiles before a program's first compile: one that is not measured,
which pays the process's one-time costs, the imports that sympy makes the first time
it needs them among them (the first sum it flattens in full imports sympy.tensor and
sympy.combinatorics, about 80 ms)."""
PARTS = ("fresh", "first", "calls", "in-process", "blocks", "tiny", "bytecodes", "gap")
GAP_PROGRAMS = FIRST_PROGRAMS[:6]
"""The programs `--parts gap` looks into: those of at most ten ops."""
DEFAULT_PARTS = ("fresh", "first", "in-process", "blocks", "tiny")

FRESH = """\
import sys, time
start = time.perf_counter()
import dvm
imported = time.perf_counter()
import numpy as np
numpy_imported = time.perf_counter()
cpu_start = time.process_time()
import dvm.runtime
runtime_imported = time.perf_counter()
program = dvm.compile(open(sys.argv[1]).read(), cache=sys.argv[2] == "on")
compiled = time.perf_counter()
compile_cpu = time.process_time() - cpu_start
sys.path.insert(0, sys.argv[3])
from reference import EXAMPLES, make_inputs
_, spec, _ = EXAMPLES[sys.argv[1].rsplit("/", 1)[-1]]
dims = {s: 2 + i for i, s in enumerate("RCMKNBSE")}
inputs = make_inputs(spec, dims, np.random.default_rng(0))
called = time.perf_counter()
cpu_start = time.process_time()
program(*inputs)
first_call = time.perf_counter() - called
first_call_cpu = time.process_time() - cpu_start
inputs = make_inputs(spec, {s: d + 1 for s, d in dims.items()}, np.random.default_rng(1))
called = time.perf_counter()
program(*inputs)
second_shape = time.perf_counter() - called
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"xdsl", "sympy"})
print(imported - start, numpy_imported - imported, compiled - numpy_imported, first_call,
      compile_cpu, first_call_cpu, second_shape, runtime_imported - numpy_imported,
      ",".join(heavy) or "-")
"""


FIRST = """\
import sys, time
import dvm
dvm.compile(open(sys.argv[1]).read(), cache=False)
text = open(sys.argv[2]).read()
for _ in range(1 + int(sys.argv[3])):
    start, cpu_start = time.perf_counter(), time.process_time()
    dvm.compile(text, cache=False)
    print(time.perf_counter() - start, time.process_time() - cpu_start)
"""


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def summary(times: list[float], unit: float = 1e3, name: str = "ms") -> str:
    """Median, p90 (or p99 for long runs) and max of `times` (seconds) in `unit`s."""
    times = sorted(times)
    q = 0.99 if len(times) >= 1000 else 0.9
    tail = times[min(len(times) - 1, int(q * len(times)))]
    return (
        f"median {statistics.median(times) * unit:8.1f} p{round(q * 100)} {tail * unit:8.1f}"
        f" max {times[-1] * unit:8.1f} {name}"
    )


class Fresh(NamedTuple):
    """Seconds of one new process's steps, and which of xDSL and sympy it imported."""

    import_dvm: float
    import_numpy: float
    compile: float
    first_call: float
    compile_cpu: float
    """CPU seconds of the compile (steadier than its time on a busy machine)."""
    first_call_cpu: float
    second_shape: float
    """A call at a second shape (each dim one more): a fresh process's new shape."""
    imports: float
    """What of `compile` is importing the runtime and the VM's first stages (what
    `dvm.compile` imports: `dvm.runtime`)."""
    heavy: str


def fresh(path: Path, cache: str, folder: str) -> Fresh:
    """`import dvm`, `import numpy`, one compile of `path`, its first call (inputs from
    the examples' `reference.py`, every dim 2 to 9) and a call at a second shape, in a
    new process."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["DVM_CACHE_DIR"] = folder
    # (-P: the child imports this interpreter's dvm, not a dvm/ in the working directory)
    command = [sys.executable, "-P", "-c", FRESH, str(path), cache, str(EXAMPLES)]
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    *times, heavy = out.split()
    return Fresh._make([*map(float, times), heavy])


def bench_fresh(processes: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        fresh(EXAMPLES / "gelu.mlir", "off", folder)  # bytecode caches written
        runs = [fresh(EXAMPLES / "gelu.mlir", "off", folder) for _ in range(processes)]
        print(f"Cold start, gelu, cache off ({processes} processes; {load()}):")
        print(f"  import dvm           {summary([r.import_dvm for r in runs])}")
        whole = [r.import_dvm + r.import_numpy + r.compile for r in runs]
        print(f"  + first compile      {summary(whole)}  (goal 1000 ms)")
        # (CPU: steadier on a busy machine; it holds the compiler's imports, not dvm's)
        print(f"  ... compile's CPU    {summary([r.compile_cpu for r in runs])}")
        fresh(EXAMPLES / "bert_layer.mlir", "on", folder)  # the entry written
        runs = [fresh(EXAMPLES / "bert_layer.mlir", "on", folder) for _ in range(processes)]
        print(f"Cache hit in a fresh process, bert_layer ({load()}):")
        print(f"  import dvm           {summary([r.import_dvm for r in runs])}")
        print(f"  import numpy         {summary([r.import_numpy for r in runs])}")
        print(f"  compile (a hit)      {summary([r.compile for r in runs])}  (goal 20 ms)")
        print(f"  ... its imports      {summary([r.imports for r in runs])}")
        print(f"  first call           {summary([r.first_call for r in runs])}")
        print(f"  hit + first call     {summary([r.compile + r.first_call for r in runs])}")
        print(f"  a second shape       {summary([r.second_shape for r in runs])}")
        cpu = [r.compile_cpu + r.first_call_cpu for r in runs]
        print(f"  ... its CPU time     {summary(cpu)}")
        all_steps = [r.import_dvm + r.import_numpy + r.compile + r.first_call for r in runs]
        print(f"  all four             {summary(all_steps)}")
        print(f"  imported of xDSL and sympy: {sorted({r.heavy for r in runs})}")


def first_compiles(program: str, repeat: int) -> list[tuple[float, float]]:
    """(seconds, CPU seconds) of `program`'s compiles in a new process that compiled
    another program first: the first, then `repeat` more."""
    paths = [str(EXAMPLES / f"{name}.mlir") for name in (WARM_PROGRAM, program)]
    command = [sys.executable, "-P", "-c", FIRST, *paths, str(repeat)]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return [(float(a), float(b)) for a, b in (line.split() for line in out.splitlines())]


def bench_first(processes: int, repeat: int) -> None:
    print(f"A program's first compile in a warm process, ms, {processes} processes ({load()}):")
    print(f"  {'program':>11s} {'first':>7s} {'p90':>7s} {'CPU':>7s} {'repeat':>7s}  first/repeat")
    for program in FIRST_PROGRAMS:
        runs = [first_compiles(program, repeat) for _ in range(processes)]
        first = sorted(run[0][0] for run in runs)
        cpu = statistics.median(run[0][1] for run in runs)
        again = statistics.median(t for run in runs for t, _ in run[1:])
        tail = first[min(len(first) - 1, int(0.9 * len(first)))]
        median = statistics.median(first)
        print(
            f"  {program:>11s} {median * 1e3:7.1f} {tail * 1e3:7.1f} {cpu * 1e3:7.1f}"
            f" {again * 1e3:7.1f}  {median / again:5.1f}"
        )
    print(f"  ({load()})")


CALLS = """\
import sys, time
import numpy as np
import dvm
sys.path.insert(0, sys.argv[3])
from reference import EXAMPLES, make_inputs
def inputs(name, more):
    _, spec, _ = EXAMPLES[name]
    dims = {s: 2 + i + more for i, s in enumerate("RCMKNBSE")}
    return make_inputs(spec, dims, np.random.default_rng(more))
warm = dvm.compile(open(sys.argv[1]).read(), cache=False)
warm(*inputs(sys.argv[1].rsplit("/", 1)[-1], 0))
text, name = open(sys.argv[2]).read(), sys.argv[2].rsplit("/", 1)[-1]
calls = [inputs(name, more) for more in range(3)]
start = time.process_time()
program = dvm.compile(text, cache=False)
times = [time.process_time() - start]
for args in calls:
    start = time.process_time()
    program(*args)
    times.append(time.process_time() - start)
print(*times)
"""


def first_calls(program: str) -> list[float]:
    """CPU seconds of `program`'s first compile and of its calls at three shapes, in a
    new process that compiled and called another program first."""
    paths = [str(EXAMPLES / f"{name}.mlir") for name in (WARM_PROGRAM, program)]
    command = [sys.executable, "-P", "-c", CALLS, *paths, str(EXAMPLES)]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return [float(t) for t in out.split()]


def bench_calls(processes: int) -> None:
    print(f"A first compile and its calls, CPU ms, {processes} processes' medians ({load()}):")
    heading = ["program", "compile", "call", "shape 2", "shape 3", "compile+call"]
    print("  " + " ".join(f"{h:>12s}" for h in heading))
    for program in GAP_PROGRAMS:
        runs = [first_calls(program) for _ in range(processes)]
        medians = [statistics.median(column) * 1e3 for column in zip(*runs, strict=True)]
        medians.append(statistics.median(run[0] + run[1] for run in runs) * 1e3)
        print(f"  {program:>12s} " + " ".join(f"{m:12.2f}" for m in medians))
    print(f"  ({load()})")


GAP = """\
import sys
sys.path.insert(0, sys.argv[1])
from compile_time import first_gap
first_gap(*sys.argv[2:])
"""


def project_site(frame: FrameType | None) -> str:
    """The innermost function of dvm on the stack from `frame` (`module:function`)."""
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.startswith("dvm."):
            return f"{module.removeprefix('dvm.')}:{frame.f_code.co_name}"
        frame = frame.f_back
    return "(outside dvm)"


def first_gap(warm: str, path: str, top: str) -> None:
    """Print, for `path` compiled after `warm`, its first compile's bytecodes and a
    repeat's, then the `top` sites whose count grows most in the first (thousands)."""
    dvm.compile(Path(warm).read_text(), cache=False)
    text = Path(path).read_text()
    compile_once = partial(dvm.compile, text, cache=False)
    first, again = (bytecodes_by(compile_once, project_site) for _ in "ab")
    print(f"{Path(path).stem}: first {first.total() / 1e3:.0f}, a repeat {again.total() / 1e3:.0f}")
    for site in sorted(first, key=lambda s: again[s] - first[s])[: int(top)]:
        print(f"  {(first[site] - again[site]) / 1e3:6.1f} {site}")


def bench_gap(top: int = 8) -> None:
    print("A first compile's extra bytecodes over a repeat's, by site, thousands:")
    folder = str(Path(__file__).resolve().parent)
    for program in GAP_PROGRAMS:
        paths = [str(EXAMPLES / f"{name}.mlir") for name in (WARM_PROGRAM, program)]
        command = [sys.executable, "-P", "-c", GAP, folder, *paths, str(top)]
        print(subprocess.run(command, capture_output=True, text=True, check=True).stdout, end="")


def timed(step: Callable[[], object]) -> float:
    start = time.perf_counter()
    step()
    return time.perf_counter() - start


def compile_steps(
    text: str, measure: Callable[[Callable[[], object]], float] = timed
) -> dict[str, float]:
    """Seconds (or what `measure` counts) per step of one compile of `text`: parse, each
    pass, the variant."""
    found: dict[str, float] = {}
    parsed: list[ModuleOp] = []
    found["parse"] = measure(lambda: parsed.append(parse(text)))
    module = parsed[0]
    for stage in DvmPipelinePass().stages():
        found[stage.name] = measure(lambda stage=stage: stage.apply(Context(), module))
    found["kernels and host"] = measure(lambda: variant_from_lowered(module, None))
    return found


def bench_in_process(repeat: int) -> None:
    print(f"In-process compile, ms, median of {repeat} after a warm-up ({load()}):")
    steps = list(compile_steps((EXAMPLES / "gelu.mlir").read_text()))
    names = [*steps, "dvm.compile", "cache hit"]
    print("  " + " ".join(f"{n[:11]:>11s}" for n in ["program", *names]))
    with tempfile.TemporaryDirectory() as folder:
        os.environ["DVM_CACHE_DIR"] = folder
        for program in PROGRAMS:
            text = (EXAMPLES / f"{program}.mlir").read_text()
            dvm.compile(text, cache=True)
            runs = [compile_steps(text) for _ in range(repeat)]
            medians = [statistics.median(r[n] for r in runs) for n in steps]
            full = [timed(partial(dvm.compile, text, cache=False)) for _ in range(repeat)]
            hit = [timed(partial(dvm.compile, text, cache=True)) for _ in range(repeat)]
            medians += [statistics.median(full), statistics.median(hit)]
            print(f"  {program:>11s} " + " ".join(f"{m * 1e3:11.1f}" for m in medians))


def bench_bytecodes() -> None:
    print("Interpreted bytecodes per step of a compile, thousands, after a warm-up:")
    steps = list(compile_steps((EXAMPLES / "gelu.mlir").read_text()))
    names = [*steps, "dvm.compile"]
    print("  " + " ".join(f"{n[:11]:>11s}" for n in ["program", *names]))
    for program in PROGRAMS:
        text = (EXAMPLES / f"{program}.mlir").read_text()
        dvm.compile(text, cache=False)
        counts = compile_steps(text, bytecodes)
        counts["dvm.compile"] = bytecodes(partial(dvm.compile, text, cache=False))
        print(f"  {program:>11s} " + " ".join(f"{counts[n] / 1e3:11.0f}" for n in names))


def segments(text: str) -> list[str]:
    """The functions of an exported graph, each a program of its own."""
    return ["func.func" + part for part in text.split("func.func")[1:]]


def bench_blocks(repeat: int) -> None:
    print(f"In-process compile of model blocks, cache off, {repeat} after a warm-up ({load()}):")
    for path in sorted(BLOCKS.glob("*.mlir")):
        programs = segments(path.read_text())

        def whole(programs: list[str] = programs) -> None:
            for program in programs:
                dvm.compile(program, cache=False)

        whole()
        times = [timed(whole) for _ in range(repeat)]
        ops = sum(p.count(" = tensor.") for p in programs)
        what = f"{path.stem} ({len(programs)} segments, {ops} ops)"
        print(f"  {what:30s} {summary(times)}")


def bench_tiny_call(calls: int) -> None:
    p = dvm.compile(EXAMPLES / "gelu.mlir", cache=False)
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    for _ in range(2000):
        p(x)
    clock = time.perf_counter
    times = []
    for _ in range(calls):
        start = clock()
        p(x)
        times.append(clock() - start)
    print(f"Tiny cached call, gelu 2x3, {calls} calls ({load()}):")
    print(f"  p(x)                 {summary(times, 1e6, 'us')}  (goal 10 us)")


def main() -> None:
    global EXAMPLES
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--processes", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument(
        "--parts", default=",".join(DEFAULT_PARTS), help=f"comma-separated, of {','.join(PARTS)}"
    )
    ap.add_argument("--examples", type=Path, help=f"the shared examples folder ({EXAMPLES})")
    a = ap.parse_args()
    if a.examples:
        EXAMPLES = a.examples
    parts = a.parts.split(",")
    if unknown := set(parts) - set(PARTS):
        ap.error(f"unknown parts {sorted(unknown)}; use some of {','.join(PARTS)}")
    if "fresh" in parts:
        bench_fresh(a.processes)
    if "first" in parts:
        bench_first(a.processes, a.repeat)
    if "calls" in parts:
        bench_calls(a.processes)
    if "in-process" in parts:
        bench_in_process(a.repeat)
    if "blocks" in parts:
        bench_blocks(a.repeat)
    if "tiny" in parts:
        bench_tiny_call(a.calls)
    if "bytecodes" in parts:
        bench_bytecodes()
    if "gap" in parts:
        bench_gap()


if __name__ == "__main__":
    main()
