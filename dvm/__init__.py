"""DVM in Python: compile dynamic tensor programs once, run any shape.

Public entry points:

- `parse(text_or_path)` -> a verified xDSL `ModuleOp`;
- `interpret(module_or_text, *args, entry=None)` runs a program with the
  numpy reference interpreter.
"""

from dvm.interpreter import interpret
from dvm.ir import parse

__all__ = ["interpret", "parse"]
