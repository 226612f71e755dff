"""The numpy device VM: an ISA table, a binary format, a validator and two executors.

Stages, as in WebAssembly, each module importing only from the stages before it:

    composites, erf     the elementwise kernels numpy has no single ufunc for
    isa, program        the instruction set (each elementwise row names its numpy
                        kernel) and the program model (plain data)
    generated           compiling generated Python so that tracebacks show its lines
    binary, text        decode: bytes (or assembler text) -> Program, structure only
    validate, loader    validate once: indices, types, loop structure (`load`, `check`)
    static              what every shape of a validated program shares
    specialize          per shape: slots evaluated, layout checked (`checks`, `slots`)
    planner, shapes     per shape, when first needed: the tile plan, typed by the shape rules
    unplanned, planned  the two executors; `launch` picks one and runs it on the cores

Terms:

    slot            an int64 computed from the arguments' dims and the params: every
                    size, stride, offset, tile size and count of a program is one
    view            how a load or store addresses an argument: strided, tiled
    register        a tile buffer in a core's local memory
    specialization  a program bound to concrete argument shapes (`plan.Specialization`)
    tile class      a run of tiles with equal extents (full, tail, empty); a plan
                    types each class's instructions once (`plan.GridPlan`)
    unplanned       a launch run without a plan by one function generated per program:
                    a specialization's first launch when small (`unplanned.py`)
    planned         a launch run by each tile class's instructions bound to numpy calls
                    once per core (`planned.py`)
    alias register  one only loads from read-only arguments write: its loads keep a
                    view of global memory instead of copying

`Specializer` specializes without the cache `specialize` keeps; `prepare` builds
ahead what every shape shares; `launch_stack` runs several launches as one. This
package imports nothing else of dvm but the bf16 dtype of `dvm.numerics`, which
itself imports nothing of the project. Importing it loads the stages up to the
validator; the later ones load at the first use of one of their names here (a
compile cache hit, which only decodes and validates, loads none of them).
"""

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from dvm.vm.binary import decode, encode
from dvm.vm.device import DeviceSpec
from dvm.vm.errors import BytecodeError, LaunchError, TakeIndexError
from dvm.vm.isa import (
    BY_CODE,
    BY_NAME,
    OPCODES,
    AccKind,
    DType,
    ExprOp,
    ExtentKind,
    Kind,
    OpDef,
    ReduceKind,
    ScalarTag,
)
from dvm.vm.loader import check, load
from dvm.vm.program import (
    Arg,
    Extent,
    Index,
    Instr,
    Program,
    Register,
    Scalar,
    Slot,
    Tok,
    View,
    ViewDim,
)

if TYPE_CHECKING:
    from dvm.vm.launch import (
        check_inputs,
        launch,
        launch_stack,
        prepare,
        stack_runner,
        with_blas_held,
    )
    from dvm.vm.plan import Specialization
    from dvm.vm.specialize import Specializer, specialize
    from dvm.vm.stats import LaunchStats
    from dvm.vm.text import AsmError, assemble, disassemble

_LATER = {
    **dict.fromkeys(["check_inputs", "launch", "launch_stack", "prepare"], "launch"),
    **dict.fromkeys(["stack_runner", "with_blas_held"], "launch"),
    "Specialization": "plan",
    **dict.fromkeys(["Specializer", "specialize"], "specialize"),
    "LaunchStats": "stats",
    **dict.fromkeys(["AsmError", "assemble", "disassemble"], "text"),
}
"""The names imported at their first use, by module: what decodes and validates a
program is imported with the package; what specializes and launches it (half of the
package's import time), when a program first runs. A compile cache hit imports none
of it."""


def __getattr__(name: str) -> Any:
    """A name of `_LATER`, imported at its first use (then kept in the package)."""
    module = _LATER.get(name)
    if module is None:
        raise AttributeError(f"module 'dvm.vm' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"dvm.vm.{module}"), name)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    """The package, which keeps `launch` and `specialize` the functions: importing a
    submodule sets the package's attribute of its name to the module, and these two
    functions are named as their modules (`dvm.vm.launch.launch`)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("launch", "specialize") and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

__all__ = [
    "BY_CODE",
    "BY_NAME",
    "OPCODES",
    "AccKind",
    "Arg",
    "AsmError",
    "BytecodeError",
    "DType",
    "DeviceSpec",
    "ExprOp",
    "Extent",
    "ExtentKind",
    "Index",
    "Instr",
    "Kind",
    "LaunchError",
    "LaunchStats",
    "OpDef",
    "Program",
    "ReduceKind",
    "Register",
    "Scalar",
    "ScalarTag",
    "Slot",
    "Specialization",
    "Specializer",
    "TakeIndexError",
    "Tok",
    "View",
    "ViewDim",
    "assemble",
    "check",
    "check_inputs",
    "decode",
    "disassemble",
    "encode",
    "launch",
    "launch_stack",
    "load",
    "prepare",
    "specialize",
    "stack_runner",
    "with_blas_held",
]
