"""Symbolic shapes of the collectives (`dvm.dialects.collectives`), in the world size
`WORLD`: an all-reduce keeps its operand's shape, an all-gather multiplies its axis by
the world size, and a reduce-scatter divides it, which needs the axis to divide by the
world size: a guard, checked when a call starts."""

from __future__ import annotations

from collections.abc import Callable

import sympy
from xdsl.ir import Operation

from dvm.dialects.collectives import AllGatherOp, AllReduceOp, ReduceScatterOp
from dvm.passes.symbolic import WORLD, Shape

ZERO = sympy.Integer(0)


def collective_shape(
    op: Operation, source: Shape, require_zero: Callable[[sympy.Expr], object]
) -> list[sympy.Expr]:
    """The result's shape, given the operand's; `require_zero(e)` records the guard
    `e == 0` for the op."""
    if isinstance(op, AllReduceOp):
        return list(source)
    assert isinstance(op, AllGatherOp | ReduceScatterOp)
    axis, dim = op.along, source[op.along]
    if isinstance(op, AllGatherOp):
        part = sympy.expand(WORLD * dim)
    else:
        require_zero(sympy.Mod(dim, WORLD))
        part = sympy.floor(dim / WORLD)
    return [part if i == axis else d for i, d in enumerate(source)]
