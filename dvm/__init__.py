"""DVM in Python: compile dynamic tensor programs once, run any shape.

Public entry points:

- `parse(text_or_path)` -> a verified xDSL `ModuleOp`;
- `interpret(module_or_text, *args, entry=None)` runs a program with the
  numpy reference interpreter;
- `compile(src, entry=None, device=None)` compiles a program once into a
  callable that runs any shapes on the VM;
- `dvm.lazy` runs numpy code on lazy arrays, recorded and compiled (docs/lazy.md).
"""

import os.path

# In a source checkout the subpackages (dialects/, passes/, lowering/, vm/)
# stand beside this folder; an install maps them into `dvm`. Do the same
# mapping when `dvm` is imported straight from a checkout (e.g. `python -m`
# run from the repository root). (By `os.path`: importing `pathlib` costs
# more than the rest of the package.)
if not os.path.exists(os.path.join(os.path.dirname(__file__), "dialects")):
    __path__.append(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dvm.interpreter import interpret
    from dvm.ir import parse
    from dvm.runtime import compile

__all__ = ["compile", "interpret", "parse"]

_PUBLIC = {"interpret": "dvm.interpreter", "parse": "dvm.ir", "compile": "dvm.runtime"}


def __getattr__(name: str) -> Any:
    """Import the public API on first use, so that tools such as `dvm-opt`
    start without loading the interpreter (and numpy and sympy with it)."""
    import importlib

    if name in _PUBLIC:
        return getattr(importlib.import_module(_PUBLIC[name]), name)
    if name == "lazy":  # numpy code on lazy arrays (docs/lazy.md)
        return importlib.import_module("dvm.lazy")
    raise AttributeError(f"module 'dvm' has no attribute {name!r}")
