"""A call's arguments and results, as every way of running a program sees them.

The reference interpreter and the compiled program (`dvm.compile`) agree on what a
call takes and gives: the entry function (`find_entry`), each argument checked
against its type (`check_arguments`: a `CallError` naming the argument and what is
wrong), an op's result as its run-time value (`to_value`, `result`) and results the
caller owns (`owned`). Every level, the tile interpreter too, reads an element type
as the numpy dtype `numpy_dtype` gives.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    ModuleOp,
    Signedness,
    TensorType,
)
from xdsl.dialects.func import FuncOp
from xdsl.interpreter import PythonValues
from xdsl.ir import Attribute, Operation

from dvm import numerics
from dvm.errors import CallError, ShapeError
from dvm.numerics import Array

_FLOAT_DTYPES: dict[type[Attribute], type[Any]] = {
    Float16Type: np.float16,
    Float32Type: np.float32,
    Float64Type: np.float64,
}
_INT_DTYPES: dict[int, type[np.generic]] = {
    1: np.bool_,
    8: np.int8,
    16: np.int16,
    32: np.int32,
    64: np.int64,
}
_UINT_DTYPES: dict[int, type[np.generic]] = {
    8: np.uint8,
    16: np.uint16,
    32: np.uint32,
    64: np.uint64,
}


@cache  # types are immutable and few; this is on every op's path
def numpy_dtype(t: Attribute) -> np.dtype[Any]:
    """The numpy dtype of a scalar type, or of a tensor type's elements (`index` is int64)."""
    if isinstance(t, TensorType):
        t = t.element_type
    if isinstance(t, IndexType):
        return np.dtype(np.int64)
    if isinstance(t, IntegerType):
        width, signedness = t.width.data, t.signedness.data
        if signedness == Signedness.UNSIGNED and width in _UINT_DTYPES:
            return np.dtype(_UINT_DTYPES[width])
        if signedness == Signedness.SIGNLESS and width in _INT_DTYPES:
            return np.dtype(_INT_DTYPES[width])
    if type(t) in _FLOAT_DTYPES:
        return np.dtype(_FLOAT_DTYPES[type(t)])
    if isinstance(t, BFloat16Type):
        return numerics.bfloat16()
    raise TypeError(f"the reference interpreter does not support type {t}")


def is_float(t: Attribute) -> bool:
    return numerics.is_float_dtype(numpy_dtype(t))


def to_value(op: Operation, raw: Any, t: Attribute) -> Any:
    """`raw` as the run-time value of a result of type `t`: an array for a tensor, a
    Python int for `index`, a numpy scalar otherwise.

    Converts to the declared element type, since numpy turns 0-d results into
    scalars, and checks the static dims of a tensor type.
    """
    if isinstance(t, TensorType):
        array = np.asarray(raw, dtype=numpy_dtype(t))
        check_static_dims(op, array.shape, t)
        return array
    if isinstance(t, IndexType):
        return int(raw)
    return np.asarray(raw, dtype=numpy_dtype(t))[()]


def check_static_dims(op: Operation, shape: tuple[int, ...], t: TensorType[Attribute]) -> None:
    declared = t.get_shape()
    fits = len(shape) == len(declared) and all(
        d in (DYNAMIC_INDEX, s) for d, s in zip(declared, shape, strict=True)
    )
    if not fits:
        raise ShapeError(f"'{op.name}' computed shape {shape}, which contradicts its type {t}")


def result(op: Operation, raw: Any) -> PythonValues:
    """The impl return value of a single-result op."""
    return (to_value(op, raw, op.results[0].type),)


def find_entry(module: ModuleOp, entry: str | None) -> FuncOp:
    """The function to run: `entry`, or the module's only function."""
    funcs = {op.sym_name.data: op for op in module.ops if isinstance(op, FuncOp) and op.body.blocks}
    available = ", ".join(f"@{name}" for name in funcs) or "none"
    if entry is None:
        if len(funcs) == 1:
            return next(iter(funcs.values()))
        raise CallError(
            f"the module defines {len(funcs)} functions ({available}); choose with entry="
        )
    name = entry.removeprefix("@")
    if name not in funcs:
        raise CallError(f"the module has no function @{name}; available: {available}")
    return funcs[name]


def check_arguments(func: FuncOp, args: Sequence[Any]) -> tuple[Any, ...]:
    """The arguments as run-time values, or a CallError saying which one is wrong and how."""
    types = func.function_type.inputs.data
    labels = [argument_label(func, i) for i in range(len(types))]
    if len(args) != len(types):
        names = ", ".join(labels) or "none"
        raise CallError(
            f"@{func.sym_name.data} takes {len(types)} arguments ({names}), got {len(args)}"
        )
    where = [f"@{func.sym_name.data} argument {label}" for label in labels]
    return tuple(check_argument(w, a, t) for w, a, t in zip(where, args, types, strict=True))


def argument_label(func: FuncOp, position: int) -> str:
    """`0 (%x)`, or just `0` when the argument has no name."""
    name = func.body.block.args[position].name_hint
    return f"{position} (%{name})" if name else str(position)


SCALAR_KINDS = {
    "b": (bool, np.bool_),
    "i": (int, np.integer),
    "f": (int, float, np.integer, np.floating),
}
"""The Python and numpy scalars a scalar argument of each kind of dtype may be given as."""


def check_argument(where: str, value: Any, t: Attribute) -> Any:
    """An argument as its run-time value (an array, a Python int for `index`, a numpy
    scalar of its type), or a CallError saying what is wrong with it."""
    if isinstance(t, TensorType):
        return check_tensor_argument(where, value, t)
    dtype = numpy_dtype(t)
    kind = "f" if numerics.is_float_dtype(dtype) else "i" if dtype.kind == "u" else dtype.kind
    wanted = "an int for index" if isinstance(t, IndexType) else f"a {t} scalar"
    if not isinstance(value, SCALAR_KINDS[kind]) or (
        kind != "b" and isinstance(value, bool | np.bool_)
    ):
        raise CallError(f"{where}: expected {wanted}, got {type(value).__name__}")
    if kind == "i":  # never wrapped: an index beyond int64 bounding a loop never ends
        info, number = np.iinfo(dtype), int(value)
        if not info.min <= number <= info.max:
            raise CallError(f"{where}: {number} is outside {t} ({info.min} .. {info.max})")
        return number if isinstance(t, IndexType) else dtype.type(number)
    try:
        with np.errstate(over="ignore"):  # beyond the largest float: inf, as a cast rounds
            return dtype.type(value)
    except OverflowError:  # an int too large for any float
        raise CallError(f"{where}: {value} is too large for {t}") from None


def check_tensor_argument(where: str, value: Any, t: TensorType[Attribute]) -> Array:
    if isinstance(value, np.generic):
        value = np.asarray(value)
    if not isinstance(value, np.ndarray):
        raise CallError(f"{where}: expected a numpy array for {t}, got {type(value).__name__}")
    dtype = numpy_dtype(t)
    if value.dtype != dtype:
        raise CallError(
            f"{where}: expected element type {t.element_type} (numpy {dtype}) for {t}, "
            f"got {value.dtype}"
        )
    declared = t.get_shape()
    if value.ndim != len(declared):
        raise CallError(
            f"{where}: expected rank {len(declared)} for {t}, "
            f"got rank {value.ndim} (shape {value.shape})"
        )
    for axis, (d, actual) in enumerate(zip(declared, value.shape, strict=True)):
        if d not in (DYNAMIC_INDEX, actual):
            raise CallError(
                f"{where}: axis {axis} must be {d} for {t}, got {actual} (shape {value.shape})"
            )
    return value


def owned(results: Sequence[Any], args: Sequence[Any]) -> list[Any]:
    """`results` as arrays the caller may write to: each array that shares memory with an
    argument, with the program (a view, or a read-only constant) or with an earlier result
    (a value returned twice) is copied."""
    if len(results) == 1:  # the common case, without the set
        value = results[0]
        if isinstance(value, np.ndarray) and (
            value.base is not None
            or not value.flags.writeable
            or any(map(operator.is_, args, itertools.repeat(value)))
        ):
            value = value.copy()
        return [value]
    taken = set(map(id, args))
    out = []
    for value in results:
        if isinstance(value, np.ndarray):
            if id(value) in taken or value.base is not None or not value.flags.writeable:
                value = value.copy()
            taken.add(id(value))
        out.append(value)
    return out
