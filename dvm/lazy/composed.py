"""numpy functions that are a few recorded ops each, written as numpy writes them:
`isclose` and `allclose`, `nansum` and `nanmean`, `diag`, `diagonal` and `trace`,
`gradient`, `convolve` and `heaviside`.

Each handler takes numpy's arguments, lazy arrays already as their nodes, and returns
the result's node, or None where it does not record the call (the caller then runs
numpy, which computes the result or raises numpy's own error).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dvm.lazy import numpy_api, record
from dvm.lazy.arrange import cut
from dvm.lazy.functions import View, masked, reduction
from dvm.lazy.graph import Node, is_supported
from dvm.lazy.numpy_api import Operand, is_int
from dvm.lazy.segment import flush

BOOL = np.dtype(np.bool_)


class NotRecorded(Exception):
    """An op of a composite the dialect does not record: numpy runs the whole call."""


def apply(function: np.ufunc, *operands: Any) -> Any:
    """`function(*operands)`: recorded if an operand is a node, else numpy's scalar."""
    if not any(type(x) is Node for x in operands):
        return function(*operands)
    made = numpy_api.ufunc(function, operands)
    if made is None:
        raise NotRecorded
    return made


def is_number(x: Any) -> bool:
    return isinstance(x, int | float | np.integer | np.floating) and not isinstance(x, bool)


def isclose(a: Operand, b: Operand, rtol: Any = 1e-05, atol: Any = 1e-08,
            equal_nan: Any = False) -> Node | None:  # fmt: skip
    """numpy's `|a - b| <= atol + rtol |b|` where `b` is finite, or `a == b` (and
    both NaN with `equal_nan`), `b` first made inexact as numpy makes it."""
    if not any(type(x) is Node for x in (a, b)) or not isinstance(equal_nan, bool):
        return None
    if not (is_number(rtol) and is_number(atol) and math.isfinite(rtol) and math.isfinite(atol)):
        return None  # (numpy warns of tolerances that are not finite)
    if isinstance(a, np.ndarray | np.generic):
        a = Node.of(np.asarray(a))
    if isinstance(b, np.ndarray | np.generic):
        b = Node.of(np.asarray(b))
    if any(numpy_api.operand_dtype(x) is None for x in (a, b)):
        return None
    if type(b) is Node:
        inexact = np.result_type(b.dtype, 1.0)
        if not is_supported(inexact):
            return None
        b = b if b.dtype == inexact else record.convert(b, inexact)
    elif type(b) is int:
        b = float(b)
    try:
        bound = apply(np.add, atol, apply(np.multiply, rtol, apply(np.absolute, b)))
        near = apply(np.less_equal, apply(np.absolute, apply(np.subtract, a, b)), bound)
        finite = apply(np.logical_and, near, apply(np.isfinite, b))
        result = apply(np.logical_or, finite, apply(np.equal, a, b))
        if equal_nan:
            both = apply(np.logical_and, apply(np.isnan, a), apply(np.isnan, b))
            result = apply(np.logical_or, result, both)
    except NotRecorded:
        return None
    return result if type(result) is Node else None


def allclose(a: Operand, b: Operand, rtol: Any = 1e-05, atol: Any = 1e-08,
             equal_nan: Any = False) -> bool | None:  # fmt: skip
    """`isclose` everywhere, as a Python bool: a value now (a sync point)."""
    close = isclose(a, b, rtol, atol, equal_nan)
    every = None if close is None else numpy_api.logical_reduction("all", close)
    if every is None:
        return None
    flush([every])
    assert every.value is not None
    return bool(every.value)


def not_nan(a: Node) -> Node | None:
    """Where `a` is a number (numpy's `_replace_nan` mask)."""
    nan = numpy_api.ufunc(np.isnan, [a])
    return None if nan is None else numpy_api.ufunc(np.logical_not, [nan])


def nansum(a: Operand, axis: Any = None, dtype: Any = None, out: Any = None,
           keepdims: Any = False, **rest: Any) -> Node | None:  # fmt: skip
    """The sum of what is not NaN (0 for none): `np.sum(where=)` of the numbers."""
    if out is not None or rest or type(a) is not Node or not is_supported(a.dtype):
        return None
    if a.dtype.kind != "f":
        return SUM(a, axis, dtype, None, keepdims)
    numbers = not_nan(a)
    return None if numbers is None else masked("sum", a, axis, dtype, keepdims, numbers)


def nanmean(a: Operand, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: Any = False, **rest: Any) -> Node | None:  # fmt: skip
    """The mean of what is not NaN (NaN for none), in the floats' dtype: `np.mean(where=)`
    of the numbers. Not floats: the mean."""
    if out is not None or rest or dtype is not None or type(a) is not Node:
        return None
    if a.dtype.kind != "f":
        return numpy_api.reduction("mean", a, axis, keepdims)
    numbers = not_nan(a)
    return None if numbers is None else masked("mean", a, axis, None, keepdims, numbers)


SUM = reduction("sum")


def diag(v: Operand, k: Any = 0) -> Node | View | None:
    """A 2-d array's `k`th diagonal (a take of its elements, numbered now: a view, as
    numpy's read-only one), or the square array with a 1-d array on its diagonal
    (`where` over an identity)."""
    if type(v) is not Node or not is_int(k) or v.ndim not in (1, 2):
        return None
    k = int(k)
    if v.ndim == 1:
        n = v.shape[0] + abs(k)
        placed = np.eye(n, k=k, dtype=bool)
        if not v.shape[0]:
            return Node.of(np.zeros((n, n), v.dtype))  # (nothing to place)
        zero = numpy_api.as_node(0, v.dtype)
        along = np.zeros((n, n), np.int64)
        along[placed] = np.arange(v.shape[0])
        spread = numpy_api.take(v, Node.of(along), 0)
        if zero is None or spread is None:
            return None
        return record.elementwise("select", [Node.of(placed), spread, zero], v.dtype)
    rows, columns = v.shape
    start = (0, k) if k >= 0 else (-k, 0)
    length = max(0, min(rows - start[0], columns - start[1]))
    flat = (start[0] + np.arange(length)) * columns + start[1] + np.arange(length)
    taken = numpy_api.take(v, Node.of(flat.astype(np.int64)), None)
    return None if taken is None else View(taken, v, lambda a: np.diagonal(a, k))


def diagonal(a: Operand, offset: Any = 0, axis1: Any = 0, axis2: Any = 1) -> Node | View | None:
    """A 2-d array's diagonal: a view of it, read-only as numpy's."""
    if type(a) is not Node or a.ndim != 2 or (axis1, axis2) != (0, 1):
        return None
    return diag(a, offset)


def trace(a: Operand, offset: Any = 0, axis1: Any = 0, axis2: Any = 1, dtype: Any = None,
          out: Any = None) -> Node | None:  # fmt: skip
    """The sum of a 2-d array's diagonal, in `np.sum`'s dtypes."""
    if type(a) is not Node or a.ndim != 2 or (axis1, axis2) != (0, 1) or out is not None:
        return None
    diagonal = diag(a, offset)
    return SUM(diagonal.node, None, dtype) if isinstance(diagonal, View) else None


def gradient(f: Operand, *varargs: Any, axis: Any = None, edge_order: Any = 1) -> Any:
    """numpy's central differences `(f[2:] - f[:-2]) / (2 h)` inside, one-sided ones
    `(f[1] - f[0]) / h` at the two ends, along each axis asked; integers in float64.
    Spacings other than one number per axis, and `edge_order=2`, run in numpy."""
    if type(f) is not Node or not f.ndim or edge_order != 1 or f.dtype.kind not in "iuf":
        return None
    axes = list(range(f.ndim)) if axis is None else [axis] if is_int(axis) else axis
    if not isinstance(axes, list | tuple) or not all(is_int(k) for k in axes):
        return None
    axes = [int(k) + f.ndim if -f.ndim <= k < 0 else int(k) for k in axes]
    if len(set(axes)) != len(axes) or not all(0 <= k < f.ndim for k in axes):
        return None  # (numpy's error)
    spacings = list(varargs) * len(axes) if len(varargs) == 1 else list(varargs)
    if not spacings:
        spacings = [1.0] * len(axes)
    plain = all(type(h) in (int, float) for h in spacings)
    if len(spacings) != len(axes) or not plain or any(f.shape[k] < 2 for k in axes):
        return None
    values = f if f.dtype.kind == "f" else record.convert(f, np.dtype(np.float64))
    try:
        slopes = [differences(values, k, float(h)) for k, h in zip(axes, spacings, strict=True)]
    except NotRecorded:
        return None
    if not all(type(s) is Node for s in slopes):
        return None
    return slopes[0] if len(slopes) == 1 else tuple(slopes)


def differences(f: Node, axis: int, spacing: float) -> Node | None:
    """`np.gradient`'s result along one axis of at least 2 elements."""
    n = f.shape[axis]
    pieces = [step(f, axis, 0, 1, 1, spacing)]
    if n > 2:
        pieces.append(step(f, axis, 0, n - 2, 2, 2.0 * spacing))
    pieces.append(step(f, axis, n - 2, 1, 1, spacing))
    return record.concat(pieces, axis)


def step(f: Node, axis: int, start: int, size: int, reach: int, divisor: float) -> Node:
    """`(f[start + reach:][:size] - f[start:][:size]) / divisor` along `axis`."""
    change = apply(np.subtract, cut(f, axis, start + reach, size), cut(f, axis, start, size))
    return apply(np.divide, change, divisor)


MAX_KERNEL = 16
"""The longest `convolve` kernel recorded: three ops per weight."""


def convolve(a: Operand, v: Operand, mode: Any = "full") -> Node | None:
    """A lazy 1-d signal convolved with a kernel of known numbers (a moving average's
    `np.ones(k) / k`): the sum, over the kernel's weights, of each weight times the
    signal zero-padded and shifted; `same` and `valid` are numpy's parts of that.
    Kernels with NaN or infinities (whose products with the padding numpy never
    forms), float16 (numpy sums its products in float32) and bools run in numpy."""
    signal, kernel = (a, v) if type(a) is Node else (v, a)
    if type(signal) is not Node or type(kernel) is Node or signal.ndim != 1:
        return None
    if not isinstance(mode, str) or mode not in ("full", "same", "valid"):
        return None
    weights = np.asarray(kernel) if isinstance(kernel, np.ndarray | list | tuple) else None
    if weights is None or weights.ndim != 1 or not 0 < weights.size <= MAX_KERNEL:
        return None
    if weights.dtype.kind not in "iuf" or not signal.shape[0]:
        return None
    dtype = np.result_type(signal.dtype, weights.dtype)
    if dtype.kind not in "iuf" or dtype == np.float16 or not is_supported(dtype):
        return None
    if dtype.kind == "f" and not np.isfinite(weights).all():
        return None
    n, m = signal.shape[0], weights.size
    padding = Node.of(np.zeros(m - 1, dtype))
    values = signal if signal.dtype == dtype else record.convert(signal, dtype)
    padded = record.concat([padding, values, padding], 0) if m > 1 else values
    if padded is None:
        return None
    try:
        total: Any = None
        for j, weight in enumerate(weights):
            term = apply(np.multiply, cut(padded, 0, m - 1 - j, n + m - 1), dtype.type(weight))
            total = term if total is None else apply(np.add, total, term)
    except NotRecorded:
        return None
    longest, shortest = max(n, m), min(n, m)
    if mode == "same":
        return cut(total, 0, (shortest - 1) // 2, longest)
    if mode == "valid":
        return cut(total, 0, shortest - 1, longest - shortest + 1)
    return total


def heaviside(x1: Operand, x2: Operand) -> Node | None:
    """numpy's `heaviside`: 0 below zero, 1 above, `x2` at zero, NaN where `x1` is."""
    dtypes = (numpy_api.operand_dtype(x1), numpy_api.operand_dtype(x2))
    loop = None if numpy_api.missing(dtypes) else numpy_api.resolved(np.heaviside, dtypes)
    if loop is None or not (type(x1) is Node or type(x2) is Node):
        return None
    x, h = numpy_api.as_node(x1, loop[0]), numpy_api.as_node(x2, loop[1])
    zero, one = numpy_api.as_node(0.0, loop[2]), numpy_api.as_node(1.0, loop[2])
    if x is None or h is None or zero is None or one is None or not numpy_api.broadcasts(x, h):
        return None
    below = numpy_api.ufunc(np.less, [x, zero])
    above = numpy_api.ufunc(np.greater, [x, zero])
    if below is None or above is None:
        return None
    steps = record.elementwise("select", [above, one, h], loop[2])
    steps = None if steps is None else record.elementwise("select", [below, zero, steps], loop[2])
    nan = numpy_api.ufunc(np.isnan, [x])
    if steps is None or nan is None:
        return None
    return record.elementwise("select", [nan, x, steps], loop[2])


FUNCTIONS: dict[Any, Any] = {
    np.isclose: isclose, np.allclose: allclose, np.nansum: nansum, np.nanmean: nanmean,
    np.diag: diag, np.diagonal: diagonal, np.trace: trace, np.gradient: gradient,
    np.convolve: convolve,
}  # fmt: skip
"""This module's handlers (`array.FUNCTIONS` takes them in)."""
