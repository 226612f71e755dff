"""Where an op stands in the text it was parsed from, as errors name it."""

from __future__ import annotations

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation


def where(op: Operation) -> str:
    """`file:line:col: ` of an op parsed from a file ("" for any other)."""
    location = op.location
    if isinstance(location, FileLineColLoc):
        return f"{location.filename.data}:{location.line.data}:{location.column.data}: "
    return ""
