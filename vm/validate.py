"""Stage 2: static validation, once per program (like WebAssembly's validator).

Everything that does not depend on argument shapes is checked here: every
index (argument, slot, parameter, register, view) is in range, slot
expressions are well-formed stack programs over earlier slots, loops nest
and close, view dims tile by a grid axis that exists or by an enclosing
loop, and every instruction's registers have the dtypes and ranks its ISA
row demands. Shape-dependent checks (bounds, local memory, tile shapes) run
once per specialization in `specialize.py`.
"""

# No `from __future__ import annotations` here: `typing.NamedTuple` compiles each field's
# annotation given as text when its class is made (docs/performance.md).
from itertools import accumulate, repeat
from operator import attrgetter, is_
from typing import Any, NamedTuple

from dvm.vm.binary import HEADER, layout
from dvm.vm.errors import BytecodeError
from dvm.vm.isa import (
    BY_CODE,
    EXPR_LEAVES,
    KEEPDIMS,
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
from dvm.vm.program import (
    Arg,
    Extent,
    Index,
    Instr,
    Offsets,
    Program,
    Register,
    Scalar,
    Slot,
    Tok,
    View,
    ViewDim,
)

I64_MIN, I64_MAX = -(2**63), 2**63 - 1
U16_MAX = 0xFFFF
"""The largest table index, count or param count the binary holds (a u16)."""


class LoopInfo(NamedTuple):
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
        self.checked_tokens: dict[int, Tok] = {}
        """The slot tokens found well formed, by identity (kept alive here)."""
        self.refers: dict[int, int] = {}
        """The slot each checked slot token reads, by identity (-1: another token)."""

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
            if table == "header":
                at = 0
            elif table == "args":
                at = HEADER.size + 2 * i
            else:
                at = o.grid if table == "grid" else _pick(getattr(o, table), i)
        return BytecodeError(at, reason, detail)

    # -- tables ------------------------------------------------------------

    def tables(self) -> None:
        """The header's counts, then args, slots, grid, registers and views."""
        p = self.p
        self.header()
        for i, a in enumerate(p.args):
            ok = isinstance(a, Arg) and isinstance(a.dtype, DType) and _index(a.rank, MAX_RANK + 1)
            if not ok:
                raise self.fail(("args", i), "bad argument", f"a{i}")
        for i, s in enumerate(p.slots):
            if not (isinstance(s, Slot) and type(s.expr) is tuple and len(s.expr) <= U16_MAX):
                raise self.fail(("slots", i), "bad slot", f"s{i}")
            self.slot_expr(i, s.expr)
        if not 1 <= len(p.grid) <= MAX_GRID_RANK:
            raise self.fail(("grid", 0), "bad grid rank", f"{len(p.grid)} axes")
        for g in p.grid:
            self.slot(("grid", 0), g)
        for i, r in enumerate(p.registers):
            self.register(i, r)
        for i, view in enumerate(p.views):
            self.view(i, view)

    def header(self) -> None:
        """What the header counts must fit its u16 fields; every table is a tuple (a
        validated program cannot change afterwards)."""
        p = self.p
        if not _index(p.n_params, U16_MAX + 1):
            raise self.fail(("header", 0), "bad param count", repr(p.n_params))
        for name in ("args", "slots", "grid", "registers", "views", "code"):
            table = getattr(p, name)
            if type(table) is not tuple:
                raise self.fail(("header", 0), "bad table", f"{name}: {type(table).__name__}")
            if len(table) > U16_MAX and name != "code":
                raise self.fail(("header", 0), "table too large", f"{len(table)} {name}")

    def slot(self, where: tuple[str, int], s: object) -> None:
        """A slot reference must name an existing slot."""
        if not (type(s) is int and 0 <= s < len(self.p.slots)):  # (`_index`, inline: hot)
            raise self.fail(where, "slot index out of range", f"s{s}")

    def slot_expr(self, i: int, expr: tuple) -> None:
        """A postfix expression must leave exactly one value and refer only backwards.
        A decoded program shares its equal tokens: each is checked once, except that a
        slot token must refer back from every slot that holds it. The walk over the
        tokens is by C-level maps (slots repeat the tile sizes' long expressions); a
        fault found so is found again by `walk_tokens`, which names the first."""
        checked, refers = self.checked_tokens, self.refers
        ids = list(map(id, expr))
        new = set(ids).difference(checked)
        if new:
            by_id = dict(zip(ids, expr, strict=True))
            try:
                for key in new:
                    t = by_id[key]
                    if key not in _WELL_FORMED:
                        self.token(("slots", i), t, i)
                        _remember_well_formed(t)
                    checked[key] = t
                    refers[key] = t.a if t.op is ExprOp.SLOT else -1
            except BytecodeError:
                self.walk_tokens(i, expr)
                raise
        if max(map(refers.__getitem__, ids), default=-1) >= i:
            self.walk_tokens(i, expr)
        depths = list(accumulate(map(_STACK_STEP.__getitem__, map(_TOKEN_OP, expr))))
        if not depths or min(depths) < 1 or depths[-1] != 1:
            self.walk_tokens(i, expr)

    def walk_tokens(self, i: int, expr: tuple) -> None:
        """Check slot `i`'s expression token by token: the first fault raises."""
        depth, where = 0, ("slots", i)
        for t in expr:
            if id(t) not in self.checked_tokens or (t.op is ExprOp.SLOT and t.a >= i):
                self.token(where, t, i)
            depth += 1 if t.op in _LEAVES else -1
            if depth < 1:
                raise self.fail(where, "expression stack underflow")
        if depth != 1:
            raise self.fail(where, "expression must leave one value", f"leaves {depth}")

    def token(self, where: tuple[str, int], t: object, i: int) -> None:
        """One token of slot `i`: a known op whose operands are in range, the operands
        the binary does not hold 0."""
        if not (isinstance(t, Tok) and isinstance(t.op, ExprOp)):
            raise self.fail(where, "bad expression token", repr(t))
        if t.op is ExprOp.DIM:
            if not _index(t.a, len(self.p.args)):
                raise self.fail(where, "arg index out of range", f"dim(a{t.a},{t.b})")
            if not _index(t.b, self.p.args[t.a].rank):
                raise self.fail(where, "bad DIM axis", f"dim(a{t.a},{t.b})")
        elif t.op is ExprOp.CONST and not (type(t.a) is int and I64_MIN <= t.a <= I64_MAX):
            raise self.fail(where, "constant out of int64 range", repr(t.a))
        elif t.op is ExprOp.PARAM and not _index(t.a, self.p.n_params):
            raise self.fail(where, "param index out of range", f"p{t.a}")
        elif t.op is ExprOp.SLOT and not _index(t.a, i):
            raise self.fail(where, "slot refers to itself or a later slot", f"s{t.a}")
        unused = (t.a, t.b)[_TOKEN_OPERANDS.get(t.op, 0) :]
        if any(not (type(x) is int and x == 0) for x in unused):
            raise self.fail(where, "bad expression token", f"{t.op.name} has no {unused}")

    def register(self, i: int, r: Register) -> None:
        """dtype, and rank and slots of its shape and offset."""
        where = ("registers", i)
        if not (isinstance(r, Register) and isinstance(r.dtype, DType)):
            raise self.fail(where, "bad register", f"r{i}")
        if type(r.shape) is not tuple or len(r.shape) > MAX_RANK:
            raise self.fail(where, "rank too large")
        refs = (*r.shape, r.offset)
        if not (set(map(type, refs)) == {int} and min(refs) >= 0 and max(refs) < len(self.p.slots)):
            for s in refs:  # the first out of range raises
                self.slot(where, s)

    def view(self, i: int, view: View) -> None:
        """Argument, slots and index sources of one view."""
        where = ("views", i)
        if not (isinstance(view, View) and type(view.dims) is tuple):
            raise self.fail(where, "bad view", f"v{i}")
        if not _index(view.arg, len(self.p.args)):
            raise self.fail(where, "arg index out of range", f"a{view.arg}")
        if len(view.dims) > MAX_RANK:
            raise self.fail(where, "rank too large")
        self.slot(where, view.offset)
        for d in view.dims:
            if not isinstance(d, ViewDim):
                raise self.fail(where, "bad view", f"v{i}: {d!r}")
            self.slot(where, d.size)
            self.slot(where, d.stride)
            if type(d.index) is not int:
                raise self.fail(where, "unknown index source", repr(d.index))
            if d.index == Index.NONE:
                if d.tile is not None:  # (the binary has no room for it)
                    raise self.fail(where, "tile size on an untiled view dim")
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
        registers = len(self.p.registers)
        for k, ins in enumerate(self.p.code):
            # (most instructions: the table's own row, checked here without a call)
            row = _ROW_OF.get(id(ins.op)) if type(ins) is Instr else None
            if row is None or type(ins.operands) is not tuple:
                row = self.opcode(k, ins)
            elif len(ins.operands) != row.operand_count:
                raise self.fail(("code", k), "wrong operand count")
            depth_at.append(len(stack))
            cat = ins.op.cat
            if cat is Cat.ENDLOOP:
                if not stack:
                    raise self.fail(("code", k), "endloop without loop")
                end_of[stack.pop()] = k
                depth_at[-1] = len(stack)
            self.instr(k, ins, len(stack), row, registers)
            if cat is Cat.LOOP:
                if len(stack) >= MAX_LOOP_DEPTH:
                    raise self.fail(("code", k), "loop nesting too deep")
                stack.append(k)
        if stack:
            raise self.fail(("code", stack[-1]), "loop without endloop")
        return LoopInfo(end_of, tuple(depth_at))

    def opcode(self, k: int, ins: Instr) -> "_Row":
        """An instruction is a row of the ISA table and a tuple of as many operands;
        returns what the row's operands are (`_ROWS`)."""
        op = getattr(ins, "op", None)
        row = _ROW_OF.get(id(op))  # the table's own row (a decoded program's)
        if row is None or type(ins) is not Instr:
            code = getattr(op, "code", None)
            row = _ROWS.get(code) if type(code) is int else None
            if not (isinstance(ins, Instr) and row is not None and row.op == op):
                raise self.fail(("code", k), "unknown opcode", repr(op))
        if type(ins.operands) is not tuple or len(ins.operands) != row.operand_count:
            raise self.fail(("code", k), "wrong operand count")
        return row

    def instr(self, k: int, ins: Instr, depth: int, row: "_Row", registers: int) -> None:
        """Operand ranges, then the category's typing rule. The register operands (most
        of them) are tested together, by C-level maps; any fault there, and the operands
        are tested one by one, in order, so that the first fault is the one named."""
        where = ("code", k)
        operands = ins.operands
        regs = tuple(map(operands.__getitem__, row.registers))
        if regs and not (
            _INT_ONLY.issuperset(map(type, regs)) and min(regs) >= 0 and max(regs) < registers
        ):
            self.operands_in_order(where, ins, depth)
        for i, check in row.others:
            check(self, where, ins.op, operands[i], depth)
        row.typer(self, where, ins)

    def operands_in_order(self, where: tuple[str, int], ins: Instr, depth: int) -> None:
        """Test each operand in turn: the first fault raises."""
        for (_, kind), v in zip(ins.op.operands, ins.operands, strict=True):
            _OPERAND_CHECKS[kind](self, where, ins.op, v, depth)

    # Each kind of operand: its type and range (`_OPERAND_CHECKS`).

    def register_operand(self, where: tuple[str, int], op: OpDef, v: Any, depth: int) -> None:
        if not _index(v, len(self.p.registers)):
            raise self.fail(where, "register index out of range", f"r{v}")

    def view_operand(self, where: tuple[str, int], op: OpDef, v: Any, depth: int) -> None:
        if not _index(v, len(self.p.views)):
            raise self.fail(where, "view index out of range", f"v{v}")
        self.loops_enclose(where, self.p.views[v], depth)

    def slot_operand(self, where: tuple[str, int], op: OpDef, v: Any, depth: int) -> None:
        self.slot(where, v)

    def scalar_operand(self, where: tuple[str, int], op: OpDef, v: Any, depth: int) -> None:
        self.scalar(where, v)

    def axes_operand(self, where: tuple[str, int], op: OpDef, v: Any, depth: int) -> None:
        if not _index(v, 1 << MAX_RANK):
            raise self.fail(where, "bad axes mask", repr(v))

    def flags_operand(self, where: tuple[str, int], op: OpDef, v: Any, depth: int) -> None:
        if not _index(v, 1 << len(op.flags)):
            raise self.fail(where, "unknown flag bits", f"0x{v:x}" if type(v) is int else repr(v))

    def reduce_kind_operand(self, where: tuple[str, int], op: OpDef, v: Any, depth: int) -> None:
        if not isinstance(v, ReduceKind):
            raise self.fail(where, "unknown reduce kind")

    def acc_kind_operand(self, where: tuple[str, int], op: OpDef, v: Any, depth: int) -> None:
        if not isinstance(v, AccKind):
            raise self.fail(where, "unknown acc kind")

    def dtype_operand(self, where: tuple[str, int], op: OpDef, v: Any, depth: int) -> None:
        if not isinstance(v, DType):
            raise self.fail(where, "unknown dtype")

    def shape_operand(self, where: tuple[str, int], op: OpDef, v: Any, depth: int) -> None:
        if type(v) is not tuple or len(v) > MAX_RANK:
            raise self.fail(where, "bad shape operand")
        for e in v:
            self.extent(where, e, depth)

    def scalar(self, where: tuple[str, int], v: Any) -> None:
        """A SCALAR operand: an f64 immediate (a Python float) or a slot."""
        if not (isinstance(v, Scalar) and isinstance(v.tag, ScalarTag)):
            raise self.fail(where, "bad scalar operand", repr(v))
        if v.tag is ScalarTag.SLOT:
            self.slot(where, v.value)
        elif type(v.value) is not float:
            raise self.fail(where, "bad scalar operand", f"immediate {v.value!r} is no float")

    def loops_enclose(self, where: tuple[str, int], view: View, depth: int) -> None:
        """A view tiled by loop level L can only be used inside L+1 loops."""
        for d in view.dims:
            if Index.is_loop(d.index) and d.index - Index.LOOP0 >= depth:
                raise self.fail(where, "view tiled by a loop that does not enclose it")

    def extent(self, where: tuple[str, int], e: Any, depth: int) -> None:
        """A SHAPE entry must name an existing slot, view dim or register dim."""
        p = self.p
        if not (isinstance(e, Extent) and isinstance(e.kind, ExtentKind)):
            raise self.fail(where, "bad shape operand", repr(e))
        if e.kind is ExtentKind.SLOT:
            self.slot(where, e.index)
            if not (type(e.dim) is int and e.dim == 0):  # (the binary has no room for it)
                raise self.fail(where, "bad shape operand", f"slot extent with dim {e.dim!r}")
        elif e.kind is ExtentKind.VIEW_DIM:
            if not _index(e.index, len(p.views)):
                raise self.fail(where, "view index out of range", f"v{e.index}")
            dims = p.views[e.index].dims
            if not _index(e.dim, len(dims)):
                raise self.fail(where, "extent dim out of range", f"v{e.index}[{e.dim}]")
            src = dims[e.dim].index
            if Index.is_loop(src) and src - Index.LOOP0 >= depth:
                raise self.fail(where, "view tiled by a loop that does not enclose it")
        else:
            if not _index(e.index, len(p.registers)):
                raise self.fail(where, "register index out of range", f"r{e.index}")
            if not _index(e.dim, len(p.registers[e.index].shape)):
                raise self.fail(where, "extent dim out of range", f"r{e.index}[{e.dim}]")

    # -- typing helpers ----------------------------------------------------

    def dtype(self, r: int) -> DType:
        return self.p.registers[r].dtype

    def rank(self, r: int) -> int:
        return len(self.p.registers[r].shape)

    def need(self, where: tuple[str, int], ok: bool, reason: str, detail: str = "") -> None:
        if not ok:
            raise self.fail(where, reason, detail)


def _index(v: object, n: int) -> bool:
    """Whether `v` is an index below `n`: an int, and exactly one (a bool, a numpy integer
    or a float is not; generated code prints validated indices, and prints only ints)."""
    return type(v) is int and 0 <= v < n


_LEAVES = frozenset(EXPR_LEAVES)
_STACK_STEP = {op: 1 if op in _LEAVES else -1 for op in ExprOp}
"""How each token changes the depth of the expression stack."""
_TOKEN_OP = attrgetter("op")
_TOKEN_OPERANDS = {ExprOp.DIM: 2, ExprOp.CONST: 1, ExprOp.PARAM: 1, ExprOp.SLOT: 1}
"""How many of a token's operands (`a`, `b`) the binary holds; the others are 0."""


_WELL_FORMED: dict[int, Tok] = {}
"""Tokens found well formed in some program whose check reads nothing of the program
(an operator, a constant, the cores), by identity, kept alive here so that no other
object takes their identity: a compiler's programs share them (one token per
operator, per constant; `bytecode_to_vm`), so each is checked once per process, not
once per program. A `Tok` is an immutable tuple; only exact `Tok`s of an exact `ExprOp`
are kept. Emptied when it reaches `_WELL_FORMED_MAX`, as decoded programs bring their
own tokens."""
_WELL_FORMED_MAX = 4096
_PROGRAM_FREE = frozenset(ExprOp).difference({ExprOp.DIM, ExprOp.PARAM, ExprOp.SLOT})
"""The tokens whose check reads nothing of their program (`_Validator.token`)."""


def _remember_well_formed(t: Tok) -> None:
    """Keep `t`, just found well formed, in `_WELL_FORMED` if its check reads nothing of
    its program."""
    if type(t) is Tok and type(t.op) is ExprOp and t.op in _PROGRAM_FREE:
        if len(_WELL_FORMED) >= _WELL_FORMED_MAX:
            _WELL_FORMED.clear()
        _WELL_FORMED[id(t)] = t


_INT_ONLY = frozenset({int})


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
    keep = flags & KEEPDIMS
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


def _t_grouped_mma(v: _Validator, w: tuple[str, int], ins: Instr) -> None:
    """gmma: a float (rows, K) tile, (groups, K, N) weights of its dtype and integer
    group sizes (rank 1) give a (rows, N) tile distinct from the inputs; the rows view
    has a dim 0 to count the rows along."""
    dst, a, b, sizes, rows = ins.operands
    v.need(w, v.dtype(a) == v.dtype(b) == v.dtype(dst), "dtype mismatch")
    v.need(w, v.dtype(dst).is_float, "dtype mismatch", "gmma on a non-float type")
    v.need(w, v.dtype(sizes) in (DType.I32, DType.I64), "dtype mismatch", "gmma sizes")
    ranks = (v.rank(dst), v.rank(a), v.rank(b), v.rank(sizes))
    v.need(w, ranks == (2, 2, 3, 1), "rank mismatch", "gmma: (2, 2, 3, 1) for dst, a, b, sizes")
    v.need(w, len(v.p.views[rows].dims) >= 1, "rank mismatch", "gmma rows view of rank 0")
    v.need(w, dst not in (a, b, sizes), "mma result overlaps an input")


def _t_elementwise(v: _Validator, w: tuple[str, int], ins: Instr) -> None:
    """unary / binary (all three forms): the TypeRule of the ISA row."""
    registers = v.p.registers
    row = _ROWS[ins.op.code]
    regs = [registers[ins.operands[i]] for i in row.registers[1:]]
    dst = registers[ins.operands[0]]
    t = regs[0].dtype
    if not all(map(is_, map(_DTYPE, regs), repeat(t))):
        raise v.fail(w, "dtype mismatch", "operands differ")
    if not (row.rule is not None and row.rule(t, dst.dtype)):
        rule = ins.op.rule
        raise v.fail(w, "dtype mismatch", f"{ins.op.name}: {rule.value if rule else ''}")
    if len(dst.shape) != max(map(len, map(_SHAPE, regs))):
        raise v.fail(w, "rank mismatch")


_DTYPE = attrgetter("dtype")
_SHAPE = attrgetter("shape")
_RULES: dict[TypeRule, Any] = {
    TypeRule.FLOAT: lambda t, out: t.is_float and out is t,
    TypeRule.NUMERIC: lambda t, out: t is not DType.BOOL and out is t,
    TypeRule.INT: lambda t, out: t.is_int and out is t,
    TypeRule.CMP: lambda t, out: out is DType.BOOL,
    TypeRule.LOGIC: lambda t, out: t is DType.BOOL and out is DType.BOOL,
    TypeRule.ANY_TO_BOOL: lambda t, out: out is DType.BOOL,
    TypeRule.FLOAT_TO_BOOL: lambda t, out: t.is_float and out is DType.BOOL,
}
"""Whether an elementwise instruction of each typing rule may take operands of dtype
`t` and write `out`."""


def _t_iota(v: _Validator, w: tuple[str, int], ins: Instr) -> None:
    """dst has the view's rank and a numeric dtype; the axis is one dim of the view."""
    dst, view_i, axes = ins.operands
    rank = len(v.p.views[view_i].dims)
    v.need(w, v.rank(dst) == rank, "rank mismatch", f"r{dst} vs v{view_i}")
    v.need(w, v.dtype(dst) is not DType.BOOL, "dtype mismatch", "iota into i1")
    one_axis = axes > 0 and axes & (axes - 1) == 0 and axes >> rank == 0
    v.need(w, one_axis, "axis out of range", f"mask 0x{axes:x}")


def _t_scan(v: _Validator, w: tuple[str, int], ins: Instr) -> None:
    """A sum or product of one numeric dtype along one axis; dst, src and carry of one
    rank; the carry is not dst (both are written)."""
    dst, src, carry, kind, axes, _ = ins.operands
    v.need(w, v.dtype(dst) == v.dtype(src) == v.dtype(carry), "dtype mismatch")
    v.need(w, v.dtype(src) is not DType.BOOL, "dtype mismatch", "scan on i1")
    v.need(
        w, kind in (ReduceKind.SUM, ReduceKind.PROD), "unknown reduce kind", "scan is sum or prod"
    )
    v.need(w, v.rank(dst) == v.rank(src) == v.rank(carry), "rank mismatch")
    one_axis = axes > 0 and axes & (axes - 1) == 0 and axes >> v.rank(src) == 0
    v.need(w, one_axis, "axis out of range", f"mask 0x{axes:x}")
    v.need(w, dst != carry, "scan result overlaps its carry")


def _t_take(v: _Validator, w: tuple[str, int], ins: Instr) -> None:
    """dst has the argument's dtype and the view's rank but its last dim (the indexed
    one); idx is an integer register of dst's rank."""
    dst, view_i, idx = ins.operands
    view = v.p.views[view_i]
    v.need(w, v.dtype(dst) == v.p.args[view.arg].dtype, "dtype mismatch", f"r{dst} vs a{view.arg}")
    v.need(w, v.rank(dst) == len(view.dims) - 1, "rank mismatch", f"r{dst} vs v{view_i}")
    v.need(w, v.rank(idx) == v.rank(dst), "rank mismatch", f"r{idx} vs r{dst}")
    v.need(w, v.dtype(idx).is_int, "dtype mismatch", "indices must be integers")


def _t_scatter_add(v: _Validator, w: tuple[str, int], ins: Instr) -> None:
    """src has the argument's dtype (not i1) and the view's rank but its last dim (the
    indexed one); idx is an integer register of src's rank."""
    view_i, src, idx = ins.operands
    view = v.p.views[view_i]
    v.need(w, v.dtype(src) == v.p.args[view.arg].dtype, "dtype mismatch", f"r{src} vs a{view.arg}")
    v.need(w, v.dtype(src) is not DType.BOOL, "dtype mismatch", "scatter_add on i1")
    v.need(w, v.rank(src) == len(view.dims) - 1, "rank mismatch", f"r{src} vs v{view_i}")
    v.need(w, v.rank(idx) == v.rank(src), "rank mismatch", f"r{idx} vs r{src}")
    v.need(w, v.dtype(idx).is_int, "dtype mismatch", "indices must be integers")


def _t_top_k(v: _Validator, w: tuple[str, int], ins: Instr) -> None:
    """values has src's dtype, indices and positions one signed integer dtype; all
    four of one rank; the axis is one of its dims; values and indices are two
    registers (both are written)."""
    values, indices, src, positions, axes = ins.operands
    v.need(w, v.dtype(values) == v.dtype(src), "dtype mismatch", f"r{values} vs r{src}")
    index = v.dtype(indices)
    v.need(w, index in (DType.I32, DType.I64), "dtype mismatch", "indices must be i32 or i64")
    v.need(w, v.dtype(positions) == index, "dtype mismatch", f"r{positions} vs r{indices}")
    same_rank = v.rank(values) == v.rank(indices) == v.rank(src) == v.rank(positions)
    v.need(w, same_rank, "rank mismatch")
    one_axis = axes > 0 and axes & (axes - 1) == 0 and axes >> v.rank(src) == 0
    v.need(w, one_axis, "axis out of range", f"mask 0x{axes:x}")
    v.need(w, values != indices, "top_k values overlap its indices")


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
    Cat.GROUPED_MMA: _t_grouped_mma,
    Cat.UNARY: _t_elementwise,
    Cat.BINARY: _t_elementwise,
    Cat.BINARY_RS: _t_elementwise,
    Cat.BINARY_SR: _t_elementwise,
    Cat.IOTA: _t_iota,
    Cat.TAKE: _t_take,
    Cat.SCAN: _t_scan,
    Cat.SCATTER_ADD: _t_scatter_add,
    Cat.TOP_K: _t_top_k,
}


class _Row(NamedTuple):
    """What the operands of one row of the ISA table are."""

    op: OpDef
    operand_count: int
    registers: tuple[int, ...]
    """The positions of its register operands."""
    others: tuple[tuple[int, Any], ...]
    """The position of each other operand and its check (`_OPERAND_CHECKS`)."""
    typer: Any
    """Its category's typing rule (`_TYPERS`)."""
    rule: Any
    """An elementwise op's test of its operands' and result's dtypes (`_RULES`), or None."""


_OPERAND_CHECKS: dict[Kind, Any] = {
    Kind.REG: _Validator.register_operand,
    Kind.VIEW: _Validator.view_operand,
    Kind.SLOT: _Validator.slot_operand,
    Kind.SCALAR: _Validator.scalar_operand,
    Kind.AXES: _Validator.axes_operand,
    Kind.FLAGS: _Validator.flags_operand,
    Kind.REDUCE_KIND: _Validator.reduce_kind_operand,
    Kind.ACC_KIND: _Validator.acc_kind_operand,
    Kind.DTYPE: _Validator.dtype_operand,
    Kind.SHAPE: _Validator.shape_operand,
}
"""How an operand of each kind is checked: `check(validator, where, op, value, depth)`."""
_ROWS = {
    code: _Row(
        op,
        len(op.operands),
        tuple(i for i, (_, kind) in enumerate(op.operands) if kind is Kind.REG),
        tuple(
            (i, _OPERAND_CHECKS[kind])
            for i, (_, kind) in enumerate(op.operands)
            if kind is not Kind.REG
        ),
        _TYPERS[op.cat],
        None if op.rule is None else _RULES[op.rule],
    )
    for code, op in BY_CODE.items()
}
"""Each opcode's `_Row`: `instr` tests the register operands together, the others one by
one."""
_ROW_OF = {id(row.op): row for row in _ROWS.values()}
"""The rows by the identity of the table's `OpDef`s (which live as long as the process)."""
