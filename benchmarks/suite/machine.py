"""Thread settings and a description of the machine the benchmark ran on.

`set_thread_env` must run before numpy (or torch) is first imported: OpenBLAS,
OpenMP and numexpr read their thread counts from the environment when they
load. `apply_threads` then sets the in-process knobs, and `describe` records
what every library actually uses.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS")


def set_thread_env(threads: int) -> None:
    """Export the thread counts every library reads at load time."""
    for var in THREAD_VARS:
        os.environ[var] = str(threads)
    # numexpr warns when NUMEXPR_MAX_THREADS is unset and caps at 8 anyway
    os.environ.setdefault("NUMEXPR_MAX_THREADS", str(max(threads, 1)))


def apply_threads(threads: int) -> dict[str, Any]:
    """Set torch's and numexpr's thread counts; returns what each reports."""
    info: dict[str, Any] = {"requested": threads}
    try:
        import torch

        torch.set_num_threads(threads)
        info["torch.get_num_threads"] = torch.get_num_threads()
        info["torch.get_num_interop_threads"] = torch.get_num_interop_threads()
    except ImportError:
        pass
    try:
        import numexpr

        numexpr.set_num_threads(threads)
        info["numexpr.get_num_threads"] = numexpr.get_num_threads()
    except ImportError:
        pass
    from threadpoolctl import threadpool_info

    info["threadpools"] = [
        {k: p.get(k) for k in ("user_api", "internal_api", "version", "num_threads", "prefix")}
        | {"architecture": p.get("architecture") or p.get("threading_layer")}
        for p in threadpool_info()
    ]
    info["env"] = {var: os.environ.get(var) for var in THREAD_VARS}
    return info


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo (or platform's guess)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def memory_gib() -> float | None:
    """Total memory in GiB from /proc/meminfo."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def loadavg() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (other work on the machine)."""
    try:
        return [float(v) for v in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return None


def git_state(repo: Path) -> dict[str, Any]:
    """The commit the benchmark ran on, and whether the tree had local changes."""

    def git(*args: str) -> str:
        out = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False)
        return out.stdout

    # porcelain lines are "XY path"; X may be a space, so no strip() before slicing
    changed = git("status", "--porcelain", "--untracked-files=no").splitlines()
    return {
        "commit": git("rev-parse", "HEAD").strip(),
        "subject": git("log", "-1", "--format=%s").strip(),
        "dirty": bool(changed),
        "changed": [line[3:] for line in changed if len(line) > 3],
    }


def versions() -> dict[str, str]:
    """Versions of Python and of every library the systems use."""
    out = {"python": sys.version.split()[0]}
    for name in ("numpy", "sympy", "xdsl", "torch", "numexpr", "matplotlib"):
        try:
            module = __import__(name)
            out[name] = str(getattr(module, "__version__", "?"))
        except ImportError:
            out[name] = "not installed"
    return out


def torch_blas() -> str | None:
    """The BLAS/LAPACK and parallel backend torch was built with."""
    try:
        import torch
    except ImportError:
        return None
    keys = ("BLAS_INFO", "LAPACK_INFO", "USE_MKL", "USE_MKLDNN", "USE_OPENMP")
    config = torch.__config__.show()
    found = [item.strip() for line in config.splitlines() for item in line.split(",")]
    found = [item for item in found if item.startswith(keys)]
    backend = [
        line.split(":", 1)[1].strip()
        for line in torch.__config__.parallel_info().splitlines()
        if line.startswith("ATen parallel backend")
    ]
    return ", ".join(found) + (f", ATen parallel backend {backend[0]}" if backend else "")


def describe(repo: Path) -> dict[str, Any]:
    """Everything the report says about the machine and the software."""
    return {
        "cpu": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "memory_gib": memory_gib(),
        "platform": platform.platform(),
        "versions": versions(),
        "torch_blas": torch_blas(),
        "git": git_state(repo),
    }


GEMM_PROBE_N = 2048
QUIET_GEMM_GFLOPS = 188.0
"""numpy's 2-thread SGEMM at 2048^3 on the benchmark machine when it was quiet (the
baseline summary's `numpy_sgemm_2048`, median): a calibration, which another machine
needs its own of."""


def gemm_probe(reps: int = 5) -> dict[str, float]:
    """How much of the machine this process gets: numpy's 2-thread SGEMM at
    2048^3, median GFLOP/s over `reps` (about 0.5 s on a quiet machine).

    Other work on the cores slows every system, but threads that meet at
    barriers (OpenBLAS's GEMM, torch's OpenMP) most: this number, against
    QUIET_GEMM_GFLOPS, says how disturbed a stretch of the run was.
    """
    import statistics
    import time

    import numpy as np

    n = GEMM_PROBE_N
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    c = np.empty((n, n), np.float32)
    np.matmul(a, b, out=c)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        np.matmul(a, b, out=c)
        times.append(time.perf_counter() - t0)
    time.sleep(0.2)  # let OpenBLAS's workers stop spinning
    flop = 2.0 * n**3
    return {
        "gflops_median": flop / statistics.median(times) / 1e9,
        "gflops_best": flop / min(times) / 1e9,
        "loadavg_1min": (loadavg() or [float("nan")])[0],
    }
