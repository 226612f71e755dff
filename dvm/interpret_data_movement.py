"""The reference interpreter's data movement ops (numpy semantics).

A concat's inputs must agree in every dim but the concatenated one (a
ShapeError naming the op and the shapes). A slice's offsets, sizes and
strides are checked before numpy sees them: numpy would clip a slice past
the end and count a negative offset from it, where a slice must be inside
its source (an ExecutionError naming the op and the values).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from dvm.arguments import result
from dvm.dialects import tensor as t
from dvm.dialects.data_movement import ConcatOp, ExtractSliceOp, slice_bounds_error
from dvm.errors import ExecutionError, ShapeError
from dvm.passes.errors import located


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
