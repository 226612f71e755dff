"""The `tile` dialect: one kernel as per-tile loads, compute and stores.

A `tile.kernel` is what one `tensor.fusion` becomes: a grid of tiles and the
body every tile runs. The kernel's arguments are global tensors (its inputs,
then its outputs). Inside, values are *tiles*: small blocks of a kernel's
iteration domain held in a core's local memory, whose sizes are symbolic
expressions of the shape symbols (`!tile.tile<[16, x_1], f32>`). A tile's
type gives its largest extent; the last tile along an axis may be smaller
(tails are exact).

- `tile.load` / `tile.store` move a tile between global and local memory
  through a strided view; `tile.store` may accumulate (split reductions);
- one compute op per tensor op (`tile.exp`, `tile.add`, ...), with numpy
  broadcasting between tiles of equal rank;
- `tile.reduce_*` reduce tile axes (keeping them, with extent 1);
- `tile.mma` multiplies tiles and accumulates (matmul);
- `tile.for` loops over chunks of an axis inside a tile (e.g. matmul's K).

All expressions (sizes, strides, grid, trip counts) are sympy expressions of
the shape symbols, held in the typed attributes of `dvm.dialects.expr` and
written bare (`grid [ceiling(x_0/t0)]`); the runtime evaluates them once per
shape.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import sympy
from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TensorType,
)
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
)
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    NoTerminator,
    Pure,
    SymbolOpInterface,
)
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.mlir_lexer import MLIRTokenKind

from dvm.dialects import tensor as tensor_dialect
from dvm.dialects.attrs import i64_attr
from dvm.dialects.derived_ops import derived_op
from dvm.dialects.expr import (
    ExprAttr,
    ShapeAttr,
    expr_attr,
    expr_text,
    parse_expression,
    parse_expressions,
    print_expressions,
    shape_attr,
)
from dvm.dialects.launch_checks import verify_launch_checks
from dvm.dialects.tile_checks import verify_element_types, verify_kernel, verify_mma, verify_reduce
from dvm.dialects.tile_type import TileType as TileType


def init_flat(
    op: IRDLOperation,
    operands: Sequence[SSAValue],
    result_types: Sequence[Attribute],
    properties: dict[str, Attribute] | None = None,
    attributes: dict[str, Attribute] | None = None,
    regions: Sequence[Region] = (),
) -> None:
    """Make `op` of its operands, result types, properties, attributes and regions, as
    given (as xDSL's `Operation.create` does; for an op of at most one variadic operand
    or result definition, which needs no segment sizes). IRDL's builder would first
    match each against the op's definition, which costs as much as making the op; the
    kernels' bodies make many."""
    Operation.__init__(
        op,
        operands=operands,
        result_types=result_types,
        properties=properties or {},
        attributes=attributes or {},
        regions=regions,
    )


# --------------------------------------------------------------------------
# The tile type, and the axes of a kernel's tiles
# --------------------------------------------------------------------------


INDEX_SOURCES = ("whole", "grid0", "grid1", "grid2", *(f"loop{i}" for i in range(8)))
"""What picks the tile along a view dim: nothing (the whole dim), a grid axis
(the tile's number along it), or the iteration of an enclosing `tile.for`."""


@irdl_attr_definition
class AxisAttr(ParametrizedAttribute):
    """`#tile.axis<x_0, t0, grid0>`: one dim of a kernel's tiles (its `dvm.axes`):
    the size of the domain axis it stands for, the tile size along it and what
    walks it (an index source)."""

    name = "tile.axis"
    size: ExprAttr
    tile: ExprAttr
    walker: StringAttr

    def __init__(self, size: sympy.Expr | int, tile: sympy.Expr | int, walker: str):
        super().__init__(ExprAttr(size), ExprAttr(tile), StringAttr(walker))

    def verify(self) -> None:
        if self.walker.data not in INDEX_SOURCES:
            raise VerifyException(f"{self.name}: unknown index source {self.walker.data!r}")

    def print_parameters(self, printer: Printer) -> None:
        size, tile = (expr_text(e.data) for e in (self.size, self.tile))
        printer.print_string(f"<{size}, {tile}, {self.walker.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[ExprAttr, ExprAttr, StringAttr]:
        with parser.in_angle_brackets():
            size = parse_expression(parser)
            parser.parse_punctuation(",")
            tile = parse_expression(parser)
            parser.parse_punctuation(",")
            walker = parse_index_source(parser)
        return ExprAttr(size), ExprAttr(tile), StringAttr(walker)


def parse_index_source(parser: AttrParser) -> str:
    return tensor_dialect.parse_keyword(parser, INDEX_SOURCES, "index source")


# --------------------------------------------------------------------------
# Kernels and launches
# --------------------------------------------------------------------------


@irdl_op_definition
class KernelOp(IRDLOperation):
    """A tiled kernel: `grid` gives the number of tiles along each grid axis;
    the body runs once per tile. Arguments are the kernel's global tensors,
    the last `outputs` of them written by the kernel.

        tile.kernel @k vector grid [ceiling(x_0/8)] outputs 1 (%x: tensor<?x?xf32>, %y: ...) {
          ...
        }
    """

    name = "tile.kernel"
    sym_name = prop_def(SymbolNameConstraint())
    kind = prop_def(tensor_dialect.KernelKindAttr)
    grid = prop_def(ShapeAttr)
    outputs = prop_def(IntegerAttr)
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), NoTerminator(), SymbolOpInterface())

    def __init__(
        self,
        name: str,
        kind: tensor_dialect.KernelKind | str,
        grid: Sequence[sympy.Expr | int],
        arg_types: Sequence[Attribute],
        outputs: int,
        attributes: dict[str, Attribute] | None = None,
        body: Region | None = None,
    ):
        properties: dict[str, Attribute] = {
            "sym_name": StringAttr(name),
            "kind": tensor_dialect.KernelKindAttr.of(kind),
            "grid": ShapeAttr(grid),
            "outputs": i64_attr(outputs),
        }
        body = body or Region(Block(arg_types=arg_types))
        init_flat(self, (), (), properties, attributes, [body])

    @property
    def num_outputs(self) -> int:
        return self.outputs.value.data

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.sym_name.data} {self.kind.data.value} grid ")
        print_expressions(printer, self.grid.data)
        printer.print_string(f" outputs {self.num_outputs} (")
        printer.print_list(self.body.block.args, printer.print_block_argument)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name = parser.parse_symbol_name().data
        kind = tensor_dialect.parse_kernel_kind(parser).data
        parser.parse_keyword("grid")
        grid = parse_expressions(parser, parser.Delimiter.SQUARE)
        parser.parse_keyword("outputs")
        outputs = parser.parse_integer(allow_negative=False)
        args = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=True)
        )
        attrs = parse_attrs_before_region(parser)
        return cls(name, kind, grid, [], outputs, attrs, parser.parse_region(args))

    def verify_(self) -> None:
        if not 1 <= len(self.grid.data) <= 3:
            raise VerifyException(f"'{self.name}' grid must have 1 to 3 axes")
        if not 0 <= self.num_outputs <= len(self.body.block.args):
            raise VerifyException(f"'{self.name}' has more outputs than arguments")
        verify_kernel(self)


def parse_attrs_before_region(parser: Parser) -> dict[str, Attribute]:
    """An optional attribute dictionary right before a region: both start
    with `{`, so a `{` that does not open a dictionary followed by the region
    is the region itself (a kernel without attributes)."""
    start = parser.pos
    try:
        attrs = parser.parse_optional_attr_dict()
    except ParseError:
        attrs = None
    if attrs is None or parser._current_token.kind != MLIRTokenKind.L_BRACE:
        parser._resume_from(start)
        return {}
    return attrs


@irdl_op_definition
class LaunchOp(IRDLOperation):
    """Run kernel `@callee` on `inputs`; the results are its freshly allocated
    outputs, of the shapes the kernel's `dvm.shapes` attribute gives."""

    name = "tile.launch"
    callee = prop_def(SymbolRefAttr)
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$callee `(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs)"

    def __init__(
        self,
        callee: str,
        inputs: Sequence[SSAValue],
        output_types: Sequence[Attribute],
        attributes: dict[str, Attribute] | None = None,
    ):
        properties: dict[str, Attribute] = {"callee": SymbolRefAttr(callee)}
        init_flat(self, inputs, output_types, properties, attributes)

    def verify_(self) -> None:
        verify_launch_checks(self.attributes, len(self.inputs))


# --------------------------------------------------------------------------
# Memory: load and store through strided views
# --------------------------------------------------------------------------

ACCUMULATE = ("none", "add", "max", "min")


@dataclass(frozen=True)
class View:
    """A strided view of a global tensor, per dim: size, stride (elements),
    tile size and index source; element (i0, i1, ...) of the view is flat
    element `offset + i0*stride0 + i1*stride1 + ...` of the tensor."""

    offset: sympy.Expr
    sizes: Sequence[sympy.Expr]
    strides: Sequence[sympy.Expr]
    tiles: Sequence[sympy.Expr]
    index: Sequence[str]

    def properties(self) -> dict[str, Attribute]:
        return {
            "offset": expr_attr(self.offset),
            "sizes": shape_attr(self.sizes),
            "strides": shape_attr(self.strides),
            "tiles": shape_attr(self.tiles),
            "index": ArrayAttr([StringAttr(i) for i in self.index]),
        }


VIEW_LISTS = ("sizes", "strides", "tiles")


class ViewOp(IRDLOperation, ABC):
    """Shared by load and store: a strided view of a global tensor, per dim
    its size, stride (elements), tile size and index source, written

        offset 0 sizes [x_0, x_1] strides [x_1, 1] tiles [t0, t1] index [grid0, loop0]
    """

    offset = prop_def(ExprAttr)
    sizes = prop_def(ShapeAttr)
    strides = prop_def(ShapeAttr)
    tiles = prop_def(ShapeAttr)
    index = prop_def(ArrayAttr[StringAttr])

    @property
    def view(self) -> View:
        return View(
            self.offset.data,
            self.sizes.data,
            self.strides.data,
            self.tiles.data,
            [i.data for i in self.index.data],
        )

    def verify_view(self, rank: int) -> None:
        lengths = {len(a.data) for a in (self.sizes, self.strides, self.tiles, self.index)}
        if lengths != {rank}:
            raise VerifyException(
                f"'{self.name}' view needs {rank} sizes, strides, tiles and index sources"
            )
        for source in self.view.index:
            if source not in INDEX_SOURCES:
                raise VerifyException(f"'{self.name}' unknown index source {source!r}")

    def verify_tiles(self, tile: TileType) -> None:
        """The view's tiles are the moved tile's extents (which size it as it runs)."""
        self.verify_view(tile.rank)
        if tuple(self.tiles.data) != tile.extents:
            raise VerifyException(f"'{self.name}' view's tiles must be the tile's extents")

    def print_view(self, printer: Printer) -> None:
        printer.print_string(f" offset {expr_text(self.offset.data)}")
        for name in VIEW_LISTS:
            printer.print_string(f" {name} ")
            print_expressions(printer, getattr(self, name).data)
        printer.print_string(" index [" + ", ".join(self.view.index) + "]")


def parse_view(parser: Parser) -> View:
    """The view as `ViewOp.print_view` writes it."""
    parser.parse_keyword("offset")
    offset = parse_expression(parser)
    sizes, strides, tiles = (parse_view_list(parser, name) for name in VIEW_LISTS)
    parser.parse_keyword("index")
    index = parser.parse_comma_separated_list(
        parser.Delimiter.SQUARE, lambda: parse_index_source(parser)
    )
    return View(offset, sizes, strides, tiles, index)


def parse_view_list(parser: Parser, name: str) -> list[sympy.Expr]:
    parser.parse_keyword(name)
    return parse_expressions(parser, parser.Delimiter.SQUARE)


@irdl_op_definition
class LoadOp(ViewOp):
    """`%t = tile.load %arg offset .. sizes [..] .. : tensor<..> -> !tile.tile<..>`: the
    current tile of a view of a global tensor into local memory."""

    name = "tile.load"
    source = operand_def(TensorType)
    result = result_def(TileType)

    def __init__(self, source: SSAValue, result_type: TileType, view: View):
        init_flat(self, [source], [result_type], view.properties())

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.source)
        self.print_view(printer)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.source.type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)

    @classmethod
    def parse(cls, parser: Parser) -> LoadOp:
        source = parser.parse_unresolved_operand()
        view = parse_view(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        source_type = parser.parse_type()
        parser.parse_punctuation("->")
        pos = parser.pos
        result_type = parser.parse_type()
        if not isinstance(result_type, TileType):
            parser.raise_error("tile.load makes a !tile.tile", pos, parser.pos)
        op = cls(parser.resolve_operand(source, source_type), result_type, view)
        op.attributes.update(attrs)
        return op

    def verify_(self) -> None:
        result = self.result.type
        assert isinstance(result, TileType)
        self.verify_tiles(result)


@irdl_op_definition
class StoreOp(ViewOp):
    """`tile.store %t, %arg offset .. sizes [..] .. [accumulate add]`: write (or
    accumulate: add, max, min) a tile into its place in a global tensor."""

    name = "tile.store"
    value = operand_def(TileType)
    dest = operand_def(TensorType)
    accumulate = opt_prop_def(StringAttr, default_value=StringAttr("none"))

    def __init__(self, value: SSAValue, dest: SSAValue, view: View, accumulate: str = "none"):
        props = view.properties()
        if accumulate != "none":
            props["accumulate"] = StringAttr(accumulate)
        init_flat(self, [value, dest], [], props)

    @property
    def accumulation(self) -> str:
        return self.accumulate.data if self.accumulate else "none"

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.value)
        printer.print_string(", ")
        printer.print_operand(self.dest)
        self.print_view(printer)
        if self.accumulation != "none":
            printer.print_string(f" accumulate {self.accumulation}")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.value.type)
        printer.print_string(", ")
        printer.print_attribute(self.dest.type)

    @classmethod
    def parse(cls, parser: Parser) -> StoreOp:
        value = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        dest = parser.parse_unresolved_operand()
        view = parse_view(parser)
        accumulate = "none"
        if parser.parse_optional_keyword("accumulate"):
            accumulate = tensor_dialect.parse_keyword(parser, ACCUMULATE[1:], "accumulation")
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        value_type = parser.parse_type()
        parser.parse_punctuation(",")
        dest_type = parser.parse_type()
        resolved = parser.resolve_operand(value, value_type)
        op = cls(resolved, parser.resolve_operand(dest, dest_type), view, accumulate)
        op.attributes.update(attrs)
        return op

    def verify_(self) -> None:
        value = self.value.type
        assert isinstance(value, TileType)
        self.verify_tiles(value)
        if self.accumulation not in ACCUMULATE:
            raise VerifyException(f"'{self.name}' accumulate must be one of {ACCUMULATE}")


# --------------------------------------------------------------------------
# Compute on tiles: one op per tensor op, derived from the tensor dialect
# --------------------------------------------------------------------------


class TileUnaryOp(IRDLOperation, ABC):
    T: ClassVar = VarConstraint("T", base(TileType))
    input = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input)"

    def __init__(self, input: SSAValue):
        init_flat(self, [input], [input.type])


class TileElementwiseOp(IRDLOperation, ABC):
    """Elementwise on tiles of one rank, numpy broadcasting between them."""

    result = result_def(TileType)
    traits = traits_def(Pure())

    def verify_(self) -> None:
        ranks = {v.type.rank for v in self.operands if isinstance(v.type, TileType)}
        assert isinstance(self.result.type, TileType)
        if ranks != {self.result.type.rank}:
            raise VerifyException(f"'{self.name}' operands and result must have one rank")


class TileCastOp(TileElementwiseOp, ABC):
    input = operand_def(TileType)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: Attribute):
        init_flat(self, [input], [result_type])


class TileBinaryOp(TileElementwiseOp, ABC):
    lhs = operand_def(TileType)
    rhs = operand_def(TileType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    SAME_TYPE: ClassVar[bool] = True
    """Whether the result has the operands' element type (else i1: a comparison)."""

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: Attribute):
        init_flat(self, [lhs, rhs], [result_type])

    def verify_(self) -> None:
        super().verify_()
        verify_element_types(self, self.SAME_TYPE)


def mirror(source: type[IRDLOperation], base: type[IRDLOperation]) -> type[IRDLOperation]:
    """The tile op for a tensor op: same name in the `tile` dialect."""
    short = source.name.split(".", 1)[1]
    namespace: dict[str, object] = {
        "name": f"tile.{short}",
        "__doc__": f"`{source.name}` on tiles.",
    }
    if issubclass(source, tensor_dialect.BinaryOp):
        namespace["SAME_TYPE"] = source.SPEC.same_type
        namespace["__annotations__"] = {"SAME_TYPE": ClassVar[bool]}
    return derived_op(base, source.__name__, namespace)


def base_for(op: type[IRDLOperation]) -> type[IRDLOperation]:
    """The tile op's base: as the tensor op, one type written for a unary op whose result
    has the operand's type, both for the others (isfinite); binary ops broadcast."""
    if issubclass(op, tensor_dialect.BinaryOp):
        return TileBinaryOp
    return TileUnaryOp if issubclass(op, tensor_dialect.UnaryOp) else TileCastOp


MIRRORED: dict[type[Operation], type[IRDLOperation]] = {
    op: mirror(op, base_for(op)) for op in (*tensor_dialect.UNARY_OPS, *tensor_dialect.BINARY_OPS)
}
"""Tensor op class -> its tile op class."""

ConvertOp = mirror(tensor_dialect.ConvertOp, TileCastOp)
MIRRORED[tensor_dialect.ConvertOp] = ConvertOp


@irdl_op_definition
class SelectOp(TileElementwiseOp):
    name = "tile.select"
    condition = operand_def(TileType)
    true_value = operand_def(TileType)
    false_value = operand_def(TileType)
    assembly_format = (
        "$condition `,` $true_value `,` $false_value attr-dict `:` "
        "functional-type(operands, results)"
    )

    def __init__(self, c: SSAValue, a: SSAValue, b: SSAValue, result_type: Attribute):
        init_flat(self, [c, a, b], [result_type])

    def verify_(self) -> None:
        super().verify_()
        verify_element_types(self, same_type=True)


MIRRORED[tensor_dialect.SelectOp] = SelectOp


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A tile filled with one value: `tile.constant 5.0e-01 : !tile.tile<[1, 1], f32>`.
    The value may be an expression of the shape symbols (`#dvm.expr<x_1>`, e.g.
    the count a mean divides by), converted to the element type."""

    name = "tile.constant"
    value = prop_def(FloatAttr | IntegerAttr | ExprAttr)
    result = result_def(TileType)
    traits = traits_def(Pure())
    assembly_format = "$value attr-dict `:` type($result)"

    def __init__(self, value: FloatAttr | IntegerAttr | ExprAttr, result_type: TileType):
        init_flat(self, [], [result_type], {"value": value})


@irdl_op_definition
class BroadcastOp(IRDLOperation):
    """Stretch a tile's extent-1 axes to the current tile's extents along
    the axes where the result type is wider (e.g. before storing a value that
    does not vary along an axis of its output)."""

    name = "tile.broadcast"
    input = operand_def(TileType)
    result = result_def(TileType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, result_type: TileType):
        init_flat(self, [input], [result_type])


class TileReduceOp(IRDLOperation, ABC):
    """Reduce tile axes, keeping them with extent 1."""

    input = operand_def(TileType)
    result = result_def(TileType)
    axes = prop_def(ArrayAttr[IntegerAttr])
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(self, input: SSAValue, axes: Sequence[int], result_type: Attribute):
        super().__init__(
            operands=[input],
            result_types=[result_type],
            properties={"axes": ArrayAttr([i64_attr(a) for a in axes])},
        )

    @property
    def reduced_axes(self) -> list[int]:
        return [a.value.data for a in self.axes.data]

    def verify_(self) -> None:
        verify_reduce(self, self.reduced_axes)


REDUCE_KINDS = ("sum", "max", "min", "prod")
REDUCES: dict[str, type[IRDLOperation]] = {
    kind: derived_op(TileReduceOp, f"Reduce{kind.capitalize()}Op", {"name": f"tile.reduce_{kind}"})
    for kind in REDUCE_KINDS
}


@irdl_op_definition
class MmaOp(IRDLOperation):
    """`%c = tile.mma %a, %b, %acc`: acc + a @ b on tiles (batch axes
    broadcast); `transpose_a`/`transpose_b` swap an operand's last two axes."""

    name = "tile.mma"
    lhs = operand_def(TileType)
    rhs = operand_def(TileType)
    acc = operand_def(TileType)
    result = result_def(TileType)
    transpose_a = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    transpose_b = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$lhs `,` $rhs `,` $acc attr-dict `:` functional-type(operands, results)"

    def __init__(self, a: SSAValue, b: SSAValue, acc: SSAValue, flags: tuple[bool, bool]):
        props: dict[str, Attribute] = {}
        if flags[0]:
            props["transpose_a"] = BoolAttr.from_bool(True)
        if flags[1]:
            props["transpose_b"] = BoolAttr.from_bool(True)
        super().__init__(operands=[a, b, acc], result_types=[acc.type], properties=props)

    @property
    def flags(self) -> tuple[bool, bool]:
        return (
            self.transpose_a is not None and bool(self.transpose_a.value.data),
            self.transpose_b is not None and bool(self.transpose_b.value.data),
        )

    def verify_(self) -> None:
        verify_mma(self)


# --------------------------------------------------------------------------
# Loops inside a tile
# --------------------------------------------------------------------------


@irdl_op_definition
class ForOp(IRDLOperation):
    """`tile.for loop0 to ceiling(x_1/64) (%acc: !tile.tile<..> = %init) {..}`: run
    the body `count` times, carrying values; views indexed by `loopN` take the
    iteration number."""

    name = "tile.for"
    level = prop_def(IntegerAttr)
    count = prop_def(ExprAttr)
    inits = var_operand_def(TileType)
    results_ = var_result_def(TileType)
    body = region_def("single_block")

    def __init__(
        self, level: int, count: sympy.Expr | int, inits: Sequence[SSAValue], body: Region
    ):
        properties: dict[str, Attribute] = {
            "level": i64_attr(level),
            "count": ExprAttr(count),
        }
        init_flat(self, inits, [v.type for v in inits], properties, None, [body])

    def print(self, printer: Printer) -> None:
        printer.print_string(f" loop{self.level.value.data} to {expr_text(self.count.data)} (")
        printer.print_list(
            zip(self.body.block.args, self.inits, strict=True),
            lambda pair: (
                printer.print_block_argument(pair[0]),
                printer.print_string(" = "),
                printer.print_operand(pair[1]),
            ),
        )
        printer.print_string(") ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)

    @classmethod
    def parse(cls, parser: Parser) -> ForOp:
        word = parser.parse_identifier(context_msg=" as the loop level (loopN)")
        if not word.startswith("loop") or not word[4:].isdigit():
            parser.raise_error(f"expected a loop level like loop0, got {word!r}")
        parser.parse_keyword("to")
        count = parse_expression(parser)

        def carried() -> tuple[Parser.Argument, SSAValue]:
            arg = parser.parse_argument(expect_type=True)
            parser.parse_punctuation("=")
            assert arg.type is not None
            return arg, parser.resolve_operand(parser.parse_unresolved_operand(), arg.type)

        pairs = parser.parse_comma_separated_list(parser.Delimiter.PAREN, carried)
        body = parser.parse_region([a for a, _ in pairs])
        return cls(int(word[4:]), count, [v for _, v in pairs], body)

    def verify_(self) -> None:
        if [a.type for a in self.body.block.args] != list(self.result_types):
            raise VerifyException(f"'{self.name}' body must take its carried values' types")
        if [v.type for v in self.inits] != list(self.result_types):
            raise VerifyException(f"'{self.name}' results must have its initial values' types")
        last = self.body.block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException(f"'{self.name}' body must end with tile.yield")
        if [v.type for v in last.values] != list(self.result_types):
            raise VerifyException(f"'{self.name}' body must yield its carried values' types")


@irdl_op_definition
class YieldOp(IRDLOperation):
    name = "tile.yield"
    values = var_operand_def(TileType)
    traits = traits_def(IsTerminator(), Pure(), HasParent(ForOp))
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue):
        init_flat(self, values, [])


Tile = Dialect(
    "tile",
    [
        KernelOp,
        LaunchOp,
        LoadOp,
        StoreOp,
        *MIRRORED.values(),
        ConstantOp,
        BroadcastOp,
        *REDUCES.values(),
        MmaOp,
        ForOp,
        YieldOp,
    ],
    [TileType, AxisAttr],
)
