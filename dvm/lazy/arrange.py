"""numpy's functions that rearrange elements (`flip`, `roll`, `tile`, `repeat`, `pad`,
`take_along_axis`, `diff`, `tril`/`triu`) and small reductions built of others (`ptp`,
`count_nonzero`, `average`), recorded as the dialect's ops.

Each handler takes numpy's arguments as `functions` handlers do (lazy arrays as their
nodes) and returns a `Node`, a `View`, or None where it does not record the call (numpy
then runs it, and raises numpy's own error for bad arguments). Most are compositions:
a roll is two slices and a concat, a tile a broadcast between unit dims and a reshape,
a constant pad a concat with broadcast fills; `flip` is `tensor.reverse` and
`take_along_axis` is the dialect's own op.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dvm.lazy import numpy_api, record
from dvm.lazy.functions import View, concatenate, where
from dvm.lazy.graph import Node, is_supported
from dvm.lazy.numpy_api import is_int
from dvm.lazy.segment import flush
from dvm.vm.isa import MAX_RANK

INT64 = np.dtype(np.int64)
TRUE = Node.of(np.ones((), np.bool_))
"""The condition of a `select` that takes its first value everywhere."""
TRUE.value.setflags(write=False)  # type: ignore[union-attr]


def cut(x: Node, axis: int, start: int, size: int) -> Node:
    """`x[..., start:start + size, ...]` along `axis`."""
    specs: list[tuple[int, int, int] | None] = [None] * x.ndim
    specs[axis] = (start, size, 1)
    return record.extract_slice(x, specs)


def flip(m: Any, axis: Any = None) -> View | Node | None:
    if not isinstance(m, Node):
        return None
    axes = numpy_api.normalized_axes(axis, m.ndim)
    if axes is None:
        return None
    if not m.shape:  # (numpy's `m[()]`: a scalar, no view)
        return record.convert(m, m.dtype)
    node = record.reverse(m, axes) if axes else record.convert(m, m.dtype)
    return View(node, m, lambda v: np.flip(v, axis))


def flip_rows(m: Any) -> View | Node | None:
    """`flipud`: the first axis reversed (numpy wants one at least)."""
    return flip(m, 0) if isinstance(m, Node) and m.ndim >= 1 else None


def flip_columns(m: Any) -> View | Node | None:
    """`fliplr`: the second axis reversed (numpy wants two at least)."""
    return flip(m, 1) if isinstance(m, Node) and m.ndim >= 2 else None


def roll(a: Any, shift: Any, axis: Any = None) -> Node | None:
    """One int shift along one axis, or along the flattened array (`axis=None`); or
    shifts along axes (`np.roll(x, (1, 2), axis=(0, 1))`), one roll after another."""
    if isinstance(a, Node) and axis is not None and not (is_int(shift) and is_int(axis)):
        return roll_axes(a, shift, axis)
    if not isinstance(a, Node) or not is_int(shift) or not (axis is None or is_int(axis)):
        return None
    found = numpy_api.flattened(a, axis)
    if found is None:
        return None
    x, along = found
    n = x.shape[along]
    s = int(shift) % n if n else 0
    rolled = (
        record.concat([cut(x, along, n - s, s), cut(x, along, 0, n - s)], along)
        if s
        else record.convert(x, x.dtype)
    )
    return rolled if axis is not None or rolled is None else record.reshape(rolled, a.shape)


def roll_axes(a: Node, shift: Any, axis: Any) -> Node | None:
    """numpy's shifts and axes broadcast together (a lone one pairs with each of the
    others), each axis rolled by the sum of its shifts."""
    shifts = list(shift) if isinstance(shift, list | tuple) else [shift]
    axes = list(axis) if isinstance(axis, list | tuple) else [axis]
    if len(shifts) != len(axes) and 1 not in (len(shifts), len(axes)):
        return None
    count = max(len(shifts), len(axes))
    if not all(map(is_int, shifts + axes)) or not all(-a.ndim <= k < a.ndim for k in axes):
        return None
    totals = [0] * a.ndim
    for s, k in zip(shifts * (count // len(shifts)), axes * (count // len(axes)), strict=True):
        totals[int(k) % a.ndim] += int(s)
    x: Node | None = a
    for k, total in enumerate(totals):
        if total and x is not None:
            x = roll(x, total, k)
    return x if x is not a else record.convert(a, a.dtype)


def rot90(m: Any, k: Any = 1, axes: Any = (0, 1)) -> View | None:
    """numpy's own composition: a flip of one of the two axes and a transpose swapping
    them (one turn), a flip of both (two), or a transpose and a flip (three); a view."""
    if not isinstance(m, Node) or not is_int(k) or not isinstance(axes, list | tuple):
        return None
    if len(axes) != 2 or not all(is_int(a) and -m.ndim <= a < m.ndim for a in axes):
        return None
    first, second = (int(a) % m.ndim for a in axes)
    if first == second:
        return None
    turns = int(k) % 4
    perm = list(range(m.ndim))
    perm[first], perm[second] = second, first
    if turns == 0:
        node = record.convert(m, m.dtype)
    elif turns == 2:
        node = record.reverse(m, tuple(sorted((first, second))))
    elif turns == 1:
        node = record.transpose(record.reverse(m, (second,)), tuple(perm))
    else:
        node = record.reverse(record.transpose(m, tuple(perm)), (second,))
    return View(node, m, lambda v: np.rot90(v, int(k), (first, second)))


def spread(x: Node, counts: Sequence[int], before: bool) -> Node | None:
    """Each dim d of `x` repeated `counts[d]` times: as whole copies of the array along
    it (`tile`: a unit dim before the dim), or element by element (`repeat`: after).
    Only the dims repeated more than once get a unit dim (the first, if none is: the
    result is still a new array), as many at a time as the VM's ranks allow (they end
    at 8: a 5-d array tiled along one dim is 6-d on the way, not 10-d)."""
    spread_dims = [d for d in range(x.ndim) if counts[d] != 1] or [0]
    room = max(MAX_RANK - x.ndim, 1)
    if len(spread_dims) > room:
        now = [c if d in spread_dims[:room] else 1 for d, c in enumerate(counts)]
        first = spread(x, now, before)
        later = [c if d in spread_dims[room:] else 1 for d, c in enumerate(counts)]
        return None if first is None else spread(first, later, before)
    positions = tuple(d + k + (0 if before else 1) for k, d in enumerate(spread_dims))
    grown = record.insert_unit_dims(x, positions)
    target: list[int] = []
    fixed: list[int | None] = []  # (the counts are constants of the program)
    for d, n in enumerate(x.shape):
        if d not in spread_dims:
            target.append(n)
            fixed.append(None)
        else:
            target += [counts[d], n] if before else [n, counts[d]]
            fixed += [counts[d], None] if before else [None, counts[d]]
    wide = record.broadcast_to(grown, tuple(target), tuple(fixed))
    shape = tuple(n * c for n, c in zip(x.shape, counts, strict=True))
    return None if wide is None else record.reshape(wide, shape)


def tile(A: Any, reps: Any) -> Node | None:
    counts = (reps,) if is_int(reps) else reps
    if not isinstance(A, Node) or not isinstance(counts, tuple | list):
        return None
    if not counts or not all(is_int(c) and c > 0 for c in counts):
        return None
    counts = [int(c) for c in counts]
    x = A
    if len(counts) > x.ndim:  # numpy prepends unit dims to the array, or 1s to reps
        x = record.insert_unit_dims(x, tuple(range(len(counts) - x.ndim)))
    counts = [1] * (x.ndim - len(counts)) + counts
    return spread(x, counts, before=True)


def repeat(a: Any, repeats: Any, axis: Any = None) -> Node | None:
    """One int count for every element (an array of counts runs in numpy)."""
    if not isinstance(a, Node) or not is_int(repeats) or repeats <= 0:
        return None
    found = numpy_api.flattened(a, axis)
    if found is None:
        return None
    x, along = found
    counts = [int(repeats) if d == along else 1 for d in range(x.ndim)]
    return spread(x, counts, before=False)


def pad(array: Any, pad_width: Any, mode: str = "constant", **kwargs: Any) -> Node | None:
    """The constant mode: the array between fills of `constant_values` (one number);
    the modes that copy the array's own elements (`edge`, `wrap`, `reflect`,
    `symmetric`): a take along each padded axis of positions numbered now."""
    if mode in COPIED and not kwargs and isinstance(array, Node) and array.ndim:
        return copied_pad(array, pad_width, COPIED[mode])
    value = kwargs.pop("constant_values", 0)
    if not isinstance(array, Node) or mode != "constant" or kwargs or array.ndim == 0:
        return None
    if not isinstance(value, int | float | np.number) or isinstance(value, bool | np.bool_):
        return None
    widths = pad_widths(array, pad_width)
    if widths is None:
        return None
    fill = numpy_api.as_node(value, array.dtype)  # (None for an int numpy will not fit)
    if fill is None:
        return None
    if 0 in array.shape:
        return None
    x = array
    for axis, (low, high) in enumerate(widths):
        parts = [fill_beside(x, axis, fill, width) if width else None for width in (low, high)]
        pieces = [p for p in (parts[0], x, parts[1]) if p is not None]
        joined = record.concat(pieces, axis) if len(pieces) > 1 else x
        if joined is None:
            return None
        x = joined
    return x if x is not array else record.convert(array, array.dtype)


def reflected(i: np.ndarray[Any, Any], n: int) -> np.ndarray[Any, Any]:
    """Positions mirrored about the end elements, which are not repeated (period
    2n - 2)."""
    if n == 1:
        return np.zeros_like(i)
    folded = i % (2 * n - 2)
    return np.where(folded < n, folded, 2 * n - 2 - folded)


def symmetric(i: np.ndarray[Any, Any], n: int) -> np.ndarray[Any, Any]:
    """Positions mirrored about the array's edges, the end elements repeated."""
    folded = i % (2 * n)
    return np.where(folded < n, folded, 2 * n - 1 - folded)


COPIED: dict[str, Callable[[np.ndarray[Any, Any], int], np.ndarray[Any, Any]]] = {
    "edge": lambda i, n: np.clip(i, 0, n - 1),
    "wrap": lambda i, n: i % n,
    "reflect": reflected,
    "symmetric": symmetric,
}
"""For each mode of `np.pad` that copies elements, the position each padded position
`i` (from `-before` to `n + after`) reads along an axis of `n`."""


def pad_widths(array: Node, pad_width: Any) -> list[list[int]] | None:
    """`pad_width` as (before, after) per axis, as numpy broadcasts it; None where numpy
    would raise or read it otherwise (negative or not integers)."""
    try:
        widths = np.broadcast_to(np.asarray(pad_width), (array.ndim, 2))
    except ValueError:
        return None
    if widths.dtype.kind not in "iu" or (widths < 0).any():
        return None
    return widths.tolist()


def copied_pad(array: Node, pad_width: Any, position: Callable[..., Any]) -> Node | None:
    widths = pad_widths(array, pad_width)
    if widths is None:
        return None
    x: Node | None = array
    for axis, (low, high) in enumerate(widths):
        n = array.shape[axis]
        if not (low or high) or x is None:
            continue
        if n == 0:
            return None  # (numpy raises: nothing to copy)
        ids = position(np.arange(-low, n + high), n).astype(np.int64)
        x = numpy_api.take(x, Node.of(ids), axis)
    return x if x is not array else record.convert(array, array.dtype)


def fill_beside(x: Node, axis: int, fill: Node, width: int) -> Node | None:
    """`width` slices of `fill` to join to `x` along `axis`: its edge slice with every
    element `fill`, broadcast. Made from `x`, the fill's other sizes are `x`'s by
    structure (`emit.broadcast_names`), not equal by chance to whatever else is as
    large; the width is a constant of the program."""
    edge = cut(x, axis, 0, 1)
    filled = record.elementwise("select", [TRUE, fill, edge], x.dtype)
    if filled is None:
        return None
    shape = tuple(width if a == axis else d for a, d in enumerate(x.shape))
    return record.broadcast_to(
        filled, shape, tuple(width if a == axis else None for a in range(x.ndim))
    )


def take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Node | None:
    """Indices of the array's rank, the other dims as the array's: known now and in
    `[0, n)`, or an `argmax`/`argmin` along an axis of the same size (in range by
    construction). numpy's negative indices and its errors run in numpy."""
    if isinstance(indices, np.ndarray):
        indices = Node.of(indices)
    if not isinstance(arr, Node) or not isinstance(indices, Node) or not is_int(axis):
        return None
    axes = numpy_api.normalized_axes(axis, arr.ndim) if arr.ndim else None
    if axes is None or indices.ndim != arr.ndim or indices.dtype.kind not in "iu":
        return None
    if indices.dtype.itemsize < 4:  # (as `take`: the dialect indexes with i32 or i64)
        return None
    along = axes[0]
    if any(
        i != n for a, (i, n) in enumerate(zip(indices.shape, arr.shape, strict=True)) if a != along
    ):
        return None
    n = arr.shape[along]
    if indices.value is not None:
        ids = indices.value
        if ids.size and not (ids.min() >= 0 and ids.max() < n):
            return None
    elif (
        indices.op not in ("argmax", "argmin") or indices.operands[0].shape[indices.params[0]] != n
    ):
        return None
    return record.take_along_axis(arr, indices, along)


def diff(a: Any, n: int = 1, axis: int = -1, **rest: Any) -> Node | None:
    """`a[1:] - a[:-1]` along `axis`, `n` times (no `prepend`/`append`)."""
    if not isinstance(a, Node) or rest or not is_int(n) or n < 0 or a.dtype == np.bool_:
        return None
    axes = numpy_api.normalized_axes(axis, a.ndim) if a.ndim and is_int(axis) else None
    if axes is None:
        return None
    x: Node | None = a
    for _ in range(n):
        size = x.shape[axes[0]]
        if size == 0:
            return None
        x = numpy_api.ufunc(
            np.subtract, [cut(x, axes[0], 1, size - 1), cut(x, axes[0], 0, size - 1)]
        )
        if x is None:
            return None
    return x if x is not a else record.convert(a, a.dtype)


def triangle(lower: bool) -> Any:
    """`tril` (`lower`) or `triu`: the last two dims' elements on the kept side of
    diagonal `k`, zeros elsewhere."""

    def handler(m: Any, k: Any = 0) -> Node | None:
        if not isinstance(m, Node) or m.ndim < 2 or not is_int(k) or not is_supported(m.dtype):
            return None
        rows, cols = m.shape[-2:]
        row = record.iota((rows, cols), 0, INT64)
        col = record.iota((rows, cols), 1, INT64)
        offset = numpy_api.ufunc(np.subtract, [col, row])
        test = np.less_equal if lower else np.greater_equal
        keep = None if offset is None else numpy_api.ufunc(test, [offset, int(k)])
        return None if keep is None else where(keep, m, m.dtype.type(0))

    return handler


def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: Any = False) -> Node | None:
    if out is not None or not isinstance(a, Node) or a.dtype == np.bool_:
        return None
    high = numpy_api.reduction("max", a, axis, keepdims)
    low = numpy_api.reduction("min", a, axis, keepdims)
    return None if high is None or low is None else numpy_api.ufunc(np.subtract, [high, low])


WHOLE_COUNT: type = type(np.count_nonzero(np.zeros(1)))
"""The type of numpy's `count_nonzero` of a whole array: a Python int in older numpy,
`np.int64` in numpy 2.4."""


def count_nonzero(a: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    """The count along axes; of the whole array a number now, of numpy's type (the
    count recorded with what is pending, then a sync point)."""
    if not isinstance(a, Node) or not is_supported(a.dtype) or not isinstance(keepdims, bool):
        return None
    nonzero = a if a.dtype == np.bool_ else record.convert(a, np.dtype(np.bool_))
    count = numpy_api.reduction("sum", nonzero, axis, keepdims)
    if count is None or axis is not None or keepdims:
        return count
    flush([count])
    assert count.value is not None
    return WHOLE_COUNT(count.value)


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False,
            *, keepdims: Any = False) -> Node | None:  # fmt: skip
    """Without weights: the mean (numpy raises `ZeroDivisionError` for no elements)."""
    if weights is not None or returned or not isinstance(keepdims, bool):
        return None
    axes = numpy_api.normalized_axes(axis, a.ndim) if isinstance(a, Node) else None
    if axes is None:
        return None
    if 0 in a.shape and 0 in [d for k, d in enumerate(a.shape) if k not in axes]:
        return None  # (numpy divides the sizes: 0 / 0 raises)
    return numpy_api.reduction("mean", a, axis, keepdims)


def stack_nodes(tup: Any, dtype: Any, casting: str) -> list[Node] | None:
    """The arrays of `vstack`/`hstack`, as nodes of rank 1 at least (numpy's default
    `dtype` and `casting` only)."""
    if dtype is not None or casting != "same_kind" or not isinstance(tup, list | tuple) or not tup:
        return None
    if not all(isinstance(a, Node | np.ndarray) for a in tup):
        return None
    nodes = [numpy_api.as_node(a, a.dtype) for a in tup]
    if any(n is None for n in nodes):
        return None
    return [record.reshape(n, (1,)) if n.ndim == 0 else n for n in nodes]  # type: ignore[misc]


def vstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Node | None:
    """Rows: 1-d arrays become rows of one."""
    nodes = stack_nodes(tup, dtype, casting)
    if nodes is None:
        return None
    rows = [record.insert_unit_dims(n, (0,)) if n.ndim == 1 else n for n in nodes]
    return concatenate(rows, 0)


def hstack(tup: Any, *, dtype: Any = None, casting: str = "same_kind") -> Node | None:
    """Along the second axis, or the first for 1-d arrays."""
    nodes = stack_nodes(tup, dtype, casting)
    return None if nodes is None else concatenate(nodes, 0 if nodes[0].ndim == 1 else 1)


def column_stack(tup: Any) -> Node | None:
    """Along the second axis, 1-d arrays (and 0-d ones) as columns of one."""
    nodes = stack_nodes(tup, None, "same_kind")
    if nodes is None:
        return None
    columns = [record.insert_unit_dims(n, (1,)) if n.ndim == 1 else n for n in nodes]
    return concatenate(columns, 1)


def outer(a: Any, b: Any, out: Any = None) -> Node | None:
    """`a.ravel()[:, None] * b.ravel()[None, :]`."""
    if out is not None or not all(isinstance(v, Node | np.ndarray) for v in (a, b)):
        return None
    x, y = (numpy_api.as_node(v, v.dtype) for v in (a, b))
    if x is None or y is None:
        return None
    column = record.reshape(x, (math.prod(x.shape), 1))
    row = record.reshape(y, (1, math.prod(y.shape)))
    return None if column is None or row is None else numpy_api.ufunc(np.multiply, [column, row])


def nan_to_num(x: Any, copy: bool = True, nan: float = 0.0, posinf: Any = None,
               neginf: Any = None) -> Node | None:  # fmt: skip
    """NaN to `nan`, infinities to `posinf`/`neginf` (default: the dtype's largest and
    smallest finite values); integers and bools unchanged."""
    if not isinstance(x, Node) or not copy or not is_supported(x.dtype):
        return None
    if x.dtype.kind != "f":
        return record.convert(x, x.dtype)
    info = np.finfo(x.dtype)
    high = info.max if posinf is None else posinf
    low = info.min if neginf is None else neginf
    result: Node | None = x
    value = x.dtype.type
    for test, replacement in (
        (numpy_api.ufunc(np.isnan, [x]), nan),
        (numpy_api.ufunc(np.equal, [x, math.inf]), high),
        (numpy_api.ufunc(np.equal, [x, -math.inf]), low),
    ):
        if test is None or result is None:
            return None
        result = where(test, value(replacement), result)
    return result


def pieces(a: Any, indices_or_sections: Any, axis: Any, equal: bool) -> list[View] | None:
    """`split` (`equal`: sections must divide the axis) and `array_split`: views of
    `a` along `axis`, each a basic slice."""
    if not isinstance(a, Node) or not is_int(axis):
        return None
    axes = numpy_api.normalized_axes(axis, a.ndim) if a.ndim else None
    if axes is None:
        return None
    n = a.shape[axes[0]]
    if is_int(indices_or_sections):
        sections = int(indices_or_sections)
        if sections <= 0 or (equal and n % sections):
            return None
        size, extra = divmod(n, sections)
        ends = np.cumsum([size + 1] * extra + [size] * (sections - extra)).tolist()
        cuts = [0, *ends]
    elif isinstance(indices_or_sections, list | tuple) and all(map(is_int, indices_or_sections)):
        cuts = [0, *map(int, indices_or_sections), n]
    else:
        return None
    made = []
    for start, stop in itertools.pairwise(cuts):
        key = (slice(None),) * axes[0] + (slice(start, stop),)
        node = numpy_api.basic_index(a, key)
        if node is None:
            return None
        made.append(View(node, a, key))
    return made


def linalg_norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Node | None:
    """Vector norms (one axis, or a 1-d array: `ord` None or 2, 1, inf, -inf or another
    p > 0) and the Frobenius norm (`ord` None, or "fro" over two axes); integers in f64,
    as numpy's. Matrix norms of other orders run in numpy."""
    if not isinstance(x, Node) or x.dtype.kind not in "fiu" or not isinstance(keepdims, bool):
        return None
    axes = numpy_api.normalized_axes(axis, x.ndim)
    vector = len(axes or ()) == 1 and (axis is not None or ord is not None)
    if vector:
        p = 2 if ord is None else ord
        if not isinstance(p, int | float) or isinstance(p, bool) or not (p > 0 or p == -math.inf):
            return None
    elif axes is None or ord not in (None, "fro") or (ord == "fro" and len(axes) != 2):
        return None
    else:
        p = 2
    y = x if x.dtype.kind == "f" else record.convert(x, np.dtype(np.float64))
    return vector_norm(y, p, axes, keepdims)


def vector_norm(y: Node, p: float, axis: Any, keepdims: bool) -> Node | None:
    """The p-norm of the float `y` along numpy's `axis`: the largest (inf) or smallest
    (-inf) magnitude, the sum of magnitudes (1), the square root of the sum of squares
    (2), else the sum of magnitudes to the p to the 1/p."""
    size = numpy_api.ufunc(np.absolute, [y])
    if p in (math.inf, -math.inf):
        return numpy_api.reduction("max" if p > 0 else "min", size, axis, keepdims)
    powered = numpy_api.ufunc(np.multiply, [y, y]) if p == 2 else size
    if p not in (1, 2):
        powered = numpy_api.ufunc(np.power, [size, float(p)])
    total = numpy_api.reduction("sum", powered, axis, keepdims)
    if p == 1 or total is None:
        return total
    return (
        numpy_api.ufunc(np.sqrt, [total]) if p == 2 else numpy_api.ufunc(np.power, [total, 1 / p])
    )


def split(a: Any, indices_or_sections: Any, axis: Any = 0) -> list[View] | None:
    return pieces(a, indices_or_sections, axis, equal=True)


def array_split(a: Any, indices_or_sections: Any, axis: Any = 0) -> list[View] | None:
    return pieces(a, indices_or_sections, axis, equal=False)


def insert(arr: Any, obj: Any, values: Any, axis: Any = None) -> Node | None:
    """numpy's `insert` of one number at one position (`np.insert(s, 0, 0.0)`, a
    cumulative sum's leading zero): the array's two parts around the number,
    concatenated, in the array's dtype. The number is cast as numpy casts it; a cast
    numpy rejects or warns of, several positions or values run in numpy."""
    if type(arr) is not Node or not is_supported(arr.dtype) or not is_int(obj):
        return None
    if type(values) not in (int, float, bool):
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            number = np.array(values, dtype=arr.dtype)
    except (ValueError, OverflowError, TypeError, RuntimeWarning):
        return None
    if axis is None:
        source, along = record.reshape(arr, (math.prod(arr.shape),)), 0
    elif is_int(axis) and -arr.ndim <= axis < arr.ndim:
        source, along = arr, int(axis) % arr.ndim
    else:
        return None
    n = source.shape[along] if source is not None else 0
    if source is None or not -n <= obj <= n:
        return None  # (numpy's IndexError)
    at = int(obj) + n if obj < 0 else int(obj)
    lead = (slice(None),) * along
    piece = Node.of(np.full((*source.shape[:along], 1, *source.shape[along + 1 :]), number))
    before = numpy_api.basic_index(source, (*lead, slice(0, at)))
    after = numpy_api.basic_index(source, (*lead, slice(at, n)))
    if before is None or after is None:
        return None
    parts = [part for part in (before, piece, after) if part.shape[along]]
    return record.concat(parts, along)


FUNCTIONS: dict[Any, Any] = {
    np.flip: flip, np.flipud: flip_rows, np.fliplr: flip_columns, np.roll: roll,
    np.rot90: rot90, np.tile: tile, np.repeat: repeat, np.pad: pad,
    np.take_along_axis: take_along_axis, np.diff: diff,
    np.tril: triangle(lower=True), np.triu: triangle(lower=False),
    np.ptp: ptp, np.count_nonzero: count_nonzero, np.average: average,
    np.vstack: vstack, np.hstack: hstack, np.column_stack: column_stack, np.outer: outer,
    np.nan_to_num: nan_to_num, np.insert: insert,
    np.split: split, np.array_split: array_split, np.linalg.norm: linalg_norm,
}  # fmt: skip
"""This module's handlers (`functions.FUNCTIONS` takes them in)."""
