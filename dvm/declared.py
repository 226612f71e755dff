"""What an entry function declares, as plain data: its name and its arguments' names
and types (`Declared`), and the checks of a call's arguments against them.

A compiled program checks every call's arguments against these; they are made from the
function's xDSL types at compile time (`dvm.arguments`), or read from the compile cache,
so that a cache hit checks calls without xDSL.
"""

# No `from __future__ import annotations` here: `typing.NamedTuple` compiles each field's
# annotation given as text when its class is made (docs/performance.md).
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from dvm import numerics
from dvm.errors import CallError

DTYPE_NAMES = {
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "bfloat16",
}
"""The numpy dtypes of the element types programs use, by name."""


def dtype_named(name: Any) -> np.dtype[Any]:
    """The numpy dtype called `name` (a ValueError for any other name)."""
    if name not in DTYPE_NAMES:
        raise ValueError(f"no element type {name!r}")
    return numerics.bfloat16() if name == "bfloat16" else np.dtype(name)


class ArgumentType(NamedTuple):
    """An argument's type: a tensor's (its declared shape, -1 for `?`) or a scalar's."""

    text: str
    """How MLIR spells it (`tensor<?x4xf32>`, `index`, `i8`), which errors quote."""
    dtype: np.dtype[Any]
    """The numpy dtype of a tensor's elements or of the scalar (`index`: int64)."""
    shape: tuple[int, ...] | None = None
    """A tensor's declared shape; None for a scalar."""
    element: str = ""
    """A tensor's element type's text."""
    index: bool = False  # pyright: ignore[reportIncompatibleMethodOverride]
    """Whether it is an `index` scalar. (A record's `index` field hides the tuple method
    of its name, which nothing calls.)"""

    def to_json(self) -> list[Any]:
        return [self.text, self.dtype.name, self.shape, self.element, self.index]

    @staticmethod
    def from_json(data: Any) -> "ArgumentType":
        text, dtype, shape, element, index = data
        if not (isinstance(text, str) and isinstance(element, str) and isinstance(index, bool)):
            raise ValueError("not an argument type")
        if shape is not None:
            shape = tuple(int(d) for d in shape)
        return ArgumentType(text, dtype_named(dtype), shape, element, index)


SCALAR_KINDS = {
    "b": (bool, np.bool_),
    "i": (int, np.integer),
    "f": (int, float, np.integer, np.floating),
}
"""The Python and numpy scalars a scalar argument of each kind of dtype may be given as."""


def check_argument(where: str, value: Any, t: ArgumentType) -> Any:
    """An argument as its run-time value (an array, a Python int for `index`, a numpy
    scalar of its type), or a CallError saying what is wrong with it."""
    if t.shape is not None:
        return check_tensor_argument(where, value, t, t.shape)
    dtype = t.dtype
    kind = "f" if numerics.is_float_dtype(dtype) else "i" if dtype.kind == "u" else dtype.kind
    wanted = "an int for index" if t.index else f"a {t.text} scalar"
    if not isinstance(value, SCALAR_KINDS[kind]) or (
        kind != "b" and isinstance(value, bool | np.bool_)
    ):
        raise CallError(f"{where}: expected {wanted}, got {type(value).__name__}")
    if kind == "i":  # never wrapped: an index beyond int64 bounding a loop never ends
        info, number = np.iinfo(dtype), int(value)
        if not info.min <= number <= info.max:
            raise CallError(f"{where}: {number} is outside {t.text} ({info.min} .. {info.max})")
        return number if t.index else dtype.type(number)
    try:
        with np.errstate(over="ignore"):  # beyond the largest float: inf, as a cast rounds
            return dtype.type(value)
    except OverflowError:  # an int too large for any float
        raise CallError(f"{where}: {value} is too large for {t.text}") from None


def check_tensor_argument(
    where: str, value: Any, t: ArgumentType, declared: tuple[int, ...]
) -> np.ndarray[Any, Any]:
    if isinstance(value, np.generic):
        value = np.asarray(value)
    if not isinstance(value, np.ndarray):
        raise CallError(f"{where}: expected a numpy array for {t.text}, got {type(value).__name__}")
    if isinstance(value, np.matrix | np.ma.MaskedArray):  # a plain array's kernels would
        raise CallError(  # index a matrix wrongly, and run past a mask
            f"{where}: expected a plain numpy array for {t.text}, got a {type(value).__name__}, "
            "whose indexing and arithmetic differ: pass np.asarray of it"
        )
    if value.dtype != t.dtype:
        raise CallError(
            f"{where}: expected element type {t.element} (numpy {t.dtype}) for {t.text}, "
            f"got {value.dtype}"
        )
    if value.ndim != len(declared):
        raise CallError(
            f"{where}: expected rank {len(declared)} for {t.text}, "
            f"got rank {value.ndim} (shape {value.shape})"
        )
    for axis, (d, actual) in enumerate(zip(declared, value.shape, strict=True)):
        if d not in (-1, actual):
            raise CallError(
                f"{where}: axis {axis} must be {d} for {t.text}, got {actual} (shape {value.shape})"
            )
    return value


class Declared(NamedTuple):
    """An entry function's name, and its arguments' names (None: unnamed) and types."""

    function: str
    names: tuple[str | None, ...]
    types: tuple[ArgumentType, ...]

    def label(self, i: int) -> str:
        """`0 (%x)`, or just `0` when the argument has no name."""
        name = self.names[i]
        return f"{i} (%{name})" if name else str(i)

    def where(self, i: int) -> str:
        return f"@{self.function} argument {self.label(i)}"

    def argument_name(self, i: int) -> str:
        """`%x`, or `argument 0` when it has no name."""
        name = self.names[i]
        return f"%{name}" if name else f"argument {i}"

    def check(self, args: Sequence[Any]) -> tuple[Any, ...]:
        """The arguments as run-time values, or a CallError saying which one is wrong
        and how."""
        if len(args) != len(self.types):
            labels = ", ".join(self.label(i) for i in range(len(self.types))) or "none"
            raise CallError(
                f"@{self.function} takes {len(self.types)} arguments ({labels}), got {len(args)}"
            )
        pairs = enumerate(zip(args, self.types, strict=True))
        return tuple(check_argument(self.where(i), a, t) for i, (a, t) in pairs)

    def describe_call(self, args: Sequence[Any]) -> str:
        """`@f(%x: (4, 0) float32, %n = 3)`: the function and each argument's shape and
        dtype, or its value."""
        parts = []
        for i, arg in enumerate(args):
            name = self.argument_name(i)
            if isinstance(arg, np.ndarray):
                parts.append(f"{name}: {arg.shape} {arg.dtype}")
            else:
                parts.append(f"{name} = {arg!r}")
        return f"@{self.function}({', '.join(parts)})"

    def to_json(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "names": list(self.names),
            "types": [t.to_json() for t in self.types],
        }

    @staticmethod
    def from_json(data: Any) -> "Declared":
        function, names = data["function"], data["names"]
        if not isinstance(function, str) or not all(n is None or isinstance(n, str) for n in names):
            raise ValueError("not a function's declaration")
        types = tuple(ArgumentType.from_json(t) for t in data["types"])
        if len(names) != len(types):
            raise ValueError("not a function's declaration")
        return Declared(function, tuple(names), types)


def owned(results: Sequence[Any], args: Sequence[Any]) -> list[Any]:
    """`results` as arrays the caller may write to: each array that shares memory with an
    argument, with the program (a view, or a read-only constant) or with an earlier result
    (a value returned twice) is copied."""
    if len(results) == 1:  # the common case, without the set
        value = results[0]
        if isinstance(value, np.ndarray) and (
            value.base is not None
            or not value.flags.writeable
            or id(value) in map(id, args)  # the arguments are alive: ids tell them apart
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
