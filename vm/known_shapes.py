"""Tile shapes an unplanned launch knows before it runs (`unplanned.Launcher`).

Each dim of a register's tile shape is a *token*: an int where the program fixes it (a
slot that is a constant, a kept dim of a reduction), else what computes it, the same
for every launch and tile: a slot's expression for a slot's extent, that with the
counter and tile size of a tiled view dim (the tail's clipping is the same arithmetic
for every view tiled alike). Two dims with equal tokens have equal extents in every
tile. So a broadcast of two registers whose tokens agree, dim by dim or with a 1
against the other, cannot fail and gives a known shape: the launch function needs no
check there, and a new tile shape meets no memo miss for the pair (a row reduction's
result against its source, a row of weights against the rows).

What is known holds in program order within one pass of the tile: it is forgotten
at a loop's start and end (a pass may see what a later instruction of the previous
pass wrote, or none), and wholly after an instruction of a category not followed here.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from dvm.vm.isa import KEEPDIMS, Cat, ExprOp, ExtentKind
from dvm.vm.program import Extent, Program
from dvm.vm.shapes import broadcast_shapes

Tokens = tuple[Hashable, ...]

FOLLOWED = frozenset(
    {Cat.NOP, Cat.LOAD, Cat.STORE, Cat.STORE_ACC, Cat.COPY, Cat.CONVERT, Cat.BROADCAST}
    | {Cat.FILL, Cat.SELECT, Cat.REDUCE, Cat.MMA, Cat.UNARY, Cat.BINARY, Cat.BINARY_RS}
    | {Cat.BINARY_SR}
)
"""Categories that write no register but their destination (operand 0), if any."""


class KnownShapes:
    """Registers' tile shapes as tokens, where the code so far fixes them."""

    def __init__(self, p: Program) -> None:
        self.p = p
        self.of: dict[int, Tokens] = {}
        self.made: Tokens | None = None
        """What the instruction being written leaves in its destination, if known."""

    def slot(self, i: int) -> Hashable:
        expr = self.p.slots[i].expr
        if len(expr) == 1 and expr[0].op is ExprOp.CONST:
            return expr[0].a
        return ("slot", expr)

    def view_tile(self, v: int) -> Tokens:
        """View v's current tile."""
        return tuple(
            ("tile", dim.index, self.slot(dim.tile), self.slot(dim.size))
            if dim.index and dim.tile is not None
            else self.slot(dim.size)
            for dim in self.p.views[v].dims
        )

    def extents(self, extents: Sequence[Extent]) -> Tokens | None:
        """A SHAPE operand's tokens, if each is known."""
        out: list[Hashable] = []
        for e in extents:
            if e.kind is ExtentKind.SLOT:
                out.append(self.slot(e.index))
            elif e.kind is ExtentKind.VIEW_DIM:
                out.append(self.view_tile(e.index)[e.dim])
            elif e.index in self.of:
                out.append(self.of[e.index][e.dim])
            else:
                return None
        return tuple(out)

    def broadcast(self, a: Tokens | None, b: Tokens | None) -> Tokens | None:
        """Shapes a and b broadcast, when their tokens show it cannot fail (one rank)."""
        if a is None or b is None or len(a) != len(b):
            return None
        # numpy's rule on one rank compares dims only with each other and with 1,
        # which tokens answer as the extents they stand for
        return broadcast_shapes([a, b])  # pyright: ignore[reportArgumentType]

    def registers(self, r: int, s: int) -> Tokens | None:
        """Registers r and s broadcast, when that cannot fail."""
        return self.broadcast(self.of.get(r), self.of.get(s))

    def is_shape_of(self, shape: Tokens | None, r: int) -> bool:
        """Whether `shape` is known to be register r's."""
        return shape is not None and shape == self.of.get(r)

    def reduced(self, shape: Tokens | None, axes: int, flags: int) -> Tokens | None:
        """A shape reduced over `axes`."""
        if shape is None:
            return None
        keep = bool(flags & KEEPDIMS)
        return tuple(
            1 if axes >> i & 1 else n for i, n in enumerate(shape) if keep or not axes >> i & 1
        )

    def wrote(self, cat: Cat, d: int | None) -> None:
        """After an instruction (of category `cat`, writing register d if any): d's shape
        is what the instruction made (`made`)."""
        if cat not in FOLLOWED:
            self.of.clear()
        elif d is not None:
            if self.made is None:
                self.of.pop(d, None)
            else:
                self.of[d] = self.made
        self.made = None

    def forget(self) -> None:
        self.of.clear()
        self.made = None
