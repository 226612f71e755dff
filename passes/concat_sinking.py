"""Elementwise ops moved below the concats they read, so that a concat ends a kernel.

An elementwise op of a concat is the concat of the op applied to each input:
`neg(concat(a, b))` is `concat(neg(a), neg(b))`, and `concat(a, b) * y` is
`concat(a * y[.., :n], b * y[.., n:])`, with `n` the size of `a` along the axis
and the slices of `y` views of it. The concat then fuses with the ops that
compute its inputs (`dvm.passes.concat_fusion`): its result's elementwise users
become part of its kernel. `rotate_half(x) * sin + x * cos` of a rotary
embedding, whose angles are a concat too, is one kernel.

A concat moves below its users only when every one of them is elementwise (so
that it is not computed twice) and reads it without broadcasting it along the
axis; each other operand of a user is sliced along the axis (or read whole
when it broadcasts there; a concat along the axis with the same parts gives
its inputs), and one that an elementwise op computes for that user alone is
cut with its op (`cut`). The slices' offsets and sizes are computed from the
function's arguments and the index values it computes on the host (a dim of a
value computed in a kernel would make it an output of its kernel): a concat
whose sizes need another symbol stays. The new ops carry their shapes, so that
the next move can be decided; once all have moved the function's shapes and
guards are computed again, starting from the guards of the program as written
(what they made equal stays equal, though the ops that made them are split),
and those the moved ops no longer make are kept.
"""

from __future__ import annotations

from functools import cached_property
from typing import cast

import sympy
from xdsl.dialects import arith
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IndexType, IntegerAttr, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from dvm.dialects import tensor as t
from dvm.dialects.data_movement import ConcatOp, ExtractSliceOp
from dvm.dialects.expr import ExprAttr, ShapeAttr, shape_attr, symbol
from dvm.dialects.walk import ops_within
from dvm.passes.domain import ELEMENTWISE
from dvm.passes.symbolic import (
    GUARDS,
    SHAPE,
    VALUE,
    Guard,
    function_guards,
    guard_facts,
    index_symbol_name,
    shape_of,
)
from dvm.passes.symbolic_shapes import ShapeInference, strip


def flatten_concats(func: FuncOp) -> None:
    """`concat(concat(a, b), c)` along one axis as `concat(a, b, c)` (the inner concat
    stays only for its other users), so that the pieces fuse into one kernel."""
    for outer in [op for op in ops_within(func) if isinstance(op, ConcatOp)]:
        inputs: list[SSAValue] = []
        for value in outer.inputs:
            inner = value.owner
            nested = isinstance(inner, ConcatOp) and inner.axis == outer.axis
            inputs.extend(inner.inputs if isinstance(inner, ConcatOp) and nested else [value])
        if len(inputs) == len(outer.inputs):
            continue
        result = outer.result.type
        assert isinstance(result, TensorType)
        flat = ConcatOp(inputs, outer.axis, result)
        flat.attributes.update(outer.attributes)
        Rewriter.replace_op(outer, flat)
        flat.result.name_hint = outer.result.name_hint
    for op in reversed(ops_within(func)):
        if isinstance(op, ConcatOp) and not op.result.uses:
            Rewriter.erase_op(op)


def sink_concats(func: FuncOp) -> None:
    """Move every elementwise op below the concats it reads, where it can."""
    if not any(isinstance(op, ConcatOp) for op in ops_within(func)):
        return  # (what it knows of sizes is read off the whole function: not for nothing)
    sizes = Sizes(func)
    moved = False
    while concat := next((op for op in ops_within(func) if movable(op, sizes)), None):
        assert isinstance(concat, ConcatOp)
        for user in {use.operation: None for use in concat.result.uses}:
            # a user that only another user read was cut into that one's pieces
            if user.parent is not None:
                split(user, concat, sizes)
        Rewriter.erase_op(concat)
        for other in ops_within(func):  # a concat whose pieces were taken (a user's operand)
            if isinstance(other, ConcatOp) and not other.result.uses:
                Rewriter.erase_op(other)
        moved = True
    if moved:
        infer_shapes_again(func)


def infer_shapes_again(func: FuncOp) -> None:
    """The shapes, index values and guards of a function whose ops a pass moved or
    took out (new ops carry their shapes, but not the rest), starting from the
    guards found before, and keeping them (`keep_guards`)."""
    guards = function_guards(func)
    strip(func)
    ShapeInference(func, assumed=guards).run()
    keep_guards(func, guards)


def keep_guards(func: FuncOp, guards: list[Guard]) -> None:
    """Add back the guards of the program as written that the moved ops no longer make:
    `concat(a, b) * s` broadcast `s` against the concat, but its pieces read slices
    of `s`, which make no guard. Without it, an `s` of one column would be sliced out
    of bounds instead of the program being specialized for it, as numpy broadcasts."""
    found = function_guards(func)
    missing = [g for g in guards if all((g.lhs, g.rhs) != (f.lhs, f.rhs) for f in found)]
    if missing:
        func.attributes[GUARDS] = ArrayAttr([g.to_attr() for g in [*found, *missing]])


class Sizes:
    """What the function knows of sizes: the equalities its guards make true, and
    index values of size expressions, each built once from the dims of its tensor
    arguments, its index arguments and the index values it computes, at the start of
    the function or right after the last of those values it needs."""

    def __init__(self, func: FuncOp):
        self.facts = guard_facts(func)
        self.answers: dict[tuple[sympy.Expr, sympy.Expr], bool] = {}
        """What `equal` found, by its arguments."""
        self.block = func.body.blocks[0]
        self.made: dict[sympy.Expr, SSAValue] = {}
        self.last: dict[Operation | None, Operation] = {}
        """Per place (an op of the block, or None: its start), the last op built there."""
        self.sources: dict[sympy.Symbol, tuple[SSAValue, int | None]] = {}
        for arg, attrs in zip(func.args, func.arg_attrs or [], strict=False):
            shape = attrs.data.get(SHAPE) if isinstance(attrs, DictionaryAttr) else None
            if isinstance(shape, ShapeAttr):
                for dim, size in enumerate(shape.data):
                    if isinstance(size, sympy.Symbol):
                        self.sources.setdefault(size, (arg, dim))
        for arg in func.args:
            if isinstance(arg.type, IndexType):
                self.sources.setdefault(symbol(index_symbol_name(arg)), (arg, None))
        self.computed: dict[sympy.Symbol, tuple[int, Operation]] = {}
        """The index values the function computes (`%h = arith.divui %d, %c2`), by
        symbol: the op and its place in the block, which a size built from it follows."""
        for place, op in enumerate(self.block.ops):
            value = op.attributes.get(VALUE)
            size = value.data if isinstance(value, ExprAttr) else None
            if isinstance(size, sympy.Symbol) and size not in self.sources:
                self.sources[size] = (op.results[0], None)
                self.computed[size] = (place, op)

    def equal(self, a: sympy.Expr, b: sympy.Expr) -> bool:
        """Equal by proof, or by the guards: `a - b` is the difference of a guard's
        sides (`x + y == x + z` makes `y` and `z` equal). Remembered: the pass asks
        about the same few sizes again and again (each concat and user, at each move)."""
        found = self.answers.get((a, b))
        if found is None:
            found = self.answers[a, b] = self.prove_equal(a, b)
        return found

    def prove_equal(self, a: sympy.Expr, b: sympy.Expr) -> bool:
        difference = sympy.expand(a - b)
        if difference == 0:
            return True
        return any(
            sympy.expand(difference - guard) == 0 or sympy.expand(difference + guard) == 0
            for guard in self.guard_differences.get(frozenset(difference.free_symbols), ())
        )

    @cached_property
    def guard_differences(self) -> dict[frozenset[sympy.Basic], list[sympy.Expr]]:
        """Each guard's `lhs - rhs`, expanded once (a program has dozens of guards), by
        its symbols: two expanded sums cancel term by term, so a difference can be
        (minus) a guard's only when it has the same symbols."""
        found: dict[frozenset[sympy.Basic], list[sympy.Expr]] = {}
        for lhs, rhs in self.facts:
            guard = sympy.expand(lhs - rhs)
            found.setdefault(frozenset(guard.free_symbols), []).append(guard)
        return found

    def known(self, size: sympy.Expr) -> bool:
        """Whether `size` is a polynomial of symbols this can compute."""
        if isinstance(size, sympy.Integer) or size in self.sources:
            return True
        if isinstance(size, sympy.Add | sympy.Mul):
            return all(self.known(a) for a in size.args)
        return False

    def value(self, size: sympy.Expr) -> SSAValue | int:
        """`size` as an int, or an index value (`known` holds), built once."""
        if isinstance(size, sympy.Integer):
            return int(size)
        if size not in self.made:
            symbols = [cast(sympy.Symbol, s) for s in size.free_symbols]
            needed = [self.computed[s] for s in symbols if s in self.computed]
            self.made[size] = self.build(size, max(needed)[1] if needed else None)
        return self.made[size]

    def build(self, size: sympy.Expr, at: Operation | None) -> SSAValue:
        if isinstance(size, sympy.Integer):
            return self.add(arith.ConstantOp(IntegerAttr(int(size), IndexType())), at)
        if size in self.sources:
            arg, dim = self.sources[size]  # type: ignore[index]
            if dim is None:
                return arg
            axis = self.add(arith.ConstantOp(IntegerAttr(dim, IndexType())), at)
            return self.add(t.DimOp(arg, axis), at)
        combine = arith.AddiOp if isinstance(size, sympy.Add) else arith.MuliOp
        terms = [self.build(cast(sympy.Expr, a), at) for a in size.args]
        result = terms[0]
        for term in terms[1:]:
            result = self.add(combine(result, term), at)
        return result

    def add(self, op: Operation, at: Operation | None) -> SSAValue:
        """Insert `op` after the ones built before it after `at` (None: at the start of
        the function)."""
        last = self.last.get(at, at)
        if last is not None:
            Rewriter.insert_op(op, InsertPoint.after(last))
        else:
            Rewriter.insert_op(op, InsertPoint.at_start(self.block))
        self.last[at] = op
        return op.results[0]


def movable(op: Operation, sizes: Sizes) -> bool:
    """A concat whose users are all elementwise ops that can each be split."""
    if not isinstance(op, ConcatOp) or not op.result.uses:
        return False
    if not all(sizes.known(size) for size in parts(op)):
        return False
    for use in op.result.uses:
        user = use.operation
        if not isinstance(user, ELEMENTWISE) or user.parent_block() is not op.parent_block():
            return False
        if user_axis(user, op, sizes) is None:
            return False
        for value in user.operands:
            how = part_source(value, user, op, sizes)
            if how is None:
                return False
            dim = operand_dim(value, user, op, sizes)
            others = [d for i, d in enumerate(shape_of(value)) if i != dim]
            if how == "slice" and not all(map(sizes.known, others)):
                return False
    return True


def parts(concat: ConcatOp) -> list[sympy.Expr]:
    return [shape_of(v)[concat.axis] for v in concat.inputs]


def user_axis(user: Operation, concat: ConcatOp, sizes: Sizes) -> int | None:
    """The concat's axis in the user's result, if the user does not broadcast the
    concat along it."""
    result, source = shape_of(user.results[0]), shape_of(concat.result)
    axis = concat.axis + len(result) - len(source)
    return axis if sizes.equal(result[axis], source[concat.axis]) else None


def operand_dim(value: SSAValue, user: Operation, concat: ConcatOp, sizes: Sizes) -> int:
    """The dim of `value` along the concat's axis in the user (negative: none)."""
    axis = user_axis(user, concat, sizes)
    assert axis is not None
    return axis - (len(shape_of(user.results[0])) - len(shape_of(value)))


def part_source(value: SSAValue, user: Operation, concat: ConcatOp, sizes: Sizes) -> str | None:
    """How an operand of `user` gives its part: "concat" (a concat along the axis with
    the same parts), "slice" (along the axis), "whole" (broadcast there), or None."""
    shape, dim = shape_of(value), operand_dim(value, user, concat, sizes)
    if dim < 0 or shape[dim] == 1 != shape_of(concat.result)[concat.axis]:
        return "whole"
    if same_parts(value.owner, dim, concat, sizes):
        return "concat"
    if sizes.equal(shape[dim], shape_of(concat.result)[concat.axis]):
        return "slice"
    return None


def same_parts(other: object, dim: int, concat: ConcatOp, sizes: Sizes) -> bool:
    """Whether `other` is a concat along `dim` with parts of the same sizes."""
    if not isinstance(other, ConcatOp) or other.axis != dim:
        return False
    theirs, ours = parts(other), parts(concat)
    return len(theirs) == len(ours) and all(map(sizes.equal, theirs, ours))


def split(user: Operation, concat: ConcatOp, sizes: Sizes) -> None:
    """Replace `user` by the concat of its pieces."""
    axis = user_axis(user, concat, sizes)
    assert axis is not None
    before = InsertPoint.before(user)
    result_type = user.results[0].type
    assert isinstance(result_type, TensorType)
    pieces: list[SSAValue] = []
    start: sympy.Expr = sympy.Integer(0)
    for k, part in enumerate(concat.inputs):
        size = shape_of(part)[concat.axis]
        operands = [
            piece_of(v, user, concat, k, (start, size), sizes, before) for v in user.operands
        ]
        static = tensor_type(part).get_shape()[concat.axis]
        pieces.append(cut_op(user, operands, axis, size, static, before))
        start = sympy.expand(start + size)
    joined = ConcatOp(pieces, axis, result_type)
    joined.attributes[SHAPE] = shape_attr(shape_of(user.results[0]))
    Rewriter.insert_op(joined, before)
    joined.result.name_hint = user.results[0].name_hint
    user.results[0].replace_all_uses_with(joined.result)
    erase_dead(user)


def erase_dead(op: Operation) -> None:
    """Erase `op`, read by nothing now, and the elementwise producers only it read
    (cut into the pieces instead)."""
    producers = [v.owner for v in op.operands]
    Rewriter.erase_op(op)
    for producer in producers:
        if isinstance(producer, ELEMENTWISE) and not producer.results[0].uses:
            erase_dead(producer)


def piece_of(
    value: SSAValue,
    user: Operation,
    concat: ConcatOp,
    k: int,
    extent: tuple[sympy.Expr, sympy.Expr],
    sizes: Sizes,
    before: InsertPoint,
) -> SSAValue:
    """Operand `value` of `user`, as piece `k` of the split reads it (`extent`: where
    the piece starts along the axis, and its size)."""
    if value is concat.result:
        return concat.inputs[k]
    how = part_source(value, user, concat, sizes)
    owner = value.owner
    if how == "concat" and isinstance(owner, ConcatOp):
        return owner.inputs[k]
    if how == "whole":
        return value
    dim = operand_dim(value, user, concat, sizes)
    static = tensor_type(concat.inputs[k]).get_shape()[concat.axis]
    return cut(value, dim, extent, static, sizes, before)


def cut(
    value: SSAValue,
    dim: int,
    extent: tuple[sympy.Expr, sympy.Expr],
    static: int,
    sizes: Sizes,
    before: InsertPoint,
) -> SSAValue:
    """`value` cut along `dim` to `extent` (`static`: the cut's static size there): its
    elementwise producer cut too when nothing else reads it (`x * cos` of a rotary
    embedding), so the producer joins the concat's kernel; a concat's input when it
    is the part cut (`rotate_half(x) * sin`: the rotated halves); else a slice of it."""
    owner = value.owner
    if isinstance(owner, ConcatOp) and owner.axis == dim:
        part = concat_part(owner, extent, sizes)
        if part is not None:
            return part
    if (
        isinstance(owner, ELEMENTWISE)
        and value.has_one_use()
        and owner.parent_block() is before.block
        and all(how_cut(v, value, dim, sizes) is not None for v in owner.operands)
    ):
        operands = [
            v
            if how_cut(v, value, dim, sizes) == "whole"
            else cut(
                v, dim - (len(shape_of(value)) - len(shape_of(v))), extent, static, sizes, before
            )
            for v in owner.operands
        ]
        return cut_op(owner, operands, dim, extent[1], static, before)
    source = tensor_type(value)
    offsets: list[SSAValue | int] = [0] * source.get_num_dims()
    offsets[dim] = sizes.value(extent[0])
    lengths = [sizes.value(extent[1] if i == dim else d) for i, d in enumerate(shape_of(value))]
    shape = list(source.get_shape())
    shape[dim] = static
    slice_ = ExtractSliceOp(
        value, offsets, lengths, [1] * len(lengths), TensorType(source.element_type, shape)
    )
    dims = list(shape_of(value))
    dims[dim] = extent[1]
    slice_.attributes[SHAPE] = shape_attr(dims)
    Rewriter.insert_op(slice_, before)
    return slice_.result


def concat_part(
    concat: ConcatOp, extent: tuple[sympy.Expr, sympy.Expr], sizes: Sizes
) -> SSAValue | None:
    """The input of `concat` that spans `extent` along its axis, if one does."""
    start: sympy.Expr = sympy.Integer(0)
    for part, size in zip(concat.inputs, parts(concat), strict=True):
        if sizes.equal(start, extent[0]) and sizes.equal(size, extent[1]):
            return part
        start = sympy.expand(start + size)
    return None


def how_cut(operand: SSAValue, value: SSAValue, dim: int, sizes: Sizes) -> str | None:
    """How an operand of `value`'s producer gives its part of a cut along `dim`:
    "whole" (it broadcasts there), "cut" (it spans the dim), or None."""
    at = dim - (len(shape_of(value)) - len(shape_of(operand)))
    full = shape_of(value)[dim]
    if at < 0 or (shape_of(operand)[at] == 1 and not sizes.equal(full, sympy.Integer(1))):
        return "whole"
    return "cut" if sizes.equal(shape_of(operand)[at], full) else None


def cut_op(
    op: Operation,
    operands: list[SSAValue],
    dim: int,
    size: sympy.Expr,
    static: int,
    before: InsertPoint,
) -> SSAValue:
    """A copy of elementwise `op` on `operands`, its result `size` (static: `static`)
    along `dim`."""
    result_type = op.results[0].type
    assert isinstance(result_type, TensorType)
    shape = list(result_type.get_shape())
    only = tensor_type(operands[0]) if len(operands) == 1 else None
    if only is not None and only.get_num_dims() == len(shape):
        # a unary op's result has its operand's shape, which a piece may state less of
        # (`neg` of a concat typed `1x?` whose input is `?x?`)
        shape = list(only.get_shape())
    shape[dim] = static
    dims = list(shape_of(op.results[0]))
    dims[dim] = size
    piece = type(op).create(
        operands=operands,
        result_types=[TensorType(result_type.element_type, shape)],
        properties=dict(op.properties),
        attributes={**op.attributes, SHAPE: shape_attr(dims)},
    )
    Rewriter.insert_op(piece, before)
    piece.results[0].name_hint = op.results[0].name_hint
    return piece.results[0]


def tensor_type(value: SSAValue) -> TensorType[Attribute]:
    assert isinstance(value.type, TensorType)
    return value.type
