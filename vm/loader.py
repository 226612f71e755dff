"""`load(bytes) -> Program`: decode and validate once, like instantiating a Wasm module."""

from __future__ import annotations

from dvm.vm.binary import decode
from dvm.vm.generated import program_origin
from dvm.vm.program import Program
from dvm.vm.slots import SlotTable
from dvm.vm.validate import LoopInfo, validate


def load(data: bytes) -> Program:
    """Decode and validate a binary; raises BytecodeError(offset, reason) if malformed.

    The returned Program remembers that it is valid (and its compiled slot
    function), so specializing it only runs the shape-dependent checks.
    """
    program = decode(data)
    check(program)
    return program


def check(program: Program) -> Program:
    """Validate a Program built in Python (as `load` does for bytes); returns it."""
    validated(program)
    return program


def validated(program: Program) -> tuple[LoopInfo, SlotTable]:
    """The program's loop structure and slot function (compiled when first called),
    validating it the first time (remembered in the program)."""
    got = program.cache.validated
    if got is None:
        loops = validate(program)  # first: the slots are compiled only once valid
        slot_table = SlotTable(program.slots, program_origin("slots", program.name))
        got = program.cache.validated = (loops, slot_table)
    return got
