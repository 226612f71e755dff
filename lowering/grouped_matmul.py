"""The body of a grouped matmul kernel (`tensor.grouped_matmul` in a cube or mix kernel).

The kernel's domain is a matmul's (rows m, cols n, K the contraction; see
`DomainAnalysis.grouped_matmul`). A tile of output rows may hold rows of
several groups, so it holds every group's chunk of the weights (G x tk x tn),
and the sizes whole; `tile.gmma` multiplies each row by its group's chunk:

    sizes = load %sizes (whole)
    acc = 0
    for each chunk of K:
        a = load %x[rows, chunk]               tm x tk
        w = load %w[all groups, chunk, cols]   G x tk x tn
        acc = acc + gmma(a, w, sizes, rows of %x)
    acc = acc + gmma(ones, bias as G x 1 x tn, sizes, rows of %x)   (with a bias)

The bias is a grouped matmul of a column of ones by the bias rows, which gives
each row its group's bias (and rows past the last group none). The epilogue
(SiLU, GELU, ...) then runs on `acc` as after a matmul (`dvm.lowering.kernel_body`).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol

import sympy
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue

from dvm.dialects import tensor as t
from dvm.dialects import tile
from dvm.dialects.expr import ExprAttr, smax
from dvm.dialects.grouped_matmul import GroupedMatmulOp, TileGroupedMmaOp
from dvm.lowering.tiling import TilePlan
from dvm.passes.domain import Domain, StridedView
from dvm.passes.errors import located
from dvm.passes.symbolic import shape_of

ViewDim = tuple[sympy.Expr, sympy.Expr, sympy.Expr, str]
"""(size, stride, tile, walker) of one dim of a view."""


class BodyBuilder(Protocol):
    """What emitting the body needs of `kernel_body.KernelBuilder`."""

    domain: Domain
    plan: TilePlan
    args: dict[SSAValue, SSAValue]

    def add(self, op: Operation) -> SSAValue: ...

    def tile_type(self, spans: frozenset[int], element: Attribute) -> tile.TileType: ...

    def value_spans(self, value: SSAValue) -> frozenset[int]: ...

    def bind(self, value: SSAValue, tile_value: SSAValue, spans: frozenset[int]) -> SSAValue: ...

    def view_dim(self, strided: StridedView, span: tuple[int, ...]) -> ViewDim: ...

    def chunked(self, axes: Sequence[int]) -> list[int]: ...

    def loops(
        self, axes: Sequence[int], carried: list[SSAValue], once: Sequence[int] = ()
    ) -> AbstractContextManager[list[SSAValue]]: ...


def emit_grouped_matmul(builder: BodyBuilder, op: GroupedMatmulOp) -> None:
    """Bind `op`'s result to its accumulated tile (see the module docstring)."""
    domain = builder.domain
    assert domain.contraction is not None and isinstance(op.result.type, TensorType)
    element = op.result.type.element_type
    spans = builder.value_spans(op.result)
    (m,), (n,) = domain.placement[op.result]
    x_view, w_view, *bias_view = (v for v in domain.loads if v.matmul_operand)
    acc_type = builder.tile_type(spans, element)
    sizes = load(builder, op.sizes, [whole_dim(shape_of(op.sizes)[0], ONE)])
    # x's view, tiled along its rows only: the rows of the tile and of x (a view of
    # x's rows alone would reach past an x without columns)
    k = domain.contraction
    columns = whole_dim(domain.sizes[k], x_view.strides[k])
    rows = view(x_view.offset, [builder.view_dim(x_view, (m,)), columns])

    def gmma(a: SSAValue, b: SSAValue) -> SSAValue:
        x = builder.args[x_view.value]
        return builder.add(TileGroupedMmaOp(a, b, sizes, x, rows, acc_type))

    def add(a: SSAValue, b: SSAValue) -> SSAValue:
        return builder.add(tile.MIRRORED[t.AddOp].build(operands=[a, b], result_types=[acc_type]))

    carried = [builder.add(tile.ConstantOp(FloatAttr(0.0, element), acc_type))]  # type: ignore[arg-type]
    chunks = builder.chunked([k])
    with builder.loops(chunks, carried) as inner:
        a = load(builder, op.x, [builder.view_dim(x_view, (i,)) for i in (m, k)], x_view)
        w_dims = [builder.view_dim(w_view, (i,)) for i in (k, n)]
        product = gmma(a, load(builder, op.w, [groups_dim(op.w), *w_dims], w_view))
        inner[0] = add(inner[0], product) if chunks else product
    acc = carried[0]
    for strided in bias_view:  # each row's group's bias: a column of ones times the bias rows
        ones_type = builder.tile_type(frozenset([m]), element)
        ones = builder.add(tile.ConstantOp(FloatAttr(1.0, element), ones_type))  # type: ignore[arg-type]
        dims = [groups_dim(strided.value), whole_dim(ONE, ZERO), builder.view_dim(strided, (n,))]
        acc = add(acc, gmma(ones, load(builder, strided.value, dims, strided)))
    builder.bind(op.result, acc, spans)


ZERO, ONE = sympy.Integer(0), sympy.Integer(1)


def whole_dim(size: sympy.Expr, stride: sympy.Expr) -> ViewDim:
    """A view dim a tile holds whole (at least one element, as every tile does)."""
    return (size, stride, smax(1, size), "whole")


def groups_dim(value: SSAValue) -> ViewDim:
    """The groups of the weights (or bias), a kernel input read as it is: each group's
    matrix follows the one before."""
    groups, *matrix = shape_of(value)
    return whole_dim(groups, sympy.Mul(*matrix))


def view(offset: sympy.Expr, dims: Sequence[ViewDim]) -> tile.View:
    sizes, strides, tiles, index = zip(*dims, strict=True)
    return tile.View(offset, sizes, strides, tiles, index)


def load(
    builder: BodyBuilder,
    value: SSAValue,
    dims: Sequence[ViewDim],
    strided: StridedView | None = None,
) -> SSAValue:
    """A tile of kernel input `value` (or of the buffer behind the view `strided`)
    through a view of `dims`."""
    source = strided.value if strided is not None else value
    offset = strided.offset if strided is not None else ZERO
    assert isinstance(value.type, TensorType)
    tile_type = tile.TileType([d[2] for d in dims], value.type.element_type)
    return builder.add(tile.LoadOp(builder.args[source], tile_type, view(offset, dims)))


GROUP_SIZES = "dvm.group_sizes"
"""On a launch: each grouped matmul of its kernel as {op, sizes, rows}: the launch
input holding its sizes and the rows they split (an expression of the shape symbols);
the runtime checks the sizes as it launches, with the reference interpreter's message."""


def group_size_checks(ops: Sequence[Operation], inputs: Sequence[SSAValue]) -> list[Attribute]:
    """`GROUP_SIZES` of a kernel's ops, whose tensor inputs are `inputs` (in the
    launch's order)."""
    found: list[Attribute] = []
    for op in ops:
        if isinstance(op, GroupedMatmulOp):
            entry = {
                "op": StringAttr(located(op)),
                "sizes": IntegerAttr(list(inputs).index(op.sizes), i64),
                "rows": ExprAttr(shape_of(op.x)[0]),
            }
            found.append(DictionaryAttr(entry))
    return found


def read_group_size_checks(entries: ArrayAttr[Attribute]) -> list[tuple[str, int, sympy.Expr]]:
    """`GROUP_SIZES` as (label, input index, rows)."""
    out = []
    for entry in entries.data:
        assert isinstance(entry, DictionaryAttr)
        label, index, rows = (entry.data[k] for k in ("op", "sizes", "rows"))
        assert isinstance(label, StringAttr) and isinstance(index, IntegerAttr)
        assert isinstance(rows, ExprAttr)
        out.append((label.data, index.value.data, rows.data))
    return out
