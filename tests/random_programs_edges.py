"""Random programs at the edges of the other generators: repeated indices on
symbolic axes, scans and arg-reductions on axes that may be 1, choices of any ops.

`EdgeGenerator` extends `random_programs_symbolic.SymbolicGenerator` (same sizes
model, exactness bookkeeping and comparison) with:

- index ops along a symbolic axis whose indices repeat: an `iota` along the axis
  halved (`0 0 1 1 ...`) or folded (`min(i, n-1-i)`: `0 1 .. 1 0`), so in range for
  every size, 0 included; read by `take` or `take_along_axis`, or scattered into by
  `scatter_add` (each element gains at most two updates);
- `argmax`, `argmin`, `cumsum` and `cumprod` along axes that are never empty but
  may be 1 at run time (a `?` of size 1, a padded symbol `a+1`), and `top_k` along
  a padded symbol (`k` at most its padding);
- `tensor.choice` written in the program whose regions hold plain ops of any kind
  (reductions, matmuls, index ops, pads...), the second region a renamed copy of
  the first, maybe inside another choice; its conditions bounds and equalities
  of the arguments' dims that may or may not hold;
- layout ops (`reverse`, `concat`, a pad, a strided slice) of a broadcast result,
  whose `?` dims may be 1 at run time;
- chains of converts through f16, bf16, i8, i32 and i1 with an op at each level,
  back to the starting type (exact where the values fit every type);
- `scf.while` loops whose `scf.condition` passes on, beside the carried values, a
  `reduce_max` of one (a shape of its own) to the `do` block and the results.

`edge_cases()` is `random_programs.cases()` drawn with this generator.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from hypothesis import strategies as st
from random_programs import (
    ELEMENTS_CAP,
    ONE,
    Case,
    Dim,
    RandomProgram,
    Value,
    cases,
    groups_text,
    programs_made_by,
)
from random_programs_symbolic import SymbolicGenerator, region

CONVERT_LEVELS = ["f16", "bf16", "i8", "i32", "i1"]
"""The element types a convert chain passes through."""
REGION_KINDS = {"if", "for", "while", "dead_region", "written_choice", "written_stack"}
REGION_KINDS |= {"choice_of_ops"}
"""The kinds of steps that make regions (not drawn inside a choice's region)."""


class EdgeGenerator(SymbolicGenerator):
    """`SymbolicGenerator` with the programs of the module docstring."""

    KINDS = (
        SymbolicGenerator.KINDS
        + ["repeated_index"] * 8
        + ["unit_scan"] * 5
        + ["choice_of_ops"] * 5
        + ["broadcast_layout"] * 4
        + ["convert_chain"] * 4
        + ["while"] * 3
    )
    PASSED_REDUCTIONS = 50

    # -- index ops with repeated indices on a symbolic axis ----------------------------

    def op_repeated_index(self) -> Value | None:
        """`take`, `take_along_axis` or `scatter_add` along a symbolic axis by indices
        that repeat (see `repeated_indices`)."""
        x = self.operand(["f32", "f32", "i32", "f64", "f16"], min_rank=1)
        symbolic = [a for a, (_, s) in enumerate(x.sizes) if s]
        if not symbolic:
            return None
        axis = self.pick(symbolic)
        idx = self.repeated_indices(Dim(x.sizes[axis], False))
        how = self.pick(["take", "take_along", "scatter"])
        if how == "scatter":
            if x.dtype not in ("f32", "i32", "f64") or x.nonfinite:
                return None
            upd = self.updates(list(x.dims), x.dtype)
            bound = x.bound + 2 * upd.bound
            if upd.nonfinite or not self.allowed(x.dtype, x.exact and upd.exact, bound):
                return None
            frac = max(x.frac, upd.frac)
            return self.scattered(x, idx, upd, axis, x.exact and upd.exact, bound, frac)
        if how == "take_along":
            if x.rank > 1:
                idx = self.expanded_around(idx, axis, x.rank)
            op = "take_along_axis"
        else:
            op = "take"
        name = self.fresh()
        sizes = (
            [*x.sizes[:axis], *idx.sizes, *x.sizes[axis + 1 :]] if op == "take" else list(x.sizes)
        )
        line = (
            f"{name} = tensor.{op} {x.name}, {idx.name} dim({axis}) "
            f": ({x.type}, {idx.type}) -> {{r}}"
        )
        return self.layout(line, name, x, self.result_dims(sizes))

    def repeated_indices(self, length: Dim) -> Value:
        """1-d i32 indices into an axis of `length`, as many as it has, each in range
        and most repeated: `iota / 2`, or `min(iota, reverse(iota))`."""
        iota = self.iota_along(0, [length])
        if self.chance(50):
            two = self.const_scalar("i32", 2)
            return self.binary("div", iota, two, exact=True, bound=ELEMENTS_CAP)
        name = self.fresh()
        line = f"{name} = tensor.reverse {iota.name} {{{{axes = [0]}}}} : {{r}}"
        back = self.layout(line, name, iota, iota.dims)
        return self.binary("min", iota, back, exact=True, bound=ELEMENTS_CAP)

    def expanded_around(self, idx: Value, axis: int, rank: int) -> Value:
        """1-d `idx` with unit dims around it, as the `axis` of a rank-`rank` value."""
        dims = [Dim(ONE, True)] * axis + list(idx.dims) + [Dim(ONE, True)] * (rank - axis - 1)
        entries = ", ".join(str(d.size[0]) if d.static else self.index(d.size) for d in dims)
        name = self.fresh()
        line = (
            f"{name} = tensor.expand_shape {idx.name} {groups_text([list(range(rank))])} "
            f"output_shape [{entries}] : {idx.type} into {{r}}"
        )
        return self.layout(line, name, idx, dims)

    # -- scans and arg-reductions along axes that may be 1 ------------------------------

    def op_unit_scan(self) -> Value | None:
        """`argmax`/`argmin`, `cumsum`/`cumprod` or `top_k` along an axis that is never
        empty and may be 1 at run time: a `?` of size 1 or a padded symbol."""
        x = self.operand(["f32", "f64", "i32"], exact=True, min_rank=1)
        if x.nonfinite:
            return None
        axes = [a for a, s in enumerate(x.sizes) if s == ONE or "+" in "".join(s[1])]
        symbolic = [a for a, (n, s) in enumerate(x.sizes) if n == 1 and len(s) == 1]
        if not axes and symbolic and self.paddable(x.sizes[symbolic[0]]):
            x = self.pad(x, self.pick(symbolic), others=False)  # (maybe by nothing)
            axes = [a for a, s in enumerate(x.sizes) if "+" in "".join(s[1])]
        if not axes:
            return None
        axis = self.pick(axes)
        how = self.pick(["arg", "cumsum", "cumprod", "top_k"])
        if how == "arg":
            found = self.arg_extremum(x, [axis], 40)
            self.scopes[-1][-1] = found = replace(found, bound=float(ELEMENTS_CAP))
            return found
        if how == "top_k":
            return self.padded_top_k(x, axis)
        bound = x.bound * ELEMENTS_CAP
        if how == "cumprod":  # of signs: the products stay in [-1, 1]
            x, bound = self.unary("sign", x, exact=True, bound=1.0), 1.0
        if not self.allowed(x.dtype, x.exact, bound):
            return None
        name = self.fresh()
        line = (
            f"{name} = tensor.{how} {x.name} {{{{{self.scan_attrs(axis, 40)}}}}} "
            f": {x.type} -> {{r}}"
        )
        return self.value(line, name, x.dims, x.dtype, exact=x.exact, bound=bound, frac=x.frac)

    def padded_top_k(self, x: Value, axis: int) -> Value | None:
        """`top_k` along a padded symbol `a+p`, `k` at most `p` (never too long)."""
        symbol = x.sizes[axis][1][0] if x.sizes[axis][1] else ""
        padding = int(symbol.partition("+")[2] or 0)
        if not padding:
            return None
        return self.top_k(x, axis, self.between(0, padding), float(ELEMENTS_CAP))

    # -- choices of plain ops ------------------------------------------------------------

    def op_choice_of_ops(self) -> Value | None:
        """A `tensor.choice` whose regions compute the same few steps of any ops (the
        second a renamed copy of the first), maybe nested in another such choice."""
        lines, results = self.choice_region(nest=self.chance(30))
        if not results:
            return None
        self.emit_all(lines)
        return self.finish_group(results)

    def choice_region(self, nest: bool) -> tuple[list[str], list[Value]]:
        """The lines of a choice of the steps drawn, and its results (not recorded)."""
        outside = {v.name for v in self.visible()}
        depth, kinds = self.depth, self.KINDS
        self.depth = self.MAX_DEPTH  # no regions in a choice but choices
        self.KINDS = [k for k in kinds if k not in REGION_KINDS]
        self.scopes.append([])
        self.blocks.append([])
        if nest:
            inner_lines, inner = self.choice_region(nest=False)
            self.emit_all(inner_lines)
            self.scopes[-1].extend(inner)
        for _ in range(self.between(1, 3)):
            self.step()
        made = [v for v in self.scopes.pop() if v.dtype in ("f32", "f64", "i32", "i1")]
        body = self.blocks.pop()
        self.depth, self.KINDS = depth, kinds
        if not made:
            return [], []
        chosen = [self.pick(made) for _ in range(self.pick([1, 1, 2]))]
        chosen = list({v.name: v for v in chosen}.values())
        outside |= {a.name for a in self.args}
        copy = renamed(body, outside, "_else")
        copied = [replace(v, name=v.name + "_else") for v in chosen]
        types = ", ".join(v.type for v in chosen)
        names = [self.fresh("c") for _ in chosen]
        lines = [f"{', '.join(names)} = tensor.choice {self.arg_conditions()} -> ({types}) {{"]
        lines += [*region(body, chosen, types), "} else {", *region(copy, copied, types), "}"]
        return lines, [replace(v, name=n) for v, n in zip(chosen, names, strict=True)]

    def arg_conditions(self) -> str:
        """Bounds and equalities of the arguments' `?` dims (`arg1_0 == arg0_1`)."""
        dynamic = [f"{a.name[1:]}_{i}" for a in self.args for i, d in enumerate(a.dims)
                   if not d.static]  # fmt: skip
        found = []
        for _ in range(self.between(1, 2) if dynamic else 0):
            left = self.pick(dynamic)
            if len(dynamic) > 1 and self.chance(50):
                right = self.pick([s for s in dynamic if s != left])
                found.append(f"{left} == {right}")
            else:
                found.append(f"{left} <= {self.pick([0, 1, 3, 64])}")
        return "[" + ", ".join(found) + "]"

    # -- layout ops of broadcast results ----------------------------------------------

    def op_broadcast_layout(self) -> Value | None:
        """A value broadcast with a partner (dims maybe 1 behind a `?`), then reversed,
        concatenated with itself, padded or sliced every other element."""
        x = self.operand(["f32", "f32", "i32", "f64"], min_rank=1)
        u = self.partner(x.sizes, x.dtype)
        bound = x.bound + u.bound
        if u.rank > x.rank or not self.allowed(x.dtype, x.exact and u.exact, bound):
            return None
        y = self.binary("add", x, u, exact=x.exact and u.exact, bound=bound,
                        frac=max(x.frac, u.frac))  # fmt: skip
        axis = self.between(0, y.rank - 1)
        how = self.pick(["reverse", "concat", "pad", "slice"])
        if how == "reverse":
            name = self.fresh()
            line = f"{name} = tensor.reverse {y.name} {{{{axes = [{axis}]}}}} : {{r}}"
            return self.layout(line, name, y, y.dims)
        if how == "concat":
            doubled = list(y.sizes)
            doubled[axis] = (2 * doubled[axis][0], doubled[axis][1])
            return self.concatenated([y, y], axis, doubled)
        if not self.paddable(y.sizes[axis]):
            return None
        if how == "pad":
            return self.pad(y, axis)
        if y.sizes[axis][0] * 2 > 64:
            return None
        return self.every_other(self.doubled(y, axis), axis, y.sizes[axis])

    # -- convert chains ------------------------------------------------------------------

    def op_convert_chain(self) -> Value | None:
        """An exact f32 value converted through some of f16, bf16, i8, i32 and i1 with
        an op at each level, then back: exact while every type holds the values."""
        x = self.operand(["f32", "f32", "f64"], exact=True)
        if x.nonfinite or x.bound > 60 or x.bound * 2.0**x.frac >= 2.0**7:
            return None
        levels = [self.pick(CONVERT_LEVELS) for _ in range(self.between(1, 3))]
        if sum(level in ("i8", "i32") for level in levels) > 1 and x.bound > 25:
            return None  # (each integer level doubles the values: they stay below 100)
        v, bound, frac = x, x.bound, x.frac
        for dtype in levels:
            if dtype in ("i8", "i32", "i1"):
                frac = 0  # truncated toward zero (i1: nonzero)
            bound = 1.0 if dtype == "i1" else bound
            v = self.retyped(v, dtype, bound=bound, frac=frac)
            if dtype in ("i8", "i32"):
                bound *= 2
                v = self.binary("add", v, v, exact=True, bound=bound)
            else:
                op = "logical_not" if dtype == "i1" else self.pick(["neg", "abs"])
                v = self.unary(op, v, exact=True, bound=bound, frac=frac)
        return self.retyped(v, x.dtype, exact=True, bound=bound, frac=frac)


def renamed(lines: Sequence[str], keep: set[str], suffix: str) -> list[str]:
    """`lines` with every `%name` not in `keep` given `suffix` (a region's copy)."""

    def rename(m: re.Match[str]) -> str:
        return m[0] if m[0] in keep else m[0] + suffix

    return [re.sub(r"%[A-Za-z_][\w]*", rename, line) for line in lines]


def edge_programs_strategy(max_steps: int = 12) -> st.SearchStrategy[RandomProgram]:
    return programs_made_by(EdgeGenerator, max_steps)


def edge_cases(max_steps: int = 12) -> st.SearchStrategy[Case]:
    """`random_programs.cases()` with programs of `EdgeGenerator`."""
    return cases(made_by=edge_programs_strategy(max_steps))
