"""Per-new-shape cost of `dvm.compile` programs, and the cost of a tiny cached call.

Run: .venv/bin/python benchmarks/specialization.py [--shapes 20 --repeat 3]

For each example program, `p = dvm.compile(example)` once; then for each of
--shapes new shapes, time the first call at that shape and a repeat call at
the same shape (the best of a few repeats): their difference is what a new
shape costs (host guards and symbol binding, the VM's slot evaluation,
checks, tile-class planning and binding of every kernel). The table prints
the median over the shapes, the median first and repeat calls, and the
number of kernels launched per call.

Then a tiny cached call: `p(x)` for a one-kernel program on a 2x3 input
(median of many calls), beside a bare numpy call for scale.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
import timeit
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

import dvm

EXAMPLES = Path("/work/shared/examples")


def reference_module() -> object:
    spec = importlib.util.spec_from_file_location("reference", EXAMPLES / "reference.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def shape_stream(name: str, n: int, rng: np.random.Generator) -> list[dict[str, int]]:
    """`n` distinct symbol assignments of moderate size for an example."""
    seen: set[tuple[tuple[str, int], ...]] = set()
    out: list[dict[str, int]] = []
    while len(out) < n:
        if name in ("matmul.mlir", "addmm_relu.mlir"):
            dims = {s: int(rng.integers(32, 300)) for s in "MKN"}
        elif name == "bert_layer.mlir":
            dims = {"B": int(rng.integers(1, 5)), "S": int(rng.integers(8, 100))}
        elif name == "softmax.mlir":
            dims = {"B": int(rng.integers(1, 9)), "S": int(rng.integers(8, 200))}
        elif name == "mmoe.mlir":
            dims = {"B": int(rng.integers(8, 300)), "E": int(rng.integers(2, 9))}
        else:
            dims = {"R": int(rng.integers(8, 400)), "C": int(rng.integers(8, 600))}
        key = tuple(sorted(dims.items()))
        if key not in seen:
            seen.add(key)
            out.append(dims)
    return out


def best_of(fn: Callable[[], object], k: int) -> float:
    best = float("inf")
    for _ in range(k):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def bench_new_shapes(files: list[str], shapes: int, repeat: int) -> None:
    ref = reference_module()
    rng = np.random.default_rng(0)
    print(f"Per new shape (median over {shapes} shapes; repeat call = best of {repeat})")
    print(f"  {'program':18s} {'new shape':>10s} {'first':>10s} {'repeat':>10s} {'kernels':>8s}")
    for file in files:
        _, spec, _ = ref.EXAMPLES[file]  # type: ignore[attr-defined]
        p = dvm.compile(EXAMPLES / file)
        warm = ref.make_inputs(spec, shape_stream(file, 1, rng)[0], rng)  # type: ignore[attr-defined]
        p(*warm)  # first-ever call: imports, threads, device memory
        extra, firsts, repeats = [], [], []
        launches = 0
        for dims in shape_stream(file, shapes, np.random.default_rng(1)):
            args = ref.make_inputs(spec, dims, rng)  # type: ignore[attr-defined]
            t0 = time.perf_counter()
            p(*args)
            first = time.perf_counter() - t0
            again = best_of(partial(p, *args), repeat)
            firsts.append(first)
            repeats.append(again)
            extra.append(first - again)
            _, stats = p.profile(*args)
            launches = len(stats)
        print(
            f"  {file.removesuffix('.mlir'):18s} {statistics.median(extra) * 1e3:8.3f}ms "
            f"{statistics.median(firsts) * 1e3:8.3f}ms {statistics.median(repeats) * 1e3:8.3f}ms "
            f"{launches:8d}"
        )


def bench_tiny_call(repeat: int) -> None:
    print("Tiny cached call (one kernel; median of repeats of 2000 calls)")
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    a, c = np.ones(1, np.float32), np.zeros(1, np.float32)
    t_np = min(timeit.repeat(lambda: np.add(c, a, out=c), number=20000, repeat=5)) / 20000
    for file, args in (("gelu.mlir", (x,)), ("layernorm.mlir", (x, x[0], x[0]))):
        p = dvm.compile(EXAMPLES / file)
        p(*args)
        times = timeit.repeat(lambda p=p, args=args: p(*args), number=2000, repeat=max(repeat, 5))
        t = statistics.median(times) / 2000
        print(
            f"  {file.removesuffix('.mlir'):12s} {x.shape}  {t * 1e6:7.1f} us "
            f"(best {min(times) / 2000 * 1e6:.1f}; = {t / t_np:.0f} bare numpy calls)"
        )
    print(f"  bare np.add(out=) on 1 element  {t_np * 1e6:.2f} us")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--shapes", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--programs",
        default="matmul,layernorm,addmm_relu,gelu,softmax,bert_layer,mmoe",
        help="comma-separated example names",
    )
    a = ap.parse_args()
    files = [f"{n}.mlir" for n in a.programs.split(",") if n]
    bench_new_shapes(files, a.shapes, a.repeat)
    bench_tiny_call(a.repeat)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
