"""Lowering of the index ops: what their launches check, and their tile ops' bytecode.

A `tile.take` checks each index against its dim, but the error would not name the
op: each launch of a kernel with takes carries them (`TAKE_CHECKS`), and the
runtime checks the indices before it runs, as the reference interpreter does.

`tile.iota` becomes the VM's `iota`, whose view says only where the current tile
lies along each kernel axis: its sizes, tile sizes and walkers are the kernel's
(`dvm.axes`), its strides 0. It reads no memory; its argument is an output of the
kernel with an element whenever the view has one (`measured_output`).
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, StringAttr, i64
from xdsl.ir import Attribute, Operation, SSAValue

from dvm.dialects import tile
from dvm.dialects.expr import ExprAttr, ShapeAttr
from dvm.dialects.index_ops import (
    PIECE_SIZES,
    IotaOp,
    ScatterAddOp,
    TakeAlongAxisOp,
    TakeOp,
    TileIotaOp,
)
from dvm.passes.errors import located
from dvm.passes.symbolic import shape_of

TAKE_CHECKS = "dvm.take_checks"
"""On a launch: each take (or scatter_add) its kernel makes, as {op, input (the launch input holding
its indices; -1 for an iota's, with its `length`), size (of the dim they index), axis}."""

ZERO, ONE = sympy.Integer(0), sympy.Integer(1)


def iota_view(kernel: tile.KernelOp, op: TileIotaOp) -> tile.View:
    """The view an iota's tile is measured by: the kernel's axes where the tile spans
    them (always along its own dim), one element elsewhere."""
    assert isinstance(op.result.type, tile.TileType)
    return measuring_view(kernel, op, op.result.type, op.dim)


def measuring_view(
    kernel: tile.KernelOp, op: Operation, type_: tile.TileType, keep: int | None
) -> tile.View:
    """A view (of nothing: strides 0) whose tiles have the extents of a tile of `type_`
    made by `op`: the kernel's axes where it spans them (and along dim `keep`), or a
    fused piece's sizes (`PIECE_SIZES`) there; one element elsewhere."""
    axes = kernel.attributes["dvm.axes"]  # (tensor_to_tile.AXES, which imports this module)
    piece = op.attributes.get(PIECE_SIZES)
    assert isinstance(axes, ArrayAttr)
    sizes, tiles, index = [], [], []
    for d, (extent, axis) in enumerate(zip(type_.extents, axes.data, strict=True)):
        assert isinstance(axis, tile.AxisAttr)
        if extent == 1 and d != keep:
            sizes.append(ONE)
            tiles.append(ONE)
            index.append("whole")
        else:
            sizes.append(piece.data[d] if isinstance(piece, ShapeAttr) else axis.size.data)
            tiles.append(axis.tile.data)
            index.append(axis.walker.data)
    return tile.View(ZERO, sizes, [ZERO] * len(sizes), tiles, index)


def take_checks(ops: Sequence[Operation], inputs: Sequence[SSAValue]) -> list[DictionaryAttr]:
    """`TAKE_CHECKS` of a kernel's ops, whose tensor inputs are `inputs`: for each take,
    the input holding its indices (or, for an iota's, -1 and the iota's length) and the
    size of the dim they index."""
    found = []
    for op in ops:
        if not isinstance(op, TakeOp | TakeAlongAxisOp | ScatterAddOp):
            continue
        source = op.base if isinstance(op, ScatterAddOp) else op.source
        entry: dict[str, Attribute] = {
            "op": StringAttr(located(op)),
            "size": ExprAttr(shape_of(source)[op.dim]),
            "axis": IntegerAttr(op.dim, i64),
        }
        iota = op.indices.owner
        if isinstance(iota, IotaOp):
            entry["input"] = IntegerAttr(-1, i64)
            entry["length"] = ExprAttr(shape_of(iota.result)[iota.dim])
        else:
            entry["input"] = IntegerAttr(list(inputs).index(op.indices), i64)
        found.append(DictionaryAttr(entry))
    return found
