"""What binding a new shape costs a kernel without its fast path: the table walk.

Run: .venv/bin/python benchmarks/walk_cost.py [--workloads layernorm,if_else_add]

A kernel read from the compile cache, or launched only in a choice's fallback region,
binds its first new shapes (`launches.FAST_PATH_WALKS`) by interpreting its slots and
walking its register and view tables (`vm.Specializer.walked`), where a compiled kernel
runs its generated fast path. For each kernel the suite's stream of a workload launches
(its first --shapes shapes, `suite.workloads`), at the last shape it met: the fast path,
the walk and the walk's parts (the header's check, the slots, the tables), each the
median over --repeat rounds of 2000 calls in a loop, in µs, and the Python bytecodes
one call interprets (`sys.settrace`: they do not swing with the load, times do).

With `--compile`, what making the fallback kernels' fast paths in the compile would add
to it: per workload, the CPU time of `dvm.compile` in this warm process (median of
--repeat, the generated code's in-process caches emptied before each) beside that of
making those fast paths (likewise), as the compile makes the others'.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import timeit
from collections.abc import Callable
from typing import Any

os.environ["DVM_CACHE"] = "off"  # every kernel compiled: its fast path there to compare
import numpy as np
from suite.workloads import make_workloads

import dvm
from dvm import launches, variant_ir
from dvm.vm import checks, generated
from dvm.vm.specialize import Specializer, TableWalk, fast_function
from dvm.vm.static import static_info


def bytecodes(fn: Callable[[], Any]) -> int:
    """The Python bytecodes one call of `fn` interprets."""
    count = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        frame.f_trace_opcodes = True
        count += event == "opcode"
        return tracer

    sys.settrace(tracer)
    try:
        fn()
    finally:
        sys.settrace(None)
    return count


def kernels_met(name: str, shapes: int) -> dict[str, tuple[Specializer, tuple[Any, ...]]]:
    """Each kernel's specializer the workload's stream binds, with the last (shapes,
    params, cores) it was bound at."""
    w = make_workloads()[name]
    program = dvm.compile(w.program)
    met: dict[str, tuple[Specializer, tuple[Any, ...]]] = {}
    bind = Specializer.bind

    def recorded(self: Specializer, shapes: Any, params: Any, cores: int | None) -> Any:
        met[self.program.name] = (self, (shapes, params, cores))
        return bind(self, shapes, params, cores)

    Specializer.bind = recorded
    try:
        rng = np.random.default_rng(0)
        for shape in w.sampler(shapes):
            program(*w.make_inputs(shape, rng))
    finally:
        Specializer.bind = bind
    return met


def parts(sp: Specializer, args: tuple[Any, ...]) -> dict[str, Callable[[], Any]]:
    """The calls to time: the fast path, the walk, and the walk's parts."""
    shapes, params, cores = args
    st, device = sp.static, sp.device
    dims = tuple(tuple(map(int, shape)) for shape in shapes)
    slots = sp.slot_steps(dims, params, cores or 1)
    assert not isinstance(slots, int)  # (the stream's shapes fit)
    memory, alignment = device.memory_bytes(st.has_mma), device.alignment
    return {
        "fast path": lambda: sp.fast(shapes, params, cores, sp.one_core_bytes),
        "walk": lambda: sp.walked(shapes, params, cores, sp.one_core_bytes),
        "header": lambda: TableWalk(st, device).check_call(shapes, params),
        "slots": lambda: sp.slot_steps(dims, params, cores or 1),
        "tables": lambda: sp.tables.layout(slots, dims, memory, alignment),
    }


def compile_share(name: str, repeat: int) -> str:
    """A compile's CPU time, and what its fallback kernels' fast paths would add to it."""
    fallbacks: set[str] = set()
    kernels: dict[str, launches.Kernel] = {}
    find, build = variant_ir.fallback_kernels, launches.Kernel.from_plain

    def found(calls: Any) -> set[str]:
        names = find(calls)
        fallbacks.update(names)
        return names

    def built(plain: dict[str, Any], binary: Any, ahead: bool = True) -> launches.Kernel:
        kernel = kernels[plain["name"]] = build(plain, binary, ahead)
        return kernel

    def fresh() -> None:  # (a compile in this process reuses their code otherwise)
        checks._sources.clear()  # pyright: ignore[reportPrivateUsage]
        generated._kept_code.clear()  # pyright: ignore[reportPrivateUsage]

    text = str(make_workloads()[name].program)
    variant_ir.fallback_kernels, launches.Kernel.from_plain = found, staticmethod(built)
    try:
        compiles = []
        for _ in range(repeat):
            fresh()
            t0 = time.process_time()
            dvm.compile(text)
            compiles.append(time.process_time() - t0)
    finally:
        variant_ir.fallback_kernels, launches.Kernel.from_plain = find, staticmethod(build)
    made = []
    for _ in range(repeat):
        fresh()
        t0 = time.process_time()
        for kernel in map(kernels.__getitem__, fallbacks):
            static_info(kernel.program).fast_paths.clear()
            fast_function(kernel.program, kernel.device)
        made.append(time.process_time() - t0)
    c, f = statistics.median(compiles) * 1e3, statistics.median(made) * 1e3
    return (
        f"{name}: compile {c:.1f} ms CPU; fallbacks {sorted(fallbacks)}: {f:.2f} ms ({f / c:.1%})"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--workloads", default="layernorm,if_else_add,softmax,bert_layer")
    ap.add_argument("--shapes", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--compile", action="store_true", help="the fallbacks' fast paths' cost")
    a = ap.parse_args()
    if a.compile:
        dvm.compile(make_workloads()["gelu"].program)  # (a warm process)
        for name in a.workloads.split(","):
            print(compile_share(name, a.repeat), flush=True)
        return
    print(
        f"µs a call, median of {a.repeat} loops of 2000 (bytecodes); load {os.getloadavg()[0]:.1f}"
    )
    for name in a.workloads.split(","):
        for kernel, (sp, args) in sorted(kernels_met(name, a.shapes).items()):
            cells = []
            for label, fn in parts(sp, args).items():
                fn()  # (what a walk makes at its first: its steps and tables)
                loops = [timeit.timeit(fn, number=2000) / 2000 for _ in range(a.repeat)]
                us = statistics.median(loops) * 1e6
                cells.append(f"{label} {us:.1f} ({bytecodes(fn):,})")
            print(f"  {kernel:24s} " + "  ".join(cells), flush=True)


if __name__ == "__main__":
    main()
