"""A torch module's recorded program compiled with and without reshape sinking.

Run: .venv/bin/python benchmarks/reshape_sinking.py [--module bert --shape 4,32,128]

The module (one of `torch_backend.py`'s) is called once through
`torch.compile(backend="dvm")`; the program its call ran is then compiled twice
(the compile cache off), with `fuse` moving collapses below the matmuls
(`dvm.passes.reshape_sinking`) and without, and the two are called in turn on the
call's arrays, so that both meet the same load. Printed: each one's launches and
the median and p90 of a call, and the load average.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any
from unittest.mock import patch

import numpy as np
import torch

import dvm
from dvm.lazy import segment
from dvm.passes.reshape_sinking import ReshapeSinking

sys.path.insert(0, str(Path(__file__).resolve().parent))
from torch_backend import MODULES


def recorded(name: str, shape: tuple[int, ...]) -> tuple[str, list[Any]]:
    """The text of the program the module's call ran, and its arguments."""
    runs: list[tuple[segment.Segment, segment.Compiled]] = []
    segment.RUNS.append(lambda s, c: runs.append((s, c)))
    torch.manual_seed(0)
    model = MODULES[name][0]().eval()
    with torch.no_grad():
        torch.compile(model, backend="dvm", dynamic=True)(torch.randn(*shape))
    segment.RUNS.pop()
    ran, entry = runs[-1]
    arrays = [segment.contiguous(a.value) for a in ran.args if a.value is not None]
    return entry.text, [*arrays, *ran.index_values()]


def main() -> None:
    parser = argparse.ArgumentParser(description=str(__doc__).splitlines()[0])
    parser.add_argument("--module", default="bert", choices=list(MODULES))
    parser.add_argument("--shape", default="4,32,128")
    parser.add_argument("--calls", type=int, default=150)
    options = parser.parse_args()
    text, args = recorded(options.module, tuple(int(s) for s in options.shape.split(",")))
    sunk = dvm.compile(text, cache=False)
    with patch.object(ReshapeSinking, "run", lambda self: None):
        plain = dvm.compile(text, cache=False)
    programs = {"sunk": sunk, "not sunk": plain}
    np.testing.assert_allclose(sunk(*args), plain(*args), rtol=1e-4, atol=1e-4)
    times: dict[str, list[float]] = {k: [] for k in programs}
    for k in range(options.calls + 20):  # the first 20: plans and bindings
        for name, program in programs.items():
            start = time.perf_counter()
            program(*args)
            if k >= 20:
                times[name].append(time.perf_counter() - start)
    print(f"{options.module} {options.shape}, load average {os.getloadavg()[0]:.2f}")
    for name, program in programs.items():
        ms = np.array(times[name]) * 1e3
        launches = program.variants[frozenset()].launches
        print(f"{name:9} {launches:3d} launches  median {np.median(ms):.3f} ms  "
              f"p90 {np.quantile(ms, 0.9):.3f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
