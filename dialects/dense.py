"""Dense constants (`dense<...>`) that print exactly what they hold.

A `dense<...>` attribute stores its elements as bytes. xDSL 0.75 prints
them through Python floats, which loses two things: `is_splat` compares
values, so `dense<[0.0, -0.0]>` prints as the splat `dense<0.0>`; and a NaN
goes through a Python float before its bits are printed, which drops the
payload of an f16 NaN and quiets a signaling f32 one.

Importing this module (the `dvm.dialects` package does) makes both exact
for every program the project prints: a splat is one whose elements have
equal bits, and a float element that is not finite prints as its bit
pattern in hex (`0xFF800000` is -inf in f32), as upstream MLIR prints it.
The parser (`dvm.literals`) reads such a hex literal back as those bits.
Finite floats print as xDSL prints them, with enough digits to parse back
to the same value.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
)
from xdsl.ir import Attribute
from xdsl.printer import Printer

from dvm.numerics import bfloat16

BF16 = "bf16"
"""bf16's format name in `FLOAT_FORMATS`."""

FLOAT_FORMATS: dict[type[Attribute], str] = {
    Float16Type: "<e",
    BFloat16Type: BF16,
    Float32Type: "<f",
    Float64Type: "<d",
}
"""The struct format of each float type the project computes in (little-endian); bf16,
which struct lacks, has its own name (see `pack_float`)."""


def float_bytes_per_element(fmt: str) -> int:
    return 2 if fmt == BF16 else struct.calcsize(fmt)


def pack_float(fmt: str, value: float) -> bytes:
    """The bytes of `value` rounded to nearest (ties to even) in a float format, as
    `struct.pack` gives them; a finite value that rounds beyond the largest finite one
    raises OverflowError, as struct does."""
    if fmt != BF16:
        return struct.pack(fmt, value)
    with np.errstate(over="ignore"):
        rounded = np.array(value, np.float64).astype(bfloat16())
    if math.isfinite(value) and not np.isfinite(rounded):
        raise OverflowError(f"{value} is out of range for bf16")
    return rounded.tobytes()


def unpack_float(fmt: str, bits: bytes) -> float:
    """The value of one float element's bytes."""
    if fmt != BF16:
        return struct.unpack(fmt, bits)[0]
    return float(np.frombuffer(bits, bfloat16())[0])


LONG_CONSTANT = 100
"""xDSL prints a non-splat constant of more elements as one hex string (its bytes)."""


def element_bits(attr: DenseIntOrFPElementsAttr) -> list[bytes]:
    """The bytes of each element of `attr`."""
    raw = attr.data.data
    size = attr.get_element_type().compile_time_size
    return [raw[i : i + size] for i in range(0, len(raw), size)]


def is_splat(attr: DenseIntOrFPElementsAttr) -> bool:
    """Whether every element of `attr` has the bits of the first (and there is one)."""
    raw = attr.data.data
    size = attr.get_element_type().compile_time_size
    return 0 < size <= len(raw) and raw == raw[:size] * (len(raw) // size)


def float_text(bits: bytes, element: Attribute, printer: Printer) -> None:
    """Print one float element: its bits in hex unless it is finite."""
    value = unpack_float(FLOAT_FORMATS[type(element)], bits)
    if math.isfinite(value):
        printer.print_float(value, element)  # type: ignore[arg-type]
    else:
        printer.print_string("0x" + bits[::-1].hex().upper())


def print_float_list(
    items: Sequence[bytes], shape: Sequence[int], element: Attribute, printer: Printer
) -> None:
    """Print `items` as nested `[...]` lists of `shape`, as xDSL does."""
    if len(shape) <= 1:
        printer.print_string("[")
        printer.print_list(items, lambda bits: float_text(bits, element, printer))
        printer.print_string("]")
        return
    step = len(items) // shape[0]
    rows = [items[i : i + step] for i in range(0, len(items), step)]
    printer.print_string("[")
    printer.print_list(rows, lambda row: print_float_list(row, shape[1:], element, printer))
    printer.print_string("]")


_xdsl_print_without_type = DenseIntOrFPElementsAttr.print_without_type


def print_without_type(attr: DenseIntOrFPElementsAttr, printer: Printer) -> None:
    """`dense<...>` without its type; float elements through `float_text`."""
    element = attr.get_element_type()
    splat = is_splat(attr)
    if type(element) not in FLOAT_FORMATS or not (splat or 0 < len(attr) <= LONG_CONSTANT):
        _xdsl_print_without_type(attr, printer)  # integers, no elements, hex data: exact
        return
    items = element_bits(attr)
    printer.print_string("dense<")
    if splat:
        float_text(items[0], element, printer)
    else:
        shape = attr.get_shape() if attr.shape_is_complete else (len(items),)
        print_float_list(items, shape, element, printer)
    printer.print_string(">")


DenseIntOrFPElementsAttr.is_splat = is_splat  # type: ignore[method-assign]
DenseIntOrFPElementsAttr.print_without_type = print_without_type  # type: ignore[method-assign]
