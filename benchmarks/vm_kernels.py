"""Throughput of `dvm.compile` programs against numpy eager.

Run: .venv/bin/python benchmarks/vm_kernels.py [--repeat 7] [--run 5] [--only layernorm,matmul]
     [--processes]

For each case, `p = dvm.compile(example)` runs on large inputs beside the
numpy composite of `/work/shared/examples/reference.py` (the same
arithmetic, eager: one numpy call per op, numpy's own BLAS threads for
`@`). They take turns, `--repeat` turns after a warm-up, each turn `--run`
calls of each side in a row. The table's numpy, dvm and numpy/dvm (> 1: dvm
is faster) are medians of each run's later calls: the steady state of a
program called in a loop. Beside them:

- 'first': numpy/dvm of each run's first calls, made right after the other
  sides' runs. The VM's first call is slower than its later ones mostly
  because its second core sat idle (the host lets an idle CPU's caches and
  clock go), so 'paused' times dvm after a sleep as long as numpy's call:
  the idle time alone, without the other side's work.
- 'dvm GB/s': the least traffic a call makes (arguments read and results
  written once) over its time, and that as a share of the machine's copy
  bandwidth, measured first in the same run.
- For the programs whose rows are independent (layernorm, softmax, gelu),
  the same composite blocked and threaded by hand: blocks of rows of about
  512 KiB, shared out over the host's cores, each block one eager
  composite: numpy given the VM's blocking and threads, so that its/dvm is
  what compiling the program adds beyond them.
- torch's own kernel where it has one (F.layer_norm, F.softmax, F.gelu),
  when torch is installed (`make bench-install`), at its default threads.

With `--steady`, the steady state on the benchmark suite's streams of shapes
instead (`bench_steady`): per shape, runs of 10 calls taking turns with numpy's and
with the program compiled under a switch: `--baseline bytes-only` (the default,
`plan.SHARE_WORK = 0`: launches share their tiles among the cores from INLINE_BYTES
of traffic, whatever their work) or `--baseline strategies-off` (three execution
strategies off: a `mul` feeding a `reduce sum` as one matmul, `product_sums.ENABLED`;
a max or min over a short axis as pairwise calls, `kernels.SHORT_AXIS`; a stack of
small gemms on one core, `plan.SHARE_GEMM`) or `--baseline no-branch-sinking` (compiled
without the `sink-into-branches` pass) or `--baseline local-x4` (compiled for the host
with four times its local memory per core: vector tiles four times larger) or `--baseline
tanh-as-tanh` (`tanh_plus_one.ENABLED` off: a tanh and the add of 1 after it run as the
two instructions, not as one logistic).

With `--processes`, a second table times numpy and dvm each in its own
process, taking turns call by call (see `bench_processes`). Then each of
F16_CASES in f16 against f32 on both device presets (`bench_f16`), and the
VM's dispatch cost per instruction (a chain of 1-element adds minus the same
numpy calls in a plain loop).

The machine may be shared: ratios within one run are what count; re-run
when a row looks noisy.

After each multithreaded call, OpenBLAS's worker threads spin for about
2^28 cycles before they sleep. Alternating with numpy's `@`, the spinning
worker then takes the CPU that the VM's second core needs, and the VM's
next call runs slower than after a pause. So that each side runs as it
would alone, the benchmark sets OPENBLAS_THREAD_TIMEOUT=4 (workers sleep
right away; the next numpy call wakes them) unless the environment already
sets it; `OPENBLAS_THREAD_TIMEOUT=28` restores OpenBLAS's default.
"""

from __future__ import annotations

import os

# before numpy loads OpenBLAS, which reads it once (see the docstring)
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

import argparse
import multiprocessing
import statistics
import sys
import threading
import time
from collections.abc import Callable
from functools import partial
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np
from suite.workloads import (
    DEFAULT_EXAMPLES,
    load_reference,
    sample_2d,
    sample_mmoe,
    sample_softmax,
)

import dvm
import dvm.vm as vm
import dvm.vm.kernels as kernels
import dvm.vm.plan as plan
import dvm.vm.product_sums as product_sums
import dvm.vm.tanh_plus_one as tanh_plus_one
from dvm.passes.branch_sinking import SinkIntoBranchesPass
from dvm.vm.device import PRESETS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "vm"))
import vm_programs

EXAMPLES = DEFAULT_EXAMPLES


CASES: list[tuple[str, str, dict[str, int]]] = [
    ("layernorm", "layernorm.mlir", {"R": 8192, "C": 1024}),
    ("layernorm", "layernorm.mlir", {"R": 1000, "C": 999}),
    ("softmax", "softmax.mlir", {"B": 8, "S": 1024}),
    ("softmax", "softmax.mlir", {"B": 16, "S": 2048}),
    ("gelu", "gelu.mlir", {"R": 1024, "C": 1024}),
    ("gelu", "gelu.mlir", {"R": 2048, "C": 2048}),
    ("matmul", "matmul.mlir", {"M": 1024, "K": 1024, "N": 1024}),
    ("matmul", "matmul.mlir", {"M": 1000, "K": 999, "N": 1001}),
    ("matmul", "matmul.mlir", {"M": 513, "K": 771, "N": 257}),
    ("addmm_relu", "addmm_relu.mlir", {"M": 1024, "K": 1024, "N": 1024}),
    ("addmm_relu", "addmm_relu.mlir", {"M": 1000, "K": 999, "N": 1001}),
    ("addmm_relu", "addmm_relu.mlir", {"M": 4096, "K": 256, "N": 512}),
    ("bert_layer", "bert_layer.mlir", {"B": 8, "S": 128}),
    ("mmoe", "mmoe.mlir", {"B": 4096, "E": 8}),
]


def alternate(fns: list[Callable[[], object]], repeat: int, run: int = 1) -> list[list[float]]:
    """Wall times of each function taking turns, after one warm-up call each: each of
    `repeat` turns calls every function `run` times in a row. Per function, its times
    in call order (so calls 0, run, 2 run, ... are the first of a run)."""
    for f in fns:
        f()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for f, ts in zip(fns, times, strict=True):
            for _ in range(run):
                t = time.perf_counter()
                f()
                ts.append(time.perf_counter() - t)
    return times


def split_runs(times: list[float], run: int) -> tuple[float, float]:
    """(median of the calls after the first of each run, median of the first calls);
    with runs of one call, both are the median of all."""
    firsts = statistics.median(times[::run])
    later = [t for i, t in enumerate(times) if i % run]
    return (statistics.median(later) if later else firsts), firsts


ROW_WISE = {"layernorm.mlir", "softmax.mlir", "gelu.mlir"}
"""Programs whose output rows (axis 0 of the first argument) depend only on the same rows."""

BLOCK_BYTES = 512 * 1024
"""The threaded composite's block: a per-core L2, so that each op of the composite reads
its block from cache, not from main memory."""


def threaded_reference(
    reference: Callable[..., Any], args: list[Any], block_bytes: int
) -> Callable[[], Any]:
    """The eager composite on blocks of rows of about `block_bytes` of the first
    argument, the blocks dealt out over the host's cores (one thread each)."""
    x, rest = args[0], args[1:]
    rows = max(1, block_bytes // max(1, x[0].nbytes))
    blocks = [(s, min(s + rows, len(x))) for s in range(0, len(x), rows)]
    workers = max(1, min(os.cpu_count() or 1, len(blocks)))
    out = np.empty_like(reference(x[:1], *rest), shape=(len(x), *x.shape[1:]))

    def work(mine: list[tuple[int, int]]) -> None:
        for lo, hi in mine:
            out[lo:hi] = reference(x[lo:hi], *rest)

    def run() -> Any:
        threads = [
            threading.Thread(target=work, args=(blocks[w::workers],)) for w in range(1, workers)
        ]
        for t in threads:
            t.start()
        work(blocks[0::workers])
        for t in threads:
            t.join()
        return out

    return run


def check(got: Any, want: Any) -> None:
    gs = got if isinstance(got, tuple) else (got,)
    ws = want if isinstance(want, tuple) else (want,)
    for g, w in zip(gs, ws, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-3, atol=2e-3)


RATIO_HEADER = f"  {'program':12s} {'dims':28s} {'numpy':>9s} {'dvm':>9s} {'numpy/dvm':>10s}"


def chosen_cases(only: set[str] | None) -> list[tuple[str, str, dict[str, int]]]:
    """The CASES of the programs named in `only` (all of them without it)."""
    return [case for case in CASES if not only or case[0] in only]


def ratio_line(name: str, dims: dict[str, int], numpy_s: float, dvm_s: float) -> str:
    """A case's row under RATIO_HEADER: both sides' times and numpy/dvm."""
    text = ",".join(f"{k}={v}" for k, v in dims.items())
    times = f"{numpy_s * 1e3:7.2f}ms {dvm_s * 1e3:7.2f}ms"
    return f"  {name:12s} {text:28s} {times} {numpy_s / dvm_s:9.2f}x"


def torch_kernel(file: str, args: list[Any]) -> Callable[[], Any] | None:
    """torch's own library kernel for the program, where it has one (F.layer_norm,
    F.softmax, F.gelu with the tanh approximation), on tensors sharing the inputs'
    memory, at torch's default threads; None without torch or such a kernel."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return None
    t = [torch.from_numpy(a) for a in args]
    if file == "layernorm.mlir":
        x, w, b = t
        return partial(F.layer_norm, x, tuple(w.shape), w, b, 1e-5)
    if file == "softmax.mlir":
        return partial(F.softmax, t[0], -1)
    if file == "gelu.mlir":
        return partial(F.gelu, t[0], approximate="tanh")
    return None


PEER_COLUMNS = [("numpy threaded", 14), ("torch F", 8)]
"""The in-process table's other peers (`threaded_reference`, `torch_kernel`): title, width."""


def nbytes(value: Any) -> int:
    """Bytes of an argument or result (a tuple: of its arrays; an index: none)."""
    if isinstance(value, tuple):
        return sum(map(nbytes, value))
    return int(getattr(value, "nbytes", 0))


def checked_peers(file: str, reference: Callable[..., Any], args: list[Any]) -> list[Any]:
    """The in-process table's other peers, in PEER_COLUMNS order (None where one does not
    apply), each checked against the reference."""
    threaded = threaded_reference(reference, args, BLOCK_BYTES) if file in ROW_WISE else None
    peers = [threaded, torch_kernel(file, args)]
    for peer in peers:
        if peer is not None:
            check(peer(), reference(*args))
    return peers


def bench_cases(only: set[str] | None, repeat: int, run: int, copy_bytes_per_s: float) -> None:
    """The in-process table (see the module docstring)."""
    ref = load_reference(EXAMPLES)
    rng = np.random.default_rng(0)
    print(f"Throughput vs numpy eager in one process: {repeat} turns of {run} calls a side")
    print("  (medians of each run's later calls; 'first': numpy/dvm of the first calls,")
    print("  'paused': dvm after a sleep as long as numpy's call)")
    titles = "".join(f" | {title:>{width}s} {'its/dvm':>7s}" for title, width in PEER_COLUMNS)
    print(f"{RATIO_HEADER} | {'first':>6s} {'paused':>8s} | dvm GB/s of copy{titles}")
    programs: dict[str, dvm.Program] = {}
    for name, file, dims in chosen_cases(only):
        _, spec, reference = ref.EXAMPLES[file]  # type: ignore[attr-defined]
        p = programs.get(file) or programs.setdefault(file, dvm.compile(EXAMPLES / file))
        args = ref.make_inputs(spec, dims, rng)  # type: ignore[attr-defined]
        got = p(*args)
        check(got, reference(*args))
        traffic = sum(map(nbytes, args)) + nbytes(got)
        peers = checked_peers(file, reference, args)
        fns = [partial(reference, *args), partial(p, *args), *filter(None, peers)]
        times = iter(alternate(fns, repeat, run))
        (a, a_first), (b, b_first) = split_runs(next(times), run), split_runs(next(times), run)
        line = ratio_line(name, dims, a, b)
        # the VM right after a sleep as long as numpy's call: idle cores, no other work
        paused = statistics.median(alternate([partial(time.sleep, a), fns[1]], repeat)[1])
        line += f" | {a_first / b_first:5.2f}x {paused * 1e3:6.2f}ms"
        line += f" | {traffic / b / 1e9:8.1f} {traffic / b / copy_bytes_per_s:6.0%}"
        for peer, (_, width) in zip(peers, PEER_COLUMNS, strict=True):
            if peer is None:
                line += f" | {'-':>{width}s} {'':7s}"
            else:
                c = split_runs(next(times), run)[0]
                line += f" | {c * 1e3:{width - 2}.2f}ms {c / b:6.2f}x"
        print(line)


def side_worker(conn: Connection, file: str, dims: dict[str, int], side: str) -> None:
    """One side of a case in a process of its own: make its inputs (as bench_cases
    does), warm up, then time one call each time the parent says `run`."""
    ref = load_reference(EXAMPLES)
    _, spec, reference = ref.EXAMPLES[file]  # type: ignore[attr-defined]
    args = ref.make_inputs(spec, dims, np.random.default_rng(0))  # type: ignore[attr-defined]
    fn = partial(reference if side == "numpy" else dvm.compile(EXAMPLES / file), *args)
    fn()
    conn.send("ready")
    while conn.recv() == "run":
        t = time.perf_counter()
        fn()
        conn.send(time.perf_counter() - t)


def bench_processes(only: set[str] | None, repeat: int) -> None:
    """numpy eager and dvm, each in its own process, taking turns call by call: each
    side's heap and caches hold only its own arrays, as when a program runs one of
    them. In one process, a call right after the other side's meets what that side
    left: the allocator hands the VM's output fresh pages that the eager temporaries
    gave back (softmax 1M: about 500 page faults a call)."""
    print(f"Each side in its own process, taking turns (medians of {repeat})")
    print(RATIO_HEADER)
    ctx = multiprocessing.get_context("spawn")
    for name, file, dims in chosen_cases(only):
        pipes, procs = [], []
        for side in ("numpy", "dvm"):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=side_worker, args=(child, file, dims, side), daemon=True)
            proc.start()
            pipes.append(parent)
            procs.append(proc)
        for conn in pipes:
            assert conn.recv() == "ready"
        times: list[list[float]] = [[], []]
        for _ in range(repeat):
            for conn, ts in zip(pipes, times, strict=True):
                conn.send("run")
                ts.append(conn.recv())
        for conn, proc in zip(pipes, procs, strict=True):
            conn.send("stop")
            proc.join()
        print(ratio_line(name, dims, *map(statistics.median, times)))


def bench_dispatch(repeat: int) -> None:
    """VM time per instruction minus a bare numpy call (best of alternating runs)."""
    n = 2000
    prog = vm.load(vm.encode(vm.assemble(vm_programs.add_chain(n))))
    x, y = np.ones(1, np.float32), np.zeros(1, np.float32)
    a, c = np.ones(1, np.float32), np.zeros(1, np.float32)
    calls = [partial(np.add, c, a, out=c)] * n

    def plain() -> None:
        for f in calls:
            f()

    t_vm, t_np = (
        min(ts) for ts in alternate([partial(vm.launch, prog, [x, y]), plain], 5 * repeat)
    )
    per_vm, per_np = t_vm / (n + 3), t_np / n
    print(f"Dispatch ({n} 1-element adds in one tile, best of {5 * repeat})")
    print(f"  vm per instruction {per_vm * 1e6:.3f} us, bare numpy call {per_np * 1e6:.3f} us: ")
    print(f"  dispatch overhead {(per_vm - per_np) * 1e6:.3f} us/instruction")


def bench_copy(repeat: int) -> float:
    """The machine's copy bandwidth (bytes read and written per second), printed."""
    n = 256 * 2**20
    src = np.ones(n, np.uint8)
    dst = np.empty_like(src)
    (times,) = alternate([partial(np.copyto, dst, src)], repeat)
    t = statistics.median(times)
    print(f"Copy bandwidth: np.copyto 256 MiB {t * 1e3:.1f} ms = {2 * n / t / 1e9:.1f} GB/s (r+w)")
    return 2 * n / t


F16_CASES: list[tuple[str, str, dict[str, int]]] = [
    ("matmul", "matmul.mlir", {"M": 512, "K": 512, "N": 2048}),
    ("layernorm", "layernorm.mlir", {"R": 8192, "C": 1024}),
]
"""Programs timed in f16 beside f32 (`bench_f16`)."""


def bench_f16(only: set[str] | None, repeat: int) -> None:
    """Each F16_CASES program with every f32 made f16 against itself in f32, on both
    device presets, calls taking turns. numpy has no f16 BLAS and computes f16
    elementwise in software: an f16 mma widens to f32 (a few conversions more than
    f32), while f16 elementwise instructions cost numpy's f16 arithmetic."""
    ref = load_reference(EXAMPLES)
    rng = np.random.default_rng(0)
    print(f"f16 against f32, the same program (medians of {repeat} turns)")
    print(f"  {'program':12s} {'dims':28s} {'device':10s} {'f32':>9s} {'f16':>9s} {'f16/f32':>8s}")
    for name, file, dims in F16_CASES:
        if only and name not in only:
            continue
        _, spec, _ = ref.EXAMPLES[file]  # type: ignore[attr-defined]
        args = ref.make_inputs(spec, dims, rng)  # type: ignore[attr-defined]
        text = (EXAMPLES / file).read_text()
        for device in ("host", "ascend910b"):
            fns = []
            for dtype, source in ((np.float32, text), (np.float16, text.replace("f32", "f16"))):
                program = dvm.compile(source, device=device)
                fns.append(partial(program, *[a.astype(dtype) for a in args]))  # (no index)
            t32, t16 = (statistics.median(ts) for ts in alternate(fns, repeat))
            shape = ",".join(f"{k}={v}" for k, v in dims.items())
            times = f"{t32 * 1e3:7.2f}ms {t16 * 1e3:7.2f}ms"
            print(f"  {name:12s} {shape:28s} {device:10s} {times} {t16 / t32:7.1f}x")


STEADY: dict[str, tuple[Callable[[int], list[tuple[int, ...]]], int]] = {
    "if_else_add": (sample_2d, 30),
    "layernorm": (sample_2d, 15),
    "softmax": (sample_softmax, 15),
    "mmoe": (sample_mmoe, 10),
    "gelu": (sample_2d, 15),
}
"""The workloads of `--steady`: the suite's shape sampler and stream length."""


def steady_inputs(name: str, shape: tuple[int, ...], rng: np.random.Generator) -> list[Any]:
    """The suite's inputs of a workload at a shape (`suite.workloads.make_workloads`)."""

    def normal(dims: tuple[int, ...], scale: float = 1.0) -> np.ndarray:
        return rng.standard_normal(dims, dtype=np.float32) * np.float32(scale)

    if name in ("if_else_add", "gelu"):
        return [normal(shape)]
    if name == "softmax":
        return [normal((*shape, 128))]
    if name == "layernorm":
        return [normal(shape), normal(shape[1:]), normal(shape[1:])]
    b, e = shape
    return [normal((b, 32)), normal((e, 32, 16), 0.2), normal((e, 1, 16), 0.1)] + [
        normal((32, e), 0.2) for _ in range(2)
    ]


def strategies_off(f: Callable[[], Any]) -> Any:
    """f() with the switches of `--baseline strategies-off` off (read as launches bind
    and generate their code, and as a stack picks its cores: a program only ever
    called this way runs without those strategies)."""
    saved = product_sums.ENABLED, kernels.SHORT_AXIS, plan.SHARE_GEMM
    product_sums.ENABLED, kernels.SHORT_AXIS, plan.SHARE_GEMM = False, 1, 0
    try:
        return f()
    finally:
        product_sums.ENABLED, kernels.SHORT_AXIS, plan.SHARE_GEMM = saved


def tanh_as_tanh(f: Callable[[], Any]) -> Any:
    """f() with `tanh_plus_one` off (read as launches bind and generate their code)."""
    saved, tanh_plus_one.ENABLED = tanh_plus_one.ENABLED, False
    try:
        return f()
    finally:
        tanh_plus_one.ENABLED = saved


def steady_programs(name: str, baseline: str) -> list[Callable[..., Any]]:
    """The program compiled under the baseline's switch, and as it is."""
    if baseline in ("strategies-off", "tanh-as-tanh"):
        source = EXAMPLES / f"{name}.mlir"
        off, switch = dvm.compile(source, cache=False), BASELINE_SWITCHES[baseline]
        return [lambda *a: switch(partial(off, *a)), dvm.compile(source, cache=False)]
    if baseline == "local-x4":
        source = EXAMPLES / f"{name}.mlir"
        return [
            dvm.compile(source, device=larger_local(4), cache=False),
            dvm.compile(source, cache=False),
        ]
    if baseline == "no-branch-sinking":
        source = EXAMPLES / f"{name}.mlir"
        with mock.patch.object(SinkIntoBranchesPass, "apply", lambda *_: None):
            unsunk = dvm.compile(source, cache=False)
        return [unsunk, dvm.compile(source, cache=False)]
    programs = []
    for share_work in (0, plan.SHARE_WORK):
        saved, plan.SHARE_WORK = plan.SHARE_WORK, share_work  # read as it compiles
        try:
            programs.append(dvm.compile(EXAMPLES / f"{name}.mlir", cache=False))
        finally:
            plan.SHARE_WORK = saved
    return programs


BASELINE_SWITCHES = {"strategies-off": strategies_off, "tanh-as-tanh": tanh_as_tanh}


def larger_local(factor: int) -> str:
    """The name of a device preset made here: the host's, with `factor` times its local
    memory per core (vector tiles that much larger)."""
    name = f"host-local-x{factor}"
    if name not in PRESETS:
        host = vm.DeviceSpec.host()
        device = host._replace(name=name, local_memory_bytes=factor * host.local_memory_bytes)
        PRESETS[name] = lambda: device  # one object, as every preset
    return name


def bench_steady(only: set[str] | None, turns: int, baseline: str) -> None:
    """Per workload and shape, the median (p90) of calls 2..10 of runs of 10, dvm
    against dvm under the switch and numpy taking turns; then, over the shapes, the
    median of each one's ratio to numpy (as the suite's steady-state table), and the sum
    of each one's medians (where the large shapes weigh, as in a stream's total)."""
    ref = load_reference(EXAMPLES)
    print(f"\nsteady state, runs of 10 ({turns} turns); load {os.getloadavg()[0]:.2f}")
    for name, (sampler, n) in STEADY.items():
        if only and name not in only:
            continue
        rng, ratios, sums = np.random.default_rng(0), [], [0.0, 0.0, 0.0]
        for shape in sampler(n):
            args = steady_inputs(name, shape, rng)
            programs = steady_programs(name, baseline)
            fns = [partial(f, *args) for f in (*programs, getattr(ref, name))]
            for f in fns[:2]:
                for _ in range(40):  # past the plan patience
                    f()
            times = [[t for i, t in enumerate(ts) if i % 10] for ts in alternate(fns, turns, 10)]
            meds = [statistics.median(ts) for ts in times]
            ratios.append((meds[0] / meds[2], meds[1] / meds[2]))
            sums = [total + m for total, m in zip(sums, meds, strict=True)]
            cells = [
                f"{m * 1e6:7.0f} ({np.percentile(ts, 90) * 1e6:5.0f})"
                for m, ts in zip(meds, times, strict=True)
            ]
            row = f"{baseline} {cells[0]}  dvm {cells[1]}  numpy {cells[2]} us"
            print(f"  {name:12s} {shape!s:12s} {row}")
        old, new = (statistics.median(r) for r in zip(*ratios, strict=True))
        print(f"  {name}: median over shapes of dvm/numpy: {baseline} {old:.2f}, dvm {new:.2f}")
        ms = "  ".join(
            f"{side} {total * 1e3:.2f}"
            for side, total in zip((baseline, "dvm", "numpy"), sums, strict=True)
        )
        print(f"  {name}: sum over shapes of the medians, ms: {ms}")
    print(f"load {os.getloadavg()[0]:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--only", default="", help="comma-separated program names")
    ap.add_argument("--run", type=int, default=5, help="calls of each side in a row per turn")
    ap.add_argument(
        "--processes", action="store_true", help="also time each side in its own process"
    )
    ap.add_argument("--steady", action="store_true", help="the suite's shape streams instead")
    ap.add_argument(
        "--baseline",
        choices=("bytes-only", "strategies-off", "no-branch-sinking", "local-x4", "tanh-as-tanh"),
        default="bytes-only",
        help="--steady: the switch the first column's program runs under",
    )
    a = ap.parse_args()
    only = set(a.only.split(",")) - {""} or None
    if a.steady:
        return bench_steady(only, a.repeat, a.baseline)
    print(f"host device: {vm.DeviceSpec.host()}")
    print(f"OPENBLAS_THREAD_TIMEOUT={os.environ['OPENBLAS_THREAD_TIMEOUT']}")
    copy_bytes_per_s = bench_copy(a.repeat)
    bench_cases(only, a.repeat, max(1, a.run), copy_bytes_per_s)
    if a.processes:
        bench_processes(only, a.repeat)
    bench_f16(only, a.repeat)
    if not only:
        bench_dispatch(a.repeat)


if __name__ == "__main__":
    main()
