"""numpy's `floor_divide` of operands that broadcast together, as the dialect's ops."""

from __future__ import annotations

from typing import Any

import numpy as np

from dvm.lazy import record
from dvm.lazy.graph import Node

BOOL = np.dtype(np.bool_)


def integer_floor_divide(x: Node, y: Node, dtype: np.dtype[Any]) -> Node:
    """The dialect's `div` (rounding toward zero, `a // 0 = 0` as numpy's), less 1 where
    C's remainder (`fmod`, the dividend's sign) is nonzero and of the divisor's other
    sign. Not `(a - a % b) / b`: `a - a % b` leaves the type's range where `b` is near
    its minimum (in int16, `17 - 17 % -32768` is 32768, so `17 // -32768` gave 1)."""
    quotient = op("div", x, y, dtype=dtype)
    if dtype.kind == "u":
        return quotient  # (unsigned: toward zero is down)
    mod = op("fmod", x, y, dtype=dtype)
    lower = op("sub", quotient, known(1, dtype), dtype=dtype)
    return op("select", rounded_up(mod, y), lower, quotient, dtype=dtype)


def float_floor_divide(x: Node, y: Node, dtype: np.dtype[Any]) -> Node:
    """numpy's own algorithm (`npy_divmod`), not `floor(a / b)`, which rounds otherwise
    near integers (`1 // 0.1` is 9, `floor(1 / 0.1)` is 10): mod = fmod(a, b);
    div = (a - mod) / b, less 1 where mod and b differ in sign; its floor, plus 1 where
    div is over half above it; a / b where b is 0, and a signed zero where div is."""
    quotient = op("div", x, y, dtype=dtype)
    zero, one = known(0.0, dtype), known(1.0, dtype)
    mod = op("fmod", x, y, dtype=dtype)
    div = op("div", op("sub", x, mod, dtype=dtype), y, dtype=dtype)
    div = op("select", rounded_up(mod, y), op("sub", div, one, dtype=dtype), div, dtype=dtype)
    floor = op("floor", div, dtype=dtype)
    above_half = op("gt", op("sub", div, floor, dtype=dtype), known(0.5, dtype), dtype=BOOL)
    floor = op("select", above_half, op("add", floor, one, dtype=dtype), floor, dtype=dtype)
    signed_zero = op("mul", quotient, zero, dtype=dtype)
    rounded = op("select", op("ne", div, zero, dtype=BOOL), floor, signed_zero, dtype=dtype)
    return op("select", op("eq", y, zero, dtype=BOOL), quotient, rounded, dtype=dtype)


def rounded_up(mod: Node, y: Node) -> Node:
    """Where a quotient rounded toward zero is above the floor: the remainder `mod`
    (`fmod`'s, of the dividend's sign) is nonzero and its sign is not the divisor's."""
    zero = known(0, mod.dtype)
    negative_y, negative_mod = (op("lt", v, zero, dtype=BOOL) for v in (y, mod))
    signs_differ = op("ne", negative_y, negative_mod, dtype=BOOL)
    return op("logical_and", op("ne", mod, zero, dtype=BOOL), signs_differ, dtype=BOOL)


def op(name: str, *operands: Node, dtype: np.dtype[Any]) -> Node:
    """An elementwise op of operands that broadcast together (checked before)."""
    made = record.elementwise(name, operands, dtype)
    assert made is not None
    return made


def known(value: float, dtype: np.dtype[Any]) -> Node:
    return Node.of(np.asarray(value, dtype))
