"""`dvm-run`: run a function of a `.mlir` file on the VM.

    dvm-run layernorm.mlir --shapes 8x64 64 64            # random inputs
    dvm-run layernorm.mlir --inputs x.npy w.npy b.npy     # inputs from files
    dvm-run residual_loop.mlir --shapes 4x8 8x8 --index 3 --check --stats

Inputs come from `.npy` files or are drawn at random (fixed seed) with the
given shapes, one per tensor argument (`RxC`, `scalar` for rank 0); `index`
arguments take `--index` values. Outputs are printed, or saved with
`--save PREFIX` as PREFIX0.npy, PREFIX1.npy, ... `--check` compares them
with the reference interpreter; `--stats` prints each launch's VM
statistics; `--trace FILE` writes the launches' per-core timelines as
Chrome trace JSON. The compile reads and writes the compile cache unless
`--no-cache` (or `DVM_CACHE=off`). Errors are one line on stderr and exit code 1.

    dvm-run --nproc 2 tp_mlp.mlir --shapes 8x64 64x256 256x64 \
        --shard replicate split:1 split:0 --check

runs the program across 2 processes (`dvm/tools/dvm_run_distributed.py`), each with
its rank's part of the inputs (`--shard`), and with `--check` compares the results
put together (`--gather`) with the program in one process (docs/distributed.md).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

PROG = "dvm-run"
LOCATED_ERROR = re.compile(r"^(\S+:\d+:\d+): error: ")
"""The start of a diagnostic located in the program (`file:line:col: error: `)."""


class UsageError(Exception):
    """Bad command-line input: the message says which and why."""


def arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=PROG, description="Run a function of a .mlir file.")
    parser.add_argument("file", help="the .mlir program")
    parser.add_argument("--entry", help="the function to run (default: the only one)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--inputs", nargs="+", metavar="NPY", help=".npy file per tensor argument")
    source.add_argument("--shapes", nargs="+", metavar="SHAPE", help="e.g. 8x64 (random inputs)")
    parser.add_argument(
        "--index", nargs="*", type=int, default=[], help="values of index arguments"
    )
    parser.add_argument("--seed", type=SEED, default=0, help="seed of the random inputs")
    parser.add_argument("--device", default="host", help="device preset: host or ascend910b")
    parser.add_argument(
        "--check", action="store_true", help="compare with the reference interpreter"
    )
    parser.add_argument("--stats", action="store_true", help="print each launch's VM statistics")
    parser.add_argument(
        "--trace", metavar="FILE", help="write per-core timelines (Chrome trace JSON)"
    )
    parser.add_argument("--save", metavar="PREFIX", help="save outputs as PREFIX<i>.npy")
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the compile cache (docs/performance.md)",
    )
    distributed = parser.add_argument_group("across processes (docs/distributed.md)")
    distributed.add_argument(
        "--nproc", type=int, default=1, metavar="N", help="run in N processes (gloo, loopback)"
    )
    distributed.add_argument(
        "--shard",
        nargs="+",
        type=sharding,
        metavar="SPEC",
        help="per tensor argument, what each rank holds: replicate, split:AXIS or partial",
    )
    distributed.add_argument(
        "--gather",
        nargs="+",
        type=sharding,
        metavar="SPEC",
        help="per result, how the ranks' results make the whole: replicate, split:AXIS, partial",
    )
    distributed.add_argument(
        "--timeout",
        type=TIMEOUT,
        default=60.0,
        help="seconds a collective waits for a peer",
    )
    distributed.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    if options.nproc < 1:
        raise UsageError(f"--nproc {options.nproc}: the number of processes must be at least 1")
    return options


def number_option(
    convert: Callable[[str], Any], kind: str, holds: Callable[[Any], bool], rule: str
) -> Callable[[str], Any]:
    """An argparse `type` that reads a number with `convert` and refuses one for which
    `holds` is false, with `rule` (`--seed`: numpy's generators take no negative seed;
    `--timeout`: a wait of no time at all would fail every join)."""

    def read(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {kind}") from None
        if not holds(value):
            raise argparse.ArgumentTypeError(f"{text}: {rule}")
        return value

    return read


SEED = number_option(int, "an integer", lambda v: v >= 0, "a seed must be >= 0")
TIMEOUT = number_option(
    float, "a number", lambda v: v > 0, "the timeout must be a positive number of seconds"
)


def sharding(text: str) -> Any:
    """A `--shard` or `--gather` spec (`dvm.sharding`), or argparse's error."""
    from dvm.sharding import parse_sharding

    try:
        return parse_sharding(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e).replace("bad", "invalid")) from None


def parse_shape(text: str) -> tuple[int, ...]:
    if text == "scalar":
        return ()
    try:
        dims = tuple(int(d) for d in text.split("x"))
    except ValueError:
        raise UsageError(f"bad shape {text!r}: write dims like 8x64, or 'scalar'") from None
    if any(d < 0 for d in dims):
        raise UsageError(f"bad shape {text!r}: dims must be >= 0")
    return dims


def make_inputs(options: argparse.Namespace, arg_types: Sequence[Any]) -> list[Any]:
    """The call's arguments, from files or random with the given shapes."""
    from xdsl.dialects.builtin import IndexType, TensorType

    from dvm.arguments import numpy_dtype

    tensors = [t for t in arg_types if isinstance(t, TensorType)]
    indices = iter(options.index)
    given = options.inputs or options.shapes or []
    if len(given) != len(tensors):
        what = "--inputs files" if options.inputs else "--shapes"
        raise UsageError(f"the function takes {len(tensors)} tensors, got {len(given)} {what}")
    rng = np.random.default_rng(options.seed)
    sources = iter(given)
    args: list[Any] = []
    for t in arg_types:
        if isinstance(t, IndexType):
            value = next(indices, None)
            if value is None:
                raise UsageError("an index argument has no value: pass it with --index")
            args.append(value)
            continue
        assert isinstance(t, TensorType)
        source = next(sources)
        if options.inputs:
            args.append(load_npy(source))
            continue
        try:
            args.append(random_input(rng, parse_shape(source), numpy_dtype(t)))
        except (ValueError, MemoryError) as e:  # more elements than numpy or memory holds
            raise UsageError(f"cannot make a random {t} of shape {source}: {e}") from None
    if next(indices, None) is not None:
        wanted = sum(isinstance(t, IndexType) for t in arg_types)
        raise UsageError(
            f"the function takes {wanted} index arguments, got {len(options.index)} --index values"
        )
    return args


def random_input(
    rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype[Any]
) -> np.ndarray[Any, Any]:
    """Random values of `dtype`: normal floats, fair booleans, small integers."""
    from dvm.numerics import is_float_dtype

    if is_float_dtype(dtype):
        return rng.standard_normal(shape).astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    low = 0 if dtype.kind == "u" else -8  # none negative for an unsigned type
    return rng.integers(low, 9, size=shape).astype(dtype)


def load_npy(path: str) -> np.ndarray[Any, Any]:
    try:
        return np.load(path, allow_pickle=False)
    except OSError as e:
        raise UsageError(f"cannot read {path}: {e.strerror or e}") from None
    except ValueError as e:
        raise UsageError(f"{path} is not a .npy array file: {e}") from None


def show(outputs: tuple[Any, ...], options: argparse.Namespace) -> None:
    for i, out in enumerate(outputs):
        if options.save:
            path = Path(f"{options.save}{i}.npy")
            np.save(path, out)
            print(f"result {i}: {out.shape} {out.dtype} -> {path}")
        else:
            print(f"result {i}: {out.shape} {out.dtype}")
            print(np.array2string(out, threshold=64, precision=5))


def check(module: Any, args: list[Any], outputs: tuple[Any, ...], entry: str | None) -> bool:
    """Compare with the reference interpreter; print the largest differences."""
    import dvm
    from dvm.numerics import is_bfloat16, is_float_dtype

    expected = dvm.interpret(module, *args, entry=entry)
    expected = expected if isinstance(expected, tuple) else (expected,)
    good = True
    for i, (got, want) in enumerate(zip(outputs, expected, strict=True)):
        half = {np.dtype(np.float16): 2e-3}.get(got.dtype, 1e-4)
        tol = 1.6e-2 if is_bfloat16(got.dtype) else half
        if is_float_dtype(got.dtype):  # (numpy compares no bf16)
            got, want = got.astype(np.float64), want.astype(np.float64)
        same = got.shape == want.shape and np.allclose(
            got, want, rtol=tol, atol=tol, equal_nan=True
        )
        diff = (
            float(np.max(np.abs(got.astype(np.float64) - want), initial=0.0))
            if got.shape == want.shape
            else float("nan")
        )
        print(f"check result {i}: {'ok' if same else 'MISMATCH'} (max |difference| {diff:.3g})")
        good &= bool(same)
    return good


def print_stats(stats: list[tuple[str, Any]]) -> None:
    for name, s in stats:
        top = ", ".join(
            f"{k} {v}" for k, v in sorted(s.instructions.items(), key=lambda kv: -kv[1])[:6]
        )
        ms = {
            k: f"{v * 1e3:.3f} ms"
            for k, v in (("wall", s.wall_s), ("numpy", s.numpy_s), ("dispatch", s.dispatch_s))
        }
        print(
            f"@{name}: {s.total_instructions} instructions ({top}), "
            f"{s.tiles} tiles on {s.cores} cores, read {s.bytes_read} B, "
            f"wrote {s.bytes_written} B, peak local {s.peak_local_memory} B, "
            f"{ms['wall']} (numpy {ms['numpy']}, dispatch {ms['dispatch']})"
        )


def write_trace(path: str, stats: list[tuple[str, Any]]) -> None:
    events: list[Any] = []
    for name, s in stats:
        for event in json.loads(s.chrome_trace()).get("traceEvents", []):
            event["name"] = f"{name}: {event.get('name', '')}"
            events.append(event)
    Path(path).write_text(json.dumps({"traceEvents": events}))
    print(f"trace -> {path}")


def run(options: argparse.Namespace, argv: Sequence[str]) -> int:
    import dvm
    from dvm.arguments import find_entry
    from dvm.tools import dvm_run_distributed

    if options.worker:
        return run_worker(options)
    if options.nproc > 1:
        return dvm_run_distributed.launch(options, argv)

    module = dvm.parse(Path(options.file))
    func = find_entry(module, options.entry)
    args = make_inputs(options, func.function_type.inputs.data)
    cache = False if options.no_cache else None
    program = dvm.compile(module, entry=options.entry, device=options.device, cache=cache)
    profile = options.stats or options.trace
    if profile:
        result, stats = program.profile(*args, trace=bool(options.trace))
    else:
        result, stats = program(*args), []
    outputs = result if isinstance(result, tuple) else (result,)
    show(outputs, options)
    if options.stats:
        print_stats(stats)
    if options.trace:
        write_trace(options.trace, stats)
    if options.check and not check(module, args, outputs, options.entry):
        return 1
    return 0


def run_worker(options: argparse.Namespace) -> int:
    """One rank of `dvm-run --nproc` (`dvm_run_distributed`); rank 0 prints and checks."""
    import dvm
    from dvm.arguments import find_entry
    from dvm.tools import dvm_run_distributed as ranks

    rank, world = ranks.join(options.timeout)
    try:
        module = dvm.parse(Path(options.file))
        types = find_entry(module, options.entry).function_type.inputs.data
        whole = make_inputs(options, types)  # the same on every rank: the same seed
        args = ranks.shard_arguments(options.shard, types, whole, rank, world)
        result = dvm.compile(module, entry=options.entry, device=options.device)(*args)
        outputs = result if isinstance(result, tuple) else (result,)
        gathered = ranks.gather_results(outputs, options.gather, rank, world)
        if gathered is None:
            return 0
        show(gathered, options)
        return 1 if options.check and not check(module, whole, gathered, options.entry) else 0
    finally:
        ranks.leave()


def main(argv: Sequence[str] | None = None) -> int:
    """The `dvm-run` command; returns the exit code."""
    from xdsl.utils.exceptions import DiagnosticException, ParseError

    from dvm.errors import DvmError

    argv = sys.argv[1:] if argv is None else list(argv)
    # a worker of `--nproc` says which rank it is
    prog = f"{PROG}: rank {os.environ.get('RANK', '?')}" if "--worker" in argv else PROG
    try:
        return run(arguments(argv), argv)
    except SystemExit as e:
        return 0 if e.code in (0, None) else 1
    except (UsageError, DvmError, DiagnosticException, ParseError, ValueError) as e:
        # a diagnostic located in the program reads `dvm-run: error: file:line:col: ...`
        text = LOCATED_ERROR.sub(r"\1: ", str(e), count=1)
        print(f"{prog}: error: {text}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"{prog}: error: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
