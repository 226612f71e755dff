"""The reference interpreter's collectives (`dvm.dialects.collectives`): the world of
one process, where each is the identity (the world size, `WORLD`, is 1)."""

from __future__ import annotations

from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from dvm.arguments import result
from dvm.collectives import SINGLE_PROCESS, run_collective
from dvm.dialects.collectives import AllGatherOp, AllReduceOp, CollectiveOp, ReduceScatterOp


def single_process(op: CollectiveOp, args: PythonValues) -> PythonValues:
    return result(op, run_collective(SINGLE_PROCESS, op, args[0]))


@register_impls
class CollectiveFunctions(InterpreterFunctions):
    @impl(AllReduceOp)
    def run_all_reduce(
        self, interpreter: Interpreter, op: AllReduceOp, args: PythonValues
    ) -> PythonValues:
        return single_process(op, args)

    @impl(AllGatherOp)
    def run_all_gather(
        self, interpreter: Interpreter, op: AllGatherOp, args: PythonValues
    ) -> PythonValues:
        return single_process(op, args)

    @impl(ReduceScatterOp)
    def run_reduce_scatter(
        self, interpreter: Interpreter, op: ReduceScatterOp, args: PythonValues
    ) -> PythonValues:
        return single_process(op, args)
