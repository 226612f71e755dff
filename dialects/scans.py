"""Reductions and scans of the `tensor` dialect beyond `tensor.reduce_<kind>`.

- `tensor.reduce_any` and `tensor.reduce_all` reduce `i1` tensors with the syntax
  of the other reductions (`{axes = [...], keepdims = false}`): numpy's `np.any`
  and `np.all`. Inside a kernel they are the max and the min of the booleans.
- `tensor.argmax` and `tensor.argmin` along one axis: the first index of the
  largest (smallest) element, the first NaN if there is one, as numpy's.
- `tensor.cumsum` and `tensor.cumprod` along one axis, optionally exclusive
  (element i combines the elements before i) and reversed (from the end).
- `tensor.top_k` along one axis with a constant k: the k largest elements in
  descending order and their indices, ties by the lower index first.

They are registered with the dialect's other ops (`dvm.dialects.tensor_dialect`);
`tile.scan`, the tile op a cumsum or cumprod kernel runs, with the tile dialect's.
"""

from __future__ import annotations

from abc import ABC
from typing import ClassVar

from xdsl.dialects.builtin import BoolAttr, IntegerAttr, IntegerType, StringAttr, TensorType, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dvm.dialects.tensor import (
    DYN,
    ReduceOp,
    check_element,
    check_result_shape,
    is_int,
    tensor_type,
)
from dvm.dialects.tile import TileType


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


def flag(attr: BoolAttr | None) -> bool:
    return attr is not None and bool(attr.value.data)


def checked_axis(op_name: str, axis: int, source: TensorType[Attribute]) -> int:
    rank = len(source.get_shape())
    if not 0 <= axis < rank:
        raise VerifyException(f"'{op_name}' axis {axis} is out of range for {source} (rank {rank})")
    return axis


def check_index_type(op_name: str, role: str, t: Attribute) -> None:
    """Indices are `i32` or `i64`."""
    if not (is_int(t) and isinstance(t, IntegerType) and t.width.data in (32, 64)):
        raise VerifyException(f"'{op_name}' {role} has element type {t}, expected i32 or i64")
    if t.signedness.data.name != "SIGNLESS":
        raise VerifyException(f"'{op_name}' {role} has element type {t}, expected i32 or i64")


class ArgReduceOp(IRDLOperation, ABC):
    """`tensor.argmax %x {axis = 1, keepdims = false} : tensor<?x?xf32> -> tensor<?xi64>`."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr)
    keepdims = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @property
    def reduced_axis(self) -> int:
        return self.axis.value.data

    @property
    def keeps_dims(self) -> bool:
        return flag(self.keepdims)

    def verify_(self) -> None:
        source, result = tensor_type(self.input), tensor_type(self.result)
        check_element(self.name, "operand", source.element_type, "any")
        check_index_type(self.name, "result", result.element_type)
        axis = checked_axis(self.name, self.reduced_axis, source)
        shape = source.get_shape()
        if shape[axis] == 0:
            raise VerifyException(f"'{self.name}' reduces the empty axis {axis} of {source}")
        if self.keeps_dims:
            expected = [1 if i == axis else d for i, d in enumerate(shape)]
        else:
            expected = [d for i, d in enumerate(shape) if i != axis]
        check_result_shape(self.name, expected, result)


@irdl_op_definition
class ArgMaxOp(ArgReduceOp):
    """The first index of the largest element (of the first NaN, if any)."""

    name = "tensor.argmax"


@irdl_op_definition
class ArgMinOp(ArgReduceOp):
    """The first index of the smallest element (of the first NaN, if any)."""

    name = "tensor.argmin"


class ScanOp(IRDLOperation, ABC):
    """`tensor.cumsum %x {axis = 1, exclusive = false, reverse = false} : T -> T`."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr)
    exclusive = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    reverse = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    @property
    def scan_axis(self) -> int:
        return self.axis.value.data

    @property
    def is_exclusive(self) -> bool:
        return flag(self.exclusive)

    @property
    def is_reversed(self) -> bool:
        return flag(self.reverse)

    def verify_(self) -> None:
        source, result = tensor_type(self.input), tensor_type(self.result)
        check_element(self.name, "operand", source.element_type, "numeric")
        if source.element_type != result.element_type:
            raise VerifyException(f"'{self.name}' changes the element type: {source} -> {result}")
        checked_axis(self.name, self.scan_axis, source)
        check_result_shape(self.name, source.get_shape(), result)


@irdl_op_definition
class CumSumOp(ScanOp):
    """Running sums along the axis (f16 and bf16 accumulate in f32)."""

    name = "tensor.cumsum"


@irdl_op_definition
class CumProdOp(ScanOp):
    """Running products along the axis (f16 and bf16 accumulate in f32)."""

    name = "tensor.cumprod"


@irdl_op_definition
class TopKOp(IRDLOperation):
    """`%v, %i = tensor.top_k %x {k = 2} : tensor<?x8xf32> -> tensor<?x2xf32>, tensor<?x2xi64>`.

    Along `axis` (default the last), the k largest elements in descending
    order and their indices; equal elements by the lower index first, NaN
    above every number (a stable argsort of -x)."""

    name = "tensor.top_k"
    input = operand_def(TensorType)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    k = prop_def(IntegerAttr)
    axis = opt_prop_def(IntegerAttr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` type($input) `->` type($values) `,` type($indices)"

    @property
    def count(self) -> int:
        return self.k.value.data

    @property
    def along(self) -> int:
        """The axis (the last when `axis` is not given)."""
        if self.axis is not None:
            return self.axis.value.data
        return len(tensor_type(self.input).get_shape()) - 1

    def verify_(self) -> None:
        source = tensor_type(self.input)
        values, indices = tensor_type(self.values), tensor_type(self.indices)
        check_element(self.name, "operand", source.element_type, "any")
        if values.element_type != source.element_type:
            raise VerifyException(f"'{self.name}' changes the element type: {source} -> {values}")
        check_index_type(self.name, "indices", indices.element_type)
        if not source.get_shape():
            raise VerifyException(f"'{self.name}' needs an axis: {source} has rank 0")
        axis = checked_axis(self.name, self.along, source)
        k, dim = self.count, source.get_shape()[axis]
        if k < 0:
            raise VerifyException(f"'{self.name}' k = {k} is negative")
        if dim != DYN and k > dim:
            raise VerifyException(
                f"'{self.name}' k = {k} exceeds dim {dim} at axis {axis} of {source}"
            )
        shape = [k if i == axis else d for i, d in enumerate(source.get_shape())]
        check_result_shape(self.name, shape, values)
        check_result_shape(self.name, shape, indices)


@irdl_op_definition
class TileScanOp(IRDLOperation):
    """`%y, %c2 = tile.scan %x, %c {kind = "sum", dim = 1 : i64, exclusive = false}`:
    the running sum (or product) of a tile along tile dim `dim`, element after element
    from the carry `%c` (the tile's shape with 1 along `dim`), and the carry combined
    with the whole tile, for the next chunk along `dim`."""

    name = "tile.scan"
    source = operand_def(TileType)
    carry = operand_def(TileType)
    result = result_def(TileType)
    carried = result_def(TileType)
    kind = prop_def(StringAttr)
    dim = prop_def(IntegerAttr)
    exclusive = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$source `,` $carry attr-dict `:` type($source) `,` type($carry) `->` "
        "type($result) `,` type($carried)"
    )

    def __init__(self, source: SSAValue, carry: SSAValue, kind: str, dim: int, exclusive: bool):
        super().__init__(
            operands=[source, carry],
            result_types=[source.type, carry.type],
            properties={
                "kind": StringAttr(kind),
                "dim": IntegerAttr(dim, i64),
                "exclusive": BoolAttr.from_bool(exclusive),
            },
        )

    @property
    def along(self) -> int:
        return self.dim.value.data

    @property
    def is_exclusive(self) -> bool:
        return flag(self.exclusive)

    def verify_(self) -> None:
        source, carry = self.source.type, self.carry.type
        assert isinstance(source, TileType) and isinstance(carry, TileType)
        if self.kind.data not in ("sum", "prod"):
            raise VerifyException(f"'{self.name}' kind {self.kind.data!r} is not sum or prod")
        if not 0 <= self.along < source.rank:
            raise VerifyException(f"'{self.name}' dim {self.along} is out of range")
        if source.element_type != carry.element_type or carry.rank != source.rank:
            raise VerifyException(f"'{self.name}' carry {carry} does not match {source}")
        if (self.result.type, self.carried.type) != (source, carry):
            raise VerifyException(f"'{self.name}' results must have the operands' types")


@irdl_op_definition
class TileTopKOp(IRDLOperation):
    """`%v2, %i2 = tile.top_k %x, %at, %v, %i {dim = 1 : i64}`: the carry `%v`, `%i` (the
    k largest so far along tile dim `dim`, and their indices) merged with the tile `%x`,
    whose elements' indices are `%at`: the k largest of both, largest first, NaN above
    every number, equal ones by the lower index (as `tensor.top_k` orders them)."""

    name = "tile.top_k"
    source = operand_def(TileType)
    positions = operand_def(TileType)
    values = operand_def(TileType)
    indices = operand_def(TileType)
    new_values = result_def(TileType)
    new_indices = result_def(TileType)
    dim = prop_def(IntegerAttr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$source `,` $positions `,` $values `,` $indices attr-dict `:` type($source) `,` "
        "type($positions) `,` type($values) `,` type($indices) `->` type($new_values) `,` "
        "type($new_indices)"
    )

    def __init__(
        self, source: SSAValue, positions: SSAValue, values: SSAValue, indices: SSAValue, dim: int
    ):
        super().__init__(
            operands=[source, positions, values, indices],
            result_types=[values.type, indices.type],
            properties={"dim": IntegerAttr(dim, i64)},
        )

    @property
    def along(self) -> int:
        return self.dim.value.data

    def verify_(self) -> None:
        types = [v.type for v in (self.source, self.positions, self.values, self.indices)]
        assert all(isinstance(x, TileType) for x in types)
        source, positions, values, indices = types
        assert isinstance(source, TileType) and isinstance(positions, TileType)
        assert isinstance(values, TileType) and isinstance(indices, TileType)
        if not 0 <= self.along < source.rank:
            raise VerifyException(f"'{self.name}' dim {self.along} is out of range")
        if values.element_type != source.element_type or values.rank != source.rank:
            raise VerifyException(f"'{self.name}' values {values} do not match {source}")
        if indices.element_type != positions.element_type or indices.rank != source.rank:
            raise VerifyException(f"'{self.name}' indices {indices} do not match {positions}")
        if (self.new_values.type, self.new_indices.type) != (values, indices):
            raise VerifyException(f"'{self.name}' results must have the carry's types")


SCAN_OPS = (*BOOL_REDUCE_OPS, ArgMaxOp, ArgMinOp, CumSumOp, CumProdOp, TopKOp)
SCAN_TILE_OPS = (TileScanOp, TileTopKOp)
