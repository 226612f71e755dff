"""scatter_add and top_k compiled once, run on a stream of new shapes.

Run: .venv/bin/python benchmarks/index_ops_stream.py [--calls 40 --repeat 3]

Each program is compiled once (not timed), then called on `--calls` shapes drawn
with a fixed seed (an embedding gradient: a table of up to 5000 rows of width up
to 256 and up to 4096 token ids; a router's top-2 over up to 64 experts for up to
4096 tokens), every shape new to the program. Prints the median over `--repeat`
passes of the whole stream's wall time per program, and numpy's own time for the
same calls (`np.add.at` on a copy; `np.argsort` along the axis) for scale.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import dvm

SCATTER = """
func.func @grad(%table: tensor<?x?xf32>, %ids: tensor<?xi32>, %g: tensor<?x?xf32>)
    -> tensor<?x?xf32> {
  %d = tensor.scatter_add %table, %ids, %g dim(0)
      : (tensor<?x?xf32>, tensor<?xi32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %d : tensor<?x?xf32>
}
"""

TOP_K = """
func.func @route(%logits: tensor<?x?xf32>) -> (tensor<?x2xf32>, tensor<?x2xi64>) {
  %v, %i = tensor.top_k %logits {k = 2} : tensor<?x?xf32> -> tensor<?x2xf32>, tensor<?x2xi64>
  func.return %v, %i : tensor<?x2xf32>, tensor<?x2xi64>
}
"""


def scatter_stream(calls: int) -> list[tuple[Any, ...]]:
    rng = np.random.default_rng(0)
    stream = []
    for _ in range(calls):
        rows, width, n = (int(rng.integers(1, hi)) for hi in (5000, 256, 4096))
        table = rng.standard_normal((rows, width)).astype(np.float32)
        ids = rng.integers(0, rows, n).astype(np.int32)
        stream.append((table, ids, rng.standard_normal((n, width)).astype(np.float32)))
    return stream


def top_k_stream(calls: int) -> list[tuple[Any, ...]]:
    rng = np.random.default_rng(1)
    return [
        (
            rng.standard_normal((int(rng.integers(1, 4096)), int(rng.integers(2, 64)))).astype(
                np.float32
            ),
        )
        for _ in range(calls)
    ]


def numpy_scatter(table: np.ndarray, ids: np.ndarray, g: np.ndarray) -> np.ndarray:
    out = table.copy()
    np.add.at(out, ids, g)
    return out


def numpy_top_k(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(-x, axis=1, kind="stable")[:, :2]
    return np.take_along_axis(x, order, axis=1), order


def stream_time(fn: Callable[..., Any], stream: list[tuple[Any, ...]], repeat: int) -> float:
    """Median over `repeat` passes of one pass's wall time."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        for args in stream:
            fn(*args)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    a = parser.parse_args()
    for name, src, stream, reference in (
        ("scatter_add", SCATTER, scatter_stream(a.calls), numpy_scatter),
        ("top_k", TOP_K, top_k_stream(a.calls), numpy_top_k),
    ):
        program = dvm.compile(src)
        dvm_s = stream_time(program, stream, a.repeat)
        numpy_s = stream_time(reference, stream, a.repeat)
        print(
            f"{name:12s} dvm {dvm_s * 1e3:8.1f} ms   numpy {numpy_s * 1e3:8.1f} ms "
            f"({a.calls} calls)"
        )


if __name__ == "__main__":
    main()
