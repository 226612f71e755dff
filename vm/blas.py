"""Holding numpy's OpenBLAS at one thread while a launch runs, with two C calls.

The VM's cores are the parallelism: a gemm or gemv inside a tile must run on
the thread that calls it. With OpenBLAS at its default of one thread per CPU,
a small gemm wakes the other BLAS threads, and when the other CPU is busy (a
VM core, or another process) it can take many times longer than on one
thread. threadpoolctl can hold it at one thread, but its context costs more
than a small launch; the OpenBLAS that numpy links (found once, in the process's
memory map, else through threadpoolctl) exports
`openblas_get_num_threads`/`openblas_set_num_threads`, two C calls.
When that library or those symbols are not there (another BLAS, a numpy
without OpenBLAS), `one_thread` returns None and the VM uses threadpoolctl.
"""

from __future__ import annotations

import ctypes
import itertools
from collections.abc import Callable
from typing import Any


def _find() -> tuple[Any, Any] | None:
    """(get, set) number-of-threads functions of numpy's OpenBLAS, or None."""
    import numpy  # noqa: F401  (only a loaded library is found)

    for path in _mapped_openblas() or _threadpoolctl_openblas():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix in itertools.product(("", "scipy_"), ("", "64_", "_64")):
            get = getattr(lib, f"{prefix}openblas_get_num_threads{suffix}", None)
            put = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}", None)
            if get is not None and put is not None:
                get.restype, put.argtypes = ctypes.c_int, [ctypes.c_int]
                return get, put
    return None


def _mapped_openblas() -> list[str]:
    """The OpenBLAS libraries the process has loaded, read from its memory map (Linux;
    elsewhere none): a fraction of a millisecond, where importing threadpoolctl and
    listing the libraries with it cost a fresh process's first call 10-30 ms."""
    try:
        with open("/proc/self/maps") as maps:
            fields = [line.split(None, 5) for line in maps if "openblas" in line]
    except OSError:
        return []
    return sorted({f[5].strip() for f in fields if len(f) == 6 and ".so" in f[5]})


def _threadpoolctl_openblas() -> list[str]:
    """The OpenBLAS libraries threadpoolctl finds loaded."""
    try:
        from threadpoolctl import ThreadpoolController

        infos = [c.info() for c in ThreadpoolController().lib_controllers]
    except Exception:
        return []
    return [info["filepath"] for info in infos if info.get("internal_api") == "openblas"]


_THREADS: list[tuple[Any, Any] | None] = []


def threads() -> tuple[Any, Any] | None:
    """The (get, set) functions, looked up once."""
    if not _THREADS:
        _THREADS.append(_find())
    return _THREADS[0]


def one_thread() -> int | None:
    """Hold numpy's OpenBLAS at one thread; returns what `restore` needs (None: could
    not, the caller uses threadpoolctl)."""
    found = threads()
    if found is None:
        return None
    get, put = found
    before = int(get())
    if before != 1:
        put(1)
    return before


def holding(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`fn` of one argument, as a function running it with numpy's OpenBLAS held at one
    thread: what `one_thread` and `restore` do around it, without their frames (a known
    shape's launch calls it), or threadpoolctl's limit without a direct handle."""
    found = threads()
    if found is None:

        def limited(arg: Any) -> Any:
            with threadpool_limit():
                return fn(arg)

        return limited
    get, put = found

    def held(arg: Any) -> Any:
        before = get()
        if before == 1:
            return fn(arg)
        put(1)
        try:
            return fn(arg)
        finally:
            put(before)

    return held


HELD_FROM = [0]
"""The thread count an enclosing hold (`launch.with_blas_held`) found, while it holds
(else 0): what a launch that lets BLAS use its threads gives it back for its run."""


def all_threads() -> int | None:
    """Let numpy's OpenBLAS use the threads it had before any hold in progress, for a
    launch that hands it large gemms; returns what `restore_count` needs (None: it
    changed nothing)."""
    found = threads()
    if found is None or HELD_FROM[0] <= 1:
        return None
    get, put = found
    before = int(get())
    if before == HELD_FROM[0]:
        return None
    put(HELD_FROM[0])
    return before


def restore_count(before: int | None) -> None:
    """Give OpenBLAS back the count `all_threads` found."""
    found = threads()
    if before is not None and found is not None:
        found[1](before)


def restore(before: int) -> None:
    """Give OpenBLAS back the thread count `one_thread` found."""
    found = threads()
    if before != 1 and found is not None:
        found[1](before)


_BLAS: list[Any] = []


def threadpool_limit() -> Any:
    """A context holding BLAS at one thread (the controller is built once, ~ms)."""
    if not _BLAS:
        from threadpoolctl import ThreadpoolController

        _BLAS.append(ThreadpoolController())
    return _BLAS[0].limit(limits=1, user_api="blas")
