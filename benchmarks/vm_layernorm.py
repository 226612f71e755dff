"""LayerNorm on the numpy device VM vs numpy eager, plus the VM's dispatch cost.

Run: .venv/bin/python benchmarks/vm_layernorm.py [--rows 8192 --cols 1024 --repeat 9]

Prints, in one run (medians of --repeat runs each):
- numpy eager composite (x.mean, d = x - mean, var = (d*d).mean,
  d * (1/sqrt(var + eps)) * w + b) and the hand-written LayerNorm bytecode
  for several row-tile sizes and core counts, with the ratio numpy / VM;
- dispatch overhead per executed instruction: a long chain of 1-element
  `add` instructions, VM time minus the same numpy calls in a plain loop;
- the cost of holding BLAS at one thread (threadpoolctl, and the VM's direct
  OpenBLAS calls);
- the machine's copy bandwidth (np.copyto of 256 MiB) for scale.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import timeit
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

import dvm.vm as vm

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "vm"))
import vm_programs


def timings(fn: Callable[[], object], repeat: int) -> list[float]:
    """Wall times of `repeat` runs of `fn`, after one warm-up run."""
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return times


def median_s(fn: Callable[[], object], repeat: int) -> float:
    """Median wall time of `fn` over `repeat` runs."""
    return statistics.median(timings(fn, repeat))


def numpy_layernorm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    d = x - mean
    var = (d * d).mean(axis=-1, keepdims=True)
    return d * (1.0 / np.sqrt(var + np.float32(1e-5))) * w + b


def bench_layernorm(rows: int, cols: int, repeat: int) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((rows, cols), dtype=np.float32)
    w = rng.standard_normal(cols, dtype=np.float32)
    b = rng.standard_normal(cols, dtype=np.float32)
    y = np.empty_like(x)
    np_times = timings(lambda: numpy_layernorm(x, w, b), repeat)
    t_np = statistics.median(np_times)
    print(f"LayerNorm {rows}x{cols} f32 (median and best of {repeat} runs)")
    print(
        f"  numpy eager                      {t_np * 1e3:8.2f} ms (best {min(np_times) * 1e3:.2f})"
    )
    best = (np.inf, 0, 0, "")
    local = vm.DeviceSpec.host().local_memory_bytes
    for variant, big_regs in (("copy", 2), ("alias", 3)):
        text = vm_programs.layernorm(rows_param=True, alias=variant == "alias")
        prog = vm.load(vm.encode(vm.assemble(text)))
        for tile in (8, 16, 24, 32, 40, 48, 56):
            if big_regs * (tile * cols * 4 + 320) + 2 * cols * 4 + tile * 4 + 1024 > local:
                continue
            for cores in (1, 2):
                run = partial(vm.launch, prog, [x, w, b, y], params=[tile], cores=cores)
                times = timings(run, repeat)
                t = statistics.median(times)
                print(
                    f"  vm {variant:5s} rows/tile={tile:2d} cores={cores}  {t * 1e3:8.2f} ms "
                    f"(best {min(times) * 1e3:6.2f})  numpy/vm = {t_np / t:4.2f}x "
                    f"(best/best {min(np_times) / min(times):4.2f}x)"
                )
                best = min(best, (t, tile, cores, variant))
        np.testing.assert_allclose(y, numpy_layernorm(x, w, b), rtol=1e-4, atol=1e-4)
    t, tile, cores, variant = best
    prog = vm.load(vm.encode(vm.assemble(vm_programs.layernorm(True, variant == "alias"))))
    st = vm.launch(prog, [x, w, b, y], params=[tile], cores=cores, stats=True)
    assert st is not None
    print(
        f"  best: {variant}, rows/tile={tile}, cores={cores}: "
        f"{t_np / t:.2f}x faster than numpy eager"
    )
    print(
        f"  its stats: {st.total_instructions} instructions, {st.tiles} tiles, "
        f"{(st.bytes_read + st.bytes_written) / 2**20:.0f} MiB global traffic, "
        f"peak local {st.peak_local_memory / 1024:.0f} KiB, core-time in numpy "
        f"{st.numpy_s * 1e3:.1f} ms, in dispatch {st.dispatch_s * 1e3:.1f} ms"
    )
    spec_times = []
    for n in range(rows // 2, rows // 2 + 50):
        t0 = time.perf_counter()
        vm.specialize(prog, [(n, cols), (cols,), (cols,), (n, cols)], [tile])
        spec_times.append(time.perf_counter() - t0)
    print(
        f"  specialize for a new shape (median of 50): {statistics.median(spec_times) * 1e6:.0f} us"
    )
    first, again = [], []
    for n in range(100, 150):  # small new shapes: what a dynamic-shape call stream pays
        xs = np.ones((n, 256 + n % 7), np.float32)
        ws, ys = np.ones(xs.shape[1], np.float32), np.empty_like(xs)
        for times in (first, again):
            t0 = time.perf_counter()
            vm.launch(prog, [xs, ws, ws, ys], params=[16])
            times.append(time.perf_counter() - t0)
    print(
        f"  small new shapes (~{125}x256): first launch {statistics.median(first) * 1e6:.0f} us "
        f"(specialize + bind + run), next launch {statistics.median(again) * 1e6:.0f} us"
    )


def bench_dispatch(repeat: int) -> None:
    """VM time per instruction minus a bare numpy call, on 1-element adds.

    The VM run and the plain loop alternate, 5x `repeat` times each, and the
    best of each counts: on a shared machine, drift and bursts hit both alike.
    """
    n = 2000
    prog = vm.load(vm.encode(vm.assemble(vm_programs.add_chain(n))))
    x = np.ones(1, np.float32)
    y = np.zeros(1, np.float32)
    a, c = np.ones(1, np.float32), np.zeros(1, np.float32)
    calls = [partial(np.add, c, a, out=c)] * n

    def plain() -> None:
        for f in calls:
            f()

    run_vm = partial(vm.launch, prog, [x, y])
    run_vm()
    t_vm = t_np = np.inf
    for _ in range(5 * repeat):
        t_vm = min(t_vm, min(timings(run_vm, 1)))
        t_np = min(t_np, min(timings(plain, 1)))
    per_vm, per_np = t_vm / (n + 3), t_np / n
    print(f"Dispatch: {n}-instruction chain of 1-element adds, one tile (best of {5 * repeat})")
    print(f"  vm per instruction               {per_vm * 1e6:8.3f} us")
    print(f"  bare numpy call (add, out=)      {per_np * 1e6:8.3f} us")
    print(f"  dispatch overhead                {(per_vm - per_np) * 1e6:8.3f} us/instruction")
    tiny = vm.load(vm.encode(vm.assemble(vm_programs.add_chain(1))))
    t_tiny = t_add = np.inf
    for _ in range(5):
        t_tiny = min(t_tiny, timeit.timeit(partial(vm.launch, tiny, [x, y]), number=2000) / 2000)
        t_add = min(t_add, timeit.timeit(calls[0], number=20000) / 20000)
    print(
        f"  tiny launch (1 tile, 4 instr.)   {t_tiny * 1e6:8.2f} us "
        f"(= {t_tiny / t_add:.0f} bare numpy calls of {t_add * 1e6:.2f} us)"
    )


def bench_blas_limit() -> None:
    """What holding BLAS at one thread costs: why the VM enters it once per launch."""
    from threadpoolctl import ThreadpoolController, threadpool_limits

    def fresh() -> None:
        with threadpool_limits(limits=1, user_api="blas"):
            pass

    controller = ThreadpoolController()

    def cached() -> None:
        with controller.limit(limits=1, user_api="blas"):
            pass

    import importlib

    blas = importlib.import_module("dvm.vm.blas")

    def direct() -> None:
        held = blas.one_thread()
        if held is not None:
            blas.restore(held)

    print("BLAS one-thread context (enter + exit):")
    print(f"  threadpool_limits(1)             {median_s(fresh, 20) * 1e6:8.1f} us")
    t = median_s(cached, 50)
    print(f"  cached controller.limit(1)       {t * 1e6:8.1f} us  (VM fallback)")
    found = "" if blas.threads() is not None else " (no OpenBLAS thread calls found)"
    t = median_s(direct, 200)
    print(f"  openblas_set_num_threads pair    {t * 1e6:8.1f} us  (VM: per launch){found}")


def bench_copy(repeat: int) -> None:
    n = 256 * 2**20
    src = np.ones(n, np.uint8)
    dst = np.empty_like(src)
    t = median_s(partial(np.copyto, dst, src), repeat)
    print(
        f"Copy bandwidth: np.copyto 256 MiB {t * 1e3:.1f} ms = {2 * n / t / 1e9:.1f} GB/s "
        f"(read+write), {n / t / 1e9:.1f} GB/s (size/time)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=8192)
    ap.add_argument("--cols", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=9)
    a = ap.parse_args()
    print(f"host device: {vm.DeviceSpec.host()}")
    bench_layernorm(a.rows, a.cols, a.repeat)
    bench_dispatch(a.repeat)
    bench_blas_limit()
    bench_copy(a.repeat)


if __name__ == "__main__":
    main()
