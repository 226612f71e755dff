"""A concat fused with the ops that compute its inputs: several stores into one output.

No one domain holds a concat's inputs (they differ in size along its axis),
but each input, with the ops that compute it, is a kernel of its own domain.
A kernel of a concat and its producers runs those *pieces* one after the
other, each storing into its part of the concat's result: the piece of input
`k` is its own kernel's body, with its store moved to where input `k` starts
along the axis.

The pieces share the kernel's tiling, over the axes of the concat's result:
every piece has the same dims but along the axis, which is walked by loops over
chunks in each piece (as a reduced axis is), so that the grid, over the other
axes, is one. A piece may hold what a vector kernel without reductions holds
(elementwise and layout ops, slices of inputs, takes; not an iota, whose tiles
take their extents from the kernel's axes); a group with
anything else, or with another output than the concat's result, is not one
kernel (and the concat keeps its own).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import sympy
from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue

from dvm.dialects.data_movement import ConcatOp
from dvm.dialects.index_ops import IotaOp
from dvm.passes.domain import (
    Domain,
    DomainAnalysis,
    Facts,
    Illegal,
    Placement,
    StridedView,
    contiguous_strides,
)
from dvm.passes.errors import describe
from dvm.passes.symbolic import shape_of


@dataclass
class Piece:
    """One input of the concat, the group's ops that compute it (in block order) and
    its kernel's domain, over the axes of the concat's result (the result's dims)."""

    value: SSAValue
    ops: list[Operation]
    domain: Domain


def fused_concat(ops: Sequence[Operation]) -> ConcatOp | None:
    """The concat of a group that holds one and other ops (constants aside)."""
    concats = [op for op in ops if isinstance(op, ConcatOp)]
    computing = [op for op in ops if not isinstance(op, arith.ConstantOp)]
    if len(concats) == 1 and len(computing) > 1:
        return concats[0]
    return None


def concat_pieces(
    ops: Sequence[Operation], outputs: Sequence[SSAValue], known: Facts = frozenset()
) -> tuple[Domain, list[Piece]]:
    """The domain of a concat fused with its producers (the result's dims, the axis
    walked by loops over chunks) and its pieces; Illegal when not one kernel."""
    concat = fused_concat(ops)
    assert concat is not None
    if list(outputs) != [concat.result]:
        raise Illegal(f"{describe(concat)}: a fused concat's result is its kernel's only output")
    members = [op for op in ops if op is not concat]
    if any(isinstance(op, ConcatOp) for op in members):
        raise Illegal(f"{describe(concat)}: one concat per kernel")
    result = shape_of(concat.result)
    pieces = []
    computing = {op for value in concat.inputs for op in producers(value, members)}
    if any(op not in computing and not isinstance(op, arith.ConstantOp) for op in members):
        raise Illegal(f"{describe(concat)}: every op of its kernel computes one of its inputs")
    for value in concat.inputs:
        piece_ops = producers(value, members)
        domain = DomainAnalysis(piece_ops, [value], known=known).run()
        if domain.reduced or domain.contraction is not None:
            raise Illegal(f"{describe(concat)}: a fused concat's inputs are not reduced")
        for op in piece_ops:  # its tiles would take the kernel's extents, not the piece's
            if isinstance(op, IotaOp):
                raise Illegal(f"{describe(op)} is not part of a fused concat")
        pieces.append(Piece(value, piece_ops, over_result_axes(domain, value, concat.axis)))
    store = StridedView(
        concat.result,
        tuple(contiguous_strides(result)),
        concat.result,
        tuple((a,) for a in range(len(result))),
    )
    loads = [view for piece in pieces for view in piece.domain.loads]
    domain = Domain(
        sizes=list(result),
        reduced=frozenset({concat.axis}),
        placement={concat.result: store.placement},
        loads=loads,
        stores=[store],
    )
    return domain, pieces


def producers(value: SSAValue, members: Sequence[Operation]) -> list[Operation]:
    """The ops of `members` that `value` is computed from, in their order."""
    inside = set(members)
    needed: set[Operation] = set()
    stack = [value]
    while stack:
        owner = stack.pop().owner
        if isinstance(owner, Operation) and owner in inside and owner not in needed:
            needed.add(owner)
            stack.extend(owner.operands)
    return [op for op in members if op in needed]


def over_result_axes(domain: Domain, value: SSAValue, axis: int) -> Domain:
    """A piece's domain renumbered so that axis `d` is dim `d` of its input (a unit
    dim gets an axis of size 1), the concat's axis walked by loops over chunks."""
    placement = domain.placement[value]
    number: dict[int, int] = {}
    for dim, span in enumerate(placement):
        if len(span) > 1:
            raise Illegal("a fused concat's input spans several axes in one dim")
        number.update((a, dim) for a in span)
    if len(number) != len(domain.sizes):
        raise Illegal("a fused concat's input does not span its kernel's axes")
    rank = len(placement)

    def spans(old: Placement) -> Placement:
        return tuple(tuple(number[a] for a in span) for span in old)

    def strides(old: tuple[sympy.Expr, ...]) -> tuple[sympy.Expr, ...]:
        new: list[sympy.Expr] = [sympy.Integer(0)] * rank
        for a, stride in enumerate(old):
            new[number[a]] = stride
        return tuple(new)

    def view(old: StridedView) -> StridedView:
        return replace(old, strides=strides(old.strides), placement=spans(old.placement))

    return Domain(
        sizes=list(shape_of(value)),
        reduced=frozenset({axis}),
        placement={v: spans(p) for v, p in domain.placement.items()},
        loads=[view(v) for v in domain.loads],
        stores=[view(v) for v in domain.stores],
        takes={v: replace(tv, view=view(tv.view)) for v, tv in domain.takes.items()},
    )


def piece_store(piece: Piece, concat: ConcatOp, start: sympy.Expr) -> StridedView:
    """Where a piece stores its input: into the concat's result, from `start` along
    the axis (placed as the input is: a unit dim is one element, no loop walks it)."""
    strides = contiguous_strides(shape_of(concat.result))
    offset = sympy.expand(start * strides[concat.axis])
    placement = piece.domain.placement[piece.value]
    return StridedView(concat.result, tuple(strides), piece.value, placement, offset=offset)
