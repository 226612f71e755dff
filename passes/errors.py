"""Errors passes raise about the program they transform (no heavy imports,
so tools can catch them without loading sympy)."""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException

from dvm.dialects.locations import where
from dvm.errors import DvmError


def describe(op: Operation) -> str:
    """How messages and guards name an op: `%name = dialect.op`, or as it was
    written, `%name:2 = ...` for results that share a name (a pack) and
    `%a, %b = ...` for results named apart."""
    hints = [r.name_hint for r in op.results]
    if len(hints) > 1 and hints[0] and hints.count(hints[0]) == len(hints):
        names = [f"%{hints[0]}:{len(hints)}"]
    else:
        names = [f"%{hint}" if hint else "%?" for hint in hints]
    return f"{', '.join(names)} = {op.name}" if names else op.name


def located(op: Operation) -> str:
    """How an error names an op: `file:line:col: %name = dialect.op`."""
    return f"{where(op)}{describe(op)}"


class ProgramError(DvmError, DiagnosticException):
    """A pass found the program invalid. The message names the op; when the
    op was parsed from a file, it starts with that `file:line:col`. A `DvmError`,
    as every error dvm raises on purpose."""

    def __init__(self, op: Operation, message: str):
        super().__init__(f"{located(op)}: {message}")
        self.op = op
        self.where = where(op)
        self.detail = f"{describe(op)}: {message}"
