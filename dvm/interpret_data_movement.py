"""The reference interpreter's data movement ops (numpy semantics).

A slice's offsets, sizes and strides are checked before numpy sees them: numpy
would clip a slice past the end and count a negative offset from it, where a
slice must be inside its source (an ExecutionError naming the op and the values).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from dvm.arguments import result
from dvm.dialects import tensor as t
from dvm.dialects.data_movement import ExtractSliceOp, slice_bounds_error
from dvm.errors import ExecutionError
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
