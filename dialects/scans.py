"""Reductions and scans of the `tensor` dialect beyond `tensor.reduce_<kind>`.

- `tensor.reduce_any` and `tensor.reduce_all` reduce `i1` tensors with the syntax
  of the other reductions (`{axes = [...], keepdims = false}`): numpy's `np.any`
  and `np.all`. Inside a kernel they are the max and the min of the booleans.

They are registered with the dialect's other ops (`dvm.dialects.tensor_dialect`).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.irdl import irdl_op_definition

from dvm.dialects.tensor import ReduceOp


@irdl_op_definition
class ReduceAnyOp(ReduceOp):
    """`tensor.reduce_any`: whether some element is true (false over no elements)."""

    name = "tensor.reduce_any"
    ELEMENT_KIND: ClassVar[str] = "bool"


@irdl_op_definition
class ReduceAllOp(ReduceOp):
    """`tensor.reduce_all`: whether every element is true (true over no elements)."""

    name = "tensor.reduce_all"
    ELEMENT_KIND: ClassVar[str] = "bool"


BOOL_REDUCE_OPS: tuple[type[ReduceOp], ...] = (ReduceAnyOp, ReduceAllOp)
BOOL_REDUCE_KIND: dict[type[ReduceOp], str] = {ReduceAnyOp: "max", ReduceAllOp: "min"}
"""The reduction each one is on booleans (False < True)."""

SCAN_OPS = (*BOOL_REDUCE_OPS,)
