"""Symbolic shapes and kernel views of the data movement ops (`tensor.extract_slice`,
`tensor.insert_slice`).

The `symbolic-shapes` pass gives a slice the shape its sizes say and records
its offsets and strides as expressions (`dvm.slice`), so that `fuse` and
`convert-tensor-to-tile` can fold the slice into the strided view through
which a kernel reads its source: offsets move the view's start, strides
scale its steps. Nothing in a kernel can check a slice's bounds (a
view that leaves its dim may still lie inside the buffer), so each launch
of a kernel with slices carries them (`SLICE_BOUNDS`) and the runtime checks
them before it runs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sympy
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, StringAttr
from xdsl.ir import Operation, SSAValue

from dvm.dialects import tensor as t
from dvm.dialects.data_movement import ExtractSliceOp, InsertSliceOp, PadOp, ReverseOp
from dvm.dialects.expr import ShapeAttr
from dvm.passes.errors import located
from dvm.passes.symbolic import SHAPE, Shape, shape_from_attr, shape_of

SLICE = "dvm.slice"
"""On an `extract_slice`: its offsets and strides, as two `#dvm.shape` lists."""
SLICE_BOUNDS = "dvm.slice_bounds"
"""On a launch: each slice its kernel reads through (or an insert_slice writes), as
{op, source, offsets, sizes, strides} (expressions of the shape symbols; `whole`:
"destination" for an insert_slice); the runtime checks them as it launches."""


PADDED = "padded result"
"""What a pad's bounds check slices: its source lies in its result at the low pads."""


def mixed_exprs(
    static: Sequence[int], dynamic: Sequence[SSAValue], value: Callable[[SSAValue], sympy.Expr]
) -> list[sympy.Expr]:
    """Constants and `index` values (one per DYN, in order) as expressions."""
    values = iter(dynamic)
    return [value(next(values)) if d == t.DYN else sympy.Integer(d) for d in static]


def slice_shape(
    op: ExtractSliceOp | InsertSliceOp, value: Callable[[SSAValue], sympy.Expr]
) -> tuple[list[sympy.Expr], ShapeAttr, ShapeAttr]:
    """The slice's sizes, and the offsets and strides as attributes."""
    offsets = mixed_exprs(op.static_offsets.get_values(), op.offsets, value)
    sizes = mixed_exprs(op.static_sizes.get_values(), op.sizes, value)
    strides = mixed_exprs(op.static_strides.get_values(), op.strides, value)
    return sizes, ShapeAttr(offsets), ShapeAttr(strides)


def pad_shape(
    op: PadOp, source: Shape, value: Callable[[SSAValue], sympy.Expr]
) -> tuple[list[sympy.Expr], ShapeAttr, ShapeAttr]:
    """The padded shape, and where the source lies in it (the low pads, unit steps)."""
    low = mixed_exprs(op.static_low.get_values(), op.low, value)
    high = mixed_exprs(op.static_high.get_values(), op.high, value)
    shape = [sympy.expand(lo + d + hi) for lo, d, hi in zip(low, source, high, strict=True)]
    return shape, ShapeAttr(low), ShapeAttr([sympy.Integer(1)] * len(low))


def slice_exprs(op: ExtractSliceOp | InsertSliceOp | PadOp) -> tuple[Shape, Shape]:
    """The offsets and strides `symbolic-shapes` recorded on a slice."""
    attr = op.attributes[SLICE]
    assert isinstance(attr, ArrayAttr)
    offsets, strides = attr.data
    return shape_from_attr(offsets), shape_from_attr(strides)


def slice_view(
    op: ExtractSliceOp | InsertSliceOp | PadOp, offset: sympy.Expr, strides: Sequence[sympy.Expr]
) -> tuple[sympy.Expr, list[sympy.Expr]]:
    """The view of the slice's result, given the view of its source (start and strides)."""
    starts, steps = slice_exprs(op)
    moved = offset + sum((o * s for o, s in zip(starts, strides, strict=True)), sympy.Integer(0))
    return moved, [s * k for s, k in zip(strides, steps, strict=True)]


def reverse_view(
    op: ReverseOp, shape: Shape, offset: sympy.Expr, strides: Sequence[sympy.Expr]
) -> tuple[sympy.Expr, list[sympy.Expr]]:
    """The view of a reverse's result, given its source's: each reversed dim starts at
    its last element and steps back."""
    out = list(strides)
    for axis in op.reversed_axes:
        offset = offset + (shape[axis] - 1) * strides[axis]
        out[axis] = -strides[axis]
    return offset, out


def slice_bounds(ops: Sequence[Operation]) -> list[DictionaryAttr]:
    """`SLICE_BOUNDS` of a kernel's ops."""
    found = []
    for op in ops:
        if isinstance(op, ExtractSliceOp):
            offsets, strides = slice_exprs(op)
            entry = {
                "op": StringAttr(located(op)),
                "source": ShapeAttr(shape_of(op.source)),
                "offsets": ShapeAttr(offsets),
                "sizes": op.attributes[SHAPE],
                "strides": ShapeAttr(strides),
            }
            found.append(DictionaryAttr(entry))
        elif isinstance(op, InsertSliceOp | PadOp):
            offsets, strides = slice_exprs(op)
            into = op.dest if isinstance(op, InsertSliceOp) else op.result
            entry = {
                "op": StringAttr(located(op)),
                "source": ShapeAttr(shape_of(into)),
                "offsets": ShapeAttr(offsets),
                "sizes": ShapeAttr(shape_of(op.source)),
                "strides": ShapeAttr(strides),
                "whole": StringAttr("destination" if isinstance(op, InsertSliceOp) else PADDED),
            }
            found.append(DictionaryAttr(entry))
    return found


def read_slice_bounds(entries: ArrayAttr) -> list[tuple[str, str, list[Shape]]]:
    """`SLICE_BOUNDS` as (label, what is sliced, [source, offsets, sizes, strides])."""
    out = []
    for entry in entries.data:
        assert isinstance(entry, DictionaryAttr)
        label, whole = entry.data["op"], entry.data.get("whole", StringAttr("source"))
        assert isinstance(label, StringAttr) and isinstance(whole, StringAttr)
        keys = ("source", "offsets", "sizes", "strides")
        out.append((label.data, whole.data, [shape_from_attr(entry.data[k]) for k in keys]))
    return out
