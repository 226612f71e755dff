"""How compile time grows with program size, pass by pass.

Run: .venv/bin/python benchmarks/compile_scaling.py [--families chain,args]
         [--sizes 250,500,1000] [--repeat 3] [--profile FAMILY:SIZE]

Generates programs of growing size in several families (many arguments, many
results, a long elementwise chain, one with a constant per op, a wide fan-out
and fan-in, blocks of matmuls and reductions, loops and branches nested in
turn) and, for each size, measures the CPU seconds (on a shared machine, what
the compiler did, not what it waited for) of parse, of every pass of
`dvm-pipeline` run one by one (`dvm.pipeline`), of the encoding of every kernel
(`to_program` and the VM's `check`) and of a whole `dvm.compile`, whose *build*
is what it takes beyond its own run of the passes (the encoding, the VM's
preparation of each kernel, the host program's closures). Prints a table of
medians over --repeat runs and, per step, the exponent k of the fit
time ~ size**k (least squares on the logs; steps under 20 ms at every size are
left out: their times are noise). A step linear in program size has k near 1.
--profile prints cProfile's top functions for one program.
"""

from __future__ import annotations

import argparse
import cProfile
import math
import pstats
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import dvm
import dvm.pipeline as pipeline
from dvm.dialects import bytecode as bc
from dvm.lowering.bytecode_to_vm import to_program
from dvm.lowering.pipeline import DvmPipelinePass
from dvm.vm import check

PASSES = (
    "symbolic-shapes",
    "fuse",
    "stack",
    "convert-tensor-to-tile",
    "dedupe-kernels",
    "convert-tile-to-bytecode",
)
STEPS = ("parse", *PASSES, "encode", "build", "compile")
UNARY = ("tanh", "exp", "neg", "abs", "sqrt", "sigmoid")
T = "tensor<?x?xf32>"
ROW = "tensor<?x1xf32>"


def func(name: str, args: list[str], results: list[str], body: list[str]) -> str:
    signature = ", ".join(args)
    returned = ", ".join(results)
    types = ", ".join([T] * len(results))
    lines = [f"func.func @{name}({signature}) -> ({types}) {{", *body]
    lines.append(f"  func.return {returned} : {types}")
    return "\n".join([*lines, "}"]) + "\n"


def binary(result: str, op: str, a: str, b: str, types: str = f"({T}, {T}) -> {T}") -> str:
    return f"  {result} = tensor.{op} {a}, {b} : {types}"


def unary(result: str, op: str, a: str) -> str:
    return f"  {result} = tensor.{op} {a} : {T}"


def many_arguments(n: int) -> str:
    """`n` arguments summed in a chain."""
    body = [binary("%s1", "add", "%a0", "%a1")]
    body += [binary(f"%s{i}", "add", f"%s{i - 1}", f"%a{i}") for i in range(2, n)]
    return func("args", [f"%a{i}: {T}" for i in range(n)], [f"%s{n - 1}"], body)


def many_results(n: int) -> str:
    """`n` results, each a different op of one argument."""
    body = [unary(f"%r{i}", UNARY[i % len(UNARY)], "%x") for i in range(n)]
    return func("results", [f"%x: {T}"], [f"%r{i}" for i in range(n)], body)


def chain(n: int) -> str:
    """`n` elementwise ops, each using the one before."""
    body = [
        "  %c = arith.constant dense<5.000000e-01> : tensor<f32>",
        "  %v0 = tensor.abs %x : " + T,
    ]
    for i in range(1, n):
        if i % 2:
            body.append(binary(f"%v{i}", "mul", f"%v{i - 1}", "%c", f"({T}, tensor<f32>) -> {T}"))
        else:
            body.append(unary(f"%v{i}", UNARY[i // 2 % len(UNARY)], f"%v{i - 1}"))
    return func("chain", [f"%x: {T}"], [f"%v{n - 1}"], body)


def constants(n: int) -> str:
    """`n` elementwise ops in a chain, each with a constant of its own."""
    body = ["  %v0 = tensor.abs %x : " + T]
    scalar = f"({T}, tensor<f32>) -> {T}"
    for i in range(1, n):
        body.append(f"  %c{i} = arith.constant dense<{i}.0> : tensor<f32>")
        body.append(binary(f"%v{i}", ("mul", "add")[i % 2], f"%v{i - 1}", f"%c{i}", scalar))
    return func("constants", [f"%x: {T}"], [f"%v{n - 1}"], body)


def fan(n: int) -> str:
    """`n // 2` ops of one argument, summed in a chain (fan-out, then fan-in)."""
    width = max(2, n // 2)
    body = [unary(f"%b{i}", UNARY[i % len(UNARY)], "%x") for i in range(width)]
    body.append(binary("%s1", "add", "%b0", "%b1"))
    body += [binary(f"%s{i}", "add", f"%s{i - 1}", f"%b{i}") for i in range(2, width)]
    return func("fan", [f"%x: {T}"], [f"%s{width - 1}"], body)


def blocks(n: int) -> str:
    """`n // 6` blocks of a matmul and a softmax over its rows."""
    body: list[str] = []
    y = "%x"
    for i in range(max(1, n // 6)):
        body += [
            f"  %m{i} = tensor.matmul {y}, %w : ({T}, {T}) -> {T}",
            f"  %x{i} = tensor.reduce_max %m{i} {{axes = [1], keepdims = true}} : {T} -> {ROW}",
            binary(f"%d{i}", "sub", f"%m{i}", f"%x{i}", f"({T}, {ROW}) -> {T}"),
            unary(f"%e{i}", "exp", f"%d{i}"),
            f"  %z{i} = tensor.reduce_sum %e{i} {{axes = [1], keepdims = true}} : {T} -> {ROW}",
            binary(f"%p{i}", "div", f"%e{i}", f"%z{i}", f"({T}, {ROW}) -> {T}"),
        ]
        y = f"%p{i}"
    return func("blocks", [f"%x: {T}", f"%w: {T}"], [y], body)


def loops(n: int) -> str:
    """`n // 10` loops in turn, each holding a branch on a value of the data whose
    `then` holds another loop (nested three deep)."""
    body = [
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
        "  %zero = arith.constant dense<0.000000e+00> : tensor<f32>",
        "  %half = arith.constant dense<5.000000e-01> : tensor<f32>",
    ]
    scalar = f"({T}, tensor<f32>) -> {T}"
    y = "%x"
    for i in range(max(1, n // 10)):
        body += [
            f"  %l{i} = scf.for %i{i} = %c0 to %n step %c1 iter_args(%a{i} = {y}) -> ({T}) {{",
            f"    %s{i} = tensor.reduce_sum %a{i} {{axes = [0, 1]}} : {T} -> tensor<f32>",
            f"    %p{i} = tensor.gt %s{i}, %zero : (tensor<f32>, tensor<f32>) -> tensor<i1>",
            f"    %q{i} = tensor.extract %p{i}[] : tensor<i1>",
            f"    %y{i} = scf.if %q{i} -> ({T}) {{",
            f"      %m{i} = scf.for %j{i} = %c0 to %n step %c1"
            f" iter_args(%b{i} = %a{i}) -> ({T}) {{",
            "      " + unary(f"%t{i}", "tanh", f"%b{i}"),
            "      " + binary(f"%u{i}", "mul", f"%t{i}", "%half", scalar),
            f"        scf.yield %u{i} : {T}",
            "      }",
            f"      scf.yield %m{i} : {T}",
            "    } else {",
            "    " + unary(f"%v{i}", "neg", f"%a{i}"),
            f"      scf.yield %v{i} : {T}",
            "    }",
            f"    scf.yield %y{i} : {T}",
            "  }",
        ]
        y = f"%l{i}"
    return func("loops", [f"%x: {T}", "%n: index"], [y], body)


FAMILIES: dict[str, Callable[[int], str]] = {
    "args": many_arguments,
    "results": many_results,
    "chain": chain,
    "constants": constants,
    "fan": fan,
    "blocks": blocks,
    "loops": loops,
}
DEFAULT_SIZES = (250, 500, 1000, 2000)


def clock() -> float:
    """CPU seconds of this process: on a shared machine, what the compiler did, not
    what it waited for."""
    return time.process_time()


def measure(text: str) -> dict[str, float]:
    """Seconds of each step on one program."""
    times: dict[str, float] = {}
    start = clock()
    module = dvm.parse(text)
    times["parse"] = clock() - start
    source = module.clone()
    ctx = pipeline.context()
    for name in PASSES:
        stage = pipeline.parse(name)
        start = clock()
        stage.apply(ctx, module)
        times[name] = clock() - start
    start = clock()
    for program in module.ops:
        if isinstance(program, bc.ProgramOp):
            check(to_program(program))
    times["encode"] = clock() - start
    with timed(DvmPipelinePass, "apply") as lowering:
        start = clock()
        dvm.compile(source)
        times["compile"] = clock() - start
    times["build"] = times["compile"] - sum(lowering)
    return times


@contextmanager
def timed(cls: type, name: str) -> Iterator[list[float]]:
    """Seconds of each call of `cls.name` while in the block."""
    seconds: list[float] = []
    method = getattr(cls, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = clock()
        try:
            return method(*args, **kwargs)
        finally:
            seconds.append(clock() - start)

    setattr(cls, name, wrapper)
    try:
        yield seconds
    finally:
        setattr(cls, name, method)


def exponent(sizes: list[int], seconds: list[float]) -> float:
    """The slope of log(seconds) over log(size), by least squares."""
    xs = [math.log(n) for n in sizes]
    ys = [math.log(max(s, 1e-6)) for s in seconds]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )


def report(family: str, sizes: list[int], medians: list[dict[str, float]]) -> None:
    print(f"\n{family}: {FAMILIES[family].__doc__}")
    print(f"{'step':<26}" + "".join(f"{n:>10}" for n in sizes) + f"{'exponent':>10}")
    for step in STEPS:
        row = [m[step] for m in medians]
        fit = f"{exponent(sizes, row):10.2f}" if len(sizes) > 1 and max(row) >= 0.02 else ""
        print(f"{step:<26}" + "".join(f"{s:10.3f}" for s in row) + fit)


def profile(spec: str) -> None:
    family, size = spec.split(":")
    text = FAMILIES[family](int(size))
    profiler = cProfile.Profile()
    profiler.enable()
    measure(text)
    profiler.disable()
    pstats.Stats(profiler, stream=sys.stdout).sort_stats("cumulative").print_stats(40)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--repeat", type=int, default=3, help="runs per size (default 3)")
    parser.add_argument("--profile", metavar="FAMILY:SIZE", help="cProfile one program")
    args = parser.parse_args()
    if args.profile:
        profile(args.profile)
        return
    sizes = [int(n) for n in args.sizes.split(",")]
    print(f"CPU seconds, median of {args.repeat} runs; size = ops (or arguments, results)")
    for family in args.families.split(","):
        measure(FAMILIES[family](sizes[0]))  # warm-up: imports, caches, lazily built tables
        medians = []
        for n in sizes:
            text = FAMILIES[family](n)
            runs = [measure(text) for _ in range(args.repeat)]
            medians.append({step: statistics.median(r[step] for r in runs) for step in STEPS})
        report(family, sizes, medians)


if __name__ == "__main__":
    main()
