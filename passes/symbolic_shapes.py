"""The `symbolic-shapes` pass: a sympy symbol for every dynamic dim.

Every dynamic dim of every function argument gets a symbol (`x_0` is axis 0
of `%x`). The pass then walks the function in order and gives each tensor
value its shape as sympy expressions of those symbols, following each op's
shape rule (numpy broadcasting, matmul, reshapes, reductions, ...).

Where a rule needs two dims to be equal that are not already provably equal,
the pass records a *guard* and *unifies* the two: the later symbol is
replaced by the other expression everywhere, so later passes see one symbol
where the program has one size. The runtime checks the guards when the
program is called. A broadcast guard that fails because one dim is 1 leaves
the program well defined and asks for a re-specialization; any other failed
guard is a clear error. A guard that can never hold (64 against 32) is an
error here, naming the op.

A broadcast guard may become impossible only through a later unification:
`x` broadcast with `2*x` assumes `x == 2*x`, which a result type stating the
dim is 2 then turns into `2 == 4`. Such a broadcast is defined only where a
side is 1, so the pass starts over with that side's symbols fixed to 1 (a
guard saying so) rather than leave the later passes an impossible shape.
Before it refuses a program (`y` broadcast with a 3, then `y` and `y` concat
into 2), it tries fixing to 1 each dim a broadcast assumed equal to another.

Why: fusion legality, tiling and the bytecode's parameter slots are all
decided on these symbolic shapes, once per program, not once per shape.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import sympy
from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    TensorType,
    UnitAttr,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass

from dvm.dialects import tensor as t
from dvm.dialects.collectives import COLLECTIVE_OPS
from dvm.dialects.data_movement import ConcatOp, ExtractSliceOp, InsertSliceOp, PadOp, ReverseOp
from dvm.dialects.expr import ExprAttr, ShapeAttr, shape_attr
from dvm.dialects.grouped_matmul import GroupedMatmulOp
from dvm.dialects.index_ops import IotaOp, ScatterAddOp, TakeAlongAxisOp, TakeOp
from dvm.dialects.scans import BOOL_REDUCE_OPS, ArgReduceOp, TopKOp
from dvm.dialects.walk import ops_within
from dvm.passes.collectives import ZERO, collective_shape
from dvm.passes.data_movement import SLICE, pad_shape, slice_shape
from dvm.passes.errors import ProgramError
from dvm.passes.scans import SHAPED_OPS, empty_axis_guard, scan_shapes, top_k_guard
from dvm.passes.shape_ops import SHAPE_OPS_WITH_RULES, shape_op_shape
from dvm.passes.symbolic import (
    ARG_SHAPES,
    ARG_VALUES,
    GUARDS,
    SHAPE,
    SHAPES,
    UNIFIED,
    VALUE,
    VALUES,
    Guard,
    GuardKind,
    Shape,
    arg_symbol_name,
    check_choice_symbols,
    index_symbol_name,
    optional_exprs_attr,
)
from dvm.passes.unifier import ONE, Unifier, same


def branches(op: scf.IfOp) -> list[Block]:
    """The blocks of an `scf.if` (an `if` without `else` has one)."""
    return [region.block for region in op.regions if region.blocks]


def yielded(block: Block) -> list[SSAValue]:
    """What `block`'s terminator yields."""
    terminator = block.last_op
    assert terminator is not None
    return list(terminator.operands)


class CarriedDimChanges(Exception):
    """A loop yields a carried dim other than the one it entered with: the walk starts
    over, with that dim in `ShapeInference.changing`."""


class ShapeInference:
    """Walks one function, computing shapes of tensor values and index values."""

    def __init__(self, func: FuncOp, assumed: Sequence[Guard] = ()):
        self.func = func
        self.assumed = assumed
        """Guards an earlier run found, held from the start (`Unifier.assume`)."""
        self.units: list[tuple[list[sympy.Symbol], Operation]] = []
        """Symbols fixed to 1 (and the broadcast that needs it) on a restart."""
        self.changing: set[tuple[Operation, int, int]] = set()
        """Carried dims a loop may change (the loop, the carried value, the axis), found
        by a walk that restarts (`CarriedDimChanges`): its block takes each as a late
        symbol of every iteration, its results as another."""
        self.reset()
        self.rules: dict[type[Operation], Callable[[Operation], None]] = {
            **{op: self.elementwise for op in (*t.UNARY_OPS, t.ConvertOp)},
            **{op: self.elementwise for op in (*t.BINARY_OPS, t.SelectOp, t.ClampOp)},
            **{op: self.reduce for op in (*t.REDUCE_OPS, *BOOL_REDUCE_OPS)},
            t.MatmulOp: self.matmul,
            t.TransposeOp: self.transpose,
            t.BroadcastToOp: self.broadcast_to,
            t.ExpandShapeOp: self.expand_shape,
            t.CollapseShapeOp: self.collapse_shape,
            ExtractSliceOp: self.extract_slice,
            **dict.fromkeys(SHAPED_OPS, self.scan),
            **dict.fromkeys(SHAPE_OPS_WITH_RULES, self.shape_op),
            **dict.fromkeys(COLLECTIVE_OPS, self.collective),
            GroupedMatmulOp: self.grouped_matmul,
            IotaOp: self.iota,
            TakeOp: self.take,
            TakeAlongAxisOp: self.take,
            ScatterAddOp: self.scatter_add,
            ConcatOp: self.concat,
            InsertSliceOp: self.insert_slice,
            PadOp: self.pad,
            ReverseOp: self.reverse,
            t.DimOp: self.dim,
            arith.ConstantOp: self.constant,
            scf.IfOp: self.if_op,
            scf.ForOp: self.for_op,
            scf.WhileOp: self.while_op,
            t.FusionOp: self.fusion,
            t.StackOp: self.kernels,
            t.ChoiceOp: self.kernels,
        }
        for op in (arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.FloorDivSIOp, arith.CeilDivSIOp):
            self.rules[op] = self.index_arith

    # -- driver ---------------------------------------------------------------

    def reset(self) -> None:
        self.unifier = Unifier()
        self.shapes: dict[SSAValue, Shape] = {}
        self.values: dict[SSAValue, sympy.Expr] = {}
        self.slices: dict[Operation, tuple[ShapeAttr, ShapeAttr]] = {}
        """Each slice's offsets and strides (canonicalized when written: `SLICE`)."""
        self.fresh = 0

    def run(self) -> None:
        self.solve()
        self.annotate()

    def solve(self, unstretch: bool = True) -> None:
        """Shapes of the values; dims fixed to 1 where only that defines a broadcast."""
        while True:
            self.bind_arguments()
            for guard in self.assumed:
                self.unifier.assume(guard, self.func)
            for symbols, op in self.units:
                self.unifier.require_unit(symbols, op)
            error: ProgramError | None = None
            try:
                self.walk(self.func.body.block)
            except ProgramError as found:
                error = found
            except CarriedDimChanges:  # (it added to `changing`: this ends)
                self.reset()
                continue
            broken = self.unifier.broken_guard()
            if error is None and broken is None:
                return
            # A contradiction can follow from a broadcast guard a later unification
            # broke (d against 2*d, then d = 2): its unit alternative comes first.
            alternative = broken and self.unit_alternative(*broken)
            if not alternative:
                if unstretch and self.unstretch():
                    return
                if error is not None:
                    raise error
                assert broken is not None
                raise self.impossible(*broken)
            # each restart fixes symbols no earlier one fixed (or raises): this ends
            self.units.append(alternative)
            self.reset()

    def unstretch(self) -> bool:
        """Whether fixing to 1 a dim a broadcast stretched makes the function consistent
        (the first such is fixed); a program that needs two fixed stays refused."""
        fixed = {s for symbols, _ in self.units for s in symbols}
        for dim, op in [(d, o) for d, o in self.unifier.stretchers.items() if d not in fixed]:
            trial = ShapeInference(self.func, self.assumed)
            trial.units = [*self.units, ([dim], op)]
            trial.changing = set(self.changing)
            try:
                trial.solve(unstretch=False)
            except ProgramError:
                continue
            self.units = trial.units
            self.reset()
            self.solve(unstretch=False)
            return True
        return False

    def unit_alternative(
        self, guard: Guard, op: Operation
    ) -> tuple[list[sympy.Symbol], Operation] | None:
        """The symbols to fix to 1 so that a broken broadcast guard stretches
        instead: a side that is a product of symbols, none already fixed."""
        fixed = {s for symbols, _ in self.units for s in symbols}
        if guard.kind is GuardKind.BROADCAST:
            for side in (guard.lhs, guard.rhs):
                symbols = sorted(
                    (s for s in side.free_symbols if isinstance(s, sympy.Symbol)), key=str
                )
                if symbols and side == sympy.Mul(*symbols) and not fixed & set(symbols):
                    return symbols, op
        return None

    def impossible(self, guard: Guard, op: Operation) -> ProgramError:
        lhs, rhs = self.unifier.canon(guard.lhs), self.unifier.canon(guard.rhs)
        rule = guard.kind.value
        return ProgramError(op, f"dims {lhs} and {rhs} can never be equal ({rule} rule)")

    def walk(self, block: Block) -> None:
        for op in block.ops:
            for value in op.operands:  # the parser rejects this; IR built in Python may not
                if isinstance(value.type, TensorType) and value not in self.shapes:
                    name = f"%{value.name_hint}" if value.name_hint else "a value"
                    raise ProgramError(op, f"uses {name} before its definition")
            rule = self.rules.get(type(op))
            if rule is not None:
                rule(op)
            elif any(isinstance(r.type, TensorType) for r in op.results):
                raise ProgramError(op, "no shape rule for this op")

    def bind_arguments(self) -> None:
        for arg in self.func.args:
            if isinstance(arg.type, TensorType):
                self.shapes[arg] = tuple(
                    self.unifier.new_symbol(arg_symbol_name(arg, axis))
                    if d == t.DYN
                    else sympy.Integer(d)  # (a static 0 too, which is falsy)
                    for axis, d in enumerate(arg.type.get_shape())
                )
            elif isinstance(arg.type, IndexType):
                self.values[arg] = self.unifier.new_symbol(index_symbol_name(arg))

    def shape(self, value: SSAValue) -> Shape:
        return tuple(self.unifier.canon(d) for d in self.shapes[value])

    def value(self, v: SSAValue) -> sympy.Expr:
        """An index value's expression; a fresh symbol when it is not known."""
        if v not in self.values:
            self.values[v] = self.fresh_symbol("i")
        return self.unifier.canon(self.values[v])

    def fresh_symbol(self, prefix: str) -> sympy.Symbol:
        """A symbol for a value known only once the program makes it (a late one)."""
        self.fresh += 1
        return self.unifier.new_symbol(f"{prefix}{self.fresh}", late=True)

    def set_result(self, op: Operation, shape: Sequence[sympy.Expr], index: int = 0) -> None:
        """Record a result's shape, reconciled with the static dims its type states."""
        result = op.results[index]
        assert isinstance(result.type, TensorType)
        declared = result.type.get_shape()
        dims = [
            d
            if s == t.DYN
            else self.unifier.require_equal(d, sympy.Integer(s), GuardKind.EQUAL, op)
            for d, s in zip(shape, declared, strict=True)
        ]
        self.shapes[result] = tuple(dims)

    # -- rules ----------------------------------------------------------------

    def broadcast(self, op: Operation, shapes: Sequence[Shape]) -> Shape:
        """numpy broadcasting: static 1 stretches; other dims are unified."""
        rank = max((len(s) for s in shapes), default=0)
        out: list[sympy.Expr] = []
        for axis in range(rank):
            dims = [s[len(s) - rank + axis] for s in shapes if len(s) - rank + axis >= 0]
            dim = ONE
            for d in dims:
                if d == ONE:
                    continue
                dim = (
                    d if dim == ONE else self.unifier.require_equal(dim, d, GuardKind.BROADCAST, op)
                )
            out.append(dim)
        return tuple(out)

    def elementwise(self, op: Operation) -> None:
        tensors = [v for v in op.operands if isinstance(v.type, TensorType)]
        self.set_result(op, self.broadcast(op, [self.shape(v) for v in tensors]))

    def reduce(self, op: Operation) -> None:
        assert isinstance(op, t.ReduceOp)
        shape, axes = self.shape(op.input), op.reduced_axes
        if op.keeps_dims:
            self.set_result(op, [ONE if i in axes else d for i, d in enumerate(shape)])
        else:
            self.set_result(op, [d for i, d in enumerate(shape) if i not in axes])

    def matmul(self, op: Operation) -> None:
        assert isinstance(op, t.MatmulOp)
        a, b = self.shape(op.lhs), self.shape(op.rhs)
        transpose_a, transpose_b = op.flags
        m, ka = (a[-1], a[-2]) if transpose_a else (a[-2], a[-1])
        kb, n = (b[-1], b[-2]) if transpose_b else (b[-2], b[-1])
        self.unifier.require_equal(ka, kb, GuardKind.EQUAL, op)
        batch = self.broadcast(op, [a[:-2], b[:-2]])
        self.set_result(op, [*batch, m, n])

    def grouped_matmul(self, op: Operation) -> None:
        """M from x, N from w; x's and w's K, and the group counts, must agree."""
        assert isinstance(op, GroupedMatmulOp)
        (m, k), (groups,), (wg, wk, n) = (self.shape(v) for v in (op.x, op.sizes, op.w))
        self.unifier.require_equal(k, wk, GuardKind.EQUAL, op)
        self.unifier.require_equal(groups, wg, GuardKind.EQUAL, op)
        if op.bias is not None:
            bg, bn = self.shape(op.bias)
            self.unifier.require_equal(bg, wg, GuardKind.EQUAL, op)
            self.unifier.require_equal(bn, n, GuardKind.EQUAL, op)
        self.set_result(op, [m, n])

    def transpose(self, op: Operation) -> None:
        assert isinstance(op, t.TransposeOp)
        shape = self.shape(op.input)
        self.set_result(op, [shape[p] for p in op.permutation])

    def target_shape(self, static: Sequence[int], dynamic: Sequence[SSAValue]) -> list[sympy.Expr]:
        values = iter(dynamic)
        return [self.value(next(values)) if d == t.DYN else sympy.Integer(d) for d in static]

    def broadcast_to(self, op: Operation) -> None:
        assert isinstance(op, t.BroadcastToOp)
        target = self.target_shape(op.static_shape.get_values(), op.dynamic_shape)
        source = self.shape(op.input)
        offset = len(target) - len(source)
        for axis, d in enumerate(source):
            if d != ONE:
                target[offset + axis] = self.unifier.require_equal(
                    target[offset + axis], d, GuardKind.BROADCAST, op
                )
        self.set_result(op, target)

    def expand_shape(self, op: Operation) -> None:
        assert isinstance(op, t.ExpandShapeOp)
        source = self.shape(op.src)
        target = self.target_shape(op.static_output_shape.get_values(), op.dynamic_output_shape)
        for group, dim in zip(op.groups, source, strict=True):
            product = sympy.Mul(*(target[i] for i in group))
            self.unifier.require_equal(dim, product, GuardKind.EQUAL, op)
        self.set_result(op, target)

    def collapse_shape(self, op: Operation) -> None:
        assert isinstance(op, t.CollapseShapeOp)
        source = self.shape(op.src)
        self.set_result(op, [sympy.expand(sympy.Mul(*(source[i] for i in g))) for g in op.groups])

    def extract_slice(self, op: Operation) -> None:
        """The sizes give the shape; offsets and strides are kept for the kernel's view."""
        assert isinstance(op, ExtractSliceOp)
        sizes, offsets, strides = slice_shape(op, self.value)
        self.set_result(op, sizes)
        self.slices[op] = (offsets, strides)

    def scan(self, op: Operation) -> None:
        if isinstance(op, ArgReduceOp) and (guard := empty_axis_guard(op, self.shape(op.input))):
            self.unifier.require_equal(*guard, GuardKind.EQUAL, op)
        if isinstance(op, TopKOp) and (guard := top_k_guard(op, self.shape(op.input))):
            self.unifier.require_equal(*guard, GuardKind.EQUAL, op)
        for index, shape in enumerate(scan_shapes(op, self.shape)):
            self.set_result(op, shape, index)

    def shape_op(self, op: Operation) -> None:
        self.set_result(op, shape_op_shape(op, self.shape))

    def collective(self, op: Operation) -> None:
        def require_zero(e: sympy.Expr) -> object:
            return self.unifier.require_equal(e, ZERO, GuardKind.EQUAL, op)

        self.set_result(op, collective_shape(op, self.shape(op.operands[0]), require_zero))

    def iota(self, op: Operation) -> None:
        """The result type's dims, each `?` the size operand standing for it."""
        assert isinstance(op, IotaOp)
        self.set_result(op, self.target_shape(t.tensor_type(op.result).get_shape(), op.sizes))

    def take(self, op: Operation) -> None:
        """take: the source's dims around the indices'; take_along_axis: the indices'
        size along the dim, the other dims broadcast."""
        assert isinstance(op, TakeOp | TakeAlongAxisOp)
        source, indices, a = self.shape(op.source), self.shape(op.indices), op.dim
        if isinstance(op, TakeOp):
            self.set_result(op, [*source[:a], *indices, *source[a + 1 :]])
            return
        others = self.broadcast(op, [source[:a] + source[a + 1 :], indices[:a] + indices[a + 1 :]])
        self.set_result(op, [*others[:a], indices[a], *others[a:]])

    def scatter_add(self, op: Operation) -> None:
        """The base's shape; the updates have the shape of a take of it."""
        assert isinstance(op, ScatterAddOp)
        base, indices, a = self.shape(op.base), self.shape(op.indices), op.dim
        expected = [*base[:a], *indices, *base[a + 1 :]]
        for want, got in zip(expected, self.shape(op.updates), strict=True):
            self.unifier.require_equal(want, got, GuardKind.EQUAL, op)
        self.set_result(op, base)

    def insert_slice(self, op: Operation) -> None:
        """The destination's shape; the source has the sizes (equal guards)."""
        assert isinstance(op, InsertSliceOp)
        sizes, offsets, strides = slice_shape(op, self.value)
        for dim, size in zip(self.shape(op.source), sizes, strict=True):
            self.unifier.require_equal(dim, size, GuardKind.EQUAL, op)
        self.set_result(op, list(self.shape(op.dest)))
        self.slices[op] = (offsets, strides)

    def pad(self, op: Operation) -> None:
        """Each dim grows by its pads; the source's place is kept as a slice's is. The
        padding constant moves into the region, which a kernel will hold whole."""
        assert isinstance(op, PadOp)
        shape, low, ones = pad_shape(op, self.shape(op.source), self.value)
        self.set_result(op, shape)
        self.slices[op] = (low, ones)
        constant = op.padding()
        if constant.parent_op() is not op:
            inside = constant.clone()
            op.region.block.insert_op_before(inside, op.region.block.last_op)  # type: ignore[arg-type]
            op.region.block.last_op.operands[0] = inside.result  # type: ignore[union-attr]

    def reverse(self, op: Operation) -> None:
        assert isinstance(op, ReverseOp)
        self.set_result(op, list(self.shape(op.input)))

    def concat(self, op: Operation) -> None:
        """The inputs' dims along the axis add up; the others are equal (guarded)."""
        assert isinstance(op, ConcatOp)
        shapes = [self.shape(v) for v in op.inputs]
        shape = list(shapes[0])
        for other in shapes[1:]:
            for axis, d in enumerate(other):
                if axis == op.axis:
                    shape[axis] = shape[axis] + d
                else:
                    shape[axis] = self.unifier.require_equal(shape[axis], d, GuardKind.EQUAL, op)
        self.set_result(op, [sympy.expand(d) for d in shape])

    def dim(self, op: Operation) -> None:
        assert isinstance(op, t.DimOp)
        index = op.constant_index
        if index is not None:
            self.values[op.result] = self.shape(op.source)[index]

    def constant(self, op: Operation) -> None:
        assert isinstance(op, arith.ConstantOp)
        result_type = op.result.type
        if isinstance(result_type, TensorType):
            self.shapes[op.result] = tuple(sympy.Integer(d) for d in result_type.get_shape())
        elif isinstance(result_type, IndexType) and isinstance(op.value, IntegerAttr):
            self.values[op.result] = sympy.Integer(op.value.value.data)

    def index_arith(self, op: Operation) -> None:
        a, b = (self.value(v) for v in op.operands)
        combine = {
            arith.AddiOp: lambda: a + b,
            arith.SubiOp: lambda: a - b,
            arith.MuliOp: lambda: a * b,
            arith.FloorDivSIOp: lambda: sympy.floor(a / b),
            arith.CeilDivSIOp: lambda: sympy.ceiling(a / b),
        }
        if isinstance(op.results[0].type, IndexType):
            self.values[op.results[0]] = sympy.expand(combine[type(op)]())

    # -- control flow ---------------------------------------------------------

    def join(self, op: Operation, index: int, shapes: Sequence[Shape]) -> Shape:
        """The shape of a value that may come from several places (branches,
        loop iterations): equal dims stay, differing ones get a fresh symbol
        bound when the value is produced at run time."""
        first = shapes[0]
        return tuple(
            d if all(same(d, s[axis]) for s in shapes[1:]) else self.fresh_symbol(f"r{index}_")
            for axis, d in enumerate(first)
        )

    def if_op(self, op: Operation) -> None:
        assert isinstance(op, scf.IfOp)
        blocks = branches(op)
        for block in blocks:
            self.walk(block)
        for i, result in enumerate(op.results):
            if isinstance(result.type, TensorType):
                shapes = [self.shape(yielded(b)[i]) for b in blocks]
                self.shapes[result] = self.join(op, i, shapes)

    # -- kernels: the pass run again after fuse and stack ----------------------

    def fusion(self, op: Operation) -> None:
        """A kernel's body arguments are its inputs; its results what it yields."""
        assert isinstance(op, t.FusionOp)
        for arg, value in zip(op.body.block.args, op.inputs, strict=True):
            if isinstance(value.type, TensorType):
                self.shapes[arg] = self.shape(value)
            else:
                self.values[arg] = self.value(value)
        self.kernels(op)

    def kernels(self, op: Operation) -> None:
        """Ops whose regions hold kernels (a fusion's body, a stack, both
        branches of a choice): results are what the regions yield."""
        check_choice_symbols(op, self.unifier.order)
        blocks = [r.block for r in op.regions]
        for block in blocks:
            self.walk(block)
        for i, result in enumerate(op.results):
            shapes = [self.shape(yielded(b)[i]) for b in blocks]
            self.shapes[result] = self.join(op, i, shapes)

    def for_op(self, op: Operation) -> None:
        assert isinstance(op, scf.ForOp)
        inits = list(op.iter_args)
        self.carry(op, inits, op.body.block.args[1:], "c")
        self.carry(op, inits, op.results, "r")
        self.walk(op.body.block)
        self.check_carried(op, inits, yielded(op.body.block))

    def while_op(self, op: Operation) -> None:
        assert isinstance(op, scf.WhileOp)  # `do` and the results: what `before` passes on
        self.carry(op, op.arguments, op.before_region.block.args, "c")
        self.walk(op.before_region.block)
        self.flow(yielded(op.before_region.block)[1:], op.after_region.block.args, op.results)
        self.walk(op.after_region.block)
        self.check_carried(op, op.arguments, yielded(op.after_region.block))

    def flow(self, sources: Sequence[SSAValue], *targets: Sequence[SSAValue]) -> None:
        """Each target takes its source's shape (a carried index: `value` gives a symbol)."""
        for source, *made in zip(sources, *targets, strict=True):
            if isinstance(source.type, TensorType):
                self.shapes.update(dict.fromkeys(made, self.shape(source)))

    def carry(
        self, op: Operation, inits: Sequence[SSAValue], targets: Sequence[SSAValue], prefix: str
    ) -> None:
        """Each target (a loop's block argument or result) takes its carried value's
        shape, but a fresh late symbol on each axis the loop may change (`changing`),
        bound when the target is made: as each iteration starts, as the loop ends."""
        for k, (init, target) in enumerate(zip(inits, targets, strict=True)):
            if isinstance(init.type, TensorType):
                self.shapes[target] = tuple(
                    self.fresh_symbol(f"{prefix}{k}_") if (op, k, axis) in self.changing else d
                    for axis, d in enumerate(self.shape(init))
                )

    def check_carried(self, op: Operation, inits: Sequence[SSAValue], outs: list[SSAValue]) -> None:
        """Whether each carried dim is yielded as it entered; where not (a concat that
        grows it, a transpose of a non-square value, another argument's dim), the walk
        starts over with it in `changing`. (Requiring the two equal instead would
        refuse calls the program is defined for.)"""
        found = {
            (op, k, axis)
            for k, (init, value) in enumerate(zip(inits, outs, strict=True))
            if isinstance(init.type, TensorType)
            for axis, (a, b) in enumerate(zip(self.shape(init), self.shape(value), strict=True))
            if (op, k, axis) not in self.changing and not same(a, b)
        }
        if found:
            self.changing |= found
            raise CarriedDimChanges()

    # -- writing the results into the IR ---------------------------------------

    def annotate(self) -> None:
        self.annotate_arguments()
        for op in ops_within(self.func):
            self.annotate_op(op)
        guards = [g for g in self.unifier.guards]
        self.func.attributes[GUARDS] = ArrayAttr([g.to_attr() for g in guards])
        unified = {s.name: ExprAttr(e) for s, e in self.unifier.replaced.items()}
        self.func.attributes[UNIFIED] = DictionaryAttr(dict(sorted(unified.items())))

    def annotate_arguments(self) -> None:
        entries: list[DictionaryAttr] = []
        old = (
            self.func.arg_attrs.data
            if self.func.arg_attrs
            else [DictionaryAttr({})] * len(self.func.args)
        )
        for arg, attrs in zip(self.func.args, old, strict=True):
            data = dict(attrs.data)
            if arg in self.shapes:
                data[SHAPE] = shape_attr(self.shapes[arg])  # the argument's own symbols
            entries.append(DictionaryAttr(data))
        self.func.arg_attrs = ArrayAttr(entries)

    def annotate_op(self, op: Operation) -> None:
        tensors = [r for r in op.results if r in self.shapes]
        if len(tensors) == 1 and len(op.results) == 1:
            op.attributes[SHAPE] = shape_attr(self.shape(tensors[0]))
        elif tensors:  # one per result (none for an index: `shape_of` counts results)
            shapes = [shape_attr(self.shape(r) if r in self.shapes else ()) for r in op.results]
            op.attributes[SHAPES] = ArrayAttr(shapes)
        values = [self.value_expr(r) for r in op.results]
        if len(values) == 1:
            if values[0] is not None and not isinstance(op, arith.ConstantOp):
                op.attributes[VALUE] = ExprAttr(values[0])
        elif any(v is not None for v in values):
            op.attributes[VALUES] = optional_exprs_attr(values)
        if op in self.slices:
            parts = (shape_attr([self.unifier.canon(e) for e in a.data]) for a in self.slices[op])
            op.attributes[SLICE] = ArrayAttr(list(parts))
        if isinstance(op, scf.ForOp | scf.WhileOp):
            blocks = [[self.value_expr(a) for a in r.block.args] for r in op.regions]
            if any(v is not None for args in blocks for v in args):
                op.attributes[ARG_VALUES] = ArrayAttr([optional_exprs_attr(a) for a in blocks])
            if any(changed[0] is op for changed in self.changing):
                op.attributes[ARG_SHAPES] = ArrayAttr(
                    [self.shapes_attr(r.block.args) for r in op.regions]
                )

    def shapes_attr(self, values: Sequence[SSAValue]) -> ArrayAttr[Attribute]:
        """The shapes of `values` (`unit` for a value that is no tensor)."""
        return ArrayAttr(
            [shape_attr(self.shape(v)) if v in self.shapes else UnitAttr() for v in values]
        )

    def value_expr(self, value: SSAValue) -> sympy.Expr | None:
        """An index value's expression, as `VALUE` holds it (None for no index value)."""
        return self.value(value) if value in self.values else None


def ensure_shapes(func: FuncOp) -> None:
    """Run the analysis on a function that `symbolic-shapes` has not annotated."""
    if GUARDS not in func.attributes:
        ShapeInference(func).run()


def strip(func: FuncOp) -> None:
    """Remove the annotations of an earlier run, so the pass is idempotent."""
    for key in (GUARDS, UNIFIED):
        func.attributes.pop(key, None)
    for op in ops_within(func):
        for key in (SHAPE, SHAPES, VALUE, VALUES, ARG_VALUES, ARG_SHAPES, SLICE):
            op.attributes.pop(key, None)


@dataclass(frozen=True)
class SymbolicShapesPass(ModulePass):
    """Annotate every tensor value with its shape over symbols of the
    arguments' dynamic dims, and every function with the guards its ops need."""

    name = "symbolic-shapes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in ops_within(op):
            if isinstance(func, FuncOp) and func.body.blocks:
                strip(func)
                ShapeInference(func).run()
