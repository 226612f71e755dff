"""What an unplanned launch's generated code calls (`unplanned.py`): its slow paths,
every error, a view's whole array and a load's copy. Each is a call in place of lines
of the source: a call costs little beside the work it does, and fewer lines compile
faster (Python's `compile` is most of what making the launch function costs).
"""

from __future__ import annotations

import itertools
import math
import operator

import numpy as np

from dvm.vm.binary import layout
from dvm.vm.errors import BytecodeError
from dvm.vm.kernels import global_view
from dvm.vm.memory import Kept
from dvm.vm.plan import Shape, Specialization, ViewPlan
from dvm.vm.program import MAX_ARRAY_BYTES, nominal_bytes
from dvm.vm.shapes import broadcast_shapes


def fail(spec: Specialization, k: int, reason: str, detail: str = "") -> BytecodeError:
    """The BytecodeError the planner raises for the same problem at instruction k (-1: grid)."""
    offsets = spec.program.offsets or layout(spec.program)
    return BytecodeError(offsets.grid if k < 0 else offsets.code[k], reason, detail)


def whole_array(vp: ViewPlan, a: np.ndarray) -> np.ndarray:
    """A launch's view `vp` over its whole argument `a`: a natural view is the argument
    (reshaped when its shape differs)."""
    if vp.natural:
        return a if a.shape == vp.sizes else a.reshape(vp.sizes)
    return np.empty(vp.sizes, a.dtype) if vp.empty else global_view(vp, a, None)


BROADCASTS: dict[tuple[Shape, Shape], Shape] = {}
"""Pairs of shapes of one rank broadcast (`broadcast_pair`), which the generated code
reads inline: a launch's tiles repeat their shapes."""
MAX_KEPT_BROADCASTS = 4096
"""Beyond this many, new pairs are broadcast each time, not kept."""


def broadcast_pair(spec: Specialization, k: int, pair: tuple[Shape, Shape]) -> Shape:
    """Two shapes of one rank broadcast dim by dim, kept in `BROADCASTS`, or op k's error
    when they do not broadcast (the generated code read the memo first). Each new tile
    shape asks, so the common case runs in C-level maps: the larger dim of each pair is
    the broadcast when every dim of both is it or 1 (a dim of 0 beside a 1, which
    broadcasts to 0, and every failure take `broadcast_shapes`)."""
    x, y = pair
    larger = tuple(map(max, x, y))
    either = tuple(zip(larger, itertools.repeat(1)))
    if all(map(operator.contains, either, x)) and all(map(operator.contains, either, y)):
        got: Shape | None = larger
    else:
        got = broadcast_shapes([x, y])
    if got is None:
        raise fail(spec, k, "shapes do not broadcast", str(pair))
    if len(BROADCASTS) < MAX_KEPT_BROADCASTS:
        BROADCASTS[pair] = got
    return got


def new_view(
    spec: Specialization, kept: Kept, k: int, r: int, shape: Shape, dtype: np.dtype
) -> np.ndarray:
    """Register r (of `dtype`) viewed with `shape` the first time (at this place and
    capacity), for instruction k: the planner's checks, then the view, kept."""
    off, cap = key = spec.registers[r]
    n = math.prod(shape)
    if n > cap or (not n and nominal_bytes(shape, 8) > MAX_ARRAY_BYTES):
        raise misfit(spec, k, r, shape)
    view = kept.views[(key, dtype.num, shape)] = np.ndarray(shape, dtype, kept.mem, off)
    return view  # (inside the memory: the layout checks)


def fits(spec: Specialization, kept: Kept, k: int, r: int, shape: Shape) -> None:
    """The checks of `new_view` for a tile of `shape` in register r, for instruction k,
    without the view, kept in `kept.fitted`: a producer that writes its store's tile
    directly must fit its register as the planner requires, but never writes the
    register, so a new shape makes no numpy view for it (a cold C path at each one)."""
    _, cap = key = spec.registers[r]
    n = math.prod(shape)
    if n > cap or (not n and nominal_bytes(shape, 8) > MAX_ARRAY_BYTES):
        raise misfit(spec, k, r, shape)
    kept.fitted.add((key, shape))


def misfit(spec: Specialization, k: int, r: int, shape: Shape) -> BytecodeError:
    """Instruction k's error for a tile of `shape` that register r cannot take, as the
    planner raises it: an empty tile too large for an array, else one over the
    register's capacity. (Only a failure calls it: every new view would pay a frame.)"""
    if not math.prod(shape) and nominal_bytes(shape, 8) > MAX_ARRAY_BYTES:
        return fail(spec, k, "tile too large", f"{shape}")
    return fail(spec, k, "tile does not fit register", f"r{r}: {shape} > {spec.registers[r][1]}")


def copied(
    spec: Specialization, kept: Kept, k: int, r: int, x: np.ndarray, dtype: np.dtype
) -> np.ndarray:
    """Load k's copy of the tile `x` into register r (of `dtype`), viewed with x's shape."""
    view = kept.views.get((spec.registers[r], dtype.num, x.shape))
    if view is None:
        view = new_view(spec, kept, k, r, x.shape, dtype)
    view[...] = x
    return view


def scratch(kept: Kept, shape: Shape, dtype: np.dtype) -> np.ndarray:
    """A temporary for one instruction (kept beside the local memory)."""
    got = kept.scratch.get((shape, dtype))
    if got is None:
        got = kept.scratch[(shape, dtype)] = np.empty(shape, dtype)
    return got
