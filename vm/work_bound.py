"""An unplanned launch's work bound and loop passes (`unplanned.py`), generated once per
program from its validated slot indices."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dvm.vm.generated import define, program_origin
from dvm.vm.isa import Cat
from dvm.vm.program import Program
from dvm.vm.static import static_info


def work_bound(p: Program) -> Callable[[Sequence[int]], tuple[list[int], int] | None]:
    """Generate `bound(s)`: the grid's extents and the steps a launch takes (the
    instructions of every nest times its loops' trip counts, a negative count as 0, per
    tile), or None when an extent is negative. Made from validated slot indices only."""
    nests: dict[tuple[str, ...], int] = {}
    trips: list[str] = []
    for k, ins in enumerate(p.code):
        nests[tuple(trips)] = nests.get(tuple(trips), 0) + 1
        if ins.op.cat is Cat.LOOP:
            trips.append(f"_max({passes(p, k)}, 0)")
        elif ins.op.cat is Cat.ENDLOOP and trips:
            trips.pop()
    extents = [f"s[{g}]" for g in p.grid]
    per_tile = ["1"]
    for nest, count in nests.items():
        per_tile.append(" * ".join([str(count), *nest]))
    lines = [
        "def bound(s):",
        f"    e = [{', '.join(extents)}]",
        f"    if {' or '.join(f'{x} < 0' for x in extents) or 'False'}: return None",
        f"    return e, {' * '.join(extents) or '1'} * ({' + '.join(per_tile)})",
    ]
    namespace: dict[str, Any] = {"__builtins__": {}, "_max": max}
    return define("\n".join(lines) + "\n", "bound", namespace, program_origin("work bound", p.name))


def passes(p: Program, k: int) -> str:
    """Python text of the passes loop k makes: its count, or 0 when it holds only an
    inner loop that makes no pass (`static.perfect_nests`, as the planner decides)."""
    count = f"s[{p.code[k].operands[0]}]"
    inner = static_info(p).nests.get(k)
    return count if inner is None else f"({count} if {_acts(p, inner)} else 0)"


def _acts(p: Program, k: int) -> str:
    """Python text: whether loop k's passes do something or fail (a negative count fails
    in its first pass, which must run for that)."""
    count = f"s[{p.code[k].operands[0]}]"
    inner = static_info(p).nests.get(k)
    return count if inner is None else f"({count} < 0 or {count} and {_acts(p, inner)})"
