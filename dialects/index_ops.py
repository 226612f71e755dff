"""Index ops of the `tensor` dialect and their tile ops: `tensor.iota`.

`tensor.iota` (StableHLO's iota, with upstream MLIR's dynamic sizes as
operands) is the index along one dim of its result: element `(i0, i1, ...)`
is `i_dim`, converted to the element type as `tensor.convert` would (an
integer type too narrow for it wraps, a float rounds). Inside a kernel it
reads no memory: `tile.iota` computes the global index along one tile dim
from the tile's position.

They are registered with the dialects' other ops (`dvm.dialects.tensor_dialect`,
`dvm.dialects.tile_dialect`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IndexType, IntegerAttr, TensorType, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dvm.dialects.tensor import DYN, check_element, tensor_type
from dvm.dialects.tile import TileType


def parse_dimension(parser: Parser) -> int:
    """`dim(N)`: the dim an index op works along."""
    parser.parse_keyword("dim")
    parser.parse_punctuation("(")
    dimension = parser.parse_integer(allow_negative=False)
    parser.parse_punctuation(")")
    return dimension


@irdl_op_definition
class IotaOp(IRDLOperation):
    """`%i = tensor.iota dim(1) %n, %m : tensor<?x?xi64>`: element `(i0, i1, ...)` is
    `i1`. One `index` operand per `?` dim of the result, in order (its size)."""

    name = "tensor.iota"
    sizes = var_operand_def(IndexType)
    dimension = prop_def(IntegerAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(
        self, dimension: int, sizes: Sequence[SSAValue | Operation], result_type: Attribute
    ):
        super().__init__(
            operands=[sizes],
            result_types=[result_type],
            properties={"dimension": IntegerAttr(dimension, i64)},
        )

    @property
    def dim(self) -> int:
        return self.dimension.value.data

    def print(self, printer: Printer) -> None:
        printer.print_string(f" dim({self.dim})")
        if self.sizes:
            printer.print_string(" ")
            printer.print_list(self.sizes, printer.print_operand)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> IotaOp:
        dimension = parse_dimension(parser)
        sizes = parser.parse_optional_undelimited_comma_separated_list(
            parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand
        )
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        result_type = parser.parse_type()
        operands = [parser.resolve_operand(s, IndexType()) for s in sizes or []]
        op = cls(dimension, operands, result_type)
        op.attributes.update(attrs)
        return op

    def verify_(self) -> None:
        result = tensor_type(self.result)
        check_element(self.name, "result", result.element_type, "numeric")
        shape = result.get_shape()
        if not 0 <= self.dim < len(shape):
            raise VerifyException(
                f"'{self.name}' dim {self.dim} is out of range for {result} (rank {len(shape)})"
            )
        if shape.count(DYN) != len(self.sizes):
            raise VerifyException(
                f"'{self.name}' result {result} has {shape.count(DYN)} dynamic dims "
                f"but {len(self.sizes)} size operands"
            )


@irdl_op_definition
class TileIotaOp(IRDLOperation):
    """`%t = tile.iota dim(1) : !tile.tile<[t0, t1], i64>`: the global index along tile
    dim 1 (its kernel axis) of each element of the current tile. Reads no memory."""

    name = "tile.iota"
    dimension = prop_def(IntegerAttr)
    result = result_def(TileType)
    traits = traits_def(Pure())

    def __init__(self, dimension: int, result_type: TileType):
        super().__init__(
            result_types=[result_type], properties={"dimension": IntegerAttr(dimension, i64)}
        )

    @property
    def dim(self) -> int:
        return self.dimension.value.data

    def print(self, printer: Printer) -> None:
        printer.print_string(f" dim({self.dim})")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> TileIotaOp:
        dimension = parse_dimension(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        result_type = parser.parse_type()
        if not isinstance(result_type, TileType):
            parser.raise_error("tile.iota makes a !tile.tile", pos, parser.pos)
        op = cls(dimension, result_type)
        op.attributes.update(attrs)
        return op

    def verify_(self) -> None:
        assert isinstance(self.result.type, TileType)
        if not 0 <= self.dim < self.result.type.rank:
            raise VerifyException(f"'{self.name}' dim {self.dim} is out of range")


INDEX_OPS = (IotaOp,)
"""The index ops of the tensor dialect."""
INDEX_TILE_OPS = (TileIotaOp,)
"""Their tile ops."""
