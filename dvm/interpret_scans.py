"""The reductions and scans of `dvm.dialects.scans` in numpy: the reference
interpreter's impls, and what `dvm.compile` runs on the host for the one that
no kernel holds (a top_k whose carry does not fit the local memory; `fuse`
rewrites argmax and argmin as reductions and makes each cumsum, cumprod and
top_k a kernel, so they reach the host only in a program run without it).

Each op's meaning is one function of the op and its operand values (`SCAN_FUNCTIONS`),
which both share. A value the op cannot take (argmax over an empty axis, top_k's k
beyond a dynamic dim) is an `ExecutionError` naming the op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Operation

from dvm import numerics
from dvm.arguments import result, to_value
from dvm.dialects.scans import (
    ArgMaxOp,
    ArgMinOp,
    ArgReduceOp,
    CumProdOp,
    CumSumOp,
    ReduceAllOp,
    ReduceAnyOp,
    ScanOp,
    TopKOp,
)
from dvm.errors import ExecutionError
from dvm.passes.errors import located

Raw = tuple[Any, ...]
"""An op's results before `to_value`."""


def sortable(x: np.ndarray) -> np.ndarray:
    """`x` in a dtype numpy orders and counts in: f16 and bf16 as f32 (exactly)."""
    return x.astype(np.float32) if x.dtype != numerics.working_dtype(x.dtype) else x


def arg_reduce(op: Operation, args: Sequence[Any]) -> Raw:
    """numpy's argmax/argmin: the first index, the first NaN when there is one."""
    assert isinstance(op, ArgReduceOp)
    x, axis = np.asarray(args[0]), op.reduced_axis
    if x.shape[axis] == 0:
        raise ExecutionError(f"{located(op)}: no index along the empty axis {axis} of {x.shape}")
    fn = np.argmax if isinstance(op, ArgMaxOp) else np.argmin
    return (fn(sortable(x), axis=axis, keepdims=op.keeps_dims),)


def scan(op: Operation, args: Sequence[Any]) -> Raw:
    """np.cumsum / np.cumprod along the axis, in the working dtype; `reverse` runs from
    the end, `exclusive` shifts by one (the first element is the identity)."""
    assert isinstance(op, ScanOp)
    x, axis = np.asarray(args[0]), op.scan_axis
    add = isinstance(op, CumSumOp)
    if op.is_reversed:
        x = np.flip(x, axis)
    acc = numerics.working_dtype(x.dtype)
    out = (np.cumsum if add else np.cumprod)(x, axis=axis, dtype=acc)
    if op.is_exclusive and x.shape[axis] > 0:
        first = np.full_like(np.take(out, [0], axis=axis), 0 if add else 1)
        out = np.concatenate([first, np.delete(out, -1, axis=axis)], axis=axis)
    if op.is_reversed:
        out = np.flip(out, axis)
    return (out.astype(x.dtype),)


def top_k(op: Operation, args: Sequence[Any]) -> Raw:
    """The k largest along the axis, descending, equal ones by the lower index first and
    NaN first: the reverse of a stable ascending sort of the reversed axis (no negation,
    which integers' minimum and unsigned types would not survive)."""
    assert isinstance(op, TopKOp)
    x, axis, k = np.asarray(args[0]), op.along, op.count
    n = x.shape[axis]
    if k > n:
        raise ExecutionError(f"{located(op)}: k = {k} exceeds dim {n} at axis {axis} of {x.shape}")
    return top_k_values(x, axis, k)


def top_k_values(x: np.ndarray, axis: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """`top_k`'s values and int64 indices, for `k` at most the axis's size."""
    n = x.shape[axis]
    ascending = np.argsort(np.flip(sortable(x), axis), axis=axis, kind="stable")
    order = n - 1 - np.flip(ascending, axis)
    indices = np.take(order, np.arange(k), axis=axis).astype(np.int64)
    return np.take_along_axis(x, indices, axis=axis), indices


SCAN_FUNCTIONS: dict[type[Operation], Callable[[Operation, Sequence[Any]], Raw]] = {
    ArgMaxOp: arg_reduce,
    ArgMinOp: arg_reduce,
    CumSumOp: scan,
    CumProdOp: scan,
    TopKOp: top_k,
}
"""The ops `dvm.compile` runs on the host, each as a function of its operand values."""


def run_scan(op: Operation, args: Sequence[Any]) -> PythonValues:
    """The op's results as run-time values."""
    raw = SCAN_FUNCTIONS[type(op)](op, args)
    return tuple(to_value(op, r, v.type) for r, v in zip(raw, op.results, strict=True))


@register_impls
class ScanFunctions(InterpreterFunctions):
    @impl(ReduceAnyOp)
    def run_reduce_any(
        self, interpreter: Interpreter, op: ReduceAnyOp, args: PythonValues
    ) -> PythonValues:
        return result(op, np.any(args[0], axis=axes(op), keepdims=op.keeps_dims))

    @impl(ReduceAllOp)
    def run_reduce_all(
        self, interpreter: Interpreter, op: ReduceAllOp, args: PythonValues
    ) -> PythonValues:
        return result(op, np.all(args[0], axis=axes(op), keepdims=op.keeps_dims))

    @impl(ArgMaxOp)
    def run_argmax(
        self, interpreter: Interpreter, op: ArgMaxOp, args: PythonValues
    ) -> PythonValues:
        return run_scan(op, args)

    @impl(ArgMinOp)
    def run_argmin(
        self, interpreter: Interpreter, op: ArgMinOp, args: PythonValues
    ) -> PythonValues:
        return run_scan(op, args)

    @impl(CumSumOp)
    def run_cumsum(
        self, interpreter: Interpreter, op: CumSumOp, args: PythonValues
    ) -> PythonValues:
        return run_scan(op, args)

    @impl(CumProdOp)
    def run_cumprod(
        self, interpreter: Interpreter, op: CumProdOp, args: PythonValues
    ) -> PythonValues:
        return run_scan(op, args)

    @impl(TopKOp)
    def run_top_k(self, interpreter: Interpreter, op: TopKOp, args: PythonValues) -> PythonValues:
        return run_scan(op, args)


def axes(op: ReduceAnyOp | ReduceAllOp) -> tuple[int, ...]:
    return tuple(op.reduced_axes)
