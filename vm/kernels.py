"""Stage 4a: binding. Each typed instruction becomes one zero-argument callable.

`bind_op(node, core)` receives an instruction with the exact shapes of its
operands in one tile class, takes numpy views of the core's local memory for
its registers *now*, and returns a callable that runs it — usually a
`functools.partial` of one numpy ufunc with `out=`, so executing an
instruction is a single C-level call and allocates nothing. Only the rare
integer `div`/`pow`, `erf` and an aliasing `select` allocate temporaries.

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
from dvm.vm.isa import AccKind, Cat, DType, ReduceKind, base_name
from dvm.vm.program import Index
from dvm.vm.specialize import OpNode, Shape, ViewPlan

Fn = Callable[[], Any]


class CoreLike(Protocol):
    """What binding needs from a core (see interpreter.Core)."""

    idx: list[int]
    g: list[np.ndarray]
    views: Sequence[ViewPlan]
    acc_locks: Sequence[threading.Lock]

    def reg(self, r: int, shape: Shape) -> np.ndarray: ...


def counter_pos(source: int) -> int:
    """Position of an index source in `core.idx`: grid axes 0..2, loop levels 3..10."""
    return source - Index.GRID0 if Index.is_grid(source) else 3 + source - Index.LOOP0


# --------------------------------------------------------------------------
# Tiles of global memory


def make_slicer(vp: ViewPlan, idx: list[int]) -> Callable[[np.ndarray], np.ndarray] | None:
    """A function cutting the current tile out of the launch view (None: the whole view)."""
    tiled = [(d, counter_pos(src), t) for d, src, t in vp.tiled]
    if not tiled:
        return None
    if len(tiled) == 1:
        d, c, t = tiled[0]
        if d == 0:

            def first(v: np.ndarray) -> np.ndarray:
                i = idx[c] * t
                return v[i : i + t]

            return first
        pre = (slice(None),) * d

        def one(v: np.ndarray) -> np.ndarray:
            i = idx[c] * t
            return v[(*pre, slice(i, i + t))]

        return one
    full = [slice(None)] * len(vp.sizes)

    def many(v: np.ndarray) -> np.ndarray:
        key = list(full)
        for d, c, t in tiled:
            i = idx[c] * t
            key[d] = slice(i, i + t)
        return v[tuple(key)]

    return many


def _bind_load(node: OpNode, core: CoreLike) -> Fn | None:
    dst, v = node.ins.operands
    if node.extents is None or math.prod(node.extents) == 0:
        return None
    out = core.reg(dst, node.extents)
    g, sl = core.g, make_slicer(core.views[v], core.idx)
    if sl is None:
        return lambda: np.copyto(out, g[v])
    return lambda: np.copyto(out, sl(g[v]))


def _bind_store(node: OpNode, core: CoreLike) -> Fn | None:
    v, src = node.ins.operands[:2]
    if node.extents is None or math.prod(node.extents) == 0:
        return None
    val = core.reg(src, node.extents)
    g, sl = core.g, make_slicer(core.views[v], core.idx)
    if node.ins.op.cat is Cat.STORE:
        if sl is None:
            return lambda: np.copyto(g[v], val)
        return lambda: np.copyto(sl(g[v]), val)
    uf = _ACC_UFUNCS[node.ins.operands[2]]
    lock = core.acc_locks[core.views[v].arg]
    cut = sl or (lambda a: a)

    def store_acc() -> None:
        with lock:
            t = cut(g[v])
            uf(t, val, out=t)

    return store_acc


_ACC_UFUNCS = {AccKind.ADD: np.add, AccKind.MAX: np.maximum, AccKind.MIN: np.minimum}

# --------------------------------------------------------------------------
# Register-to-register instructions


def _src(node: OpNode, core: CoreLike, pos: int) -> np.ndarray:
    shape = node.shapes[pos]
    assert shape is not None
    return core.reg(node.ins.operands[pos], shape)


def _dst(node: OpNode, core: CoreLike) -> np.ndarray:
    assert node.out is not None
    return core.reg(node.ins.operands[0], node.out)


def _typed_scalar(value: float | int | None, dtype: np.dtype) -> Any:
    """A SCALAR operand as a numpy scalar of the register's dtype (unsafe cast, no warnings)."""
    with np.errstate(all="ignore"):
        return np.array(value if value is not None else 0).astype(dtype)[()]


def _bind_copy(node: OpNode, core: CoreLike) -> Fn:
    casting = "unsafe" if node.ins.op.cat is Cat.CONVERT else "same_kind"
    return partial(np.copyto, _dst(node, core), _src(node, core, 1), casting=casting)


def _bind_broadcast(node: OpNode, core: CoreLike) -> Fn:
    return partial(np.copyto, _dst(node, core), _src(node, core, 1))


def _bind_fill(node: OpNode, core: CoreLike) -> Fn:
    dst = _dst(node, core)
    return partial(np.copyto, dst, _typed_scalar(node.scalar, dst.dtype))


def _bind_select(node: OpNode, core: CoreLike) -> Fn:
    d, c, a, b = node.ins.operands
    dst, cond, x, y = (
        _dst(node, core),
        _src(node, core, 1),
        _src(node, core, 2),
        _src(node, core, 3),
    )
    if d in (c, a, b):

        def aliased() -> None:
            np.copyto(dst, np.where(cond, x, y))

        return aliased

    def select() -> None:
        np.copyto(dst, y)
        np.copyto(dst, x, where=cond)

    return select


def _identity(kind: ReduceKind, dtype: np.dtype) -> Any:
    if kind is ReduceKind.SUM:
        return 0
    if kind is ReduceKind.PROD:
        return 1
    if dtype.kind == "f":
        return -np.inf if kind is ReduceKind.MAX else np.inf
    info = np.iinfo(dtype)
    return info.min if kind is ReduceKind.MAX else info.max


_REDUCE_UFUNCS = {
    ReduceKind.SUM: np.add,
    ReduceKind.MAX: np.maximum,
    ReduceKind.MIN: np.minimum,
    ReduceKind.PROD: np.multiply,
}


def _bind_reduce(node: OpNode, core: CoreLike) -> Fn:
    _, _, kind, axes, flags = node.ins.operands
    src, dst = _src(node, core, 1), _dst(node, core)
    axis = tuple(d for d in range(src.ndim) if axes >> d & 1)
    uf = _REDUCE_UFUNCS[kind]
    init = _identity(kind, src.dtype)
    return partial(uf.reduce, src, axis=axis, out=dst, keepdims=bool(flags & 1), initial=init)


def _bind_mma(node: OpNode, core: CoreLike) -> Fn:
    flags = node.ins.operands[3]
    a, b, dst = _src(node, core, 1), _src(node, core, 2), _dst(node, core)
    a = a.swapaxes(-1, -2) if flags & 1 else a
    b = b.swapaxes(-1, -2) if flags & 2 else b
    if not flags & 4:
        return partial(np.matmul, a, b, out=dst)
    scratch = np.empty_like(dst)  # per core and class, allocated once at bind time

    def mma_acc() -> None:
        np.matmul(a, b, out=scratch)
        np.add(dst, scratch, out=dst)

    return mma_acc


# --------------------------------------------------------------------------
# Elementwise


def _rsqrt(x: np.ndarray, out: np.ndarray) -> None:
    np.sqrt(x, out=out)
    np.divide(out.dtype.type(1), out, out=out)


def _sigmoid(x: np.ndarray, out: np.ndarray) -> None:
    np.negative(x, out=out)
    np.exp(out, out=out)
    np.add(out, out.dtype.type(1), out=out)
    np.divide(out.dtype.type(1), out, out=out)


def erf(x: np.ndarray) -> np.ndarray:
    """erf in numpy: exact (math.erf) for f64; for f16/f32 a Taylor series below 0.5
    and Abramowitz-Stegun 7.1.26 above (absolute error < 2e-7)."""
    if x.dtype == np.float64:
        return np.vectorize(math.erf, otypes=[np.float64])(x)
    x64 = x.astype(np.float64)
    a = np.abs(x64)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t) * t
    big = 1.0 - (poly + 0.254829592 * t) * np.exp(-a * a)
    x2 = x64 * x64
    series = [1.0, -1 / 3, 1 / 10, -1 / 42, 1 / 216, -1 / 1320, 1 / 9360, -1 / 75600]
    acc = np.zeros_like(x64)
    for c in reversed(series):
        acc = acc * x2 + c
    small = x64 * acc * (2.0 / math.sqrt(math.pi))
    return np.where(a < 0.5, small, np.sign(x64) * big)


def _erf(x: np.ndarray, out: np.ndarray) -> None:
    np.copyto(out, erf(x), casting="unsafe")


_UNARY: dict[str, Any] = {
    "neg": np.negative,
    "abs": np.absolute,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": _rsqrt,
    "reciprocal": np.reciprocal,
    "tanh": np.tanh,
    "sigmoid": _sigmoid,
    "erf": _erf,
    "floor": np.floor,
    "ceil": np.ceil,
    "round": np.rint,
    "trunc": np.trunc,
    "logical_not": np.logical_not,
    "isfinite": np.isfinite,
}


def _int_div(a: Any, b: Any, out: np.ndarray) -> None:
    """Integer division rounding toward zero; x / 0 = 0."""
    a, b = np.asarray(a), np.asarray(b)
    q = np.floor_divide(a, b)
    fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    np.copyto(out, q + fix, casting="unsafe")
    np.copyto(out, 0, where=b == 0)


def _int_pow(a: Any, b: Any, out: np.ndarray) -> None:
    """Integer power; a negative exponent gives 1/a**|b| rounded toward zero."""
    a, b = np.asarray(a), np.asarray(b)
    neg = b < 0
    r = np.power(a, np.where(neg, 0, b).astype(b.dtype))
    inv = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0))
    np.copyto(out, np.where(neg, inv, r), casting="unsafe")


_BINARY: dict[str, Any] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "pow": np.power,
    "max": np.maximum,
    "min": np.minimum,
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "logical_and": np.logical_and,
    "logical_or": np.logical_or,
}


def _binary_fn(name: str, dtype: DType) -> Any:
    """The function for a binary op on operands of `dtype` (ints divide/pow specially)."""
    if dtype.is_int and name == "div":
        return _int_div
    if dtype.is_int and name == "pow":
        return _int_pow
    return _BINARY[name]


def _bind_unary(node: OpNode, core: CoreLike) -> Fn:
    return partial(_UNARY[node.ins.op.name], _src(node, core, 1), out=_dst(node, core))


def _bind_binary(node: OpNode, core: CoreLike) -> Fn:
    cat, ops = node.ins.op.cat, node.ins.operands
    reg_pos = 2 if cat is Cat.BINARY_SR else 1
    x = _src(node, core, reg_pos)
    fn = _binary_fn(base_name(node.ins.op), DType.from_numpy(x.dtype))
    dst = _dst(node, core)
    if cat is Cat.BINARY:
        return partial(fn, x, _src(node, core, 2), out=dst)
    s = _typed_scalar(node.scalar, x.dtype)
    if cat is Cat.BINARY_RS:
        return partial(fn, x, s, out=dst)
    del ops
    return partial(fn, s, x, out=dst)


_BINDERS: dict[Cat, Callable[[OpNode, CoreLike], Fn | None]] = {
    Cat.LOAD: _bind_load,
    Cat.STORE: _bind_store,
    Cat.STORE_ACC: _bind_store,
    Cat.COPY: _bind_copy,
    Cat.CONVERT: _bind_copy,
    Cat.BROADCAST: _bind_broadcast,
    Cat.FILL: _bind_fill,
    Cat.SELECT: _bind_select,
    Cat.REDUCE: _bind_reduce,
    Cat.MMA: _bind_mma,
    Cat.UNARY: _bind_unary,
    Cat.BINARY: _bind_binary,
    Cat.BINARY_RS: _bind_binary,
    Cat.BINARY_SR: _bind_binary,
}


def bind_op(node: OpNode, core: CoreLike) -> Fn | None:
    """The callable that runs `node` on `core`, or None when it has nothing to do."""
    return _BINDERS[node.ins.op.cat](node, core)
