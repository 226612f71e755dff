"""Binding: each typed instruction becomes one zero-argument callable (planned launches).

`bind_op(node, core)` receives an instruction with the exact shapes of its
operands in one tile class, takes numpy views of the core's local memory for
its registers *now*, and returns a callable that runs it: usually a
`functools.partial` of one numpy function (`kernels.py`) with `out=`, so
executing an instruction is a single C-level call. `binders` resolves, once
per program, what binding each instruction needs, so binding a tile class costs
a few lookups per instruction.

Global memory is reached through `core.g[v]`, the launch's numpy view of
view `v` over its argument (set per launch); a load or store slices the
current tile out of it using the tile counters in `core.idx`.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Protocol

import numpy as np

from dvm.vm.generated import define
from dvm.vm.grouped_matmul import grouped_mma
from dvm.vm.isa import (
    ACCUMULATE,
    EXCLUSIVE,
    KEEPDIMS,
    TRANSPOSE_A,
    TRANSPOSE_B,
    Cat,
    DType,
    Kind,
    ReduceKind,
    ScalarTag,
)
from dvm.vm.kernels import (
    ACC_UFUNCS,
    REDUCE_UFUNCS,
    STRIDED_WRONG,
    WHOLE_SUM_BLAS,
    along,
    blas_row_sum,
    blas_whole_sum,
    converter,
    counter_pos,
    for_store,
    iota_base,
    iota_start,
    matmul_sum_axis,
    middle_sum_operands,
    mma_acc,
    mma_into,
    ones_vector,
    out_by_position,
    reduce_identity,
    reduce_pairwise,
    reduce_short_axis,
    scalar_operand,
    scan_into,
    scatter_add_into,
    select_into,
    select_overlapping,
    short_axis,
    sum_of_row_sums,
    take_into,
    typed_scalar,
)
from dvm.vm.narrow import reduce_widened, widened
from dvm.vm.plan import OpNode, Shape, ViewPlan
from dvm.vm.product_sums import Plan, product_sum_into
from dvm.vm.program import Instr
from dvm.vm.tanh_plus_one import tanh_plus_one_into
from dvm.vm.top_k import top_k_into

Fn = Callable[[], Any]


class CoreLike(Protocol):
    """What binding needs from a core (see `planned.Core`)."""

    idx: list[int]
    g: list[np.ndarray]
    views: Sequence[ViewPlan]
    acc_locks: Sequence[threading.Lock]
    alias: list[Any]
    """Current array of each *alias register* (see `Dyn`), set by its loads."""
    alias_regs: frozenset[int]
    alias_operands: tuple[bool, ...]
    """Per instruction: whether one of its REG operands is an alias register."""
    dynamic: bool
    """Set while binding readers of forwarded loads: `alias_regs` then says which are."""

    def reg(self, r: int, shape: Shape) -> np.ndarray: ...

    def slicer(self, v: int) -> Callable[[np.ndarray], np.ndarray] | None: ...

    def scratch(self, shape: Shape, dtype: np.dtype) -> np.ndarray: ...

    def dtype(self, r: int) -> np.dtype: ...


class Dyn:
    """Operand placeholder for an alias register: a register only ever written by
    loads from read-only arguments. Its load does not copy: it just remembers
    the tile's numpy view of global memory in `core.alias[r]`, and readers
    fetch it from there at run time (one list lookup instead of a tile copy).
    """

    __slots__ = ("r",)

    def __init__(self, r: int) -> None:
        self.r = r


class DynOut:
    """Destination placeholder for an op fused with the store after it: the op writes
    straight into the current tile of view `v` in global memory (one copy pass less)."""

    __slots__ = ("cut", "g", "v")

    def __init__(self, core: CoreLike, v: int) -> None:
        self.g, self.v, self.cut = core.g, v, core.slicer(v) or _whole


def into(fn: Any, *args: Any, out: Any) -> Fn:
    """`fn(*args, out=out)` as a zero-argument callable, a ufunc's `out` given by
    position (`kernels.out_by_position`)."""
    if out_by_position(fn, len(args)):
        return partial(fn, *args, out)
    return partial(fn, *args, out=out)


def call(core: CoreLike, fn: Any, *args: Any, **kwargs: Any) -> Fn:
    """`fn(*args, **kwargs)` as a zero-argument callable; Dyn args (and a DynOut `out`)
    are fetched per call, through a closure made from a template per pattern of
    fetched and fixed operands (so a call costs one Python frame, not one per fetch).
    A ufunc's `out` goes by position (see `into`)."""
    out = kwargs.get("out")
    dyn_out = type(out) is DynOut
    kinds = tuple([type(a) is Dyn for a in args])
    has_out = "out" in kwargs
    if not dyn_out and True not in kinds:
        plain_out = has_out and len(kwargs) == 1
        return into(fn, *args, out=out) if plain_out else partial(fn, *args, **kwargs)
    by_position = has_out and len(kwargs) == 1 and out_by_position(fn, len(args))
    if has_out:  # (kwargs is this call's own dict)
        del kwargs["out"]
    mode = "d" if dyn_out else "c" if has_out else ""
    pattern = (kinds, mode.upper() if by_position else mode, bool(kwargs))
    make = _TEMPLATES.get(pattern)
    if make is None:
        make = _TEMPLATES[pattern] = _template(*pattern)
    regs = [a.r if dyn else None for a, dyn in zip(args, kinds, strict=True)]
    rest = kwargs
    if dyn_out:
        assert isinstance(out, DynOut)
        return make(fn, args, regs, core.alias, None, out.cut, out.g, out.v, rest)
    return make(fn, args, regs, core.alias, out, None, None, None, rest)


_TEMPLATES: dict[tuple[tuple[bool, ...], str, bool], Any] = {}


def _template(kinds: tuple[bool, ...], out: str, rest: bool) -> Any:
    """Compile `make(fn, args, regs, alias, o, cut, g, v, kw)` returning a closure that
    calls fn with fixed args, alias registers fetched, and out fixed (`out` "c") or cut
    from g[v] ("d"), by position when upper case."""
    pre = [f"    r{i} = R[{i}]" if dyn else f"    c{i} = C[{i}]" for i, dyn in enumerate(kinds)]
    call_args = [f"alias[r{i}]" if dyn else f"c{i}" for i, dyn in enumerate(kinds)]
    if out:
        target = "cut(g[v])" if out in ("d", "D") else "o"
        call_args.append(target if out.isupper() else f"out={target}")
    if rest:
        call_args.append("**kw")
    source = "\n".join(
        [
            "def make(fn, C, R, alias, o, cut, g, v, kw):",
            *pre,
            "    def f():",
            f"        return fn({', '.join(call_args)})",
            "    return f",
        ]
    )
    return define(source, "make", {}, "call template")


def _whole(a: np.ndarray) -> np.ndarray:
    """The slicer of an untiled view: the tile is the whole view."""
    return a


SHORT_INNER = 4
"""A tile whose innermost extent is 2 to this, with many more elements along its other
axes, runs each numpy call on views of it as one call per innermost index: numpy
iterates strided operands (views of arguments) in memory order, which for a view of
every other pair of floats (a rotary embedding's halves) is a loop of 2 elements per
step of the outer loop, 5-20x slower than loops along the long axes. (`order="C"` on
transposed views would iterate the long axis innermost in one call, but numpy 2.4 computes
some unary ufuncs wrongly that way.)"""


def short_inner(shape: Sequence[int] | None) -> bool:
    """Whether a tile of `shape` runs as one numpy call per innermost index."""
    return (
        shape is not None
        and len(shape) >= 2
        and 2 <= shape[-1] <= SHORT_INNER
        and math.prod(shape[:-1]) >= 16 * shape[-1]
    )


def _at(a: Any, j: int) -> Any:
    """Operand `a` at innermost index `j` (a scalar, or a dim of 1 that broadcasts, as is)."""
    if not isinstance(a, np.ndarray) or a.ndim == 0:
        return a
    return a[..., 0] if a.shape[-1] == 1 else a[..., j]


def per_inner_index(fn: Any, extent: int) -> Any:
    """`fn(*args, out=out)` as one call per innermost index of `out` (see `SHORT_INNER`)."""

    def run(*args: Any, out: np.ndarray) -> Any:
        for j in range(extent):
            fn(*[_at(a, j) for a in args], out=out[..., j])
        return out

    return run


def _copy_per_inner_index(src: np.ndarray, out: np.ndarray) -> None:
    for j in range(out.shape[-1]):
        out[..., j] = _at(src, j)


def slicer_maker(tiled: tuple[tuple[int, int], ...]) -> Any:
    """`make(idx, vp.tiled)` for a view whose (dim, index source) pairs are `tiled`, a
    program's fact: it returns the view's slicer, which cuts the current tile out of
    the launch's view of its argument (None when nothing is tiled)."""
    if not tiled:
        return None
    pattern = tuple([(d, counter_pos(src)) for d, src in tiled])
    make = _SLICERS.get(pattern)
    if make is None:
        make = _SLICERS[pattern] = _slicer_template(pattern)
    return make


_SLICERS: dict[tuple[tuple[int, int], ...], Any] = {}


def _slicer_template(tiled: tuple[tuple[int, int], ...]) -> Any:
    """Compile `make(idx, T)` for one pattern of tiled dims and counters (T: the view's
    (dim, source, tile) triples): the slicer it returns is one Python frame,
    `v[i0:i0 + t0, :, i1:i1 + t1]`."""
    last = max(d for d, _ in tiled)
    keys = [":"] * (last + 1)
    lines = ["def make(idx, T):"]
    body = []
    for j, (d, c) in enumerate(tiled):
        lines.append(f"    t{j} = T[{j}][2]")
        body.append(f"        i{j} = idx[{c}] * t{j}")
        keys[d] = f"i{j}:i{j} + t{j}"
    lines += ["    def cut(v):", *body, f"        return v[{', '.join(keys)}]", "    return cut"]
    return define("\n".join(lines), "make", {}, "slicer")


def _bind_load(node: OpNode, core: CoreLike) -> Fn | None:
    """Copy the tile into the register, or (alias register) just keep the tile's view."""
    dst, v = node.ins.operands
    assert node.extents is not None
    g, sl = core.g, core.slicer(v)
    if dst in core.alias_regs:
        alias = core.alias
        if sl is None:  # the whole view, without a slicer's frame

            def load_whole() -> None:
                alias[dst] = g[v]

            return load_whole

        def load_alias() -> None:
            alias[dst] = sl(g[v])

        return load_alias
    if math.prod(node.extents) == 0:
        return None
    reg = core.reg(dst, node.extents)
    if short_inner(node.extents):
        cut = sl or _whole
        return lambda: _copy_per_inner_index(cut(g[v]), reg)
    put = reg.__setitem__  # out[...] = tile: the fastest numpy copy
    if sl is None:
        return lambda: put(Ellipsis, g[v])
    return lambda: put(Ellipsis, sl(g[v]))


def _bind_store(node: OpNode, core: CoreLike) -> Fn | None:
    """Copy the register into the tile; store_acc combines under the argument's lock."""
    v = node.ins.operands[0]
    if node.extents is None or math.prod(node.extents) == 0:
        return None
    val = _src(node, core, 1)
    g, sl = core.g, core.slicer(v)
    cut = sl or _whole
    if node.ins.op.cat is Cat.STORE:
        copy = _copy_per_inner_index if short_inner(node.extents) else None
        if isinstance(val, Dyn):
            alias, r = core.alias, val.r
            if copy is not None:
                return lambda: copy(alias[r], cut(g[v]))
            return lambda: cut(g[v]).__setitem__(Ellipsis, alias[r])
        if copy is not None:
            return lambda: copy(val, cut(g[v]))
        if sl is None:
            return lambda: g[v].__setitem__(Ellipsis, val)
        return lambda: sl(g[v]).__setitem__(Ellipsis, val)
    uf = ACC_UFUNCS[node.ins.operands[2]]
    lock = core.acc_locks[core.views[v].arg]
    alias = core.alias

    def store_acc() -> None:
        x = alias[val.r] if isinstance(val, Dyn) else val
        with lock:
            t = cut(g[v])
            uf(t, x, out=t)

    return store_acc


def _src(node: OpNode, core: CoreLike, pos: int) -> Any:
    """The array a source register holds in this class, or a Dyn for an alias register."""
    shape = node.shapes[pos]
    r = node.ins.operands[pos]
    assert shape is not None
    return Dyn(r) if r in core.alias_regs else core.reg(r, shape)


def _dst(node: OpNode, core: CoreLike) -> Any:
    """The destination register viewed with the instruction's result shape (or, for an op
    fused with its store, a DynOut for the tile it writes)."""
    assert node.out is not None
    if node.store_to is not None:
        return DynOut(core, node.store_to)
    return core.reg(node.ins.operands[0], node.out)


def _bind_copy(node: OpNode, core: CoreLike) -> Fn:
    """copy, convert and broadcast are all `dst[...] = src` (numpy assignment broadcasts
    and casts unsafely; it is cheaper to call than np.copyto)."""
    return call(core, _dst(node, core).__setitem__, Ellipsis, _src(node, core, 1))


def _bind_convert(node: OpNode, core: CoreLike) -> Fn:
    """convert: numpy assignment, or its kernel where assignment does not compute it."""
    dst, src = (DType.from_numpy(core.dtype(r)) for r in node.ins.operands[:2])
    kernel = converter(src, dst)
    if kernel is None:
        return _bind_copy(node, core)
    return call(core, kernel, _src(node, core, 1), out=_dst(node, core))


def _bind_fill(node: OpNode, core: CoreLike) -> Fn:
    """dst[...] = a scalar already converted to the register's dtype."""
    dst = _dst(node, core)
    return partial(dst.__setitem__, Ellipsis, typed_scalar(node.scalar, dst.dtype))


def _bind_select(node: OpNode, core: CoreLike) -> Fn:
    """select, through a temporary only when dst is also an input."""
    d, c, a, b = node.ins.operands
    fn = select_overlapping if d in (c, a, b) else select_into
    srcs = (_src(node, core, 1), _src(node, core, 2), _src(node, core, 3))
    return call(core, fn, _dst(node, core), *srcs)


def _bind_reduce(node: OpNode, core: CoreLike) -> Fn:
    """ufunc.reduce with the identity as `initial` (so empty extents work)."""
    _, _, kind, axes, flags = node.ins.operands
    src, dst = _src(node, core, 1), _dst(node, core)
    src_shape = node.shapes[1]
    assert src_shape is not None
    keep = bool(flags & KEEPDIMS)
    axis = tuple(d for d in range(len(src_shape)) if axes >> d & 1)
    uf = REDUCE_UFUNCS[kind]
    wide = widened(dst.dtype)
    if wide is not None and kind in (ReduceKind.SUM, ReduceKind.PROD):
        acc = core.scratch(node.out, wide)  # type: ignore[arg-type]
        init = reduce_identity(kind, wide)
        return call(core, reduce_widened, uf, src, axis, keep, init, dst, acc)
    if blas_row_sum(kind, axes, len(src_shape), dst.dtype):
        # sum over the last axis = src @ ones: BLAS gemv runs faster than add.reduce
        return call(core, np.matmul, src, ones_vector(src_shape[-1], keep, dst.dtype), out=dst)
    whole = blas_whole_sum(kind, axes, len(src_shape), dst.dtype)
    if whole and math.prod(src_shape) >= WHOLE_SUM_BLAS:
        rows = core.scratch(src_shape[:-1], dst.dtype)
        return call(core, sum_of_row_sums, src, rows, out=dst)
    middle = matmul_sum_axis(kind, axes, src_shape, dst.dtype)
    if middle is not None and _contiguous(src) and _contiguous(dst):
        return partial(np.matmul, *middle_sum_operands(src, dst, middle))  # views, bound once
    short = short_axis(kind, axes, src_shape)
    if short is not None and isinstance(src, Dyn):  # (a view of global memory)
        return call(core, reduce_short_axis, uf, src, short, keep, dst)
    if short is not None and not np.may_share_memory(src, dst):
        return partial(reduce_pairwise, uf, *along(src, short, keep, dst))  # views, bound once
    init = reduce_identity(kind, dst.dtype)
    return call(core, uf.reduce, src, axis=axis, out=dst, keepdims=keep, initial=init)


def _contiguous(x: Any) -> bool:
    """A register's array (not an alias fetched per call), C-contiguous: reshapes are views."""
    return isinstance(x, np.ndarray) and x.flags.c_contiguous


def bind_product_sum(mul: OpNode, reduce: OpNode, plan: Plan, core: CoreLike) -> Fn:
    """A `mul` and the `reduce sum` of its product after it as one matmul into the
    reduce's destination (`product_sums`): on views reshaped now for registers, per
    call for an alias register (fetched per call)."""
    a, b, out = _src(mul, core, 1), _src(mul, core, 2), _dst(reduce, core)
    if not (_contiguous(a) and _contiguous(b) and _contiguous(out)):
        return call(core, product_sum_into, plan, a, b, out)
    return into(np.matmul, *plan.factors(a, b), out=out.reshape(plan.out_shape))


def bind_tanh_plus_one(tanh: OpNode, core: CoreLike) -> Fn:
    """A `tanh` and the `add` of 1 after it, updating its register in place, as one
    logistic into that register (`tanh_plus_one`)."""
    return call(core, tanh_plus_one_into, _src(tanh, core, 1), out=_dst(tanh, core))


def _bind_mma(node: OpNode, core: CoreLike) -> Fn:
    """np.matmul into dst; transposes are views taken at bind time. An accumulating mma
    multiplies into a scratch tile (per core, shared by every class) and adds. A product
    the store after it only reads is written straight into the stored tile. A float
    narrower than f32 is multiplied in f32 (`mma_widened`).

    (A cblas gemm with beta = 1 through ctypes would save the add pass, but its per-call
    overhead, the pointer and argument conversions, costs more than the pass at the
    tile sizes local memory allows.)"""
    flags = node.ins.operands[3]
    a, b, dst = _src(node, core, 1), _src(node, core, 2), _dst(node, core)
    ta, tb = bool(flags & TRANSPOSE_A), bool(flags & TRANSPOSE_B)
    acc = bool(flags & ACCUMULATE)
    wide = widened(core.dtype(node.ins.operands[0]))
    if wide is not None:
        sizes = [math.prod(s or ()) for s in (node.shapes[1], node.shapes[2], node.out)]
        scratch = core.scratch((sum(sizes),), wide)
    elif acc and isinstance(dst, np.ndarray):
        scratch = core.scratch(dst.shape, dst.dtype)  # per core, reused by every class
    else:
        scratch = None
    if wide is not None or isinstance(a, Dyn) or isinstance(b, Dyn) or isinstance(dst, DynOut):
        return call(
            core,
            mma_into,
            a,
            b,
            out=dst,
            ta=ta,
            tb=tb,
            acc=acc,
            wide=wide is not None,
            scratch=scratch,
        )
    a = a.swapaxes(-1, -2) if ta else a
    b = b.swapaxes(-1, -2) if tb else b
    if not acc:
        return into(np.matmul, a, b, out=dst)
    assert scratch is not None
    return partial(mma_acc, a, b, out=dst, scratch=scratch)


def _bind_grouped_mma(node: OpNode, core: CoreLike) -> Fn:
    """`grouped_mma` into dst; the rows start where the rows view's current tile starts
    along its dim 0, read from the tile counters in `core.idx` when it runs."""
    rows = core.views[node.ins.operands[4]]
    counter = next(((counter_pos(src), tile) for d, src, tile in rows.tiled if d == 0), None)
    idx, total = core.idx, rows.sizes[0]

    def run(a: np.ndarray, b: np.ndarray, sizes: np.ndarray, out: np.ndarray) -> None:
        start = idx[counter[0]] * counter[1] if counter is not None else 0
        grouped_mma(a, b, sizes, start, total, out)

    srcs = [_src(node, core, pos) for pos in (1, 2, 3)]
    return call(core, run, *srcs, out=_dst(node, core))


def _plain(node: OpNode, core: CoreLike) -> bool:
    """Whether no operand is an alias register and the result is not fused with a store:
    the instruction is then one partial over fixed register views."""
    return (
        node.store_to is None
        and not core.dynamic
        and not (core.alias_regs and core.alias_operands[node.k])
    )


def _bind_unary(node: OpNode, core: CoreLike) -> Fn:
    """One ufunc (or composite) from the input view into the output view."""
    fn = node.ins.op.kernel
    if _plain(node, core):
        ops, reg = node.ins.operands, core.reg
        return into(fn, reg(ops[1], node.shapes[1]), out=reg(ops[0], node.out))  # type: ignore[arg-type]
    fn = for_store(fn, node.store_to is not None)
    return call(core, _reordered(fn, node.out), _src(node, core, 1), out=_dst(node, core))


def _reordered(fn: Any, shape: Sequence[int] | None) -> Any:
    """`fn`, or for a ufunc on a tile of a short innermost extent, `fn` called per
    innermost index (see `SHORT_INNER`)."""
    if isinstance(fn, np.ufunc) and fn not in STRIDED_WRONG and short_inner(shape):
        assert shape is not None
        return per_inner_index(fn, shape[-1])
    return fn


def _bind_binary(node: OpNode, core: CoreLike) -> Fn:
    """Register-register, register-scalar and scalar-register forms."""
    ins = node.ins
    cat, ops = ins.op.cat, ins.operands
    reg_pos = 2 if cat is Cat.BINARY_SR else 1
    dtype = core.dtype(ops[reg_pos])
    key = (ins.op.code, dtype)
    fn = _FNS.get(key)
    if fn is None:
        fn = _FNS[key] = ins.op.kernel_for(DType.from_numpy(dtype))
    shapes = node.shapes
    if _plain(node, core):
        reg = core.reg
        x, dst = reg(ops[reg_pos], shapes[reg_pos]), reg(ops[0], node.out)  # type: ignore[arg-type]
        if cat is Cat.BINARY:
            return into(fn, x, reg(ops[2], shapes[2]), out=dst)  # type: ignore[arg-type]
        s = scalar_operand(fn, node.scalar, dtype, shapes[reg_pos])
        return into(fn, x, s, out=dst) if cat is Cat.BINARY_RS else into(fn, s, x, out=dst)
    x, dst = _src(node, core, reg_pos), _dst(node, core)
    fn = _reordered(fn, node.out)
    if cat is Cat.BINARY:
        return call(core, fn, x, _src(node, core, 2), out=dst)
    s = scalar_operand(fn, node.scalar, dtype, shapes[reg_pos])
    if cat is Cat.BINARY_RS:
        return call(core, fn, x, s, out=dst)
    return call(core, fn, s, x, out=dst)


_FNS: dict[tuple[int, np.dtype], Any] = {}


def _bind_iota(node: OpNode, core: CoreLike) -> Fn | None:
    """dst = the tile's start along the axis plus 0, 1, ... (numpy assignment converts)."""
    d, v, axes = node.ins.operands
    assert node.out is not None
    if math.prod(node.out) == 0:
        return None
    axis = axes.bit_length() - 1
    dst, base = core.reg(d, node.out), iota_base(node.out, axis)
    start = iota_start(core.views[v], axis)
    if start is None:
        return partial(dst.__setitem__, Ellipsis, base)
    idx, (c, tile) = core.idx, start

    def iota() -> None:
        dst[...] = base + idx[c] * tile

    return iota


def _bind_take(node: OpNode, core: CoreLike) -> Fn | None:
    """The current tile of the view cut per call (the counters move), then its elements
    picked by the indices (an alias register's fetched per call too)."""
    d, v = node.ins.operands[:2]
    assert node.out is not None
    if math.prod(node.out) == 0:
        return None
    dst, indices = core.reg(d, node.out), _src(node, core, 2)
    g, cut, alias = core.g, core.slicer(v) or _whole, core.alias

    def take() -> None:
        picked = alias[indices.r] if isinstance(indices, Dyn) else indices
        take_into(dst, cut(g[v]), picked)

    return take


def _bind_scatter_add(node: OpNode, core: CoreLike) -> Fn | None:
    """The current tile of the view cut per call (the counters move), then the updates
    added at the indices (alias registers fetched per call too)."""
    v = node.ins.operands[0]
    if node.extents is None or math.prod(node.extents) == 0:
        return None
    updates, indices = _src(node, core, 1), _src(node, core, 2)
    g, cut, alias = core.g, core.slicer(v) or _whole, core.alias

    def scatter_add() -> None:
        x = alias[updates.r] if isinstance(updates, Dyn) else updates
        picked = alias[indices.r] if isinstance(indices, Dyn) else indices
        scatter_add_into(cut(g[v]), x, picked)  # the shape rule checked the tile

    return scatter_add


def _bind_scan(node: OpNode, core: CoreLike) -> Fn:
    """scan_into dst, updating the carry register in place."""
    _, _, c, kind, axes, flags = node.ins.operands
    carry_shape = node.shapes[2]
    assert carry_shape is not None
    carry = core.reg(c, carry_shape)
    ufunc, axis = REDUCE_UFUNCS[kind], axes.bit_length() - 1
    exclusive = bool(flags & EXCLUSIVE)
    return call(
        core, scan_into, ufunc, _src(node, core, 1), carry, axis, exclusive, _dst(node, core)
    )


def _bind_top_k(node: OpNode, core: CoreLike) -> Fn:
    """top_k_into the values and indices registers, in place."""
    values, indices, _, _, axes = node.ins.operands
    carry, at = node.shapes[0], node.shapes[1]
    assert carry is not None and at is not None
    v, i = core.reg(values, carry), core.reg(indices, at)
    x, positions = _src(node, core, 2), _src(node, core, 3)
    return call(core, top_k_into, v, i, x, positions, axes.bit_length() - 1)


_BINDERS: dict[Cat, Callable[[OpNode, CoreLike], Fn | None]] = {
    Cat.LOAD: _bind_load,
    Cat.STORE: _bind_store,
    Cat.STORE_ACC: _bind_store,
    Cat.COPY: _bind_copy,
    Cat.CONVERT: _bind_convert,
    Cat.BROADCAST: _bind_copy,
    Cat.FILL: _bind_fill,
    Cat.SELECT: _bind_select,
    Cat.REDUCE: _bind_reduce,
    Cat.MMA: _bind_mma,
    Cat.GROUPED_MMA: _bind_grouped_mma,
    Cat.UNARY: _bind_unary,
    Cat.BINARY: _bind_binary,
    Cat.BINARY_RS: _bind_binary,
    Cat.BINARY_SR: _bind_binary,
    Cat.IOTA: _bind_iota,
    Cat.TAKE: _bind_take,
    Cat.SCAN: _bind_scan,
    Cat.SCATTER_ADD: _bind_scatter_add,
    Cat.TOP_K: _bind_top_k,
}


def bind_op(node: OpNode, core: CoreLike) -> Fn | None:
    """The callable that runs `node` on `core`, or None when it has nothing to do."""
    return _BINDERS[node.ins.op.cat](node, core)


Binder = Callable[[OpNode, CoreLike], "Fn | None"]


def binders(
    code: Sequence[Instr], dtypes: Sequence[np.dtype], alias: frozenset[int]
) -> list[Binder]:
    """Per instruction, its binder (once per program and set of alias registers): the
    frequent plain cases resolve the numpy function, registers and immediate scalars
    now, so binding one tile class costs a few lookups per instruction; the others
    (aliased operands, fused stores, rarer categories) use `bind_op`'s generic path."""
    return [_binder(ins, dtypes, alias) for ins in code]


def _binder(ins: Instr, dtypes: Sequence[np.dtype], alias: frozenset[int]) -> Binder:
    cat, o = ins.op.cat, ins.operands
    generic = _BINDERS.get(cat, _no_binding)
    regs = [r for (_, kind), r in zip(ins.op.operands, o, strict=True) if kind is Kind.REG]
    if any(r in alias for r in regs):
        return generic
    # (`into`'s choice made once here: each tile class of each shape binds with these)
    if cat is Cat.UNARY:
        fn: Any = ins.op.kernel  # (a unary op's row names one)
        d, a = o[0], o[1]
        by_position = out_by_position(fn, 1)

        def unary(node: OpNode, core: CoreLike) -> Fn | None:
            if node.store_to is not None:
                return generic(node, core)
            x, out = core.reg(a, node.shapes[1]), core.reg(d, node.out)  # type: ignore[arg-type]
            return partial(fn, x, out) if by_position else partial(fn, x, out=out)

        return unary
    if cat in (Cat.BINARY, Cat.BINARY_RS, Cat.BINARY_SR):
        pos = 2 if cat is Cat.BINARY_SR else 1
        dtype = dtypes[o[pos]]
        fn = ins.op.kernel_for(DType.from_numpy(dtype))
        d, a = o[0], o[pos]
        by_position = out_by_position(fn, 2)
        if cat is Cat.BINARY:
            b = o[2]

            def binary(node: OpNode, core: CoreLike) -> Fn | None:
                if node.store_to is not None:
                    return generic(node, core)
                reg, sh = core.reg, node.shapes
                x, y, out = reg(a, sh[1]), reg(b, sh[2]), reg(d, node.out)  # type: ignore[arg-type]
                return partial(fn, x, y, out) if by_position else partial(fn, x, y, out=out)

            return binary
        scalar = o[3 - pos]
        fixed = scalar.value if scalar.tag is ScalarTag.IMM else None
        rs = cat is Cat.BINARY_RS

        def with_scalar(node: OpNode, core: CoreLike) -> Fn | None:
            if node.store_to is not None:
                return generic(node, core)
            reg, shape = core.reg, node.shapes[pos]
            x, out = reg(a, shape), reg(d, node.out)  # type: ignore[arg-type]
            value = fixed if fixed is not None else node.scalar
            s = scalar_operand(fn, value, dtype, shape)
            operands = (x, s) if rs else (s, x)
            if by_position:
                return partial(fn, *operands, out)
            return partial(fn, *operands, out=out)

        return with_scalar
    return generic


def _no_binding(node: OpNode, core: CoreLike) -> Fn | None:
    """nop, loop and endloop bind to nothing (loops are bound by `planned.Core`)."""
    return None
