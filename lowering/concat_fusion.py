"""The kernel of a concat or a pad fused with its producers (`dvm.passes.concat_fusion`).

The kernel is tiled over the concat's result, its axis walked by loops over
chunks; each piece's body is what the kernel of that input alone would run,
its store moved into the input's part of the result. The pieces run one after
the other in every tile (each over its own part of the axis, none when that
part is empty) and write disjoint parts of the output. A pad's kernel, on one
core, fills its result with the constant and then runs its source's piece,
stored at the low pads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import sympy
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, Operation, SSAValue

from dvm.dialects import tile
from dvm.dialects.data_movement import ConcatOp, PadOp
from dvm.dialects.expr import ShapeAttr
from dvm.dialects.index_ops import PIECE_SIZES, TileIotaOp
from dvm.lowering.data_movement import emit_pad_fill
from dvm.lowering.kernel_body import Emission, KernelBuilder, emit_ops
from dvm.lowering.tiling import TilePlan, plan_vector_tiles
from dvm.passes.concat_fusion import Piece, piece_store
from dvm.passes.data_movement import slice_view
from dvm.passes.domain import Domain, StridedView, contiguous_strides
from dvm.passes.symbolic import shape_of
from dvm.vm.device import DeviceSpec


def emit_fused_pad(
    block: Block, pad: PadOp, piece: Piece, plan: TilePlan, args: dict[SSAValue, SSAValue]
) -> None:
    """Fill the result with the constant, then store the source's piece at the low pads."""
    emit_pad_fill(block, pad, plan, args)
    strides = contiguous_strides(shape_of(pad.result))
    offset, _ = slice_view(pad, sympy.Integer(0), strides)
    placement = piece.domain.placement[piece.value]
    store = StridedView(pad.result, tuple(strides), piece.value, placement, offset=offset)
    domain = replace(piece.domain, stores=[store])
    coords = list(range(len(strides)))
    builder = KernelBuilder(domain, plan, coords, args, [Emission(block)])
    before = set(block.walk())
    emit_ops(builder, piece.ops, domain)
    measure_piece(block, before, shape_of(piece.value))


def measure_piece(block: Block, before: set[Operation], sizes: Sequence[sympy.Expr]) -> None:
    """Give each iota and broadcast a piece added to `block` (its ops not in `before`)
    the piece's sizes (`PIECE_SIZES`): its loops walk the piece's part from 0, where
    the kernel's axes are the whole result's."""
    for op in block.walk():
        if isinstance(op, TileIotaOp | tile.BroadcastOp) and op not in before:
            op.attributes[PIECE_SIZES] = ShapeAttr(sizes)


def element_bytes(value: SSAValue) -> int:
    assert isinstance(value.type, TensorType)
    return max(1, getattr(value.type.element_type, "bitwidth", 8) // 8)


def fused_plan(pieces: Sequence[Piece], domain: Domain, device: DeviceSpec) -> TilePlan:
    """The tiles of the kernel: sized for the piece that holds the most bytes per
    element in tiles alive at once (the pieces run one at a time)."""
    peaks = [peak_bytes(piece.ops, piece.value) for piece in pieces]
    widest = max(element_bytes(piece.value) for piece in pieces)
    return plan_vector_tiles(domain, max(peaks) + widest, widest, device)


def peak_bytes(ops: Sequence[Operation], output: SSAValue) -> int:
    """The most bytes per element that the tensor values of `ops` hold at once, each
    alive from its op (a value they read and do not make, loaded into a tile: from the
    start) to its last use there (`output`: to the end)."""
    last: dict[SSAValue, int] = {output: len(ops)}
    for i, op in enumerate(ops):
        for value in op.operands:
            last[value] = max(last.get(value, i), i)
    made: dict[SSAValue, int] = {
        r: i for i, op in enumerate(ops) for r in op.results if isinstance(r.type, TensorType)
    }
    for value in last:
        if value not in made and isinstance(value.type, TensorType):
            made[value] = -1
    peak = element_bytes(output)
    for i in range(len(ops) + 1):
        alive = [v for v, at in made.items() if at < i <= last.get(v, at)]
        peak = max(peak, sum(map(element_bytes, alive)))
    return peak


def emit_fused_concat(
    block: Block,
    concat: ConcatOp,
    pieces: Sequence[Piece],
    plan: TilePlan,
    args: dict[SSAValue, SSAValue],
) -> None:
    """Each piece in turn, its store moved to where its input starts along the axis."""
    coords = list(range(len(shape_of(concat.result))))
    start: sympy.Expr = sympy.Integer(0)
    for piece in pieces:
        domain = replace(piece.domain, stores=[piece_store(piece, concat, start)])
        builder = KernelBuilder(domain, plan, coords, args, [Emission(block)])
        before = set(block.walk())
        with builder.loops(plan.batch_loops, []):
            emit_ops(builder, piece.ops, domain)
        measure_piece(block, before, shape_of(piece.value))
        start = sympy.expand(start + shape_of(piece.value)[concat.axis])
