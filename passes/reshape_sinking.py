"""Collapses moved below the matmuls and elementwise ops that read them, so that a
collapse meets the expand that undoes it and both go.

A program that multiplies a 3-D activation by a 2-D weight often flattens it first,
as torch's `linear` does: `[B, S, H] -> [B * S, H]`, the matmul and its bias, then
`-> [B, S, N]`. A kernel iterates the matmul's rows as one axis, which the expand
after it would split, so the matmul's epilogue (a residual add, a LayerNorm) could
not join it. The matmul of a collapse is the collapse of the matmul of its source
(rows of a 2-D matmul, or the batch dims of a batched one), and an elementwise op of
a collapse is the collapse of the op on its source when its other operands do not
span the merged dims (a bias along the last dim) or are collapses of the same shape.
Moved down, the collapse reaches the expand, which gives back its source where the
sizes are provably the same (`expand(collapse(x))` is `x`): the program is then the
3-D matmul a hand-written program has, and fuses as one does.

The new ops carry their shapes, so the next move can be decided; once all have
moved the function's shapes and guards are computed again, starting from the guards
of the program as written (`concat_sinking` does the same).
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy
from xdsl.dialects.builtin import TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from dvm.dialects import tensor as t
from dvm.dialects.expr import shape_attr
from dvm.dialects.walk import ops_within
from dvm.passes.concat_sinking import infer_shapes_again
from dvm.passes.domain import ELEMENTWISE_KINDS, known_facts, provably_equal
from dvm.passes.symbolic import SHAPE, guard_facts, shape_of

Groups = list[list[int]]


class ReshapeSinking:
    """One function's moves (see the module docstring)."""

    def __init__(self, func: FuncOp):
        self.func = func
        self.facts = known_facts(guard_facts(func))

    def equal(self, a: sympy.Expr, b: sympy.Expr) -> bool:
        return provably_equal(a, b) or frozenset((a, b)) in self.facts

    def same_shape(self, a: Sequence[sympy.Expr], b: Sequence[sympy.Expr]) -> bool:
        return len(a) == len(b) and all(self.equal(x, y) for x, y in zip(a, b, strict=True))

    def run(self) -> None:
        moved = False
        while self.sweep():
            moved = True
        if moved:
            infer_shapes_again(self.func)

    def sweep(self) -> bool:
        """Every move one walk in program order finds (False: none is left). A moved
        collapse lands where its op was, before the ops that read it, so the same walk
        moves it on: a chain of moves costs one walk, not one per move."""
        moved = False
        # (exact classes and `ELEMENTWISE_KINDS`: xDSL's ABC `isinstance` is slow
        # at every op of every walk)
        for op in ops_within(self.func):
            if op.parent is None:  # erased by a move
                continue
            if type(op) is t.ExpandShapeOp:
                moved = self.cancel(op) or moved
            elif type(op) is t.MatmulOp:
                moved = self.sink_into_matmul(op) or moved
            elif op in ELEMENTWISE_KINDS:
                moved = self.sink_into_elementwise(op) or moved
        return moved

    # -- the moves ---------------------------------------------------------------

    def cancel(self, expand: t.ExpandShapeOp) -> bool:
        """`expand(collapse(x))` with the same groups and sizes: `x`."""
        collapse = expand.src.owner
        if not isinstance(collapse, t.CollapseShapeOp) or collapse.groups != expand.groups:
            return False
        source = collapse.src
        if source.type != expand.result.type:
            return False
        if not self.same_shape(shape_of(source), shape_of(expand.result)):
            return False
        expand.result.replace_all_uses_with(source)
        Rewriter.erase_op(expand)
        erase_if_dead(collapse)
        return True

    def sink_into_matmul(self, op: t.MatmulOp) -> bool:
        """`collapse(x) @ w` as `collapse(x @ w)`: a 2-D matmul whose rows merge dims
        (`w` 2-D), or a batched one whose operands merge the same batch dims."""
        lhs, rhs = op.lhs.owner, op.rhs.owner
        if not isinstance(lhs, t.CollapseShapeOp):
            return False
        groups = lhs.groups
        if len(groups) == 2 and len(groups[0]) > 1 and len(groups[1]) == 1:  # rows merge
            if op.flags[0] or len(tensor_type(op.rhs).get_shape()) != 2:
                return False
            source, other, tail = lhs.src, op.rhs, 1
        elif len(groups) >= 3 and isinstance(rhs, t.CollapseShapeOp) and rhs.groups == groups:
            if any(len(g) > 1 for g in groups[-2:]):  # only batch dims may merge
                return False
            if not self.same_shape(shape_of(lhs.src)[:-2], shape_of(rhs.src)[:-2]):
                return False
            source, other, tail = lhs.src, rhs.src, 2
        else:
            return False
        result = tensor_type(op.result)
        static = [*tensor_type(source).get_shape()[:-tail], *result.get_shape()[-tail:]]
        dims = [*shape_of(source)[:-tail], *shape_of(op.result)[-tail:]]
        product = t.MatmulOp(source, other, TensorType(result.element_type, static), *op.flags)
        product.attributes[SHAPE] = shape_attr(dims)
        Rewriter.insert_op(product, InsertPoint.before(op))
        collapse_into(op, product.result, groups)
        return True

    def sink_into_elementwise(self, op: Operation) -> bool:
        """`f(collapse(x), b)` as `collapse(f(x, b))` when each other operand spans no
        merged dim or is a collapse of the same groups and sizes."""
        tensors = [v for v in op.operands if isinstance(v.type, TensorType)]
        collapses = [v.owner for v in tensors if isinstance(v.owner, t.CollapseShapeOp)]
        if not collapses or len(op.results) != 1:
            return False
        first = collapses[0]
        assert isinstance(first, t.CollapseShapeOp)
        groups, source = first.groups, first.src
        rank = len(groups)
        merged = [k for k, g in enumerate(groups) if len(g) > 1]
        if not merged or len(tensor_type(op.results[0]).get_shape()) != rank:
            return False
        free = rank - merged[-1] - 1  # the trailing dims no merge touches
        operands: list[SSAValue] = []
        for value in op.operands:
            owner = value.owner
            if not isinstance(value.type, TensorType):
                operands.append(value)
            elif isinstance(owner, t.CollapseShapeOp) and owner.groups == groups:
                if not self.same_merged_dims(owner.src, source, groups):
                    return False
                operands.append(owner.src)
            elif len(value.type.get_shape()) <= free:
                operands.append(value)
            else:
                return False
        result = tensor_type(op.results[0])
        static, dims = expanded_shape(op.results[0], source, groups)
        new = type(op).create(
            operands=operands,
            result_types=[TensorType(result.element_type, static)],
            properties=dict(op.properties),
            attributes={**op.attributes, SHAPE: shape_attr(dims)},
        )
        Rewriter.insert_op(new, InsertPoint.before(op))
        collapse_into(op, new.results[0], groups)
        return True

    def same_merged_dims(self, a: SSAValue, b: SSAValue, groups: Groups) -> bool:
        """Whether collapses of `a` and `b` by `groups` merge dims of the same sizes."""
        shape_a, shape_b = shape_of(a), shape_of(b)
        return all(
            self.equal(shape_a[i], shape_b[i]) for group in groups if len(group) > 1 for i in group
        )


def expanded_shape(
    result: SSAValue, source: SSAValue, groups: Groups
) -> tuple[list[int], list[sympy.Expr]]:
    """The type dims and shape of an elementwise `result` computed on `source` rather
    than on its collapse: the source's dims where they merge, the result's elsewhere."""
    static: list[int] = []
    dims: list[sympy.Expr] = []
    result_static, result_dims = tensor_type(result).get_shape(), shape_of(result)
    source_static, source_dims = tensor_type(source).get_shape(), shape_of(source)
    for k, group in enumerate(groups):
        if len(group) > 1:
            static.extend(source_static[i] for i in group)
            dims.extend(source_dims[i] for i in group)
        else:
            static.append(result_static[k])
            dims.append(result_dims[k])
    return static, dims


def collapse_into(op: Operation, value: SSAValue, groups: Groups) -> None:
    """Replace `op`'s result by the collapse of `value` (`op`'s shape), and erase `op`
    and the collapses it read that nothing else reads."""
    old = op.results[0]
    value.name_hint = old.name_hint  # (the collapse is a view of it: it is what `op` was)
    collapse = t.CollapseShapeOp(value, groups, old.type)  # type: ignore[arg-type]
    collapse.attributes[SHAPE] = shape_attr(shape_of(old))
    Rewriter.insert_op(collapse, InsertPoint.before(op))
    old.replace_all_uses_with(collapse.result)
    read = [v.owner for v in op.operands]
    Rewriter.erase_op(op)
    for owner in read:
        if isinstance(owner, t.CollapseShapeOp):
            erase_if_dead(owner)


def erase_if_dead(op: Operation) -> None:
    if not any(result.uses for result in op.results):
        Rewriter.erase_op(op)


def tensor_type(value: SSAValue) -> TensorType[Attribute]:
    assert isinstance(value.type, TensorType)
    return value.type


def sink_reshapes(func: FuncOp) -> None:
    """Move collapses below the matmuls and elementwise ops that read them, and drop
    each that meets the expand undoing it (see the module docstring)."""
    ReshapeSinking(func).run()
