"""Which operands a fused kernel reads as inputs: the values it loads, where splat
constants are otherwise copied into it as immediates (`fuse.Fuser.inputs`)."""

from __future__ import annotations

from functools import lru_cache

from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Operation, SSAValue

from dvm.dialects import tensor as t
from dvm.dialects.data_movement import ExtractSliceOp, ReverseOp
from dvm.passes.domain import LAYOUT_KINDS, MATMULS, OWN_KERNEL, TAKES

VIEWS = (t.TransposeOp, t.ExpandShapeOp, t.CollapseShapeOp, ExtractSliceOp, ReverseOp)
LOADED = (*MATMULS, *TAKES, *OWN_KERNEL, *VIEWS)
"""Ops whose operands a kernel loads, even a splat constant's: the domain analysis
takes the source of a view (`VIEWS`) as a kernel input, and cannot place a copy."""


def loads(op: Operation, members: set[Operation]) -> bool:
    """Whether a kernel of `members` loads the operands of `op` (`LOADED`), as it does a
    broadcast's that one of them slices or reverses: the domain analysis takes a
    broadcast of an input as a view, and cannot slice a copy it computes."""
    return isinstance(op, LOADED) or (
        isinstance(op, t.BroadcastToOp) and sliced_in(op.results[0], members)
    )


def sliced_in(value: SSAValue, members: set[Operation]) -> bool:
    """Whether a slice or reverse among `members` reads `value`, maybe through layout ops."""
    for use in value.uses:
        user = use.operation
        if user not in members:
            continue
        if isinstance(user, ExtractSliceOp | ReverseOp):
            return True
        if user in LAYOUT_KINDS and sliced_in(user.results[0], members):
            return True
    return False


def is_splat_constant(op: Operation) -> bool:
    """A constant that a kernel can hold as an immediate (a scalar or a splat)."""
    if not isinstance(op, arith.ConstantOp) or not isinstance(op.result.type, TensorType):
        return False
    value = op.value
    return isinstance(value, DenseIntOrFPElementsAttr) and holds_one_immediate(value)


@lru_cache(maxsize=1024)
def holds_one_immediate(value: DenseIntOrFPElementsAttr) -> bool:
    """Whether `value` is a splat that an immediate, an f64, holds. Remembered per literal
    (attributes are immutable): fuse asks of each constant a kernel reads, several
    times a compile (planning, then moving the ops), and decoding its elements is what
    the answer costs."""
    # (xDSL's is_splat fails on a constant with no elements, which is no splat)
    if not (len(value) > 0 and value.is_splat()):
        return False
    # an integer an f64 cannot hold stays outside, a kernel input
    first = value.get_values()[0]
    return not isinstance(first, int) or float(first) == first
