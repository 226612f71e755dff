"""The shape-dependent layout checks of a program as one generated Python function.

Specialization checks that registers are aligned, inside local memory and
disjoint, and that every view stays inside its argument (see
`specialize.py`). Those checks walk the register and view tables, which a
program fixes: so, like the slot table (`slots.py`), the walk is turned once
per program into straight-line source

    def layout(s, D):                # s: slot values; D: the arguments' shapes
        c0 = s[3] * s[4]             # register r0: capacity, offset, checks
        o0 = s[5]
        if ... : return None         # any failed check: None
        ...
        v0 = _new(ViewPlan, (0, s[5], (z0, z1), (t0, t1), ((0, 1, g0),), False, n0))
        return (((o0, c0), ...), (v0, ...), {source: ((size, tile), ...)}, caps, sizes)

built only from validated table indices, constants and fixed operators.
A constant slot appears as its literal, and a check that a constant or a
dim's sign decides is left out (a dim is never negative, so a stride that is
one only raises a view's highest element). It returns None as soon as a
check fails; the specializer then walks the tables the slow way, which names
the failing entry and reason. The fuzz tests hold the two to agreement.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from dvm.vm.isa import ExprOp
from dvm.vm.program import Index, Program, View

LayoutFn = Callable[[Sequence[int], Sequence[Sequence[int]]], "tuple[Any, ...] | None"]

MAX_ARRAY_BYTES = 2**62
"""numpy refuses arrays (even empty ones) whose dims multiply past this."""


class _Slots:
    """What the generator knows of each slot before any shape: a constant's value, and
    whether it can be negative (a dim never is: arguments are checked first)."""

    def __init__(self, p: Program) -> None:
        self.const: list[int | None] = []
        self.nonneg: list[bool] = []
        for slot in p.slots:
            leaf = slot.expr[0] if len(slot.expr) == 1 else None
            value = leaf.a if leaf is not None and leaf.op is ExprOp.CONST else None
            self.const.append(value)
            counted = leaf is not None and leaf.op in (ExprOp.DIM, ExprOp.CORES)
            self.nonneg.append(counted or (value is not None and value >= 0))

    def text(self, k: int) -> str:
        """Slot k as an expression: its literal when constant."""
        value = self.const[k]
        return f"s[{k}]" if value is None else f"({value})"


def layout_source(p: Program, local_bytes: int, alignment: int) -> str:
    """Python source of the layout function of a validated program on a device."""
    lines = ["def layout(s, D):"]
    emit = lines.append
    for k in sorted({v.arg for v in p.views}):  # elements of each argument a view reads
        emit(f"    numel{k} = {' * '.join(f'D[{k}][{j}]' for j in range(p.args[k].rank)) or '1'}")
    known = _Slots(p)
    val = known.text
    # register dims, view sizes and tile sizes may not be negative: one test per slot
    counts = sorted(
        {d for r in p.registers for d in r.shape}
        | {vd.size for v in p.views for vd in v.dims}
        | {
            vd.tile
            for v in p.views
            for vd in v.dims
            if vd.index != Index.NONE and vd.tile is not None
        }
    )
    tested = [f"{val(d)} < 0" for d in counts if not known.nonneg[d]]
    if tested:
        emit(f"    if {' or '.join(tested)}: return None")
    spans = []
    for i, r in enumerate(p.registers):
        dims = [val(d) for d in r.shape]
        item = r.dtype.np.itemsize
        emit(f"    c{i} = {' * '.join(dims) or '1'}")
        emit(f"    o{i} = {val(r.offset)}")
        emit(f"    e{i} = o{i} + c{i} * {item}")
        offset = known.const[r.offset]
        if offset is None:
            emit(f"    if o{i} < 0 or o{i} % {alignment} or e{i} > {local_bytes}: return None")
        elif offset < 0 or offset % alignment:
            emit("    return None")
        else:
            emit(f"    if e{i} > {local_bytes}: return None")
        spans.append(f"(o{i}, e{i})")
    if len(spans) > 1:
        # the compiler lays registers out in order: one chained comparison proves
        # that order; any other layout takes the general test
        chain = " <= ".join(f"o{i} <= e{i}" for i in range(len(spans)))
        emit(f"    if not {chain} and not _disjoint([{', '.join(spans)}]): return None")
    regs = "".join(f"(o{i}, c{i}), " for i in range(len(p.registers)))
    keys: dict[int, list[str]] = {}
    for i, v in enumerate(p.views):
        rank = len(v.dims)
        item = p.args[v.arg].dtype.np.itemsize
        z = [f"z{i}_{d}" for d in range(rank)]
        st = [f"t{i}_{d}" for d in range(rank)]
        for d, vd in enumerate(v.dims):
            emit(f"    {z[d]} = {val(vd.size)}")
            emit(f"    {st[d]} = {val(vd.stride)}")
        tiled = []
        for d, vd in enumerate(v.dims):
            if vd.index != Index.NONE and vd.tile is not None:
                emit(f"    g{i}_{d} = {val(vd.tile)}")
                tiled.append(f"({d}, {vd.index}, g{i}_{d})")
                keys.setdefault(vd.index, []).append(f"({z[d]}, g{i}_{d})")
        emit(f"    f{i} = {val(v.offset)}")
        sizes = [known.const[vd.size] for vd in v.dims]
        varying = [n for n, c in zip(z, sizes, strict=True) if c is None]
        fixed = math.prod(max(c, 1) for c in sizes if c is not None)
        nominal = "".join(f"({n} if {n} > 1 else 1) * " for n in varying)
        if varying or fixed * item > MAX_ARRAY_BYTES:
            emit(f"    if {nominal}{fixed * item} > {MAX_ARRAY_BYTES}: return None")
        empty = [f"{n} == 0" for n in varying] if 0 not in sizes else ["True"]
        emit(f"    m{i} = {' or '.join(empty) or 'False'}")
        emit(f"    n{i} = False")
        emit(f"    if not m{i}:")
        _bounds(emit, known, v, i, z, st)
        dense = []
        acc = "1"
        for d in reversed(range(rank)):
            unit = known.const[v.dims[d].size] == 1
            if not unit and not (acc == "1" and known.const[v.dims[d].stride] == 1):
                dense.append(f"({z[d]} == 1 or {st[d]} == {acc})")
            acc = f"{acc} * {z[d]}" if acc != "1" else z[d]
        offset = known.const[v.offset]
        at_zero = [] if offset == 0 else [f"f{i} == 0"]
        cond = " and ".join([*at_zero, *dense, f"{acc} == numel{v.arg}"])
        emit(f"        n{i} = {'False' if offset not in (None, 0) else cond}")
        tiled_text = "".join(f"{t}, " for t in tiled)
        emit(
            f"    v{i} = _new(_View, ({v.arg}, f{i}, ({''.join(f'{n}, ' for n in z)}), "
            f"({''.join(f'{t}, ' for t in st)}), ({tiled_text}), m{i}, n{i}))"
        )
    views = "".join(f"v{i}, " for i in range(len(p.views)))
    key_text = ", ".join(f"{src}: ({''.join(q + ', ' for q in qs)})" for src, qs in keys.items())
    caps = "".join(f"c{i}, " for i in range(len(p.registers)))
    sizes = "".join(
        f"({''.join(f'z{i}_{d}, ' for d in range(len(v.dims)))}), " for i, v in enumerate(p.views)
    )
    emit(f"    return (({regs}), ({views}), {{{key_text}}}, ({caps}), ({sizes}))")
    return "\n".join(lines) + "\n"


def _bounds(
    emit: Callable[[str], None], known: _Slots, v: View, i: int, z: list[str], st: list[str]
) -> None:
    """The lowest and highest element a non-empty view reaches must lie in its argument.
    A stride known not to be negative only raises the highest; one known to be 0 or 1
    needs no product."""
    signed = not known.nonneg[v.offset] or any(not known.nonneg[vd.stride] for vd in v.dims)
    emit(f"        lo = hi = f{i}" if signed else f"        hi = f{i}")
    for d, vd in enumerate(v.dims):
        stride = known.const[vd.stride]
        if stride == 0:
            continue
        if stride == 1:
            emit(f"        hi += {z[d]} - 1")
        elif known.nonneg[vd.stride]:
            emit(f"        hi += ({z[d]} - 1) * {st[d]}")
        else:
            emit(f"        q = ({z[d]} - 1) * {st[d]}")
            emit("        if q < 0: lo += q")
            emit("        else: hi += q")
    low = "lo < 0 or " if signed else ""
    emit(f"        if {low}hi >= numel{v.arg}: return None")


def _disjoint(spans: list[tuple[int, int]]) -> bool:
    """Whether the non-empty [start, end) byte ranges are pairwise disjoint."""
    spans = sorted([sp for sp in spans if sp[1] > sp[0]])
    end = None
    for start, stop in spans:
        if end is not None and start < end:
            return False
        end = stop
    return True


def compile_layout(p: Program, local_bytes: int, alignment: int, view_type: type) -> LayoutFn:
    """Compile the layout function of a validated program for one device."""
    namespace: dict[str, object] = {"__builtins__": {}, "_disjoint": _disjoint, "_View": view_type}
    namespace["_new"] = tuple.__new__  # a NamedTuple's own __new__ is a Python frame
    exec(compile(layout_source(p, local_bytes, alignment), "<dvm layout>", "exec"), namespace)
    return namespace["layout"]  # type: ignore[return-value]
