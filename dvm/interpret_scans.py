"""The reference interpreter's reductions and scans beyond `tensor.reduce_<kind>`
(numpy semantics; see `dvm.dialects.scans`)."""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from dvm.arguments import result
from dvm.dialects.scans import ReduceAllOp, ReduceAnyOp


@register_impls
class ScanFunctions(InterpreterFunctions):
    @impl(ReduceAnyOp)
    def run_reduce_any(
        self, interpreter: Interpreter, op: ReduceAnyOp, args: PythonValues
    ) -> PythonValues:
        return result(op, np.any(args[0], axis=axes(op), keepdims=op.keeps_dims))

    @impl(ReduceAllOp)
    def run_reduce_all(
        self, interpreter: Interpreter, op: ReduceAllOp, args: PythonValues
    ) -> PythonValues:
        return result(op, np.all(args[0], axis=axes(op), keepdims=op.keeps_dims))


def axes(op: ReduceAnyOp | ReduceAllOp) -> tuple[int, ...]:
    return tuple(op.reduced_axes)
