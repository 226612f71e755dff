"""More random programs: the data movement ops and the concats that fusion rewrites.

`MovesGenerator` extends `random_programs.Generator` (same sizes model, same
exactness bookkeeping, same comparison) with ops it does not draw:

- `pad` with a constant (static and `index`-valued pads, of dims whose size has
  no symbol: the size model holds monomials only, and `a + 2` is none);
- `reverse` along some axes;
- strided `extract_slice` of a dim of static size (any offset, stride 1-3, and
  counts down to 0 and 1, so empty and unit dims appear) and `insert_slice` of
  such slices into a destination;
- `top_k` of exact values along a static axis (ties go to the lower index in
  both implementations; its i32 indices feed later ops), `cumprod`;
- concats whose pieces differ along the axis (their sizes add up to a monomial
  when they share the symbols): the value itself, new arguments, and pieces made
  by a reduction over the axis kept as a unit dim (`keepdims`, or dropped and
  put back by `expand_shape`), a `broadcast_to` of such a unit dim, a `pad`, a
  strided slice or a `take` along the axis. The pieces and the concat are also
  used by other ops, so that one value feeds a concat and another kernel.

`move_cases()` is `random_programs.cases()` drawn with this generator.
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st
from random_programs import (
    ELEMENTS_CAP,
    FLOATS,
    ONE,
    Case,
    Dim,
    Generator,
    RandomProgram,
    Size,
    Value,
    cases,
    groups_text,
    programs_made_by,
    type_text,
)

PADDINGS = {
    "f32": ["0.0", "-1.5", "2.0"],
    "f64": ["0.5"],
    "i32": ["0", "-3", "7"],
    "f16": ["0.0", "-0.75"],
}


def padded_size(size: Size, extra: int) -> Size:
    """A dim's size with `extra` elements more: one of a symbol `a` (or `a+2`) grows
    into the symbol `a+<extra>` (`a+<2 + extra>`), one of a product `2*a*b` into
    `2*a*b+<extra>`, which `random_programs.evaluate` knows."""
    n, symbols = size
    if not symbols or not extra:
        return (n + extra, symbols)
    if n == 1 and len(symbols) == 1:
        base, _, before = symbols[0].partition("+")
        return (1, (f"{base}+{int(before or 0) + extra}",))
    # a product (`2*a`, `a*b`): the symbol `2*a+<extra>`, of plain symbols only
    assert not any("+" in s for s in symbols), size
    base = "*".join([str(n)] * (n != 1) + list(symbols))
    return (1, (f"{base}+{extra}",))


class MovesGenerator(Generator):
    """`Generator` with the data movement ops and mixed concats (see the module docstring)."""

    KINDS = (
        Generator.KINDS
        + ["pad"] * 3
        + ["reverse"] * 2
        + ["strided_slice"] * 3
        + ["insert_slice"] * 3
        + ["top_k"] * 2
        + ["cumprod"]
        + ["mixed_concat"] * 6
    )

    def static_axes(self, x: Value) -> list[int]:
        """The axes of `x` whose size has no symbol (static, or 1 behind a `?`)."""
        return [a for a, (_, symbols) in enumerate(x.sizes) if not symbols]

    def index_text(self, n: int) -> str:
        """`n` written in an op's list: as a literal, or sometimes an `index` value."""
        return self.index_constant(n) if self.chance(25) else str(n)

    def moved(self, line: str, name: str, x: Value, sizes: Sequence[Size], static: bool) -> Value:
        """A data movement result: `x`'s values, dims static where `static` allows."""
        dims = [Dim(s, static and not s[1]) for s in sizes]
        return self.layout(line, name, x, dims)

    # -- pad, reverse, slices ------------------------------------------------------------

    def paddable(self, size: Size) -> bool:
        """Whether a dim of this size may be padded: one whose size has no symbol (a
        padded `a` is `a + 2`, which the size model holds only as a symbol `a+2`,
        see `random_programs_mixed`)."""
        return not size[1]

    def op_pad(self) -> Value | None:
        x = self.operand(["f32", "f32", "i32", "f64"])
        if not self.static_axes(x):
            return None
        return self.pad(x, self.pick(self.static_axes(x)))

    def pad(self, x: Value, axis: int, *, others: bool = True) -> Value:
        """`x` padded by a constant along `axis` (of static size), and along other such
        axes too when `others` allows."""
        lows, highs, sizes = [], [], []
        for a, size in enumerate(x.sizes):
            lo = hi = 0
            if a == axis:
                lo, hi = self.between(0, 2), self.between(0, 2)
            elif others and self.paddable(size) and self.chance(20):
                lo, hi = self.between(0, 1), self.between(0, 1)
            lows.append(self.index_text(lo))
            highs.append(self.index_text(hi))
            sizes.append(padded_size(size, lo + hi))
        text = self.pick(PADDINGS[x.dtype])
        element = x.dtype
        name, cst = self.fresh(), self.fresh("pad")
        index_types = ", ".join(f"%j{a}: index" for a in range(x.rank))
        line = (
            f"{cst} = arith.constant {text} : {element}\n"
            f"{name} = tensor.pad {x.name} low[{', '.join(lows)}] high[{', '.join(highs)}] {{{{\n"
            f"^bb0({index_types}):\n"
            f"  tensor.yield {cst} : {element}\n"
            f"}}}} : {x.type} to {{r}}"
        )
        # a dim is static when its source dim and both its pads are literals
        dims = []
        for a, size in enumerate(sizes):
            literal = x.dims[a].static and lows[a].isdigit() and highs[a].isdigit()
            dims.append(Dim(size, literal))
        padding = abs(float(text))
        return self.value(
            line,
            name,
            dims,
            x.dtype,
            exact=x.exact,
            bound=max(x.bound, padding),
            frac=max(x.frac, 1),
            nonfinite=x.nonfinite,
        )

    def op_reverse(self) -> Value | None:
        x = self.operand(["f32", "f32", "i32", "i1", "f16"], min_rank=1)
        axes = sorted(self.draw(st.sets(st.integers(0, x.rank - 1), min_size=1)))
        name = self.fresh()
        line = (
            f"{name} = tensor.reverse {x.name} {{{{axes = [{', '.join(map(str, axes))}]}}}} : {{r}}"
        )
        return self.layout(line, name, x, x.dims)

    def slice_of(self, n: int) -> tuple[int, int, int]:
        """An offset, a count (maybe 0 or 1) and a stride of a slice of n elements."""
        offset = self.between(0, max(n - 1, 0))
        stride = self.pick([1, 2, 1, 3])
        most = (n - 1 - offset) // stride + 1 if n else 0
        return offset, self.between(0, most), stride

    def slice_lists(
        self, x: Value, axes: Sequence[int]
    ) -> tuple[list[str], list[str], list[str], list[Size]]:
        """Offsets, sizes and strides (as written) of a slice of `x` that is strided
        along `axes` (of static size) and whole along the others, and its sizes."""
        offsets, counts, strides, sizes = [], [], [], []
        for a, (d, size) in enumerate(zip(x.dims, x.sizes, strict=True)):
            if a in axes:
                offset, count, stride = self.slice_of(size[0])
                offsets.append(self.index_text(offset))
                counts.append(self.index_text(count))
                strides.append(str(stride))
                sizes.append((count, ()))
            else:
                offsets.append("0")
                counts.append(d.text if d.static else self.index(size))
                strides.append("1")
                sizes.append(size)
        return offsets, counts, strides, sizes

    def op_strided_slice(self) -> Value | None:
        x = self.operand(["f32", "f32", "i32", "i1", "f64"], min_rank=1)
        axes = self.static_axes(x)
        if not axes:
            return None
        return self.strided_slice(x, [self.pick(axes)])

    def strided_slice(self, x: Value, axes: Sequence[int]) -> Value:
        offsets, counts, strides, sizes = self.slice_lists(x, axes)
        name = self.fresh()
        lists = " ".join(f"[{', '.join(parts)}]" for parts in (offsets, counts, strides))
        line = f"{name} = tensor.extract_slice {x.name}{lists} : {x.type} to {{r}}"
        literal = all(c.isdigit() for c in counts)
        return self.moved(line, name, x, sizes, literal or self.chance(50))

    def op_insert_slice(self) -> Value | None:
        """A copy of a destination with a strided slice of it replaced by a source (a
        visible value of the slice's shape or a new argument)."""
        dest = self.operand(["f32", "f32", "i32", "f64"], min_rank=1)
        axes = self.static_axes(dest)
        if not axes:
            return None
        chosen = sorted(self.draw(st.sets(st.sampled_from(axes), min_size=1)))
        offsets, counts, strides, sizes = self.slice_lists(dest, chosen)
        same = [v for v in self.visible() if v.dtype == dest.dtype and v.sizes == tuple(sizes)]
        if same and self.chance(50):
            source = self.pick(same)
        else:
            source = self.argument(
                [Dim(s, not s[1] and self.chance(70)) for s in sizes], dest.dtype
            )
        # the verifier compares the source's static sizes with the literal ones
        for d, c in zip(source.dims, counts, strict=True):
            if d.static and c.isdigit() and int(c) != d.size[0]:
                return None
        name = self.fresh()
        lists = " ".join(f"[{', '.join(parts)}]" for parts in (offsets, counts, strides))
        return self.joined(
            f"{name} = tensor.insert_slice {source.name} into {dest.name}{lists} "
            f": {source.type} into {dest.type}",
            name,
            dest.dims,
            dest.dtype,
            (dest, source),
        )

    # -- top_k and cumprod -------------------------------------------------------------

    def op_top_k(self) -> Value | None:
        """The k largest of exact values along a static axis (ties: the lower index
        first) and their indices."""
        x = self.operand(["f32", "i32", "f64"], exact=True, min_rank=1)
        axes = [a for a in self.static_axes(x) if x.dims[a].static]
        if not axes or x.nonfinite or not x.exact:
            return None
        axis = self.pick(axes)
        n = x.sizes[axis][0]
        return self.top_k(x, axis, self.between(0, n), float(n))

    def top_k(self, x: Value, axis: int, k: int, bound: float) -> Value:
        """`top_k` of `x` along `axis`: its values, or (half the time) its indices,
        below `bound`."""
        sizes = [(k, ()) if a == axis else s for a, s in enumerate(x.sizes)]
        dims = [Dim(s, x.dims[a].static or a == axis) for a, s in enumerate(sizes)]
        values, indices = self.fresh(), self.fresh()
        attrs = f"k = {k}" + (f", axis = {axis}" if self.chance(60) or axis != x.rank - 1 else "")
        line = (
            f"{values}, {indices} = tensor.top_k {x.name} {{{{{attrs}}}}} : {x.type} -> "
            f"{{r}}, {type_text(dims, 'i32')}"
        )
        v = self.layout(line, values, x, dims)
        i = Value(indices, tuple(dims), "i32", True, bound, 0)
        self.scopes[-1].append(i)
        self.shapes.append(i.sizes)
        return v if self.chance(50) else i

    def op_cumprod(self) -> Value | None:
        """`cumprod` along an axis: exact along a short static one, else of tanh(x)."""
        x = self.operand(["f32", "f64", "i32"], min_rank=1)
        axis = self.between(0, x.rank - 1)
        n, symbols = x.sizes[axis]
        if not symbols and n <= 4 and x.bound <= 4:
            exact, bound, frac = x.exact, max(x.bound, 1.0) ** n, x.frac * n
        elif x.dtype == "i32":
            return None
        else:
            x = self.unary("tanh", x, exact=False, bound=1.0)
            exact, bound, frac = False, 1.0, 0
        if x.nonfinite or not self.allowed(x.dtype, exact, bound):
            return None
        attrs = self.scan_attrs(axis, 30)
        name = self.fresh()
        line = f"{name} = tensor.cumprod {x.name} {{{{{attrs}}}}} : {x.type} -> {{r}}"
        return self.value(line, name, x.dims, x.dtype, exact=exact, bound=bound, frac=frac)

    # -- concats of pieces that differ along the axis ----------------------------------

    def op_mixed_concat(self) -> Value | None:
        x = self.operand(["f32", "f32", "i32", "f64"], min_rank=1)
        axis = self.between(0, x.rank - 1)
        symbols = x.sizes[axis][1]
        pieces = [x]
        for _ in range(self.between(1, 3)):
            piece = self.piece(x, axis) if not symbols else None
            if piece is None:
                dims = list(x.dims)
                if self.chance(30):
                    n = (self.pick([1, 2, 3]), symbols)
                    dims[axis] = Dim(n, not symbols and self.chance(60))
                piece = self.argument(dims, x.dtype)
            pieces.append(piece)
        if self.chance(50):
            pieces.reverse()
        size = (sum(p.sizes[axis][0] for p in pieces), symbols)
        sizes = [size if a == axis else s for a, s in enumerate(x.sizes)]
        result = self.concatenated(pieces, axis, sizes)
        if self.chance(40):  # a piece read by another kernel too
            other = self.pick(pieces)
            self.unary("neg", other, exact=other.exact, bound=other.bound, frac=other.frac)
        return result

    def piece(self, x: Value, axis: int) -> Value | None:
        """A piece to concat with `x` along `axis` (of static size): `x`'s sizes, but
        any size along the axis."""
        how = self.pick(["reduce", "reduce-expand", "broadcast", "pad", "slice", "take"])
        if how == "pad":
            return self.pad(x, axis, others=False)
        if how == "slice":
            return self.strided_slice(x, [axis])
        if how == "take" and x.sizes[axis][0] >= 1:
            idx = self.in_range([Dim((self.between(1, 3), ()), True)], x.sizes[axis][0])
            sizes = [idx.sizes[0] if a == axis else s for a, s in enumerate(x.sizes)]
            name = self.fresh()
            line = (
                f"{name} = tensor.take {x.name}, {idx.name} dim({axis}) "
                f": ({x.type}, {idx.type}) -> {{r}}"
            )
            return self.layout(line, name, x, self.result_dims(sizes))
        if how == "take":
            return None
        unit = self.unit_reduction(x, axis, expand=how == "reduce-expand")
        if unit is None or how != "broadcast":
            return unit
        entries = [str(d.size[0]) if d.static else self.index(d.size) for d in unit.dims]
        n = self.between(0, 3)
        entries[axis] = str(n)
        dims = [Dim((n, ()), True) if a == axis else d for a, d in enumerate(unit.dims)]
        name = self.fresh()
        targets = ", ".join(entries)
        line = f"{name} = tensor.broadcast_to {unit.name} to [{targets}] : {unit.type} -> {{r}}"
        return self.layout(line, name, unit, dims)

    def unit_reduction(self, x: Value, axis: int, *, expand: bool) -> Value | None:
        """`x` summed (or its max) over `axis`, the axis kept as a static unit dim: by
        `keepdims`, or dropped and put back by `expand_shape`."""
        n = x.sizes[axis][0]
        kind = self.pick(["sum", "max"] if n >= 1 else ["sum"])
        bound = x.bound * n if kind == "sum" else x.bound
        if x.nonfinite or not self.allowed(x.dtype, x.exact, bound) or bound > ELEMENTS_CAP**2:
            return None
        dims = [Dim(ONE, True) if a == axis else d for a, d in enumerate(x.dims)]
        keep = not expand or x.rank < 2
        name = self.fresh()
        attrs = f"axes = [{axis}]" + (", keepdims = true" if keep else "")
        kept = [d for a, d in enumerate(dims) if keep or a != axis]
        line = f"{name} = tensor.reduce_{kind} {x.name} {{{{{attrs}}}}} : {x.type} -> {{r}}"
        exact = x.exact and (x.dtype not in FLOATS or kind == "max" or bound < 2.0**20)
        reduced = self.value(line, name, kept, x.dtype, exact=exact, bound=bound, frac=x.frac)
        if keep:
            return reduced
        # each remaining dim is a group of its own; the unit dim joins its neighbour's
        groups = [[a if a < axis else a + 1] for a in range(x.rank - 1)]
        groups[max(axis - 1, 0)].append(axis)
        groups[max(axis - 1, 0)].sort()
        entries = [str(d.size[0]) if d.static else self.index(d.size) for d in dims]
        name = self.fresh()
        line = (
            f"{name} = tensor.expand_shape {reduced.name} {groups_text(groups)} output_shape "
            f"[{', '.join(entries)}] : {reduced.type} into {{r}}"
        )
        return self.layout(line, name, reduced, dims)


def move_programs_strategy(max_steps: int = 7) -> st.SearchStrategy[RandomProgram]:
    return programs_made_by(MovesGenerator, max_steps)


def move_cases(max_steps: int = 7) -> st.SearchStrategy[Case]:
    """`random_programs.cases()` with programs of `MovesGenerator`."""
    return cases(made_by=move_programs_strategy(max_steps))
