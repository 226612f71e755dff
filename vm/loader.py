"""`load(bytes) -> Program`: decode and validate once, like instantiating a Wasm module."""

from __future__ import annotations

from dvm.vm.binary import decode
from dvm.vm.program import Program
from dvm.vm.slots import compile_slots
from dvm.vm.validate import validate


def load(data: bytes) -> Program:
    """Decode and validate a binary; raises BytecodeError(offset, reason) if malformed.

    The returned Program remembers that it is valid (and its compiled slot
    function), so `program.specialize(...)` only runs the shape-dependent checks.
    """
    program = decode(data)
    check(program)
    return program


def check(program: Program) -> Program:
    """Validate a Program built in Python (as `load` does for bytes); returns it."""
    if "validated" not in program.cache:
        program.cache["validated"] = (validate(program), compile_slots(program.slots))
    return program
