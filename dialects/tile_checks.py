"""What tile IR must hold for the tile interpreter and the lowering to bytecode.

`convert-tensor-to-tile` writes a kernel's attributes (`dvm.axes`, `dvm.arg_shapes`,
`dvm.tile_sizes`, `dvm.device`) and types every tile of its body in the kernel's
axes. Tile IR may also be written or edited by hand, so `KernelOp.verify_` checks
here what the readers rely on, and they can trust it:

- each attribute, when present, is of its kind; `dvm.arg_shapes` has one shape
  per argument, of the argument's rank;
- with `dvm.axes`, every tile of the body has one dim per axis (but a load that
  only feeds matmuls, whose operands are in the matmul's own coordinates); an
  iota's dim, a fused piece's `dvm.piece_sizes` and a take's or scatter's
  `dvm.op` / `dvm.axis` fit.

`dvm.axes` and `dvm.arg_shapes` are optional in the dialect (a kernel written to
show its syntax needs neither) but required to run or lower one:
`missing_for_running` names the first one absent.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from dvm.dialects.expr import ExprAttr, ShapeAttr
from dvm.dialects.locations import where
from dvm.dialects.tile_type import TileType
from dvm.vm.device import PRESETS

AXES = "dvm.axes"
ARG_SHAPES = "dvm.arg_shapes"
TILE_SIZES = "dvm.tile_sizes"
DEVICE = "dvm.device"
PIECE_SIZES = "dvm.piece_sizes"
LABELLED_OPS = ("tile.take", "tile.scatter_add")
"""Ops whose errors name the op they come from (`dvm.op`) and the dim they index
(`dvm.axis`)."""

REQUIRED_TO_RUN = (AXES, ARG_SHAPES)


def verify_kernel(kernel: Operation) -> None:
    """A VerifyException naming what is wrong if `kernel`'s attributes or the ranks of
    its tiles are not what the interpreter and the lowering read."""
    symbol = kernel.properties["sym_name"]
    assert isinstance(symbol, StringAttr)  # (its definition checked it)
    name = f"'tile.kernel' @{symbol.data}"
    attrs = kernel.attributes
    axes = attrs.get(AXES)
    if axes is not None and not array_of(axes, "tile.axis"):
        raise VerifyException(f"{name} {AXES} must be an array of #tile.axis")
    shapes = attrs.get(ARG_SHAPES)
    if shapes is not None:
        verify_arg_shapes(name, shapes, [a.type for a in kernel.regions[0].block.args])
    sizes = attrs.get(TILE_SIZES)
    if sizes is not None and not (
        isinstance(sizes, DictionaryAttr)
        and all(isinstance(v, ExprAttr) for v in sizes.data.values())
    ):
        raise VerifyException(f"{name} {TILE_SIZES} must map names to #dvm.expr")
    verify_device(name, attrs.get(DEVICE))
    grid = len(kernel.properties["grid"].data)  # pyright: ignore[reportAttributeAccessIssue]
    for op in kernel.walk():
        try:
            verify_index_sources(op, grid)
            if isinstance(axes, ArrayAttr) and op is not kernel:
                verify_body_op(op, len(axes.data))
        except VerifyException as e:  # raised at the kernel: say where the op is
            raise VerifyException(f"{name}: {where(op) or 'in its body: '}{e}") from None


def verify_index_sources(op: Operation, grid: int) -> None:
    """Each grid axis a view or an axis names (`gridN`) is one of the kernel's, each loop
    (`loopN`) a view names encloses it."""
    attr = op.attributes.get(AXES) if op.name == "tile.kernel" else op.properties.get("index")
    if not isinstance(attr, ArrayAttr):
        return
    sources = [getattr(a, "walker", a) for a in attr.data]
    for source in (s.data for s in sources if isinstance(s, StringAttr)):
        number = int(source[4:]) if source.startswith(("grid", "loop")) else 0
        if source.startswith("grid") and number >= grid:
            raise VerifyException(f"'{op.name}' walks {source} of a grid of {grid} axes")
        in_loop = op.name == "tile.kernel" or number in enclosing_loops(op)  # an axis: any
        if source.startswith("loop") and not in_loop:
            raise VerifyException(f"'{op.name}' walks {source} outside a tile.for {source}")


def enclosing_loops(op: Operation) -> set[int]:
    levels: set[int] = set()
    parent = op.parent_op()
    while parent is not None and parent.name == "tile.for":
        level = parent.properties.get("level")
        if isinstance(level, IntegerAttr):
            levels.add(level.value.data)
        parent = parent.parent_op()
    return levels


def verify_device(name: str, device: Attribute | None) -> None:
    """`dvm.device`, when present, names a device preset (that of a kernel or program)."""
    if device is not None and not (isinstance(device, StringAttr) and device.data in PRESETS):
        known = ", ".join(f'"{p}"' for p in PRESETS)
        raise VerifyException(f"{name} {DEVICE} must be one of the device presets {known}")


def array_of(attr: Attribute, element_name: str) -> bool:
    return isinstance(attr, ArrayAttr) and all(a.name == element_name for a in attr.data)


def verify_arg_shapes(name: str, shapes: Attribute, arg_types: list[Attribute]) -> None:
    if not isinstance(shapes, ArrayAttr) or not all(isinstance(s, ShapeAttr) for s in shapes.data):
        raise VerifyException(f"{name} {ARG_SHAPES} must be an array of #dvm.shape")
    if len(shapes.data) != len(arg_types):
        raise VerifyException(
            f"{name} {ARG_SHAPES} has {len(shapes.data)} shapes for {len(arg_types)} arguments"
        )
    for i, (shape, type_) in enumerate(zip(shapes.data, arg_types, strict=True)):
        assert isinstance(shape, ShapeAttr)
        rank = len(type_.shape) if isinstance(type_, TensorType) else 0
        if len(shape.data) != rank:
            raise VerifyException(
                f"{name} {ARG_SHAPES}: argument {i} has rank {rank}, its shape {len(shape.data)}"
            )


def tile_rank(value: SSAValue) -> int | None:
    return value.type.rank if isinstance(value.type, TileType) else None


def verify_body_op(op: Operation, axes: int) -> None:
    """One op of a kernel of `axes` axes: its tiles' ranks and its dvm attributes."""
    name = f"'{op.name}'"
    values = [*op.results, *(a for r in op.regions for b in r.blocks for a in b.args)]
    if op.name == "tile.load" and all(u.operation.name.endswith("mma") for u in op.results[0].uses):
        values = []  # a matmul's operand: in the matmul's coordinates (tile.mma, tile.gmma)
    for value in values:
        rank = tile_rank(value)
        if rank is not None and rank != axes:
            raise VerifyException(f"{name} makes a tile of rank {rank} in a kernel of {axes} axes")
    piece = op.attributes.get(PIECE_SIZES)
    if piece is not None and not (isinstance(piece, ShapeAttr) and len(piece.data) == axes):
        raise VerifyException(f"{name} {PIECE_SIZES} must be a #dvm.shape of {axes} sizes")
    if op.name == "tile.iota":
        dim = op.properties.get("dimension")
        if isinstance(dim, IntegerAttr) and not 0 <= dim.value.data < axes:
            raise VerifyException(f"{name} dim {dim.value.data} is not one of the {axes} axes")
    if op.name in LABELLED_OPS:
        if not isinstance(op.attributes.get("dvm.op"), StringAttr):
            raise VerifyException(f"{name} needs `dvm.op`: the op it comes from (a string)")
        if not isinstance(op.attributes.get("dvm.axis"), IntegerAttr):
            raise VerifyException(f"{name} needs `dvm.axis`: the dim it indexes (an integer)")


def missing_for_running(kernel: Operation) -> str | None:
    """Why `kernel` cannot be run or lowered (an attribute only tiling writes is
    absent), or None."""
    for attr in REQUIRED_TO_RUN:
        if attr not in kernel.attributes:
            return f"has no {attr} (written by convert-tensor-to-tile), needed to run or lower it"
    return None


# --------------------------------------------------------------------------
# Ops whose types the interpreter and the lowering combine
# --------------------------------------------------------------------------


def tile_type(value: SSAValue) -> TileType:
    assert isinstance(value.type, TileType)  # (the op's definition checked it)
    return value.type


def verify_reduce(op: Operation, axes: Sequence[int]) -> None:
    """A reduction keeps its input's rank; each reduced axis exists and has extent 1 in
    the result, the others the input's extent."""
    source, result = tile_type(op.operands[0]), tile_type(op.results[0])
    if source.rank != result.rank:
        raise VerifyException(f"'{op.name}' result must have its input's rank {source.rank}")
    if not all(0 <= a < source.rank for a in axes) or len(set(axes)) != len(axes):
        raise VerifyException(f"'{op.name}' axes {list(axes)} must be distinct axes of the input")
    for d, (a, r) in enumerate(zip(source.extents, result.extents, strict=True)):
        want = 1 if d in axes else a
        if r != want:
            raise VerifyException(f"'{op.name}' result extent {d} must be {want}, not {r}")
    if source.element_type != result.element_type:
        raise VerifyException(f"'{op.name}' result must have its input's element type")


def verify_mma(op: Operation) -> None:
    """A matmul's operands and accumulator have one rank (at least 2) and element type."""
    lhs, rhs, acc = (tile_type(v) for v in op.operands)
    if len({lhs.rank, rhs.rank, acc.rank}) != 1 or acc.rank < 2:
        raise VerifyException(f"'{op.name}' operands must have one rank, at least 2")
    if op.results[0].type != acc:
        raise VerifyException(f"'{op.name}' result must have the accumulator's type")
    if len({lhs.element_type, rhs.element_type}) != 1:
        raise VerifyException(f"'{op.name}' operands must have one element type")


def verify_element_types(op: Operation, same_type: bool) -> None:
    """An elementwise op's tile operands (but a select's condition) share an element
    type; its result has it too, or is i1 (a comparison's)."""
    operands = [tile_type(v) for v in op.operands][-2:]
    if len({t.element_type for t in operands}) != 1:
        raise VerifyException(f"'{op.name}' operands must have one element type")
    want = operands[0].element_type if same_type else IntegerType(1)
    if tile_type(op.results[0]).element_type != want:
        raise VerifyException(f"'{op.name}' result must have element type {want}")
