"""The reference interpreter's index ops (numpy semantics).

`tensor.iota` is `np.arange` along one dim, broadcast to the result's shape and
converted to its element type as `tensor.convert` converts (a narrow integer
type wraps, a float rounds).
"""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from dvm import numerics
from dvm.arguments import numpy_dtype, result
from dvm.dialects.index_ops import IotaOp
from dvm.dialects.tensor import DYN, tensor_type
from dvm.errors import ShapeError
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
