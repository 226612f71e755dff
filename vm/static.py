"""What every specialization of a validated program shares: decided once per program.

`static_info(program)` validates the program (once, see `loader.validated`) and
derives the facts that do not depend on shapes: how views are tiled, which
arguments are written, which registers only hold tiles of read-only arguments
(alias registers, whose loads need not copy), each instruction's shape rule,
and the like. Specializing a new shape then only does arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dvm.vm.isa import ACCUMULATE, TRANSPOSE_A, WRITES_MEMORY, Cat, ExprOp, Kind, ReduceKind
from dvm.vm.kernels import fusable
from dvm.vm.loader import validated
from dvm.vm.plan import share_bytes
from dvm.vm.program import Index, Instr, Program, calls_blas, measuring_views, stored_views
from dvm.vm.shapes import Rule, rules
from dvm.vm.slots import SlotTable
from dvm.vm.validate import LoopInfo

NO_DESTINATION = (Cat.STORE, Cat.STORE_ACC, Cat.SCATTER_ADD, Cat.LOOP, Cat.ENDLOOP, Cat.NOP)
NO_DESTINATION += (Cat.TOP_K,)  # updates the registers it reads, in place
"""The categories whose operand 0 is not a register they write (only)."""


@dataclass(frozen=True, eq=False, repr=False)
class Static:
    """The shape-independent facts about a validated program that every
    specialization uses."""

    program: Program
    loops: LoopInfo
    slot_fn: SlotTable
    """The slots alone (compiled when first called: specializing computes them in the
    fast path)."""
    rules: tuple[Rule | None, ...]
    """Per instruction: its shape rule (`shapes.rules`)."""
    tiled: tuple[tuple[tuple[int, int, int], ...], ...]
    """Per view: (dim, index source, position in that source's class key) of each tiled dim."""
    pairs: dict[int, tuple[tuple[int, int], ...]]
    """Per index source: the (view, dim) pairs it tiles, in class-key order."""
    grid_axes: tuple[tuple[int, ...] | None, ...]
    """Per view: the grid axis tiling each of its tiled dims (None when a loop tiles
    one): what tells a view cut into one tile at a shape (`planned.Core.slicer`)."""
    pair_places: dict[int, tuple[tuple[int, int, int], ...]]
    """Per index source: (view, dim, place) of each pair it tiles, in class-key order,
    `place` the dim's among its view's tiled dims (where a `ViewPlan.tiled` holds its
    tile size at a shape)."""
    stored: frozenset[int]
    """The arguments stores write."""
    stored_views: frozenset[int]
    """The views stores and store_accs write through."""
    measuring_views: frozenset[int]
    """The views no instruction reads or writes memory through (`measuring_views`)."""
    has_mma: bool
    uses_blas: bool
    independent_tiles: bool
    """Whether no two tiles write the same global memory (no store_acc or scatter_add,
    which planned launches run under a lock): an unplanned launch's tiles may then
    run on several cores at once."""
    alias_regs: frozenset[int]
    alias_args: frozenset[int]
    itemsizes: tuple[int, ...]
    """Bytes per element of each register."""
    reg_dtypes: tuple[np.dtype, ...]
    arg_dtypes: tuple[np.dtype, ...]
    alias_operands: tuple[bool, ...]
    """Per instruction: whether a REG operand is an alias register."""
    reads_cores: bool
    """Whether some slot reads the cores a launch is tiled for."""
    share_bytes: int
    """The global bytes from which its launches share their tiles among the cores
    (`plan.share_bytes`: the less work per byte, the more bytes)."""
    gemm_slots: tuple[tuple[int, int, int], ...]
    """Per `mma`: the slots of its result register's last two dims and of the dim it
    sums over, whose product bounds a tile's gemm (`launch`, before any plan)."""
    placement: tuple[tuple[int, int], ...]
    """(register, itemsize) in the order a specialization places the registers
    (`specialize.placed`): for a program with an mma whose alias registers are not its
    last ones, the others first; empty (as the program places them) for any other."""
    nests: dict[int, int] = field(default_factory=dict)
    """Per loop whose body is one inner loop and nothing else, that loop (`perfect_nests`)."""
    fast_paths: dict[tuple[int, int, int], Callable[..., Any]] = field(default_factory=dict)
    """Per (local memory bytes, alignment, cores) of a device: the compiled fast path
    (`specialize.fast_function`)."""
    binders: dict[frozenset[int], list[Any]] = field(default_factory=dict)
    """Per set of alias registers: each instruction's binder (`planned.binders_for`)."""
    body_facts: dict[Any, dict[int, int]] = field(default_factory=dict)
    """What binding a tile body learns from its instructions alone, per instruction
    sequence (`planned.fused_stores`, `planned.forwarded_loads`): every shape's tile
    classes share it."""
    slicer_makers: list[Any] = field(default_factory=list)
    """Per view, once made: what makes its slicer (`bind.slicer_maker`; the tiled dims and
    their index sources are the program's)."""
    unplanned: list[Any] = field(default_factory=list)
    """The unplanned executor's generated functions, once made (`unplanned.generated`)."""


def static_info(program: Program) -> Static:
    """The program's Static facts (validating it first), made once."""
    got = program.cache.static
    if got is None:
        loops, slot_fn = validated(program)
        got = program.cache.static = _static(program, loops, slot_fn)
    return got


def _static(p: Program, loops: LoopInfo, slot_fn: SlotTable) -> Static:
    tiled, pairs = _tiling(p)
    views_stored = stored_views(p)
    stored = frozenset(p.views[v].arg for v in views_stored)
    has_mma = any(ins.op.cat in (Cat.MMA, Cat.GROUPED_MMA) for ins in p.code)
    uses_blas = calls_blas(p)
    alias_regs, alias_args = _aliases(p, stored)
    return Static(
        program=p,
        loops=loops,
        slot_fn=slot_fn,
        rules=rules(p.code),
        tiled=tiled,
        pairs=pairs,
        grid_axes=tuple(
            tuple([src - Index.GRID0 for _, src, _ in t])
            if all(Index.is_grid(src) for _, src, _ in t)
            else None
            for t in tiled
        ),
        pair_places={
            src: tuple([(v, d, [t[0] for t in tiled[v]].index(d)) for v, d in group])
            for src, group in pairs.items()
        },
        stored=stored,
        stored_views=views_stored,
        measuring_views=measuring_views(p),
        has_mma=has_mma,
        uses_blas=uses_blas,
        independent_tiles=not any(ins.op.cat in (Cat.STORE_ACC, Cat.SCATTER_ADD) for ins in p.code),
        alias_regs=alias_regs,
        alias_args=alias_args,
        itemsizes=tuple(r.dtype.np.itemsize for r in p.registers),
        reg_dtypes=tuple(r.dtype.np for r in p.registers),
        arg_dtypes=tuple(a.dtype.np for a in p.args),
        alias_operands=tuple(
            any(r in alias_regs for _, r, _ in register_operands(ins)) for ins in p.code
        ),
        reads_cores=any(t.op is ExprOp.CORES for slot in p.slots for t in slot.expr),
        share_bytes=share_bytes(p, has_mma),
        gemm_slots=tuple(_gemm_slots(p, ins) for ins in p.code if ins.op.cat is Cat.MMA),
        placement=_placement(p, alias_regs) if has_mma else (),
        nests=perfect_nests(p.code, loops.end_of),
    )


def _placement(p: Program, alias_regs: frozenset[int]) -> tuple[tuple[int, int], ...]:
    """The registers but the alias ones, then those, each with its itemsize; empty when
    the alias registers are the last ones already (a compiled program places its
    registers in their order, so a matmul accumulating over chunks of K keeps its own)."""
    order = sorted(range(len(p.registers)), key=lambda r: r in alias_regs)
    if order == list(range(len(p.registers))):
        return ()
    return tuple((r, p.registers[r].dtype.np.itemsize) for r in order)


def _gemm_slots(p: Program, mma: Instr) -> tuple[int, int, int]:
    """The slots of an mma's result register's last two dims and of its operand A's dim
    summed over (the registers' largest shapes: those of a full tile)."""
    out, a, _, flags = mma.operands
    m, n = p.registers[out].shape[-2:]
    inner = p.registers[a].shape
    return m, n, inner[-2] if flags & TRANSPOSE_A else inner[-1]


def perfect_nests(code: Sequence[Instr], end_of: dict[int, int]) -> dict[int, int]:
    """Per loop whose body is one inner loop and nothing else, the inner loop. When the
    inner loop makes no pass, a pass of the outer one does nothing, so neither executor
    walks it: a loop over the chunks of an empty tensor's other axis costs nothing."""
    return {
        k: k + 1
        for k, end in end_of.items()
        if code[k + 1].op.cat is Cat.LOOP and end_of[k + 1] == end - 1
    }


def _tiling(
    p: Program,
) -> tuple[tuple[tuple[tuple[int, int, int], ...], ...], dict[int, tuple[tuple[int, int], ...]]]:
    """(Static.tiled, Static.pairs): which dims of which views each index source tiles."""
    pairs: dict[int, list[tuple[int, int]]] = {}
    tiled = []
    for vi, v in enumerate(p.views):
        dims = []
        for d, vd in enumerate(v.dims):
            if vd.index != Index.NONE and vd.tile is not None:
                group = pairs.setdefault(vd.index, [])
                dims.append((d, vd.index, len(group)))
                group.append((vi, d))
        tiled.append(tuple(dims))
    return tuple(tiled), {src: tuple(group) for src, group in pairs.items()}


def _aliases(p: Program, stored: frozenset[int]) -> tuple[frozenset[int], frozenset[int]]:
    """(alias registers, alias arguments): the registers only loads from arguments the
    program never writes write (and no max or min reduction reads, `copied_read`), and
    the arguments loads read that the program never writes (alias and forwarded loads
    read them in place)."""
    ok: set[int] = set()
    bad: set[int] = set()
    for ins in p.code:
        if ins.op.cat is Cat.LOAD:
            r = ins.operands[0]
            (bad if p.views[ins.operands[1]].arg in stored else ok).add(r)
        elif ins.op.operands and ins.op.operands[0][1] is Kind.REG:
            bad.add(ins.operands[0])
        if (copied := copied_read(ins)) is not None:
            bad.add(copied)
    alias_args = frozenset(
        p.views[ins.operands[1]].arg
        for ins in p.code
        if ins.op.cat is Cat.LOAD and p.views[ins.operands[1]].arg not in stored
    )
    return frozenset(ok - bad), alias_args


def copied_read(ins: Instr) -> int | None:
    """The register a max or min reduction reads (else None), whose loads keep their
    copies: no alias register, no forwarding. numpy runs these reductions over short
    rows much slower on data that comes from main memory than on a tile just copied,
    which is in cache: the copy costs less than it saves (softmax's row maxima)."""
    if ins.op.cat is Cat.REDUCE and ins.operands[2] in (ReduceKind.MAX, ReduceKind.MIN):
        return ins.operands[1]
    return None


def in_place_writer(code: Sequence[Instr | None], i: int) -> int | None:
    """Where load i of a straight-line run of `code` (None marks a loop, which ends the
    run) may skip its copy: the index of the instruction that next writes its register r
    and reads r in place (`sub r, r, x`), else None. The load then keeps a view of the
    global tile and the readers up to that writer read it there; the writer writes the
    register, whose contents afterwards are the same as with the copy. Not past a store
    (which could change the global tile), nor for a writer that is an mma (which
    accumulates into its destination) or a load, nor when a max or min reduction reads r
    first (`copied_read`)."""
    load = code[i]
    assert load is not None
    r = load.operands[0]
    for j in range(i + 1, len(code)):
        ins = code[j]
        if ins is None:
            return None
        cat = ins.op.cat
        if cat in WRITES_MEMORY or cat is Cat.LOOP or copied_read(ins) == r:
            return None
        if cat not in NO_DESTINATION and ins.operands[0] == r:
            in_place = cat is not Cat.MMA and cat is not Cat.LOAD and r in read_registers(ins)
            return j if in_place else None
    return None


def written_to_tiles_only(code: Sequence[Instr], fused: Container[int]) -> frozenset[int]:
    """The registers that only instructions in `fused` write: producers whose stores are
    fused (the unplanned launcher's, `unplanned_fusions`), each writing the store's tile
    instead, so the register's memory stays untouched and a launch need not map it."""
    into_tiles: set[int] = set()
    into_registers: set[int] = set()
    for k, ins in enumerate(code):
        if ins.op.operands and ins.op.operands[0][1] is Kind.REG:
            (into_tiles if k in fused else into_registers).add(ins.operands[0])
    return frozenset(into_tiles - into_registers)


def register_operands(ins: Instr) -> list[tuple[int, int, bool]]:
    """(position, register, is it read) of each REG operand of `ins`."""
    kinds = [kind for _, kind in ins.op.operands]
    return [
        (pos, v, not (pos == 0 and _writes_only(ins)))
        for pos, (kind, v) in enumerate(zip(kinds, ins.operands, strict=True))
        if kind is Kind.REG
    ]


_READ: dict[int, tuple[Instr, frozenset[int]]] = {}


def read_registers(ins: Instr) -> frozenset[int]:
    """The registers `ins` reads (memoized by identity: programs share their Instr objects)."""
    got = _READ.get(id(ins))
    if got is None or got[0] is not ins:
        got = (ins, frozenset(reg for _, reg, read in register_operands(ins) if read))
        if len(_READ) > 65536:
            _READ.clear()
        _READ[id(ins)] = got
    return got[1]


def _writes_only(ins: Instr) -> bool:
    """Whether operand 0 is only written (not read) by this instruction."""
    cat = ins.op.cat
    if cat is Cat.MMA:
        return not ins.operands[3] & ACCUMULATE
    return cat not in NO_DESTINATION


def unplanned_fusions(
    code: Sequence[Instr], depth: Sequence[int]
) -> tuple[dict[int, int], set[int]]:
    """An unplanned launch's top-level fused stores (producer -> the view it writes)
    and forwarded loads: the same patterns as planned launches bind
    (`planned.fused_stores`, `planned.forwarded_loads`), found on the code instead of
    on each tile class."""
    reads = [read_registers(ins) for ins in code]
    fused: dict[int, int] = {}
    for j, ins in enumerate(code):
        if ins.op.cat is not Cat.STORE or depth[j] or j == 0 or depth[j - 1]:
            continue
        r, producer = ins.operands[1], code[j - 1]
        later = any(r in rs for rs in reads[j + 1 :])
        if fusable(producer) and producer.operands[0] == r and not later:
            fused[j - 1] = ins.operands[0]
    forwarded = {
        i
        for i, ins in enumerate(code)
        if ins.op.cat is Cat.LOAD and not depth[i] and in_place_writer(code, i) is not None
    }
    return fused, forwarded
