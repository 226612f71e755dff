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
from dvm.dialects.expr import ExprAttr
from dvm.dialects.index_ops import index_error
from dvm.errors import ExecutionError
from dvm.lowering.index_ops import TAKE_CHECKS


def checked_takes(
    attributes: dict[str, Any], inputs: Sequence[int], step: Callable[[Any, Any], None]
) -> Callable[[Any, Any], None]:
    """`step` (a launch whose inputs are the environment's `inputs`), after checking the
    indices of its kernel's takes (from the launch's `attributes`); `step` itself when
    it has none."""
    entries = attributes.get(TAKE_CHECKS)
    if not isinstance(entries, ArrayAttr):
        return step
    takes: list[tuple[str, int | None, int]] = []
    exprs: list[sympy.Expr] = []
    for entry in entries.data:
        assert isinstance(entry, DictionaryAttr)
        label, position, size, axis = (entry.data[k] for k in ("op", "input", "size", "axis"))
        assert isinstance(label, StringAttr) and isinstance(size, ExprAttr)
        assert isinstance(position, IntegerAttr) and isinstance(axis, IntegerAttr)
        index = position.value.data
        length = entry.data.get("length")
        exprs += [size.data, length.data if isinstance(length, ExprAttr) else sympy.Integer(0)]
        takes.append((label.data, inputs[index] if index >= 0 else None, axis.value.data))
    names = sorted({str(s) for e in exprs for s in e.free_symbols})
    values_of = python_function(exprs, names, "take sizes")

    def checked(call: Any, env: Any) -> None:
        values = values_of(*[call.symbols[n] for n in names])
        for i, (label, index, axis) in enumerate(takes):
            size, length = values[2 * i], values[2 * i + 1]
            indices = env[index] if index is not None else np.arange(min(length, size + 1))
            error = index_error(label, indices, size, axis)
            if error is not None:
                raise ExecutionError(error)
        step(call, env)

    return checked
