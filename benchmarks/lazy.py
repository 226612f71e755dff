"""Plain numpy against `dvm.lazy` on streams of new shapes, compiles included.

Run: .venv/bin/python benchmarks/lazy.py [--shapes 12 --calls 3 --rows 1024 --cols 1024]

Each function (LayerNorm, a GELU chain, softmax) runs, in one process, on a stream
of --shapes new shapes (rows varying around --rows, so each holds about
rows x cols elements), --calls times per shape, once in plain numpy and once on lazy
arrays (each call ends with `np.asarray`, a sync point). Reported per function: the
whole stream's time each way and their ratio (the lazy stream includes its one
compile), the median and p90 of a call at a shape already met, and of a first call
at a new shape (lazy: the specialization), and what recording costs per op (a
function recorded without being flushed, median over repeats, divided by the ops
it records). The compiler's start-up (its imports, paid once by the first compile
of a process) is taken and printed before the streams, so that it does not land
on the first function's. The machine's load average is printed: on a shared
machine, compare ratios from one run, not times across runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from dvm import lazy


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


def stream(function: Callable[[Any], Any], inputs: list[np.ndarray[Any, Any]], calls: int,
           wrap: Callable[[Any], Any]) -> tuple[float, list[float], list[float]]:  # fmt: skip
    """The stream's total time, and each first and repeat call's time."""
    firsts, repeats = [], []
    start = time.perf_counter()
    for x in inputs:
        for k in range(calls):
            t0 = time.perf_counter()
            np.asarray(function(wrap(x)))
            (firsts if k == 0 else repeats).append(time.perf_counter() - t0)
    return time.perf_counter() - start, firsts, repeats


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
    return f"{np.quantile(values, q) * 1e3:8.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", type=int, default=12)
    parser.add_argument("--calls", type=int, default=3)
    parser.add_argument("--rows", type=int, default=1024)
    parser.add_argument("--cols", type=int, default=1024)
    options = parser.parse_args()
    rng = np.random.default_rng(0)
    rows = rng.integers(options.rows // 2, options.rows * 3 // 2, options.shapes)
    inputs = [rng.standard_normal((int(r), options.cols)).astype(np.float32) for r in rows]
    start = time.perf_counter()
    np.asarray(lazy.asarray(np.ones((2, 2), np.float32)) * 2)  # the compiler's start-up
    print(f"load average {os.getloadavg()[0]:.2f}; {options.shapes} shapes x "
          f"{options.calls} calls, about {options.rows} x {options.cols} f32; the "
          f"compiler's start-up: {time.perf_counter() - start:.2f} s")  # fmt: skip
    columns = ["numpy s", "lazy s", "ratio", "np rep", "lz rep", "lz p90", "np new", "lz new"]
    print(f"{'function':10} " + " ".join(f"{c:>8}" for c in columns) + f" {'us/op':>6}")
    for name, function in FUNCTIONS.items():
        lazy.reset()
        numpy_total, numpy_first, numpy_repeat = stream(
            function, inputs, options.calls, lambda x: x
        )
        lazy_total, lazy_first, lazy_repeat = stream(function, inputs, options.calls, lazy.asarray)
        for x in inputs:  # the results agree
            np.testing.assert_allclose(
                np.asarray(function(lazy.asarray(x))), function(x), rtol=1e-4, atol=1e-4
            )
        per_op = recording_cost(function, inputs[0])
        print(
            f"{name:10} {numpy_total:8.3f} {lazy_total:8.3f} {numpy_total / lazy_total:8.2f} "
            f"{ms(numpy_repeat, 0.5)} {ms(lazy_repeat, 0.5)} {ms(lazy_repeat, 0.9)} "
            f"{ms(numpy_first[1:], 0.5)} {ms(lazy_first[1:], 0.5)} {per_op:6.1f}"
        )
    print("ratio: numpy's stream time over lazy's (above 1: lazy is faster); times in ms")


if __name__ == "__main__":
    main()
