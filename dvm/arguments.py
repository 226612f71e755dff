"""A call's arguments and results, as every way of running a program sees them.

The reference interpreter and the compiled program (`dvm.compile`) agree on what a
call takes and gives: the entry function (`find_entry`), each argument checked
against its type (`check_arguments`: a `CallError` naming the argument and what is
wrong), an op's result as its run-time value (`to_value`, `result`) and results the
caller owns (`owned`). Every level, the tile interpreter too, reads an element type
as the numpy dtype `numpy_dtype` gives.
"""

from __future__ import annotations

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
from dvm.declared import ArgumentType, Declared
from dvm.declared import check_argument as check_declared_argument
from dvm.errors import CallError, ShapeError
from dvm.passes.errors import located

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
        raise ShapeError(f"{located(op)}: computed shape {shape}, which contradicts its type {t}")


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
    return declared(func).check(args)


def declared(func: FuncOp) -> Declared:
    """What `func` declares, as plain data: its name, its arguments' names and types."""
    names = tuple(arg.name_hint for arg in func.body.block.args)
    types = tuple(argument_type(t) for t in func.function_type.inputs.data)
    return Declared(func.sym_name.data, names, types)


@cache  # types are immutable and few
def argument_type(t: Attribute) -> ArgumentType:
    """An argument's xDSL type as plain data (what its checks need)."""
    if isinstance(t, TensorType):
        shape = tuple(-1 if d == DYNAMIC_INDEX else d for d in t.get_shape())
        return ArgumentType(str(t), numpy_dtype(t), shape, str(t.element_type))
    return ArgumentType(str(t), numpy_dtype(t), index=isinstance(t, IndexType))


def check_argument(where: str, value: Any, t: Attribute) -> Any:
    """An argument as its run-time value (an array, a Python int for `index`, a numpy
    scalar of its type), or a CallError saying what is wrong with it."""
    return check_declared_argument(where, value, argument_type(t))
