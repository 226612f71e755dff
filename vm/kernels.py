"""The numpy side of the instructions: what each one computes, as numpy calls.

Both executors call these: the planned one through closures bound once per tile
class (`bind.py`), the unplanned one from its generated code (`unplanned.py`).
Each writes its result with `out=` where numpy can, so an instruction is one
or a few C-level calls and allocates nothing; only the rare integer `div` and
`pow`, `erf` and a `select` into one of its inputs allocate temporaries. The
elementwise instructions' functions are in their ISA rows (`OpDef.kernel`).
"""

from __future__ import annotations

import importlib
import math
from typing import Any

import numpy as np

from dvm.vm.composites import float_to_int
from dvm.vm.errors import TakeIndexError
from dvm.vm.isa import ACCUMULATE, AccKind, Cat, DType, ReduceKind
from dvm.vm.narrow import mma_widened
from dvm.vm.plan import Shape, ViewPlan
from dvm.vm.program import Index, Instr
from dvm.vm.shapes import scatter_mismatch


class _QuietNumpy:
    """Ignore numpy float errors (never raise) on this thread while a launch runs.

    `np.errstate(all="ignore")` rebuilds numpy's error-state object at every use,
    which costs more than a small tile's ufunc call; we build it once and only swap
    numpy's context variable. Those are numpy-private names, so if they are
    missing we fall back to np.errstate.
    """

    def __init__(self) -> None:
        config = importlib.import_module("numpy._core._ufunc_config")
        self.var = getattr(config, "_extobj_contextvar", None)
        make = getattr(config, "_make_extobj", None)
        self.ignore = make(all="ignore") if self.var is not None and make else None

    def enter(self) -> Any:
        """Start ignoring; returns what `exit` needs."""
        if self.var is None or self.ignore is None:
            state = np.errstate(all="ignore")
            state.__enter__()
            return state
        return self.var.set(self.ignore)

    def exit(self, token: Any) -> None:
        """Restore the error state `enter` replaced."""
        if isinstance(token, np.errstate):
            token.__exit__(None, None, None)
        else:
            assert self.var is not None
            self.var.reset(token)


QUIET = _QuietNumpy()
"""Used around every launch, and when binding scalars."""


def counter_pos(source: int) -> int:
    """Position of an index source in `core.idx`: grid axes 0..2, loop levels 3..10."""
    return source - Index.GRID0 if Index.is_grid(source) else 3 + source - Index.LOOP0


def global_view(vp: ViewPlan, a: np.ndarray, empty: np.ndarray | None) -> np.ndarray:
    """The whole view `vp` over array `a` (bounds were proven at specialization)."""
    if empty is not None:
        return empty
    if vp.natural:
        return a if a.shape == vp.sizes else a.reshape(vp.sizes)
    return np.ndarray(vp.sizes, a.dtype, buffer=a, offset=vp.byte_offset, strides=vp.byte_strides)


ACC_UFUNCS = {AccKind.ADD: np.add, AccKind.MAX: np.maximum, AccKind.MIN: np.minimum}


def scan_into(
    ufunc: np.ufunc, src: np.ndarray, carry: np.ndarray, axis: int, exclusive: bool, out: Any
) -> None:
    """out = the running `ufunc` (add or multiply) of src along `axis`, element after
    element from carry as numpy's accumulate runs (so a scan walked in chunks has the
    bits of one over the whole axis); `exclusive` leaves each element out of its own.
    Then carry, in place, is carry combined with all of src."""
    if src.shape[axis] == 0:
        return
    lead = (slice(None),) * axis
    first, last = (*lead, slice(0, 1)), (*lead, slice(-1, None))
    if exclusive:
        running = src.copy()
    else:  # accumulated in place
        running = out
        running[...] = src
    with np.errstate(all="ignore"):  # integers wrap, floats overflow to inf, as numpy's
        ufunc(carry, running[first], out=running[first])
        ufunc.accumulate(running, axis=axis, out=running)
    if exclusive:
        out[first] = carry
        out[(*lead, slice(1, None))] = running[(*lead, slice(0, -1))]
    carry[...] = running[last]


def iota_start(vp: ViewPlan, axis: int) -> tuple[int, int] | None:
    """(counter position, tile size) of the index source tiling dim `axis` of view `vp`,
    None when it is whole: the current tile starts at counter * tile along it."""
    for d, src, tile in vp.tiled:
        if d == axis:
            return counter_pos(src), tile
    return None


def iota_base(shape: Shape, axis: int) -> np.ndarray:
    """0, 1, ... along `axis` of a tile of `shape` (int64, broadcastable to it)."""
    along = [n if d == axis else 1 for d, n in enumerate(shape)]
    return np.arange(shape[axis], dtype=np.int64).reshape(along)


def take_into(out: np.ndarray, tile: np.ndarray, indices: np.ndarray) -> None:
    """out[e] = tile[e, indices[e]] (the tile's last dim is the indexed one), once every
    index is inside it."""
    size = tile.shape[-1]
    if indices.size:
        low, high = int(indices.min()), int(indices.max())
        if low < 0 or high >= size:
            raise TakeIndexError(low if low < 0 else high, size)
    picked = np.broadcast_to(indices, out.shape)[..., None].astype(np.intp)
    out[...] = np.take_along_axis(tile, picked, axis=-1)[..., 0]


def scatter_add_into(
    tile: np.ndarray, updates: np.ndarray, indices: np.ndarray
) -> tuple[str, str] | None:
    """tile[e, indices[e]] += updates[e] for each e in order, as numpy's `add.at` adds
    (the tile's last dim is the indexed one; along a dim where the tile has one element
    every update goes to it), once every index is inside it. A tile the updates do
    not fit is left alone: the reason is returned (`scatter_mismatch`)."""
    why = scatter_mismatch(updates.shape, indices.shape, tile.shape)
    if why is not None:
        return why
    size = tile.shape[-1]
    if updates.size == 0:
        return None
    low, high = int(indices.min()), int(indices.max())
    if low < 0 or high >= size:
        raise TakeIndexError(low if low < 0 else high, size, "scatter_add")
    with np.errstate(all="ignore"):  # integers wrap, floats overflow to inf, as numpy's
        if not _scatter_rows(tile, updates, indices):
            picked = np.broadcast_to(indices, updates.shape).astype(np.intp)
            where = [
                np.zeros((1,) * updates.ndim, np.intp) if t == 1 else e
                for t, e in zip(tile.shape, np.indices(updates.shape, sparse=True), strict=False)
            ]
            np.add.at(tile, (*where, picked), updates)
    return None


def _scatter_rows(tile: np.ndarray, updates: np.ndarray, indices: np.ndarray) -> bool:
    """The common case of `scatter_add_into` as numpy's fast `add.at` of rows, if it is
    one: the indices vary only along dims where the tile has one element (the
    updates' own dims, at stride 0). Those dims become one list of rows, in order, so
    each element receives its updates in the order of the general case."""
    lists = [d for d, t in enumerate(tile.shape[:-1]) if t == 1]
    if any(n != 1 and d not in lists for d, n in enumerate(indices.shape)):
        return False
    kept = [d for d in range(updates.ndim) if d not in lists]
    rows = np.broadcast_to(indices, [n if d in lists else 1 for d, n in enumerate(updates.shape)])
    order = np.transpose(updates, [*lists, *kept])
    spans = tuple(0 if d in lists else slice(None) for d in range(updates.ndim))
    target = np.moveaxis(tile[spans], -1, 0)  # a view of the tile (indexing never copies)
    flat = order.reshape(-1, *order.shape[len(lists) :])
    np.add.at(target, rows.reshape(-1).astype(np.intp), flat)
    return True


def typed_scalar(value: float | int | None, dtype: np.dtype) -> Any:
    """A SCALAR operand as a read-only 0-d array of the register's dtype (no warnings):
    a float type rounds it; an integer type takes an f64 immediate truncated and
    saturated at its range (so 2.0**63, the f64 nearest the i64 maximum, is that
    maximum) and wraps a slot's value around. A ufunc takes a 0-d array faster
    than a numpy scalar, which it converts to one on every call, and promotes both
    alike. Memoized (NaN, which equals nothing, is simply converted each time)."""
    key = (value, type(value) is float and signed_zero(value), dtype)  # (ints: no call)
    got = _SCALARS.get(key)
    if got is None:
        if (
            type(value) is int
            and dtype.kind == "f"
            and dtype.itemsize >= 4
            and -EXACT < value < EXACT
        ):
            got = np.array(value, dtype)  # exact, so no cast to make quiet (slot values: dims)
        elif type(value) is float and dtype.kind in "iu":
            got = np.empty((), dtype)
            float_to_int(np.array(value), out=got)
        else:
            token = QUIET.enter()
            try:
                got = np.array(value if value is not None else 0).astype(dtype)
            finally:
                QUIET.exit(token)
        got.flags.writeable = False
        if len(_SCALARS) < 4096:
            _SCALARS[key] = got
    return got


_SCALARS: dict[tuple[float | int | None, bool, np.dtype], Any] = {}


def signed_zero(value: float | int | None) -> bool:
    """Whether `value` is the float -0.0, which equals 0.0 (and hashes alike) but
    is a value of its own: memo keys hold this beside it."""
    return type(value) is float and value == 0 and math.copysign(1.0, value) < 0


EXACT = 1 << 24
"""Integers of smaller magnitude are exact in float32 and float64."""


ROW_SCALAR_UFUNCS = (np.maximum, np.minimum)
"""numpy 2.4's maximum and minimum run 2-4 times slower with a 0-d operand than with an
array of the tile's shape (their SIMD loops take two contiguous operands; a row broadcast
along the tile is between the two, and no faster than 0-d for a last dim of 16): a
relu on 18,000 floats takes 7.2 us with a 0-d zero, 2.5 us with a tile of zeros."""

FULL_SCALAR_ELEMENTS = 1 << 19
"""The largest tile whose SCALAR operand of ROW_SCALAR_UFUNCS is a whole tile of that
value (a view of one shared buffer per value and dtype); larger ones take a row."""


def scalar_operand(fn: Any, value: float | int | None, dtype: np.dtype, shape: Any) -> Any:
    """A SCALAR operand of `fn` on tiles of `shape`: `typed_scalar`, or for the ufuncs of
    ROW_SCALAR_UFUNCS a read-only array of that value (the same values, broadcast alike):
    the tile's shape when it has at most FULL_SCALAR_ELEMENTS, else a row as long as its
    last dim."""
    scalar = typed_scalar(value, dtype)
    if fn not in ROW_SCALAR_UFUNCS or not shape:
        return scalar
    n = math.prod(shape)
    if n <= FULL_SCALAR_ELEMENTS:
        return _filled(scalar, dtype, n)[:n].reshape(shape)
    if shape[-1] < 8:
        return scalar
    key = (value, signed_zero(value), dtype, shape[-1])
    got = _ROWS.get(key)
    if got is None:
        got = np.full(shape[-1], scalar, dtype)
        got.flags.writeable = False
        if len(_ROWS) < 4096:
            _ROWS[key] = got
    return got


_ROWS: dict[tuple[float | int | None, bool, np.dtype, int], np.ndarray] = {}


def _filled(scalar: Any, dtype: np.dtype, n: int) -> np.ndarray:
    """A read-only buffer of at least `n` elements of `scalar`, shared by every tile of
    that value and dtype (grown by doubling; at most 16 values kept, each at most
    FULL_SCALAR_ELEMENTS, a few MiB in all)."""
    key = (scalar.tobytes(), dtype)  # the bits: -0.0 and NaN are values of their own
    got = _FILLED.get(key)
    if got is not None and got.size >= n:
        return got
    size = max(n, 1024) if got is None else min(max(n, 2 * got.size), FULL_SCALAR_ELEMENTS)
    got = np.full(size, scalar, dtype)
    got.flags.writeable = False
    if len(_FILLED) < 16 or key in _FILLED:
        _FILLED[key] = got
    return got


_FILLED: dict[tuple[bytes, np.dtype], np.ndarray] = {}


def converter(src: DType, dst: DType) -> Any | None:
    """The kernel (`fn(x, out=r)`) of a `convert` from `src` to `dst` where numpy's
    assignment does not compute it: float to integer (truncated, saturated, NaN 0);
    None where assignment does (integers wrap, floats round to nearest even)."""
    return float_to_int if src.is_float and dst.is_int else None


def select_into(dst: np.ndarray, cond: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
    """dst = cond ? x : y without temporaries (dst is none of the inputs)."""
    np.copyto(dst, y)
    np.copyto(dst, x, where=cond)


def select_overlapping(dst: np.ndarray, cond: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
    """When dst is also an input: go through a temporary."""
    np.copyto(dst, np.where(cond, x, y))


def reduce_identity(kind: ReduceKind, dtype: np.dtype) -> Any:
    """What a reduction over no elements gives."""
    if kind is ReduceKind.SUM:
        return 0
    if kind is ReduceKind.PROD:
        return 1
    if DType.from_numpy(dtype).is_float:
        return -np.inf if kind is ReduceKind.MAX else np.inf
    info = np.iinfo(dtype)
    return info.min if kind is ReduceKind.MAX else info.max


REDUCE_UFUNCS = {
    ReduceKind.SUM: np.add,
    ReduceKind.MAX: np.maximum,
    ReduceKind.MIN: np.minimum,
    ReduceKind.PROD: np.multiply,
}


def ones_vector(n: int, column: bool, dtype: np.dtype) -> np.ndarray:
    """A vector (or column) of n ones (see `ones`), memoized: an unplanned launch asks
    per tile."""
    key = (n, column, dtype.char)
    got = _ONES_VECTORS.get(key)
    if got is None:
        got = ones((n, 1) if column else (n,), dtype)
        if len(_ONES_VECTORS) < 4096:
            _ONES_VECTORS[key] = got
    return got


_ONES_VECTORS: dict[tuple[int, bool, str], np.ndarray] = {}


def ones(shape: Shape, dtype: np.dtype) -> np.ndarray:
    """A read-only array of ones: a view of one buffer per dtype, grown as needed, so a
    new length costs a slice, not an allocation (reductions of new shapes ask often)."""
    n = math.prod(shape)
    base = _ONES.get(dtype)
    if base is None or base.size < n:
        base = np.ones(max(n, 4096), dtype)
        base.flags.writeable = False
        _ONES[dtype] = base
    return base[:n].reshape(shape)


_ONES: dict[np.dtype, np.ndarray] = {}


def matmul_sum_axis(kind: ReduceKind, axes: int, shape: Shape, dtype: np.dtype) -> int | None:
    """The axis of a float sum over exactly one axis before the last, which a batched
    `ones(1, n) @ x.reshape(pre, n, post)` computes faster than `add.reduce` (one BLAS
    call does the whole batch); None for other reductions."""
    float_ok = dtype in (np.dtype(np.float32), np.dtype(np.float64))
    if kind is not ReduceKind.SUM or not float_ok or not axes or axes & (axes - 1):
        return None  # not a float sum over exactly one axis
    axis = axes.bit_length() - 1
    return axis if axis < len(shape) - 1 else None


def middle_sum_operands(
    src: np.ndarray, dst: np.ndarray, axis: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ones row, src as (pre, n, post), dst as (pre, 1, post)) for `matmul_sum_axis`:
    views of C-contiguous arrays (a register, or a copy of anything else)."""
    shape = src.shape
    pre, n, post = math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :])
    x3 = np.ascontiguousarray(src).reshape(pre, n, post)
    return ones((1, n), dst.dtype), x3, dst.reshape(pre, 1, post)


SHORT_AXIS = 16
"""The longest axis a max or min over it runs as pairwise calls (`short_axis`)."""

MANY_OTHERS = 96
"""The fewest elements along the other axes for which it does."""


def short_axis(kind: ReduceKind, axes: int, shape: Shape) -> int | None:
    """The axis of a max or min over one axis of 2 to SHORT_AXIS elements, with at
    least MANY_OTHERS along the others, or None. numpy's reduce walks such an axis
    innermost, a few elements per output element: a (569, 4, 1) tile's max over
    axis 1 takes 20 us, (569, 4, 16) 83 us; n - 1 pairwise `maximum` calls on views
    take 3.6 and 16 us, and give the same values (max and min are exact)."""
    if kind not in (ReduceKind.MAX, ReduceKind.MIN) or not axes or axes & (axes - 1):
        return None
    axis = axes.bit_length() - 1
    n = shape[axis] if axis < len(shape) else 0
    others = math.prod(shape) // n if n else 0
    return axis if 2 <= n <= SHORT_AXIS and others >= MANY_OTHERS else None


def reduce_pairwise(ufunc: np.ufunc, parts: list[np.ndarray], out: np.ndarray) -> None:
    """out = ufunc over the parts, one after the other (out overlaps none of them)."""
    ufunc(parts[0], parts[1], out=out)
    for part in parts[2:]:
        ufunc(out, part, out=out)


def along(x: np.ndarray, axis: int, keep: bool, out: np.ndarray) -> tuple[list[np.ndarray], Any]:
    """(x's slices along `axis`, `out` without it): `reduce_pairwise`'s operands."""
    lead = (slice(None),) * axis
    parts = [x[(*lead, j)] for j in range(x.shape[axis])]
    return parts, out[(*lead, 0)] if keep else out


def reduce_short_axis(
    ufunc: np.ufunc, x: np.ndarray, axis: int, keep: bool, out: np.ndarray
) -> bool:
    """`reduce_pairwise` of x along `axis` into out, if `short_axis` says so (the
    unplanned executor asks per tile); False, doing nothing, otherwise."""
    kind = ReduceKind.MAX if ufunc is np.maximum else ReduceKind.MIN
    if short_axis(kind, 1 << axis, x.shape) is None:
        return False
    reduce_pairwise(ufunc, *along(x, axis, keep, out))
    return True


def _float_sum_of(kind: ReduceKind, rank: int, dtype: np.dtype) -> bool:
    """Whether a reduce is a float sum over a tile of rank >= 2 (BLAS can compute it)."""
    float_ok = dtype in (np.dtype(np.float32), np.dtype(np.float64))
    return kind is ReduceKind.SUM and float_ok and rank >= 2


def blas_row_sum(kind: ReduceKind, axes: int, rank: int, dtype: np.dtype) -> bool:
    """Whether a reduce is a float sum over exactly the last axis of a rank >= 2 tile."""
    return _float_sum_of(kind, rank, dtype) and axes == 1 << (rank - 1)


WHOLE_SUM_BLAS = 8192
"""The fewest elements of a tile whose sum over every axis runs as `sum_of_row_sums`:
on fewer, its two numpy calls cost more than one `add.reduce` (1.3 against 0.8 us on
46 x 25, 1.9 against 1.6 us on 337 x 19, 2.0 against 2.9 us on 90 x 167)."""


def blas_whole_sum(kind: ReduceKind, axes: int, rank: int, dtype: np.dtype) -> bool:
    """Whether a reduce is a float sum over every axis of a rank >= 2 tile (which runs
    as `sum_of_row_sums` on tiles of at least WHOLE_SUM_BLAS elements)."""
    return _float_sum_of(kind, rank, dtype) and axes == (1 << rank) - 1


def sum_of_row_sums(src: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
    """out = the sum of every element of src (rank >= 2): its rows' sums as one BLAS
    product with a ones vector into `rows` (of shape src.shape[:-1]), then their sum,
    three times faster than `add.reduce` over all axes on tiles of a few hundred KiB."""
    np.matmul(src, ones_vector(src.shape[-1], False, out.dtype), out=rows)
    np.add.reduce(rows.reshape(-1), axis=0, keepdims=True, out=out.reshape(1))


def mma_acc(a: np.ndarray, b: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> None:
    """dst += a @ b through a scratch buffer allocated at bind time."""
    np.matmul(a, b, out=scratch)
    np.add(out, scratch, out=out)


def mma_into(
    a: np.ndarray,
    b: np.ndarray,
    out: np.ndarray,
    ta: bool,
    tb: bool,
    acc: bool,
    wide: bool,
    scratch: np.ndarray | None,
) -> None:
    """out (+)= op(a) @ op(b), the transposes taken per call (for alias registers, which
    are fetched per call, and a fused store's tile); `wide`: out is a float narrower
    than f32, multiplied in f32 (decided at bind time); `scratch` as `mma_widened` or
    `mma_acc` need it."""
    a = a.swapaxes(-1, -2) if ta else a
    b = b.swapaxes(-1, -2) if tb else b
    if wide:
        assert scratch is not None
        mma_widened(a, b, out, acc, scratch)
    elif acc and scratch is not None:
        mma_acc(a, b, out, scratch)
    elif acc:
        out += np.matmul(a, b)
    else:
        np.matmul(a, b, out=out)


STRIDED_WRONG = frozenset([np.negative, np.isfinite, np.isinf, np.isnan, np.signbit])
"""Ufuncs that numpy 2.4 computes wrongly into an output with no axis of unit stride
(e.g. `negative` from every 4th 4-byte element into every other one reads the input as
if contiguous; `isfinite` writing every other bool): see `into_strided`."""


def unit_stride(out: np.ndarray) -> bool:
    """Whether `out` has an axis of more than one element laid out contiguously (numpy
    iterates it innermost), or holds at most one element."""
    item = out.itemsize
    return out.size <= 1 or any(
        n > 1 and s == item for n, s in zip(out.shape, out.strides, strict=True)
    )


POSITIONAL_OUT: dict[Any, int] = {
    fn: fn.nin
    for fn in vars(np).values()
    if type(fn) is np.ufunc and fn.nout == 1 and fn not in (np.maximum, np.minimum)
}
"""numpy's ufuncs of one output that take it by position (but `maximum` and `minimum`,
whose `out` by position numpy deprecates), with the operands they take."""


def out_by_position(fn: Any, operands: int) -> bool:
    """Whether `fn` of `operands` operands takes its `out` by position (`POSITIONAL_OUT`):
    numpy parses a keyword on every call (a 2x3 tile's `multiply` costs 0.4 us with `out`
    by position, 0.6 with the keyword)."""
    return POSITIONAL_OUT.get(fn) == operands


def for_store(fn: Any, fused: bool) -> Any:
    """A unary op's function, where it writes the tile of the store after it (`fused`)
    or a register: `into_strided` for the ufuncs of `STRIDED_WRONG` in the first case."""
    return into_strided(fn) if fused and fn in STRIDED_WRONG else fn


def into_strided(fn: Any) -> Any:
    """`fn(x, out=o)` for a ufunc of `STRIDED_WRONG` that writes the tile of a store, a
    view of global memory whose layout is the program's: an `o` with no axis of unit
    stride gets the result through a contiguous temporary (numpy computes that one
    right); registers and tiles of contiguous rows take the direct call."""

    def run(x: Any, out: np.ndarray) -> None:
        if unit_stride(out):
            fn(x, out=out)
        else:
            out[...] = fn(x)

    return run


_ELEMENTWISE = (Cat.UNARY, Cat.BINARY, Cat.BINARY_RS, Cat.BINARY_SR)


def fusable(ins: Instr) -> bool:
    """Whether an instruction can write the tile of the store after it (planned and
    unplanned launches fuse such pairs): an elementwise op, or an mma that does not
    accumulate into its destination."""
    cat = ins.op.cat
    return cat in _ELEMENTWISE or (cat is Cat.MMA and not ins.operands[3] & ACCUMULATE)
