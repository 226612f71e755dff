"""Parsing `.mlir` text into verified modules with the project's dialects."""

from __future__ import annotations

from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from dvm.dialects import DIALECTS


def make_context() -> Context:
    """A context that knows every dialect the project's programs may use."""
    ctx = Context()
    for name, factory in DIALECTS.items():
        ctx.register_dialect(name, factory)
    return ctx


def parse(source: str | Path, filename: str | None = None) -> ModuleOp:
    """Parse and verify a program given as `.mlir` text or a path to a file.

    A `str` is read as a path when it names an existing `.mlir` file and has
    no newline; otherwise it is program text. Raises xDSL's `ParseError` or
    `VerifyException` (with a `file:line:col` location) on bad input.
    """
    text, name = read_source(source, filename)
    module = Parser(make_context(), text, name).parse_module()
    module.verify()
    return module


def read_source(source: str | Path, filename: str | None = None) -> tuple[str, str]:
    """The text of `source` and the name to report in diagnostics."""
    if isinstance(source, Path) or ("\n" not in source and source.endswith(".mlir")):
        path = Path(source)
        return path.read_text(encoding="utf-8"), filename or str(path)
    return source, filename or "<string>"
