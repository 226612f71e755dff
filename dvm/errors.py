"""The errors dvm raises on purpose, so that callers can tell them from bugs.

Every class derives from `DvmError`; each also derives from the builtin
exception a Python user would expect (`ValueError` for bad values), so that
`except ValueError` keeps working.
"""

from __future__ import annotations


class DvmError(Exception):
    """Base class of every error that dvm raises deliberately."""


class CallError(DvmError, ValueError):
    """A program was called with arguments that do not fit its signature, or
    whose sizes are more than the machine or the VM can take.

    The message names the function, the argument (position and `%name`), and
    what was expected and what was given: count, element type, rank or dim;
    or every argument's shape (an `index` argument's value), the size and the
    bytes a result or a kernel would need.
    """


class ExecutionError(DvmError, ValueError):
    """An op cannot run on the values it got at run time, e.g. an index out of
    range or a loop step that is not positive. The message names the op."""


class IndexOutOfRangeError(ExecutionError, IndexError):
    """An index tensor holds an element outside the dim it indexes (`take`,
    `take_along_axis`, `scatter_add`): an `IndexError` too, as numpy and torch raise.
    The message names the op, the index and the dim."""


class ShapeError(ExecutionError):
    """Run-time shapes break an op's rules: operands that do not broadcast,
    contraction dims that differ, a result that contradicts its static type."""


class CompileError(DvmError):
    """The program cannot be compiled: an op `dvm.compile` does not run, an unknown
    device (the message names what and where)."""
