"""The meaning of the `arith` ops on run-time values, and the run-time checks of
`tensor.extract`, `tensor.dim` and `scf.for`: what the reference interpreter
(`dvm.interpreter`) and the host code `dvm.compile` makes (`dvm.host`) share. It
imports no `xdsl.interpreters` (whose package loads every interpreter xDSL has), so a
compile does not load them.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IndexType, TensorType
from xdsl.ir import Operation

from dvm import numerics
from dvm.arguments import is_float, numpy_dtype
from dvm.errors import ExecutionError
from dvm.numerics import Array

_SIGNED = {
    arith.AddiOp: np.add,
    arith.SubiOp: np.subtract,
    arith.MuliOp: np.multiply,
    arith.DivSIOp: numerics.divide,  # toward zero, x / 0 == 0
    arith.RemSIOp: numerics.remainder,
    arith.FloorDivSIOp: numerics.floor_divide,
    arith.CeilDivSIOp: numerics.ceil_divide,
    arith.MaxSIOp: np.maximum,
    arith.MinSIOp: np.minimum,
    arith.AndIOp: np.bitwise_and,
    arith.OrIOp: np.bitwise_or,
    arith.XOrIOp: np.bitwise_xor,
    arith.ShLIOp: numerics.shift_left,
    arith.ShRSIOp: numerics.shift_right,
    arith.MulSIExtendedOp: numerics.multiply_extended,
}
_UNSIGNED = {
    arith.DivUIOp: numerics.divide,
    arith.RemUIOp: numerics.remainder,
    arith.CeilDivUIOp: numerics.ceil_divide,
    arith.MaxUIOp: np.maximum,
    arith.MinUIOp: np.minimum,
    arith.ShRUIOp: numerics.shift_right,
    arith.MulUIExtendedOp: numerics.multiply_extended,
}
ARITH: dict[type[Operation], Callable[..., Any]] = {
    **{op: numerics.on_integers(fn) for op, fn in _SIGNED.items()},
    **{op: numerics.on_integers(fn, unsigned=True) for op, fn in _UNSIGNED.items()},
    arith.AddUIExtendedOp: numerics.add_unsigned_extended,
    arith.AddfOp: np.add,
    arith.SubfOp: np.subtract,
    arith.MulfOp: np.multiply,
    arith.DivfOp: np.true_divide,
    arith.NegfOp: np.negative,
    arith.MaximumfOp: np.maximum,  # NaN propagates
    arith.MinimumfOp: np.minimum,
    arith.MaxnumfOp: np.fmax,  # NaN ignored
    arith.MinnumfOp: np.fmin,
    arith.SelectOp: np.where,
}
"""The arith ops that are a function of their operands alone, as numpy computes them
(integer ops as `arith` defines them on two's complement bits, `numerics.on_integers`)."""

_ON_INDEX = {
    arith.AddiOp: "add",
    arith.SubiOp: "subtract",
    arith.MuliOp: "multiply",
    arith.DivSIOp: "divide",
    arith.RemSIOp: "remainder",
    arith.FloorDivSIOp: "floor_divide",
    arith.CeilDivSIOp: "ceil_divide",
    arith.MaxSIOp: "maximum",
    arith.MinSIOp: "minimum",
}
"""The ops of `ARITH` that `index` operands (Python ints) compute on Python ints."""

_SIGN_EXTENDING = (arith.ExtSIOp, arith.SIToFPOp, arith.IndexCastOp)
_ZERO_EXTENDING = (arith.ExtUIOp, arith.UIToFPOp)
ARITH_CASTS: tuple[type[Operation], ...] = (
    *_SIGN_EXTENDING, *_ZERO_EXTENDING, arith.FPToSIOp, arith.FPToUIOp,
    arith.ExtFOp, arith.TruncFOp, arith.TruncIOp, arith.BitcastOp,
)  # fmt: skip
ARITH_OPS: tuple[type[Operation], ...] = (*ARITH, *ARITH_CASTS, arith.CmpiOp, arith.CmpfOp)
"""Every arith op the interpreter and the compiled host code run (with `arith.constant`:
all of upstream's that xDSL defines)."""

_COMPARISONS = (np.equal, np.greater, np.greater_equal, np.less, np.less_equal, np.not_equal)
"""`arith.cmpf` predicates 1-6 (oeq ... one) and 8-13 (ueq ... une) in this order."""
_INT_COMPARISONS = (np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal)
"""`arith.cmpi` predicates 0-5 (eq ne slt sle sgt sge); 6-9 are the unsigned 2-5."""


def arith_function(op: Operation) -> Callable[..., Any]:
    """How arith op `op` computes its result from its operand values (numpy's result,
    before `to_value`; a tuple for several results), its attributes read now: the one
    meaning of arith, which `dvm.compile`'s host code shares."""
    if type(op) in _ON_INDEX and isinstance(op.results[0].type, IndexType):
        return numerics.INDEX_ARITHMETIC[_ON_INDEX[type(op)]]
    if type(op) in ARITH:
        return ARITH[type(op)]
    if isinstance(op, arith.CmpiOp):
        return partial(compare_ints, op.predicate.value.data)
    if isinstance(op, arith.CmpfOp):
        return partial(compare_floats, op.predicate.value.data)
    if isinstance(op, ARITH_CASTS):
        return partial(cast, type(op), numpy_dtype(op.results[0].type))
    raise ExecutionError(f"'{op.name}' is not supported")


def cast(kind: type[Operation], dtype: np.dtype[Any], value: Any) -> Array:
    """The arith casts: `numerics.convert`, with `arith`'s integer rules: the sign- or
    zero-extending ones read the operand's bits as signed or unsigned (a set `i1` is -1
    or 1), integer results wrap around, `bitcast` keeps the bits."""
    x = np.asarray(value)
    if kind is arith.BitcastOp:
        return x.view(dtype)
    if x.dtype == np.bool_ and kind in _SIGN_EXTENDING:
        x = -x.astype(np.int8)
    elif kind in _ZERO_EXTENDING:
        x = numerics.as_unsigned(x)
    if dtype.kind not in "ib":
        return numerics.convert(x, dtype)
    if numerics.is_float_dtype(x.dtype):  # truncate toward zero, saturate, keep the low bits
        signed = "u" if kind is arith.FPToUIOp else "i"
        x = numerics.convert(x, np.dtype(f"{signed}{dtype.itemsize}"))
    return numerics.wrap_integer(x, dtype)


def compare_ints(predicate: int, a: Any, b: Any) -> Array:
    """`arith.cmpi`; the unsigned predicates read the two's complement bits as unsigned."""
    unsigned = predicate >= 6  # ult ule ugt uge
    a, b = (np.asarray(x) for x in (a, b))
    if a.dtype == np.bool_:  # i1: true is -1 signed, 1 unsigned
        a, b = (x if unsigned else -x.astype(np.int8) for x in (a, b))
    elif unsigned:
        a, b = numerics.as_unsigned(a), numerics.as_unsigned(b)
    return _INT_COMPARISONS[predicate - 4 if unsigned else predicate](a, b)


def compare_floats(predicate: int, a: Any, b: Any) -> Array:
    """`arith.cmpf`: ordered predicates are false, unordered ones true, when a NaN is involved."""
    a, b = np.asarray(a), np.asarray(b)
    unordered = np.isnan(a) | np.isnan(b)
    if predicate in (0, 15):  # false, true
        return np.full(unordered.shape, predicate == 15)
    if predicate in (7, 14):  # ord, uno
        return unordered if predicate == 14 else ~unordered
    compared = _COMPARISONS[(predicate - 1) % 7](a, b)
    return compared & ~unordered if predicate < 7 else compared | unordered


def dense_array(value: DenseIntOrFPElementsAttr, type_: TensorType) -> Array:
    """A dense constant's elements as an array of its type (a splat written
    once fills the shape; a zero-element constant has no values at all)."""
    data = np.array(value.get_values(), np.float64 if is_float(type_) else numpy_dtype(type_))
    shape = type_.get_shape()
    data = np.full(shape, data[0]) if data.size == 1 else data.reshape(shape)
    return data.astype(numpy_dtype(type_))
