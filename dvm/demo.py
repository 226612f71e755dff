"""`make demo`: one example program through every level that exists so far.

Parses `layernorm.mlir` (from the shared examples when present, else the
copy under `dvm/examples`), verifies it, prints the IR, runs it with the
reference interpreter on two shapes and compares with numpy.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import dvm

EXAMPLE = "layernorm.mlir"


def find_example(name: str) -> Path:
    shared = Path(__file__).resolve().parents[1].parent / "shared" / "examples" / name
    return shared if shared.exists() else Path(__file__).parent / "examples" / name


def numpy_layernorm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    d = x - mean
    var = (d * d).mean(axis=-1, keepdims=True)
    return d * (1.0 / np.sqrt(var + np.float32(1e-5))) * w + b


def banner(title: str) -> None:
    print(f"\n=== {title} " + "=" * max(0, 70 - len(title)))


def main() -> int:
    path = find_example(EXAMPLE)
    banner(f"tensor dialect: {path.name}")
    module = dvm.parse(path)
    print(module)
    rng = np.random.default_rng(0)
    for rows, cols in ((4, 7), (33, 128)):
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        w = rng.standard_normal(cols).astype(np.float32)
        b = rng.standard_normal(cols).astype(np.float32)
        banner(f"reference interpreter, x: {rows}x{cols}")
        got = dvm.interpret(module, x, w, b)
        assert isinstance(got, np.ndarray)
        err = float(np.max(np.abs(got - numpy_layernorm(x, w, b)), initial=0.0))
        print(f"result {got.shape} {got.dtype}, max |error| vs numpy = {err:.2e}")
        if err > 1e-4:
            print("MISMATCH", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
