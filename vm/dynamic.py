"""Tier 0: run a specialization's first launch without planning or binding.

A new shape usually costs more to prepare than to run: planning tile
classes (`specialize.py`) and binding closures (`interpreter.py`) make
repeated launches fast, but on a stream of ever-new shapes, DVM's case,
each would be paid once and never repaid. So a specialization's first
launch, when small, walks the instructions directly: each one takes its
operands' shapes from the registers' current shapes (load and store take
the tile's from numpy slicing, which clips tails exactly as the planner's
tile classes do), checks what the planner would check, and calls the same
numpy functions the bound closures call. A second launch at the shape
plans and binds (tier 1), as a JIT compiles a function once it is hot.

What stays safe: the layout checks (registers inside local memory, views
inside their arguments) and the work bound run before any instruction, as
for tier 1; every shape check the planner makes is made here before the
instruction runs, and fails with the same BytecodeError reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from dvm.vm.binary import layout
from dvm.vm.errors import BytecodeError
from dvm.vm.isa import Cat, DType, ExtentKind, ScalarTag
from dvm.vm.kernels import (
    ACC_UFUNCS,
    BASE_NAMES,
    REDUCE_UFUNCS,
    UNARY_FNS,
    binary_fn,
    blas_row_sum,
    counter_pos,
    fusable,
    global_view,
    matmul_sum_axis,
    middle_sum_operands,
    mma_acc,
    ones_vector,
    reduce_identity,
    select_into,
    select_overlapping,
    typed_scalar,
)
from dvm.vm.program import Instr, Program
from dvm.vm.specialize import (
    MAX_ARRAY_BYTES,
    Shape,
    Specialization,
    ViewPlan,
    broadcast_shapes,
    nominal_bytes,
    register_operands,
    static_info,
)

# --------------------------------------------------------------------------
# What depends only on the program: decoded once


class Step(NamedTuple):
    """One instruction, decoded for tier 0."""

    run: Callable[[Tier0, Step], None] | None
    """The step the launcher calls for it (None: written inline, see `_launcher`)."""
    ops: tuple[Any, ...]
    fn: Any
    """The numpy function (unary, binary, reduce, store_acc), else None."""
    end: int
    """For a loop: the index of its endloop."""
    level: int
    """For a loop: its counter's position in `Tier0.idx`."""
    store_to: int = -1
    """For a `fusable` op whose result only the store after it reads: that store's
    view, whose tile the op may write directly (as tier 1 does, see
    `interpreter.fused_stores`)."""
    forward: bool = False
    """For a load whose register is next overwritten in place: whether it may keep a view
    of the tile instead of copying it (see `interpreter.forwarded_loads`)."""
    scalar: Any = None
    """For a register-scalar op with an immediate: the scalar, typed once."""
    row_sum: bool = False
    """For a reduce: whether it is a float sum over the last axis (a matrix-vector product)."""
    axes: tuple[int, ...] = ()
    """For a reduce: the reduced axes."""


class Decoded(NamedTuple):
    steps: tuple[Step, ...]
    launch: Callable[[Tier0], None]
    """Runs every tile of a launch (see `_launcher`)."""
    dtypes: tuple[np.dtype, ...]
    """Per register, its dtype."""
    dtype_nums: tuple[int, ...]
    """Per register, its dtype's number: register views are cached by (offset, capacity,
    number, shape), which hashes faster than a dtype."""
    bound: Callable[[Sequence[int]], tuple[list[int], int] | None]
    """(slot values) -> the grid's extents and the launch's work bound (`_bound`), or None
    when an extent is negative."""


def decoded(p: Program) -> Decoded:
    """The program decoded for tier 0 (memoized in the program)."""
    got = p.cache.get("tier0")
    if got is None:
        static = static_info(p)
        ends, depth = static.loops.end_of, static.loops.depth_at
        steps = tuple(
            _step(ins, p, static.reg_dtypes, ends.get(k, -1), 3 + depth[k])
            for k, ins in enumerate(p.code)
        )
        steps = _with_fusions(p.code, depth, list(steps))
        nests: dict[tuple[int, ...], int] = {}
        trips: list[int] = []
        for ins in p.code:
            nests[tuple(trips)] = nests.get(tuple(trips), 0) + 1
            if ins.op.cat is Cat.LOOP:
                trips.append(ins.operands[0])
            elif ins.op.cat is Cat.ENDLOOP and trips:
                trips.pop()
        dtypes = tuple(static.reg_dtypes)
        nums = tuple(dt.num for dt in dtypes)
        nest_list = tuple((n, t) for t, n in nests.items())
        bound = _bound(p.grid, nest_list)
        got = Decoded(steps, _launcher(p, steps), dtypes, nums, bound)
        p.cache["tier0"] = got
    return got


def _bound(
    grid: Sequence[int], nests: Sequence[tuple[int, tuple[int, ...]]]
) -> Callable[[Sequence[int]], tuple[list[int], int] | None]:
    """Generate `bound(s)`: the grid's extents and the steps a launch takes (the
    instructions of every nest times its loops' trip counts, a negative count as 0, per
    tile), or None when an extent is negative. Made from validated slot indices only."""
    extents = [f"s[{g}]" for g in grid]
    per_tile = ["1"]
    for count, trips in nests:
        per_tile.append(" * ".join([str(count), *[f"_max(s[{t}], 0)" for t in trips]]))
    lines = [
        "def bound(s):",
        f"    e = [{', '.join(extents)}]",
        f"    if {' or '.join(f'{x} < 0' for x in extents) or 'False'}: return None",
        f"    return e, {' * '.join(extents) or '1'} * ({' + '.join(per_tile)})",
    ]
    namespace: dict[str, Any] = {"__builtins__": {}, "_max": max}
    exec(compile("\n".join(lines) + "\n", "<dvm bound>", "exec"), namespace)
    return namespace["bound"]


def _launcher(p: Program, steps: Sequence[Step]) -> Callable[[Tier0], None]:
    """One Python function that runs a whole launch: the grid's tiles as nested `for`
    loops, each instruction inline (see `_Launcher`) or, for the rarer categories, a
    call of its step with the step as a constant; a loop is a `for` over its trip count.

    The source is made only from validated table indices, slot indices and loop
    levels; the steps, numpy functions and scalars are passed in, never printed."""
    gen = _Launcher(p, steps)
    exec(compile(gen.source(), "<dvm tier 0>", "exec"), gen.names)
    return gen.names["launch"]


class _Launcher:
    """Writes the source of `_launcher`'s function.

    Registers live in the list `A` (`t.arr`, which the called steps read and write),
    a register's views in the dict `V` under (`K[r]`, dtype number, shape) as
    `Tier0.put` keeps them, each view's whole array of global memory in a local `G<v>`
    made before the grid runs, and each grid or loop counter in a local (`idx` too, for
    the called steps). A tile of a view is a slice of its `G` by those counters and the
    tile-size slots. The validator fixed each register's dtype and rank, so those are
    written as constants; a register read where it is certainly written (earlier in the
    tile, outside any loop that may not run) is not tested for being unwritten."""

    def __init__(self, p: Program, steps: Sequence[Step]) -> None:
        self.p, self.steps = p, steps
        self.alias_regs = static_info(p).alias_regs
        self.lines: list[str] = []
        self.pre: list[str] = []
        """Lines of the preamble, once per launch, that the ops ask for (`scalar`)."""
        self.written: set[int] = set()
        self.names: dict[str, Any] = {
            "__builtins__": {"range": range, "str": str},
            "_whole": _whole,
            "_bcast": _BROADCASTS,
            "_broadcast_of": broadcast_of,
            "_matmul": np.matmul,
            "_ones": ones_vector,
            "_middle": middle_sum_operands,
            "_typed": typed_scalar,
        }

    def source(self) -> str:
        p = self.p
        tile_slots = sorted(
            {d.tile for v in p.views for d in v.dims if d.index and d.tile is not None}
        )
        pad = "    "
        for axis in range(len(p.grid)):
            self.emit(pad, f"for g{axis} in range(e[{axis}]):", f"    idx[{axis}] = g{axis}")
            pad += "    "
        self.emit(pad, f"t.arr = A = [None] * {len(p.registers)}")
        self.body(0, len(self.steps), pad)
        return "\n".join(
            [
                "def launch(t):",
                "    idx, s, V, K = t.idx, t.s, t.views, t.spec.registers",
                "    fw, new, W, X = t.forwarding, t.new_view, t.spec.views, t.args",
                *[f"    G{v} = _whole(W[{v}], X[{view.arg}])" for v, view in enumerate(p.views)],
                *[f"    T{i} = s[{i}]" for i in tile_slots],
                *self.pre,
                "    e = t.extents",
                *self.lines,
                "",
            ]
        )

    def emit(self, pad: str, *lines: str) -> None:
        self.lines.extend(pad + line for line in lines)

    def body(self, start: int, end: int, pad: str) -> None:
        self.emit(pad, "pass")  # a loop may have an empty body
        k = start
        while k < end:
            st = self.steps[k]
            cat = self.p.code[k].op.cat
            if cat is Cat.LOOP:
                trips = int(st.ops[0])
                self.emit(
                    pad,
                    f"if s[{trips}] < 0: t.k = {k}; t.negative_trips(S{k})",
                    f"for j{st.level} in range(s[{trips}]):",
                    f"    idx[{st.level}] = j{st.level}",
                )
                self.names[f"S{k}"] = st
                before = set(self.written)  # the loop may not run
                self.body(k + 1, st.end, pad + "    ")
                self.written = before
                k = st.end + 1
                continue
            inline = _INLINE.get(cat)
            if inline is None:
                self.names[f"R{k}"], self.names[f"S{k}"] = st.run, st
                self.emit(pad, f"t.k = {k}; R{k}(t, S{k})")
            else:
                inline(self, k, pad)
            if cat not in _NO_WRITE:
                self.written.add(st.ops[0])
            k += 2 if self.fused(k) else 1

    def fused(self, k: int) -> bool:
        """Whether op k writes the tile of the store after it (so that store is not
        emitted)."""
        return self.steps[k].store_to >= 0

    # -- pieces of inline code --------------------------------------------------------

    def tile(self, v: int) -> str:
        """View v's current tile: its whole array sliced by the tiling counters."""
        vd = self.p.views[v].dims
        keys = [":"] * len(vd)
        for d, dim in enumerate(vd):
            if dim.index and dim.tile is not None:
                n = counter_pos(dim.index)
                i = f"g{n}" if n < 3 else f"j{n}"
                keys[d] = f"{i} * T{dim.tile}:({i} + 1) * T{dim.tile}"
        while keys and keys[-1] == ":":
            keys.pop()
        return f"G{v}[{', '.join(keys)}]" if keys else f"G{v}"

    def read(self, k: int, r: int, into: str, pad: str) -> None:
        """`into` = register r (an error where it may be unwritten)."""
        self.emit(pad, f"{into} = A[{r}]")
        if r not in self.written:
            self.emit(pad, f"if {into} is None: t.k = {k}; raise t.unwritten({r})")

    def result(self, k: int, d: int, pad: str) -> None:
        """`o` = register d viewed with shape `sh` (its checks when new), or the tile of
        the store after op k when that store is fused and the shapes agree."""
        self.emit(
            pad,
            f"o = V.get((K[{d}], {self.p.registers[d].dtype.np.num}, sh))",
            f"if o is None: t.k = {k}; o = new({d}, sh)",
        )
        if self.fused(k):
            self.emit(
                pad,
                f"w = {self.tile(self.steps[k].store_to)}",
                "if w.shape != sh:",
                f"    t.k = {k + 1}",
                f"    raise t.fail('stored tile shape mismatch', f'r{d} {{sh}} vs {{w.shape}}')",
                "o = w",
            )

    def broadcast(self, k: int, a: str, b: str, into: str, pad: str) -> None:
        """`into` = shapes `a` and `b` broadcast (memoized), or op k's error."""
        self.emit(
            pad,
            f"c = _bcast.get(({a}, {b})) or _broadcast_of(({a}, {b}))",
            f"if c is None: t.k = {k}; raise t.fail('shapes do not broadcast', str(({a}, {b})))",
            f"{into} = c",
        )

    def constant(self, name: str, value: Any) -> str:
        self.names[name] = value
        return name

    def fn(self, k: int) -> str:
        return self.constant(f"F{k}", self.steps[k].fn)

    def dtype(self, r: int) -> str:
        return self.constant(f"D{r}", self.p.registers[r].dtype.np)

    def scalar(self, k: int, r: int) -> str:
        """The scalar operand of register-scalar op k on register r: an immediate, typed
        once, or a slot's value, typed once per launch."""
        st = self.steps[k]
        if st.scalar is not None:
            return self.constant(f"C{k}", st.scalar)
        sc = st.ops[2] if self.p.code[k].op.cat is Cat.BINARY_RS else st.ops[1]
        self.pre.append(f"    C{k} = _typed(s[{int(sc.value)}], {self.dtype(r)})")
        return f"C{k}"


def _inline_load(g: _Launcher, k: int, pad: str) -> None:
    d, v = g.steps[k].ops
    g.emit(pad, f"x = {g.tile(v)}")
    copy = ["sh = x.shape", f"o = V.get((K[{d}], {g.p.registers[d].dtype.np.num}, sh))"]
    copy += [f"if o is None: t.k = {k}; o = new({d}, sh)", "o[...] = x", f"A[{d}] = o"]
    if d in g.alias_regs or g.steps[k].forward:  # read in place until overwritten
        g.emit(pad, f"if fw: A[{d}] = x", "else:")
        g.emit(pad + "    ", *copy)
    else:
        g.emit(pad, *copy)


def _inline_store(g: _Launcher, k: int, pad: str) -> None:
    st = g.steps[k]
    v, r = st.ops[0], st.ops[1]
    g.read(k, r, "x", pad)
    g.emit(
        pad,
        f"w = {g.tile(v)}",
        "if x.shape != w.shape:",
        f"    t.k = {k}",
        f"    raise t.fail('stored tile shape mismatch', f'r{r} {{x.shape}} vs {{w.shape}}')",
        "w[...] = x" if st.fn is None else f"{g.fn(k)}(w, x, out=w)",
    )


def _inline_unary(g: _Launcher, k: int, pad: str) -> None:
    d, r = g.steps[k].ops
    g.read(k, r, "x", pad)
    g.emit(pad, "sh = x.shape")
    g.result(k, d, pad)
    g.emit(pad, f"{g.fn(k)}(x, out=o)", f"A[{d}] = o")


def _inline_binary(g: _Launcher, k: int, pad: str) -> None:
    d, a, b = g.steps[k].ops
    g.read(k, a, "x", pad)
    g.read(k, b, "y", pad)
    g.emit(pad, "sh = x.shape", "if sh != y.shape:")
    g.broadcast(k, "sh", "y.shape", "sh", pad + "    ")
    g.result(k, d, pad)
    g.emit(pad, f"{g.fn(k)}(x, y, out=o)", f"A[{d}] = o")


def _inline_with_scalar(g: _Launcher, k: int, pad: str) -> None:
    st = g.steps[k]
    rs = g.p.code[k].op.cat is Cat.BINARY_RS
    d, r = st.ops[0], st.ops[1] if rs else st.ops[2]
    g.read(k, r, "x", pad)
    g.emit(pad, "sh = x.shape")
    g.result(k, d, pad)
    sc = g.scalar(k, r)
    g.emit(pad, f"{g.fn(k)}({f'x, {sc}' if rs else f'{sc}, x'}, out=o)", f"A[{d}] = o")


def _inline_reduce(g: _Launcher, k: int, pad: str) -> None:
    """As tier 1 binds a reduce: a float sum over the last axis is a matrix-vector
    product with ones; one over a middle axis is a batched one on a register (a view
    of global memory, from an alias or forwarded load, reduces with the ufunc: the
    same bits as tier 1)."""
    st = g.steps[k]
    d, r, kind, axes, flags = st.ops
    rank, keep = len(g.p.registers[r].shape), bool(flags & 1)
    g.read(k, r, "x", pad)
    dims = [("1" if keep else "") if i in st.axes else f"q[{i}]" for i in range(rank)]
    g.emit(pad, "q = x.shape", f"sh = ({''.join(f'{n}, ' for n in dims if n)})")
    if d == r:
        g.emit(pad, "x = x.copy()")
    g.result(k, d, pad)
    dtype = g.p.registers[d].dtype.np
    middle = matmul_sum_axis(kind, axes, (0,) * rank, dtype)
    ufunc = f"{g.fn(k)}.reduce(x, axis={st.axes}, out=o, keepdims={keep}, initial=I{k})"
    g.constant(f"I{k}", reduce_identity(kind, dtype))
    if st.row_sum:
        g.emit(pad, f"_matmul(x, _ones(q[-1], {keep}, {g.dtype(d)}), out=o)")
    elif middle is not None:
        if "    L = t.kept.local" not in g.pre:
            g.pre.append("    L = t.kept.local")
        g.emit(pad, f"if x.base is L: _matmul(*_middle(x, o, {middle}))", f"else: {ufunc}")
    else:
        g.emit(pad, ufunc)
    g.emit(pad, f"A[{d}] = o")


def _inline_mma(g: _Launcher, k: int, pad: str) -> None:
    """An mma that does not accumulate (as `_mma_acc`, which the others call); its
    registers have rank 2 or 3 and its destination is neither input (the validator's
    rules)."""
    d, ra, rb, flags = g.steps[k].ops
    if flags & 4:
        g.names[f"R{k}"], g.names[f"S{k}"] = g.steps[k].run, g.steps[k]
        g.emit(pad, f"t.k = {k}; R{k}(t, S{k})")
        return
    g.read(k, ra, "x", pad)
    g.read(k, rb, "y", pad)
    g.emit(pad, "xr = sa = x.shape", "yr = sb = y.shape")  # the errors name xr and yr
    if flags & 1:
        g.emit(pad, "x = x.swapaxes(-1, -2)", "sa = x.shape")
    if flags & 2:
        g.emit(pad, "y = y.swapaxes(-1, -2)", "sb = y.shape")
    g.emit(
        pad,
        "if sa[-1] != sb[-2]:",
        f"    t.k = {k}; raise t.fail('mma inner dims differ', f'{{xr}} @ {{yr}}')",
    )
    if len(g.p.registers[ra].shape) == len(g.p.registers[rb].shape) == 2:
        g.emit(pad, "sh = (sa[0], sb[1])")
    else:
        g.emit(pad, "b = sa[:-2]", "if b != sb[:-2]:")
        g.broadcast(k, "b", "sb[:-2]", "b", pad + "    ")
        g.emit(pad, "sh = (*b, sa[-2], sb[-1])")
    g.result(k, d, pad)
    g.emit(pad, "_matmul(x, y, out=o)", f"A[{d}] = o")


def _no_code(g: _Launcher, k: int, pad: str) -> None:
    """nop."""


_INLINE: dict[Cat, Callable[[_Launcher, int, str], None]] = {
    Cat.NOP: _no_code,
    Cat.LOAD: _inline_load,
    Cat.STORE: _inline_store,
    Cat.STORE_ACC: _inline_store,
    Cat.UNARY: _inline_unary,
    Cat.BINARY: _inline_binary,
    Cat.BINARY_RS: _inline_with_scalar,
    Cat.BINARY_SR: _inline_with_scalar,
    Cat.REDUCE: _inline_reduce,
    Cat.MMA: _inline_mma,
}


def _whole(vp: ViewPlan, a: np.ndarray) -> np.ndarray:
    """A launch's view `vp` over its whole argument `a`."""
    return np.empty(vp.sizes, a.dtype) if vp.empty else global_view(vp, a, None)


_NO_WRITE = (Cat.STORE, Cat.STORE_ACC, Cat.NOP, Cat.LOOP, Cat.ENDLOOP)


def _with_fusions(
    code: Sequence[Instr], depth: Sequence[int], steps: list[Step]
) -> tuple[Step, ...]:
    """Mark the tile's top-level fused stores and forwarded loads (the same patterns as
    tier 1 binds, found on the code instead of on each tile class)."""
    reads = [{r for _, r, read in register_operands(ins) if read} for ins in code]
    for j, ins in enumerate(code):
        if ins.op.cat is not Cat.STORE or depth[j] or j == 0 or depth[j - 1]:
            continue
        r, producer = ins.operands[1], code[j - 1]
        later = any(r in rs for rs in reads[j + 1 :])
        if fusable(producer) and producer.operands[0] == r and not later:
            steps[j - 1] = steps[j - 1]._replace(store_to=ins.operands[0])
    for i, ins in enumerate(code):
        if ins.op.cat is Cat.LOAD and not depth[i]:
            steps[i] = steps[i]._replace(forward=_forwardable(code, reads, i))
    return tuple(steps)


def _forwardable(code: Sequence[Instr], reads: list[set[int]], i: int) -> bool:
    """Whether load i's register is next written, before any store or loop, by an
    instruction that reads it in place (not an mma, which accumulates into it)."""
    r = code[i].operands[0]
    for j in range(i + 1, len(code)):
        cat = code[j].op.cat
        if cat in (Cat.STORE, Cat.STORE_ACC, Cat.LOOP):
            return False
        if cat not in _NO_WRITE and code[j].operands[0] == r:
            return cat is not Cat.MMA and cat is not Cat.LOAD and r in reads[j]
    return False


def _step(ins: Instr, p: Program, dtypes: Sequence[np.dtype], end: int, level: int) -> Step:
    """What depends only on the instruction (and its registers' dtypes and ranks)."""
    cat, o = ins.op.cat, ins.operands
    fn: Any = None
    scalar: Any = None
    row_sum = False
    axes: tuple[int, ...] = ()
    if cat is Cat.UNARY:
        fn = UNARY_FNS[ins.op.name]
    elif cat in (Cat.BINARY, Cat.BINARY_RS, Cat.BINARY_SR):
        reg = o[2] if cat is Cat.BINARY_SR else o[1]
        fn = binary_fn(BASE_NAMES[ins.op.code], DType.from_numpy(dtypes[reg]))
        sc = o[1] if cat is Cat.BINARY_SR else o[2] if cat is Cat.BINARY_RS else None
        if sc is not None and sc.tag is ScalarTag.IMM:
            scalar = typed_scalar(sc.value, dtypes[reg])
    elif cat is Cat.REDUCE:
        fn = REDUCE_UFUNCS[o[2]]
        rank = len(p.registers[o[1]].shape)
        row_sum = blas_row_sum(o[2], o[3], rank, dtypes[o[0]])
        axes = tuple([i for i in range(rank) if o[3] >> i & 1])
    elif cat is Cat.STORE_ACC:
        fn = ACC_UFUNCS[o[2]]
    run = _RUN.get(cat)
    return Step(run, o, fn, end, level, scalar=scalar, row_sum=row_sum, axes=axes)


# --------------------------------------------------------------------------
# Per launch


def first_launch(
    spec: Specialization, args: Sequence[np.ndarray], mem: np.ndarray, alias: bool
) -> Callable[[], None]:
    """What runs a launch of `spec` on `args` in tier 0 with local memory `mem`, once the
    launch is known to stay within the work bound. `alias`: whether loads may keep views
    of global memory (no argument read shares memory with one written)."""
    s = spec.slots
    dec = decoded(spec.program)
    got = dec.bound(s)
    if got is None:
        g = next(g for g in spec.program.grid if s[g] < 0)
        raise _fail(spec, -1, "negative grid extent", f"s{g} = {s[g]}")
    extents, steps = got
    if steps > spec.max_steps:
        raise _fail(spec, -1, "too many steps", f"{steps} > {spec.max_steps}")
    return partial(dec.launch, Tier0(spec, dec, args, mem, extents, alias))


def _fail(spec: Specialization, k: int, reason: str, detail: str) -> BytecodeError:
    """The BytecodeError the planner raises for the same problem, at instruction k
    (-1: at the grid)."""
    offsets = spec.program.offsets or layout(spec.program)
    return BytecodeError(offsets.grid if k < 0 else offsets.code[k], reason, detail)


class _Kept(NamedTuple):
    """What tier 0 keeps beside a local memory across launches, as the memory itself is
    kept (bounded): register views by ((offset, capacity), dtype number, shape), and
    scratch arrays by (shape, dtype)."""

    mem: np.ndarray
    """The memory itself: holding it means its id is never reused for another."""
    local: np.ndarray
    """What register views are views of (their `base`: numpy's is the owner)."""
    views: dict[Any, Any]
    scratch: dict[Any, Any]


_KEPT: dict[int, _Kept] = {}


def _kept(mem: np.ndarray) -> _Kept:
    got = _KEPT.get(id(mem))
    if got is None or got.mem is not mem or len(got.views) > 4096 or len(got.scratch) > 64:
        local = mem if mem.base is None else mem.base
        got = _KEPT[id(mem)] = _Kept(mem, local, {}, {})
    return got


_BROADCASTS: dict[tuple[Shape, ...], Shape] = {}
"""numpy's broadcasting rule, memoized: tiles repeat their shapes."""


def broadcast_of(shapes: tuple[Shape, ...]) -> Shape | None:
    """`broadcast_shapes`, memoized (None: they do not broadcast)."""
    got = _BROADCASTS.get(shapes)
    if got is None:
        got = broadcast_shapes(list(shapes))
        if got is not None and len(_BROADCASTS) < 4096:
            _BROADCASTS[shapes] = got
    return got


class Tier0:
    """One core's state in a tier-0 launch: its registers' current arrays, its tile
    counters, and the launch's views of global memory."""

    arr: list[Any]
    """The registers' current arrays (None: unwritten), set by the launcher per tile."""

    def __init__(
        self,
        spec: Specialization,
        dec: Decoded,
        args: Sequence[np.ndarray],
        mem: np.ndarray,
        extents: list[int],
        alias: bool,
    ) -> None:
        self.spec, self.decoded, self.args, self.mem = spec, dec, args, mem
        self.s = spec.slots
        self.kept = kept = _kept(mem)
        self.views = kept.views
        self.idx = [0] * 11
        self.forwarding = alias
        """Whether loads may keep views of global memory: no argument read shares memory
        with one written."""
        self.k = 0
        self.extents = extents

    def fail(self, reason: str, detail: str = "") -> BytecodeError:
        return _fail(self.spec, self.k, reason, detail)

    # -- operands -------------------------------------------------------------------

    def get(self, r: int) -> np.ndarray:
        """Register r as its current shape; reading one never written is an error."""
        a = self.arr[r]
        if a is None:
            raise self.unwritten(r)
        return a

    def unwritten(self, r: int) -> BytecodeError:
        return self.fail("register read before written", f"r{r}")

    def put(self, r: int, shape: Shape) -> np.ndarray:
        """Register r viewed with `shape` (which must fit its capacity): the new result."""
        got = self.views.get((self.spec.registers[r], self.decoded.dtype_nums[r], shape))
        if got is None:
            got = self.new_view(r, shape)
        self.arr[r] = got
        return got

    def new_view(self, r: int, shape: Shape) -> np.ndarray:
        """`put`'s first time at this register place and shape: the planner's checks."""
        off, cap = key = self.spec.registers[r]
        n = math.prod(shape)
        if n == 0 and nominal_bytes(shape, 8) > MAX_ARRAY_BYTES:
            raise self.fail("tile too large", f"{shape}")
        if n > cap:
            raise self.fail("tile does not fit register", f"r{r}: {shape} > {cap}")
        view = np.ndarray(shape, self.decoded.dtypes[r], self.mem, off)  # inside: layout checks
        self.views[(key, self.decoded.dtype_nums[r], shape)] = view
        return view

    def extent(self, v: int, d: int) -> int:
        """Dim d of view v's current tile, without cutting it: a tail tile is clipped
        (the same arithmetic as numpy's slicing and the planner's tile classes)."""
        vp: ViewPlan = self.spec.views[v]
        for dim, src, t in vp.tiled:
            if dim == d:
                return max(0, min(t, vp.sizes[d] - self.idx[counter_pos(src)] * t))
        return vp.sizes[d]

    def broadcast(self, *shapes: Shape) -> Shape:
        out = broadcast_of(shapes)
        if out is None:
            raise self.fail("shapes do not broadcast", str(shapes))
        return out

    def shape_operand(self, shape: tuple[Any, ...]) -> Shape:
        """A SHAPE operand's extents now (slots, current tile extents, register dims)."""
        out = []
        for e in shape:
            if e.kind is ExtentKind.SLOT:
                n = self.s[e.index]
                if n < 0:
                    raise self.fail("negative extent", f"s{e.index} = {n}")
            elif e.kind is ExtentKind.VIEW_DIM:
                n = self.extent(e.index, e.dim)
            else:
                n = self.get(e.index).shape[e.dim]
            out.append(n)
        return tuple(out)

    def scalar(self, sc: Any, dtype: np.dtype) -> Any:
        """A SCALAR operand as a numpy scalar of `dtype` (immediate or slot value)."""
        return typed_scalar(sc.value if sc.tag is ScalarTag.IMM else self.s[int(sc.value)], dtype)

    def scratch_for(self, shape: Shape, dtype: np.dtype) -> np.ndarray:
        """A temporary for one instruction (kept beside the local memory)."""
        scratch = self.kept.scratch
        got = scratch.get((shape, dtype))
        if got is None:
            got = scratch[(shape, dtype)] = np.empty(shape, dtype)
        return got

    # -- execution --------------------------------------------------------------------

    def negative_trips(self, st: Step) -> None:
        """A loop whose trip count slot is negative: the planner's error."""
        raise self.fail("negative loop count", f"s{st.ops[0]} = {self.s[st.ops[0]]}")


# --------------------------------------------------------------------------
# Instructions: the planner's checks (specialize.py), then the bound closures'
# numpy calls (kernels.py)


def _copy(t: Tier0, st: Step) -> None:
    """copy and convert (numpy assignment casts, and copies first if the two overlap)."""
    d, r = st.ops[0], st.ops[1]
    x = t.get(r)
    t.put(d, x.shape)[...] = x


def _broadcast(t: Tier0, st: Step) -> None:
    d, r, shape = st.ops[:3]
    x = t.get(r)
    target = t.shape_operand(shape)
    if t.broadcast(x.shape, target) != target:
        raise t.fail("shapes do not broadcast", f"{x.shape} to {target}")
    t.put(d, target)[...] = x


def _fill(t: Tier0, st: Step) -> None:
    d, sc, shape = st.ops
    dst = t.put(d, t.shape_operand(shape))
    dst[...] = t.scalar(sc, dst.dtype)


def _select_step(t: Tier0, st: Step) -> None:
    d, c, a, b = st.ops
    xs = (t.get(c), t.get(a), t.get(b))
    out = t.broadcast(*(x.shape for x in xs))
    fn = select_overlapping if d in (c, a, b) else select_into
    fn(t.put(d, out), *xs)


def _mma_acc(t: Tier0, st: Step) -> None:
    """An mma that accumulates into its destination (the others are inline)."""
    d, ra, rb, flags = st.ops
    acc = t.get(d).shape  # read first, as the planner reads it
    a, b = t.arr[ra], t.arr[rb]
    if a is None or b is None:
        raise t.unwritten(ra if a is None else rb)
    registers = (a.shape, b.shape)  # the planner's error details name these
    a = a.swapaxes(-1, -2) if flags & 1 else a
    b = b.swapaxes(-1, -2) if flags & 2 else b
    sa, sb = a.shape, b.shape
    if sa[-1] != sb[-2]:
        raise t.fail("mma inner dims differ", f"{registers[0]} @ {registers[1]}")
    if len(sa) == 2 and len(sb) == 2:
        out: Shape = (sa[0], sb[1])
    else:
        batch_a, batch_b = sa[:-2], sb[:-2]
        out = (*(batch_a if batch_a == batch_b else t.broadcast(batch_a, batch_b)), sa[-2], sb[-1])
    if d in (ra, rb):
        a, b = a.copy(), b.copy()
    if acc != out:
        raise t.fail("mma accumulator shape mismatch", f"{acc} vs {out}")
    dst = t.put(d, out)
    mma_acc(a, b, dst, t.scratch_for(out, dst.dtype))


_RUN: dict[Cat, Callable[[Tier0, Step], None]] = {
    Cat.COPY: _copy,
    Cat.CONVERT: _copy,
    Cat.BROADCAST: _broadcast,
    Cat.FILL: _fill,
    Cat.SELECT: _select_step,
    Cat.MMA: _mma_acc,
}
"""The steps the launcher calls; the other categories it writes inline (`_INLINE`)."""
