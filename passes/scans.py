"""Symbolic shapes of the ops of `dvm.dialects.scans`: argmax and argmin drop (or
keep as 1) their axis, cumsum and cumprod keep the shape, top_k puts k on its axis
(and needs k elements there: a guard); and argmax and argmin as reductions that
kernels hold, and a small top_k as rounds of them (`expand_arg_reduction`,
`expand_top_k`, which `expand-arg-reductions` applies)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sympy
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

from dvm.dialects import tensor as t
from dvm.dialects.data_movement import ConcatOp
from dvm.dialects.expr import ExprAttr, shape_attr
from dvm.dialects.index_ops import IotaOp, TakeAlongAxisOp
from dvm.dialects.scans import ArgMaxOp, ArgMinOp, ArgReduceOp, CumProdOp, CumSumOp, ScanOp, TopKOp
from dvm.passes.symbolic import SHAPE, VALUE, Shape, shape_of

ONE = sympy.Integer(1)
I1 = IntegerType(1)
UI8 = IntegerType(8, Signedness.UNSIGNED)


def scan_shapes(op: Operation, shape: Callable[[SSAValue], Shape]) -> list[list[sympy.Expr]]:
    """The shape of each result of `op`, given the shapes of values."""
    source = list(shape(op.operands[0]))
    if isinstance(op, ArgReduceOp):
        axis = op.reduced_axis
        if op.keeps_dims:
            return [[ONE if i == axis else d for i, d in enumerate(source)]]
        return [[d for i, d in enumerate(source) if i != axis]]
    if isinstance(op, ScanOp):
        return [source]
    assert isinstance(op, TopKOp)
    picked = [sympy.Integer(op.count) if i == op.along else d for i, d in enumerate(source)]
    return [picked, picked]


SHAPED_OPS = (ArgMaxOp, ArgMinOp, CumSumOp, CumProdOp, TopKOp)
"""The ops `scan_shapes` knows."""


def empty_axis_guard(op: ArgReduceOp, shape: Shape) -> tuple[sympy.Expr, sympy.Expr] | None:
    """`Min(n, 1) == 1` for an argmax's axis of size n that may be empty (there is no
    index to return), None when it has elements."""
    n = shape[op.reduced_axis]
    return None if n.is_positive else (sympy.Min(n, ONE), ONE)


def top_k_guard(op: TopKOp, shape: Shape) -> tuple[sympy.Expr, sympy.Expr] | None:
    """`Min(n, k) == k` for a top_k's axis of size n that may be shorter than k (there
    are not k elements to pick), None when it is not."""
    n, k = shape[op.along], sympy.Integer(op.count)
    return None if (n - k).is_nonnegative else (sympy.Min(n, k), k)


def expand_arg_reduction(op: ArgReduceOp) -> tuple[list[Operation], SSAValue]:
    """The ops that compute an argmax or argmin (with the shapes `symbolic-shapes` gave
    it) as reductions that kernels hold, and the value that replaces its result.

    `argmax(x)` is `reduce_min(select(x == m or isnan(x), iota, MAX))` with
    `m = reduce_max(x)`: the first index of the largest element, or of the first NaN
    (a NaN makes `m` NaN, equal to nothing). Both reductions run over the same axis,
    so the whole is one kernel whose reduced axis may be walked in chunks."""
    b = RowRewrite(op.input, op.reduced_axis)
    index = t.tensor_type(op.result).element_type
    extreme = t.ReduceMaxOp if isinstance(op, ArgMaxOp) else t.ReduceMinOp
    x = b.ordered()
    m = b.add(extreme(x, [b.axis], True, TensorType(b.element, b.kept_dims)), b.kept)
    candidate = b.candidates(x, m)
    positions = b.positions(index)
    assert isinstance(index, IntegerType)
    largest = (1 << (index.width.data - 1)) - 1  # above every index: never the minimum
    fill = b.scalar(index, largest)
    chosen = b.add(
        t.SelectOp.build(operands=[candidate, positions, fill], result_types=[b.like(index)]),
        b.shape,
    )
    result = t.tensor_type(op.result)
    reduced = b.add(t.ReduceMinOp(chosen, [b.axis], op.keeps_dims, result), shape_of(op.result))
    return b.new, reduced


class RowRewrite:
    """The ops a rewrite of an argmax over `axis` of `value` adds (`new`),
    each with its shape."""

    def __init__(self, value: SSAValue, axis: int):
        self.value, self.axis = value, axis
        self.source = t.tensor_type(value)
        self.shape = shape_of(value)
        self.kept = [ONE if i == axis else d for i, d in enumerate(self.shape)]
        self.kept_dims = [1 if i == axis else d for i, d in enumerate(self.source.get_shape())]
        self.element = UI8 if t.is_bool(self.source.element_type) else self.source.element_type
        self.new: list[Operation] = []

    def add(self, made: Operation, dims: Sequence[sympy.Expr]) -> SSAValue:
        made.attributes[SHAPE] = shape_attr(dims)
        self.new.append(made)
        return made.results[0]

    def like(self, element: Attribute) -> TensorType[Attribute]:
        return TensorType(element, self.source.get_shape())

    def scalar(self, element: Attribute, value: float) -> SSAValue:
        kind: Any = TensorType(element, [])  # an integer or float scalar tensor
        return self.add(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(kind, [value])), [])

    def ordered(self) -> SSAValue:
        """The value, as ui8 if it is i1: the VM orders no i1 (0 or 1)."""
        if not t.is_bool(self.source.element_type):
            return self.value
        convert = t.ConvertOp.build(operands=[self.value], result_types=[self.like(UI8)])
        return self.add(convert, self.shape)

    def candidates(self, x: SSAValue, m: SSAValue) -> SSAValue:
        """Where `x` is its row's extreme `m`, or NaN (a NaN makes `m` NaN)."""
        candidate = self.add(elementwise("eq", [x, m], self.like(I1)), self.shape)
        if t.is_float(self.source.element_type):
            nan = self.add(elementwise("isnan", [x], self.like(I1)), self.shape)
            candidate = self.add(
                elementwise("logical_or", [candidate, nan], self.like(I1)), self.shape
            )
        return candidate

    def positions(self, index: Attribute) -> SSAValue:
        """The index of each element along the axis (an iota)."""
        dynamic = [i for i, d in enumerate(self.source.get_shape()) if d == t.DYN]
        sizes = [dim_value(self.value, i, self.new) for i in dynamic]
        return self.add(IotaOp(self.axis, sizes, self.like(index)), [*self.shape])


def elementwise(name: str, operands: Sequence[SSAValue], result: Attribute) -> Operation:
    return t.ELEMENTWISE_OPS[name].build(operands=list(operands), result_types=[result])


def dim_value(source: SSAValue, axis: int, new: list[Operation]) -> SSAValue:
    """`tensor.dim` of a function argument of the same size as axis `axis` of
    `source` (one of `source`, which a kernel may make, would keep the iota out of
    that kernel), with the value `symbolic-shapes` gives it."""
    size = shape_of(source)[axis]
    func = source.owner.parent_op() if isinstance(source, BlockArgument) else source.owner
    while func is not None and not isinstance(func, FuncOp):
        func = func.parent_op()
    for arg in func.body.block.args if func is not None else ():
        if isinstance(arg.type, TensorType) and size in shape_of(arg):
            source, axis = arg, list(shape_of(arg)).index(size)
            break
    position = arith.ConstantOp(IntegerAttr(axis, IndexType()))
    dim = t.DimOp(source, position)
    dim.attributes[VALUE] = ExprAttr(size)
    new += [position, dim]
    return dim.result


TOP_K_ROUNDS = 8
"""The largest k whose top_k `expand-arg-reductions` rewrites as k rounds of an argmax
(its cost grows with k): on a router's top-2 stream they beat the `top_k` kernel's
merge; a larger k is that kernel."""


def expand_top_k(op: TopKOp) -> tuple[list[Operation], list[SSAValue]]:
    """top_k as k rounds of an argmax over the elements no round took yet (the ops, and
    the values that replace its results): round j's
    largest `m` (the taken ones set to the lowest value), then the first index not
    taken whose element is `m` (or NaN: a NaN makes `m` NaN). So values come out
    largest first, equal ones by the lower index, NaN above every number, as the
    reference's. The rounds' indices are concatenated along the axis and the values
    gathered by them (`take_along_axis`)."""
    b = RowRewrite(op.input, op.along)
    indices_type = t.tensor_type(op.indices)
    shape, axis, index, element = b.shape, b.axis, indices_type.element_type, b.element
    x = b.ordered()
    positions = b.positions(index)
    assert isinstance(index, IntegerType)
    largest = (1 << (index.width.data - 1)) - 1  # above every index: never the minimum
    lowest, past = b.scalar(element, lowest_value(element)), b.scalar(index, largest)
    picked: list[SSAValue] = []
    taken: SSAValue | None = None
    for j in range(op.count):
        rest = x
        if taken is not None:
            select = t.SelectOp.build(operands=[taken, lowest, x], result_types=[b.like(element)])
            rest = b.add(select, shape)
        m = b.add(t.ReduceMaxOp(rest, [axis], True, TensorType(element, b.kept_dims)), b.kept)
        candidate = b.candidates(x, m)
        if taken is not None:
            free = b.add(elementwise("logical_not", [taken], b.like(I1)), shape)
            candidate = b.add(elementwise("logical_and", [candidate, free], b.like(I1)), shape)
        chosen = b.add(
            t.SelectOp.build(operands=[candidate, positions, past], result_types=[b.like(index)]),
            shape,
        )
        first = b.add(t.ReduceMinOp(chosen, [axis], True, TensorType(index, b.kept_dims)), b.kept)
        picked.append(first)
        if j == op.count - 1:  # no later round asks what is taken
            break
        hit = b.add(elementwise("eq", [positions, first], b.like(I1)), shape)
        taken = (
            hit
            if taken is None
            else b.add(elementwise("logical_or", [taken, hit], b.like(I1)), shape)
        )
    indices = picked[0]
    if len(picked) > 1:
        indices = b.add(ConcatOp(picked, axis, indices_type), shape_of(op.indices))
    values = b.add(TakeAlongAxisOp(op.input, indices, axis, op.values.type), shape_of(op.values))
    return b.new, [values, indices]


def lowest_value(element: Attribute) -> float:
    """The lowest value of a numeric element type (-inf for a float)."""
    if t.is_float(element):
        return float("-inf")
    assert isinstance(element, IntegerType)
    width = element.width.data
    return 0 if element.signedness.data == Signedness.UNSIGNED else -(1 << (width - 1))
