"""Grouped matmul: `tensor.grouped_matmul` and its tile op `tile.gmma`.

    %y = tensor.grouped_matmul %x, %sizes, %w : (tensor<?x?xf32>, tensor<?xi32>,
             tensor<?x?x?xf32>) -> tensor<?x?xf32>
    %y = tensor.grouped_matmul %x, %sizes, %w, %bias : (..., tensor<?x?xf32>) -> ...

The rows of `x` (M x K) are split into consecutive groups, group g holding
`sizes[g]` rows, and group g is multiplied by `w[g]` (w is G x K x N), plus
`bias[g]` when a bias (G x N) is given: a mixture of experts' tokens, sorted by
expert, each through its expert's weights. The result is M x N. The sizes are
data (i32 or i64), not shape: one compiled program serves every split. Rows
past the last group (when the sizes add up to less than M) are zero; a
negative size, or sizes adding up to more than M, is an ExecutionError naming
the op. f16 and bf16 are multiplied in f32, as `tensor.matmul` does.

In a kernel the op is `tile.gmma`: each tile of rows is multiplied by the
weights of the groups its rows belong to, which it learns from the sizes (a
tile of every group's sizes) and from where its rows start, the current tile
of a view of `x`, tiled along its rows (VM instruction `gmma`).

They are registered with the dialects' other ops (`dvm.dialects.tensor_dialect`,
`dvm.dialects.tile_dialect`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IndexType, IntegerType, Signedness, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from dvm.dialects.tensor import DYN, check_element, check_result_shape, tensor_type
from dvm.dialects.tile import TileType, View, ViewOp, parse_view

SIZE_WIDTHS = (32, 64)
"""The group sizes are i32, i64 or `index` (i64 on the VM)."""


def is_size_type(t: Attribute) -> bool:
    return isinstance(t, IndexType) or (
        isinstance(t, IntegerType)
        and t.width.data in SIZE_WIDTHS
        and t.signedness.data == Signedness.SIGNLESS
    )


@irdl_op_definition
class GroupedMatmulOp(IRDLOperation):
    """Rows of `x` in consecutive groups of `sizes[g]` rows, group g times `w[g]`
    (plus `bias[g]`); see the module docstring."""

    name = "tensor.grouped_matmul"
    x = operand_def(TensorType)
    sizes = operand_def(TensorType)
    w = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = (
        "$x `,` $sizes `,` $w (`,` $bias^)? attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        x: SSAValue | Operation,
        sizes: SSAValue | Operation,
        w: SSAValue | Operation,
        result_type: Attribute,
        bias: SSAValue | Operation | None = None,
    ):
        super().__init__(operands=[x, sizes, w, [bias] if bias else []], result_types=[result_type])

    def verify_(self) -> None:
        x, sizes, w = (tensor_type(v) for v in (self.x, self.sizes, self.w))
        result = tensor_type(self.result)
        bias = tensor_type(self.bias) if self.bias is not None else None
        check_element(self.name, "x", x.element_type, "float")
        others = [w, result, *([bias] if bias else [])]
        if any(t.element_type != x.element_type for t in others):
            shown = ", ".join(str(t) for t in (x, w, *([bias] if bias else []), result))
            raise VerifyException(f"'{self.name}' x, w, bias and result differ in type: {shown}")
        if not is_size_type(sizes.element_type):
            raise VerifyException(
                f"'{self.name}' sizes has element type {sizes.element_type}, "
                "expected i32, i64 or index"
            )
        for role, t, rank in (("x", x, 2), ("sizes", sizes, 1), ("w", w, 3), ("bias", bias, 2)):
            if t is not None and len(t.get_shape()) != rank:
                raise VerifyException(f"'{self.name}' {role} must have rank {rank}, got {t}")
        (m, k), (groups,), (wg, wk, n) = x.get_shape(), sizes.get_shape(), w.get_shape()
        agree(self.name, "contraction dims", (x, k), (w, wk))
        agree(self.name, "group counts", (sizes, groups), (w, wg))
        if bias is not None:
            bg, bn = bias.get_shape()
            agree(self.name, "group counts", (w, wg), (bias, bg))
            agree(self.name, "column counts", (w, n), (bias, bn))
        check_result_shape(self.name, [m, n], result)


def agree(name: str, what: str, a: tuple[Attribute, int], b: tuple[Attribute, int]) -> None:
    """Two static dims that must be equal (a `?` is checked at run time)."""
    if DYN not in (a[1], b[1]) and a[1] != b[1]:
        raise VerifyException(f"'{name}' {what} differ: {a[0]} has {a[1]}, {b[0]} has {b[1]}")


@irdl_op_definition
class TileGroupedMmaOp(ViewOp):
    """`%c = tile.gmma %a, %b, %sizes rows %x offset .. index [grid0, whole] : ...`:
    each row of `a` (rows x K) times `b[g]` (b is groups x K x N), g the group of its
    row, the groups being consecutive runs of `sizes` rows (zero past the last one).
    Row i of the tile is row `start + i` of `x`, where the current tile of the view
    of `x` starts along its dim 0 (the rows); that dim's size is the rows the sizes
    must fit."""

    name = "tile.gmma"
    lhs = operand_def(TileType)
    rhs = operand_def(TileType)
    group_sizes = operand_def(TileType)
    rows = operand_def(TensorType)
    result = result_def(TileType)

    def __init__(
        self,
        lhs: SSAValue,
        rhs: SSAValue,
        sizes: SSAValue,
        rows: SSAValue,
        view: View,
        result_type: TileType,
    ):
        super().__init__(
            operands=[lhs, rhs, sizes, rows],
            result_types=[result_type],
            properties=view.properties(),
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands[:3], printer.print_operand)
        printer.print_string(" rows ")
        printer.print_operand(self.rows)
        self.print_view(printer)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_function_type(self.operand_types, self.result_types)

    @classmethod
    def parse(cls, parser: Parser) -> TileGroupedMmaOp:
        tiles = parser.parse_comma_separated_list(
            parser.Delimiter.NONE, parser.parse_unresolved_operand
        )
        parser.parse_keyword("rows")
        rows = parser.parse_unresolved_operand()
        view = parse_view(parser)
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        function_type = parser.parse_function_type()
        operands = parser.resolve_operands([*tiles, rows], function_type.inputs.data, pos)
        (result_type,) = function_type.outputs.data
        if len(operands) != 4 or not isinstance(result_type, TileType):
            parser.raise_error("tile.gmma takes three tiles and a tensor, makes a tile", pos)
        lhs, rhs, sizes, x = operands
        op = cls(lhs, rhs, sizes, x, view, result_type)
        op.attributes.update(attrs)
        return op

    def verify_(self) -> None:
        self.verify_view(len(self.sizes.data))
        if not self.sizes.data:
            raise VerifyException(f"'{self.name}' needs a view with a dim of rows")
        types = [v.type for v in (self.lhs, self.rhs, self.group_sizes, self.result)]
        ranks = tuple(t.rank for t in types if isinstance(t, TileType))
        if ranks != (2, 3, 1, 2):
            raise VerifyException(
                f"'{self.name}' takes tiles of rank 2, 3 and 1 and makes one of rank 2, got "
                + ", ".join(map(str, types))
            )


def tile_view_ops(ops: Sequence[Operation]) -> list[TileGroupedMmaOp]:
    """The `tile.gmma` ops among `ops` (each declares a view in its bytecode)."""
    return [op for op in ops if isinstance(op, TileGroupedMmaOp)]


GROUPED_MATMUL_OPS = (GroupedMatmulOp,)
"""The tensor dialect's grouped matmul ops."""
TILE_GROUPED_MATMUL_OPS = (TileGroupedMmaOp,)
"""The tile dialect's."""


def group_sizes_error(label: str, sizes: Sequence[int], rows: int) -> str | None:
    """Why `sizes` do not split `rows` rows into consecutive groups (a negative size, or
    more rows in the groups than there are), or None. The reference interpreter and
    the compiled program both check with this."""
    total = 0
    for g, size in enumerate(sizes):
        if size < 0:
            return f"{label}: group {g} has a negative size {size}"
        total += size
    if total > rows:
        return f"{label}: the group sizes add up to {total} rows, but the operand has {rows} rows"
    return None
