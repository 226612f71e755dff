"""Lowering of the index ops' tile ops to bytecode.

`tile.iota` becomes the VM's `iota`, whose view says only where the current tile
lies along each kernel axis: its sizes, tile sizes and walkers are the kernel's
(`dvm.axes`), its strides 0. It reads no memory; its argument is the kernel's
first output, which has an element whenever the kernel runs.
"""

from __future__ import annotations

import sympy
from xdsl.dialects.builtin import ArrayAttr

from dvm.dialects import tile
from dvm.dialects.index_ops import TileIotaOp
from dvm.lowering.tensor_to_tile import AXES

ZERO, ONE = sympy.Integer(0), sympy.Integer(1)


def iota_view(kernel: tile.KernelOp, op: TileIotaOp) -> tile.View:
    """The view an iota's tile is measured by: the kernel's axes where the tile spans
    them (always along its own dim), one element elsewhere."""
    axes = kernel.attributes[AXES]
    assert isinstance(axes, ArrayAttr) and isinstance(op.result.type, tile.TileType)
    sizes, tiles, index = [], [], []
    for d, (extent, axis) in enumerate(zip(op.result.type.extents, axes.data, strict=True)):
        assert isinstance(axis, tile.AxisAttr)
        if extent == 1 and d != op.dim:
            sizes.append(ONE)
            tiles.append(ONE)
            index.append("whole")
        else:
            sizes.append(axis.size.data)
            tiles.append(axis.tile.data)
            index.append(axis.walker.data)
    return tile.View(ZERO, sizes, [ZERO] * len(sizes), tiles, index)
