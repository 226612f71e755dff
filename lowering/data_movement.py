"""The kernels of the data movement ops that are not views: `tensor.concat`.

A concat is a kernel of its own (see `dvm.passes.domain`), a copy of each
input into its part of the output. Along the concatenated axis the inputs
differ in size, so no single domain holds them; the kernel sees the output
as `outer x row` (the dims before the axis, and the axis with the dims after
it, which are contiguous in every input) and copies input `k`, an
`outer x row_k` block, into the columns of the output that start where the
inputs before it end. Its grid walks the outer dims; for each input, a loop
walks that input's row in chunks, each a load and a store of one tile.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Region, SSAValue

from dvm.dialects import tile
from dvm.dialects.data_movement import ConcatOp
from dvm.lowering.tiling import TilePlan, ceildiv, plan_vector_tiles
from dvm.passes.domain import Domain
from dvm.passes.symbolic import shape_of
from dvm.vm.device import DeviceSpec

ZERO = sympy.Integer(0)


def concat_of(ops: Sequence[object]) -> ConcatOp | None:
    """The concat of a kernel's ops, if it is a concat kernel (which holds nothing else)."""
    return next((op for op in ops if isinstance(op, ConcatOp)), None)


def rows(shape: Sequence[sympy.Expr], axis: int) -> tuple[sympy.Expr, sympy.Expr]:
    """A shape as (outer, row): the product of the dims before `axis`, and of the rest."""
    return sympy.Mul(*shape[:axis]), sympy.Mul(*shape[axis:])


def concat_plan(concat: ConcatOp, device: DeviceSpec) -> tuple[Domain, TilePlan]:
    """The kernel's domain (outer x row of the output, the row walked in chunks as a
    reduced axis is) and its tiles: one tile is live at a time."""
    outer, row = rows(shape_of(concat.result), concat.axis)
    domain = Domain(sizes=[outer, row], reduced=frozenset({1}))
    element = concat.result.type
    assert isinstance(element, TensorType)
    width = max(1, getattr(element.element_type, "bitwidth", 8) // 8)
    return domain, plan_vector_tiles(domain, 2 * width, width, device)


def emit_concat_body(
    block: Block, concat: ConcatOp, plan: TilePlan, args: dict[SSAValue, SSAValue]
) -> None:
    """For each input, a loop over its row's chunks copying each tile to the output."""
    outer, row = rows(shape_of(concat.result), concat.axis)
    tiles, index = plan.tiles, plan.index
    result_type = concat.result.type
    assert isinstance(result_type, TensorType)
    tile_type = tile.TileType(tiles, result_type.element_type)
    start: sympy.Expr = ZERO
    for value in concat.inputs:
        part = rows(shape_of(value), concat.axis)[1]
        body = Block()
        source = tile.View(ZERO, [outer, part], [part, sympy.Integer(1)], tiles, index)
        read = tile.LoadOp(args[value], tile_type, source)
        body.add_op(read)
        into = tile.View(start, [outer, part], [row, sympy.Integer(1)], tiles, index)
        body.add_op(tile.StoreOp(read.result, args[concat.result], into))
        body.add_op(tile.YieldOp())
        block.add_op(tile.ForOp(0, ceildiv(part, tiles[1]), [], Region(body)))
        start = sympy.expand(start + part)
