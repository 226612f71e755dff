"""`make demo`: LayerNorm from `.mlir` text through every level to the VM.

Prints the program at each level (tensor, symbolic shapes, fused, tiles,
bytecode and its binary's disassembly), then compiles it once and runs it
on two shapes, comparing with numpy and showing the specialization time and
the VM's statistics of each run.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.passes import PassPipeline

import dvm
from dvm.ir import make_context
from dvm.passes import PASSES

EXAMPLE = "layernorm.mlir"
LEVELS = [
    ("symbolic shapes: a symbol per dynamic dim, shapes and guards", "symbolic-shapes"),
    ("fused: one vector kernel for all of LayerNorm", "fuse,stack"),
    ("tiles: tile sizes and grid as expressions of the shape symbols", "convert-tensor-to-tile"),
    ("bytecode: registers in local memory, one op per instruction", "convert-tile-to-bytecode"),
]


def find_example(name: str) -> Path:
    shared = Path(__file__).resolve().parents[1].parent / "shared" / "examples" / name
    return shared if shared.exists() else Path(__file__).parent / "examples" / name


def numpy_layernorm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    d = x - mean
    var = (d * d).mean(axis=-1, keepdims=True)
    return d * (1.0 / np.sqrt(var + np.float32(1e-5))) * w + b


def banner(title: str) -> None:
    print(f"\n=== {title} " + "=" * max(0, 72 - len(title)))


def show_levels(path: Path) -> None:
    module = dvm.parse(path)
    banner(f"tensor dialect: {path.name}")
    print(module)
    for title, passes in LEVELS:
        PassPipeline.parse_spec(PASSES, passes).apply(make_context(), module)
        banner(f"{title}  (-p {passes})")
        print(module)
    from dvm.dialects.bytecode import ProgramOp
    from dvm.lowering.bytecode_to_vm import to_program
    from dvm.vm import disassemble, encode

    for program in (op for op in module.ops if isinstance(op, ProgramOp)):
        data = encode(to_program(program))
        banner(f"binary of @{program.sym_name.data}: {len(data)} bytes, disassembled")
        print(disassemble(data), end="")


def run_shapes(path: Path) -> bool:
    first, program = timed(dvm.compile, path)
    again, program = timed(dvm.compile, path)  # imports done: what a program costs
    banner(f"dvm.compile: {again:.0f} ms, once per program (the process's first: {first:.0f} ms)")
    rng = np.random.default_rng(0)
    started = time.perf_counter()
    program(*layernorm_inputs(rng, 2, 3))  # the process's first launch: threads, memory
    startup = 1e3 * (time.perf_counter() - started)
    print(f"start-up (the first launch in this process): {startup:.1f} ms")
    print(
        "A first call at a new shape runs unplanned when its arrays (inputs and outputs)\n"
        "hold under 1 MiB, and a later call plans and binds the tiles once the shape has\n"
        "come back often enough. Larger calls plan at once; the first also pays for\n"
        "touching fresh memory, as numpy's first call does."
    )
    good = True
    for rows, cols in ((33, 128), (2048, 1024)):
        x, w, b = layernorm_inputs(rng, rows, cols)
        first, second, *steady = (timed(program, x, w, b)[0] for _ in range(5))
        y = program(x, w, b)
        _, stats = program.profile(x, w, b)
        error = float(np.max(np.abs(y - numpy_layernorm(x, w, b)), initial=0.0))
        banner(f"run on x: {rows}x{cols}")
        print(
            f"first call {first:.2f} ms, second {second:.2f} ms, then {min(steady):.2f} ms:"
            f" the new shape cost {first - min(steady):.2f} ms"
        )
        for name, s in stats:
            print(
                f"  @{name}: {s.total_instructions} instructions over {s.tiles} tiles "
                f"on {s.cores} cores; {s.bytes_read + s.bytes_written} bytes of global traffic, "
                f"peak local memory {s.peak_local_memory} bytes"
            )
        print(f"result {y.shape} {y.dtype}, max |error| vs numpy = {error:.2e}")
        good &= error < 1e-4
    return good


def timed(fn: Any, *args: Any) -> tuple[float, Any]:
    """Milliseconds of `fn(*args)`, and its result."""
    started = time.perf_counter()
    result = fn(*args)
    return 1e3 * (time.perf_counter() - started), result


def layernorm_inputs(
    rng: np.random.Generator, rows: int, cols: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x (rows, cols), w and b (cols,): float32 normal draws."""
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((rows, cols), cols, cols))
    return x, w, b


def main() -> int:
    path = find_example(EXAMPLE)
    show_levels(path)
    if not run_shapes(path):
        print("MISMATCH against numpy", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
