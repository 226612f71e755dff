"""Keeping freed memory mapped, so that a new shape's large outputs do not fault.

A call at a new shape allocates its outputs anew. glibc's malloc serves a block
above its mmap threshold with fresh pages from the kernel, and gives the top of its
heap back to the kernel once more than its trim threshold is free there. Both
thresholds start low (128 KiB and twice that) and rise only as large blocks are
freed, up to 32 MiB and 64 MiB. So when a stream of shapes meets a size larger than
any before, its outputs land in fresh pages, often for two calls: the first call's
output is mapped anew; freeing it raises the threshold, so the second call's comes
from a heap that must grow. Each fresh page faults on its first write, inside a
tile: about 1.5 us a page, for a 4 MiB LayerNorm output more than a repeat's whole
launch, and the cores' faults in one address space barely overlap.

`keep_freed_memory` sets both thresholds where glibc's own rise ends (`mallopt`),
once, as the first device memory is made: from then on blocks up to 32 MiB come
from the heap, and up to 64 MiB of freed memory stays mapped for the next ones, as
after a long run of large calls it would anyway. It changes nothing on another C
library (no glibc `mallopt`), where the environment sets either threshold
(`MALLOC_MMAP_THRESHOLD_`, `MALLOC_TRIM_THRESHOLD_`: the user's choice wins), or
with `KEEP_FREED` False.
"""

from __future__ import annotations

import ctypes
import os

KEEP_FREED = True
"""Whether the first device memory sets the allocator's thresholds (turn it off before
the first launch to keep glibc's defaults)."""

MMAP_THRESHOLD, TRIM_THRESHOLD = 32 << 20, 64 << 20
"""Where glibc's dynamic thresholds end on a 64-bit host (its
DEFAULT_MMAP_THRESHOLD_MAX, and twice that)."""

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
"""glibc's `mallopt` parameter numbers (malloc.h)."""

_ENVIRONMENT = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")

_DONE: list[bool] = []


def keep_freed_memory() -> bool:
    """Set glibc's mmap and trim thresholds to `MMAP_THRESHOLD` and `TRIM_THRESHOLD`,
    the first time it is called with `KEEP_FREED` on; returns whether they are set."""
    if not _DONE and KEEP_FREED:
        _DONE.append(_set_thresholds())
    return bool(_DONE and _DONE[0])


def _set_thresholds() -> bool:
    """Both thresholds set through glibc's `mallopt` (False: not glibc, or the
    environment chose them)."""
    if any(name in os.environ for name in _ENVIRONMENT):
        return False
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return False
    if not hasattr(libc, "gnu_get_libc_version") or not hasattr(libc, "mallopt"):
        return False
    mallopt = libc.mallopt
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # mallopt returns 1 on success; the trim threshold first, so that a failure of
    # the second leaves glibc's dynamic mmap threshold as it was
    return bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)) and bool(
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
    )
