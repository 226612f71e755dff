"""Random programs that mix everything: long chains over shapes the other generators miss.

`MixedGenerator` extends `random_programs_moves.MovesGenerator` (same sizes model,
exactness bookkeeping and comparison) with:

- pads of dims of symbolic size: a padded `a` is `a + 2`, not a monomial, so the
  size model names it as a symbol of its own, `a+2`, whose value `evaluate` derives
  from `a`'s (an `index` of it is `tensor.dim` of an `a` dim plus 2);
- static 0 dims in arguments (besides symbols that are 0 at run time), and unit
  dims written `?` next to static 1s, broadcast against each other;
- `scatter_add` and `take_along_axis` as concat pieces, and `scatter_add` updates
  made by earlier ops (a fused producer), not only new arguments;
- sibling chains: the same ops applied to a value and to an argument of other
  symbols, both results returned, so that `fuse` makes a `tensor.choice` (one
  kernel when the sizes agree at run time) and `stack` stacks independent kernels;
- `scf.if` with longer branches that nest and read values defined outside;
- long programs (`max_steps` up to 30) whose values have several users, and
  which return the values that no op reads (else dead code: never compiled).

`mixed_cases()` is `random_programs.cases()` drawn with this generator.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hypothesis import strategies as st
from random_programs import (
    ONE,
    Case,
    Dim,
    RandomProgram,
    Size,
    Value,
    cases,
    programs_made_by,
)
from random_programs_moves import MovesGenerator

MAX_UNREAD_RESULTS = 8
"""At most this many values that nothing reads are returned (the last ones)."""


class MixedGenerator(MovesGenerator):
    """`MovesGenerator` with the shapes listed in the module docstring."""

    KINDS = (
        MovesGenerator.KINDS
        + ["symbolic_pad"] * 5
        + ["scatter_add", "take_along_axis"] * 2
        + ["index_concat"] * 3
        + ["siblings"] * 3
        + ["unit_mix"] * 2
        + ["if"] * 2
    )
    MAX_DEPTH = 2
    BRANCH_STEPS = (1, 2, 0, 3, 4, 6)

    def new_dim(self) -> Dim:
        kind = self.pick(["symbol"] * 4 + ["static", "unit", "hidden-unit", "hidden-unit", "zero"])
        if kind == "zero":
            return Dim((0, ()), True)
        if kind == "symbol":
            return Dim((1, (self.pick(self.symbols),)), False)
        if kind == "static":
            return Dim((self.pick([2, 3, 4, 5]), ()), True)
        return Dim(ONE, kind == "unit")

    def wanted_results(self) -> list[Value]:
        """`results`, and values that no op reads (else dead: never computed)."""
        body = "\n".join(self.blocks[0])
        unread = [v for v in self.scopes[0] if len(re.findall(rf"{v.name}\b", body)) == 1]
        return self.results + unread[-MAX_UNREAD_RESULTS:]

    # -- pads of symbolic dims ---------------------------------------------------------

    def paddable(self, size: Size) -> bool:
        return not size[1] or (size[0] == 1 and len(size[1]) == 1)

    def op_symbolic_pad(self) -> Value | None:
        x = self.operand(["f32", "f32", "i32", "f64"], min_rank=1)
        symbolic = [a for a, s in enumerate(x.sizes) if s[1] and self.paddable(s)]
        axes = symbolic or [a for a, s in enumerate(x.sizes) if self.paddable(s)]
        if not axes:
            return None
        return self.pad(x, self.pick(axes))

    # -- index ops as pieces and consumers ---------------------------------------------

    def updates(self, dims: Sequence[Dim], dtype: str) -> Value:
        """A visible value of these sizes (made by an op that may fuse with the
        scatter), or a new argument."""
        sizes = tuple(d.size for d in dims)
        same = [v for v in self.visible() if v.dtype == dtype and v.sizes == sizes]
        if same and self.chance(60):
            return self.pick(same)
        return self.argument(dims, dtype)

    def piece(self, x: Value, axis: int) -> Value | None:
        how = self.pick(["scatter", "take_along", "other"])
        if how == "other":
            return super().piece(x, axis)
        if how == "take_along":
            n = x.sizes[axis][0]
            if n < 1:
                return None
            length = Dim((self.between(0, 3), ()), True)
            return self.take_along(x, axis, n, lambda: length)
        base = x
        if self.chance(50):  # a base of its own length along the axis
            dims = list(x.dims)
            dims[axis] = Dim((self.between(1, 3), ()), True)
            base = self.argument(dims, x.dtype)
        axes = [a for a, (n, symbols) in enumerate(base.sizes) if not symbols and n >= 1]
        if not axes or x.nonfinite:
            return None
        scatter_axis = self.pick(axes)
        return self.scatter_add(base, scatter_axis, base.sizes[scatter_axis][0])

    def op_index_concat(self) -> Value | None:
        """A concat along a static axis with at least one index-op piece."""
        x = self.operand(["f32", "f32", "i32", "f64"], min_rank=1)
        axes = [a for a, (n, symbols) in enumerate(x.sizes) if not symbols and n >= 1]
        if not axes:
            return None
        axis = self.pick(axes)
        pieces = [x]
        for _ in range(self.between(1, 3)):
            piece = self.piece(x, axis)
            if piece is not None:
                pieces.append(piece)
        if len(pieces) == 1:
            return None
        if self.chance(50):
            pieces.reverse()
        size = (sum(p.sizes[axis][0] for p in pieces), ())
        sizes = [size if a == axis else s for a, s in enumerate(x.sizes)]
        return self.concatenated(pieces, axis, sizes)

    # -- independent kernels -----------------------------------------------------------

    def op_siblings(self) -> Value | None:
        """The same elementwise chain on a value and on an argument whose symbols
        differ (equal or not at run time), both returned."""
        x = self.operand(["f32", "f32", "f64"], min_rank=1)
        dims = [self.new_dim() if d.size[1] and self.chance(70) else d for d in x.dims]
        y = self.argument(dims, x.dtype)
        ops = [self.pick(["neg", "abs", "tanh", "add", "mul"]) for _ in range(self.between(1, 3))]
        made = []
        for v in (x, y):
            for op in ops:
                if op in ("neg", "abs"):
                    v = self.unary(op, v, exact=v.exact, bound=v.bound, frac=v.frac)
                elif op == "tanh":
                    v = self.unary(op, v, exact=False, bound=1.0)
                elif v.bound <= 1000:
                    c = self.const_scalar(v.dtype, 2.0)
                    bound = v.bound + 2 if op == "add" else v.bound * 2
                    v = self.binary(op, v, c, exact=v.exact, bound=bound, frac=max(v.frac, 1))
            made.append(v)
        self.results.extend(made)
        return made[0]

    def op_unit_mix(self) -> Value | None:
        """A value broadcast against an argument with unit dims, some written `1`
        and some `?` (1 at run time), maybe with a leading unit dim more."""
        x = self.operand(["f32", "f32", "i32", "f64"])
        dims = [self.pick([Dim(ONE, True), Dim(ONE, False), d]) for d in x.dims]
        if x.rank < 4 and self.chance(30):
            dims.insert(0, Dim(ONE, self.chance(50)))
        u = self.argument(dims, x.dtype)
        op = self.pick(["add", "max", "sub"])
        bound = x.bound + u.bound if op != "max" else max(x.bound, u.bound)
        if not self.allowed(x.dtype, x.exact, bound):
            return None
        return self.binary(op, x, u, exact=x.exact, bound=bound, frac=max(x.frac, u.frac))


def mixed_programs_strategy(max_steps: int = 12) -> st.SearchStrategy[RandomProgram]:
    return programs_made_by(MixedGenerator, max_steps)


def mixed_cases(max_steps: int = 12) -> st.SearchStrategy[Case]:
    """`random_programs.cases()` with programs of `MixedGenerator`."""
    return cases(made_by=mixed_programs_strategy(max_steps))
