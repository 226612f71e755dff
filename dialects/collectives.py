"""Collectives of the `tensor` dialect: one program whose values span the processes
of a group (its *world*), each process holding its own part.

- `tensor.all_reduce %x {kind = "sum"} : T -> T` combines the processes' `%x`
  element by element (`sum`, `max`, `min` or `prod`); every process gets the result.
- `tensor.all_gather %x {axis = 0} : tensor<?x8xf32> -> tensor<?x8xf32>` concatenates
  the processes' `%x` along the axis in rank order: the axis grows by the world size.
- `tensor.reduce_scatter %x {axis = 0, kind = "sum"} : T -> T'` reduces as
  `all_reduce` does and gives the process of rank r the r-th of as many equal parts
  along the axis as there are processes: the axis must divide by the world size.

The world size is known when the program runs, not when it compiles: the dim that
an all-gather or a reduce-scatter changes is `?` in the result type (a static size
there is checked when the program runs). In a world of one process each is the
identity. `sum` and `prod` take numbers, `max` and `min` booleans too.

They are registered with the dialect's other ops (`dvm.dialects.tensor_dialect`).
"""

from __future__ import annotations

from abc import ABC

from xdsl.dialects.builtin import IntegerAttr, StringAttr, TensorType
from xdsl.ir import Attribute
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from dvm.dialects.tensor import DYN, check_element, check_result_shape, tensor_type

REDUCE_KINDS = ("sum", "max", "min", "prod")
"""How an all-reduce or a reduce-scatter combines the processes' elements."""


def checked_kind(op_name: str, kind: StringAttr, element: Attribute) -> str:
    """The reduction's name; booleans reduce only by max (any) and min (all)."""
    name = kind.data
    if name not in REDUCE_KINDS:
        raise VerifyException(f"'{op_name}' kind {name!r} is not one of {', '.join(REDUCE_KINDS)}")
    check_element(op_name, "operand", element, "numeric" if name in ("sum", "prod") else "any")
    return name


class CollectiveOp(IRDLOperation, ABC):
    """A communication step: no kernel holds it (it has side effects on the other
    processes, which wait for it), so it is never fused, moved or removed."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def check_same_element(self) -> TensorType[Attribute]:
        source, result = tensor_type(self.input), tensor_type(self.result)
        if source.element_type != result.element_type:
            raise VerifyException(f"'{self.name}' changes the element type: {source} -> {result}")
        return source

    def check_axis(self, axis: int) -> list[int]:
        """The shape the result has, its axis `?` (a multiple of the world size, or a
        part of it); the axis must be one of the operand's."""
        source = tensor_type(self.input)
        shape = source.get_shape()
        if not 0 <= axis < len(shape):
            raise VerifyException(
                f"'{self.name}' axis {axis} is out of range for {source} (rank {len(shape)})"
            )
        expected = [DYN if i == axis else d for i, d in enumerate(shape)]
        check_result_shape(self.name, expected, tensor_type(self.result))
        return expected


@irdl_op_definition
class AllReduceOp(CollectiveOp):
    """`tensor.all_reduce %x {kind = "sum"} : T -> T`: every process gets the
    element-wise reduction of all processes' `%x`."""

    name = "tensor.all_reduce"
    kind = prop_def(StringAttr)

    @property
    def reduction(self) -> str:
        return self.kind.data

    def verify_(self) -> None:
        source = self.check_same_element()
        checked_kind(self.name, self.kind, source.element_type)
        check_result_shape(self.name, source.get_shape(), tensor_type(self.result))


@irdl_op_definition
class AllGatherOp(CollectiveOp):
    """`tensor.all_gather %x {axis = 0} : tensor<?x8xf32> -> tensor<?x8xf32>`: the
    processes' `%x` concatenated along the axis, rank 0 first."""

    name = "tensor.all_gather"
    axis = prop_def(IntegerAttr)

    @property
    def along(self) -> int:
        return self.axis.value.data

    def verify_(self) -> None:
        source = self.check_same_element()
        check_element(self.name, "operand", source.element_type, "any")
        self.check_axis(self.along)


@irdl_op_definition
class ReduceScatterOp(CollectiveOp):
    """`tensor.reduce_scatter %x {axis = 0, kind = "sum"} : T -> T'`: the reduction of
    all processes' `%x`, of which the process of rank r keeps the r-th part along the
    axis (its size divided by the world size)."""

    name = "tensor.reduce_scatter"
    axis = prop_def(IntegerAttr)
    kind = prop_def(StringAttr)

    @property
    def along(self) -> int:
        return self.axis.value.data

    @property
    def reduction(self) -> str:
        return self.kind.data

    def verify_(self) -> None:
        source = self.check_same_element()
        checked_kind(self.name, self.kind, source.element_type)
        self.check_axis(self.along)


COLLECTIVE_OPS = (AllReduceOp, AllGatherOp, ReduceScatterOp)
