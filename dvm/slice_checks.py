"""The run-time bounds check of the slices a kernel reads through.

Inside a kernel a slice is a strided view, which cannot tell a slice past its
dim's end from one inside the buffer: before each launch of a kernel with
slices (`SLICE_BOUNDS`), the offsets, sizes and strides are evaluated for the
call and checked as the reference interpreter checks them, with its message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sympy
from xdsl.dialects.builtin import ArrayAttr

from dvm.codegen import python_function
from dvm.dialects.data_movement import slice_bounds_error
from dvm.dialects.expr import symbol_names
from dvm.errors import ExecutionError
from dvm.passes.data_movement import SLICE_BOUNDS, read_slice_bounds
from dvm.passes.symbolic import substitute


def checked_slices(
    attributes: dict[str, Any], step: Callable[[Any, Any], None]
) -> Callable[[Any, Any], None]:
    """`step` (a launch), after checking the bounds of its kernel's slices (from the
    launch's `attributes`) on the call's symbols; `step` itself when it has none."""
    entries = attributes.get(SLICE_BOUNDS)
    if not isinstance(entries, ArrayAttr):
        return step
    slices = read_slice_bounds(entries)
    exprs = [d for _, _, lists in slices for shape in lists for d in shape]
    names = sorted(symbol_names(exprs))
    values_of = python_function(exprs, names, "slice bounds")

    def checked(call: Any, env: Any) -> None:
        values = iter(values_of(*[call.symbols[n] for n in names]))
        for label, whole, lists in slices:
            source, offsets, sizes, strides = ([next(values) for _ in s] for s in lists)
            error = slice_bounds_error(label, source, offsets, sizes, strides, whole)
            if error is not None:
                raise ExecutionError(error)
        step(call, env)

    return checked


def check_slices(attributes: dict[str, Any], symbols: dict[sympy.Symbol, int]) -> None:
    """Check the bounds of a launch's slices (from its `attributes`) on `symbols`, the
    call's values: how the reference interpreter launches a lowered kernel."""
    entries = attributes.get(SLICE_BOUNDS)
    if not isinstance(entries, ArrayAttr):
        return
    for label, whole, lists in read_slice_bounds(entries):
        values = [[substitute(d, symbols) for d in shape] for shape in lists]
        if not all(v.is_number for shape in values for v in shape):
            continue  # a value it cannot know: the tile interpreter says which
        source, offsets, sizes, strides = ([int(v) for v in shape] for shape in values)
        error = slice_bounds_error(label, source, offsets, sizes, strides, whole)
        if error is not None:
            raise ExecutionError(error)
