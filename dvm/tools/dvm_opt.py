"""`dvm-opt`: parse, verify, transform and print tensor programs, MLIR-style.

    dvm-opt program.mlir                      parse, verify, print
    dvm-opt program.mlir -p fuse -o out.mlir  run a pass pipeline
    dvm-opt bad.mlir --verify-diagnostics --split-input-file

It is xDSL's `xdsl-opt` (all its standard flags work) with only this
project's dialects, passes and targets registered, and one promise more:
every error is a diagnostic on stderr -- `file:line:col: error: message`
where a location exists -- with exit code 1, never a Python traceback.

To add a pass, add one line to `dvm.passes.PASSES`; to add an output format, one line
to `TARGETS`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    DiagnosticException,
    ParseError,
    VerifyException,
)
from xdsl.utils.frontend import Frontend
from xdsl.utils.lexer import Span
from xdsl.utils.target import Target
from xdsl.xdsl_opt_main import xDSLOptMain

from dvm.dialects import DIALECTS
from dvm.ir import (
    LocatedDiagnostic,
    LocatingParser,
    decode_utf8,
    format_parse_error,
    locate,
    verify,
)
from dvm.passes import PASSES
from dvm.passes.errors import ProgramError

PROG = "dvm-opt"


def _mlir_target() -> type[Target]:
    from xdsl.targets.mlir import MLIRTarget

    return MLIRTarget


def _mlir_frontend() -> type[Frontend]:
    from xdsl.frontend.mlir import MLIRFrontend

    return MLIRFrontend


@dataclass(frozen=True)
class BytecodeTarget(Target):
    """The module's `bytecode.program`s as a binary module file (`.dvmb`)."""

    name = "bytecode"

    path: str = ""
    """Where the binary goes (dvm-opt passes its `-o` file)."""

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from dvm.lowering.bytecode_to_vm import encode_module
        from dvm.vm import BytecodeError

        if not self.path:
            raise ToolError("-t bytecode writes binary data: give a file with -o")
        try:
            data = encode_module(module)
        except BytecodeError as e:  # a hand-written program beyond the format's fields
            raise ToolError(f"cannot encode the bytecode: {e}") from None
        Path(self.path).write_bytes(data)


@dataclass(frozen=True)
class BytecodeAsmTarget(Target):
    """Each `bytecode.program` in the VM's assembler text (what the binary holds)."""

    name = "bytecode-asm"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from dvm.dialects.bytecode import ProgramOp
        from dvm.lowering.bytecode_to_vm import to_program
        from dvm.vm import disassemble

        for program in module.ops:
            if isinstance(program, ProgramOp):
                output.write(f"; program @{program.sym_name.data}\n")
                output.write(disassemble(to_program(program)))


TARGETS: dict[str, Callable[[], type[Target]]] = {
    "mlir": _mlir_target,
    "bytecode": lambda: BytecodeTarget,
    "bytecode-asm": lambda: BytecodeAsmTarget,
}
"""The output formats `-t` may name; "mlir" (text IR) is the default."""


def _package_version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"


# --------------------------------------------------------------------------
# Diagnostics
# --------------------------------------------------------------------------


class ToolError(Exception):
    """An error without a source location, reported as `dvm-opt: error: ...`."""


# --------------------------------------------------------------------------
# The tool
# --------------------------------------------------------------------------


class DvmOptMain(xDSLOptMain):
    """xdsl-opt with the project's dialects, passes and targets only."""

    version_format = f"{PROG} {_package_version('dvm')} (dvm, built on xDSL {{xdsl_version}})"

    spans: dict[Operation, Span[str]]
    """Where each op of the chunk being processed was written."""

    def __init__(self, args: Sequence[str] | None = None):
        self.spans = {}
        super().__init__(
            description="Parse, verify, transform and print dvm tensor programs.", args=args
        )

    # Registration ---------------------------------------------------------

    def register_all_dialects(self) -> None:
        for name, factory in DIALECTS.items():
            self.ctx.register_dialect(name, factory)

    def register_all_frontends(self) -> None:
        self.available_frontends["mlir"] = _mlir_frontend

    def register_all_passes(self) -> None:
        for name, factory in PASSES.items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        self.available_targets.update(TARGETS)

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.prog = PROG
        arg_parser.usage = f"{PROG} [options] [input_file]"  # not the 20 flags
        for action in arg_parser._actions:  # (argparse has no public way to reach them)
            if action.dest in ("target", "frontend"):
                action.type = output_spec if action.dest == "target" else spec_text
        arg_parser.add_argument(
            "--show-traceback",
            action="store_true",
            help="on an internal error, show the Python traceback (for debugging dvm itself)",
        )

    # Input ----------------------------------------------------------------

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        """The input, read as MLIR text whatever the file's extension; `-` (or no file)
        is standard input, as for mlir-opt."""
        if self.args.input_file == "-":
            return sys.stdin.buffer, "mlir"
        stream, _ = super().get_input_stream()
        return stream, "mlir"

    def get_input_name(self) -> str:
        name = super().get_input_name()
        return "stdin" if name == "-" else name

    def parse_chunk(
        self, chunk: IO[bytes], file_extension: str, start_offset: int = 0
    ) -> ModuleOp | None:
        """Parse one chunk of the input, remembering where its ops are."""
        name = self.get_input_name()
        data = chunk.read()
        if name.endswith(".dvmb"):  # a binary module file: show it as bytecode IR
            return binary_module(data, name)
        text = decode_utf8(data, name)
        parser = LocatingParser(self.ctx, text, name, start_offset)
        module = parser.parse_module(not self.args.no_implicit_module)
        self.spans = parser.spans
        try:
            verify(module, parser.spans)
        except VerifyException as e:
            raise LocatedDiagnostic(str(e)) from None
        return module

    # Output ---------------------------------------------------------------

    def prepare_output(self) -> IO[str]:
        """The `-o` file (or stdout), refused before it is opened for a binary target
        that chunks would overwrite: a binary module has no separators."""
        if self.args.split_input_file and parse_spec(self.args.target).name == "bytecode":
            raise ToolError(
                "-t bytecode writes one binary module: with --split-input-file, "
                "write each chunk to a file of its own"
            )
        return super().prepare_output()

    def output_resulting_program(self, prog: ModuleOp) -> str:
        """Text targets through xDSL; the binary straight into the `-o` file."""
        if parse_spec(self.args.target).name == "bytecode":
            BytecodeTarget(self.args.output_file or "").emit(self.ctx, prog, sys.stdout)
            return ""
        return super().output_resulting_program(prog)

    # Passes ---------------------------------------------------------------

    def setup_pipeline(self) -> None:
        """Build the `-p` pipeline; a bad pipeline is a `ToolError`."""
        try:
            super().setup_pipeline()
        except ArgSpecParseError as e:  # a syntax error, shown at its place in the spec
            raise ToolError(f"invalid pass pipeline {self.args.passes!r}:\n{detail(e)}") from None
        except ValueError as e:
            known = ", ".join(self.available_passes) or "(none yet)"
            raise ToolError(
                f"invalid pass pipeline {self.args.passes!r}: {e}; available passes: {known}"
            ) from None

    def apply_passes(self, prog: ModuleOp) -> None:
        """Run the pipeline (which verifies); verifier errors point at the op's source."""
        try:
            super().apply_passes(prog)
        except VerifyException as e:
            located = locate(e, prog, self.spans)
            if located is None:  # no place found: the notes show the IR, the op marked
                notes = [n.rstrip("\n") for n in getattr(e, "__notes__", [])]
                located = "\n".join([f"{PROG}: error: {e}", *notes])
            raise LocatedDiagnostic(located) from None


def detail(e: ArgSpecParseError) -> str:
    """xDSL's message of a spec that does not parse: the spec, the place marked."""
    return str(e).removeprefix("Error parsing pass pipeline specification:\n")


def spec_text(text: str) -> str:
    """A `-t` or `-f` value, checked as argparse reads it: a spec that does not parse is
    a usage error naming its flag (xDSL's `ArgSpecParseError` is a BaseException, which
    would escape as a traceback)."""
    try:
        parse_spec(text)
    except ArgSpecParseError as e:
        raise argparse.ArgumentTypeError(f"invalid spec {text!r}:\n{detail(e)}") from None
    return text


def output_spec(text: str) -> str:
    """A `-t` value whose options its target takes (an unknown name is xDSL's error)."""
    spec = parse_spec(spec_text(text))
    if spec.name in TARGETS:
        try:
            TARGETS[spec.name]().from_spec(spec)
        except ValueError as e:
            raise argparse.ArgumentTypeError(f"invalid spec {text!r}: {e}") from None
    return text


def binary_module(data: bytes, name: str) -> ModuleOp:
    """A `.dvmb` file decoded (and validated) into `bytecode.program` ops."""
    from dvm.lowering.bytecode_to_vm import decode_module, from_program
    from dvm.vm import BytecodeError, check

    try:
        programs = decode_module(data)
        for _, program in programs:
            check(program)
    except BytecodeError as e:
        raise ToolError(f"{name}: {e}") from None
    return ModuleOp([from_program(program, label) for label, program in programs])


def report(message: str) -> int:
    """Print a diagnostic on stderr; the exit code of a failed run."""
    print(message.rstrip("\n"), file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    """Run `dvm-opt` with `argv` (default: the command line); returns the exit code."""
    show_traceback = "--show-traceback" in (sys.argv[1:] if argv is None else argv)
    try:
        DvmOptMain(args=argv).run()
    except SystemExit as e:  # argparse exits 0 after --help, 2 on a usage error
        return 0 if e.code in (0, None) else 1
    except ParseError as e:
        return report(format_parse_error(e))
    except LocatedDiagnostic as e:
        return report(str(e))
    except ProgramError as e:  # a pass found the program invalid, at a located op
        return report(f"{e.where or f'{PROG}: '}error: {e.detail}")
    except DiagnosticException as e:  # e.g. a pass failed: the notes show the IR
        notes = [n.rstrip("\n") for n in getattr(e, "__notes__", [])]
        return report("\n".join([f"{PROG}: error: {e}", *notes]))
    except ToolError as e:
        return report(f"{PROG}: error: {e}")
    except BrokenPipeError:  # whoever read our stdout has gone (e.g. `| head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as e:  # a missing, unreadable or unwritable file
        where = f" {e.filename!r}" if e.filename else ""
        return report(f"{PROG}: error: cannot access{where}: {e.strerror or e}")
    except KeyboardInterrupt:
        report(f"{PROG}: interrupted")
        return 130
    except Exception as e:
        if show_traceback:
            raise
        return report(
            f"{PROG}: internal error: {type(e).__name__}: {e}\n"
            f"(this is a bug in dvm; rerun with --show-traceback for details)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
