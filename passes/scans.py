"""Symbolic shapes of the ops of `dvm.dialects.scans` that no kernel holds: argmax
and argmin drop (or keep as 1) their axis, cumsum and cumprod keep the shape,
top_k puts k on its axis."""

from __future__ import annotations

from collections.abc import Callable

import sympy
from xdsl.ir import Operation, SSAValue

from dvm.dialects.scans import ArgMaxOp, ArgMinOp, ArgReduceOp, CumProdOp, CumSumOp, ScanOp, TopKOp
from dvm.passes.symbolic import Shape

ONE = sympy.Integer(1)


def scan_shapes(op: Operation, shape: Callable[[SSAValue], Shape]) -> list[list[sympy.Expr]]:
    """The shape of each result of `op`, given the shapes of values."""
    source = list(shape(op.operands[0]))
    if isinstance(op, ArgReduceOp):
        axis = op.reduced_axis
        if op.keeps_dims:
            return [[ONE if i == axis else d for i, d in enumerate(source)]]
        return [[d for i, d in enumerate(source) if i != axis]]
    if isinstance(op, ScanOp):
        return [source]
    assert isinstance(op, TopKOp)
    picked = [sympy.Integer(op.count) if i == op.along else d for i, d in enumerate(source)]
    return [picked, picked]


SHAPED_OPS = (ArgMaxOp, ArgMinOp, CumSumOp, CumProdOp, TopKOp)
"""The ops `scan_shapes` knows."""
