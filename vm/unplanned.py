"""The unplanned executor: a launch without a tile plan, for a specialization's first.

A new shape usually costs more to prepare than to run: planning tile classes
(`planner.py`) and binding closures (`planned.py`) make repeated launches fast, but on a
stream of ever-new shapes, DVM's case, each would be paid once and never repaid. So a
specialization's first launch, when small, runs one Python function generated once per
program (`Launcher`): the grid's tiles are nested `for` loops, a bytecode loop is a
`for` over its trip count, the registers are locals, and each instruction is a few lines
that take its operands' shapes from the registers' current arrays (a tile's from numpy
slicing, which clips tails exactly as the planner's tile classes do), check what the
shape rules check (`shapes.py`), and call the numpy function the bound closure calls
(`kernels.py`). A later launch at the shape is planned and bound (`launch`), as a JIT
compiles a function once it is hot.

What stays safe: the layout checks (registers inside local memory, views inside their
arguments) and the work bound run before any instruction, as for a planned launch; every
check the shape rules make is made here before the instruction runs, and fails with the
same BytecodeError reason and offset, but a broadcast that the tile shapes the program
fixes show cannot fail (`known_shapes.py`). The generated source is made only from
validated table indices, slot indices and loop levels: the numpy functions, scalars and
dtypes are passed in by name, never printed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

from dvm.vm.generated import define, program_origin
from dvm.vm.grouped_matmul import grouped_mma
from dvm.vm.isa import (
    ACCUMULATE,
    EXCLUSIVE,
    KEEPDIMS,
    TRANSPOSE_A,
    TRANSPOSE_B,
    Cat,
    DType,
    ExtentKind,
    ReduceKind,
    ScalarTag,
)
from dvm.vm.kernels import (
    ACC_UFUNCS,
    EXACT,
    REDUCE_UFUNCS,
    WHOLE_SUM_BLAS,
    blas_row_sum,
    blas_whole_sum,
    converter,
    counter_pos,
    for_store,
    iota_base,
    matmul_sum_axis,
    middle_sum_operands,
    mma_acc,
    ones,
    ones_vector,
    out_by_position,
    reduce_identity,
    reduce_short_axis,
    scan_into,
    scatter_add_into,
    select_into,
    select_overlapping,
    sum_of_row_sums,
    take_into,
    typed_scalar,
)
from dvm.vm.known_shapes import KnownShapes
from dvm.vm.memory import Kept
from dvm.vm.narrow import mma_widened, reduce_widened, widened
from dvm.vm.plan import Specialization
from dvm.vm.product_sums import plan_for, product_sum_into, program_products
from dvm.vm.program import Extent, Program, Scalar
from dvm.vm.shapes import (
    ACC_MISMATCH,
    MISMATCH,
    SCAN_CARRY_MISMATCH,
    UNWRITTEN,
    broadcast_shapes,
    grouped_mma_mismatch,
)
from dvm.vm.static import (
    NO_DESTINATION,
    static_info,
    unplanned_fusions,
    written_to_tiles_only,
)
from dvm.vm.tanh_plus_one import program_pairs, tanh_plus_one_into
from dvm.vm.top_k import write_top_k
from dvm.vm.unplanned_calls import (
    BROADCASTS,
    broadcast_pair,
    copied,
    fail,
    fits,
    new_view,
    scratch,
    whole_array,
)
from dvm.vm.work_bound import passes, work_bound

# --------------------------------------------------------------------------
# What depends only on the program: generated once

SLICED_ONES = 4096
"""Rows up to this long are summed with a slice of a column of ones the launch function
holds (the length of the buffer `kernels.ones` views at least)."""


LaunchFn = Callable[
    [Specialization, Sequence[np.ndarray], Kept, list[int], bool, Iterable[int]], None
]
"""launch(spec, args, kept, grid extents, alias, first axis's tiles) (see `Launcher`)."""


class Generated(NamedTuple):
    """A program's unplanned launch function and its work bound."""

    launch: LaunchFn
    bound: Callable[[Sequence[int]], tuple[list[int], int] | None]
    """(slot values) -> the grid's extents and the launch's work bound (`work_bound`), or
    None when an extent is negative."""
    mapped: tuple[tuple[int, ...], tuple[int, ...]]
    """For a program with an mma, the registers a launch maps the memory of, when it
    copies its loads and when it reads them in place (`alias`): not those only fused
    producers write (`static.written_to_tiles_only`), nor, in place, the alias
    registers (see `launch._reach_registers`)."""


def generated(p: Program) -> Generated:
    """The program's unplanned launch function and work bound, made once."""
    st = static_info(p)
    made = st.unplanned
    if not made:
        launcher = Launcher(p)
        unwritten = written_to_tiles_only(p.code, launcher.fused)
        copying = tuple(r for r in range(len(p.registers)) if r not in unwritten)
        in_place = tuple(r for r in copying if r not in st.alias_regs)
        made.append(Generated(launcher.compile(), work_bound(p), (copying, in_place)))
    return made[0]


# --------------------------------------------------------------------------
# The launch function's source


class Launcher:
    """Writes and compiles a program's unplanned launch function, `launch(S, X, kept, e,
    fw, first)`: the specialization, the arguments, what is kept beside the local memory,
    the grid's extents, whether loads may read in place and the first axis's tiles to run.

    In the function, register r is the local `r<r>` (None: unwritten in this tile),
    a view's whole array of global memory is `G<v>` (made before the grid runs), a
    grid axis's counter `g<a>` and a loop level's `j<level>`, a tile-size slot `T<i>`.
    A tile of a view is a slice of its `G` by those counters and tile sizes. The slow
    paths are calls: `_new`, a register's view for a shape not met before (`_fits`,
    its checks without the view, for a result written into its store's tile), `_pair`,
    two shapes broadcast for the first time, and `_fail`, every error, which names the
    instruction's byte offset; so is a load's copy, `_copied` (`unplanned_calls.py`).

    The validator fixed each register's dtype and rank, so those are constants here;
    a register read where it is certainly written (earlier in the tile, outside any
    loop that may not run) is not tested for being unwritten."""

    def __init__(self, p: Program) -> None:
        self.p = p
        static = static_info(p)
        self.alias_regs = static.alias_regs
        self.end_of, self.depth = static.loops.end_of, static.loops.depth_at
        self.fused, self.forwarded = unplanned_fusions(p.code, self.depth)
        self.products = program_products(static)
        self.tanhs = {k for k in program_pairs(static) if k + 1 not in self.fused}
        self.known = KnownShapes(p)
        self.lines: list[str] = []
        self.pre: list[str] = []
        """Preamble lines (once per launch) that instructions ask for."""
        self.typed: dict[tuple[int, str], str] = {}
        """The local holding a slot's value typed for a dtype, by (slot, the dtype's str):
        a scalar used by several instructions is typed once per launch."""
        self.written: set[int] = set()
        self.owned: set[int] = set()
        """Registers whose local certainly holds a view of their own memory (not of
        global memory, as an alias load or a fused store leaves it)."""
        self.names: dict[str, Any] = {
            "__builtins__": {"range": range, "str": str, "min": min, "max": max, "len": len},
            "_whole": whole_array,
            "_fail": fail,
            "_new": new_view,
            "_fits": fits,
            "_copied": copied,
            "_scratch": scratch,
            "_bcast": BROADCASTS,
            "_pair": broadcast_pair,
            "_broadcast_shapes": broadcast_shapes,
            "_matmul": np.matmul,
            "_ones": ones_vector,
            "_middle": middle_sum_operands,
            "_row_sums": sum_of_row_sums,
            "_typed": typed_scalar,
            "_array": np.array,
            "_mma_acc": mma_acc,
            "_mma_wide": mma_widened,
            "_reduce_wide": reduce_widened,
            "_gmma": grouped_mma,
            "_gmma_mismatch": grouped_mma_mismatch,
            "_plan": plan_for,
            "_short": reduce_short_axis,
            "_product_sum": product_sum_into,
        }

    def compile(self) -> LaunchFn:
        origin = program_origin("unplanned launch", self.p.name)
        return define(self.source(), "launch", self.names, origin)

    def source(self) -> str:
        p = self.p
        pad = "    "
        for axis in range(len(p.grid)):
            self.emit(pad, f"for g{axis} in {'first' if axis == 0 else f'range(e[{axis}])'}:")
            pad += "    "
        if p.registers:
            self.emit(pad, " = ".join([*(f"r{r}" for r in range(len(p.registers))), "None"]))
        self.body(0, len(p.code), pad)
        tiles = sorted({d.tile for v in p.views for d in v.dims if d.index and d.tile is not None})
        return "\n".join(
            [
                "def launch(S, X, kept, e, fw, first):",
                "    s, V, K, W = S.slots, kept.views, S.registers, S.views",
                *self.whole_lines(),
                *[f"    T{i} = s[{i}]" for i in tiles],
                *self.pre,
                *self.lines,
                "",
            ]
        )

    def whole_lines(self) -> list[str]:
        """The preamble lines making each view's whole array `G<v>` (`_whole`)."""
        return [f"    G{v} = _whole(W[{v}], X[{view.arg}])" for v, view in enumerate(self.p.views)]

    def emit(self, pad: str, *lines: str) -> None:
        self.lines.extend(pad + line for line in lines)

    def body(self, start: int, end: int, pad: str) -> None:
        self.emit(pad, "pass")  # a loop may have an empty body
        k = start
        while k < end:
            ins = self.p.code[k]
            cat = ins.op.cat
            if k in self.products:
                _product_sum(self, k, pad)
                k += 2
                continue
            if cat is Cat.LOOP:
                n, level = ins.operands[0], 3 + self.depth[k]
                self.nonneg(k, n, "negative loop count", pad)
                self.emit(pad, f"for j{level} in range({passes(self.p, k)}):")
                before = set(self.written)  # the loop may not run
                self.owned = set()  # (nor may it be known what its last pass left)
                self.known.forget()
                self.body(k + 1, self.end_of[k], pad + "    ")
                self.written, self.owned = before, set()
                self.known.forget()
                k = self.end_of[k] + 1
                continue
            _WRITERS[cat](self, k, ins.operands, pad)
            self.known.wrote(cat, None if cat in NO_DESTINATION else ins.operands[0])
            if cat not in NO_DESTINATION:
                d = ins.operands[0]
                self.written.add(d)
                aliased = cat is Cat.LOAD and (d in self.alias_regs or k in self.forwarded)
                if aliased or k in self.fused:
                    self.owned.discard(d)
                else:
                    self.owned.add(d)
            k += 2 if k in self.fused or k in self.tanhs else 1  # (a fused store, the add)

    # -- pieces of inline code --------------------------------------------------------

    def counter(self, source: int) -> str:
        """The local holding an index source's counter."""
        n = counter_pos(source)
        return f"g{n}" if n < 3 else f"j{n}"

    def tile(self, v: int) -> str:
        """View v's current tile: its whole array sliced by the tiling counters."""
        keys = [":"] * len(self.p.views[v].dims)
        for d, dim in enumerate(self.p.views[v].dims):
            if dim.index and dim.tile is not None:
                i = self.counter(dim.index)
                keys[d] = f"{i} * T{dim.tile}:({i} + 1) * T{dim.tile}"
        while keys and keys[-1] == ":":
            keys.pop()
        return f"G{v}[{', '.join(keys)}]" if keys else f"G{v}"

    def extent(self, v: int, d: int) -> str:
        """Dim d of view v's current tile, without cutting it: a tail tile is clipped
        (the same arithmetic as numpy's slicing and the planner's tile classes)."""
        dim = self.p.views[v].dims[d]
        if not dim.index or dim.tile is None:
            return f"G{v}.shape[{d}]"
        i, size = self.counter(dim.index), f"T{dim.tile}"
        return f"max(0, min({size}, G{v}.shape[{d}] - {i} * {size}))"

    def read(self, k: int, r: int, pad: str) -> str:
        """Register r's local, tested for being written where it may not be."""
        if r not in self.written:
            self.emit(pad, f"if r{r} is None: raise _fail(S, {k}, {UNWRITTEN!r}, 'r{r}')")
            self.written.add(r)  # (it raised otherwise)
        return f"r{r}"

    def shape(self, k: int, extents: Sequence[Extent], pad: str) -> str:
        """A SHAPE operand as a tuple expression (its slots tested for being negative)."""
        out = []
        for e in extents:
            if e.kind is ExtentKind.SLOT:
                i = e.index
                self.nonneg(k, i, "negative extent", pad)
                out.append(f"s[{i}]")
            elif e.kind is ExtentKind.VIEW_DIM:
                out.append(self.extent(e.index, e.dim))
            else:
                out.append(f"{self.read(k, e.index, pad)}.shape[{e.dim}]")
        return _tuple(out)

    def nonneg(self, k: int, n: int, reason: str, pad: str) -> None:
        """Slot n may not be negative where instruction k uses it."""
        self.emit(pad, f"if s[{n}] < 0: raise _fail(S, {k}, {reason!r}, f's{n} = {{s[{n}]}}')")

    def broadcast(
        self, k: int, shapes: Sequence[str], ranks: Sequence[int], into: str, pad: str
    ) -> None:
        """`into` = the shapes `shapes` (of these ranks) broadcast, or op k's error. Two of
        one rank, the common case, are memoized (tiles repeat their shapes): the memo is
        read inline, and only a pair not met before calls `_pair`."""
        if len(shapes) != 2 or ranks[0] != ranks[1]:
            no = f"raise _fail(S, {k}, 'shapes do not broadcast', str({_tuple(shapes)}))"
            self.emit(pad, f"c = _broadcast_shapes([{', '.join(shapes)}])", f"if c is None: {no}")
            if into != "c":
                self.emit(pad, f"{into} = c")
        else:  # (a rank-0 pair's () is false: `_pair` answers it too)
            pair = f"({shapes[0]}, {shapes[1]})"
            self.emit(pad, f"{into} = _bcast.get(key := {pair}) or _pair(S, {k}, key)")

    def register(self, k: int, d: int, pad: str) -> None:
        """`o` = register d viewed with shape `sh` (its checks when new)."""
        self.emit(
            pad,
            f"o = V.get((K[{d}], {self.p.registers[d].dtype.np.num}, sh))",
            f"if o is None: o = _new(S, kept, {k}, {d}, sh, {self.dtype(d)})",
        )

    def in_place(self, k: int, d: int, r: int) -> bool:
        """Whether elementwise op k may write register d's current view in place of a
        view of shape `sh`: its operand r is d, whose local is its own view."""
        return d == r and d in self.owned and k not in self.fused

    def elementwise(self, k: int, d: int, r: int, fn: str, operands: list[str], pad: str) -> None:
        """`fn(*operands)` into register d, shaped as register r: in place when it may."""
        if self.in_place(k, d, r):
            self.emit(pad, self.into(fn, operands, f"r{r}"))
            return
        self.emit(pad, f"sh = r{r}.shape")
        self.result(k, d, pad)
        self.emit(pad, self.into(fn, operands, "o"), f"r{d} = o")

    def into(self, fn: str, operands: list[str], out: str) -> str:
        """The call of the constant `fn` on `operands` into `out`: `out` by position
        where the function takes it so (`kernels.out_by_position`)."""
        args = ", ".join(operands)
        if out_by_position(self.names[fn], len(operands)):
            return f"{fn}({args}, {out})"
        return f"{fn}({args}, out={out})"

    def result(self, k: int, d: int, pad: str) -> None:
        """`o` = where elementwise op k writes: register d viewed with shape `sh`, or the
        tile of the store after it when that store is fused (the shapes must agree; the
        result must fit the register either way, as the planner requires: known when
        the register has a view of that shape, else checked once per shape by `_fits`,
        which makes no view of it)."""
        if k not in self.fused:
            self.register(k, d, pad)
        else:
            if "    Z = kept.fitted" not in self.pre:
                self.pre.append("    Z = kept.fitted")
            view = f"(K[{d}], {self.p.registers[d].dtype.np.num}, sh)"
            self.emit(
                pad,
                f"if {view} not in V and (K[{d}], sh) not in Z: _fits(S, kept, {k}, {d}, sh)",
                f"o = {self.tile(self.fused[k])}",
                "if o.shape != sh:",
                f"    raise _fail(S, {k + 1}, {MISMATCH!r}, f'r{d} {{sh}} vs {{o.shape}}')",
            )

    def rank(self, r: int) -> int:
        """Register r's rank (fixed by the validator)."""
        return len(self.p.registers[r].shape)

    def constant(self, name: str, value: Any) -> str:
        self.names[name] = value
        return name

    def dtype(self, r: int) -> str:
        return self.constant(f"D{r}", self.p.registers[r].dtype.np)

    def scalar(self, k: int, sc: Scalar, r: int) -> str:
        """A SCALAR operand typed as register r: an immediate once, a slot's value once
        per launch (one local for every use of that slot as that dtype)."""
        dtype = self.p.registers[r].dtype.np
        if sc.tag is ScalarTag.IMM:
            return self.constant(f"C{k}", typed_scalar(sc.value, dtype))
        slot = int(sc.value)
        name = self.typed.setdefault((slot, dtype.str), f"C{k}")
        if name == f"C{k}":
            typed = f"_typed(s[{slot}], {self.dtype(r)})"
            if dtype.kind == "f" and dtype.itemsize >= 4:  # what `typed_scalar` makes then,
                # without its memo (each new value a miss: the new shape's cold Python)
                exact = f"-{EXACT} < s[{slot}] < {EXACT}"
                typed = f"_array(s[{slot}], {self.dtype(r)}) if {exact} else {typed}"
            self.pre.append(f"    C{k} = {typed}")
        return name


def _tuple(items: Sequence[str]) -> str:
    """A tuple display of these expressions (of any length: `(a, )`, `()`)."""
    return f"({''.join(f'{x}, ' for x in items)})"


# --------------------------------------------------------------------------
# Each category's lines: the shape rules' checks (shapes.py), then the numpy calls
# of the bound closures (kernels.py). Each writes its result into `o` and then
# its destination's local.


Writer = Callable[[Launcher, int, tuple[Any, ...], str], None]


def _load(g: Launcher, k: int, ops: tuple[Any, ...], pad: str) -> None:
    d, v = ops
    g.known.made = g.known.view_tile(v)
    copied = f"_copied(S, kept, {k}, {d}, x, {g.dtype(d)})"
    if d in g.alias_regs or k in g.forwarded:  # read in place until overwritten
        g.emit(pad, f"x = {g.tile(v)}", f"r{d} = x if fw else {copied}")
    else:
        g.emit(pad, f"x = {g.tile(v)}", f"r{d} = {copied}")


def _store(g: Launcher, k: int, ops: tuple[Any, ...], pad: str) -> None:
    v, r = ops[0], ops[1]
    x = g.read(k, r, pad)
    g.emit(
        pad,
        f"w = {g.tile(v)}",
        f"if {x}.shape != w.shape:",
        f"    raise _fail(S, {k}, {MISMATCH!r}, f'r{r} {{{x}.shape}} vs {{w.shape}}')",
    )
    if len(ops) == 2:
        g.emit(pad, f"w[...] = {x}")
    else:
        g.emit(pad, g.into(g.constant(f"F{k}", ACC_UFUNCS[ops[2]]), ["w", x], "w"))


def _copy(g: Launcher, k: int, ops: tuple[Any, ...], pad: str) -> None:
    """copy and convert (numpy assignment casts, and copies first if the two overlap)."""
    d, r = ops[0], ops[1]
    x = g.read(k, r, pad)
    g.known.made = g.known.of.get(r)
    g.emit(pad, f"sh = {x}.shape")
    g.register(k, d, pad)
    g.emit(pad, f"o[...] = {x}", f"r{d} = o")


def _convert(g: Launcher, k: int, ops: tuple[Any, ...], pad: str) -> None:
    """convert: as copy, or its kernel where numpy's assignment does not compute it."""
    d, r = ops[0], ops[1]
    kernel = converter(g.p.registers[r].dtype, g.p.registers[d].dtype)
    if kernel is None:
        _copy(g, k, ops, pad)
        return
    x = g.read(k, r, pad)
    g.known.made = g.known.of.get(r)
    g.emit(pad, f"sh = {x}.shape")
    g.register(k, d, pad)
    g.emit(pad, g.into(g.constant(f"F{k}", kernel), [x], "o"), f"r{d} = o")


def _broadcast(g: Launcher, k: int, ops: tuple[Any, ...], pad: str) -> None:
    d, r, shape = ops
    x = g.read(k, r, pad)
    g.emit(pad, f"sh = {g.shape(k, shape, pad)}")
    g.known.made = to = g.known.extents(shape)
    if to is None or g.known.broadcast(g.known.of.get(r), to) != to:  # (else it cannot fail)
        g.broadcast(k, [f"{x}.shape", "sh"], [g.rank(r), len(shape)], "c", pad)
        detail = f"f'{{{x}.shape}} to {{sh}}'"
        g.emit(pad, f"if c != sh: raise _fail(S, {k}, 'shapes do not broadcast', {detail})")
    g.register(k, d, pad)
    g.emit(pad, f"o[...] = {x}", f"r{d} = o")


def _fill(g: Launcher, k: int, ops: tuple[Any, ...], pad: str) -> None:
    d, sc, shape = ops
    g.emit(pad, f"sh = {g.shape(k, shape, pad)}")
    g.known.made = g.known.extents(shape)
    g.register(k, d, pad)
    g.emit(pad, f"o[...] = {g.scalar(k, sc, d)}", f"r{d} = o")


def _select(g: Launcher, k: int, ops: tuple[Any, ...], pad: str) -> None:
    d, c, a, b = ops
    xs = [g.read(k, r, pad) for r in (c, a, b)]
    g.broadcast(k, [f"{x}.shape" for x in xs], [g.rank(r) for r in (c, a, b)], "sh", pad)
    g.register(k, d, pad)
    fn = select_overlapping if d in (c, a, b) else select_into
    g.emit(pad, f"{g.constant(f'F{k}', fn)}(o, {', '.join(xs)})", f"r{d} = o")


def _reduce(g: Launcher, k: int, ops: tuple[Any, ...], pad: str) -> None:
    """As a planned launch binds a reduce: a float sum over the last axis is a matrix-vector
    product with ones, one over every axis of a large tile the sum of such a product, one
    over a middle axis a batched one on a register (a view of global memory, from an
    alias or forwarded load, reduces with the ufunc: the same bits as a planned launch)."""
    d, r, kind, axes, flags = ops
    rank, keep = len(g.p.registers[r].shape), bool(flags & KEEPDIMS)
    reduced = tuple([i for i in range(rank) if axes >> i & 1])
    x = g.read(k, r, pad)
    g.known.made = g.known.reduced(g.known.of.get(r), axes, flags)
    g.emit(pad, f"q = {x}.shape", f"sh = {_reduced_shape(rank, axes, flags)}")
    if d == r:
        g.emit(pad, f"x = {x}.copy()")
        x = "x"
    g.register(k, d, pad)
    dtype = g.p.registers[d].dtype.np
    identity = g.constant(f"I{k}", reduce_identity(kind, dtype))
    fn = g.constant(f"F{k}", REDUCE_UFUNCS[kind])
    ufunc = f"{fn}.reduce({x}, axis={reduced}, out=o, keepdims={keep}, initial={identity})"
    middle = matmul_sum_axis(kind, axes, (0,) * rank, dtype)
    wide = widened(dtype)
    if wide is not None and kind in (ReduceKind.SUM, ReduceKind.PROD):
        acc = f"_scratch(kept, sh, {g.constant('WIDE', wide)})"
        init = g.constant(f"J{k}", reduce_identity(kind, wide))
        g.emit(pad, f"_reduce_wide({fn}, {x}, {reduced}, {keep}, {init}, o, {acc})")
    elif blas_row_sum(kind, axes, rank, dtype):
        # (a slice of ones kept for the program: a new row length calls no memo)
        column = g.constant(f"O{k}", ones((SLICED_ONES, 1) if keep else (SLICED_ONES,), dtype))
        sliced = (
            f"{column}[:q[-1]] if q[-1] <= {SLICED_ONES} else _ones(q[-1], {keep}, {g.dtype(d)})"
        )
        g.emit(pad, f"_matmul({x}, {sliced}, out=o)")
    elif blas_whole_sum(kind, axes, rank, dtype):
        rows = f"_scratch(kept, q[:-1], {g.dtype(d)})"
        g.emit(pad, f"if {x}.size >= {WHOLE_SUM_BLAS}: _row_sums({x}, {rows}, o)", f"else: {ufunc}")
    elif middle is not None:
        if "    L = kept.local" not in g.pre:
            g.pre.append("    L = kept.local")
        g.emit(pad, f"if {x}.base is L: _matmul(*_middle({x}, o, {middle}))", f"else: {ufunc}")
    elif kind in (ReduceKind.MAX, ReduceKind.MIN) and len(reduced) == 1:  # (`short_axis`)
        g.emit(pad, f"if not _short({fn}, {x}, {reduced[0]}, {keep}, o): {ufunc}")
    else:
        g.emit(pad, ufunc)
    g.emit(pad, f"r{d} = o")


def _reduced_shape(rank: int, axes: int, flags: int) -> str:
    """Python text: the shape a reduce over `axes` leaves of a source of shape `q`."""
    keep = bool(flags & KEEPDIMS)
    dims = [("1" if keep else "") if axes >> i & 1 else f"q[{i}]" for i in range(rank)]
    return _tuple([n for n in dims if n])


def _product_sum(g: Launcher, k: int, pad: str) -> None:
    """mul k and the reduce sum after it (`product_sums`): the mul's checks and its
    register's, then one matmul into the reduce's destination where the tile's shapes
    allow it (`plan_for`), else the two instructions."""
    d, a, b = g.p.code[k].operands
    s, _, _, axes, flags = g.p.code[k + 1].operands
    x, y = g.read(k, a, pad), g.read(k, b, pad)
    g.emit(pad, f"sh = {x}.shape")
    both = g.known.registers(a, b)
    if y != x and not g.known.is_shape_of(both, a):
        g.emit(pad, f"if sh != {y}.shape:")
        g.broadcast(k, ["sh", f"{y}.shape"], [g.rank(a), g.rank(b)], "sh", pad + "    ")
    g.register(k, d, pad)
    axis = axes.bit_length() - 1
    g.emit(pad, "p = o", f"m = _plan({x}.shape, {y}.shape, {axis})", "if m is None:")
    g.emit(pad + "    ", g.into(g.constant(f"F{k}", np.multiply), [x, y], "p"), f"r{d} = p")
    g.written.add(d)
    _reduce(g, k + 1, g.p.code[k + 1].operands, pad + "    ")
    g.emit(pad, "else:", "    q = sh", f"    sh = {_reduced_shape(g.rank(d), axes, flags)}")
    g.register(k + 1, s, pad + "    ")
    g.emit(pad, f"    _product_sum(m, {x}, {y}, o)", f"    r{s} = o")
    g.written.add(s)
    g.owned.discard(d)  # (unchanged where the matmul ran)
    g.owned.add(s)
    g.known.of.pop(d, None)
    g.known.made = g.known.reduced(both, axes, flags)
    g.known.wrote(Cat.REDUCE, s)


def _grouped_mma(g: Launcher, k: int, ops: tuple[Any, ...], pad: str) -> None:
    """The planner's checks, then `grouped_mma` with the row where the rows view's
    current tile starts."""
    d, ra, rb, rs, v = ops
    x, y, z = g.read(k, ra, pad), g.read(k, rb, pad), g.read(k, rs, pad)
    detail = f"f'{{{x}.shape}} @ {{{y}.shape}} in groups of {{{z}.shape}}'"
    g.emit(
        pad,
        f"m = _gmma_mismatch({x}.shape, {y}.shape, {z}.shape, {g.extent(v, 0)})",
        f"if m is not None: raise _fail(S, {k}, m, {detail})",
        f"sh = ({x}.shape[0], {y}.shape[2])",
    )
    g.result(k, d, pad)
    dim = g.p.views[v].dims[0]
    start = f"{g.counter(dim.index)} * T{dim.tile}" if dim.index and dim.tile is not None else "0"
    g.emit(pad, f"_gmma({x}, {y}, {z}, {start}, G{v}.shape[0], o)", f"r{d} = o")


def _mma(g: Launcher, k: int, ops: tuple[Any, ...], pad: str) -> None:
    """Its registers have rank 2 or 3 and its destination is neither input (the
    validator's rules). An accumulating mma reads its destination first, as the
    planner does, and multiplies into a scratch tile."""
    d, ra, rb, flags = ops
    acc = f"{g.read(k, d, pad)}.shape" if flags & ACCUMULATE else None
    x, y = g.read(k, ra, pad), g.read(k, rb, pad)
    g.emit(pad, f"sa, sb = {x}.shape, {y}.shape")
    if flags & TRANSPOSE_A:
        g.emit(pad, f"x = {x}.swapaxes(-1, -2)", "sa = x.shape")
        x = "x"
    if flags & TRANSPOSE_B:
        g.emit(pad, f"y = {y}.swapaxes(-1, -2)", "sb = y.shape")
        y = "y"
    detail = f"f'{{r{ra}.shape}} @ {{r{rb}.shape}}'"  # the registers, as the planner says
    g.emit(pad, f"if sa[-1] != sb[-2]: raise _fail(S, {k}, 'mma inner dims differ', {detail})")
    if len(g.p.registers[ra].shape) == len(g.p.registers[rb].shape) == 2:
        g.emit(pad, "sh = (sa[0], sb[1])")
    else:
        g.emit(pad, "b = sa[:-2]", "if b != sb[:-2]:")
        g.broadcast(k, ["b", "sb[:-2]"], [g.rank(ra) - 2, g.rank(rb) - 2], "b", pad + "    ")
        g.emit(pad, "sh = (*b, sa[-2], sb[-1])")
    if acc is None:
        g.result(k, d, pad)
    else:
        g.emit(
            pad,
            f"if {acc} != sh:",
            f"    raise _fail(S, {k}, {ACC_MISMATCH!r}, f'{{{acc}}} vs {{sh}}')",
        )
        g.register(k, d, pad)
    wide = widened(g.p.registers[d].dtype.np)
    if wide is not None:  # a float narrower than f32 is multiplied in f32
        temporary = f"_scratch(kept, ({x}.size + {y}.size + o.size, ), {g.constant('WIDE', wide)})"
        g.emit(pad, f"_mma_wide({x}, {y}, o, {acc is not None}, {temporary})")
    elif acc is None:
        g.emit(pad, f"_matmul({x}, {y}, out=o)")
    else:
        g.emit(pad, f"_mma_acc({x}, {y}, o, _scratch(kept, sh, {g.dtype(d)}))")
    g.emit(pad, f"r{d} = o")


def _unary(g: Launcher, k: int, ops: tuple[Any, ...], pad: str) -> None:
    d, r = ops
    x = g.read(k, r, pad)
    g.known.made = g.known.of.get(r)
    fn = tanh_plus_one_into if k in g.tanhs else g.p.code[k].op.kernel  # (`tanh_plus_one`)
    g.elementwise(k, d, r, g.constant(f"F{k}", for_store(fn, k in g.fused)), [x], pad)


def _binary(g: Launcher, k: int, ops: tuple[Any, ...], pad: str) -> None:
    """Register-register, register-scalar and scalar-register forms."""
    cat = g.p.code[k].op.cat
    d = ops[0]
    pos = 2 if cat is Cat.BINARY_SR else 1
    r = ops[pos]
    dtype = DType.from_numpy(g.p.registers[r].dtype.np)
    fn = g.constant(f"F{k}", g.p.code[k].op.kernel_for(dtype))
    x = g.read(k, r, pad)
    g.known.made = g.known.of.get(r)
    if cat is Cat.BINARY:
        y = g.read(k, ops[2], pad)
        operands, ranks = [x, y], [g.rank(r), g.rank(ops[2])]
        g.known.made = both = g.known.registers(r, ops[2])
        for shaped in (r, ops[2]):  # the shapes broadcast to one of them: no check
            if y != x and g.known.is_shape_of(both, shaped):
                g.elementwise(k, d, shaped, fn, operands, pad)
                return
        g.emit(pad, f"sh = {x}.shape")
        if y != x and g.in_place(k, d, r):  # in place where the shapes agree
            g.emit(pad, f"if sh == {y}.shape: o = {x}", "else:")
            g.broadcast(k, ["sh", f"{y}.shape"], ranks, "sh", pad + "    ")
            g.register(k, d, pad + "    ")
            g.emit(pad, g.into(fn, operands, "o"), f"r{d} = o")
            return
        if y != x:  # (one register's shape always agrees with itself)
            g.emit(pad, f"if sh != {y}.shape:")
            g.broadcast(k, ["sh", f"{y}.shape"], ranks, "sh", pad + "    ")
    else:
        sc = g.scalar(k, ops[3 - pos], r)
        operands = [x, sc] if cat is Cat.BINARY_RS else [sc, x]
        g.elementwise(k, d, r, fn, operands, pad)
        return
    g.result(k, d, pad)
    g.emit(pad, g.into(fn, operands, "o"), f"r{d} = o")


def _iota(g: Launcher, k: int, ops: tuple[Any, ...], pad: str) -> None:
    """The tile's extents of the view; its start along the axis from the counter."""
    d, v, axes = ops
    axis = axes.bit_length() - 1
    dim = g.p.views[v].dims[axis]
    rank = len(g.p.views[v].dims)
    g.emit(pad, f"sh = {_tuple([g.extent(v, i) for i in range(rank)])}")
    g.register(k, d, pad)
    tiled = dim.index and dim.tile is not None
    start = f" + {g.counter(dim.index)} * T{dim.tile}" if tiled else ""
    g.emit(pad, f"o[...] = {g.constant('_iota_base', iota_base)}(sh, {axis}){start}", f"r{d} = o")


def _take(g: Launcher, k: int, ops: tuple[Any, ...], pad: str) -> None:
    """The view's tile, its last dim the indexed one; the indices broadcast to the rest."""
    d, v, r = ops
    x = g.read(k, r, pad)
    g.emit(pad, f"w = {g.tile(v)}", "sh = w.shape[:-1]")
    g.broadcast(k, [f"{x}.shape", "sh"], [g.rank(r), g.rank(d)], "c", pad)
    detail = f"f'{{{x}.shape}} to {{sh}}'"
    g.emit(pad, f"if c != sh: raise _fail(S, {k}, 'shapes do not broadcast', {detail})")
    g.register(k, d, pad)
    g.emit(pad, f"{g.constant('_take_into', take_into)}(o, w, {x})", f"r{d} = o")


def _scan(g: Launcher, k: int, ops: tuple[Any, ...], pad: str) -> None:
    """As a planned launch binds a scan: scan_into dst, the carry register in place."""
    d, r, c, kind, axes, flags = ops
    x, carry = g.read(k, r, pad), g.read(k, c, pad)
    axis = axes.bit_length() - 1
    g.emit(
        pad,
        f"if {carry}.shape != {x}.shape[:{axis}] + (1,) + {x}.shape[{axis + 1}:]:",
        f"    raise _fail(S, {k}, {SCAN_CARRY_MISMATCH!r}, f'{{{carry}.shape}} vs {{{x}.shape}}')",
    )
    if d == r:
        g.emit(pad, f"x = {x}.copy()")
        x = "x"
    g.emit(pad, f"sh = {x}.shape")
    g.register(k, d, pad)
    fn, ufunc = g.constant("_scan_into", scan_into), g.constant(f"F{k}", REDUCE_UFUNCS[kind])
    exclusive = bool(flags & EXCLUSIVE)
    g.emit(pad, f"{fn}({ufunc}, {x}, {carry}, {axis}, {exclusive}, o)", f"r{d} = o")


def _scatter_add(g: Launcher, k: int, ops: tuple[Any, ...], pad: str) -> None:
    """The updates added at the indices into the view's tile, unless they do not fit it."""
    x, idx = g.read(k, ops[1], pad), g.read(k, ops[2], pad)
    fn = g.constant("_scatter_add_into", scatter_add_into)
    g.emit(pad, f"m = {fn}({g.tile(ops[0])}, {x}, {idx})", f"if m: raise _fail(S, {k}, *m)")


def _nothing(g: Launcher, k: int, ops: tuple[Any, ...], pad: str) -> None:
    """nop."""


_WRITERS: dict[Cat, Writer] = {
    Cat.NOP: _nothing,
    Cat.LOAD: _load,
    Cat.STORE: _store,
    Cat.STORE_ACC: _store,
    Cat.COPY: _copy,
    Cat.CONVERT: _convert,
    Cat.BROADCAST: _broadcast,
    Cat.FILL: _fill,
    Cat.SELECT: _select,
    Cat.REDUCE: _reduce,
    Cat.MMA: _mma,
    Cat.GROUPED_MMA: _grouped_mma,
    Cat.UNARY: _unary,
    Cat.BINARY: _binary,
    Cat.BINARY_RS: _binary,
    Cat.BINARY_SR: _binary,
    Cat.IOTA: _iota,
    Cat.TAKE: _take,
    Cat.SCAN: _scan,
    Cat.SCATTER_ADD: _scatter_add,
    Cat.TOP_K: write_top_k,
}
