"""numpy functions that are a few recorded ops each, written as numpy writes them:
`isclose` and `allclose`, `nansum` and `nanmean`, `diag`, `diagonal` and `trace`.

Each handler takes numpy's arguments, lazy arrays already as their nodes, and returns
the result's node, or None where it does not record the call (the caller then runs
numpy, which computes the result or raises numpy's own error).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dvm.lazy import numpy_api, record
from dvm.lazy.functions import masked, reduction
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


def diag(v: Operand, k: Any = 0) -> Node | None:
    """A 2-d array's `k`th diagonal (a take of its elements, numbered now), or the
    square array with a 1-d array on its diagonal (`where` over an identity)."""
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
    return numpy_api.take(v, Node.of(flat.astype(np.int64)), None)


def diagonal(a: Operand, offset: Any = 0, axis1: Any = 0, axis2: Any = 1) -> Node | None:
    """A 2-d array's diagonal (numpy's is a read-only view; this is a copy)."""
    if type(a) is not Node or a.ndim != 2 or (axis1, axis2) != (0, 1):
        return None
    return diag(a, offset)


def trace(a: Operand, offset: Any = 0, axis1: Any = 0, axis2: Any = 1, dtype: Any = None,
          out: Any = None) -> Node | None:  # fmt: skip
    """The sum of a 2-d array's diagonal, in `np.sum`'s dtypes."""
    if type(a) is not Node or a.ndim != 2 or (axis1, axis2) != (0, 1) or out is not None:
        return None
    diagonal = diag(a, offset)
    return None if diagonal is None else SUM(diagonal, None, dtype)


FUNCTIONS: dict[Any, Any] = {
    np.isclose: isclose, np.allclose: allclose, np.nansum: nansum, np.nanmean: nanmean,
    np.diag: diag, np.diagonal: diagonal, np.trace: trace,
}  # fmt: skip
"""This module's handlers (`array.FUNCTIONS` takes them in)."""
