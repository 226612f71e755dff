"""Memory for the arrays programs return, used again once their users drop them.

A new array's pages are mapped by the kernel at their first write, one page fault
per 4 KiB, and on this host a fault costs 2.5-5 us: writing 1 MiB into fresh pages
took 1.25 ms, into mapped ones 0.05 ms. The allocator maps fresh pages for a result
larger than what it has free, or after it gave freed memory back to the system, and
a stream of new shapes meets that at many of its first calls (a first LayerNorm
call at a new shape met 57-63 faults; see docs/performance.md §19).

So results of MIN_POOLED_BYTES to MAX_POOLED_BYTES are views of blocks this pool
keeps. A block goes back to the pool when the last array viewing it is gone (a
weak reference to the `memoryview` that numpy keeps as the base of them all), and
the next result of its size class takes it, mapped already. Size classes are a
quarter of an octave wide (a block wastes under 25%); a free block of the next two
classes serves too. Free blocks are kept up to MAX_FREE_BYTES in all.

A pooled result does not own its data (`a.flags.owndata` is False), so `a.resize`
refuses it; everything else is an ordinary array. A block is reused only once
nothing can reach it: views, slices and `memoryview`s of a result all lead to its
`memoryview`.
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import numpy as np

MIN_POOLED_BYTES = 128 << 10
"""Smaller results are plain `np.empty` arrays: the allocator serves them from memory
it keeps (128 KiB is where glibc starts mapping each allocation afresh), and the
pool's round trip, 2-4 us, would cost more than the faults it saves."""
MAX_POOLED_BYTES = 16 << 20
"""Larger results are plain arrays too: numpy asks for huge pages for them, so a
fault maps 2 MiB, and a free block this large would hold much memory back."""
MAX_FREE_BYTES = 64 << 20
"""Free blocks kept at most, in bytes: beyond, a block given back is freed."""
CLASSES_TRIED = 3
"""A request takes a free block of its own size class or of the next two."""
POOLABLE = type(np.frombuffer(np.empty(8, np.uint8).data, np.uint8).base) is memoryview
"""Whether numpy keeps the memoryview an array is made from as its base, which the
weak references rely on (else nothing is pooled)."""


def size_class(nbytes: int) -> int | None:
    """The pool's size class for a result of `nbytes` (None: not pooled). Class 4e + m
    holds blocks of (5 + m) / 8 * 2^e bytes, m in 0..3: (2^(e-1), 2^e] in four steps."""
    if not POOLABLE or not MIN_POOLED_BYTES <= nbytes <= MAX_POOLED_BYTES:
        return None
    e = (nbytes - 1).bit_length()
    eighths = -(-nbytes // (1 << (e - 3)))  # 5..8 eighths of 2^e
    return 4 * e + eighths - 5


def class_bytes(c: int) -> int:
    """The size of a block of class c."""
    e, m = divmod(c, 4)
    return (5 + m) << (e - 3)


Block = np.ndarray[Any, Any]


class OutputPool:
    """Blocks of memory for results, by size class: the free ones and the ones on loan.

    Its weak references call back in whatever thread drops an array, at any point,
    even inside `array` on the same thread: so no locks (dict and list operations are
    atomic) and no running totals, and the callback touches only the pool itself."""

    def __init__(self, max_free_bytes: int = MAX_FREE_BYTES) -> None:
        self.max_free_bytes = max_free_bytes
        self.free: dict[int, tuple[int, list[Block]]] = {}
        """Per size class: its blocks' size and the blocks no array views."""
        self.lent: dict[int, tuple[weakref.ref[Any], Block, int]] = {}
        """Per id of the weak reference to a lent block's memoryview: the reference (which
        must live to call back), the block and its class."""

    def array(self, c: int, shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
        """An uninitialized array of `shape` and `dtype` (of size class c) in a pooled block."""
        block, k = self.take(c)
        flat = np.frombuffer(block.data, dtype, math.prod(shape))
        holder: Any = flat.base  # numpy's memoryview of ours: every view of `flat` leads to it
        ref = weakref.ref(holder, self.give_back)
        self.lent[id(ref)] = (ref, block, k)
        return flat.reshape(shape)

    def take(self, c: int) -> tuple[Block, int]:
        """A free block of class c or of the next ones, else a new one of class c; and
        its class."""
        for k in range(c, c + CLASSES_TRIED):
            got = self.free.get(k)
            if got and got[1]:
                try:  # another thread may have taken the last one since
                    return got[1].pop(), k
                except IndexError:
                    pass
        return np.empty(class_bytes(c), np.uint8), c

    def give_back(self, ref: weakref.ref[Any]) -> None:
        """The last array viewing a block is gone: keep the block for a next result,
        unless `max_free_bytes` are free already."""
        _, block, k = self.lent.pop(id(ref))
        if self.free_bytes() + block.nbytes <= self.max_free_bytes:
            self.free.setdefault(k, (block.nbytes, []))[1].append(block)

    def free_bytes(self) -> int:
        """Bytes in free blocks."""
        return sum(size * len(blocks) for size, blocks in list(self.free.values()))


OUTPUTS = OutputPool()
"""The pool every program's results come from."""
