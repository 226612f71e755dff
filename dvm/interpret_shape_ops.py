"""`tensor.from_elements` and `tensor.cast` in numpy (see `dvm.dialects.shape_ops`):
the reference interpreter's impls, and what `dvm.compile` runs on the host.

A cast whose static dims the operand does not have is an `ExecutionError` naming the
op, the axis and both sizes (compiled programs check it earlier, as a guard of the
`symbolic-shapes` pass, with the op in its message).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Operation

from dvm.arguments import numpy_dtype, result
from dvm.dialects import tensor as t
from dvm.dialects.shape_ops import CastOp, FromElementsOp
from dvm.errors import ExecutionError
from dvm.passes.errors import located


def from_elements(op: Operation, args: Sequence[Any]) -> tuple[Any, ...]:
    assert isinstance(op, FromElementsOp)
    kind = t.tensor_type(op.result)
    flat = np.array(list(args), dtype=numpy_dtype(kind.element_type))
    return (flat.reshape(kind.get_shape()),)


def cast(op: Operation, args: Sequence[Any]) -> tuple[Any, ...]:
    assert isinstance(op, CastOp)
    x, dest = np.asarray(args[0]), t.tensor_type(op.dest)
    for axis, (n, d) in enumerate(zip(x.shape, dest.get_shape(), strict=True)):
        if d != t.DYN and n != d:
            raise ExecutionError(f"{located(op)}: dim {axis} is {n}, but {dest} says {d}")
    return (x,)


SHAPE_FUNCTIONS: dict[type[Operation], Callable[[Operation, Sequence[Any]], tuple[Any, ...]]] = {
    FromElementsOp: from_elements,
    CastOp: cast,
}
"""The ops `dvm.compile` runs on the host, each as a function of its operand values."""


@register_impls
class ShapeOpFunctions(InterpreterFunctions):
    @impl(FromElementsOp)
    def run_from_elements(
        self, interpreter: Interpreter, op: FromElementsOp, args: PythonValues
    ) -> PythonValues:
        return result(op, from_elements(op, args)[0])

    @impl(CastOp)
    def run_cast(self, interpreter: Interpreter, op: CastOp, args: PythonValues) -> PythonValues:
        return result(op, cast(op, args)[0])
