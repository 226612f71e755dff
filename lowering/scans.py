"""The kernel of a `tensor.cumsum` or `tensor.cumprod`: a scan walked in order.

A scan is a kernel of its own (see `dvm.passes.domain`). The kernel sees its
operand as `outer x axis x inner` (the dims before the axis, the axis, the dims
after it): its grid splits `outer` and `inner`, which are independent, and one
tile walks the axis in chunks, in order, with a loop. A carry tile (`outer x 1 x
inner`, the identity at first) holds what the chunks before combine to; each
chunk is loaded, scanned from the carry (`tile.scan`, the VM's `scan`), stored,
and the carry moves past it. A reversed scan reads and writes through views that
walk the axis from its end (negative strides), so it is the same loop. `f16` and
`bf16` scan in `f32` and round each element once, as numpy's cumsum with an
`f32` accumulator does.

A `tensor.top_k` kernel walks its axis the same way, with a carry of the k
largest so far and their indices (`outer x k x inner`, each row first filled
with the lowest value and the largest index, which every element beats): each
chunk and its indices (`tile.iota`) merge into it (`tile.top_k`, the VM's
`top_k`), and after the loop the carry is stored. So any k and any axis length
run in a bounded tile, as long as a row of the carry fits the local memory
(`top_k_fits`; a larger k stays a host step).
"""

from __future__ import annotations

import numpy as np
import sympy
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    IntegerAttr,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from dvm.dialects import tensor as t
from dvm.dialects import tile
from dvm.dialects.expr import smax, smin
from dvm.dialects.index_ops import TileIotaOp
from dvm.dialects.scans import CumSumOp, ScanOp, TileScanOp, TileTopKOp, TopKOp
from dvm.dialects.tensor import tensor_type
from dvm.lowering.kernel_body import identity
from dvm.lowering.tiling import (
    TilePlan,
    at_least_one,
    ceildiv,
    elements_in,
    fit,
    floor_div,
    plan_parallel,
    plan_vector_tiles,
)
from dvm.passes.domain import Domain
from dvm.passes.symbolic import shape_of
from dvm.vm.device import DeviceSpec
from dvm.vm.top_k import top_k_unfilled

ZERO, ONE = sympy.Integer(0), sympy.Integer(1)


def scan_element(element: Attribute) -> Attribute:
    """The element type a scan runs in: f32 for f16 and bf16."""
    return Float32Type() if isinstance(element, Float16Type | BFloat16Type) else element


def width(element: Attribute) -> int:
    return max(1, getattr(element, "bitwidth", 8) // 8)


def scan_sizes(op: ScanOp) -> list[sympy.Expr]:
    """The operand's shape as (outer, axis, inner)."""
    shape, axis = list(shape_of(op.result)), op.scan_axis
    return [sympy.Mul(*shape[:axis]), shape[axis], sympy.Mul(*shape[axis + 1 :])]


def scan_plan(op: ScanOp, device: DeviceSpec) -> tuple[Domain, TilePlan]:
    """The kernel's domain (the axis walked in chunks, as a reduced axis is) and its
    tiles: the loaded chunk, its scan and their conversions are live at once."""
    domain = Domain(sizes=scan_sizes(op), reduced=frozenset({1}))
    assert isinstance(op.result.type, TensorType)
    element = op.result.type.element_type
    live = 2 * width(element) + 2 * width(scan_element(element))
    return domain, plan_vector_tiles(domain, live, width(element), device)


def emit_scan_body(
    block: Block, op: ScanOp, plan: TilePlan, args: dict[SSAValue, SSAValue]
) -> None:
    """The carry, then a loop over the axis's chunks: load, scan, store."""
    outer, n, inner = scan_sizes(op)
    assert isinstance(op.result.type, TensorType)
    element = op.result.type.element_type
    wide = scan_element(element)
    tiles = plan.tiles
    kind = "sum" if isinstance(op, CumSumOp) else "prod"
    carry_type = tile.TileType([tiles[0], ONE, tiles[2]], wide)
    first = tile.ConstantOp(identity(kind, wide), carry_type)
    block.add_op(first)
    if op.is_reversed:  # from the last element back: the axis's stride negated
        start, step = sympy.Max(n - 1, 0) * inner, -inner
    else:
        start, step = sympy.Integer(0), inner
    view = tile.View(start, [outer, n, inner], [n * inner, step, ONE], tiles, plan.index)
    body = Block(arg_types=[carry_type])
    ops: list[Operation] = []
    x = tile.LoadOp(args[op.input], tile.TileType(tiles, element), view)
    ops.append(x)
    source = converted(x.result, wide, ops)
    scan = TileScanOp(source, body.args[0], kind, 1, op.is_exclusive)
    ops.append(scan)
    ops.append(tile.StoreOp(converted(scan.result, element, ops), args[op.result], view))
    ops.append(tile.YieldOp(scan.carried))
    body.add_ops(ops)
    level = plan.index[1].removeprefix("loop")
    block.add_op(tile.ForOp(int(level), ceildiv(n, tiles[1]), [first.result], Region(body)))


def converted(value: SSAValue, element: Attribute, ops: list[Operation]) -> SSAValue:
    """`value` as `element` (itself when it is one)."""
    assert isinstance(value.type, tile.TileType)
    if value.type.element_type == element:
        return value
    convert = tile.ConvertOp.build(
        operands=[value], result_types=[tile.TileType(value.type.extents, element)]
    )
    ops.append(convert)
    return convert.results[0]


def top_k_sizes(op: TopKOp) -> list[sympy.Expr]:
    """The operand's shape as (outer, axis, inner)."""
    shape, axis = list(shape_of(op.input)), op.along
    return [sympy.Mul(*shape[:axis]), shape[axis], sympy.Mul(*shape[axis + 1 :])]


def top_k_widths(op: TopKOp) -> tuple[int, int]:
    """Bytes of a value and of an index."""
    value = width(tensor_type(op.values).element_type)
    return value, width(tensor_type(op.indices).element_type)


def top_k_fits(op: TopKOp, device: DeviceSpec) -> bool:
    """Whether a row of the carry and a chunk of one element fit the local memory, as
    many rows of them as the innermost axis takes at least (one alignment unit, or
    the dims after the axis when they are fewer: none along the last axis)."""
    value, index = top_k_widths(op)
    inner = top_k_sizes(op)[2]
    align = max(1, device.alignment // value)
    least = min(int(inner), align) if inner.is_Integer else align
    return (op.count + 1) * max(least, 1) <= elements_in(device, value + index)


def top_k_plan(op: TopKOp, device: DeviceSpec) -> tuple[Domain, TilePlan]:
    """The kernel's domain (the axis walked in chunks) and its tiles: per row, the
    carry (k values and indices) and a chunk of values and their indices are live;
    the chunk takes what a row's carry leaves (a long chunk is few merges)."""
    sizes = top_k_sizes(op)
    domain = Domain(sizes=sizes, reduced=frozenset({1}))
    value, index = top_k_widths(op)
    pairs = sympy.Integer(elements_in(device, value + index))
    align = max(1, device.alignment // value)
    reserve = at_least_one(smin(sizes[2], align))  # the innermost axis takes this many
    k = sympy.Integer(op.count)
    tiles: list[sympy.Expr] = [ONE, ONE, ONE]
    tiles[1] = fit(smax(1, floor_div(pairs, reserve) - k), sizes[1], align, False)
    rows = smax(1, floor_div(pairs, k + tiles[1]))
    return domain, plan_parallel(domain, tiles, rows, value, device, [1])


def emit_top_k_body(
    block: Block, op: TopKOp, plan: TilePlan, args: dict[SSAValue, SSAValue]
) -> None:
    """The carry, a loop over the axis's chunks (load, iota, merge), then the stores
    of the carry (of the results the program uses)."""
    outer, n, inner = top_k_sizes(op)
    k = sympy.Integer(op.count)
    tiles, index = plan.tiles, plan.index
    element = tensor_type(op.values).element_type
    position = tensor_type(op.indices).element_type
    kept = [tiles[0], k, tiles[2]]
    values_type, indices_type = tile.TileType(kept, element), tile.TileType(kept, position)
    lowest = tile.ConstantOp(identity("max", element), values_type)  # every element beats
    assert isinstance(position, IntegerType)  # i32 or i64
    unfilled = top_k_unfilled(np.dtype(f"int{position.width.data}"))
    past = tile.ConstantOp(IntegerAttr(unfilled, position), indices_type)  # them: ties too
    block.add_ops([lowest, past])
    body = Block(arg_types=[values_type, indices_type])
    view = tile.View(ZERO, [outer, n, inner], [n * inner, inner, ONE], tiles, index)
    x = tile.LoadOp(args[op.input], tile.TileType(tiles, element), view)
    at = TileIotaOp(1, tile.TileType(tiles, position))
    merge = TileTopKOp(x.result, at.result, body.args[0], body.args[1], 1)
    body.add_ops([x, at, merge, tile.YieldOp(*merge.results)])
    level = index[1].removeprefix("loop")
    trips = ceildiv(n, tiles[1])
    loop = tile.ForOp(int(level), trips, [lowest.result, past.result], Region(body))
    block.add_op(loop)
    walkers = [index[0], "whole", index[2]]
    into = tile.View(ZERO, [outer, k, inner], [k * inner, inner, ONE], kept, walkers)
    for result, carried in zip(op.results, loop.results, strict=True):
        if result in args:
            block.add_op(tile.StoreOp(carried, args[result], into))


def unwrap_large_top_k(fusion: t.FusionOp, device: DeviceSpec) -> bool:
    """Put a top_k whose carry does not fit the local memory (`top_k_fits`) back in
    place of its kernel, a host step; whether it did."""
    ops = [op for op in fusion.body.block.ops if not isinstance(op, t.YieldOp)]
    top = next((op for op in ops if isinstance(op, TopKOp)), None)
    if top is None or top_k_fits(top, device):
        return False
    inner: dict[SSAValue, SSAValue] = dict(zip(fusion.body.block.args, fusion.inputs, strict=True))
    yielded = fusion.body.block.last_op
    assert isinstance(yielded, t.YieldOp)
    outer = dict(zip(yielded.values, fusion.results, strict=True))
    for op in ops:
        op.detach()
        for i, operand in enumerate(op.operands):
            op.operands[i] = inner.get(operand, operand)
        Rewriter.insert_op(op, InsertPoint.before(fusion))
    for value, result in outer.items():
        result.replace_all_uses_with(value)
    Rewriter.erase_op(fusion)
    return True
