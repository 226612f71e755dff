"""`c += a @ b` in one BLAS call: cblas `gemm` with beta = 1, from numpy's own OpenBLAS.

numpy's `matmul` has no accumulating form, so `mma` with `acc` would need a
scratch product and an `add` pass over the accumulator per chunk of K. The
OpenBLAS that numpy links (found through threadpoolctl, already the VM's way
to hold BLAS at one thread) exports `cblas_sgemm`/`cblas_dgemm`, which
accumulate in place and read strided operands (a tile of a larger matrix,
or a transposed one) without copies. When that library or symbol is not
there (another BLAS, a numpy without OpenBLAS), `gemm` is None and the VM
keeps the matmul-and-add path.
"""

from __future__ import annotations

import ctypes
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112

Gemm = Callable[[np.ndarray, np.ndarray, np.ndarray, float], bool]


def _find() -> dict[Any, Any]:
    """cblas sgemm/dgemm of numpy's OpenBLAS, with argument types set, by dtype; and
    under the key "threads" its (get, set) number-of-threads functions."""
    try:
        from threadpoolctl import ThreadpoolController

        infos = [c.info() for c in ThreadpoolController().lib_controllers]
    except Exception:
        return {}
    for info in infos:
        if info.get("internal_api") != "openblas":
            continue
        try:
            lib = ctypes.CDLL(info["filepath"])
        except OSError:
            continue
        for prefix, suffix in itertools.product(("", "scipy_"), ("", "64_", "_64")):
            names = {np.dtype(np.float32): "sgemm", np.dtype(np.float64): "dgemm"}
            found = {
                dt: getattr(lib, f"{prefix}cblas_{name}{suffix}", None)
                for dt, name in names.items()
            }
            if not all(found.values()):
                continue
            config = getattr(lib, f"{prefix}openblas_get_config{suffix}", None)
            text = b""
            if config is not None:
                config.restype = ctypes.c_char_p
                text = config() or b""
            wide = "64" in suffix or b"USE64BITINT" in text
            integer = ctypes.c_int64 if wide else ctypes.c_int
            for dt, fn in found.items():
                assert fn is not None
                real = ctypes.c_float if dt == np.float32 else ctypes.c_double
                fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, integer, integer, integer,
                               real, ctypes.c_void_p, integer, ctypes.c_void_p, integer, real,
                               ctypes.c_void_p, integer]  # fmt: skip
                fn.restype = None
            out: dict[Any, Any] = dict(found)
            get = getattr(lib, f"{prefix}openblas_get_num_threads{suffix}", None)
            put = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}", None)
            if get is not None and put is not None:
                get.restype, put.argtypes = ctypes.c_int, [ctypes.c_int]
                out["threads"] = (get, put)
            return out
    return {}


_GEMM: list[dict[Any, Any]] = []


def functions() -> dict[Any, Any]:
    """The cblas gemm functions by dtype (looked up once; empty when unavailable)."""
    if not _GEMM:
        _GEMM.append(_find())
    return _GEMM[0]


def one_thread() -> int | None:
    """Hold numpy's OpenBLAS at one thread; returns what `restore` needs (None: could
    not, the caller uses threadpoolctl). Two C calls: ~1 us, where a threadpoolctl
    context costs ~20 us. A small gemm on two OpenBLAS threads can take 50x longer
    than on one when the other CPU is busy, and the VM's cores are the parallelism."""
    threads = functions().get("threads")
    if threads is None:
        return None
    get, put = threads
    before = int(get())
    if before != 1:
        put(1)
    return before


def restore(before: int) -> None:
    """Give OpenBLAS back the thread count `one_thread` found."""
    if before != 1:
        functions()["threads"][1](before)


def operand(
    rows: int, cols: int, s0: int, s1: int, item: int, transpose: bool
) -> tuple[int, int] | None:
    """(cblas transpose flag, leading dimension) of a 2-D operand of `rows` x `cols` with
    byte strides s0, s1, read as its transpose when `transpose`, or None when neither axis
    has unit stride (or a stride is negative)."""
    if transpose:
        rows, cols, s0, s1 = cols, rows, s1, s0
    if s0 < 0 or s1 < 0 or s0 % item or s1 % item:
        return None
    if s1 == item or cols <= 1:
        ld = s0 // item if rows > 1 else max(cols, 1)
        return (NO_TRANS, ld) if ld >= max(cols, 1) else None
    if s0 == item or rows <= 1:
        ld = s1 // item if cols > 1 else max(rows, 1)
        return (TRANS, ld) if ld >= max(rows, 1) else None
    return None


def _args(
    a: np.ndarray, b: np.ndarray, c: np.ndarray, ta: bool, tb: bool
) -> tuple[Any, ...] | None:
    """The cblas gemm arguments for c += op(a) @ op(b) (2-D, c row-major), or None."""
    ra, ca = a.shape
    rb, cb = b.shape
    m, k = (ca, ra) if ta else (ra, ca)
    n = rb if tb else cb
    item = c.itemsize
    sa0, sa1 = a.strides
    sb0, sb1 = b.strides
    oa = operand(ra, ca, sa0, sa1, item, ta)
    ob = operand(rb, cb, sb0, sb1, item, tb)
    c0, c1 = c.strides
    if oa is None or ob is None or (c1 != item and n > 1) or c0 % item or c0 < 0:
        return None
    ldc = c0 // item if m > 1 else max(n, 1)
    if ldc < max(n, 1):
        return None
    return (ROW_MAJOR, oa[0], ob[0], m, n, k, 1.0, a.ctypes.data, oa[1], b.ctypes.data, ob[1],
            1.0, c.ctypes.data, ldc)  # fmt: skip


def accumulate(fn: Any, a: np.ndarray, b: np.ndarray, c: np.ndarray, ta: bool, tb: bool) -> bool:
    """c += op(a) @ op(b) with one gemm call; False when the operands' layout does not
    suit BLAS (the caller then computes it another way)."""
    if 0 in c.shape:
        return True
    if 0 in a.shape:  # k == 0: nothing to add
        return True
    args = _args(a, b, c, ta, tb)
    if args is None:
        return False
    fn(*args)
    return True


def bind_accumulate(
    fn: Any, a: np.ndarray, b: np.ndarray, c: np.ndarray, ta: bool, tb: bool
) -> Callable[[], None] | None:
    """A zero-argument `c += op(a) @ op(b)` over fixed arrays (layouts decided now), or
    None when they do not suit BLAS."""
    if 0 in c.shape or 0 in a.shape:
        return _nothing
    args = _args(a, b, c, ta, tb)
    if args is None:
        return None
    return _call(fn, args, (a, b, c))  # the pointers stay valid while the arrays live


def _nothing() -> None:
    """An empty product: nothing to accumulate."""


def _call(fn: Any, args: tuple[Any, ...], keep: tuple[np.ndarray, ...]) -> Callable[[], None]:
    """fn(*args) as a closure that also holds the arrays the pointers point into."""

    def gemm() -> None:
        fn(*args)

    gemm.keep = keep  # type: ignore[attr-defined]
    return gemm
