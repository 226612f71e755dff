"""The run-time check of the indices a kernel's takes read.

A `take` instruction checks its indices too, but cannot name the op: before each
launch of a kernel with takes (`TAKE_CHECKS`), each take's index tensor (an input
of the launch) is checked against the size of the dim it indexes, with the
reference interpreter's message; indices made by an iota in the kernel are
0 ... length - 1, so only their length is checked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import sympy
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, StringAttr

from dvm.codegen import python_function
from dvm.dialects.expr import ExprAttr, symbol_names
from dvm.dialects.index_ops import index_error
from dvm.errors import IndexOutOfRangeError
from dvm.lowering.index_ops import TAKE_CHECKS
from dvm.passes.symbolic import substitute

TakeCheck = tuple[str, int, sympy.Expr, sympy.Expr, int]
"""(op, input position or -1 for an iota's indices, size of the dim, iota length, axis)."""


def read_take_checks(attributes: dict[str, Any]) -> list[TakeCheck]:
    """The `TAKE_CHECKS` entries of a launch's `attributes`."""
    entries = attributes.get(TAKE_CHECKS)
    if not isinstance(entries, ArrayAttr):
        return []
    found: list[TakeCheck] = []
    for entry in entries.data:
        assert isinstance(entry, DictionaryAttr)
        label, position, size, axis = (entry.data[k] for k in ("op", "input", "size", "axis"))
        assert isinstance(label, StringAttr) and isinstance(size, ExprAttr)
        assert isinstance(position, IntegerAttr) and isinstance(axis, IntegerAttr)
        length = entry.data.get("length")
        span = length.data if isinstance(length, ExprAttr) else sympy.Integer(0)
        found.append((label.data, position.value.data, size.data, span, axis.value.data))
    return found


def check_takes(
    attributes: dict[str, Any], inputs: Sequence[Any], symbols: dict[sympy.Symbol, int]
) -> None:
    """Check the indices of a launch's takes and scatters (from its `attributes`) on
    its `inputs` and the call's `symbols`: how the reference interpreter launches a
    lowered kernel, as the compiled program does (`checked_takes`)."""
    for label, index, size, length, axis in read_take_checks(attributes):
        dim, span = substitute(size, symbols), substitute(length, symbols)
        if not dim.is_number or not span.is_number:
            continue  # a value it cannot know: the kernel's own check says it
        if index >= 0:
            indices = np.asarray(inputs[index])
        else:
            indices = np.arange(min(int(span), int(dim) + 1))
        error = index_error(label, indices, int(dim), axis)
        if error is not None:
            raise IndexOutOfRangeError(error)


def checked_takes(
    attributes: dict[str, Any], inputs: Sequence[int], step: Callable[[Any, Any], None]
) -> Callable[[Any, Any], None]:
    """`step` (a launch whose inputs are the environment's `inputs`), after checking the
    indices of its kernel's takes (from the launch's `attributes`); `step` itself when
    it has none."""
    entries = read_take_checks(attributes)
    if not entries:
        return step
    takes: list[tuple[str, int | None, int]] = []
    exprs: list[sympy.Expr] = []
    for label, index, size, length, axis in entries:
        exprs += [size, length]
        takes.append((label, inputs[index] if index >= 0 else None, axis))
    names = sorted(symbol_names(exprs))
    values_of = python_function(exprs, names, "take sizes")

    def checked(call: Any, env: Any) -> None:
        values = values_of(*[call.symbols[n] for n in names])
        for i, (label, index, axis) in enumerate(takes):
            size, length = values[2 * i], values[2 * i + 1]
            indices = env[index] if index is not None else np.arange(min(length, size + 1))
            error = index_error(label, indices, size, axis)
            if error is not None:
                raise IndexOutOfRangeError(error)
        step(call, env)

    return checked
