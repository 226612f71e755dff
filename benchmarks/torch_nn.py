"""Poolings and convolutions through `torch.compile(backend="dvm")` against torch eager.

Run: .venv/bin/python benchmarks/torch_nn.py [--calls 30 --batch 8]

Each case is compiled with `dynamic=True`, warmed up (its plan made, its programs
specialized), then called `--calls` times in three blocks alternating with blocks of
torch eager on the same input, so that the machine's load swings both alike. (Single
calls alternating would time each system's threads waking up from the other's:
torch eager's conv took 30 ms that way, against 1 ms in a block.) Per case: the medians and p90s
of a call (ms) and dvm's median over eager's, and the kernels a dvm call launches.
The load average is printed: on a shared machine, compare within a run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

import dvm.torch  # noqa: F401  (registers the backend)
from dvm import lazy


def cases(batch: int) -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    """Per case: the function and its inputs."""
    torch.manual_seed(0)
    image = torch.randn(batch, 16, 32, 32)
    text = torch.randn(batch, 64, 128)
    conv3x3 = torch.nn.Conv2d(16, 32, 3, padding=1)
    strided = torch.nn.Conv2d(16, 32, 3, stride=2, padding=1)
    depthwise = torch.nn.Conv2d(16, 16, 3, padding=1, groups=16)
    pointwise = torch.nn.Conv2d(16, 64, 1)
    conv1d = torch.nn.Conv1d(64, 64, 5, padding=2)
    return {
        "conv2d 16->32 3x3 p1": (conv3x3, (image,)),
        "conv2d 16->32 3x3 s2 p1": (strided, (image,)),
        "conv2d depthwise 3x3": (depthwise, (image,)),
        "conv2d 16->64 1x1": (pointwise, (image,)),
        "conv1d 64->64 k5 p2": (conv1d, (text,)),
        "max_pool 3x3 s2 p1": (lambda x: F.max_pool2d(x, 3, 2, 1), (image,)),
        "max_pool 2x2": (lambda x: F.max_pool2d(x, 2), (image,)),
        "avg_pool 2x2": (lambda x: F.avg_pool2d(x, 2), (image,)),
        "avg_pool 3x3 s2 p1 ceil": (lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), (image,)),
        "adaptive_avg_pool 1": (lambda x: F.adaptive_avg_pool2d(x, 1), (image,)),
    }


def quantiles(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered) * 1e3, ordered[int(0.9 * (len(ordered) - 1))] * 1e3


ROUNDS = 3


def timed(function: Callable[..., Any], inputs: tuple[Any, ...], calls: int) -> list[float]:
    """The times of `calls` calls in a row, after one untimed call (the other system
    ran last: torch's threads, or the VM's, wake up)."""
    function(*inputs)
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        function(*inputs)
        times.append(time.perf_counter() - start)
    return times


def measure(function: Callable[..., Any], inputs: tuple[Any, ...], calls: int) -> str:
    compiled = torch.compile(function, backend="dvm", dynamic=True)
    with torch.no_grad():
        for _ in range(3):
            compiled(*inputs)
            function(*inputs)
        kernels = lazy.stats()["kernels_launched"]
        compiled(*inputs)
        kernels = lazy.stats()["kernels_launched"] - kernels
        ours: list[float] = []
        eager: list[float] = []
        for _ in range(ROUNDS):  # blocks, not single calls: see the module docstring
            ours += timed(compiled, inputs, calls // ROUNDS)
            eager += timed(function, inputs, calls // ROUNDS)
    (median, p90), (eager_median, eager_p90) = quantiles(ours), quantiles(eager)
    return (
        f"dvm {median:7.3f} ms (p90 {p90:7.3f})  eager {eager_median:7.3f} ms "
        f"(p90 {eager_p90:7.3f})  dvm/eager {median / eager_median:5.2f}  kernels {kernels}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}, torch threads {torch.get_num_threads()}")
    for name, (function, inputs) in cases(args.batch).items():
        print(f"{name:28s} {measure(function, inputs, args.calls)}")


if __name__ == "__main__":
    main()
