"""The kernels of the data movement ops that are not views: `tensor.concat` and
`tensor.insert_slice`.

A concat is a kernel of its own (see `dvm.passes.domain`), a copy of each
input into its part of the output. Along the concatenated axis the inputs
differ in size, so no single domain holds them; the kernel sees the output
as `outer x row` (the dims before the axis, and the axis with the dims after
it, which are contiguous in every input) and copies input `k`, an
`outer x row_k` block, into the columns of the output that start where the
inputs before it end. Its grid walks the outer dims; for each input, a loop
walks that input's row in chunks, each a load and a store of one tile.

An insert_slice kernel is one tile (a grid of 1) that copies the destination
and then stores the source through the slice's view of the result: the two
writes overlap, so one core makes them in order. Loops walk every dim, the
leading ones an element at a time, the last two in tiles.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Operation, Region, SSAValue

from dvm.dialects import tile
from dvm.dialects.data_movement import ConcatOp, InsertSliceOp, PadOp
from dvm.dialects.expr import smin
from dvm.dialects.index_ops import ScatterAddOp
from dvm.dialects.scans import ScanOp, TopKOp
from dvm.lowering.kernel_body import scalar_attr
from dvm.lowering.scans import emit_scan_body, emit_top_k_body, scan_plan, top_k_plan
from dvm.lowering.scatter_add import emit_scatter_body, scatter_plan
from dvm.lowering.tiling import (
    TilePlan,
    aligned,
    at_least_one,
    ceildiv,
    elements_in,
    floor_div,
    plan_vector_tiles,
)
from dvm.passes.data_movement import slice_view
from dvm.passes.domain import Domain, contiguous_strides
from dvm.passes.symbolic import shape_of
from dvm.vm.device import DeviceSpec

ZERO, ONE = sympy.Integer(0), sympy.Integer(1)


OwnKernel = ConcatOp | InsertSliceOp | PadOp | ScanOp | ScatterAddOp | TopKOp
"""The ops that are kernels of their own (a scan's and a top_k's: `dvm.lowering.scans`)."""


def own_kernel_op(ops: Sequence[object]) -> OwnKernel | None:
    """The op of a kernel that holds nothing else (a concat, an insert_slice, a pad
    or a scan)."""
    return next((op for op in ops if isinstance(op, OwnKernel)), None)


def own_plan(op: OwnKernel, device: DeviceSpec) -> tuple[Domain, TilePlan, list[int]]:
    """The domain, tiles and coordinates of the kernel of `op`."""
    if isinstance(op, ConcatOp):
        return *concat_plan(op, device), [0, 1]
    if isinstance(op, ScanOp):
        return *scan_plan(op, device), [0, 1, 2]
    if isinstance(op, ScatterAddOp):
        return *scatter_plan(op, device), [0, 1, 2]
    if isinstance(op, TopKOp):
        return *top_k_plan(op, device), [0, 1, 2]
    domain, plan = insert_plan(op, device)
    return domain, plan, list(range(len(domain.sizes)))


def emit_own_body(
    block: Block, op: OwnKernel, plan: TilePlan, args: dict[SSAValue, SSAValue]
) -> None:
    if isinstance(op, ConcatOp):
        emit_concat_body(block, op, plan, args)
    elif isinstance(op, ScanOp):
        emit_scan_body(block, op, plan, args)
    elif isinstance(op, ScatterAddOp):
        emit_scatter_body(block, op, plan, args)
    elif isinstance(op, TopKOp):
        emit_top_k_body(block, op, plan, args)
    else:
        emit_insert_body(block, op, plan, args)


def element_width(value: SSAValue) -> int:
    t = value.type
    assert isinstance(t, TensorType)
    return max(1, getattr(t.element_type, "bitwidth", 8) // 8)


def rows(shape: Sequence[sympy.Expr], axis: int) -> tuple[sympy.Expr, sympy.Expr]:
    """A shape as (outer, row): the product of the dims before `axis`, and of the rest."""
    return sympy.Mul(*shape[:axis]), sympy.Mul(*shape[axis:])


def concat_plan(concat: ConcatOp, device: DeviceSpec) -> tuple[Domain, TilePlan]:
    """The kernel's domain (outer x row of the output, the row walked in chunks as a
    reduced axis is) and its tiles: one tile is live at a time."""
    outer, row = rows(shape_of(concat.result), concat.axis)
    domain = Domain(sizes=[outer, row], reduced=frozenset({1}))
    width = element_width(concat.result)
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


def insert_plan(op: InsertSliceOp | PadOp, device: DeviceSpec) -> tuple[Domain, TilePlan]:
    """One tile at a time, on one core: the leading dims an element at a time, the
    last two in tiles that fit the local memory."""
    sizes = list(shape_of(op.result))
    rank = len(sizes)
    width = element_width(op.result)
    budget = elements_in(device, 2 * width)
    tiles: list[sympy.Expr] = [sympy.Integer(1)] * rank
    if rank >= 1:
        align = max(1, device.alignment // width)
        tiles[-1] = aligned(sympy.Integer(budget), sizes[-1], align)
    if rank >= 2:
        tiles[-2] = at_least_one(smin(sizes[-2], floor_div(sympy.Integer(budget), tiles[-1])))
    index = [f"loop{k}" for k in range(rank)]
    return Domain(sizes=sizes), TilePlan(tiles, index)


def emit_insert_body(
    block: Block, op: InsertSliceOp | PadOp, plan: TilePlan, args: dict[SSAValue, SSAValue]
) -> None:
    """Fill the result (a copy of an insert_slice's destination, or a pad's constant),
    then store the source through its view of the result."""
    shape, source_shape = shape_of(op.result), shape_of(op.source)
    strides = contiguous_strides(shape)
    offset, source_strides = slice_view(op, ZERO, strides)
    result_type = op.result.type
    assert isinstance(result_type, TensorType)
    tile_type = tile.TileType(plan.tiles, result_type.element_type)
    target = args[op.result]
    whole = tile.View(ZERO, shape, strides, plan.tiles, plan.index)
    if isinstance(op, InsertSliceOp):
        load = tile.LoadOp(args[op.dest], tile_type, whole)
        fill: list[Operation] = [load, tile.StoreOp(load.result, target, whole)]
    else:
        fill = pad_fill(op, plan, args)
    read = tile.View(ZERO, source_shape, contiguous_strides(source_shape), plan.tiles, plan.index)
    load = tile.LoadOp(args[op.source], tile_type, read)
    into = tile.View(offset, source_shape, source_strides, plan.tiles, plan.index)
    add_loop_nest(block, fill, shape, plan)
    add_loop_nest(block, [load, tile.StoreOp(load.result, target, into)], source_shape, plan)


def pad_fill(op: PadOp, plan: TilePlan, args: dict[SSAValue, SSAValue]) -> list[Operation]:
    """A tile of a pad's result filled with its constant (one element, stretched)."""
    shape = shape_of(op.result)
    result_type = op.result.type
    assert isinstance(result_type, TensorType)
    tile_type = tile.TileType(plan.tiles, result_type.element_type)
    whole = tile.View(ZERO, shape, contiguous_strides(shape), plan.tiles, plan.index)
    value = scalar_attr(op.padding_value(), result_type.element_type)
    one = tile.ConstantOp(value, tile.TileType([ONE] * len(shape), result_type.element_type))
    wide = tile.BroadcastOp(one.result, tile_type)
    return [one, wide, tile.StoreOp(wide.result, args[op.result], whole)]


def emit_pad_fill(block: Block, op: PadOp, plan: TilePlan, args: dict[SSAValue, SSAValue]) -> None:
    """Fill a pad's whole result with its constant, tile by tile."""
    add_loop_nest(block, pad_fill(op, plan, args), shape_of(op.result), plan)


def add_loop_nest(
    block: Block, body: list[Operation], sizes: Sequence[sympy.Expr], plan: TilePlan
) -> None:
    """`body` in loops over every dim of `sizes` (loop k walks dim k in tiles)."""
    for level in reversed(range(len(sizes))):
        trips = ceildiv(sizes[level], plan.tiles[level])
        body = [tile.ForOp(level, trips, [], Region(Block([*body, tile.YieldOp()])))]
    for each in body:
        block.add_op(each)
