"""Python generated at run time: compiled so that a traceback shows its lines.

The VM and the runtime generate Python functions (a program's slot table, its fast
path, its unplanned launch; a compiled program's sizes and guards). `define` compiles
each under a filename that says what it is and the program it came from,
`<dvm slots: fused_3 #12>`, and registers its source with `linecache`, so that a
traceback through it shows the generated line, as for a file. The entry lives as long
as the function: many programs compiled and dropped leave no sources behind.

Python's `compile` of a source is most of what making a function costs (BERT's
kernels: 40 ms of a 230 ms compile), and programs generate the same source again: a
model's repeated layers make equal kernels, and a program compiled again makes what it
made before. The compiled code of the latest sources is kept (`MAX_KEPT_CODE`; code
objects are immutable) and reused under the new filename.
"""

from __future__ import annotations

import itertools
import linecache
import weakref
from types import CodeType
from typing import Any

_numbers = itertools.count()
"""Numbers the generated sources, so that two with the same origin differ."""
_free: list[int] = []
"""Numbers whose function is gone, to use again: Python keeps every filename it has
compiled code under, so new numbers forever would grow memory without bound."""
MAX_KEPT_CODE = 512
"""Compiled sources kept (all are dropped when full)."""
_kept_code: dict[str, CodeType] = {}
"""The code of the latest sources compiled, by source."""


def define(source: str, name: str, namespace: dict[str, Any], origin: str) -> Any:
    """Run `source`, which defines `name`, in `namespace`, and return what it defined.

    `origin` says what the code is and where it came from (`slots: fused_3`); the
    source is registered with `linecache` under `<dvm {origin} #n>` until the defined
    object is collected (functions it makes must not outlive it: their lines go with
    it, and its number is used again)."""
    # a free number, else a new one (list.pop and append are atomic, so no lock: a
    # finalizer run by a collection in the middle of `define` would wait on it forever)
    try:
        number = _free.pop()
    except IndexError:
        number = next(_numbers)
    filename = f"<dvm {origin} #{number}>"
    exec(compiled(source, filename), namespace)
    defined = namespace[name]
    # mtime None: `linecache.checkcache` keeps it (there is no file to compare with)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    weakref.finalize(defined, _forget, filename, number).atexit = False
    return defined


def compiled(source: str, filename: str) -> CodeType:
    """The code of `source`, compiled under `filename`: compiled again only when not kept
    (dict reads and writes are atomic, so threads need no lock)."""
    code = _kept_code.get(source)
    if code is None:  # (under its own filename, as a syntax error would show it)
        code = compile(source, filename, "exec")
        if len(_kept_code) >= MAX_KEPT_CODE:
            _kept_code.clear()
        _kept_code[source] = code
        return code
    return renamed(code, filename)


def renamed(code: CodeType, filename: str) -> CodeType:
    """`code`, and the code of the functions it defines, under `filename`."""
    consts = tuple(renamed(c, filename) if isinstance(c, CodeType) else c for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def _forget(filename: str, number: int) -> None:
    """Drop the source of a function that is gone, and free its number."""
    linecache.cache.pop(filename, None)
    _free.append(number)


def program_origin(what: str, name: str) -> str:
    """`what` of the program `name` (`slots: fused_3`), or just `what` when unnamed."""
    return f"{what}: {name}" if name else what
