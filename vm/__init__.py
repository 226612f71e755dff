"""The numpy device VM: an ISA table, a binary format, a validator and an interpreter.

Stages, as in WebAssembly: `decode` (bytes -> Program, structure only),
`load` (decode + validate once), optionally `prepare` (what every shape
shares, built before the first call), `Program.specialize(shapes, params)`
(shape-dependent checks and the tile plan, cached per shape; `Specializer`
without the cache), `launch` (run the grid on the cores; `launch_stack`
runs several launches as one). This package imports nothing else of dvm.
"""

from dvm.vm.binary import decode, encode
from dvm.vm.device import DeviceSpec
from dvm.vm.errors import BytecodeError
from dvm.vm.interpreter import LaunchError, launch, launch_stack, prepare, with_blas_held
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
from dvm.vm.specialize import Specialization, Specializer, specialize
from dvm.vm.stats import LaunchStats
from dvm.vm.text import AsmError, assemble, disassemble

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
    "Tok",
    "View",
    "ViewDim",
    "assemble",
    "check",
    "decode",
    "disassemble",
    "encode",
    "launch",
    "launch_stack",
    "load",
    "prepare",
    "specialize",
    "with_blas_held",
]
