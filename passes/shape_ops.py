"""Symbolic shapes of `tensor.from_elements` (its static type) and `tensor.cast` (its
source's shape, which the static dims of its type refine: each becomes an equality
guard naming the op, checked when a call binds the shapes)."""

from __future__ import annotations

from collections.abc import Callable

import sympy
from xdsl.ir import Operation, SSAValue

from dvm.dialects import tensor as t
from dvm.dialects.shape_ops import CastOp, FromElementsOp
from dvm.passes.symbolic import Shape


def shape_op_shape(op: Operation, shape: Callable[[SSAValue], Shape]) -> list[sympy.Expr]:
    """The result's shape, before its static dims are reconciled (`set_result`)."""
    if isinstance(op, CastOp):
        return list(shape(op.source))
    assert isinstance(op, FromElementsOp)
    return [sympy.Integer(d) for d in t.tensor_type(op.result).get_shape()]


SHAPE_OPS_WITH_RULES = (FromElementsOp, CastOp)
