"""The shape rules: what each instruction does to its registers' shapes, and checks.

Planning types every instruction of a tile class: from the shapes its registers
hold before it (the register state) and the class's tile extents, its rule
checks what must hold (a register is written before it is read, shapes
broadcast, a stored register has its tile's extents, an mma's inner dims
agree, ...) and gives its destination register its new shape. Each rule is
made once per instruction of a program (`rules`), with its operands resolved,
so typing a class costs a few tuple operations per instruction. The planner
(`planner.TilePlanner`) calls them through the `Planner` interface; the
unplanned executor makes the same checks inline in its generated code, with
the same reasons (tests hold the two to agreement).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, Protocol

from dvm.vm.errors import BytecodeError
from dvm.vm.isa import ACCUMULATE, KEEPDIMS, TRANSPOSE_A, TRANSPOSE_B, Cat, ScalarTag
from dvm.vm.plan import OpNode, Shape
from dvm.vm.program import Instr, Scalar

Ctx = dict[int, Any]
"""A tile class: the class key of each index source (and memoized tile extents)."""
State = list["Shape | None"]
"""The shape each register holds (None: not written yet in this tile)."""

UNWRITTEN = "register read before written"
MISMATCH = "stored tile shape mismatch"
ACC_MISMATCH = "mma accumulator shape mismatch"
SCAN_CARRY_MISMATCH = "scan carry shape mismatch"
TOP_K_CARRY_MISMATCH = "top_k carry shape mismatch"


class Planner(Protocol):
    """What the rules ask of the planner typing a tile class."""

    s: tuple[int, ...]
    """The slot values."""

    def fail(self, table: str, i: int, reason: str, detail: str = "") -> BytecodeError: ...

    def tile(self, k: int, ctx: Ctx, view: int) -> Shape: ...

    def put(self, k: int, dst: int, out: Shape, state: State) -> None: ...

    def shape_operand(self, k: int, ctx: Ctx, shape: tuple[Any, ...], state: State) -> Shape: ...


Rule = Callable[[Planner, Ctx, State], OpNode]
"""An instruction's rule: (planner, tile class, register state) -> the typed instruction."""

_node = partial(tuple.__new__, OpNode)
"""OpNode from a 7-tuple without the NamedTuple's Python-level __new__ (planning makes many)."""


def rules(code: tuple[Instr, ...]) -> tuple[Rule | None, ...]:
    """Each instruction's rule (None for nop, loop and endloop, which have none)."""
    return tuple(_MAKERS[ins.op.cat](k, ins) if ins.op.cat in _MAKERS else None
                 for k, ins in enumerate(code))  # fmt: skip


def read(sp: Planner, k: int, r: int, state: State) -> Shape:
    """The shape register r holds where instruction k reads it."""
    x = state[r]
    if x is None:
        raise sp.fail("code", k, UNWRITTEN, f"r{r}")
    return x


def broadcast(sp: Planner, k: int, *shapes: Shape) -> Shape:
    """numpy's broadcasting of `shapes`, or instruction k's 'shapes do not broadcast'."""
    out = broadcast_shapes(list(shapes))
    if out is None:
        raise sp.fail("code", k, "shapes do not broadcast", str(shapes))
    return out


def broadcast_shapes(shapes: list[Shape]) -> Shape | None:
    """numpy's broadcasting rule on shapes; None when they do not broadcast."""
    if len(shapes) == 2 and len(shapes[0]) == len(shapes[1]):
        out = []
        for x, y in zip(shapes[0], shapes[1], strict=True):
            if x == y or y == 1:
                out.append(x)
            elif x == 1:
                out.append(y)
            else:
                return None
        return tuple(out)
    first = shapes[0]
    if all(s == first for s in shapes):
        return first
    rank = max(len(s) for s in shapes)
    out = [1] * rank
    for s in shapes:
        for i, n in enumerate(s, start=rank - len(s)):
            if n != out[i]:
                if out[i] != 1 and n != 1:
                    return None
                if out[i] == 1:
                    out[i] = n
    return tuple(out)


def scalar_value(sp: Planner, s: Scalar) -> float | int:
    """A SCALAR operand's value: the immediate, or the slot's value."""
    return s.value if s.tag is ScalarTag.IMM else sp.s[int(s.value)]


# --------------------------------------------------------------------------
# The rules, one maker per category: (k, ins) -> the rule of instruction k


def _load(k: int, ins: Instr) -> Rule:
    """A load gives its register the tile's extents."""
    d, v = ins.operands

    def load(sp: Planner, ctx: Ctx, state: State) -> OpNode:
        t = sp.tile(k, ctx, v)
        prev = state[d]
        sp.put(k, d, t, state)
        return _node((k, ins, (prev, None), t, t, None, None))

    return load


def _store(k: int, ins: Instr) -> Rule:
    """A stored register must have exactly the tile's extents (store and store_acc)."""
    v, r = ins.operands[0], ins.operands[1]
    pad = (None,) * (len(ins.operands) - 2)

    def store(sp: Planner, ctx: Ctx, state: State) -> OpNode:
        sh = read(sp, k, r, state)
        t = sp.tile(k, ctx, v)
        if sh != t:
            raise sp.fail("code", k, MISMATCH, f"r{r} {sh} vs {t}")
        return _node((k, ins, (None, sh, *pad), None, t, None, None))

    return store


def _same(k: int, ins: Instr) -> Rule:
    """copy, convert, and unary ops: the source's shape."""
    d, a = ins.operands[0], ins.operands[1]
    pad = (None,) * (len(ins.operands) - 2)

    def same(sp: Planner, ctx: Ctx, state: State) -> OpNode:
        x = read(sp, k, a, state)
        prev = state[d]
        sp.put(k, d, x, state)
        return _node((k, ins, (prev, x, *pad), x, None, None, None))

    return same


def _broadcast(k: int, ins: Instr) -> Rule:
    """The target shape, to which the source must broadcast."""
    d, a, shape = ins.operands

    def broadcast_to(sp: Planner, ctx: Ctx, state: State) -> OpNode:
        x = read(sp, k, a, state)
        prev = state[d]
        target = sp.shape_operand(k, ctx, shape, state)
        if broadcast(sp, k, x, target) != target:
            raise sp.fail("code", k, "shapes do not broadcast", f"{x} to {target}")
        sp.put(k, d, target, state)
        return _node((k, ins, (prev, x, None), target, target, None, None))

    return broadcast_to


def _fill(k: int, ins: Instr) -> Rule:
    """The given shape, and the scalar's value."""
    d, value, shape = ins.operands

    def fill(sp: Planner, ctx: Ctx, state: State) -> OpNode:
        target = sp.shape_operand(k, ctx, shape, state)
        prev = state[d]
        sp.put(k, d, target, state)
        scalar = scalar_value(sp, value)
        return _node((k, ins, (prev, None, None), target, target, scalar, None))

    return fill


def _select(k: int, ins: Instr) -> Rule:
    """The condition and both values broadcast together."""
    d, c, a, b = ins.operands

    def select(sp: Planner, ctx: Ctx, state: State) -> OpNode:
        x, y, z = read(sp, k, c, state), read(sp, k, a, state), read(sp, k, b, state)
        out = broadcast(sp, k, x, y, z)
        prev = state[d]
        sp.put(k, d, out, state)
        return _node((k, ins, (prev, x, y, z), out, None, None, None))

    return select


def _reduce(k: int, ins: Instr) -> Rule:
    """Reduced axes become 1 (keepdims) or disappear."""
    d, src, _, axes, flags = ins.operands
    keep = bool(flags & KEEPDIMS)

    def reduce(sp: Planner, ctx: Ctx, state: State) -> OpNode:
        x = read(sp, k, src, state)
        if keep:
            out = tuple([1 if axes >> i & 1 else n for i, n in enumerate(x)])
        else:
            out = tuple([n for i, n in enumerate(x) if not axes >> i & 1])
        prev = state[d]
        sp.put(k, d, out, state)
        return _node((k, ins, (prev, x, None, None, None), out, None, None, None))

    return reduce


def _mma(k: int, ins: Instr) -> Rule:
    """(batch..., m, n) from (m, k) @ (k, n) after the transposes; the inner dims must
    agree, the batch dims broadcast, and an accumulator have the result's shape."""
    d, ra, rb, flags = ins.operands
    acc = bool(flags & ACCUMULATE)

    def mma(sp: Planner, ctx: Ctx, state: State) -> OpNode:
        c = read(sp, k, d, state) if acc else state[d]
        a, b = read(sp, k, ra, state), read(sp, k, rb, state)
        m, ka = (a[-1], a[-2]) if flags & TRANSPOSE_A else (a[-2], a[-1])
        kb, n = (b[-1], b[-2]) if flags & TRANSPOSE_B else (b[-2], b[-1])
        if ka != kb:
            raise sp.fail("code", k, "mma inner dims differ", f"{a} @ {b}")
        batch = a[:-2] if a[:-2] == b[:-2] else broadcast(sp, k, a[:-2], b[:-2])
        out = (*batch, m, n)
        if acc and c != out:
            raise sp.fail("code", k, ACC_MISMATCH, f"{c} vs {out}")
        sp.put(k, d, out, state)
        return _node((k, ins, (c, a, b, None), out, None, None, None))

    return mma


def _grouped_mma(k: int, ins: Instr) -> Rule:
    """(rows, N) from (rows, K) and (groups, K, N): the K dims agree, the sizes have
    one entry per group, and the rows view's current tile has the tile's rows."""
    d, ra, rb, rs, rows = ins.operands

    def grouped_mma(sp: Planner, ctx: Ctx, state: State) -> OpNode:
        a, b, sizes = read(sp, k, ra, state), read(sp, k, rb, state), read(sp, k, rs, state)
        reason = grouped_mma_mismatch(a, b, sizes, sp.tile(k, ctx, rows)[0])
        if reason is not None:
            raise sp.fail("code", k, reason, f"{a} @ {b} in groups of {sizes}")
        out = (a[0], b[2])
        prev = state[d]
        sp.put(k, d, out, state)
        return _node((k, ins, (prev, a, b, sizes, None), out, None, None, None))

    return grouped_mma


def grouped_mma_mismatch(a: Shape, b: Shape, sizes: Shape, rows: int) -> str | None:
    """Why a gmma's operand shapes do not fit (a reason), or None; `rows` is the extent
    of the rows view's current tile along its dim 0."""
    if a[1] != b[1]:
        return "mma inner dims differ"
    if sizes[0] != b[0]:
        return "gmma group count differs"
    if rows != a[0]:
        return "gmma rows differ from the rows view's tile"
    return None


def _binary(k: int, ins: Instr) -> Rule:
    """Both registers broadcast together (numpy's rule)."""
    d, a, b = ins.operands

    def binary(sp: Planner, ctx: Ctx, state: State) -> OpNode:
        x, y = read(sp, k, a, state), read(sp, k, b, state)
        out = x if x == y else broadcast(sp, k, x, y)
        prev = state[d]
        sp.put(k, d, out, state)
        return _node((k, ins, (prev, x, y), out, None, None, None))

    return binary


def _with_scalar(k: int, ins: Instr) -> Rule:
    """The register's shape, and the scalar's value (register op scalar, or scalar op
    register)."""
    rs = ins.op.cat is Cat.BINARY_RS
    o = ins.operands
    d, a, sc = (o[0], o[1], o[2]) if rs else (o[0], o[2], o[1])
    imm = sc.tag is ScalarTag.IMM
    value, slot = sc.value, 0 if imm else int(sc.value)

    def with_scalar(sp: Planner, ctx: Ctx, state: State) -> OpNode:
        x = read(sp, k, a, state)
        prev = state[d]
        sp.put(k, d, x, state)
        shapes = (prev, x, None) if rs else (prev, None, x)
        return _node((k, ins, shapes, x, None, value if imm else sp.s[slot], None))

    return with_scalar


def _iota(k: int, ins: Instr) -> Rule:
    """An iota gives its register the view's tile extents (it reads no memory)."""
    d, v = ins.operands[0], ins.operands[1]

    def iota(sp: Planner, ctx: Ctx, state: State) -> OpNode:
        t = sp.tile(k, ctx, v)
        prev = state[d]
        sp.put(k, d, t, state)
        return _node((k, ins, (prev, None, None), t, None, None, None))

    return iota


def _take(k: int, ins: Instr) -> Rule:
    """The view's tile extents but the last (the indexed dim); the indices broadcast."""
    d, v, r = ins.operands

    def take(sp: Planner, ctx: Ctx, state: State) -> OpNode:
        x = read(sp, k, r, state)
        t = sp.tile(k, ctx, v)
        out = t[:-1]
        if broadcast(sp, k, x, out) != out:
            raise sp.fail("code", k, "shapes do not broadcast", f"{x} to {out}")
        prev = state[d]
        sp.put(k, d, out, state)
        return _node((k, ins, (prev, None, x), out, None, None, None))

    return take


def top_k_mismatch(
    values: Shape, indices: Shape, src: Shape, positions: Shape, axis: int
) -> tuple[str, str] | None:
    """(reason, detail) when a top_k's carry is not src's shape but for the axis, or
    its positions do not broadcast to src; None when they fit."""
    rest = [d for d in range(len(src)) if d != axis]
    if values != indices or [values[d] for d in rest] != [src[d] for d in rest]:
        return TOP_K_CARRY_MISMATCH, f"{values} and {indices} vs {src}"
    if broadcast_shapes([tuple(src), tuple(positions)]) != tuple(src):
        return "shapes do not broadcast", f"{positions} to {src}"
    return None


def _top_k(k: int, ins: Instr) -> Rule:
    """values and indices keep their shape, src's but for the axis; positions
    broadcast to src."""
    values, indices, src, positions, axes = ins.operands

    def top_k(sp: Planner, ctx: Ctx, state: State) -> OpNode:
        v, i = read(sp, k, values, state), read(sp, k, indices, state)
        x, at = read(sp, k, src, state), read(sp, k, positions, state)
        mismatch = top_k_mismatch(v, i, x, at, axes.bit_length() - 1)
        if mismatch is not None:
            raise sp.fail("code", k, *mismatch)
        return _node((k, ins, (v, i, x, at, None), None, None, None, None))

    return top_k


def _scan(k: int, ins: Instr) -> Rule:
    """dst has src's shape; the carry has it too but 1 along the axis."""
    d, src, c, _, axes, _ = ins.operands
    axis = axes.bit_length() - 1

    def scan(sp: Planner, ctx: Ctx, state: State) -> OpNode:
        x, carry = read(sp, k, src, state), read(sp, k, c, state)
        want = tuple([1 if i == axis else n for i, n in enumerate(x)])
        if carry != want:
            raise sp.fail("code", k, SCAN_CARRY_MISMATCH, f"{carry} vs {want}")
        prev = state[d]
        sp.put(k, d, x, state)
        return _node((k, ins, (prev, x, carry, None, None, None), x, None, None, None))

    return scan


def _scatter_add(k: int, ins: Instr) -> Rule:
    """The view's tile extents but the last (the indexed dim) are src's, or 1 where the
    tile spans one element (src's elements along that dim all go there); the indices
    broadcast to src."""
    v, r, i = ins.operands

    def scatter_add(sp: Planner, ctx: Ctx, state: State) -> OpNode:
        x, idx = read(sp, k, r, state), read(sp, k, i, state)
        t = sp.tile(k, ctx, v)
        why = scatter_mismatch(x, idx, t)
        if why is not None:
            raise sp.fail("code", k, *why)
        return _node((k, ins, (None, x, idx), None, t, None, None))

    return scatter_add


def scatter_mismatch(src: Shape, idx: Shape, tile: Shape) -> tuple[str, str] | None:
    """Why a `scatter_add` of updates of shape `src` at indices of shape `idx` does not
    fit a view's `tile` (the reason and its detail), or None."""
    fits = len(tile) == len(src) + 1 and all(
        t in (s, 1) for s, t in zip(src, tile[:-1], strict=True)
    )
    if not fits:
        return MISMATCH, f"{src} vs {tile}"
    if broadcast_shapes([tuple(idx), tuple(src)]) != tuple(src):
        return "shapes do not broadcast", f"{idx} to {src}"
    return None


_MAKERS: dict[Cat, Callable[[int, Instr], Rule]] = {
    Cat.LOAD: _load,
    Cat.STORE: _store,
    Cat.STORE_ACC: _store,
    Cat.COPY: _same,
    Cat.CONVERT: _same,
    Cat.BROADCAST: _broadcast,
    Cat.FILL: _fill,
    Cat.SELECT: _select,
    Cat.REDUCE: _reduce,
    Cat.MMA: _mma,
    Cat.GROUPED_MMA: _grouped_mma,
    Cat.UNARY: _same,
    Cat.BINARY: _binary,
    Cat.BINARY_RS: _with_scalar,
    Cat.BINARY_SR: _with_scalar,
    Cat.IOTA: _iota,
    Cat.TAKE: _take,
    Cat.SCAN: _scan,
    Cat.TOP_K: _top_k,
    Cat.SCATTER_ADD: _scatter_add,
}
