"""Index ops of the `tensor` dialect and their tile ops: `tensor.iota`, `tensor.take`
and `tensor.take_along_axis`.

`tensor.iota` (StableHLO's iota, with upstream MLIR's dynamic sizes as
operands) is the index along one dim of its result: element `(i0, i1, ...)`
is `i_dim`, converted to the element type as `tensor.convert` would (an
integer type too narrow for it wraps, a float rounds). Inside a kernel it
reads no memory: `tile.iota` computes the global index along one tile dim
from the tile's position.

`tensor.take` is numpy's `take(x, idx, axis)` (the embedding lookup) and
`tensor.take_along_axis` numpy's function of that name. An index must lie in
`[0, dim)`: a negative one does not count from the end, and one out of range is
an error naming the op and the index when the program runs. Inside a kernel
both are an indexed load (`tile.take`): the source is read through a view
whose last dim is the one indexed.

`tensor.scatter_add` is numpy's `add.at` along an axis on a copy of its base. It
is a kernel of its own: the base is copied into the result, then the updates
are added in order by an indexed store (`tile.scatter_add`).

They are registered with the dialects' other ops (`dvm.dialects.tensor_dialect`,
`dvm.dialects.tile_dialect`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, TensorType, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dvm.dialects.tensor import (
    DYN,
    broadcast_static,
    check_element,
    check_result_shape,
    fmt_shape,
    tensor_type,
)
from dvm.dialects.tile import TileType, View, ViewOp, parse_view


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


PIECE_SIZES = "dvm.piece_sizes"
"""On a `tile.iota` or `tile.broadcast` of a piece of a fused concat or pad: the
sizes of the piece's dims, which its tiles' extents follow, where the kernel's axes
are the whole result's."""


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


OP_LABEL = "dvm.op"
"""On a `tile.take`: the op it comes from, as errors name it (`file:line:col: %y = op`)."""
OP_AXIS = "dvm.axis"
"""On a `tile.take`: the source's dim it indexes (errors name it)."""
INDEX_WIDTHS = (32, 64)
"""The integer widths an index tensor may have."""


class TakeBase(IRDLOperation):
    """`%y = tensor.take %x, %idx dim(0) : (tensor<?x?xf32>, tensor<?xi32>) -> ...`:
    a source of any element type, an index tensor of i32 or i64."""

    source = operand_def(TensorType)
    indices = operand_def(TensorType)
    dimension = prop_def(IntegerAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(self, source: SSAValue, indices: SSAValue, dimension: int, result_type: Attribute):
        super().__init__(
            operands=[source, indices],
            result_types=[result_type],
            properties={"dimension": IntegerAttr(dimension, i64)},
        )

    @property
    def dim(self) -> int:
        return self.dimension.value.data

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.source)
        printer.print_string(", ")
        printer.print_operand(self.indices)
        printer.print_string(f" dim({self.dim})")
        printer.print_op_attributes(self.attributes)
        printer.print_string(f" : ({self.source.type}, {self.indices.type}) -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> TakeBase:
        source = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        indices = parser.parse_unresolved_operand()
        dimension = parse_dimension(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        parser.parse_punctuation("->")
        result_type = parser.parse_type()
        if len(types) != 2:
            parser.raise_error(f"{cls.name} takes two operands")
        x = parser.resolve_operand(source, types[0])
        op = cls(x, parser.resolve_operand(indices, types[1]), dimension, result_type)
        op.attributes.update(attrs)
        return op

    def expected_shape(self, source: list[int], indices: list[int]) -> list[int]:
        raise NotImplementedError

    def verify_(self) -> None:
        source, indices, result = (tensor_type(v) for v in (self.source, self.indices, self.result))
        check_element(self.name, "source", source.element_type, "any")
        check_index_element(self.name, indices.element_type)
        if source.element_type != result.element_type:
            raise VerifyException(f"'{self.name}' changes the element type: {source} -> {result}")
        rank = len(source.get_shape())
        if not 0 <= self.dim < rank:
            raise VerifyException(
                f"'{self.name}' dim {self.dim} is out of range for {source} (rank {rank})"
            )
        expected = self.expected_shape(list(source.get_shape()), list(indices.get_shape()))
        check_result_shape(self.name, expected, result)


@irdl_op_definition
class TakeOp(TakeBase):
    """numpy `take(x, idx, axis=dim)`: the result's dims are the source's before `dim`,
    the index tensor's, then the source's after `dim` (an embedding lookup: table
    [V, D], ids [B, S] -> [B, S, D])."""

    name = "tensor.take"

    def expected_shape(self, source: list[int], indices: list[int]) -> list[int]:
        return [*source[: self.dim], *indices, *source[self.dim + 1 :]]


@irdl_op_definition
class TakeAlongAxisOp(TakeBase):
    """numpy `take_along_axis(x, idx, axis=dim)`: an index tensor of the source's rank;
    along `dim` the result has the index tensor's size, the other dims broadcast."""

    name = "tensor.take_along_axis"

    def expected_shape(self, source: list[int], indices: list[int]) -> list[int]:
        if len(indices) != len(source):
            raise VerifyException(
                f"'{self.name}' indices of rank {len(indices)} for a source of rank "
                f"{len(source)}: they must have the same rank"
            )
        others = [s for d, s in enumerate(source) if d != self.dim]
        index_others = [s for d, s in enumerate(indices) if d != self.dim]
        shape = broadcast_static(self.name, [others, index_others])
        shape.insert(self.dim, indices[self.dim])
        return shape


@irdl_op_definition
class ScatterAddOp(IRDLOperation):
    """`%g = tensor.scatter_add %base, %idx, %upd dim(0) : (tensor<?x?xf32>, tensor<?xi32>,
    tensor<?x?xf32>) -> tensor<?x?xf32>`: numpy `add.at` along `dim` on a copy of
    `base` (an embedding's gradient: rows of `upd` added into the rows `idx` names,
    duplicates accumulating). `upd` has `take`'s result shape for `base` and `idx`."""

    name = "tensor.scatter_add"
    base = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    dimension = prop_def(IntegerAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure())

    def __init__(
        self,
        base: SSAValue,
        indices: SSAValue,
        updates: SSAValue,
        dimension: int,
        result_type: Attribute | None = None,
    ) -> None:
        super().__init__(
            operands=[base, indices, updates],
            result_types=[result_type or base.type],
            properties={"dimension": IntegerAttr(dimension, i64)},
        )

    @property
    def dim(self) -> int:
        return self.dimension.value.data

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_operand)
        printer.print_string(f" dim({self.dim})")
        printer.print_op_attributes(self.attributes)
        types = ", ".join(str(v.type) for v in self.operands)
        printer.print_string(f" : ({types}) -> {self.result.type}")

    @classmethod
    def parse(cls, parser: Parser) -> ScatterAddOp:
        operands = parser.parse_comma_separated_list(
            parser.Delimiter.NONE, parser.parse_unresolved_operand
        )
        dimension = parse_dimension(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        parser.parse_punctuation("->")
        pos = parser.pos
        result_type = parser.parse_type()
        if len(operands) != 3 or len(types) != 3:
            parser.raise_error(f"{cls.name} takes three operands", pos, parser.pos)
        base, indices, updates = (
            parser.resolve_operand(v, t) for v, t in zip(operands, types, strict=True)
        )
        op = cls(base, indices, updates, dimension, result_type)
        op.attributes.update(attrs)
        return op

    def verify_(self) -> None:
        base, indices, updates, result = (
            tensor_type(v) for v in (self.base, self.indices, self.updates, self.result)
        )
        check_element(self.name, "base", base.element_type, "numeric")
        check_index_element(self.name, indices.element_type)
        if not base.element_type == updates.element_type == result.element_type:
            raise VerifyException(
                f"'{self.name}' base, updates and result must have one element type: "
                f"{base}, {updates} -> {result}"
            )
        shape = list(base.get_shape())
        if not 0 <= self.dim < len(shape):
            raise VerifyException(
                f"'{self.name}' dim {self.dim} is out of range for {base} (rank {len(shape)})"
            )
        a = self.dim
        expected = [*shape[:a], *indices.get_shape(), *shape[a + 1 :]]
        got = updates.get_shape()
        agree = len(got) == len(expected) and all(
            DYN in (g, e) or g == e for g, e in zip(got, expected, strict=True)
        )
        if not agree:
            raise VerifyException(
                f"'{self.name}' updates {updates} do not have the shape "
                f"{fmt_shape(expected)} of a take of {base} by {indices}"
            )
        check_result_shape(self.name, shape, result)


def check_index_element(op_name: str, element: Attribute) -> None:
    """Indices are i32, i64 or `index` (upstream's, which is i64 on the VM)."""
    if isinstance(element, IndexType):
        return
    if not (isinstance(element, IntegerType) and element.width.data in INDEX_WIDTHS):
        raise VerifyException(
            f"'{op_name}' indices have element type {element}, expected i32, i64 or index"
        )


def index_error(label: str, indices: np.ndarray, size: int, axis: int) -> str | None:
    """Why `indices` cannot index an axis of `size` (the first one out of range, in
    order), or None. Every level checks with this."""
    if indices.size == 0:
        return None
    bad = (indices < 0) | (indices >= size)
    if not bad.any():
        return None
    first = int(indices.reshape(-1)[int(np.argmax(bad.reshape(-1)))])
    return f"{label}: index {first} is out of range for axis {axis} of size {size}"


@irdl_op_definition
class TileTakeOp(ViewOp):
    """`%y = tile.take %x[%idx] offset .. sizes [..] .. : tensor<..>, !tile.tile<..> ->
    !tile.tile<..>`: an indexed load. The view's last dim is the source's indexed dim
    (walked whole); element `e` of the result is the view's element `(e, idx[e])`
    (the index tile broadcasts to the result's), and an index outside the dim is an
    error naming `dvm.op`."""

    name = "tile.take"
    source = operand_def(TensorType)
    indices = operand_def(TileType)
    result = result_def(TileType)

    def __init__(self, source: SSAValue, indices: SSAValue, result_type: TileType, view: View):
        super().__init__(
            operands=[source, indices], result_types=[result_type], properties=view.properties()
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.source)
        printer.print_string("[")
        printer.print_operand(self.indices)
        printer.print_string("]")
        self.print_view(printer)
        printer.print_op_attributes(self.attributes)
        printer.print_string(f" : {self.source.type}, {self.indices.type} -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> TileTakeOp:
        source = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        indices = parser.parse_unresolved_operand()
        parser.parse_punctuation("]")
        view = parse_view(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        source_type = parser.parse_type()
        parser.parse_punctuation(",")
        indices_type = parser.parse_type()
        parser.parse_punctuation("->")
        pos = parser.pos
        result_type = parser.parse_type()
        if not isinstance(result_type, TileType):
            parser.raise_error("tile.take makes a !tile.tile", pos, parser.pos)
        x = parser.resolve_operand(source, source_type)
        op = cls(x, parser.resolve_operand(indices, indices_type), result_type, view)
        op.attributes.update(attrs)
        return op

    def verify_(self) -> None:
        assert isinstance(self.result.type, TileType)
        self.verify_view(self.result.type.rank + 1)


@irdl_op_definition
class TileScatterAddOp(ViewOp):
    """`tile.scatter_add %u[%idx], %out offset .. sizes [..] .. : !tile.tile<..>,
    !tile.tile<..>, tensor<..>`: an indexed store that adds. The view's last dim is the
    destination's indexed dim (walked whole); element `e` of `%u` is added to the
    view's element `(e, idx[e])` (the index tile broadcasts to `%u`'s), in order, so
    updates naming one element accumulate as numpy's `add.at` adds them; an index
    outside the dim is an error naming `dvm.op`."""

    name = "tile.scatter_add"
    value = operand_def(TileType)
    indices = operand_def(TileType)
    dest = operand_def(TensorType)

    def __init__(self, value: SSAValue, indices: SSAValue, dest: SSAValue, view: View):
        super().__init__(operands=[value, indices, dest], properties=view.properties())

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.value)
        printer.print_string("[")
        printer.print_operand(self.indices)
        printer.print_string("], ")
        printer.print_operand(self.dest)
        self.print_view(printer)
        printer.print_op_attributes(self.attributes)
        types = (self.value.type, self.indices.type, self.dest.type)
        printer.print_string(" : " + ", ".join(str(t) for t in types))

    @classmethod
    def parse(cls, parser: Parser) -> TileScatterAddOp:
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        indices = parser.parse_unresolved_operand()
        parser.parse_punctuation("]")
        parser.parse_punctuation(",")
        dest = parser.parse_unresolved_operand()
        view = parse_view(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        if len(types) != 3:
            parser.raise_error("tile.scatter_add takes three types")
        value_type, indices_type, dest_type = types
        op = cls(
            parser.resolve_operand(value, value_type),
            parser.resolve_operand(indices, indices_type),
            parser.resolve_operand(dest, dest_type),
            view,
        )
        op.attributes.update(attrs)
        return op

    def verify_(self) -> None:
        assert isinstance(self.value.type, TileType)
        self.verify_view(self.value.type.rank + 1)


INDEX_OPS = (IotaOp, TakeOp, TakeAlongAxisOp, ScatterAddOp)
"""The index ops of the tensor dialect."""
INDEX_TILE_OPS = (TileIotaOp, TileTakeOp, TileScatterAddOp)
"""Their tile ops."""
