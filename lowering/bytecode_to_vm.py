"""Between the `bytecode` dialect and the VM's program objects (and so binaries).

`to_program` turns a `bytecode.program` into a `dvm.vm.Program`: its slots'
sympy expressions become the binary's postfix integer expressions, each
symbol resolved to an argument's dim (`DIM`), an earlier slot (`SLOT`), a
caller-supplied parameter (`PARAM`) or the cores the VM tiles for (`CORES`,
the symbol `cores`). `from_program` goes back, naming the
dim of argument i along axis d `a{i}_{d}` — so a binary can be shown as IR.

A *module file* (`.dvmb`) holds several named programs: the magic `DVMM`,
a u16 count, then per program a u16 name length, the UTF-8 name, a u32 byte
length and the program's binary (see `docs/bytecode-format.md`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import sympy
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, Region

from dvm.dialects import bytecode as bc
from dvm.dialects.expr import expr_text, integer_fraction, sceiling, sfloor, smax, smin, symbol
from dvm.dialects.walk import block_ops
from dvm.passes.errors import ProgramError, located
from dvm.passes.symbolic import CORES
from dvm.vm import (
    BY_NAME,
    Arg,
    BytecodeError,
    DType,
    ExprOp,
    Extent,
    Index,
    Instr,
    Kind,
    OpDef,
    Program,
    Register,
    Scalar,
    Slot,
    Tok,
    View,
    ViewDim,
)
from dvm.vm.binary import MODULE_MAGIC as MODULE_MAGIC
from dvm.vm.binary import decode_module as decode_module
from dvm.vm.binary import encode, encode_programs
from dvm.vm.isa import DTYPE_BY_TEXT, ExtentKind, ScalarTag

# --------------------------------------------------------------------------
# Slot expressions: sympy <-> postfix tokens
# --------------------------------------------------------------------------

Resolve = Callable[[str], Tok]


def postfix(expr: sympy.Expr, resolve: Resolve) -> list[Tok]:
    """`expr` as postfix tokens; integer arithmetic, min, max, floor/ceil division."""
    return [resolve(t) if isinstance(t, str) else t for t in named_postfix(expr)]


@functools.lru_cache(maxsize=4096)
def named_postfix(expr: sympy.Expr) -> tuple[Tok | str, ...]:
    """`expr` as postfix tokens, each symbol as its name (its token depends on the
    program). Remembered: the kernels of a model share their slots' expressions, and
    walking a nested tile size visits hundreds of nodes."""
    return tuple(_postfix(expr))


BINOPS = {op: Tok.binop(op) for op in ExprOp}
"""One token per operator, shared: the VM's validator checks a token once however many
times its program holds it (as a decoded binary shares its equal tokens)."""


@functools.lru_cache(maxsize=4096)
def constant(value: int) -> Tok:
    """The token of the constant `value`, shared (see `BINOPS`)."""
    return Tok.const(value)


def _postfix(expr: sympy.Expr) -> list[Tok | str]:
    if expr.is_Integer:
        return [constant(int(expr))]
    if isinstance(expr, sympy.Symbol):
        return [expr.name]
    if isinstance(expr, sympy.floor | sympy.ceiling):
        numerator, denominator = integer_fraction(expr.args[0])
        op = ExprOp.FLOORDIV if isinstance(expr, sympy.floor) else ExprOp.CEILDIV
        return [*named_postfix(numerator), *named_postfix(denominator), BINOPS[op]]
    if isinstance(expr, sympy.Mod):
        return fold(expr.args, ExprOp.MOD)
    if isinstance(expr, sympy.Min | sympy.Max):
        return fold(expr.args, ExprOp.MIN if isinstance(expr, sympy.Min) else ExprOp.MAX)
    if isinstance(expr, sympy.Add):
        return add_terms(expr.args)
    if isinstance(expr, sympy.Mul):
        return fold(expr.args, ExprOp.MUL)
    if isinstance(expr, sympy.Pow) and expr.exp.is_Integer and int(expr.exp) > 0:
        return fold([expr.base] * int(expr.exp), ExprOp.MUL)
    raise ValueError(f"slot expression {expr} is not integer arithmetic the VM knows")


def fold(args: Sequence[sympy.Basic], op: ExprOp) -> list[Tok | str]:
    tokens = list(named_postfix(args[0]))  # type: ignore[arg-type]
    for arg in args[1:]:
        tokens += [*named_postfix(arg), BINOPS[op]]  # type: ignore[arg-type]
    return tokens


def add_terms(terms: Sequence[sympy.Basic]) -> list[Tok | str]:
    """A sum, with negated terms subtracted (the VM has no negation)."""
    positive = [t for t in terms if negated(t) is None]
    tokens: list[Tok | str] = fold(positive, ExprOp.ADD) if positive else [constant(0)]
    for term in terms:
        factors = negated(term)
        if factors is not None:
            tokens += [*fold(factors, ExprOp.MUL), BINOPS[ExprOp.SUB]]
    return tokens


def negated(term: sympy.Basic) -> list[sympy.Basic] | None:
    """The factors of -`term` when it is a negative number or a product with a negative
    coefficient (sympy's `could_extract_minus_sign`), else None. Read off its
    coefficient: sympy would build -`term`, a new product (by assumption queries, in a
    process that has not built it yet), whose postfix is these factors'."""
    # (an Integer's sign read off its int, `p`: sympy's `<` sympifies and makes a boolean)
    if isinstance(term, sympy.Integer):
        return [sympy.Integer(-term.p)] if term.p < 0 else None
    if not term.is_Mul:
        return None
    coefficient, *rest = term.args
    if not (isinstance(coefficient, sympy.Integer) and coefficient.p < 0):
        return None
    return rest if coefficient.p == -1 else [sympy.Integer(-coefficient.p), *rest]


def by_nonzero(
    operation: Callable[[sympy.Expr, sympy.Expr], sympy.Expr],
) -> Callable[[sympy.Expr, sympy.Expr], sympy.Expr]:
    """A quotient or remainder as the VM computes it: by a zero divisor it is 0
    (docs/bytecode-format.md), where sympy's would be `zoo` or `nan` (a program decoded
    from a binary may divide by a literal 0)."""
    return lambda a, b: sympy.Integer(0) if b == 0 else operation(a, b)


BINOP_SYMPY: dict[ExprOp, Callable[[sympy.Expr, sympy.Expr], sympy.Expr]] = {
    ExprOp.ADD: lambda a, b: a + b,
    ExprOp.SUB: lambda a, b: a - b,
    ExprOp.MUL: lambda a, b: a * b,
    ExprOp.FLOORDIV: by_nonzero(lambda a, b: sfloor(a / b)),
    ExprOp.CEILDIV: by_nonzero(lambda a, b: sceiling(a / b)),
    ExprOp.MOD: by_nonzero(sympy.Mod),
    ExprOp.MIN: smin,
    ExprOp.MAX: smax,
}


def from_postfix(tokens: Sequence[Tok]) -> sympy.Expr:
    """The sympy expression of postfix tokens (leaves named a0_1, s3, p0)."""
    stack: list[sympy.Expr] = []
    for tok in tokens:
        if tok.op is ExprOp.CONST:
            stack.append(sympy.Integer(tok.a))
        elif tok.op is ExprOp.DIM:
            stack.append(symbol(f"a{tok.a}_{tok.b}"))
        elif tok.op is ExprOp.SLOT:
            stack.append(symbol(f"s{tok.a}"))
        elif tok.op is ExprOp.PARAM:
            stack.append(symbol(f"p{tok.a}"))
        elif tok.op is ExprOp.CORES:
            stack.append(CORES)
        else:
            b, a = stack.pop(), stack.pop()
            stack.append(BINOP_SYMPY[tok.op](a, b))
    return stack[-1]


# --------------------------------------------------------------------------
# Dialect -> Program
# --------------------------------------------------------------------------


def to_program(program: bc.ProgramOp) -> Program:
    ops = declarations(program)
    args = ops[bc.ArgOp]
    params = program.param_names
    resolve = resolver(args, params)
    grid = ops[bc.GridOp]
    return Program(
        args=tuple(Arg(DTYPE_BY_TEXT[a.dtype.data], len(a.dims.data)) for a in args),
        n_params=len(params),
        slots=tuple(slot(op, resolve) for op in ops[bc.SlotOp]),
        grid=tuple(grid[0].slots) if grid else (),
        registers=tuple(map(register, ops[bc.RegOp])),
        views=tuple(map(view, ops[bc.ViewOp])),
        code=tuple(map(instruction, ops[bc.InstructionOp])),
        name=program.sym_name.data,
    )


def slot(op: bc.SlotOp, resolve: Resolve) -> Slot:
    """A slot's expression in postfix; a ProgramError at the slot if it names what
    the program does not define or uses what the VM does not compute."""
    try:
        return Slot(tuple(postfix(op.expr.data, resolve)))
    except ValueError as e:
        raise ProgramError(op, str(e)) from None


def declarations(program: bc.ProgramOp) -> dict[type[Operation], list[Any]]:
    """The program's ops by kind, in order, in one walk: its declarations by their class,
    its instructions under `bc.InstructionOp`. (By `type(op)`: `isinstance` on xDSL's op
    classes, which are ABCs, runs Python code for every op it is asked about.)"""
    found: dict[type[Operation], list[Any]] = {kind: [] for kind in DECLARATION_KINDS}
    instructions = found[bc.InstructionOp] = []
    for op in block_ops(program.body.block):
        kind = found.get(type(op))
        if kind is not None:
            kind.append(op)
        elif type(op) in INSTRUCTION_CLASSES:
            instructions.append(op)
    return found


DECLARATION_KINDS = (bc.ArgOp, bc.SlotOp, bc.GridOp, bc.RegOp, bc.ViewOp)
INSTRUCTION_CLASSES = frozenset(bc.INSTRUCTIONS.values())


def resolver(args: Sequence[bc.ArgOp], params: Sequence[str]) -> Resolve:
    """Symbol name -> its token: the first argument dim it names, the cores, an
    earlier slot (`s3`) or a parameter."""
    dims: dict[str, Tok] = {}
    for i, arg in enumerate(args):
        for axis, d in enumerate(arg.dims.data):
            dims.setdefault(expr_text(d), Tok.dim(i, axis))

    def resolve(name: str) -> Tok:
        if name in dims:
            return dims[name]
        if name == CORES.name:
            found = Tok.cores()
        elif name in params:
            found = Tok.param(params.index(name))
        elif name.startswith("s") and name[1:].isdigit():
            found = Tok.slot(int(name[1:]))
        else:
            raise ValueError(f"symbol {name} is neither an argument's dim, a slot nor a parameter")
        dims[name] = found  # (one token per name, shared: see `BINOPS`)
        return found

    return resolve


def register(op: bc.RegOp) -> Register:
    return Register(DTYPE_BY_TEXT[op.dtype.data], tuple(op.shape_slots), op.offset.value.data)


def view(op: bc.ViewOp) -> View:
    dims = []
    for text in op.dim_texts:
        parts = text.split()
        size, stride = int(parts[0][1:]), int(parts[1][1:])
        if len(parts) == 2:
            dims.append(ViewDim(size, stride))
            continue
        walker, tile = parts[2], int(parts[3][1:])
        index = Index.grid(int(walker[1:])) if walker[0] == "g" else Index.loop(int(walker[1:]))
        dims.append(ViewDim(size, stride, index, tile))
    return View(op.arg.value.data, op.offset.value.data, tuple(dims))


def instruction(op: bc.InstructionOp) -> Instr:
    """The VM's instruction of `op`: made once per opcode and operand array (an `Instr`
    is immutable, and the compiler makes each operand array once: kernels repeat their
    loads, stores and arithmetic on the same registers and views)."""
    name, array = op.OPDEF.name, op.operand_values
    key = (name, id(array))
    known = _instructions.get(key)
    if known is not None and known[0] is array:  # (the array kept alive: its id is its own)
        return known[1]
    made = decoded_instruction(BY_NAME[name], array)
    if len(_instructions) >= MAX_INSTRUCTIONS:
        _instructions.clear()
    _instructions[key] = (array, made)
    return made


MAX_INSTRUCTIONS = 1 << 12
"""The most instructions `_instructions` keeps (it starts again when full)."""
_instructions: dict[tuple[str, int], tuple[ArrayAttr, Instr]] = {}
"""Each instruction made, by its opcode's name and its operand array's identity."""


def decoded_instruction(opdef: OpDef, array: ArrayAttr) -> Instr:
    """The VM's instruction of `opdef` on the operands `array` encodes: an index or mask
    read off its integer attribute at once, any other operand through its dialect value
    (`bc.decode_operand`)."""
    operands = zip(INTEGERS[opdef.name], opdef.operands, array.data, strict=True)
    values = [
        attr.value.data
        if integer and type(attr) is IntegerAttr
        else vm_operand(kind, bc.decode_operand(kind, attr))
        for integer, (_, kind), attr in operands
    ]
    return Instr(opdef, tuple(values))


INTEGER_KINDS = (Kind.REG, Kind.VIEW, Kind.SLOT, Kind.AXES, Kind.FLAGS)
INTEGERS = {d.name: tuple(k in INTEGER_KINDS for _, k in d.operands) for d in BY_NAME.values()}
"""Per opcode, whether each operand is one the VM takes as the integer its attribute
holds (by name: an `Enum` hashes in Python)."""


def vm_operand(kind: Kind, value: object) -> object:
    if kind is Kind.SCALAR:
        return Scalar.slot(value[1]) if isinstance(value, tuple) else Scalar.imm(float(value))  # type: ignore[index,arg-type]
    if kind is Kind.SHAPE:
        return tuple(vm_extent(e) for e in value)  # type: ignore[attr-defined]
    if kind is Kind.DTYPE:
        return DTYPE_BY_TEXT[str(value)]
    return value


def vm_extent(extent: tuple[object, ...]) -> Extent:
    if extent[0] == "s":
        return Extent.slot(int(extent[1]))  # type: ignore[call-overload]
    make = Extent.view_dim if extent[0] == "v" else Extent.reg_dim
    return make(int(extent[1]), int(extent[2]))  # type: ignore[call-overload]


# --------------------------------------------------------------------------
# Program -> dialect
# --------------------------------------------------------------------------


def from_program(program: Program, name: str) -> bc.ProgramOp:
    """A decoded program as a `bytecode.program` (dims named a{i}_{d})."""
    ops: list[Operation] = []
    for i, arg in enumerate(program.args):
        ops.append(bc.ArgOp.make(i, arg.dtype.text, [symbol(f"a{i}_{d}") for d in range(arg.rank)]))
    for i, slot in enumerate(program.slots):
        ops.append(bc.SlotOp.make(i, from_postfix(slot.expr)))
    ops.append(bc.GridOp.make(program.grid))
    for i, r in enumerate(program.registers):
        ops.append(bc.RegOp.make(i, r.dtype.text, r.shape, r.offset))
    for i, v in enumerate(program.views):
        ops.append(bc.ViewOp.make(i, v.arg, v.offset, [view_dim_text(d) for d in v.dims]))
    for ins in program.code:
        values = [
            dialect_operand(kind, v)
            for (_, kind), v in zip(ins.op.operands, ins.operands, strict=True)
        ]
        ops.append(bc.INSTRUCTIONS[ins.op.name].make(values))
    params = [f"p{i}" for i in range(program.n_params)]
    return bc.ProgramOp.make(name, params, Region(Block(ops)))


def view_dim_text(d: ViewDim) -> str:
    text = f"s{d.size} s{d.stride}"
    if d.index == Index.NONE:
        return text
    walker = f"g{d.index - Index.GRID0}" if Index.is_grid(d.index) else f"l{d.index - Index.LOOP0}"
    return f"{text} {walker} s{d.tile}"


def dialect_operand(kind: Kind, value: object) -> object:
    if kind is Kind.SCALAR:
        assert isinstance(value, Scalar)
        return ("slot", int(value.value)) if value.tag is ScalarTag.SLOT else float(value.value)
    if kind is Kind.SHAPE:
        return tuple(dialect_extent(e) for e in value)  # type: ignore[attr-defined]
    if kind is Kind.DTYPE:
        assert isinstance(value, DType)
        return value.text
    return value


def dialect_extent(e: Extent) -> tuple[object, ...]:
    if e.kind is ExtentKind.SLOT:
        return ("s", e.index)
    return ("v" if e.kind is ExtentKind.VIEW_DIM else "r", e.index, e.dim)


# --------------------------------------------------------------------------
# Module files: several named programs
# --------------------------------------------------------------------------


def encode_module(module: ModuleOp) -> bytes:
    """The module file of `module`'s programs; a BytecodeError names the program and the
    op with a field its binary cannot hold (an index beyond its bytes)."""
    programs = [(op, to_program(op)) for op in module.ops if isinstance(op, bc.ProgramOp)]
    try:
        return encode_programs([(op.sym_name.data, program) for op, program in programs])
    except BytecodeError:
        for op, program in programs:  # (which one, only now: a success encodes once)
            try:
                encode(program)
            except BytecodeError as e:
                raise BytecodeError(-1, e.reason, f"{unencodable_op(op, e)}: {e.detail}") from None
        raise


PART_OPS: dict[str, type[Operation]] = {
    "argument": bc.ArgOp,
    "slot": bc.SlotOp,
    "grid": bc.GridOp,
    "register": bc.RegOp,
    "view": bc.ViewOp,
    "instruction": bc.InstructionOp,
}
"""The op of each part of a program a BytecodeError may name (`part`)."""


def unencodable_op(program: bc.ProgramOp, error: BytecodeError) -> str:
    """Where `error` is in `program`: its op (`file:line:col: bytecode.fill`) in @name."""
    name = f"@{program.sym_name.data}"
    if error.part is None:
        return name
    kind, k = error.part
    ops = [op for op in program.body.block.ops if isinstance(op, PART_OPS[kind])]
    op = ops[0 if kind == "grid" else k]
    return f"{located(op)} in {name}"
