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
"""

from __future__ import annotations

import sympy
from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, TensorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from dvm.dialects import tile
from dvm.dialects.scans import CumSumOp, ScanOp, TileScanOp
from dvm.lowering.kernel_body import identity
from dvm.lowering.tiling import TilePlan, ceildiv, plan_vector_tiles
from dvm.passes.domain import Domain
from dvm.passes.symbolic import shape_of
from dvm.vm.device import DeviceSpec

ONE = sympy.Integer(1)


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
