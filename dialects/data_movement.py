"""Data movement ops of the `tensor` dialect: slices and concatenation.

`tensor.extract_slice` keeps upstream MLIR's syntax and meaning: offsets,
sizes and strides per dim, each a constant or an `index` value. Inside a
kernel a slice of an input is a strided view of it (an offset and scaled
strides), so it copies nothing; its bounds are checked when the program runs,
since offsets and sizes may come from values (a loop counter).

`tensor.insert_slice` is the functional slice update: a copy of its
destination with a slice of it replaced by the source (upstream's syntax).
`tensor.pad` surrounds a tensor with a constant (upstream's syntax, whose
region yields the constant).
`tensor.reverse` flips axes (numpy's `flip`); like a slice, it is a view
inside a kernel (a negative stride).
`tensor.concat` joins tensors along an axis (upstream's syntax); the other
dims must agree, checked when the program runs where they are `?`.

They are registered with the dialect's other ops (`dvm.dialects.tensor_dialect`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
    i64,
)
from xdsl.dialects.utils import DynamicIndexList
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dvm.dialects.tensor import (
    DYN,
    check_element,
    check_result_shape,
    fmt_shape,
    int_list,
    tensor_type,
)


def mixed(values: Sequence[int | SSAValue]) -> tuple[list[int], list[SSAValue]]:
    """A list of constants and `index` values as upstream stores it: the static
    list (DYN where a value stands) and the values in order."""
    static = [v if isinstance(v, int) else DYN for v in values]
    return static, [v for v in values if isinstance(v, SSAValue)]


def slice_operands(
    offsets: Sequence[int | SSAValue],
    sizes: Sequence[int | SSAValue],
    strides: Sequence[int | SSAValue],
) -> tuple[list[list[SSAValue]], dict[str, Attribute]]:
    """A slice's `index` operands (offsets, sizes, strides) and its static lists."""
    (so, do), (ss, ds), (st, dt) = mixed(offsets), mixed(sizes), mixed(strides)
    properties: dict[str, Attribute] = {
        "static_offsets": DenseArrayBase.from_list(i64, so),
        "static_sizes": DenseArrayBase.from_list(i64, ss),
        "static_strides": DenseArrayBase.from_list(i64, st),
    }
    return [do, ds, dt], properties


def checked_slice_lists(
    op: ExtractSliceOp | InsertSliceOp, shaped: TensorType[Attribute]
) -> list[list[int]]:
    """The static offsets, sizes and strides of the slice `op` makes of `shaped` (its
    source, or an insert's destination), after the checks the verifier makes: one
    entry per dim, an `index` operand per `?`, and what the constants decide."""
    shape = shaped.get_shape()
    lists = {
        "offsets": (op.static_offsets.get_values(), op.offsets),
        "sizes": (op.static_sizes.get_values(), op.sizes),
        "strides": (op.static_strides.get_values(), op.strides),
    }
    for what, (static, dynamic) in lists.items():
        if len(static) != len(shape):
            raise VerifyException(
                f"'{op.name}' has {len(static)} {what} for rank-{len(shape)} {shaped}"
            )
        if static.count(DYN) != len(dynamic):
            raise VerifyException(
                f"'{op.name}' {what} have {static.count(DYN)} dynamic entries "
                f"but {len(dynamic)} index operands"
            )
    offsets, sizes, strides = (list(lists[k][0]) for k in ("offsets", "sizes", "strides"))
    for axis, (dim, o, n, s) in enumerate(zip(shape, offsets, sizes, strides, strict=True)):
        check_static_bounds(op.name, shaped, axis, dim, o, n, s)
    return [offsets, sizes, strides]


def check_static_bounds(
    name: str, shaped: TensorType[Attribute], axis: int, dim: int, o: int, n: int, s: int
) -> None:
    """What the constants already decide: no negative offset or size, a stride of at
    least 1, and a slice inside a static dim. (The type is printed only for a message:
    xDSL prints one in some 1,000 bytecodes.)"""
    fault = ""
    if o != DYN and o < 0:
        fault = f"offset {o} is negative"
    elif n != DYN and n < 0:
        fault = f"size {n} is negative"
    elif s != DYN and s < 1:
        fault = f"stride {s} is not positive"
    elif DYN not in (dim, o, n, s) and (o + (n - 1) * s + 1 if n else o) > dim:
        fault = f"slice [offset {o}, size {n}, stride {s}] does not fit in dim {dim}"
    if fault:
        raise VerifyException(f"'{name}' {fault} at axis {axis} of {shaped}")


@irdl_op_definition
class ExtractSliceOp(IRDLOperation):
    """Upstream `tensor.extract_slice %t[offsets] [sizes] [strides] : T to R`.

    Result element `i` along a dim is source element `offset + i * stride`.
    The result has the source's rank (no rank-reducing form: a
    `collapse_shape` drops unit dims)."""

    name = "tensor.extract_slice"
    source = operand_def(TensorType)
    offsets = var_operand_def(IndexType)
    sizes = var_operand_def(IndexType)
    strides = var_operand_def(IndexType)
    static_offsets = prop_def(DenseArrayBase.constr(i64))
    static_sizes = prop_def(DenseArrayBase.constr(i64))
    static_strides = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    custom_directives = (DynamicIndexList,)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$source custom<DynamicIndexList>($offsets, $static_offsets) "
        "custom<DynamicIndexList>($sizes, $static_sizes) "
        "custom<DynamicIndexList>($strides, $static_strides) "
        "attr-dict `:` type($source) `to` type($result)"
    )

    def __init__(
        self,
        source: SSAValue | Operation,
        offsets: Sequence[int | SSAValue],
        sizes: Sequence[int | SSAValue],
        strides: Sequence[int | SSAValue],
        result_type: TensorType[Attribute],
    ):
        lists, properties = slice_operands(offsets, sizes, strides)
        super().__init__(
            operands=[source, *lists], result_types=[result_type], properties=properties
        )

    def verify_(self) -> None:
        source, result = tensor_type(self.source), tensor_type(self.result)
        check_element(self.name, "source", source.element_type, "any")
        if source.element_type != result.element_type:
            raise VerifyException(f"'{self.name}' changes the element type: {source} -> {result}")
        _, sizes, _ = checked_slice_lists(self, source)
        check_result_shape(self.name, sizes, result)


@irdl_op_definition
class InsertSliceOp(IRDLOperation):
    """Upstream `tensor.insert_slice %s into %d[offsets] [sizes] [strides] : S into D`:
    a copy of `%d` whose slice (as `extract_slice` would take it) is `%s`. The
    source has the sizes (no rank-reducing form); the result has the destination's
    type."""

    name = "tensor.insert_slice"
    DEST: ClassVar = VarConstraint("DEST", base(TensorType))
    source = operand_def(TensorType)
    dest = operand_def(DEST)
    offsets = var_operand_def(IndexType)
    sizes = var_operand_def(IndexType)
    strides = var_operand_def(IndexType)
    static_offsets = prop_def(DenseArrayBase.constr(i64))
    static_sizes = prop_def(DenseArrayBase.constr(i64))
    static_strides = prop_def(DenseArrayBase.constr(i64))
    result = result_def(DEST)
    traits = traits_def(Pure())
    custom_directives = (DynamicIndexList,)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$source `into` $dest "
        "custom<DynamicIndexList>($offsets, $static_offsets) "
        "custom<DynamicIndexList>($sizes, $static_sizes) "
        "custom<DynamicIndexList>($strides, $static_strides) "
        "attr-dict `:` type($source) `into` type($dest)"
    )

    def __init__(
        self,
        source: SSAValue | Operation,
        dest: SSAValue | Operation,
        offsets: Sequence[int | SSAValue],
        sizes: Sequence[int | SSAValue],
        strides: Sequence[int | SSAValue],
    ):
        lists, properties = slice_operands(offsets, sizes, strides)
        dest_value = SSAValue.get(dest)
        super().__init__(
            operands=[source, dest_value, *lists],
            result_types=[dest_value.type],
            properties=properties,
        )

    def verify_(self) -> None:
        source, dest = tensor_type(self.source), tensor_type(self.dest)
        check_element(self.name, "destination", dest.element_type, "any")
        if source.element_type != dest.element_type:
            raise VerifyException(f"'{self.name}' changes the element type: {source} into {dest}")
        _, sizes, _ = checked_slice_lists(self, dest)
        got = source.get_shape()
        if len(got) != len(sizes) or any(
            DYN not in (g, n) and g != n for g, n in zip(got, sizes, strict=True)
        ):
            raise VerifyException(
                f"'{self.name}' source {source} does not have the sizes "
                f"[{', '.join('?' if n == DYN else str(n) for n in sizes)}]"
            )


@irdl_op_definition
class PadOp(IRDLOperation):
    """Upstream `tensor.pad %t low[..] high[..] { ^bb0(%i: index, ...): tensor.yield %c : T }
    : S to R`: `%t` with `low` elements of the constant `%c` before it along each
    dim and `high` after (numpy's `pad` with a constant). The region must yield an
    `arith.constant` (no pad that varies by position)."""

    name = "tensor.pad"
    source = operand_def(TensorType)
    low = var_operand_def(IndexType)
    high = var_operand_def(IndexType)
    static_low = prop_def(DenseArrayBase.constr(i64))
    static_high = prop_def(DenseArrayBase.constr(i64))
    region = region_def("single_block")
    result = result_def(TensorType)
    traits = traits_def(Pure())
    custom_directives = (DynamicIndexList,)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    assembly_format = (
        "$source `low` `` custom<DynamicIndexList>($low, $static_low) "
        "`high` `` custom<DynamicIndexList>($high, $static_high) "
        "$region attr-dict `:` type($source) `to` type($result)"
    )

    def padding(self) -> arith.ConstantOp:
        """The constant the region yields (checked by the verifier)."""
        last = self.region.block.last_op
        assert last is not None and last.operands
        owner = last.operands[0].owner
        assert isinstance(owner, arith.ConstantOp)
        return owner

    def padding_value(self) -> int | float:
        """The padding as a number of the element type (an unsigned one wrapped)."""
        value = self.padding().value
        assert isinstance(value, IntegerAttr | FloatAttr)
        raw = value.value.data
        element = tensor_type(self.source).element_type
        if isinstance(element, IntegerType) and element.signedness.data == Signedness.UNSIGNED:
            return int(raw) % (1 << element.width.data)
        return raw

    def verify_(self) -> None:
        source, result = tensor_type(self.source), tensor_type(self.result)
        check_element(self.name, "source", source.element_type, "any")
        if source.element_type != result.element_type:
            raise VerifyException(f"'{self.name}' changes the element type: {source} -> {result}")
        shape = source.get_shape()
        expected = []
        for what, static, dynamic in (
            ("low", self.static_low.get_values(), self.low),
            ("high", self.static_high.get_values(), self.high),
        ):
            if len(static) != len(shape) or static.count(DYN) != len(dynamic):
                raise VerifyException(
                    f"'{self.name}' {what} has {len(static)} entries ({len(dynamic)} values) "
                    f"for rank-{len(shape)} {source}"
                )
            if any(p < 0 and p != DYN for p in static):
                raise VerifyException(f"'{self.name}' {what} pads {list(static)} are negative")
        lows, highs = self.static_low.get_values(), self.static_high.get_values()
        for dim, lo, hi in zip(shape, lows, highs, strict=True):
            expected.append(DYN if DYN in (dim, lo, hi) else lo + dim + hi)
        check_result_shape(self.name, expected, result)
        self.verify_region(source)

    def verify_region(self, source: TensorType[Attribute]) -> None:
        block = self.region.block
        if len(block.args) != source.get_num_dims() or any(
            not isinstance(a.type, IndexType) for a in block.args
        ):
            raise VerifyException(f"'{self.name}' region takes one index per dim of {source}")
        last = block.last_op
        values = list(last.operands) if last is not None else []
        owner = values[0].owner if len(values) == 1 else None
        if not isinstance(owner, arith.ConstantOp) or not same_bits(
            values[0].type, source.element_type
        ):
            raise VerifyException(
                f"'{self.name}' region must yield one arith.constant of type {source.element_type}"
            )


@irdl_op_definition
class ReverseOp(IRDLOperation):
    """`tensor.reverse %x {axes = [1]} : T`: `%x` with the order of its elements along
    each of `axes` reversed (numpy's `flip(x, axes)`)."""

    name = "tensor.reverse"
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    axes = prop_def(ArrayAttr)
    result = result_def(T)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` type($input)"

    def __init__(self, input: SSAValue | Operation, axes: Sequence[int]):
        value = SSAValue.get(input)
        super().__init__(
            operands=[value],
            result_types=[value.type],
            properties={"axes": ArrayAttr([IntegerAttr(a, i64) for a in axes])},
        )

    @property
    def reversed_axes(self) -> list[int]:
        return int_list(self.axes, self.name, "axes")

    def verify_(self) -> None:
        source = tensor_type(self.input)
        check_element(self.name, "input", source.element_type, "any")
        axes = self.reversed_axes
        if len(set(axes)) != len(axes) or not all(0 <= a < source.get_num_dims() for a in axes):
            raise VerifyException(f"'{self.name}' axes {axes} are not distinct axes of {source}")


def same_bits(constant: Attribute, element: Attribute) -> bool:
    """Whether a constant of type `constant` pads elements of type `element`: the same
    type, or for an unsigned one a signless integer of its width (`arith.constant`
    has no unsigned types)."""
    if constant == element:
        return True
    return (
        isinstance(element, IntegerType)
        and element.signedness.data == Signedness.UNSIGNED
        and constant == IntegerType(element.width.data)
    )


def slice_bounds_error(
    label: str,
    shape: Sequence[int],
    offsets: Sequence[int],
    sizes: Sequence[int],
    strides: Sequence[int],
    whole: str = "source",
) -> str | None:
    """Why a slice of a source of `shape` is out of bounds, or None when it fits:
    a negative offset or size, a stride below 1, or elements past the dim's end.
    `whole`: what is sliced (an insert_slice's destination).
    The reference interpreter and the compiled program both check with this."""
    for axis, (dim, o, n, s) in enumerate(zip(shape, offsets, sizes, strides, strict=True)):
        end = o + (n - 1) * s + 1 if n > 0 else o
        if o < 0 or n < 0 or s < 1 or end > dim:
            return (
                f"{label}: slice [offset {o}, size {n}, stride {s}] is out of bounds "
                f"at axis {axis} of a {whole} of shape {fmt_shape(list(shape))}"
            )
    return None


@irdl_op_definition
class ConcatOp(IRDLOperation):
    """Upstream `tensor.concat dim(d) %a, %b, ... : (A, B, ...) -> R`: the inputs
    joined along axis `d` (numpy's `concatenate`). Every other dim is the same in
    all inputs; the result's dim `d` is the sum of theirs."""

    name = "tensor.concat"
    inputs = var_operand_def(TensorType)
    dim = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "`dim` `(` $dim `)` $inputs attr-dict `:` functional-type($inputs, $result)"

    def __init__(self, inputs: Sequence[SSAValue], dim: int, result_type: TensorType[Attribute]):
        super().__init__(
            operands=[inputs], result_types=[result_type], properties={"dim": IntegerAttr(dim, i64)}
        )

    @property
    def axis(self) -> int:
        return self.dim.value.data

    def verify_(self) -> None:
        result = tensor_type(self.result)
        types = [tensor_type(v) for v in self.inputs]
        if not types:
            raise VerifyException(f"'{self.name}' needs at least one input")
        check_element(self.name, "result", result.element_type, "any")
        rank = result.get_num_dims()
        if not 0 <= self.axis < rank:
            raise VerifyException(f"'{self.name}' dim({self.axis}) is not an axis of {result}")
        for t in types:
            if t.get_num_dims() != rank or t.element_type != result.element_type:
                raise VerifyException(
                    f"'{self.name}' inputs ({', '.join(map(str, types))}) and result {result} "
                    "differ in rank or element type"
                )
        expected: list[int] = []
        for axis, dims in enumerate(zip(*(t.get_shape() for t in types), strict=True)):
            if axis == self.axis:
                expected.append(DYN if DYN in dims else sum(dims))
                continue
            static = {d for d in dims if d != DYN}
            if len(static) > 1:
                raise VerifyException(
                    f"'{self.name}' inputs ({', '.join(map(str, types))}) differ in dim {axis}, "
                    f"which is not the concatenated one"
                )
            expected.append(static.pop() if static else DYN)
        check_result_shape(self.name, expected, result)


DATA_MOVEMENT_OPS = (ExtractSliceOp, InsertSliceOp, ConcatOp, PadOp, ReverseOp)
