"""A concat (or pad) fused with the ops that compute its inputs: stores into one output.

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
(elementwise and layout ops, slices of inputs, takes, iotas, which count along
the piece's own part: `PIECE_SIZES`); a group with anything else, or with
another output than the concat's result, is not one kernel (and the concat
keeps its own). A concat of a concat along the same axis is one concat
(`flatten_concats`); along another axis it is not fused: a piece stores at an
offset along one axis, and the inner concat's pieces would need one along two.

A constant pad fuses the same way with the ops that compute its source: one
piece, stored at the low pads after the constant fills the result. The two
writes overlap, so every axis is walked by loops, on one core, in order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

import sympy
from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue

from dvm.dialects.data_movement import ConcatOp, PadOp
from dvm.dialects.tensor import ReduceOp
from dvm.passes.domain import (
    OWN_KERNEL,
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
    """One input of the concat (or a pad's source), the group's ops that compute it
    (in block order) and its kernel's domain, over the axes of the result (its dims)."""

    value: SSAValue
    ops: list[Operation]
    domain: Domain


PieceCache = dict[tuple[SSAValue, tuple[Operation, ...], int | None, str], Piece | Illegal]
"""What `single_piece` found (a piece, or why it cannot be one), by the piece's value,
its ops, the concat's axis and the op it is a piece of, for one set of known facts."""


def fused_pieces(
    ops: Sequence[Operation],
    outputs: Sequence[SSAValue],
    known: Facts = frozenset(),
    cache: PieceCache | None = None,
) -> tuple[Domain, list[Piece]] | None:
    """The domain and pieces of a concat or pad fused with its producers (None for
    another group; Illegal when not one kernel). `cache` keeps each piece found: fusion
    grows a group one producer at a time, and each time asks again about the pieces
    the new producer does not compute (the 49 slices of a 7x7 convolution's im2col)."""
    cache = {} if cache is None else cache
    if (concat := fused_concat(ops)) is not None:
        return concat_pieces(concat, ops, outputs, known, cache)
    if (pad := fused_pad(ops)) is not None:
        domain, piece = pad_piece(pad, ops, outputs, known, cache)
        return domain, [piece]
    return None


FusedOp = TypeVar("FusedOp", ConcatOp, PadOp)


def fused_op(ops: Sequence[Operation], kind: type[FusedOp]) -> FusedOp | None:
    """The op of `kind` of a group that holds one and other ops (constants aside): a
    concat or a pad fused with the ops that compute its inputs."""
    found = [op for op in ops if type(op) is kind]  # (no subclasses; a cheap test)
    if len(found) != 1:  # (most groups: counted no further)
        return None
    computing = sum(type(op) is not arith.ConstantOp for op in ops)
    return found[0] if computing > 1 else None


def fused_pad(ops: Sequence[Operation]) -> PadOp | None:
    return fused_op(ops, PadOp)


def fused_concat(ops: Sequence[Operation]) -> ConcatOp | None:
    return fused_op(ops, ConcatOp)


def pad_piece(
    pad: PadOp,
    ops: Sequence[Operation],
    outputs: Sequence[SSAValue],
    known: Facts,
    cache: PieceCache,
) -> tuple[Domain, Piece]:
    """The domain of `pad` fused with the ops that compute its source (the padded
    result's dims, every one walked by loops on one core: the fill and the source's
    store overlap, and one core makes them in order) and the source's piece."""
    if list(outputs) != [pad.result]:
        raise Illegal(f"{describe(pad)}: a fused pad's result is its kernel's only output")
    members = places(ops, pad)
    if any(isinstance(op, OWN_KERNEL) for op in members):
        raise Illegal(f"{describe(pad)}: one pad per kernel")
    piece_ops = producers(pad.source, members)
    check_all_used(members, [piece_ops], describe(pad))
    piece = single_piece(pad.source, piece_ops, describe(pad), known, None, cache)
    rank = len(shape_of(pad.result))
    domain = Domain(
        sizes=list(shape_of(pad.result)),
        reduced=frozenset(range(rank)),
        placement={pad.result: tuple((a,) for a in range(rank))},
        loads=list(piece.domain.loads),
    )
    return domain, piece


def single_piece(
    value: SSAValue,
    piece_ops: list[Operation],
    what: str,
    known: Facts,
    axis: int | None,
    cache: PieceCache,
) -> Piece:
    """The piece that computes `value` with `piece_ops` (its producers in the group;
    found once for the same ops: `cache`)."""
    key = (value, tuple(piece_ops), axis, what)
    found = cache.get(key)
    if found is None:
        try:
            found = new_piece(value, piece_ops, what, known, axis)
        except Illegal as e:
            found = e
        cache[key] = found
    if isinstance(found, Illegal):
        raise found.with_traceback(None)
    return found


def new_piece(
    value: SSAValue, piece_ops: list[Operation], what: str, known: Facts, axis: int | None
) -> Piece:
    domain = DomainAnalysis(piece_ops, [value], known=known).run()
    # (a reduction over unit dims only is no reduced axis of the domain, but the
    # piece's loads would not map its input's dims: it keeps a kernel of its own)
    reduces = any(isinstance(op, ReduceOp) for op in piece_ops)
    if domain.reduced or domain.contraction is not None or reduces:
        raise Illegal(f"{what}: what a fused copy stores is not reduced")
    return Piece(value, piece_ops, over_result_axes(domain, value, axis))


def check_all_used(members: Iterable[Operation], pieces: list[list[Operation]], what: str) -> None:
    """Every op of a fused kernel computes what it stores (no dead op rides along):
    every one of `members` is one of a piece's ops (constants aside)."""
    used = {op for piece_ops in pieces for op in piece_ops}
    if any(op not in used and not isinstance(op, arith.ConstantOp) for op in members):
        raise Illegal(f"{what}: every op of its kernel computes what it stores")


def concat_pieces(
    concat: ConcatOp,
    ops: Sequence[Operation],
    outputs: Sequence[SSAValue],
    known: Facts,
    cache: PieceCache,
) -> tuple[Domain, list[Piece]]:
    """The domain of `concat` fused with its producers (the result's dims, the axis
    walked by loops over chunks) and its pieces; Illegal when not one kernel."""
    if list(outputs) != [concat.result]:
        raise Illegal(f"{describe(concat)}: a fused concat's result is its kernel's only output")
    members = places(ops, concat)
    if any(isinstance(op, OWN_KERNEL) for op in members):  # (a scatter_add has no tile form)
        raise Illegal(f"{describe(concat)}: one concat, and no other op of its own, per kernel")
    result = shape_of(concat.result)
    needed = [producers(value, members) for value in concat.inputs]
    check_all_used(members, needed, describe(concat))
    pieces = [
        single_piece(value, piece_ops, describe(concat), known, concat.axis, cache)
        for value, piece_ops in zip(concat.inputs, needed, strict=True)
    ]
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


def places(ops: Sequence[Operation], fused: Operation) -> dict[Operation, int]:
    """The ops of a group but its concat or pad (`fused`), each with its place in the
    group's order."""
    return {op: i for i, op in enumerate(ops) if op is not fused}


def producers(value: SSAValue, members: dict[Operation, int]) -> list[Operation]:
    """The ops of `members` (each with its place) that `value` is computed from, in
    their order: as many steps as it has, however large the group (a concat's 49
    pieces each ask)."""
    needed: set[Operation] = set()
    stack = [value]
    while stack:
        owner = stack.pop().owner
        if isinstance(owner, Operation) and owner in members and owner not in needed:
            needed.add(owner)
            stack.extend(owner.operands)
    return sorted(needed, key=members.__getitem__)


def over_result_axes(domain: Domain, value: SSAValue, axis: int | None) -> Domain:
    """A piece's domain renumbered so that axis `d` is dim `d` of its input (a unit
    dim gets an axis of size 1), the concat's axis walked by loops over chunks (every
    axis, for a pad: `axis` None)."""
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
        reduced=frozenset(range(rank) if axis is None else {axis}),
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
