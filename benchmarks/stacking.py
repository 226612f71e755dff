"""Stacking in space against stacking in time and no stacking, on real programs.

Run: .venv/bin/python benchmarks/stacking.py [--shapes 6 --calls 30 --examples DIR]

`stack` puts independent kernels in one `tensor.stack` launch. A `parallel`
stack (the default) shares the cores among its members side by side, their
chunks of tiles alternating, so members too small to fill the cores run at
the same time; a `sequence` stack runs each member's tiles before the next
one's, still in one launch; without the pass, each kernel is a launch of its
own. Each program (bert_layer, mmoe, the examples' programs with stacks) is
compiled three ways (the pipeline with `stack{mode=parallel}`,
`stack{mode=sequence}` or no `stack`), and the three are called in turn at
each of --shapes shapes of its stream (the benchmark suite's samplers), --calls
times each: the table gives each way's median steady call over the shapes,
and the ratios to the parallel stack (above 1: the parallel stack is faster),
with p90 over the shapes. Check the load average it prints: on a shared
machine a stack cannot spread over cores another process holds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from suite.workloads import DEFAULT_EXAMPLES, make_workloads  # noqa: E402

import dvm  # noqa: E402
import dvm.pipeline  # noqa: E402
import dvm.variant_ir  # noqa: E402

WAYS = {
    "parallel": "stack{mode=parallel},",
    "sequence": "stack{mode=sequence},",
    "none": "",
}
"""How each way lowers: the stack pass it runs, if any."""
PROGRAMS = ("bert_layer", "mmoe")


@contextmanager
def lowered_with(stack: str, stacks: list[int]) -> Iterator[None]:
    """`dvm.compile` lowering through the pipeline with `stack` in place of the stack
    pass; appends to `stacks` how many `tensor.stack`s each lowered variant holds."""
    original = dvm.variant_ir.lower

    def lower(source: Any, device: str, copy: bool = True) -> Any:
        spec = (
            f"symbolic-shapes,fuse,{stack}convert-tensor-to-tile{{device={device}}},"
            "dedupe-kernels,convert-tile-to-bytecode"
        )
        module = dvm.pipeline.run(source.clone() if copy else source, spec)
        stacks.append(sum(1 for op in module.walk() if op.name == "tensor.stack"))
        return module

    dvm.variant_ir.lower = lower
    try:
        yield
    finally:
        dvm.variant_ir.lower = original


def steady(fn: Callable[[], Any], calls: int) -> float:
    """The median of `calls` timed calls, after one untimed call."""
    fn()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench(name: str, shapes: int, calls: int, examples: Path) -> dict[str, Any]:
    workload = make_workloads(examples)[name]
    programs, stacks = {}, {}
    for way, stack in WAYS.items():
        with lowered_with(stack, counted := []):
            programs[way] = dvm.compile(workload.program, cache=False)
        stacks[way] = counted[0]
    per_shape: dict[str, list[float]] = {way: [] for way in WAYS}
    rng = np.random.default_rng(7)
    for shape in workload.sampler(shapes):
        args = workload.make_inputs(shape, rng)
        for way, program in programs.items():
            per_shape[way].append(steady(lambda p=program, a=args: p(*a), calls))
    return {
        "stacks": stacks,
        "median_ms": {way: statistics.median(ts) * 1e3 for way, ts in per_shape.items()},
        "ratios": {
            way: sorted(t / p for t, p in zip(ts, per_shape["parallel"], strict=True))
            for way, ts in per_shape.items()
        },
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--shapes", type=int, default=6)
    ap.add_argument("--calls", type=int, default=30)
    ap.add_argument("--examples", type=Path, default=DEFAULT_EXAMPLES)
    args = ap.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.2f}; {args.shapes} shapes x {args.calls} calls")
    print("| program | way | stacks | median ms | / parallel: median | p90 |")
    print("|---|---|---|---|---|---|")
    for name in PROGRAMS:
        got = bench(name, args.shapes, args.calls, args.examples)
        for way in WAYS:
            ratios = got["ratios"][way]
            p90 = ratios[min(len(ratios) - 1, int(0.9 * len(ratios)))]
            print(
                f"| {name} | {way} | {got['stacks'][way]} | {got['median_ms'][way]:.3f} "
                f"| {statistics.median(ratios):.2f} | {p90:.2f} |"
            )
    print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
