"""The reference interpreter's index ops (numpy semantics).

`tensor.iota` is `np.arange` along one dim, broadcast to the result's shape and
converted to its element type as `tensor.convert` converts (a narrow integer
type wraps, a float rounds). `tensor.take` and `tensor.take_along_axis` are
numpy's functions after a check of the indices: numpy would count a negative
index from the end.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from dvm import numerics
from dvm.arguments import numpy_dtype, result
from dvm.dialects.index_ops import (
    IotaOp,
    ScatterAddOp,
    TakeAlongAxisOp,
    TakeBase,
    TakeOp,
    index_error,
)
from dvm.dialects.tensor import DYN, tensor_type
from dvm.errors import IndexOutOfRangeError, ShapeError
from dvm.passes.errors import located


def iota_values(shape: tuple[int, ...], dim: int, dtype: np.dtype) -> np.ndarray:
    """The index along `dim` of each element of an array of `shape`, as `dtype`."""
    along = [n if axis == dim else 1 for axis, n in enumerate(shape)]
    index = np.arange(shape[dim], dtype=np.int64).reshape(along)
    return np.broadcast_to(numerics.convert(index, dtype), shape)


@register_impls
class IndexOpsFunctions(InterpreterFunctions):
    @impl(IotaOp)
    def run_iota(self, interpreter: Interpreter, op: IotaOp, args: PythonValues) -> PythonValues:
        t = tensor_type(op.result)
        sizes = iter(int(a) for a in args)
        shape = tuple(next(sizes) if d == DYN else d for d in t.get_shape())
        if any(d < 0 for d in shape):
            raise ShapeError(f"{located(op)}: got a negative dim in shape {list(shape)}")
        return result(op, iota_values(shape, op.dim, numpy_dtype(t)))

    @impl(TakeOp)
    def run_take(self, interpreter: Interpreter, op: TakeOp, args: PythonValues) -> PythonValues:
        x, indices = checked_take(op, args)
        return result(op, np.take(x, indices, axis=op.dim))

    @impl(TakeAlongAxisOp)
    def run_take_along_axis(
        self, interpreter: Interpreter, op: TakeAlongAxisOp, args: PythonValues
    ) -> PythonValues:
        x, indices = checked_take(op, args)
        try:
            return result(op, np.take_along_axis(x, indices, axis=op.dim))
        except ValueError:
            raise ShapeError(
                f"{located(op)}: indices of shape {indices.shape} do not broadcast with a "
                f"source of shape {x.shape}"
            ) from None

    @impl(ScatterAddOp)
    def run_scatter_add(
        self, interpreter: Interpreter, op: ScatterAddOp, args: PythonValues
    ) -> PythonValues:
        return result(op, scatter_add(located(op), op.dim, *(np.asarray(a) for a in args)))


def scatter_add(
    label: str, axis: int, base: np.ndarray, indices: np.ndarray, updates: np.ndarray
) -> np.ndarray:
    """numpy `add.at` along `axis` on a copy of `base`, once the indices are inside the
    dim and the updates have the shape of a take of `base` by them. The compiled
    program runs this too."""
    error = index_error(label, indices, base.shape[axis], axis)
    if error is not None:
        raise IndexOutOfRangeError(error)
    expected = (*base.shape[:axis], *indices.shape, *base.shape[axis + 1 :])
    if updates.shape != expected:
        raise ShapeError(f"{label}: updates of shape {updates.shape}, expected {expected}")
    out = base.copy()
    with np.errstate(over="ignore"):
        where: Any = (slice(None),) * axis + (indices,)
        np.add.at(out, where, updates)
    return out


def checked_take(op: TakeBase, args: PythonValues) -> tuple[np.ndarray, np.ndarray]:
    """The source and the indices, once every index is inside the dim it indexes."""
    x, indices = np.asarray(args[0]), np.asarray(args[1])
    error = index_error(located(op), indices, x.shape[op.dim], op.dim)
    if error is not None:
        raise IndexOutOfRangeError(error)
    return x, indices
