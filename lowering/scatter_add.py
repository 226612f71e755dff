"""The kernel of a `tensor.scatter_add`: the base copied, then the updates added in order.

A scatter_add is a kernel of its own (see `dvm.passes.domain`): which element an
update goes to is data, so no domain maps updates to result elements. The kernel
sees the base as `outer x n x inner` (the dims before the axis, the axis, the
dims after it), the indices as one list of `k`, and the updates as `outer x k x
inner`. Its grid splits `outer` and `inner`, which are independent; one tile
then walks the axis in chunks to copy the base into the result, and walks the
updates in chunks, in order, each added through an indexed store
(`tile.scatter_add`, the VM's `scatter_add`) into the result's `outer x n x inner`
block, whose axis it sees whole. An update's order among those naming one element
is numpy's `add.at` order, so the sums have its bits. The chunk length suits the
longer of `n` and `k`; the launch checks the indices first (`TAKE_CHECKS`).
"""

from __future__ import annotations

import sympy
from xdsl.dialects.builtin import IntegerAttr, StringAttr, TensorType, i64
from xdsl.ir import Attribute, Block, Region, SSAValue

from dvm.dialects import tile
from dvm.dialects.index_ops import OP_AXIS, OP_LABEL, ScatterAddOp, TileScatterAddOp
from dvm.lowering.tiling import TilePlan, ceildiv, plan_vector_tiles
from dvm.passes.domain import Domain
from dvm.passes.errors import located
from dvm.passes.symbolic import shape_of
from dvm.vm.device import DeviceSpec

ZERO, ONE = sympy.Integer(0), sympy.Integer(1)


def width(element: Attribute) -> int:
    return max(1, getattr(element, "bitwidth", 8) // 8)


def scatter_sizes(op: ScatterAddOp) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr, sympy.Expr]:
    """(outer, n, inner, k): the base as outer x n x inner, and the number of indices."""
    shape, axis = list(shape_of(op.base)), op.dim
    outer, inner = sympy.Mul(*shape[:axis]), sympy.Mul(*shape[axis + 1 :])
    return outer, shape[axis], inner, sympy.Mul(*shape_of(op.indices))


def scatter_plan(op: ScatterAddOp, device: DeviceSpec) -> tuple[Domain, TilePlan]:
    """The kernel's domain (its middle axis walked in chunks, as a reduced axis is, as
    long as the longer of the axis and the indices) and its tiles: a chunk of the
    base or of the updates, with the indices, is live at once."""
    outer, n, inner, k = scatter_sizes(op)
    domain = Domain(sizes=[outer, sympy.Max(n, k), inner], reduced=frozenset({1}))
    assert isinstance(op.result.type, TensorType)
    element = width(op.result.type.element_type)
    return domain, plan_vector_tiles(domain, 2 * element + 8, element, device)


def emit_scatter_body(
    block: Block, op: ScatterAddOp, plan: TilePlan, args: dict[SSAValue, SSAValue]
) -> None:
    """A loop copying the base's chunks into the result, then a loop over the updates'
    chunks: load them and their indices, add them in."""
    outer, n, inner, k = scatter_sizes(op)
    assert isinstance(op.result.type, TensorType) and isinstance(op.indices.type, TensorType)
    element = op.result.type.element_type
    tiles, index = plan.tiles, plan.index
    level = int(index[1].removeprefix("loop"))
    base = tile.View(ZERO, [outer, n, inner], [n * inner, inner, ONE], tiles, index)
    copy = Block()
    chunk = tile.LoadOp(args[op.base], tile.TileType(tiles, element), base)
    copy.add_ops([chunk, tile.StoreOp(chunk.result, args[op.result], base), tile.YieldOp()])
    block.add_op(tile.ForOp(level, ceildiv(n, tiles[1]), [], Region(copy)))

    rows = tile.View(ZERO, [outer, k, inner], [k * inner, inner, ONE], tiles, index)
    along = tile.View(
        ZERO, [ONE, k, ONE], [ZERO, ONE, ZERO], [ONE, tiles[1], ONE], ["whole", index[1], "whole"]
    )
    into = tile.View(
        ZERO,
        [outer, ONE, inner, n],
        [n * inner, ZERO, ONE, inner],
        [tiles[0], ONE, tiles[2], n],
        [index[0], "whole", index[2], "whole"],
    )
    add = Block()
    updates = tile.LoadOp(args[op.updates], tile.TileType(tiles, element), rows)
    index_type = tile.TileType([ONE, tiles[1], ONE], op.indices.type.element_type)
    indices = tile.LoadOp(args[op.indices], index_type, along)
    scatter = TileScatterAddOp(updates.result, indices.result, args[op.result], into)
    scatter.attributes[OP_LABEL] = StringAttr(located(op))
    scatter.attributes[OP_AXIS] = IntegerAttr(op.dim, i64)
    add.add_ops([updates, indices, scatter, tile.YieldOp()])
    block.add_op(tile.ForOp(level, ceildiv(k, tiles[1]), [], Region(add)))
