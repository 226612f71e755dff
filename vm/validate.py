"""Stage 2: static validation, once per program (like WebAssembly's validator).

Everything that does not depend on argument shapes is checked here: every
index (argument, slot, parameter, register, view) is in range, slot
expressions are well-formed stack programs over earlier slots, loops nest
and close, view dims tile by a grid axis that exists or by an enclosing
loop, and every instruction's registers have the dtypes and ranks its ISA
row demands. Shape-dependent checks (bounds, local memory, tile shapes) run
once per specialization in `specialize.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from dvm.vm.binary import HEADER, layout
from dvm.vm.errors import BytecodeError
from dvm.vm.isa import (
    EXPR_LEAVES,
    MAX_GRID_RANK,
    MAX_LOOP_DEPTH,
    MAX_RANK,
    AccKind,
    Cat,
    DType,
    ExprOp,
    ExtentKind,
    Kind,
    OpDef,
    ReduceKind,
    ScalarTag,
    TypeRule,
)
from dvm.vm.program import Extent, Index, Instr, Offsets, Program, Scalar, View

I64_MIN, I64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True)
class LoopInfo:
    """Loop structure found by validation: matching loop/endloop positions."""

    end_of: dict[int, int]
    """Instruction index of each `loop` -> index of its `endloop`."""
    depth_at: tuple[int, ...]
    """Loop depth in force at each instruction (a `loop` counts outside itself)."""


def validate(p: Program) -> LoopInfo:
    """Check `p` statically; raise BytecodeError naming the first problem and its byte."""
    v = _Validator(p)
    v.tables()
    return v.code()


class _Validator:
    """Walks a program's tables and code, raising at the first problem."""

    def __init__(self, p: Program) -> None:
        self.p = p
        self._offsets: Offsets | None = p.offsets

    # -- error locations ---------------------------------------------------

    def offsets(self) -> Offsets | None:
        """The program's byte layout (computed by encoding it if it was built in Python)."""
        if self._offsets is None:
            try:
                self._offsets = layout(self.p)
            except Exception:  # unencodable values: no layout to point into
                return None
        return self._offsets

    def fail(self, where: tuple[str, int], reason: str, detail: str = "") -> BytecodeError:
        """A BytecodeError at the byte where table entry or instruction `where` starts."""
        table, i = where
        o = self.offsets()
        at = -1
        if o is not None:
            if table == "args":
                at = HEADER.size + 2 * i
            else:
                at = o.grid if table == "grid" else _pick(getattr(o, table), i)
        return BytecodeError(at, reason, detail)

    # -- tables ------------------------------------------------------------

    def tables(self) -> None:
        """Args, slots, grid, registers and views."""
        p = self.p
        for i, a in enumerate(p.args):
            if not isinstance(a.dtype, DType) or not 0 <= a.rank <= MAX_RANK:
                raise self.fail(("args", i), "bad argument", f"a{i}")
        for i, s in enumerate(p.slots):
            self.slot_expr(i, s.expr)
        if not 1 <= len(p.grid) <= MAX_GRID_RANK:
            raise self.fail(("grid", 0), "bad grid rank", f"{len(p.grid)} axes")
        for g in p.grid:
            self.slot(("grid", 0), g)
        for i, r in enumerate(p.registers):
            if len(r.shape) > MAX_RANK:
                raise self.fail(("registers", i), "rank too large")
            for s in (*r.shape, r.offset):
                self.slot(("registers", i), s)
        for i, view in enumerate(p.views):
            self.view(i, view)

    def slot(self, where: tuple[str, int], s: int) -> None:
        """A slot reference must name an existing slot."""
        if not 0 <= s < len(self.p.slots):
            raise self.fail(where, "slot index out of range", f"s{s}")

    def slot_expr(self, i: int, expr: tuple) -> None:
        """A postfix expression must leave exactly one value and refer only backwards."""
        depth, where = 0, ("slots", i)
        for t in expr:
            if t.op is ExprOp.DIM:
                if not 0 <= t.a < len(self.p.args):
                    raise self.fail(where, "arg index out of range", f"dim(a{t.a},{t.b})")
                if not 0 <= t.b < self.p.args[t.a].rank:
                    raise self.fail(where, "bad DIM axis", f"dim(a{t.a},{t.b})")
            elif t.op is ExprOp.CONST and not I64_MIN <= t.a <= I64_MAX:
                raise self.fail(where, "constant out of int64 range")
            elif t.op is ExprOp.PARAM and not 0 <= t.a < self.p.n_params:
                raise self.fail(where, "param index out of range", f"p{t.a}")
            elif t.op is ExprOp.SLOT and not 0 <= t.a < i:
                raise self.fail(where, "slot refers to itself or a later slot", f"s{t.a}")
            depth += 1 if t.op in EXPR_LEAVES else -1
            if depth < 1:
                raise self.fail(where, "expression stack underflow")
        if depth != 1:
            raise self.fail(where, "expression must leave one value", f"leaves {depth}")

    def view(self, i: int, view: View) -> None:
        """Argument, slots and index sources of one view."""
        where = ("views", i)
        if not 0 <= view.arg < len(self.p.args):
            raise self.fail(where, "arg index out of range", f"a{view.arg}")
        if len(view.dims) > MAX_RANK:
            raise self.fail(where, "rank too large")
        self.slot(where, view.offset)
        for d in view.dims:
            self.slot(where, d.size)
            self.slot(where, d.stride)
            if d.index == Index.NONE:
                continue
            if d.tile is None:
                raise self.fail(where, "tiled view dim without tile size")
            self.slot(where, d.tile)
            if Index.is_grid(d.index) and d.index - Index.GRID0 >= len(self.p.grid):
                raise self.fail(where, "grid axis out of range", f"g{d.index - Index.GRID0}")
            if not (Index.is_grid(d.index) or Index.is_loop(d.index)):
                raise self.fail(where, "unknown index source", str(d.index))

    # -- code --------------------------------------------------------------

    def code(self) -> LoopInfo:
        """Loop nesting and every instruction; returns the loop structure."""
        stack: list[int] = []
        end_of: dict[int, int] = {}
        depth_at: list[int] = []
        for k, ins in enumerate(self.p.code):
            depth_at.append(len(stack))
            cat = ins.op.cat
            if cat is Cat.ENDLOOP:
                if not stack:
                    raise self.fail(("code", k), "endloop without loop")
                end_of[stack.pop()] = k
                depth_at[-1] = len(stack)
            self.instr(k, ins, len(stack))
            if cat is Cat.LOOP:
                if len(stack) >= MAX_LOOP_DEPTH:
                    raise self.fail(("code", k), "loop nesting too deep")
                stack.append(k)
        if stack:
            raise self.fail(("code", stack[-1]), "loop without endloop")
        return LoopInfo(end_of, tuple(depth_at))

    def instr(self, k: int, ins: Instr, depth: int) -> None:
        """Operand ranges, then the category's typing rule."""
        where = ("code", k)
        if len(ins.operands) != len(ins.op.operands):
            raise self.fail(where, "wrong operand count")
        for (_, kind), v in zip(ins.op.operands, ins.operands, strict=True):
            self.operand(where, ins.op, kind, v, depth)
        _TYPERS[ins.op.cat](self, where, ins)

    def operand(self, where: tuple[str, int], op: OpDef, kind: Kind, v: object, depth: int) -> None:
        """Range checks for one operand of the given kind."""
        p = self.p
        if kind is Kind.REG and not (isinstance(v, int) and 0 <= v < len(p.registers)):
            raise self.fail(where, "register index out of range", f"r{v}")
        if kind is Kind.VIEW:
            if not (isinstance(v, int) and 0 <= v < len(p.views)):
                raise self.fail(where, "view index out of range", f"v{v}")
            self.loops_enclose(where, p.views[v], depth)
        if kind is Kind.SLOT:
            self.slot(where, v if isinstance(v, int) else -1)
        if kind is Kind.SCALAR:
            if not isinstance(v, Scalar):
                raise self.fail(where, "bad scalar operand")
            if v.tag is ScalarTag.SLOT:
                self.slot(where, int(v.value))
        if kind is Kind.AXES and not (isinstance(v, int) and 0 <= v < 256):
            raise self.fail(where, "bad axes mask")
        if kind is Kind.FLAGS and not (isinstance(v, int) and 0 <= v < 1 << len(op.flags)):
            raise self.fail(where, "unknown flag bits", f"0x{v:x}" if isinstance(v, int) else "")
        if kind is Kind.REDUCE_KIND and not isinstance(v, ReduceKind):
            raise self.fail(where, "unknown reduce kind")
        if kind is Kind.ACC_KIND and not isinstance(v, AccKind):
            raise self.fail(where, "unknown acc kind")
        if kind is Kind.DTYPE and not isinstance(v, DType):
            raise self.fail(where, "unknown dtype")
        if kind is Kind.SHAPE:
            if not isinstance(v, tuple) or len(v) > MAX_RANK:
                raise self.fail(where, "bad shape operand")
            for e in v:
                self.extent(where, e, depth)

    def loops_enclose(self, where: tuple[str, int], view: View, depth: int) -> None:
        """A view tiled by loop level L can only be used inside L+1 loops."""
        for d in view.dims:
            if Index.is_loop(d.index) and d.index - Index.LOOP0 >= depth:
                raise self.fail(where, "view tiled by a loop that does not enclose it")

    def extent(self, where: tuple[str, int], e: Extent, depth: int) -> None:
        """A SHAPE entry must name an existing slot, view dim or register dim."""
        p = self.p
        if e.kind is ExtentKind.SLOT:
            self.slot(where, e.index)
        elif e.kind is ExtentKind.VIEW_DIM:
            if not 0 <= e.index < len(p.views):
                raise self.fail(where, "view index out of range", f"v{e.index}")
            dims = p.views[e.index].dims
            if not 0 <= e.dim < len(dims):
                raise self.fail(where, "extent dim out of range", f"v{e.index}[{e.dim}]")
            src = dims[e.dim].index
            if Index.is_loop(src) and src - Index.LOOP0 >= depth:
                raise self.fail(where, "view tiled by a loop that does not enclose it")
        else:
            if not 0 <= e.index < len(p.registers):
                raise self.fail(where, "register index out of range", f"r{e.index}")
            if not 0 <= e.dim < len(p.registers[e.index].shape):
                raise self.fail(where, "extent dim out of range", f"r{e.index}[{e.dim}]")

    # -- typing helpers ----------------------------------------------------

    def dtype(self, r: int) -> DType:
        return self.p.registers[r].dtype

    def rank(self, r: int) -> int:
        return len(self.p.registers[r].shape)

    def need(self, where: tuple[str, int], ok: bool, reason: str, detail: str = "") -> None:
        if not ok:
            raise self.fail(where, reason, detail)


def _pick(offsets: tuple[int, ...], i: int) -> int:
    """offsets[i], or -1 when there is no such entry."""
    return offsets[i] if 0 <= i < len(offsets) else -1


# --------------------------------------------------------------------------
# Typing rules, one per category. `o` = the instruction's operands.


def _t_none(v: _Validator, w: tuple[str, int], ins: Instr) -> None:
    """nop, loop, endloop: nothing to type."""


def _t_memory(v: _Validator, w: tuple[str, int], ins: Instr) -> None:
    """load/store/store_acc: register and argument agree in dtype and rank."""
    reg, view_i = (ins.operands[0], ins.operands[1])
    if ins.op.cat is not Cat.LOAD:
        reg, view_i = view_i, reg
    view = v.p.views[view_i]
    arg = v.p.args[view.arg]
    v.need(w, v.dtype(reg) == arg.dtype, "dtype mismatch", f"r{reg} vs a{view.arg}")
    v.need(w, v.rank(reg) == len(view.dims), "rank mismatch", f"r{reg} vs v{view_i}")
    if ins.op.cat is Cat.STORE_ACC:
        v.need(w, v.dtype(reg) is not DType.BOOL, "dtype mismatch", "store_acc on i1")


def _t_copy(v: _Validator, w: tuple[str, int], ins: Instr) -> None:
    """copy: same dtype and rank; convert: the DTYPE operand is dst's dtype."""
    dst, src = ins.operands[:2]
    v.need(w, v.rank(dst) == v.rank(src), "rank mismatch")
    if ins.op.cat is Cat.CONVERT:
        v.need(w, ins.operands[2] == v.dtype(dst), "dtype mismatch", "convert target vs dst")
    else:
        v.need(w, v.dtype(dst) == v.dtype(src), "dtype mismatch")


def _t_broadcast(v: _Validator, w: tuple[str, int], ins: Instr) -> None:
    """Same dtype; the shape has dst's rank; src has no more dims."""
    dst, src, shape = ins.operands
    v.need(w, v.dtype(dst) == v.dtype(src), "dtype mismatch")
    v.need(w, len(shape) == v.rank(dst), "rank mismatch", "shape vs dst")
    v.need(w, v.rank(src) <= v.rank(dst), "rank mismatch", "src has more dims than dst")


def _t_fill(v: _Validator, w: tuple[str, int], ins: Instr) -> None:
    """The shape has dst's rank."""
    dst, _, shape = ins.operands
    v.need(w, len(shape) == v.rank(dst), "rank mismatch", "shape vs dst")


def _t_select(v: _Validator, w: tuple[str, int], ins: Instr) -> None:
    """An i1 condition; a, b and dst of one dtype; dst has the largest rank."""
    dst, cond, a, b = ins.operands
    v.need(w, v.dtype(cond) is DType.BOOL, "dtype mismatch", "condition must be i1")
    v.need(w, v.dtype(a) == v.dtype(b) == v.dtype(dst), "dtype mismatch")
    v.need(w, v.rank(dst) == max(v.rank(cond), v.rank(a), v.rank(b)), "rank mismatch")


def _t_reduce(v: _Validator, w: tuple[str, int], ins: Instr) -> None:
    """Numeric, same dtype; axes inside src; dst rank per keepdims."""
    dst, src, _, axes, flags = ins.operands
    v.need(w, v.dtype(dst) == v.dtype(src), "dtype mismatch")
    v.need(w, v.dtype(src) is not DType.BOOL, "dtype mismatch", "reduce on i1")
    v.need(w, axes >> v.rank(src) == 0, "axis out of range", f"mask 0x{axes:x}")
    keep = flags & 1
    want = v.rank(src) if keep else v.rank(src) - bin(axes).count("1")
    v.need(w, v.rank(dst) == want, "rank mismatch", f"dst rank should be {want}")


def _t_mma(v: _Validator, w: tuple[str, int], ins: Instr) -> None:
    """Numeric, one dtype, ranks 2 or 3, dst distinct from the inputs."""
    dst, a, b, _ = ins.operands
    v.need(w, v.dtype(a) == v.dtype(b) == v.dtype(dst), "dtype mismatch")
    v.need(w, v.dtype(dst) is not DType.BOOL, "dtype mismatch", "mma on i1")
    ranks_ok = min(v.rank(a), v.rank(b)) >= 2 and v.rank(dst) == max(v.rank(a), v.rank(b))
    v.need(w, ranks_ok, "rank mismatch", "mma: operands of rank >= 2, batch dims broadcast")
    v.need(w, dst not in (a, b), "mma result overlaps an input")


def _t_elementwise(v: _Validator, w: tuple[str, int], ins: Instr) -> None:
    """unary / binary (all three forms): the TypeRule of the ISA row."""
    dst = ins.operands[0]
    regs = [
        x for (_, k), x in zip(ins.op.operands[1:], ins.operands[1:], strict=True) if k is Kind.REG
    ]
    ins_t = {v.dtype(r) for r in regs}
    v.need(w, len(ins_t) == 1, "dtype mismatch", "operands differ")
    t, out = ins_t.pop(), v.dtype(dst)
    rule = ins.op.rule
    ok = (
        {
            TypeRule.FLOAT: t.is_float and out == t,
            TypeRule.NUMERIC: t is not DType.BOOL and out == t,
            TypeRule.CMP: out is DType.BOOL,
            TypeRule.LOGIC: t is DType.BOOL and out is DType.BOOL,
            TypeRule.ANY_TO_BOOL: out is DType.BOOL,
            TypeRule.FLOAT_TO_BOOL: t.is_float and out is DType.BOOL,
        }[rule]
        if rule is not None
        else False
    )
    v.need(w, ok, "dtype mismatch", f"{ins.op.name}: {rule.value if rule else ''}")
    v.need(w, v.rank(dst) == max(v.rank(r) for r in regs), "rank mismatch")


_TYPERS = {
    Cat.NOP: _t_none,
    Cat.LOOP: _t_none,
    Cat.ENDLOOP: _t_none,
    Cat.LOAD: _t_memory,
    Cat.STORE: _t_memory,
    Cat.STORE_ACC: _t_memory,
    Cat.COPY: _t_copy,
    Cat.CONVERT: _t_copy,
    Cat.BROADCAST: _t_broadcast,
    Cat.FILL: _t_fill,
    Cat.SELECT: _t_select,
    Cat.REDUCE: _t_reduce,
    Cat.MMA: _t_mma,
    Cat.UNARY: _t_elementwise,
    Cat.BINARY: _t_elementwise,
    Cat.BINARY_RS: _t_elementwise,
    Cat.BINARY_SR: _t_elementwise,
}
