"""The compiler's libraries, xDSL and sympy, imported with the cyclic garbage collector
paused, then frozen (`gc.freeze`).

Importing them makes about 160,000 objects that live as long as the process and
almost no garbage (some 450 objects): as they are made, the collector would walk them
again and again to find nearly nothing (a fresh process's first `dvm.compile` of gelu
ran some 240 young collections and two full ones: 130 ms of CPU, a tenth of its start,
25-30 ms so). Frozen, they are skipped by every later collection, as what
`runtime.freeze_once` freezes after the first compile is. `dvm.ir` imports this module
first; `runtime.FREEZE_AFTER_FIRST_COMPILE = False`, set before the first compile,
leaves the collector alone here too.
"""

from __future__ import annotations

import gc
import importlib
import sys


def _collector_left_alone() -> bool:
    """Whether the caller asked the runtime to leave the collector alone (read where it
    asks: importing the runtime here would load it into every tool that parses)."""
    runtime = sys.modules.get("dvm.runtime")
    return runtime is not None and not getattr(runtime, "FREEZE_AFTER_FIRST_COMPILE", True)


LIBRARIES = (
    "sympy",
    "xdsl.context",
    "xdsl.dialects.arith",
    "xdsl.dialects.builtin",
    "xdsl.dialects.func",
    "xdsl.dialects.scf",
    "xdsl.interpreter",
    "xdsl.irdl",
    "xdsl.parser",
    "xdsl.passes",
    "xdsl.printer",
    "xdsl.rewriter",
)
"""The modules of xDSL and sympy a compile imports (with what they import)."""


def _import_libraries() -> None:
    for name in LIBRARIES:
        importlib.import_module(name)


def _import_frozen() -> None:
    if _collector_left_alone():
        _import_libraries()
        return
    collecting = gc.isenabled()
    gc.disable()
    try:
        _import_libraries()
        gc.freeze()
    finally:
        if collecting:
            gc.enable()


_import_frozen()
