"""The reference interpreter's grouped matmul (numpy semantics).

The sizes are checked first (`group_sizes_error`: an ExecutionError naming the
op); each group's rows are then multiplied by its matrix with `numerics.matmul`
(f16 and bf16 in f32, rounded once), and the bias, if any, added in the element
type. Rows past the last group stay zero.
"""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls

from dvm import numerics
from dvm.arguments import result
from dvm.dialects.grouped_matmul import GroupedMatmulOp, group_sizes_error
from dvm.errors import ExecutionError, ShapeError
from dvm.numerics import Array
from dvm.passes.errors import located


def grouped_matmul(
    label: str, x: Array, sizes: Array, w: Array, bias: Array | None = None
) -> Array:
    """Rows of `x` in consecutive groups of `sizes` rows, group g times `w[g]` (plus
    `bias[g]`); rows past the last group are zero."""
    (m, k), (groups, wk, n) = x.shape, w.shape
    if (groups, wk) != (len(sizes), k) or (bias is not None and bias.shape != (groups, n)):
        shapes = [x.shape, sizes.shape, w.shape, *([bias.shape] if bias is not None else [])]
        raise ShapeError(f"{label}: operand shapes {', '.join(map(str, shapes))} do not fit")
    counts = [int(s) for s in sizes]
    error = group_sizes_error(label, counts, m)
    if error is not None:
        raise ExecutionError(error)
    out = np.zeros((m, n), x.dtype)
    begin = 0
    for g, count in enumerate(counts):
        rows = slice(begin, begin + count)
        out[rows] = numerics.matmul(x[rows], w[g])
        if bias is not None:
            out[rows] += bias[g]
        begin += count
    return out


@register_impls
class GroupedMatmulFunctions(InterpreterFunctions):
    @impl(GroupedMatmulOp)
    def run_grouped_matmul(
        self, interpreter: Interpreter, op: GroupedMatmulOp, args: PythonValues
    ) -> PythonValues:
        arrays = [np.asarray(a) for a in args]
        return result(op, grouped_matmul(located(op), *arrays))


def grouped_rows(label: str, a: Array, b: Array, sizes: Array, start: int, rows: int) -> Array:
    """A tile of a grouped matmul (the tile interpreter's `tile.gmma`): row i of `a` is
    row `start + i` of an operand of `rows` rows split by `sizes`, times `b[g]` of its
    group g (zero past the last group)."""
    counts = [int(s) for s in sizes]
    error = group_sizes_error(label, counts, rows)
    if error is not None:
        raise ExecutionError(error)
    out = np.zeros((a.shape[0], b.shape[2]), a.dtype)
    begin, stop = 0, start + a.shape[0]
    for g, count in enumerate(counts):
        lo, hi = max(begin, start), min(begin + count, stop)
        if lo < hi:
            out[lo - start : hi - start] = numerics.matmul(a[lo - start : hi - start], b[g])
        begin += count
    return out
