"""The `convert-tile-to-bytecode` pass: each `tile.kernel` becomes a `bytecode.program`.

Tiles become *registers*: buffers at offsets in a core's local memory. A
register is reused as soon as the tile it holds is dead (elementwise ops may
even write into an operand that dies there, as numpy's `out=` allows), so a
kernel needs as many registers as it has tiles alive at once, not one per
value. Every size (tile extents, register sizes and offsets, view sizes and
strides, grid, trip counts) becomes a *parameter slot*: a sympy expression
of the shape symbols, evaluated once per concrete shape.

A constant operand of a binary op becomes the op's scalar operand (`add.rs
r1, r0, 1.0`, or `div.rs r1, r1, s3` for a shape-dependent one); other
constants are `fill`ed. A loop's carried tile lives in one register for the
whole loop.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IndexType,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from dvm.dialects import bytecode as bc
from dvm.dialects import tile
from dvm.dialects.expr import (
    ExprAttr,
    as_expr,
    linear_sum,
    product,
    replace,
    sceiling,
    symbol,
    symbol_name,
    symbols_in,
)
from dvm.dialects.grouped_matmul import TileGroupedMmaOp
from dvm.dialects.index_ops import PIECE_SIZES, TileIotaOp, TileScatterAddOp, TileTakeOp
from dvm.dialects.scans import TileScanOp, TileTopKOp
from dvm.dialects.tile_checks import missing_for_running
from dvm.dialects.walk import block_of, block_ops, ops_inside, replace_isolated
from dvm.lowering.index_ops import iota_view, measuring_view
from dvm.lowering.kernel_body import statically_empty
from dvm.lowering.tensor_to_tile import ARG_SHAPES, AXES, DEVICE, DEVICES, TILE_SIZES
from dvm.passes.domain import OpSet
from dvm.passes.errors import ProgramError
from dvm.passes.symbolic import CORES, shape_from_attr
from dvm.vm.isa import DTYPE_BY_TEXT, MAX_RANK, ReduceKind

COMBINING = {
    "sum": ReduceKind.SUM,
    "max": ReduceKind.MAX,
    "min": ReduceKind.MIN,
    "prod": ReduceKind.PROD,
}
IN_PLACE = OpSet(tile.TileUnaryOp, tile.TileBinaryOp, tile.SelectOp, tile.ConvertOp)
"""Ops whose destination may be one of their operands (numpy `out=` allows it). A
convert reuses its operand's register only when their kinds match: the same element
type, a copy (tiling counts every elementwise op's result in place, `new_registers`)."""


@lru_cache(maxsize=64)
def dtype_text(element: Attribute) -> str:
    """The VM's spelling of an element type (`index` elements are i64 on the VM).
    Remembered: xDSL prints a type through a new Printer, and register allocation
    asks at every op."""
    return "i64" if isinstance(element, IndexType) else str(element)


def element_bytes(element: Attribute) -> int:
    return DTYPE_BY_TEXT[dtype_text(element)].np.itemsize


SLOT_NAME = re.compile(r"s\d+")
"""A slot's symbol (`s3`): a tile size named in the kernel."""


@lru_cache(maxsize=1 << 12)
def named_by_slots(expr: sympy.Expr, renames: tuple[tuple[str, int], ...]) -> sympy.Expr:
    """`expr` with each named tile size of `renames` (`t0`) as the symbol of the slot
    that holds it (`s3`). Remembered: a program's kernels and every compile of it
    rename the same tile sizes in the same expressions (made once each: see
    `expr.unevaluated`), and renaming walks a nested tile size's whole tree."""
    return replace(expr, {symbol(name): symbol(f"s{i}") for name, i in renames})


@dataclass
class Slots:
    """The program's parameter slots, interned by expression."""

    exprs: list[sympy.Expr] = field(default_factory=list)
    index: dict[sympy.Expr, int] = field(default_factory=dict)
    """Each slot by its expression (sympy's structural equality: every symbol is made
    by `symbol`, so two expressions that print alike are equal; printing them to
    compare costs sympy's printer tens of microseconds a node the first time)."""
    renames: tuple[tuple[str, int], ...] = ()
    """Each named tile size (`t0`) and the slot that holds it (`s3`: 3)."""
    known: dict[tuple[type, object], int] = field(default_factory=dict)
    """`of` by its argument (and its type: 1 and 1.0 hash alike) while `renames` stays:
    renaming walks the expression's whole tree."""

    def of(self, expr: sympy.Expr | int) -> int:
        key = (type(expr), expr)
        got = self.known.get(key)
        if got is None:
            got = self.known[key] = self.intern(as_expr(expr))
        return got

    def rename(self, name: str, index: int) -> None:
        """Name a tile size: later expressions read `name` as slot `index`."""
        self.renames = (*self.renames, (name, index))
        self.known.clear()

    def intern(self, expr: sympy.Expr) -> int:
        """The slot of `expr`, renamed, made if new."""
        return self.renamed(named_by_slots(expr, self.renames))

    def renamed(self, value: sympy.Expr) -> int:
        """The slot of `value`, an expression that names tile sizes by their slots
        (`s3`), made if new."""
        if isinstance(value, sympy.Symbol) and SLOT_NAME.fullmatch(value.name):  # a named size
            return int(value.name[1:])
        found = self.index.get(value)
        if found is None:
            found = self.index[value] = len(self.exprs)
            self.exprs.append(value)
        return found

    def name(self, expr: sympy.Expr) -> str:
        return f"s{self.of(expr)}"


@dataclass
class Registers:
    """Physical registers: (dtype, shape) each, and which value holds each now."""

    kinds: list[tuple[str, tuple[sympy.Expr, ...]]] = field(default_factory=list)
    holder: list[SSAValue | None] = field(default_factory=list)
    of: dict[SSAValue, int] = field(default_factory=dict)


class ProgramBuilder:
    """Turns one tile kernel into bytecode ops."""

    def __init__(self, kernel: tile.KernelOp, alignment: int):
        self.kernel = kernel
        self.alignment = alignment
        self.slots = Slots()
        self.regs = Registers()
        self.views: list[bc.ViewOp] = []
        self.view_of: dict[Operation, int] = {}
        self.view_index: dict[tuple[int, int, tuple[str, ...]], int] = {}
        self.code: list[Operation] = []
        self.last_use: dict[SSAValue, int] = {}
        self.position: dict[Operation, int] = {}
        self.extent_views: dict[int, tuple[int, int]] = {}
        self.depth = 0
        """How many loops enclose the op being emitted."""
        """Tile dim -> (view, dim) whose current extent it has."""

    # -- analysis ----------------------------------------------------------------

    def number(self, block: Block) -> None:
        """Program-order positions of every op (a loop's body follows it)."""
        for op in block_ops(block):
            self.position[op] = len(self.position)
            if type(op) is tile.ForOp:
                self.number(op.body.block)

    def live_ranges(self) -> None:
        """Each value's last use. A use inside a loop of a value from outside
        the loop lasts until the loop's end, since the loop runs again."""
        self.block_live_ranges(self.kernel.body.block, [], {})

    def block_live_ranges(
        self, block: Block, loops: list[tile.ForOp], depth: dict[SSAValue, int]
    ) -> None:
        """`live_ranges` of the ops in `block`, inside `loops` (outermost first);
        `depth` holds how many loops enclose each value's definition: a value is
        visible only inside them, so the loops around a use that do not hold the
        value are those past its depth."""
        for arg in block.args:
            depth[arg] = len(loops)
        for op in block_ops(block):
            end = self.position[op]
            for v in op.operands:
                outside = depth.get(v, 0)
                last = end
                if outside < len(loops):  # (the outermost loop that does not hold it)
                    last = max(end, self.position[loops[outside].body.block.last_op])  # type: ignore[index]
                self.last_use[v] = max(self.last_use.get(v, -1), last)
            for r in op.results:
                depth[r] = len(loops)
            inner = [*loops, op] if type(op) is tile.ForOp else loops
            for region in op.regions:
                for nested in region.blocks:
                    self.block_live_ranges(nested, inner, depth)

    # -- registers ----------------------------------------------------------------

    def kind(self, value: SSAValue) -> tuple[str, tuple[sympy.Expr, ...]]:
        assert isinstance(value.type, tile.TileType)
        return dtype_text(value.type.element_type), value.type.extents

    def release_dead(self, position: int) -> None:
        for r, value in enumerate(self.regs.holder):
            if value is not None and self.last_use.get(value, -1) < position:
                self.regs.holder[r] = None

    def allocate(self, value: SSAValue, op: Operation | None = None) -> int:
        """A register for `value`: a free one of its kind, an operand's that
        dies at this in-place op, or a new one."""
        position = self.position[op] if op is not None else 0
        self.release_dead(position)
        kind = self.kind(value)
        candidates = [
            r for r, h in enumerate(self.regs.holder) if h is None and self.regs.kinds[r] == kind
        ]
        if op is not None and op in IN_PLACE:
            for operand in reversed(op.operands):  # the first operand's register wins
                r = self.regs.of.get(operand)
                if (
                    r is not None
                    and self.last_use.get(operand) == position
                    and self.regs.kinds[r] == kind
                ):
                    candidates.insert(0, r)
        if candidates:
            r = candidates[0]
        else:
            r = len(self.regs.kinds)
            self.regs.kinds.append(kind)
            self.regs.holder.append(None)
        self.regs.holder[r] = value
        self.regs.of[value] = r
        return r

    def reg(self, value: SSAValue) -> int:
        return self.regs.of[value]

    # -- views and shapes ---------------------------------------------------------------

    def declare_views(self) -> None:
        """Every load's and store's view, declared before any code so that
        shapes can name a view's current extent (identical views are one)."""
        for op in ops_inside(self.kernel):
            # (exact classes: xDSL's ABC `isinstance` is slow, asked per op)
            if type(op) is tile.LoadOp:
                self.view_of[op] = self.view(op, self.arg_index(op.source))
            elif type(op) is tile.StoreOp:
                self.view_of[op] = self.view(op, self.arg_index(op.dest))
            elif type(op) is TileGroupedMmaOp:  # where its rows start
                self.view_of[op] = self.view(op, self.arg_index(op.rows))
            elif type(op) is TileTakeOp:
                self.view_of[op] = self.view(op, self.arg_index(op.source))
            elif type(op) is TileScatterAddOp:
                self.view_of[op] = self.view(op, self.arg_index(op.dest))
            elif type(op) is TileIotaOp:
                measure = iota_view(self.kernel, op)
                self.view_of[op] = self.view(measure, self.measured_output(measure))
            elif type(op) is tile.BroadcastOp and PIECE_SIZES in op.attributes:
                assert isinstance(op.result.type, tile.TileType)
                piece = measuring_view(self.kernel, op, op.result.type, None)
                self.view_of[op] = self.view(piece, self.measured_output(piece))

    def measured_output(self, measure: tile.View) -> int:
        """The argument a measuring view is bound to. It reads nothing (strides 0), and
        the VM checks no bounds of a view that nothing reads or writes through (its
        argument may be empty where it is not), so any argument serves; this one keeps
        the view inside its argument wherever it can: the first output stored along no
        axis but those the view spans, which has an element whenever the view does (an
        output spanning another axis, one the iota's tiles are broadcast along, may be
        empty while the view is not), else the first output without a static 0 dim."""
        args = self.kernel.body.block.args
        first = len(args) - self.kernel.num_outputs
        outputs = [i for i in range(first, len(args)) if not statically_empty(args[i])]
        measured = spanned_axes(measure)
        stores = [op for op in ops_inside(self.kernel) if type(op) is tile.StoreOp]
        for i in outputs:
            views = [op.view for op in stores if self.arg_index(op.dest) == i]
            if views and all(spanned_axes(v) <= measured for v in views):
                return i
        return outputs[0] if outputs else first

    def view(self, op: tile.ViewOp | tile.View, arg: int) -> int:
        v = op.view if isinstance(op, tile.ViewOp) else op
        dims = []
        for size, stride, tile_size, source in zip(
            v.sizes, v.strides, v.tiles, v.index, strict=True
        ):
            text = f"{self.slots.name(size)} {self.slots.name(stride)}"
            if source != "whole":
                walker = source.replace("grid", "g").replace("loop", "l")
                text += f" {walker} {self.slots.name(tile_size)}"
            dims.append(text)
        key = (arg, self.slots.of(v.offset), tuple(dims))
        if key in self.view_index:
            return self.view_index[key]
        index = self.view_index[key] = len(self.views)
        self.views.append(bc.ViewOp.make(index, arg, key[1], dims))
        axes = self.kernel.attributes.get(AXES)
        assert isinstance(axes, ArrayAttr)
        for d, axis in enumerate(axes.data):  # which tile dims this view's tiles measure
            assert isinstance(axis, tile.AxisAttr)
            if (
                d < len(v.sizes)
                and axis.walker.data != "whole"
                and (v.sizes[d], v.tiles[d], v.index[d])
                == (axis.size.data, axis.tile.data, axis.walker.data)
            ):
                self.extent_views.setdefault(d, (index, d))
        return index

    def shape(self, type_: tile.TileType) -> tuple[tuple[object, ...], ...]:
        """A SHAPE operand: each dim's current tile extent (a view's) or a slot (also
        for an extent other than its axis's tile, or outside the loop that walks the
        axis: a top_k carry's k)."""
        axes = self.kernel.attributes.get(AXES)
        assert isinstance(axes, ArrayAttr)
        extents: list[tuple[object, ...]] = []
        for d, (extent, axis) in enumerate(zip(type_.extents, axes.data, strict=True)):
            assert isinstance(axis, tile.AxisAttr)
            walker = axis.walker.data
            outside = walker.startswith("loop") and int(walker.removeprefix("loop")) >= self.depth
            if extent != 1 and d in self.extent_views and extent == axis.tile.data and not outside:
                view, dim = self.extent_views[d]
                extents.append(("v", view, dim))
            elif extent != 1 and axis.walker.data == "whole":
                # all of the axis: its size, which the tile size (at least 1) is
                # not when it is empty, where loads and stores move no element
                extents.append(("s", self.slots.of(axis.size.data)))
            else:
                extents.append(("s", self.slots.of(extent)))
        return tuple(extents)

    def broadcast_shape(self, op: tile.BroadcastOp) -> tuple[tuple[object, ...], ...]:
        """A broadcast's SHAPE: a dim its input spans keeps the input's extent (its
        register's) where no view measures the dim, and in a fused concat's or pad's
        piece, whose extents are its own, not the result's, its view measures them."""
        source, target = op.input.type, op.result.type
        assert isinstance(source, tile.TileType) and isinstance(target, tile.TileType)
        shape = list(self.shape(target))
        piece = self.view_of.get(op)  # a fused piece's: its own extents
        axes = self.kernel.attributes.get(AXES)
        assert isinstance(axes, ArrayAttr)
        for d, (a, b) in enumerate(zip(source.extents, target.extents, strict=True)):
            axis = axes.data[d]
            assert isinstance(axis, tile.AxisAttr)
            tiled = axis.walker.data != "whole"  # (a whole axis's size is right)
            if a == b != 1 and tiled and shape[d][0] == "s" and d not in self.extent_views:
                shape[d] = ("r", self.reg(op.input), d)
            elif b != 1 and piece is not None:
                shape[d] = ("v", piece, d)
        return tuple(shape)

    # -- emission -----------------------------------------------------------------------

    def emit(self, name: str, *operands: object) -> None:
        self.code.append(bc.INSTRUCTIONS[name].make(operands))

    def scalar(self, value: SSAValue) -> object | None:
        """The scalar operand a constant tile stands for, if it is one."""
        owner = value.owner
        if not isinstance(owner, tile.ConstantOp):
            return None
        constant = owner.value
        if isinstance(constant, ExprAttr):
            return ("slot", self.slots.of(constant.data))
        return float(constant.value.data)

    def block(self, block: Block) -> None:
        for op in block_ops(block):
            self.op(op)

    def op(self, op: Operation) -> None:
        if isinstance(op, tile.YieldOp):  # handled by `loop`
            return
        if isinstance(op, tile.ConstantOp):
            if any(not self.takes_scalar(u.operation, u.index) for u in op.result.uses):
                self.fill(op)
            return
        if isinstance(op, tile.LoadOp):
            self.emit("load", self.allocate(op.result, op), self.view_of[op])
        elif isinstance(op, tile.StoreOp):
            view = self.view_of[op]
            if op.accumulation == "none":
                self.emit("store", view, self.reg(op.value))
            else:
                self.emit("store_acc", view, self.reg(op.value), op.accumulation)
        elif isinstance(op, tile.TileBinaryOp):
            self.binary(op)
        elif isinstance(op, tile.TileUnaryOp):
            name = op.name.removeprefix("tile.")
            src = self.reg(op.operands[0])
            self.emit(name, self.allocate(op.results[0], op), src)
        elif isinstance(op, tile.TileCastOp):
            self.cast(op)
        elif isinstance(op, tile.SelectOp):
            c, a, b = (self.reg(v) for v in op.operands)
            self.emit("select", self.allocate(op.result, op), c, a, b)
        elif isinstance(op, tile.TileReduceOp):
            kind = COMBINING[op.name.removeprefix("tile.reduce_")]
            mask = sum(1 << a for a in op.reduced_axes)
            src = self.reg(op.input)
            self.emit("reduce", self.allocate(op.result, op), src, kind, mask, 1)
        elif isinstance(op, tile.BroadcastOp):
            src = self.reg(op.input)
            self.emit("broadcast", self.allocate(op.result, op), src, self.broadcast_shape(op))
        elif isinstance(op, tile.MmaOp):
            self.mma(op)
        elif isinstance(op, TileGroupedMmaOp):
            a, b, sizes = (self.reg(v) for v in op.operands[:3])
            self.emit("gmma", self.allocate(op.result, op), a, b, sizes, self.view_of[op])
        elif isinstance(op, tile.ForOp):
            self.loop(op)
        elif isinstance(op, TileScanOp):
            self.scan(op)
        elif isinstance(op, TileTopKOp):
            self.top_k(op)
        elif isinstance(op, TileTakeOp):
            indices = self.reg(op.indices)
            self.emit("take", self.allocate(op.result, op), self.view_of[op], indices)
        elif isinstance(op, TileScatterAddOp):
            updates, indices = self.reg(op.value), self.reg(op.indices)
            self.emit("scatter_add", self.view_of[op], updates, indices)
        elif isinstance(op, TileIotaOp):
            self.emit("iota", self.allocate(op.result, op), self.view_of[op], 1 << op.dim)
        else:
            raise NotImplementedError(f"convert-tile-to-bytecode: no instruction for {op.name}")

    def takes_scalar(self, user: Operation, index: int) -> bool:
        """Whether a constant used here can be the scalar operand (`.rs`/`.sr`),
        or needs no register at all (a zero accumulator: an mma that overwrites)."""
        if isinstance(user, tile.MmaOp):
            return index == 2 and self.zero(user.acc)
        if not isinstance(user, tile.TileBinaryOp):
            return False
        other = user.operands[1 - index]
        return not isinstance(other.owner, tile.ConstantOp)

    def fill(self, op: tile.ConstantOp) -> None:
        assert isinstance(op.result.type, tile.TileType)
        value = self.scalar(op.result)
        self.emit("fill", self.allocate(op.result, op), value, self.shape(op.result.type))

    def binary(self, op: Operation) -> None:
        name = op.name.removeprefix("tile.")
        lhs, rhs = op.operands
        a, b = self.scalar(lhs), self.scalar(rhs)
        if b is not None and lhs in self.regs.of:
            self.emit(f"{name}.rs", self.allocate(op.results[0], op), self.reg(lhs), b)
        elif a is not None and rhs in self.regs.of:
            self.emit(f"{name}.sr", self.allocate(op.results[0], op), a, self.reg(rhs))
        else:
            self.emit(name, self.allocate(op.results[0], op), self.reg(lhs), self.reg(rhs))

    def cast(self, op: Operation) -> None:
        result = op.results[0]
        assert isinstance(result.type, tile.TileType)
        src = self.reg(op.operands[0])
        if isinstance(op, tile.ConvertOp):
            self.emit(
                "convert", self.allocate(result, op), src, dtype_text(result.type.element_type)
            )
        else:  # a test such as isfinite: the instruction of its name
            self.emit(op.name.removeprefix("tile."), self.allocate(result, op), src)

    def zero(self, value: SSAValue) -> bool:
        """Whether `value` is a constant tile of zeros."""
        return self.scalar(value) == 0.0

    def mma(self, op: tile.MmaOp) -> None:
        """dst = acc + a @ b, accumulating in the accumulator's register; onto a
        zero constant, dst = a @ b (no fill, no accumulation pass)."""
        acc = op.acc
        flags = (1 if op.flags[0] else 0) | (2 if op.flags[1] else 0)
        if self.zero(acc):
            target = self.allocate(op.result, op)
            self.emit("mma", target, self.reg(op.lhs), self.reg(op.rhs), flags)
            return
        target = self.reg(acc)
        if self.last_use.get(acc, -1) > self.position[op]:  # the old value is still needed
            target = self.allocate(op.result, op)
            self.emit("copy", target, self.reg(acc))
        else:
            self.regs.holder[target] = op.result
            self.regs.of[op.result] = target
        self.emit("mma", target, self.reg(op.lhs), self.reg(op.rhs), flags | 4)

    def loop(self, op: tile.ForOp) -> None:
        """`loop count ... endloop`, the carried tiles each in one register."""
        carried: list[int] = []
        for init, arg in zip(op.inits, op.body.block.args, strict=True):
            r = self.reg(init)
            if self.last_use.get(init, -1) > self.position[op]:
                r = self.allocate(arg, op)
                self.emit("copy", r, self.reg(init))
            self.regs.holder[r] = arg
            self.regs.of[arg] = r
            carried.append(r)
        self.emit("loop", self.slots.of(op.count.data))
        self.depth += 1
        self.block(op.body.block)
        self.depth -= 1
        yielded = op.body.block.last_op
        assert isinstance(yielded, tile.YieldOp)
        for r, value in zip(carried, yielded.values, strict=True):
            if self.reg(value) != r:
                self.emit("copy", r, self.reg(value))
        self.emit("endloop")
        for r, result in zip(carried, op.results, strict=True):
            self.regs.holder[r] = result
            self.regs.of[result] = r

    def scan(self, op: TileScanOp) -> None:
        """`scan dst, src, carry`: the carry's register, which the scan updates in place,
        holds the carry it makes (the old one dies here: only the scan reads it)."""
        carry = self.reg(op.carry)
        dst = self.allocate(op.result, op)
        flags = 1 if op.is_exclusive else 0
        kind, axis = COMBINING[op.kind.data], 1 << op.along
        self.emit("scan", dst, self.reg(op.source), carry, kind, axis, flags)
        self.regs.holder[carry] = op.carried
        self.regs.of[op.carried] = carry

    def top_k(self, op: TileTopKOp) -> None:
        """`top_k values, indices, src, positions`: the carry's registers, which the
        merge updates in place, hold the carry it makes (only the merge reads the old)."""
        values, indices = self.reg(op.values), self.reg(op.indices)
        src, positions = self.reg(op.source), self.reg(op.positions)
        self.emit("top_k", values, indices, src, positions, 1 << op.along)
        for r, result in ((values, op.new_values), (indices, op.new_indices)):
            self.regs.holder[r] = result
            self.regs.of[result] = r

    def arg_index(self, value: SSAValue) -> int:
        assert isinstance(value, BlockArgument)
        return value.index

    # -- the whole program --------------------------------------------------------------

    def build(self) -> bc.ProgramOp:
        kernel = self.kernel
        self.name_tile_sizes()
        self.number(kernel.body.block)
        self.live_ranges()
        self.declare_views()
        grid = [self.slots.of(g) for g in kernel.grid.data]
        self.block(kernel.body.block)
        self.check_ranks()
        params = self.params()
        body = block_of([*self.declarations(grid), *self.code])
        return bc.ProgramOp.make(kernel.sym_name.data, [p.name for p in params], Region(body))

    def check_ranks(self) -> None:
        """No argument, register or view above the VM's maximum rank, which `fuse`
        reports at the user's op; this names the kernel when one comes another way
        (written by hand), rather than leaving it to the VM's validator."""
        ranks = [("an argument", len(shape)) for shape in self.arg_shapes()]
        ranks += [("a register", len(shape)) for _, shape in self.regs.kinds]
        ranks += [("a view", len(v.dim_texts)) for v in self.views]
        what, worst = max(ranks, key=lambda r: r[1])
        if worst > MAX_RANK:
            name = self.kernel.sym_name.data
            message = f"in @{name}, {what} of rank {worst} exceeds the VM's maximum rank {MAX_RANK}"
            raise ProgramError(self.kernel, message)

    def name_tile_sizes(self) -> None:
        sizes = self.kernel.attributes.get(TILE_SIZES)
        if isinstance(sizes, DictionaryAttr):
            for name, size in sizes.data.items():
                assert isinstance(size, ExprAttr)
                self.slots.rename(name, self.slots.of(size.data))

    def params(self) -> list[sympy.Symbol]:
        """Symbols that no argument dim gives: the caller supplies them."""
        bound = {s for shape in self.arg_shapes() for s in shape if isinstance(s, sympy.Symbol)}
        slot_names = {f"s{i}" for i in range(len(self.slots.exprs))}
        free = {s for e in self.slots.exprs for s in symbols_in(e)} - {CORES}
        params = (s for s in free if s not in bound and s.name not in slot_names)
        return sorted(params, key=symbol_name)

    def arg_shapes(self) -> list[tuple[sympy.Expr, ...]]:
        shapes = self.kernel.attributes[ARG_SHAPES]
        assert isinstance(shapes, ArrayAttr)
        return [shape_from_attr(s) for s in shapes.data]

    def declarations(self, grid: Sequence[int]) -> list[Operation]:
        decls: list[Operation] = []
        for i, (arg, shape) in enumerate(
            zip(self.kernel.body.block.args, self.arg_shapes(), strict=True)
        ):
            assert isinstance(arg.type, TensorType)
            decls.append(bc.ArgOp.make(i, dtype_text(arg.type.element_type), shape))
        registers = self.register_decls()
        decls += [bc.SlotOp.make(i, e) for i, e in enumerate(self.slots.exprs)]
        decls.append(bc.GridOp.make(grid))
        decls += registers
        decls += self.views
        return decls

    def register_decls(self) -> list[Operation]:
        """Each register's shape slots and its aligned byte offset (a slot). The offsets
        are sums over the tile sizes' slot names (`s3`), as the slots write them: made of
        the named sizes (`t0`), each sum would be made twice, the second time renamed.
        Each offset is kept as the bytes per unit of size (`ceiling(s0*s1/16)`) and
        summed by `linear_sum`: sympy's arithmetic on a sum or product it has not met
        flattens it, by assumption queries."""
        decls: list[Operation] = []
        units: dict[sympy.Expr, sympy.Expr] = {}  # the offset: bytes by unit of size
        last = len(self.regs.kinds) - 1
        for r, (dtype, shape) in enumerate(self.regs.kinds):
            dims = [self.slots.of(d) for d in shape]
            decls.append(bc.RegOp.make(r, dtype, dims, self.slots.renamed(linear_sum(units))))
            if r < last:
                named = [named_by_slots(as_expr(d), self.slots.renames) for d in shape]
                itemsize = DTYPE_BY_TEXT[dtype].np.itemsize
                count, unit = whole_units(named, itemsize, self.alignment).as_coeff_Mul()
                units[unit] = units.get(unit, sympy.Integer(0)) + count * self.alignment
        return decls


def whole_units(named: Sequence[sympy.Expr], itemsize: int, unit: int) -> sympy.Expr:
    """ceiling(size / unit) as sympy's `ceiling` makes it, for the bytes of a register
    whose dims are `named` (products of named sizes): the quotient itself when its
    coefficient is whole. Without asking sympy, whose `ceiling` answers by assumption
    queries (a millisecond each, in a process that has not asked them). The quotient is
    one product: each product sympy has not met costs it a flatten (`product`)."""
    sizes = [d for d in named if not d.is_Integer]  # (a static dim joins the coefficient)
    static = math.prod(int(d) for d in named if d.is_Integer)
    scale = sympy.Rational(itemsize * static, unit)
    quotient = product(*sizes) if scale == 1 else product(scale, *sizes)
    coefficient, rest = quotient.as_coeff_Mul()
    factors = sympy.Mul.make_args(rest)
    if not all(isinstance(f, sympy.Symbol) and f.is_integer for f in factors):
        return sympy.ceiling(quotient)
    return quotient if coefficient.is_Integer else sceiling(quotient)


def dtype_name(text: str) -> str:
    """The `DType` member name of an element type's text (`i1` -> BOOL, `ui8` -> U8)."""
    return DTYPE_BY_TEXT[text].name


@dataclass(frozen=True)
class ConvertTileToBytecodePass(ModulePass):
    """Lower every `tile.kernel` to a `bytecode.program` of the same name."""

    name = "convert-tile-to-bytecode"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.ops if isinstance(k, tile.KernelOp)]:
            preset = check_runnable(kernel)
            program = ProgramBuilder(kernel, DEVICES[preset]().alignment).build()
            program.attributes[DEVICE] = StringAttr(preset)
            replace_isolated(kernel, program)


def check_runnable(kernel: tile.KernelOp) -> str:
    """The device preset `kernel` was tiled for (the verifier checked it is one); a
    ProgramError naming the kernel if it lacks what running or lowering it reads."""
    missing = missing_for_running(kernel)
    if missing is not None:
        raise ProgramError(kernel, f"@{kernel.sym_name.data} {missing}")
    device = kernel.attributes.get(DEVICE)
    return device.data if isinstance(device, StringAttr) else "host"


def spanned_axes(view: tile.View) -> set[int]:
    """The kernel axes along which `view` has more than one element."""
    return {
        d
        for d, (size, index) in enumerate(zip(view.sizes, view.index, strict=True))
        if index != "whole" or size != 1
    }
