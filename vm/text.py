"""Text form of programs: `disassemble(bytes | Program) -> str` and `assemble(str) -> Program`.

The disassembler prints the canonical text; `assemble` reads it back, so
text -> binary -> text round-trips exactly. One declaration or instruction
per line; `;` starts a comment; indentation is ignored (the disassembler
indents loop bodies). Example:

    arg a0 f32 2
    arg a1 f32 2
    params 0
    slot s0 = dim(a0,0)
    slot s1 = dim(a0,1)
    slot s2 = 64
    slot s3 = s0 s2 ceildiv
    slot s4 = 0
    slot s5 = 1
    grid s3
    reg r0 f32 (s2, s1) at s4
    view v0 a0 offset s4 (s0 s1 g0 s2) (s1 s5)
    view v1 a1 offset s4 (s0 s1 g0 s2) (s1 s5)
    load r0, v0
    exp r0, r0
    store v1, r0

Operands: registers `r3`, views `v1`, slots `s2`, scalars `#1.5` or a slot,
dtypes `f32`, axes `{0,1}`, flags `[ta,acc]`, reduce kinds `sum`, shapes
`(s2, v0[1], r1[0])` (a slot, the tile extent of view v0's dim 1, dim 0 of
register r1's current shape).
"""

from __future__ import annotations

import re

from dvm.vm.binary import decode
from dvm.vm.isa import (
    BY_NAME,
    DTYPE_BY_TEXT,
    AccKind,
    DType,
    ExprOp,
    ExtentKind,
    Kind,
    OpDef,
    ReduceKind,
    ScalarTag,
)
from dvm.vm.program import (
    Arg,
    Extent,
    Index,
    Instr,
    Operand,
    Program,
    Register,
    Scalar,
    Slot,
    Tok,
    View,
    ViewDim,
)


class AsmError(ValueError):
    """Text that is not a well-formed program; names the line."""

    def __init__(self, line: int, msg: str) -> None:
        super().__init__(f"line {line}: {msg}")
        self.line = line


_BINOPS = {
    ExprOp.ADD: "add",
    ExprOp.SUB: "sub",
    ExprOp.MUL: "mul",
    ExprOp.FLOORDIV: "floordiv",
    ExprOp.CEILDIV: "ceildiv",
    ExprOp.MOD: "mod",
    ExprOp.MIN: "min",
    ExprOp.MAX: "max",
}
_BINOPS_BY_TEXT = {v: k for k, v in _BINOPS.items()}

# --------------------------------------------------------------------------
# Disassembler


def disassemble(program: Program | bytes, offsets: bool = False) -> str:
    """The canonical text of a program; with `offsets`, byte offsets as comments."""
    if not isinstance(program, Program):
        program = decode(program)
    p = program
    out = [f"arg a{i} {a.dtype.text} {a.rank}" for i, a in enumerate(p.args)]
    out.append(f"params {p.n_params}")
    out += [f"slot s{i} = {_expr_text(s)}" for i, s in enumerate(p.slots)]
    out.append(" ".join(["grid", *(f"s{g}" for g in p.grid)]))
    for i, r in enumerate(p.registers):
        out.append(
            f"reg r{i} {r.dtype.text} ({', '.join(f's{d}' for d in r.shape)}) at s{r.offset}"
        )
    out += [_view_text(i, v) for i, v in enumerate(p.views)]
    depth = 0
    for k, ins in enumerate(p.code):
        if ins.op.name == "endloop":
            depth = max(depth - 1, 0)
        line = "  " * depth + instr_text(ins)
        if offsets and p.offsets is not None:
            line += f"  ; @{p.offsets.code[k]}"
        out.append(line)
        if ins.op.name == "loop":
            depth += 1
    return "\n".join(out) + "\n"


def _expr_text(s: Slot) -> str:
    """A slot's postfix tokens as text: dim(a0,1) 64 ceildiv ..."""
    parts = []
    for t in s.expr:
        if t.op is ExprOp.DIM:
            parts.append(f"dim(a{t.a},{t.b})")
        elif t.op is ExprOp.CONST:
            parts.append(str(t.a))
        elif t.op is ExprOp.PARAM:
            parts.append(f"p{t.a}")
        elif t.op is ExprOp.SLOT:
            parts.append(f"s{t.a}")
        elif t.op is ExprOp.CORES:
            parts.append("cores")
        else:
            parts.append(_BINOPS[t.op])
    return " ".join(parts)


def _index_text(code: int) -> str:
    """g0..g2 for grid axes, l0..l7 for loop levels."""
    return f"g{code - Index.GRID0}" if Index.is_grid(code) else f"l{code - Index.LOOP0}"


def _view_text(i: int, v: View) -> str:
    """view vN aK offset sJ (size stride [index tile])..."""
    dims = []
    for d in v.dims:
        tiling = "" if d.index == Index.NONE else f" {_index_text(d.index)} s{d.tile}"
        dims.append(f"(s{d.size} s{d.stride}{tiling})")
    return f"view v{i} a{v.arg} offset s{v.offset}" + "".join(" " + d for d in dims)


def instr_text(ins: Instr) -> str:
    """One instruction as text, e.g. `add.rs r2, r0, #1.5`."""
    ops = [
        _operand_text(ins.op, k, v) for (_, k), v in zip(ins.op.operands, ins.operands, strict=True)
    ]
    return ins.op.name + (" " + ", ".join(ops) if ops else "")


def _operand_text(op: OpDef, kind: Kind, v: Operand) -> str:
    """One operand in assembler syntax."""
    if kind is Kind.REG:
        return f"r{v}"
    if kind is Kind.VIEW:
        return f"v{v}"
    if kind is Kind.SLOT:
        return f"s{v}"
    if kind is Kind.SCALAR:
        return f"#{float(v.value)!r}" if v.tag is ScalarTag.IMM else f"s{v.value}"
    if kind is Kind.DTYPE:
        return DType(v).text
    if kind is Kind.AXES:
        return "{" + ",".join(str(d) for d in range(8) if v >> d & 1) + "}"
    if kind is Kind.FLAGS:
        names = [op.flags[b] if b < len(op.flags) else f"bit{b}" for b in range(8) if v >> b & 1]
        return "[" + ",".join(names) + "]"
    if kind in (Kind.REDUCE_KIND, Kind.ACC_KIND):
        return v.name.lower()
    return "(" + ", ".join(_extent_text(e) for e in v) + ")"


def _extent_text(e: Extent) -> str:
    """sN, vK[d] or rK[d]."""
    if e.kind is ExtentKind.SLOT:
        return f"s{e.index}"
    prefix = "v" if e.kind is ExtentKind.VIEW_DIM else "r"
    return f"{prefix}{e.index}[{e.dim}]"


# --------------------------------------------------------------------------
# Assembler


def assemble(text: str) -> Program:
    """Parse program text (canonical or hand-written) into a Program."""
    asm = _Assembler()
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.split(";", 1)[0].strip()
        if line:
            try:
                asm.line(line)
            except AsmError:
                raise
            except (ValueError, KeyError, IndexError) as e:
                raise AsmError(n, f"{e}: {line!r}") from None
    return asm.program()


class _Assembler:
    """Collects declarations and instructions line by line."""

    def __init__(self) -> None:
        self.args: list[Arg] = []
        self.n_params = 0
        self.slots: list[Slot] = []
        self.grid: tuple[int, ...] = ()
        self.regs: list[Register] = []
        self.views: list[View] = []
        self.code: list[Instr] = []

    def program(self) -> Program:
        return Program(
            tuple(self.args),
            self.n_params,
            tuple(self.slots),
            self.grid,
            tuple(self.regs),
            tuple(self.views),
            tuple(self.code),
        )

    def line(self, line: str) -> None:
        """Dispatch a line to its declaration parser or parse it as an instruction."""
        head, _, rest = line.partition(" ")
        decl = getattr(self, "_decl_" + head, None)
        if decl is not None:
            decl(rest.strip())
        elif head in BY_NAME:
            self.code.append(_parse_instr(BY_NAME[head], rest))
        else:
            raise ValueError(f"unknown declaration or mnemonic {head!r}")

    def _decl_arg(self, rest: str) -> None:
        name, dtype, rank = rest.split()
        _expect_index(name, "a", len(self.args))
        self.args.append(Arg(DTYPE_BY_TEXT[dtype], int(rank)))

    def _decl_params(self, rest: str) -> None:
        self.n_params = int(rest)

    def _decl_slot(self, rest: str) -> None:
        name, eq, *toks = rest.split()
        _expect_index(name, "s", len(self.slots))
        if eq != "=":
            raise ValueError("expected '='")
        self.slots.append(Slot(tuple(_parse_tok(t) for t in toks)))

    def _decl_grid(self, rest: str) -> None:
        self.grid = tuple(_ref(t, "s") for t in rest.split())

    def _decl_reg(self, rest: str) -> None:
        m = re.fullmatch(r"(r\d+)\s+(\w+)\s+\(([^)]*)\)\s+at\s+(s\d+)", rest)
        if m is None:
            raise ValueError("expected: reg rN DTYPE (sA, sB, ...) at sK")
        _expect_index(m[1], "r", len(self.regs))
        shape = tuple(_ref(t.strip(), "s") for t in m[3].split(",") if t.strip())
        self.regs.append(Register(DTYPE_BY_TEXT[m[2]], shape, _ref(m[4], "s")))

    def _decl_view(self, rest: str) -> None:
        m = re.fullmatch(r"(v\d+)\s+(a\d+)\s+offset\s+(s\d+)((?:\s*\([^)]*\))*)", rest)
        if m is None:
            raise ValueError("expected: view vN aK offset sJ (size stride [gI|lI tile])...")
        _expect_index(m[1], "v", len(self.views))
        dims = tuple(_parse_view_dim(d) for d in re.findall(r"\(([^)]*)\)", m[4]))
        self.views.append(View(_ref(m[2], "a"), _ref(m[3], "s"), dims))


def _expect_index(name: str, prefix: str, expected: int) -> None:
    """Declarations must come in order: a0, a1, ... (and so on)."""
    if _ref(name, prefix) != expected:
        raise ValueError(f"expected {prefix}{expected}, got {name}")


def _ref(tok: str, prefix: str) -> int:
    """`s12` -> 12 for prefix 's'."""
    if not re.fullmatch(prefix + r"\d+", tok):
        raise ValueError(f"expected {prefix}<number>, got {tok!r}")
    return int(tok[len(prefix) :])


def _parse_tok(t: str) -> Tok:
    """One slot-expression token from text."""
    m = re.fullmatch(r"dim\(a(\d+),(\d+)\)", t)
    if m:
        return Tok.dim(int(m[1]), int(m[2]))
    if re.fullmatch(r"-?\d+", t):
        return Tok.const(int(t))
    if re.fullmatch(r"p\d+", t):
        return Tok.param(int(t[1:]))
    if re.fullmatch(r"s\d+", t):
        return Tok.slot(int(t[1:]))
    if t == "cores":
        return Tok.cores()
    return Tok.binop(_BINOPS_BY_TEXT[t])


def _parse_view_dim(text: str) -> ViewDim:
    """'sA sB' or 'sA sB gI sT' / 'sA sB lI sT'."""
    parts = text.split()
    if len(parts) == 2:
        return ViewDim(_ref(parts[0], "s"), _ref(parts[1], "s"))
    size, stride, index, tile = parts
    code = Index.grid(int(index[1:])) if index[0] == "g" else Index.loop(_ref(index, "l"))
    if index[0] == "g":
        _ref(index, "g")
    return ViewDim(_ref(size, "s"), _ref(stride, "s"), code, _ref(tile, "s"))


def _split_operands(rest: str) -> list[str]:
    """Split on commas outside (), [] and {}."""
    out, depth, cur = [], 0, ""
    for ch in rest:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _parse_instr(op: OpDef, rest: str) -> Instr:
    """Operands of one instruction, checked against its ISA row."""
    texts = _split_operands(rest)
    if len(texts) != len(op.operands):
        raise ValueError(f"{op.name} takes {len(op.operands)} operands, got {len(texts)}")
    return Instr(
        op, tuple(_parse_operand(op, k, t) for (_, k), t in zip(op.operands, texts, strict=True))
    )


def _parse_operand(op: OpDef, kind: Kind, t: str) -> Operand:
    """One operand of the given kind from text."""
    if kind is Kind.REG:
        return _ref(t, "r")
    if kind is Kind.VIEW:
        return _ref(t, "v")
    if kind is Kind.SLOT:
        return _ref(t, "s")
    if kind is Kind.SCALAR:
        return Scalar.imm(float(t[1:])) if t.startswith("#") else Scalar.slot(_ref(t, "s"))
    if kind is Kind.DTYPE:
        return DTYPE_BY_TEXT[t]
    if kind is Kind.AXES:
        return sum(1 << int(a) for a in _inner(t, "{}"))
    if kind is Kind.FLAGS:
        return sum(1 << _flag_bit(op, f) for f in _inner(t, "[]"))
    if kind is Kind.REDUCE_KIND:
        return ReduceKind[t.upper()]
    if kind is Kind.ACC_KIND:
        return AccKind[t.upper()]
    return tuple(_parse_extent(e) for e in _inner(t, "()"))


def _inner(t: str, brackets: str) -> list[str]:
    """The comma-separated items inside matching brackets."""
    if not (t.startswith(brackets[0]) and t.endswith(brackets[1])):
        raise ValueError(f"expected {brackets[0]}...{brackets[1]}, got {t!r}")
    return [x.strip() for x in t[1:-1].split(",") if x.strip()]


def _flag_bit(op: OpDef, name: str) -> int:
    """Bit number of a named flag of `op` (or 'bitN')."""
    if name in op.flags:
        return op.flags.index(name)
    if name.startswith("bit"):
        return int(name[3:])
    raise ValueError(f"{op.name} has no flag {name!r}")


def _parse_extent(t: str) -> Extent:
    """sN, vK[d] or rK[d] as an Extent."""
    m = re.fullmatch(r"([vr])(\d+)\[(\d+)\]", t)
    if m is None:
        return Extent.slot(_ref(t, "s"))
    kind = ExtentKind.VIEW_DIM if m[1] == "v" else ExtentKind.REG_DIM
    return Extent(kind, int(m[2]), int(m[3]))
