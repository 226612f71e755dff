"""matmul and addmm+relu against numpy's BLAS, alternating call by call; and what limits them.

Run: .venv/bin/python benchmarks/matmul_ratio.py [--turns 9] [--device host] [--suspects]
     [--wait-idle 0.5]

For each shape (M x K x N), numpy's `a @ b` and `np.maximum(a @ b + bias, 0)`
take turns with the compiled `matmul.mlir` and `addmm_relu.mlir` of the shared
examples, one call each per turn, `--turns` turns after two warm-up calls. It
prints each side's median and p90 and the ratio numpy/dvm of the medians (> 1:
dvm is faster), with the load average before and after. Unlike
`vm_kernels.py`, OpenBLAS runs with its defaults: its idle threads spin after
each of numpy's calls, as they do in a program that mixes the two.

With `--suspects`, single measurements of what could slow the VM's matmul:
numpy's BLAS and its threads; one sgemm on one thread and on all of them; two
threads each running a single-threaded sgemm on half the rows at once (does
OpenBLAS serialize concurrent calls?); the same right after numpy's own
multithreaded `@` (its spinning threads); and tiles multiplied in place against
tiles copied first (the panel copies).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

import dvm
from dvm.vm import blas

sys.path.insert(0, str(Path(__file__).resolve().parent))
from suite.workloads import DEFAULT_EXAMPLES

SHAPES = [(1024, 1024, 1024), (2048, 512, 2048), (4096, 256, 1024), (777, 1500, 333)]


def percentile(times: list[float], q: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def alternate(fns: list[Callable[[], Any]], turns: int) -> list[list[float]]:
    """Each function's wall times, one call each per turn, after two warm-up calls."""
    for f in fns:
        f()
        f()
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(turns):
        for f, ts in zip(fns, times, strict=True):
            t = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t)
    return times


def numpy_addmm_relu(a: np.ndarray, b: np.ndarray, bias: np.ndarray) -> np.ndarray:
    return np.maximum(a @ b + bias, np.float32(0))


def ratios(turns: int, device: str) -> None:
    matmul = dvm.compile((DEFAULT_EXAMPLES / "matmul.mlir").read_text(), device=device)
    addmm = dvm.compile((DEFAULT_EXAMPLES / "addmm_relu.mlir").read_text(), device=device)
    rng = np.random.default_rng(0)
    print(f"load average {os.getloadavg()}; {turns} turns; ms: median (p90)")
    print("| M x K x N | numpy @ | dvm matmul | ratio | numpy addmm+relu | dvm | ratio |")
    print("|---|---|---|---|---|---|---|")
    for m, k, n in SHAPES:
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        bias = rng.standard_normal(n, dtype=np.float32)
        np.testing.assert_allclose(matmul(a, b), a @ b, rtol=1e-4, atol=1e-3)
        fns = [
            partial(np.matmul, a, b),
            partial(matmul, a, b),
            partial(numpy_addmm_relu, a, b, bias),
            partial(addmm, a, b, bias),
        ]
        times = alternate(fns, turns)
        med = [statistics.median(t) * 1e3 for t in times]
        p90 = [percentile(t, 0.9) * 1e3 for t in times]
        cells = [f"{x:.1f} ({y:.1f})" for x, y in zip(med, p90, strict=True)]
        print(
            f"| {m}x{k}x{n} | {cells[0]} | {cells[1]} | {med[0] / med[1]:.2f} "
            f"| {cells[2]} | {cells[3]} | {med[2] / med[3]:.2f} |"
        )
    print(f"load average {os.getloadavg()}")


def best_ms(f: Callable[[], Any], runs: int = 7) -> float:
    f()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def suspects() -> None:
    from threadpoolctl import threadpool_info

    for info in threadpool_info():
        print({k: info.get(k) for k in ("internal_api", "version", "num_threads", "architecture")})
    found = blas.threads()
    if found is None:
        print("no direct handle on OpenBLAS's thread count: nothing more to measure")
        return
    get, put = found
    all_threads = int(get())
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1024, 1024), dtype=np.float32)
    b = rng.standard_normal((1024, 1024), dtype=np.float32)
    out = np.empty((1024, 1024), np.float32)
    halves = [slice(0, 512), slice(512, 1024)]

    def concurrent_halves() -> None:
        def half(rows: slice) -> None:
            np.matmul(a[rows], b, out=out[rows])

        threads = [threading.Thread(target=half, args=(rows,)) for rows in halves]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def after_numpy(fn: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> None:
            put(all_threads)
            np.matmul(a, b, out=out)  # wakes OpenBLAS's threads, which then spin
            put(1)
            t = time.perf_counter()
            fn()
            timed.append(time.perf_counter() - t)

        return run

    def tiles(copy: bool) -> Callable[[], None]:
        def run() -> None:
            for i in range(0, 1024, 512):
                rows = a[i : i + 512].copy() if copy else a[i : i + 512]
                for j in range(0, 1024, 512):
                    cols = b[:, j : j + 512].copy() if copy else b[:, j : j + 512]
                    np.matmul(rows, cols, out=out[i : i + 512, j : j + 512])

        return run

    print(f"1024^3 sgemm, ms, median of 7 (load average {os.getloadavg()})")
    print(f"  one call, {all_threads} BLAS threads: {best_ms(lambda: a @ b):.1f}")
    put(1)
    try:
        print(f"  one call, 1 BLAS thread: {best_ms(lambda: a @ b):.1f}")
        print(f"  half the rows, 1 thread: {best_ms(lambda: a[:512] @ b):.1f}")
        print(f"  two halves at once on two threads: {best_ms(concurrent_halves):.1f}")
        timed: list[float] = []
        for _ in range(7):
            after_numpy(concurrent_halves)()
        print(f"  the same right after numpy's @: {statistics.median(timed) * 1e3:.1f}")
        put(all_threads)
        print(f"  4 tiles of 512x512 in turn, in place: {best_ms(tiles(False)):.1f}")
        print(f"  4 tiles of 512x512 in turn, copied first: {best_ms(tiles(True)):.1f}")
    finally:
        put(all_threads)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--turns", type=int, default=9)
    parser.add_argument("--device", default="host")
    parser.add_argument("--suspects", action="store_true")
    parser.add_argument("--wait-idle", type=float, default=0.0, metavar="LOAD")
    args = parser.parse_args()
    if args.wait_idle:
        from run import wait_idle

        wait_idle(args.wait_idle)
    if args.suspects:
        suspects()
    ratios(args.turns, args.device)


if __name__ == "__main__":
    main()
