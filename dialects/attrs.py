"""Attributes made once per value.

xDSL checks and verifies every attribute as it is made (an `IntegerAttr` some 250
interpreted bytecodes, a `FloatAttr` 200, a tile type 600), and a compile makes the
same few over and over: indices, axes, counts, a reduction's identity, a kernel's tile
types. Attributes are immutable values, so ops may share one; these make each once
per process (up to a bound) and hand out the same object afterwards."""

from __future__ import annotations

import struct
from functools import lru_cache

from xdsl.dialects.builtin import FloatAttr, IntegerAttr, StringAttr, i64
from xdsl.ir import Attribute


@lru_cache(maxsize=1 << 12)
def i64_attr(value: int) -> IntegerAttr:
    """`IntegerAttr(value, i64)`, made once per value: a program writes the same few
    numbers (register, view and slot indices, axes) over and over."""
    return IntegerAttr(value, i64)


@lru_cache(maxsize=1 << 12)
def text_attr(text: str) -> StringAttr:
    """`StringAttr(text)`, made once per text, as `i64_attr`."""
    return StringAttr(text)


MAX_FLOATS = 4096
"""The most float attributes `float_attr` keeps (it starts again when full)."""
_floats: dict[tuple[bytes, Attribute], FloatAttr] = {}


def float_attr(value: float, element: Attribute) -> FloatAttr:
    """`FloatAttr(value, element)`, made once per float and type (anything else that
    is not a float each time). Keyed by the value's bits, not the float: 0.0 and -0.0
    are equal floats, and a NaN equals nothing."""
    if type(value) is not float:
        return FloatAttr(value, element)  # pyright: ignore[reportCallIssue, reportArgumentType]
    key = (struct.pack("<d", value), element)
    found = _floats.get(key)
    if found is None:
        if len(_floats) >= MAX_FLOATS:
            _floats.clear()
        found = _floats[key] = FloatAttr(value, element)  # pyright: ignore[reportCallIssue, reportArgumentType]
    return found
