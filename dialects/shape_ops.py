"""Shapes as data and back, in the `tensor` dialect, with upstream MLIR's syntax:

- `tensor.from_elements %a, %b : tensor<2xi64>` builds a tensor of static shape
  from scalars (row-major), e.g. run-time dims cast by `arith.index_cast`: ONNX's
  `Shape` and `Size`;
- `tensor.cast %x : tensor<?x4xf32> to tensor<3x4xf32>` changes only the type: it
  refines a `?` dim to a static size (checked when the program runs, by a guard that
  names the op) or forgets a static size.

They are registered with the dialect's other ops (`dvm.dialects.tensor_dialect`).
"""

from __future__ import annotations

import math
from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dvm.dialects.tensor import DYN, check_element, tensor_type


@irdl_op_definition
class FromElementsOp(IRDLOperation):
    """Upstream `tensor.from_elements %a, %b, ... : tensor<NxT>`: a tensor of static
    shape from as many scalars of its element type, in row-major order."""

    name = "tensor.from_elements"
    ELEMENT: ClassVar = VarConstraint("ELEMENT", AnyAttr())
    elements = var_operand_def(ELEMENT)
    result = result_def(TensorType.constr(ELEMENT))
    traits = traits_def(Pure())
    assembly_format = "$elements attr-dict `:` type($result)"

    def verify_(self) -> None:
        result = tensor_type(self.result)
        element = result.element_type
        check_element(self.name, "result", element, "any")
        shape = result.get_shape()
        if DYN in shape:
            raise VerifyException(f"'{self.name}' result type {result} must have a static shape")
        if len(self.elements) != math.prod(shape):
            raise VerifyException(
                f"'{self.name}' has {len(self.elements)} elements for {result}, "
                f"which holds {math.prod(shape)}"
            )
        for i, value in enumerate(self.elements):
            if value.type != element:
                raise VerifyException(
                    f"'{self.name}' element {i} has type {value.type}, expected {element} "
                    f"(the element type of {result})"
                )


@irdl_op_definition
class CastOp(IRDLOperation):
    """Upstream `tensor.cast %x : tensor<?x4xf32> to tensor<3x4xf32>`: the same tensor,
    its type refined (a `?` dim made static) or relaxed (a static dim made `?`)."""

    name = "tensor.cast"
    source = operand_def(TensorType)
    dest = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$source attr-dict `:` type($source) `to` type($dest)"

    def verify_(self) -> None:
        source, dest = tensor_type(self.source), tensor_type(self.dest)
        check_element(self.name, "source", source.element_type, "any")
        if source.element_type != dest.element_type:
            raise VerifyException(f"'{self.name}' changes the element type: {source} -> {dest}")
        a, b = source.get_shape(), dest.get_shape()
        if len(a) != len(b):
            raise VerifyException(f"'{self.name}' changes the rank: {source} -> {dest}")
        for axis, (x, y) in enumerate(zip(a, b, strict=True)):
            if DYN not in (x, y) and x != y:
                raise VerifyException(
                    f"'{self.name}' changes static dim {x} to {y} at axis {axis}: "
                    f"{source} -> {dest}"
                )


SHAPE_OPS = (FromElementsOp, CastOp)
