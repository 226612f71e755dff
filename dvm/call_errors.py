"""What a compiled call says when it cannot run on arguments that passed its checks.

Sizes computed during a call can be more than the machine or the VM can take: a
result too large to address or to allocate, a negative dim made from an `index`
argument, a kernel whose views or work exceed the VM's bounds. The runtime raises
`Unrunnable` where it finds out, and the call turns it into a `CallError` (or the
error class it names) that names the call's arguments, the sizes and the bytes
needed: never a byte offset of the bytecode or numpy's own exception.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any, NoReturn

import numpy as np

from dvm.declared import Declared
from dvm.errors import CallError, DvmError, ShapeError
from dvm.vm import BytecodeError, LaunchError
from dvm.vm.program import MAX_ARRAY_BYTES

Outputs = Sequence[tuple[tuple[int, ...], np.dtype[Any]]]
"""A launch's outputs: (shape, dtype) each."""


class Unrunnable(Exception):
    """A call cannot run at its sizes; the call raises `kind` with this message after
    the description of its arguments."""

    def __init__(self, message: str, kind: type[DvmError] = CallError) -> None:
        super().__init__(message)
        self.kind = kind


FAILURES = (Unrunnable, BytecodeError, LaunchError, MemoryError)
"""What a call's run may raise that `fail` turns into a DvmError."""


def fail(declared: Declared, args: Sequence[Any], error: BaseException) -> NoReturn:
    """Raise the error a call raises for `error` (one of FAILURES), naming its
    arguments; its cause is what the VM or numpy raised."""
    call = declared.describe_call(args)
    if isinstance(error, Unrunnable):
        raise error.kind(f"{call}: {error}") from error.__cause__
    what = refused(error) if isinstance(error, ValueError) else Unrunnable("out of memory")
    raise what.kind(f"{call}: {what}") from error


def refused(error: ValueError) -> Unrunnable:
    """The VM's refusal to specialize or launch, without a byte offset: a size it cannot
    take, or a negative one (which only `index` values can make) as a ShapeError."""
    if not isinstance(error, BytecodeError):
        return Unrunnable(f"the VM cannot run it at these sizes: {error}")
    detail = f" ({error.detail})" if error.detail else ""
    if error.reason.startswith("negative"):
        return Unrunnable(f"a size is negative: {error.reason}{detail}", ShapeError)
    return Unrunnable(f"the VM cannot run it at these sizes: {error.reason}{detail}")


def check_outputs(outputs: Outputs) -> bool:
    """Whether some output has an element (else a launch would write nothing); raise
    Unrunnable for an output with a negative dim (a ShapeError) or too many bytes for
    an array to address (numpy's bound, which the VM's views keep too). Once per kernel
    and new shape, in C-level calls (a generator's frame costs a new shape more than
    the check)."""
    elements = False
    for shape, dtype in outputs:
        if min(shape, default=0) < 0:
            raise Unrunnable(f"an array would have shape {shape}: a dim is negative", ShapeError)
        nominal = math.prod(map(max, shape, itertools.repeat(1))) * dtype.itemsize
        if nominal > MAX_ARRAY_BYTES:
            raise Unrunnable(
                f"it needs an array of {shape} {dtype}, {byte_count(nominal)}: more than an"
                f" array can address (2**{MAX_ARRAY_BYTES.bit_length() - 1} bytes)"
            )
        elements = elements or 0 not in shape
    return elements


def not_allocated(outputs: Outputs) -> Unrunnable:
    """The failure of a launch whose outputs could not be allocated."""
    needed = sum(math.prod(shape) * dtype.itemsize for shape, dtype in outputs)
    arrays = ", ".join(f"{shape} {dtype}" for shape, dtype in outputs)
    return Unrunnable(
        f"it needs arrays of {arrays}, {byte_count(needed)}, which could not be allocated"
    )


def byte_count(n: int) -> str:
    """`160000000000 bytes (149 GiB)`."""
    unit = 0
    size = float(n)
    while size >= 1024 and unit < 6:
        size, unit = size / 1024, unit + 1
    human = f"{size:.3g} {['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'][unit]}"
    return f"{n} bytes" if unit == 0 else f"{n} bytes ({human})"
