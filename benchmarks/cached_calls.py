"""Cached calls of small programs: what a call at a known shape costs around numpy's work.

Run: .venv/bin/python benchmarks/cached_calls.py [--json]

Per example program and shape (several launches and host steps: if_else_add, LayerNorm,
MMoE, a BERT layer at small dims; one launch: GELU, softmax), the time of a call at a
shape already called (the lowest of 8 medians of 100 calls, after 60 calls that plan and
bind it: a block the machine's load slowed down reads high), numpy's composite of
if_else_add at its shapes, the first calls of a stream of new shapes of if_else_add,
and a module of two kernels (softmax, then a matmul and a relu) through
`torch.compile(backend="dvm")`. To compare two versions of the code, run it in a
checkout of each, taking turns (docs/performance.md, "A call at a known shape").
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from suite.workloads import DEFAULT_EXAMPLES, load_reference

import dvm

CASES: list[tuple[str, dict[str, int]]] = [
    ("if_else_add", {"R": 64, "C": 300}),
    ("if_else_add", {"R": 256, "C": 256}),
    ("if_else_add", {"R": 16, "C": 16}),
    ("layernorm", {"R": 256, "C": 256}),
    ("layernorm", {"R": 16, "C": 64}),
    ("mmoe", {"B": 64, "E": 4}),
    ("mmoe", {"B": 23, "E": 4}),
    ("bert_layer", {"B": 2, "S": 16}),
    ("gelu", {"R": 2, "C": 3}),
    ("softmax", {"B": 4, "S": 64}),
]


def timed(fn: Callable[[], object], blocks: int = 8, calls: int = 100) -> float:
    """The lowest of `blocks` medians of `calls` calls' wall times, in µs."""
    for _ in range(60):
        fn()
    medians = []
    for _ in range(blocks):
        times = []
        for _ in range(calls):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        medians.append(statistics.median(times))
    return min(medians) * 1e6


def if_else_numpy(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return (x + 1 if x.sum() > 0 else x - 1) + x


def new_shapes() -> float:
    """if_else_add's first calls at 400 new shapes: the lowest median of 50, in µs."""
    program = dvm.compile(DEFAULT_EXAMPLES / "if_else_add.mlir", cache=False)
    rng = np.random.default_rng(1)
    firsts = []
    for i in range(400):
        x = rng.standard_normal((17 + i, 33), dtype=np.float32)
        start = time.perf_counter()
        program(x)
        firsts.append(time.perf_counter() - start)
    return min(statistics.median(firsts[i : i + 50]) for i in range(0, 400, 50)) * 1e6


def torch_module() -> float:
    import torch

    import dvm.torch  # noqa: F401 (the backend)

    class SoftmaxMatmul(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return (torch.softmax(x, dim=-1) @ x.transpose(0, 1)).relu()

    compiled = torch.compile(SoftmaxMatmul(), backend="dvm", dynamic=True)
    x = torch.randn(64, 48, generator=torch.Generator().manual_seed(0))
    return timed(lambda: compiled(x))


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--json", action="store_true", help="one JSON object, µs by case")
    a = ap.parse_args()
    os.environ["DVM_CACHE"] = "off"
    ref = load_reference(DEFAULT_EXAMPLES)
    out: dict[str, float] = {}
    for name, dims in CASES:
        program = dvm.compile(DEFAULT_EXAMPLES / f"{name}.mlir", cache=False)
        _, spec, _ = ref.EXAMPLES[f"{name}.mlir"]
        args = ref.make_inputs(spec, dims, np.random.default_rng(0))
        shape = "x".join(map(str, dims.values()))
        out[f"{name} {shape}"] = timed(lambda p=program, a=args: p(*a))
        if name == "if_else_add":
            out[f"numpy's if_else_add {shape}"] = timed(lambda x=args[0]: if_else_numpy(x))
    out["if_else_add, a new shape's first call"] = new_shapes()
    out["torch softmax, matmul, relu 64x48"] = torch_module()
    if a.json:
        print(json.dumps(out))
        return
    for case, us in out.items():
        print(f"{case:40s} {us:8.1f} µs")


if __name__ == "__main__":
    main()
