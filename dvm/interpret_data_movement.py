"""The reference interpreter's data movement ops (numpy semantics).

A concat's inputs must agree in every dim but the concatenated one (a
ShapeError naming the op and the shapes). A slice's offsets, sizes and
strides are checked before numpy sees them: numpy would clip a slice past
the end and count a negative offset from it, where a slice must be inside
its source (an ExecutionError naming the op and the values).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import sympy
from xdsl.dialects.builtin import ArrayAttr
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Operation

from dvm.arguments import result
from dvm.dialects import tensor as t
from dvm.dialects.data_movement import (
    ConcatOp,
    ExtractSliceOp,
    InsertSliceOp,
    PadOp,
    ReverseOp,
    slice_bounds_error,
)
from dvm.errors import ExecutionError, ShapeError
from dvm.passes.data_movement import PADDED
from dvm.passes.errors import located
from dvm.passes.symbolic import (
    ARG_SHAPES,
    ARG_VALUES,
    SHAPE,
    SHAPES,
    optional_exprs,
    shape_from_attr,
    shape_of,
    value_exprs,
)


def mixed_values(static: Sequence[int], dynamic: Sequence[int]) -> list[int]:
    """Constants with each DYN taken, in order, from `dynamic`."""
    values = iter(dynamic)
    return [int(next(values)) if d == t.DYN else d for d in static]


@register_impls
class DataMovementFunctions(InterpreterFunctions):
    @impl(ExtractSliceOp)
    def run_extract_slice(
        self, interpreter: Interpreter, op: ExtractSliceOp, args: PythonValues
    ) -> PythonValues:
        x, rest = np.asarray(args[0]), list(args[1:])
        counts = [len(op.offsets), len(op.sizes)]
        offsets = mixed_values(op.static_offsets.get_values(), rest[: counts[0]])
        sizes = mixed_values(op.static_sizes.get_values(), rest[counts[0] : sum(counts)])
        strides = mixed_values(op.static_strides.get_values(), rest[sum(counts) :])
        error = slice_bounds_error(located(op), x.shape, offsets, sizes, strides)
        if error is not None:
            raise ExecutionError(error)
        index = tuple(
            slice(o, o + n * s, s) for o, n, s in zip(offsets, sizes, strides, strict=True)
        )
        return result(op, x[index].copy())

    @impl(InsertSliceOp)
    def run_insert_slice(
        self, interpreter: Interpreter, op: InsertSliceOp, args: PythonValues
    ) -> PythonValues:
        source, dest, rest = np.asarray(args[0]), np.asarray(args[1]), list(args[2:])
        counts = [len(op.offsets), len(op.sizes)]
        offsets = mixed_values(op.static_offsets.get_values(), rest[: counts[0]])
        sizes = mixed_values(op.static_sizes.get_values(), rest[counts[0] : sum(counts)])
        strides = mixed_values(op.static_strides.get_values(), rest[sum(counts) :])
        label = located(op)
        error = slice_bounds_error(label, dest.shape, offsets, sizes, strides, "destination")
        if error is not None:
            raise ExecutionError(error)
        if list(source.shape) != sizes:
            raise ShapeError(
                f"{located(op)}: a source of shape {'x'.join(map(str, source.shape))} "
                f"does not have the slice's sizes {'x'.join(map(str, sizes))}"
            )
        index = tuple(
            slice(o, o + n * s, s) for o, n, s in zip(offsets, sizes, strides, strict=True)
        )
        updated = dest.copy()
        updated[index] = source
        return result(op, updated)

    @impl(PadOp)
    def run_pad(self, interpreter: Interpreter, op: PadOp, args: PythonValues) -> PythonValues:
        x, rest = np.asarray(args[0]), list(args[1:])
        low = mixed_values(op.static_low.get_values(), rest[: len(op.low)])
        high = mixed_values(op.static_high.get_values(), rest[len(op.low) :])
        shape = [lo + n + hi for lo, n, hi in zip(low, x.shape, high, strict=True)]
        ones = [1] * x.ndim
        error = slice_bounds_error(located(op), shape, low, list(x.shape), ones, PADDED)
        if error is not None:  # a negative pad
            raise ExecutionError(error)
        fill = np.asarray(op.padding_value(), dtype=x.dtype)
        return result(op, np.pad(x, list(zip(low, high, strict=True)), constant_values=fill))

    @impl(ReverseOp)
    def run_reverse(
        self, interpreter: Interpreter, op: ReverseOp, args: PythonValues
    ) -> PythonValues:
        return result(op, np.flip(np.asarray(args[0]), tuple(op.reversed_axes)).copy())

    @impl(ConcatOp)
    def run_concat(
        self, interpreter: Interpreter, op: ConcatOp, args: PythonValues
    ) -> PythonValues:
        arrays = [np.asarray(a) for a in args]
        shapes = [a.shape[: op.axis] + a.shape[op.axis + 1 :] for a in arrays]
        if any(s != shapes[0] for s in shapes):
            shown = ", ".join("x".join(map(str, a.shape)) for a in arrays)
            raise ShapeError(f"{located(op)}: inputs of shapes {shown} differ off axis {op.axis}")
        return result(op, np.concatenate(arrays, axis=op.axis))


class SymbolBinder(Interpreter.Listener):
    """Binds, as the program runs, each symbol an index value or a result's dim
    stands for (`dvm.value`, `dvm.shape`; a loop's `dvm.arg_values` and
    `dvm.arg_shapes` as each iteration starts), as compiled programs do: a lowered
    module's kernels may take their sizes or slice offsets from them (a loop counter,
    a carried dim the loop changes), which the tile-level interpreters cannot find in
    their arguments' shapes."""

    def __init__(
        self,
        interpreter: Interpreter,
        symbols: dict[sympy.Symbol, int],
        check_late: Callable[[set[str]], None] | None = None,
    ):
        self.interpreter = interpreter
        self.symbols = symbols
        self.check_late = check_late
        """The late guards' check (`dvm.guards.late_guard_check`), given what was bound."""

    def will_interpret_op(self, op: Operation, args: PythonValues) -> None:
        block = op.parent_block()
        owner = block.parent_op() if block is not None else None
        if block is None or owner is None or block.first_op is not op:
            return
        region = next((i for i, r in enumerate(owner.regions) if r.block is block), None)
        if region is None:
            return
        values = self.interpreter.get_values(block.args)
        entries = owner.attributes.get(ARG_VALUES)
        if isinstance(entries, ArrayAttr):
            exprs = entries.data[region]
            assert isinstance(exprs, ArrayAttr)
            self.bind(optional_exprs(exprs), values)
        if ARG_SHAPES in owner.attributes:  # (`shape_of` reads a block argument's there)
            for arg, value in zip(block.args, values, strict=True):
                if isinstance(value, np.ndarray):
                    self.bind(list(shape_of(arg)), list(value.shape))

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        self.bind(value_exprs(op), results)
        for k, value in enumerate(results):
            attr = op.attributes.get(SHAPE) if len(results) == 1 else None
            shapes = op.attributes.get(SHAPES)
            if attr is None and isinstance(shapes, ArrayAttr) and k < len(shapes.data):
                attr = shapes.data[k]
            if attr is not None and isinstance(value, np.ndarray):
                self.bind(list(shape_from_attr(attr)), list(value.shape))

    def bind(self, exprs: Sequence[sympy.Expr | None], values: Sequence[Any]) -> None:
        bound = set()
        for expr, value in zip(exprs, values, strict=False):
            if isinstance(expr, sympy.Symbol) and isinstance(value, int | np.integer):
                self.symbols[expr] = int(value)
                bound.add(expr.name)
        if bound and self.check_late is not None:
            self.check_late(bound)
