"""The shape-dependent layout checks of a program as one generated Python function.

Specialization checks that registers are aligned, inside local memory and
disjoint, and that every view stays inside its argument (see
`specialize.py`). Those checks walk the register and view tables, which a
program fixes: so, like the slot table (`slots.py`), the walk is turned once
per program into straight-line source

    def layout(s, numel):            # s: slot values; numel: elements per argument
        c0 = s[3] * s[4]             # register r0: capacity, offset, checks
        o0 = s[5]
        if ... : return None         # any failed check: None
        ...
        v0 = _new(ViewPlan, (0, s[5], (z0, z1), (t0, t1), ((0, 1, g0),), False, n0))
        return (((o0, c0), ...), (v0, ...), {source: ((size, tile), ...)})

built only from validated table indices and fixed operators. It returns
None as soon as a check fails; the specializer then walks the tables the
slow way, which names the failing entry and reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from dvm.vm.program import Index, Program

LayoutFn = Callable[[Sequence[int], Sequence[int]], "tuple[Any, ...] | None"]

MAX_ARRAY_BYTES = 2**62
"""numpy refuses arrays (even empty ones) whose dims multiply past this."""


def layout_source(p: Program, local_bytes: int, alignment: int) -> str:
    """Python source of the layout function of a validated program on a device."""
    lines = ["def layout(s, numel):"]
    emit = lines.append
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
    if counts:
        emit(f"    if {' or '.join(f's[{d}] < 0' for d in counts)}: return None")
    spans = []
    for i, r in enumerate(p.registers):
        dims = [f"s[{d}]" for d in r.shape]
        item = r.dtype.np.itemsize
        emit(f"    c{i} = {' * '.join(dims) or '1'}")
        emit(f"    o{i} = s[{r.offset}]")
        emit(f"    e{i} = o{i} + c{i} * {item}")
        emit(f"    if o{i} < 0 or o{i} % {alignment} or e{i} > {local_bytes}: return None")
        spans.append(f"(o{i}, e{i})")
    if len(spans) > 1:
        emit(f"    if not _disjoint([{', '.join(spans)}]): return None")
    regs = "".join(f"(o{i}, c{i}), " for i in range(len(p.registers)))
    keys: dict[int, list[str]] = {}
    for i, v in enumerate(p.views):
        rank = len(v.dims)
        item = p.args[v.arg].dtype.np.itemsize
        z = [f"z{i}_{d}" for d in range(rank)]
        st = [f"t{i}_{d}" for d in range(rank)]
        for d, vd in enumerate(v.dims):
            emit(f"    {z[d]} = s[{vd.size}]")
            emit(f"    {st[d]} = s[{vd.stride}]")
        tiled = []
        for d, vd in enumerate(v.dims):
            if vd.index != Index.NONE and vd.tile is not None:
                emit(f"    g{i}_{d} = s[{vd.tile}]")
                tiled.append(f"({d}, {vd.index}, g{i}_{d})")
                keys.setdefault(vd.index, []).append(f"({z[d]}, g{i}_{d})")
        emit(f"    f{i} = s[{v.offset}]")
        nominal = " * ".join(f"({n} if {n} > 1 else 1)" for n in z) or "1"
        emit(f"    if {nominal} * {item} > {MAX_ARRAY_BYTES}: return None")
        if rank:
            emit(f"    m{i} = {' or '.join(f'{n} == 0' for n in z)}")
        else:
            emit(f"    m{i} = False")
        emit(f"    n{i} = False")
        emit(f"    if not m{i}:")
        emit(f"        lo = hi = f{i}")
        for d in range(rank):
            emit(f"        q = ({z[d]} - 1) * {st[d]}")
            emit("        if q < 0: lo += q")
            emit("        else: hi += q")
        emit(f"        if lo < 0 or hi >= numel[{v.arg}]: return None")
        dense = []
        acc = "1"
        for d in reversed(range(rank)):
            dense.append(f"({z[d]} == 1 or {st[d]} == {acc})")
            acc = f"{acc} * {z[d]}" if acc != "1" else z[d]
        cond = " and ".join([f"f{i} == 0", *dense, f"{acc} == numel[{v.arg}]"])
        emit(f"        n{i} = {cond}")
        tiled_text = "".join(f"{t}, " for t in tiled)
        emit(
            f"    v{i} = _new(_View, ({v.arg}, f{i}, ({''.join(f'{n}, ' for n in z)}), "
            f"({''.join(f'{t}, ' for t in st)}), ({tiled_text}), m{i}, n{i}))"
        )
    views = "".join(f"v{i}, " for i in range(len(p.views)))
    key_text = ", ".join(f"{src}: ({''.join(q + ', ' for q in qs)})" for src, qs in keys.items())
    emit(f"    return (({regs}), ({views}), {{{key_text}}})")
    return "\n".join(lines) + "\n"


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
