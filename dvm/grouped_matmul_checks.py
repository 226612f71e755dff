"""The run-time check of the group sizes a grouped matmul kernel reads.

The sizes are data: before each launch of a kernel with grouped matmuls
(`GROUP_SIZES`), each one's sizes are checked against the rows they split, as
the reference interpreter checks them and with its message (an ExecutionError
naming the op). The VM's `gmma` checks them too, but can only name itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects.builtin import ArrayAttr

from dvm.codegen import python_function
from dvm.dialects.expr import symbol_names
from dvm.dialects.grouped_matmul import group_sizes_error
from dvm.errors import ExecutionError
from dvm.lowering.grouped_matmul import GROUP_SIZES, read_group_size_checks


def checked_group_sizes(
    attributes: dict[str, Any], inputs: Sequence[int], step: Callable[[Any, Any], None]
) -> Callable[[Any, Any], None]:
    """`step` (a launch whose inputs are the call's values `inputs`), after checking the
    group sizes of its kernel's grouped matmuls (from the launch's `attributes`);
    `step` itself when it has none."""
    entries = attributes.get(GROUP_SIZES)
    if not isinstance(entries, ArrayAttr):
        return step
    checks = read_group_size_checks(entries)
    names = sorted(symbol_names(rows for _, _, rows in checks))
    rows_of = python_function([rows for _, _, rows in checks], names, "group sizes")

    def checked(call: Any, env: Any) -> None:
        rows = rows_of(*[call.symbols[n] for n in names])
        for (label, index, _), count in zip(checks, rows, strict=True):
            error = group_sizes_error(label, env[inputs[index]].tolist(), count)
            if error is not None:
                raise ExecutionError(error)
        step(call, env)

    return checked
