"""Random programs over symbolic axes, with the regions an input program may hold.

`SymbolicGenerator` extends `random_programs_mixed.MixedGenerator` (same sizes model,
exactness bookkeeping and comparison) with:

- pads of dims whose size is a product (`2*a` of a concat of a value with itself,
  `a*b` of a collapse): the padded size is the symbol `2*a+3`, which
  `random_programs.evaluate` derives from `a`'s; and pads of those pads;
- index ops along a symbolic axis, whose indices stay in range for every size: a
  permutation of the axis (an `iota` along it, maybe reversed) for `take`,
  `take_along_axis` and `scatter_add`, and strided slices of a doubled axis
  (every other element of `2*a`) read by `extract_slice` and written by
  `insert_slice`; an elementwise producer before them and a consumer after;
- `tensor.stack` and `tensor.choice` written in the program: elementwise kernels
  (`tensor.fusion`) of arguments, a choice's first region fusing what its second
  computes in two kernels (maybe stacked), its conditions equalities and bounds
  of the arguments' dims that may or may not hold at run time;
- `scf.while` loops whose trip count comes from data (a counter below an i32
  argument, 0 to 4 trips), whose bodies hold elementwise chains and a reshape
  there and back (`PASSED_REDUCTIONS`: the condition passes on a reduction too);
  and `scf.if`s (and loops) whose results nothing reads;
- `argmax` and `argmin` of floored values (many ties), reductions over several
  axes, symbolic ones too.

`symbolic_cases()` is `random_programs.cases()` drawn with this generator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from hypothesis import strategies as st
from random_programs import (
    ELEMENTS_CAP,
    FLOATS,
    ONE,
    Case,
    Dim,
    RandomProgram,
    Size,
    Value,
    cases,
    groups_text,
    programs_made_by,
)
from random_programs_mixed import MixedGenerator

CARRIED_TYPES = ["f32", "f32", "i32", "f16", "f64", "i1"]
"""Element types of the values loops and branches carry."""


class SymbolicGenerator(MixedGenerator):
    """`MixedGenerator` with the shapes and regions of the module docstring."""

    KINDS = (
        MixedGenerator.KINDS
        + ["product_pad"] * 6
        + ["symbolic_index"] * 8
        + ["written_choice"] * 3
        + ["written_stack"] * 2
        + ["while"] * 3
        + ["dead_region"] * 2
        + ["argmax_ties"] * 2
        + ["reduce"] * 3
    )

    PASSED_REDUCTIONS = 0
    """How often (percent) a loop's condition passes on a reduction of a carried value."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.dead: set[str] = set()

    def paddable(self, size: Size) -> bool:
        """Any size but a product holding a padded symbol (`2*(a+2)`)."""
        n, symbols = size
        return (n == 1 and len(symbols) <= 1) or not any("+" in s for s in symbols)

    # -- sizes that are products, and their pads ----------------------------------------

    def doubled(self, x: Value, axis: int) -> Value:
        """`x` concatenated with a value of its shape along `axis`: twice as long."""
        same = [v for v in self.visible() if v.dtype == x.dtype and v.sizes == x.sizes]
        other = self.pick(same) if same and self.chance(50) else self.argument(x.dims, x.dtype)
        sizes = list(x.sizes)
        sizes[axis] = (2 * sizes[axis][0], sizes[axis][1])
        return self.concatenated([x, other], axis, sizes)

    def collapsed_pair(self, x: Value, axis: int) -> Value:
        """`x` with `axis` and the next one collapsed into one (a product)."""
        groups = [[a] for a in range(axis)] + [[axis, axis + 1]]
        groups += [[a] for a in range(axis + 2, x.rank)]
        return self.collapsed(x, groups)

    def op_product_pad(self) -> Value | None:
        """A pad (or a pad of a pad) of a dim whose size is a product of symbols."""
        x = self.operand(["f32", "f32", "i32", "f64", "f16"], min_rank=1)
        products = [a for a, (n, s) in enumerate(x.sizes) if (n > 1 and s) or len(s) > 1]
        products = [a for a in products if self.paddable(x.sizes[a])]
        if not products:
            symbolic = [a for a, (_, s) in enumerate(x.sizes) if s and "+" not in s[0]]
            if symbolic and self.chance(60):
                axis = self.pick(symbolic)
                x = self.doubled(x, axis)
            elif x.rank >= 2 and all(x.sizes[a][1] for a in (0, 1)):
                axis = 0
                x = self.collapsed_pair(x, 0)
            else:
                return None
            if not self.paddable(x.sizes[axis]):
                return None
            products = [axis]
        axis = self.pick(products)
        x = self.pad(x, axis)
        if self.chance(40):
            x = self.pad(x, axis, others=False)
        return x

    # -- index ops along a symbolic axis --------------------------------------------------

    def iota_along(self, axis: int, dims: Sequence[Dim]) -> Value:
        """An i32 `iota` along `axis` of these dims (`x`'s, or 1s beside the axis),
        reversed half the time: a permutation of the axis's positions."""
        sizes = "".join(f" {self.index(d.size)}," for d in dims if not d.static).rstrip(",")
        name = self.fresh()
        iota = self.value(
            f"{name} = tensor.iota dim({axis}){sizes} : {{r}}",
            name,
            dims,
            "i32",
            exact=True,
            bound=ELEMENTS_CAP,
        )
        if self.chance(50):
            name = self.fresh()
            line = f"{name} = tensor.reverse {iota.name} {{{{axes = [{axis}]}}}} : {{r}}"
            iota = self.layout(line, name, iota, iota.dims)
        return iota

    def op_symbolic_index(self) -> Value | None:
        """An index op along a symbolic axis, maybe after an elementwise producer."""
        x = self.operand(["f32", "f32", "i32", "f64", "f16", "i1"], min_rank=1)
        symbolic = [a for a, (_, s) in enumerate(x.sizes) if s]
        if not symbolic:
            return None
        axis = self.pick(symbolic)
        if x.dtype not in ("i1",) and self.chance(50):  # a producer to fuse with
            x = self.unary(self.pick(["neg", "abs"]), x, exact=x.exact, bound=x.bound, frac=x.frac)
        how = self.pick(["take", "take_along", "scatter", "strided", "insert"])
        if how in ("take", "take_along"):
            if how == "take":
                idx = self.iota_along(0, [Dim(x.sizes[axis], False)])
            else:
                dims = [d if a == axis or not self.chance(40) else Dim(ONE, True)
                        for a, d in enumerate(x.dims)]  # fmt: skip
                idx = self.iota_along(axis, dims)
            op = "take" if how == "take" else "take_along_axis"
            name = self.fresh()
            line = (
                f"{name} = tensor.{op} {x.name}, {idx.name} dim({axis}) "
                f": ({x.type}, {idx.type}) -> {{r}}"
            )
            return self.layout(line, name, x, self.result_dims(x.sizes))
        if how == "scatter":
            return self.symbolic_scatter(x, axis)
        if x.sizes[axis][0] * 2 > 64 or not self.paddable(x.sizes[axis]):
            return None
        if how == "strided":
            return self.every_other(self.doubled(x, axis), axis, x.sizes[axis])
        return self.insert_every_other(x, axis)

    def symbolic_scatter(self, base: Value, axis: int) -> Value | None:
        """`base` plus updates of its shape scattered by a permutation of `axis`."""
        if base.dtype not in ("f32", "i32", "f64") or base.nonfinite:
            return None
        idx = self.iota_along(0, [Dim(base.sizes[axis], False)])
        upd = self.updates(base.dims, base.dtype)
        bound = base.bound + upd.bound
        if not self.allowed(base.dtype, base.exact, bound) or upd.nonfinite:
            return None
        exact, frac = base.exact and upd.exact, max(base.frac, upd.frac)
        return self.scattered(base, idx, upd, axis, exact, bound, frac)

    def slice_text(self, x: Value, axis: int, half: Size) -> tuple[str, list[Size]]:
        """The lists of every other element of `x` along `axis` (of size 2 * `half`),
        from 0 or 1, whole along the other axes."""
        offsets, counts, strides = [], [], []
        for a, size in enumerate(x.sizes):
            along = a == axis
            # (from 1 only where the half is never empty: 1 is past the end of no elements)
            from_one = along and not half[1] and half[0] >= 1 and self.chance(50)
            offsets.append("1" if from_one else "0")
            count = half if along else size
            counts.append(str(count[0]) if not count[1] else self.index(count))
            strides.append("2" if along else "1")
        sizes = [half if a == axis else s for a, s in enumerate(x.sizes)]
        return " ".join(f"[{', '.join(p)}]" for p in (offsets, counts, strides)), sizes

    def every_other(self, x: Value, axis: int, half: Size) -> Value:
        lists, sizes = self.slice_text(x, axis, half)
        name = self.fresh()
        line = f"{name} = tensor.extract_slice {x.name}{lists} : {x.type} to {{r}}"
        return self.moved(line, name, x, sizes, False)

    def insert_every_other(self, x: Value, axis: int) -> Value:
        """`x` written into every other element of a destination twice as long."""
        dest = self.doubled(self.argument(x.dims, x.dtype), axis)
        lists, _ = self.slice_text(dest, axis, x.sizes[axis])
        name = self.fresh()
        return self.joined(
            f"{name} = tensor.insert_slice {x.name} into {dest.name}{lists} "
            f": {x.type} into {dest.type}",
            name,
            dest.dims,
            dest.dtype,
            (dest, x),
        )

    # -- kernels, choices and stacks written in the program --------------------------------

    def kernel(self, inputs: Sequence[Value], ops: Sequence[str]) -> tuple[list[str], list[Value]]:
        """The lines of a `tensor.fusion` applying `ops` to each input, and its results
        (not emitted: a choice or a stack holds it)."""
        args = [self.fresh("b") for _ in inputs]
        body, finals, outputs = [], [], []
        for x, current in zip(inputs, args, strict=True):
            bound, exact = x.bound, x.exact
            for op in ops:
                step = self.fresh("e")
                if op == "double":
                    operands = f"{current}, {current} : ({x.type}, {x.type}) -> {x.type}"
                    body.append(f"{step} = tensor.add {operands}")
                    bound *= 2
                else:
                    body.append(f"{step} = tensor.{op} {current} : {x.type}")
                    if op == "tanh":
                        bound, exact = 1.0, False
                current = step
            finals.append(current)
            outputs.append(replace(x, name=self.fresh(), exact=exact, bound=bound))
        types = ", ".join(v.type for v in inputs)
        arrow = types if len(inputs) == 1 else f"({types})"
        ins = ", ".join(v.name for v in inputs)
        block = ", ".join(f"{b}: {v.type}" for b, v in zip(args, inputs, strict=True))
        lines = [f"{', '.join(v.name for v in outputs)} = tensor.fusion vector ({ins}) "
                 f": ({types}) -> {arrow} {{", f"^bb0({block}):"]  # fmt: skip
        lines += ["  " + line for line in body]
        lines += [f"  tensor.yield {', '.join(finals)} : {types}", "}"]
        return lines, outputs

    def kernel_inputs(self) -> list[Value] | None:
        """Two arguments of a float type and one rank whose `?` dims may differ (a
        symbol, or 1 behind a `?`), so that a kernel's parts align when they agree."""
        dtype = self.pick(["f32", "f32", "f64"])
        first = self.fresh_argument(dtype, min_rank=1)
        other = [Dim((1, (s,)), False) for s in self.symbols] + [Dim(ONE, False)]
        dims = [self.pick(other) if not d.static and self.chance(60) else d for d in first.dims]
        return [first, self.argument(dims, dtype)]

    def kernel_ops(self) -> list[str]:
        return [self.pick(["neg", "abs", "tanh", "double"]) for _ in range(self.between(1, 3))]

    def conditions(self, inputs: Sequence[Value]) -> str:
        """What makes the inputs' shapes equal (`arg1_0 == arg0_0`: the symbol of axis 0
        of `%arg1` is `arg1_0`; the compiler knows no two arguments' dims equal),
        which may or may not hold at run time, and maybe a bound of a dim more."""
        x, y = inputs
        found = []
        for a, (dx, dy) in enumerate(zip(x.dims, y.dims, strict=True)):
            if dx.static and dy.static:
                continue
            left = f"{y.name[1:]}_{a}" if not dy.static else str(dy.size[0])
            right = f"{x.name[1:]}_{a}" if not dx.static else str(dx.size[0])
            if left != right:
                found.append(f"{left} == {right}")
        dynamic = [a for a, d in enumerate(x.dims) if not d.static]
        if dynamic and (not found or self.chance(30)):
            found.append(f"{x.name[1:]}_{self.pick(dynamic)} <= {self.pick([0, 3, 512])}")
        return "[" + ", ".join(found) + "]"

    def op_written_stack(self) -> Value | None:
        """Two elementwise kernels in a `tensor.stack`, both results returned."""
        inputs = self.kernel_inputs()
        if inputs is None:
            return None
        lines, outputs = self.stacked(inputs, self.kernel_ops())
        for line in lines:
            self.emit(line)
        return self.finish_group(outputs)

    def stacked(self, inputs: Sequence[Value], ops: Sequence[str]) -> tuple[list[str], list[Value]]:
        """The lines of a stack of one kernel per input, and its results."""
        body, made = self.kernels_apart(inputs, ops)
        names = [self.fresh("s") for _ in made]
        types = ", ".join(v.type for v in made)
        mode = self.pick(["parallel", "sequence"])
        lines = [f"{', '.join(names)} = tensor.stack {mode} -> ({types}) {{"]
        lines += [*region(body, made, types), "}"]
        return lines, [replace(v, name=n) for v, n in zip(made, names, strict=True)]

    def kernels_apart(
        self, inputs: Sequence[Value], ops: Sequence[str]
    ) -> tuple[list[str], list[Value]]:
        """The lines of one kernel per input, and their results."""
        lines: list[str] = []
        made: list[Value] = []
        for x in inputs:
            kernel_lines, (out,) = self.kernel([x], ops)
            lines += kernel_lines
            made.append(out)
        return lines, made

    def op_written_choice(self) -> Value | None:
        """A choice between one kernel of two inputs and two kernels (maybe stacked)."""
        inputs = self.kernel_inputs()
        if inputs is None:
            return None
        ops = self.kernel_ops()
        fused_lines, fused = self.kernel(inputs, ops)
        if self.chance(50):
            apart_lines, apart = self.stacked(inputs, ops)
        else:
            apart_lines, apart = self.kernels_apart(inputs, ops)
        names = [self.fresh("c") for _ in inputs]
        types = ", ".join(v.type for v in inputs)
        lines = [f"{', '.join(names)} = tensor.choice {self.conditions(inputs)} -> ({types}) {{"]
        lines += [*region(fused_lines, fused, types), "} else {"]
        lines += [*region(apart_lines, apart, types), "}"]
        self.emit_all(lines)
        return self.finish_group([replace(v, name=n) for v, n in zip(fused, names, strict=True)])

    def finish_group(self, outputs: Sequence[Value]) -> Value:
        """Record a choice's or stack's results (the function returns them all)."""
        for v in outputs:
            exact = v.exact and (v.dtype not in FLOATS or v.bound < 2.0**10)
            self.scopes[-1].append(
                Value(v.name, v.dims, v.dtype, exact, v.bound, v.frac, v.nonfinite)
            )
            self.shapes.append(v.sizes)
        self.results.extend(self.scopes[-1][-len(outputs) :])
        return self.scopes[-1][-1]

    # -- loops steered by data, regions whose results nothing reads ------------------------

    def op_while(self) -> Value | None:
        """`scf.while` carrying values of unchanged shape and an i32 counter, running
        while the counter is below a 0-d i32 argument (-4 to 4: 0 to 4 trips).

        The body is as `op_for`'s (carried floats inexact, yields squashed to the
        seed's bound), with a reshape or a concat of a carried value undone again.
        """
        seeds = [self.operand(CARRIED_TYPES) for _ in range(self.pick([1, 1, 2]))]
        limit = self.argument([], "i32")
        start = self.const_scalar("i32", 0)
        carried = self.carried(seeds)
        count, before_count = self.fresh("n"), self.fresh("n")
        types = ", ".join([*(s.type for s in seeds), start.type])
        before = [self.fresh("w") for _ in seeds]
        reduction = self.passed_reduction(carried[0], before[0])
        passed = [reduction] if reduction else []  # (its line, name in `before`, value in `do`)
        extra = [value for *_, value in passed]
        passed_types = ", ".join([*(s.type for s in seeds), *(v.type for v in extra), start.type])
        trips, most, keep_going = self.fresh("t"), self.fresh("t"), self.fresh("p")
        forwarded = [*before, *(name for _, name, _ in passed), before_count]
        condition = [
            *(line for line, _, _ in passed),
            f"{trips} = tensor.extract {before_count}[] : tensor<i32>",
            f"{most} = tensor.extract {limit.name}[] : tensor<i32>",
            f"{keep_going} = arith.cmpi slt, {trips}, {most} : i32",
            f"scf.condition({keep_going}) {', '.join(forwarded)} : {passed_types}",
        ]
        self.depth += 1
        self.scopes.append([*carried, *extra])
        self.blocks.append([])
        for _ in range(self.pick([1, 2, 3])):
            self.step()
        self.undone(self.pick(carried))
        yields = self.loop_yields(seeds, carried)
        one = self.const_scalar("i32", 1)
        nxt = self.fresh("n")
        self.emit(
            f"{nxt} = tensor.add {count}, {one.name} : (tensor<i32>, tensor<i32>) -> tensor<i32>"
        )
        self.emit(f"scf.yield {', '.join([*(v.name for v in yields), nxt])} : {types}")
        self.scopes.pop()
        body = self.blocks.pop()
        self.depth -= 1
        made = [*carried, *extra]
        names = [self.fresh() for _ in made]
        inits = ", ".join(
            f"{b} = {s.name}" for b, s in zip([*before, before_count], [*seeds, start], strict=True)
        )
        block = ", ".join(f"{c.name}: {c.type}" for c in made) + f", {count}: tensor<i32>"
        results = ", ".join([*names, self.fresh("trips")])
        self.emit(f"{results} = scf.while ({inits}) : ({types}) -> ({passed_types}) {{")
        self.emit_all(["  " + line for line in condition])
        self.emit_all(["} do {", f"^bb0({block}):", *("  " + line for line in body), "}"])
        values = [replace(c, name=name) for name, c in zip(names, made, strict=True)]
        self.scopes[-1].extend(values)
        return values[-1]

    def passed_reduction(self, x: Value, name: str) -> tuple[str, str, Value] | None:
        """Maybe the line of a `reduce_max` of a float carried value (`name` in the
        `before` block) that its `scf.condition` passes on beside it, the name of the
        reduction there, and the value the `do` block and the results have of it (a
        shape of its own)."""
        if x.dtype not in ("f32", "f64") or not x.rank or not self.PASSED_REDUCTIONS:
            return None  # (no draw: the other generators' programs stay as they were)
        if not self.chance(self.PASSED_REDUCTIONS):
            return None
        axes = sorted(self.draw(st.sets(st.integers(0, x.rank - 1), min_size=1)))
        keepdims = self.chance(50)
        sizes = [
            ONE if a in axes else s for a, s in enumerate(x.sizes) if keepdims or a not in axes
        ]
        empty = any(x.sizes[a][1] or x.sizes[a][0] == 0 for a in axes)
        made = Value(self.fresh("m"), tuple(self.result_dims(sizes)), x.dtype, False, x.bound,
                     x.frac, x.nonfinite or empty)  # fmt: skip
        attrs = f"axes = [{', '.join(map(str, axes))}]" + (", keepdims = true" if keepdims else "")
        reduced = self.fresh("m")
        line = f"{reduced} = tensor.reduce_max {name} {{{attrs}}} : {x.type} -> {made.type}"
        self.shapes.append(made.sizes)
        return line, reduced, made

    def emit_all(self, lines: Sequence[str]) -> None:
        for line in lines:
            self.emit(line)

    def undone(self, x: Value) -> None:
        """A reshape of `x` into one dim and back, or a concat of `x` with a value of
        its shape whose every other element is taken back (a loop body's shape ops)."""
        symbolic = [a for a, (n, s) in enumerate(x.sizes) if s and n == 1 and "+" not in s[0]]
        if symbolic and self.chance(50):
            axis = self.pick(symbolic)
            self.every_other(self.doubled(x, axis), axis, x.sizes[axis])
            return
        if x.rank < 2:
            return
        flat = self.collapsed_pair(x, 0)
        entries = [str(d.size[0]) if d.static else self.index(d.size) for d in x.dims[:2]]
        groups = [[0, 1]] + [[a] for a in range(2, x.rank)]
        entries += [str(d.size[0]) if d.static else self.index(d.size) for d in x.dims[2:]]
        name = self.fresh()
        self.layout(
            f"{name} = tensor.expand_shape {flat.name} {groups_text(groups)} output_shape "
            f"[{', '.join(entries)}] : {flat.type} into {{r}}",
            name,
            x,
            x.dims,
        )

    def op_dead_region(self) -> Value | None:
        """An `scf.if` (or a loop) whose results nothing reads."""
        made = self.op_if() if self.chance(70) else self.op_while()
        if made is None:
            return None
        header = next(
            line
            for line in reversed(self.blocks[-1])
            if not line.startswith(" ") and (" = scf.if " in line or " = scf.while " in line)
        )
        dead = set(header.split(" = ")[0].split(", "))
        self.scopes[-1] = [v for v in self.scopes[-1] if v.name not in dead]
        return made

    # -- ties --------------------------------------------------------------------------

    def op_argmax_ties(self) -> Value | None:
        """`argmax` or `argmin` of floored values (many ties: the first index wins)
        along a never empty axis, maybe after a reduction over other axes."""
        x = self.operand(["f32", "f64", "f16"], exact=True, min_rank=1)
        axes = [a for a, (n, symbols) in enumerate(x.sizes) if not symbols and n >= 1]
        if not axes or x.nonfinite:
            return None
        x = self.unary("floor", x, exact=True, bound=x.bound + 1)
        return self.arg_extremum(x, axes, 40)


def region(body: Sequence[str], results: Sequence[Value], types: str) -> list[str]:
    """A region's lines, indented, ending with the `tensor.yield` of `results`."""
    names = ", ".join(v.name for v in results)
    return [*("  " + line for line in body), f"  tensor.yield {names} : {types}"]


def symbolic_programs_strategy(max_steps: int = 12) -> st.SearchStrategy[RandomProgram]:
    return programs_made_by(SymbolicGenerator, max_steps)


def symbolic_cases(max_steps: int = 12) -> st.SearchStrategy[Case]:
    """`random_programs.cases()` with programs of `SymbolicGenerator`."""
    return cases(made_by=symbolic_programs_strategy(max_steps))
