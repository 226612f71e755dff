"""ndarray's named methods on `LazyArray` (`x.sum()`, `x.clip(lo)`, `x.any(axis)`...): each
as numpy's function of the same name, recorded by its handler or run in numpy, with the
method's own arguments where they are not the function's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dvm.lazy import numpy_api
from dvm.lazy.array import LazyArray, dispatch, fallback


def numpy_method(function: Any) -> Any:
    """`x.name(...)` as numpy's `np.name(x, ...)`: recorded by its handler, or run."""
    return lambda self, *args, **kwargs: dispatch(function, (self, *args), kwargs)


def reduction_method(kind: str, function: Any) -> Any:
    """`x.sum(axis, keepdims=...)` (`mean`, `prod`, `max`, `min`) recorded without
    numpy's dispatch; any other argument goes to `np.sum`'s handler, or to numpy."""

    def method(self: LazyArray, axis: Any = None, *args: Any, **kwargs: Any) -> Any:
        if not args and (not kwargs or kwargs.keys() == {"keepdims"}):
            node = numpy_api.reduction(kind, self._node, axis, kwargs.get("keepdims", False))
            if node is not None:
                return LazyArray(node)
        return dispatch(function, (self, axis, *args), kwargs)

    return method


def clip_method(
    self: LazyArray, min: Any = None, max: Any = None, out: Any = None, **kwargs: Any
) -> Any:
    """`x.clip(lo)` is `np.clip(x, lo, None)`: the method's bounds may be left out, the
    function's may not."""
    return dispatch(np.clip, (self, min, max), kwargs if out is None else {"out": out, **kwargs})


def logical_method(function: Any) -> Any:
    """`x.any(axis)` and `x.all(axis)` as the functions; the methods' next arguments are
    not the functions' (numpy reads a `dtype` before `out`), so those run in numpy."""
    name = function.__name__

    def method(self: LazyArray, axis: Any = None, *args: Any, **kwargs: Any) -> Any:
        if args:
            own = getattr(np.ndarray, name)
            return fallback(f"ndarray.{name}", own, (self, axis, *args), kwargs)
        return dispatch(function, (self, axis), kwargs)

    return method


def install() -> None:
    """Set the methods on `LazyArray` (once, as `dvm.lazy` is imported)."""
    LazyArray.clip = clip_method  # type: ignore[method-assign]
    for name in ("sum", "mean", "prod", "max", "min"):
        setattr(LazyArray, name, reduction_method(name, getattr(np, name)))
    LazyArray.any = logical_method(np.any)  # type: ignore[method-assign]
    LazyArray.all = logical_method(np.all)  # type: ignore[method-assign]
    for name in ("var", "std", "argmax", "argmin", "cumsum", "cumprod", "take", "ravel",
                 "squeeze", "round", "dot", "repeat", "diagonal", "trace"):  # fmt: skip
        setattr(LazyArray, name, numpy_method(getattr(np, name)))
