"""Stage 1: the binary format. `encode(Program) -> bytes`, `decode(bytes) -> Program`.

The layout (byte by byte in docs/bytecode-format.md), all little-endian:

    header   magic "DVMB", u16 version, u16 n_args, u16 n_params, u16 n_slots,
             u16 n_regs, u16 n_views, u8 grid_rank, u8 reserved (0), u32 code_bytes
    args     n_args x (u8 dtype, u8 rank)
    slots    n_slots x (u16 n_tokens, tokens)      token = u8 op + its operands
    grid     grid_rank x u16 slot
    regs     n_regs x (u8 dtype, u8 rank, u16 offset slot, rank x u16 shape slot)
    views    n_views x (u16 arg, u8 rank, u16 offset slot,
                        rank x (u16 size slot, u16 stride slot, u8 index, [u16 tile slot]))
    code     code_bytes of instructions: u8 opcode, then operands per the ISA table

Decoding checks only *structure* (lengths, known codes); index ranges and
typing are the validator's job (`validate.py`), like WebAssembly's split
between decoding and validation.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from enum import IntEnum
from typing import Any, TypeVar, cast

from dvm.vm.errors import BytecodeError
from dvm.vm.isa import (
    BY_CODE,
    MAGIC,
    MAX_RANK,
    OPERAND_SIZES,
    VERSION,
    AccKind,
    DType,
    ExprOp,
    ExtentKind,
    Kind,
    ReduceKind,
    ScalarTag,
)
from dvm.vm.program import (
    Arg,
    Extent,
    Index,
    Instr,
    Offsets,
    Operand,
    Program,
    Register,
    Scalar,
    Slot,
    Tok,
    View,
    ViewDim,
)

_E = TypeVar("_E", bound=IntEnum)
_T = TypeVar("_T")

HEADER = struct.Struct("<4sHHHHHHBBI")
"""magic, version, n_args, n_params, n_slots, n_regs, n_views, grid_rank, reserved, code_bytes"""

_U8 = struct.Struct("<B")
_U16 = struct.Struct("<H")
_I64 = struct.Struct("<q")
_F64 = struct.Struct("<d")

# --------------------------------------------------------------------------
# Encoding


class _Writer:
    """Appends little-endian fields to a bytearray."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def u8(self, v: int) -> None:
        self.buf += _U8.pack(v)

    def u16(self, v: int) -> None:
        self.buf += _U16.pack(v)

    def i64(self, v: int) -> None:
        self.buf += _I64.pack(v)

    def f64(self, v: float) -> None:
        self.buf += _F64.pack(v)


def encode(program: Program) -> bytes:
    """The binary of `program` (which need not be valid: the loader checks).

    Raises BytecodeError('unencodable program') when a field does not fit
    its encoding (say, register index 70000 in a u16), naming the entry
    (`part`: instruction 3, view 0, ...).
    """
    try:
        return _encode(program)
    except _UNENCODABLE as e:
        part = _first_unencodable(program)
        where = f"{part[0]} {part[1]}: " if part is not None else ""
        raise BytecodeError(-1, "unencodable program", f"{where}{e}", part) from None


_UNENCODABLE = (struct.error, TypeError, AttributeError, ValueError, OverflowError)
"""What writing a field its encoding cannot hold raises."""


def _encode(program: Program) -> bytes:
    """The encoder proper: tables, then code, then the header that counts them."""
    w = _Writer()
    for _, table, write in _TABLES:
        for entry in table(program):
            write(w, entry)
    code = _Writer()
    for ins in program.code:
        _write_instr(code, ins)
    header = HEADER.pack(
        MAGIC,
        VERSION,
        len(program.args),
        program.n_params,
        len(program.slots),
        len(program.registers),
        len(program.views),
        len(program.grid),
        0,
        len(code.buf),
    )
    return header + bytes(w.buf) + bytes(code.buf)


def _first_unencodable(program: Program) -> tuple[str, int] | None:
    """The first entry of `program` that does not encode: its table and index."""
    for name, table, write in (*_TABLES, ("instruction", _code, _write_instr)):
        for k, entry in enumerate(table(program)):
            try:
                write(_Writer(), entry)
            except _UNENCODABLE:
                return name, k
    return None


def _write_arg(w: _Writer, a: Arg) -> None:
    w.u8(a.dtype)
    w.u8(a.rank)


def _write_slot(w: _Writer, s: Slot) -> None:
    w.u16(len(s.expr))
    for t in s.expr:
        _write_tok(w, t)


def _write_register(w: _Writer, r: Register) -> None:
    w.u8(r.dtype)
    w.u8(len(r.shape))
    w.u16(r.offset)
    for d in r.shape:
        w.u16(d)


def _write_view(w: _Writer, v: View) -> None:
    w.u16(v.arg)
    w.u8(len(v.dims))
    w.u16(v.offset)
    for d in v.dims:
        w.u16(d.size)
        w.u16(d.stride)
        w.u8(d.index)
        if d.index != Index.NONE:
            w.u16(d.tile if d.tile is not None else 0)


def _code(p: Program) -> Sequence[Instr]:
    return p.code


_TABLES: tuple[tuple[str, Callable[[Program], Sequence[Any]], Callable[[_Writer, Any], None]], ...]
_TABLES = (
    ("argument", lambda p: p.args, _write_arg),
    ("slot", lambda p: p.slots, _write_slot),
    ("grid", lambda p: p.grid, _Writer.u16),
    ("register", lambda p: p.registers, _write_register),
    ("view", lambda p: p.views, _write_view),
)
"""The tables a binary holds before its code, in order: each one's name, its entries in
a program and how one is written."""


def _write_tok(w: _Writer, t: Tok) -> None:
    """One slot-expression token: its op byte, then the leaf's operands."""
    w.u8(t.op)
    if t.op is ExprOp.DIM:
        w.u16(t.a)
        w.u8(t.b)
    elif t.op is ExprOp.CONST:
        w.i64(t.a)
    elif t.op in (ExprOp.PARAM, ExprOp.SLOT):
        w.u16(t.a)


def _write_instr(w: _Writer, ins: Instr) -> None:
    """Opcode byte, then each operand as its ISA kind says."""
    w.u8(ins.op.code)
    for (_, kind), v in zip(ins.op.operands, ins.operands, strict=True):
        _write_operand(w, kind, v)


def _write_operand(w: _Writer, kind: Kind, v: Operand) -> None:
    """One operand in the encoding of its kind (see the isa module table)."""
    if kind is Kind.SCALAR:
        w.u8(v.tag)
        if v.tag is ScalarTag.IMM:
            w.f64(v.value)
        else:
            w.u16(v.value)
    elif kind is Kind.SHAPE:
        w.u8(len(v))
        for e in v:
            w.u8(e.kind)
            w.u16(e.index)
            if e.kind is not ExtentKind.SLOT:
                w.u8(e.dim)
    elif OPERAND_SIZES[kind] == 2:
        w.u16(v)
    else:
        w.u8(int(v))


# --------------------------------------------------------------------------
# Decoding


class _Reader:
    """Reads fields, raising BytecodeError('truncated') past the end. A kernel's binary
    has thousands of fields, most of them slot tokens: bytes are read by indexing,
    enum values through a table, and a token once per binary (`tokens`)."""

    def __init__(self, data: bytes, pos: int = 0, end: int | None = None) -> None:
        self.data = data
        self.pos = pos
        self.end = len(data) if end is None else end
        self.tokens: dict[bytes, Tok] = {}
        """The slot tokens read so far, by their bytes (a token is a frozen value, and
        the slots repeat a few of them)."""

    def _take(self, st: struct.Struct) -> tuple:
        """Unpack `st` at the cursor, or fail with 'truncated' there."""
        if self.pos + st.size > self.end:
            raise BytecodeError(self.pos, "truncated", f"need {st.size} bytes")
        out = st.unpack_from(self.data, self.pos)
        self.pos += st.size
        return out

    def u8(self) -> int:
        pos = self.pos
        if pos >= self.end:
            raise BytecodeError(pos, "truncated", "need 1 bytes")
        self.pos = pos + 1
        return self.data[pos]

    def u16(self) -> int:
        pos = self.pos
        if pos + 2 > self.end:
            raise BytecodeError(pos, "truncated", "need 2 bytes")
        self.pos = pos + 2
        return self.data[pos] | self.data[pos + 1] << 8

    def i64(self) -> int:
        return self._take(_I64)[0]

    def f64(self) -> float:
        return self._take(_F64)[0]

    def enum(self, cls: type[_E], what: str) -> _E:
        """A u8 that must be a member of the IntEnum `cls`."""
        at = self.pos
        v = self.u8()
        member = _BY_VALUE[cls].get(v)
        if member is None:
            raise BytecodeError(at, f"unknown {what}", f"value {v}")
        return cast(_E, member)

    def rank(self) -> int:
        """A rank byte, at most MAX_RANK."""
        at = self.pos
        r = self.u8()
        if r > MAX_RANK:
            raise BytecodeError(at, "rank too large", f"{r} > {MAX_RANK}")
        return r


_BY_VALUE: dict[type[IntEnum], dict[int, IntEnum]] = {
    cls: {int(m): m for m in cls}
    for cls in (AccKind, DType, ExprOp, ExtentKind, ReduceKind, ScalarTag)
}
"""The members of each enum a binary holds, by value."""


def decode(data: bytes, name: str = "") -> Program:
    """Parse a binary into a Program named `name`, checking its structure (not its
    meaning)."""
    data = bytes(data)
    r = _Reader(data)
    magic, version, n_args, n_params, n_slots, n_regs, n_views, grid_rank, reserved, code_len = (
        r._take(HEADER)
    )
    if magic != MAGIC:
        raise BytecodeError(0, "bad magic", repr(magic))
    if version != VERSION:
        raise BytecodeError(4, "unsupported version", f"{version}, expected {VERSION}")
    if reserved != 0:
        raise BytecodeError(HEADER.size - 5, "reserved byte not zero")
    args = tuple(Arg(r.enum(DType, "dtype"), r.rank()) for _ in range(n_args))
    slot_offsets, slots = _read_slots(r, n_slots)
    grid_at = r.pos
    grid = tuple(r.u16() for _ in range(grid_rank))
    reg_offsets, regs = _read_many(r, n_regs, _read_register)
    view_offsets, views = _read_many(r, n_views, _read_view)
    code_start = r.pos
    if code_start + code_len > len(data):
        raise BytecodeError(code_start, "truncated", f"code of {code_len} bytes runs past the end")
    if code_start + code_len < len(data):
        raise BytecodeError(code_start + code_len, "trailing bytes")
    code_offsets, code = _read_code(_Reader(data, code_start, code_start + code_len))
    offsets = Offsets(slot_offsets, grid_at, reg_offsets, view_offsets, code_offsets, len(data))
    return Program(args, n_params, slots, grid, regs, views, code, offsets, name)


def _read_many(
    r: _Reader, n: int, read: Callable[[_Reader], _T]
) -> tuple[tuple[int, ...], tuple[_T, ...]]:
    """Read `n` table entries with `read`, remembering where each starts."""
    offsets: list[int] = []
    items: list[_T] = []
    for _ in range(n):
        offsets.append(r.pos)
        items.append(read(r))
    return tuple(offsets), tuple(items)


def _read_slots(r: _Reader, n: int) -> tuple[tuple[int, ...], tuple[Slot, ...]]:
    """The slot table: per slot, a token count and the tokens."""
    return _read_many(r, n, _read_slot)


def _read_slot(r: _Reader) -> Slot:
    """One slot: u16 token count, then the postfix tokens. A token whose bytes were read
    before is the token they made; only new ones are read field by field."""
    n = r.u16()
    data, end, known = r.data, r.end, r.tokens
    tokens: list[Tok] = []
    for _ in range(n):
        start = r.pos
        if start < end:
            stop = start + _TOKEN_BYTES.get(data[start], 1)
            tok = known.get(data[start:stop]) if stop <= end else None
            if tok is not None:
                r.pos = stop
                tokens.append(tok)
                continue
        tok = known[data[start : r.pos]] = _read_tok(r)
        tokens.append(tok)
    return Slot(tuple(tokens))


_TOKEN_BYTES: dict[int, int] = {ExprOp.DIM: 4, ExprOp.CONST: 9, ExprOp.PARAM: 3, ExprOp.SLOT: 3}
"""A token's length by its op byte, for the ops with operands (the others: 1)."""


def _read_tok(r: _Reader) -> Tok:
    """One token; leaves carry operands, binary ops none."""
    op = r.enum(ExprOp, "expression op")
    if op is ExprOp.DIM:
        return Tok(op, r.u16(), r.u8())
    if op is ExprOp.CONST:
        return Tok(op, r.i64())
    if op in (ExprOp.PARAM, ExprOp.SLOT):
        return Tok(op, r.u16())
    return Tok(op)


def _read_register(r: _Reader) -> Register:
    """dtype, rank, offset slot, then one shape slot per dim."""
    dtype = r.enum(DType, "dtype")
    rank = r.rank()
    offset = r.u16()
    return Register(dtype, tuple(r.u16() for _ in range(rank)), offset)


def _read_view(r: _Reader) -> View:
    """arg, rank, offset slot, then per dim size, stride, index [, tile]."""
    arg = r.u16()
    rank = r.rank()
    offset = r.u16()
    dims = []
    for _ in range(rank):
        size, stride = r.u16(), r.u16()
        at = r.pos
        index = r.u8()
        if not (index == Index.NONE or Index.is_grid(index) or Index.is_loop(index)):
            raise BytecodeError(at, "unknown index source", f"value {index}")
        tile = r.u16() if index != Index.NONE else None
        dims.append(ViewDim(size, stride, index, tile))
    return View(arg, offset, tuple(dims))


def _read_code(r: _Reader) -> tuple[tuple[int, ...], tuple[Instr, ...]]:
    """Instructions until the end of the code section."""
    offsets: list[int] = []
    code: list[Instr] = []
    while r.pos < r.end:
        offsets.append(r.pos)
        code.append(_read_instr(r))
    return tuple(offsets), tuple(code)


def _read_instr(r: _Reader) -> Instr:
    """An opcode byte and the operands its ISA row lists."""
    at = r.pos
    opcode = r.u8()
    op = BY_CODE.get(opcode)
    if op is None:
        raise BytecodeError(at, "unknown opcode", f"0x{opcode:02x}")
    return Instr(op, tuple(_read_operand(r, kind) for _, kind in op.operands))


def _read_operand(r: _Reader, kind: Kind) -> Operand:
    """One operand of the given kind, rejecting unknown enum values."""
    if kind is Kind.SCALAR:
        tag = r.enum(ScalarTag, "scalar tag")
        return Scalar(tag, r.f64() if tag is ScalarTag.IMM else r.u16())
    if kind is Kind.SHAPE:
        return tuple(_read_extent(r) for _ in range(r.rank()))
    if kind is Kind.DTYPE:
        return r.enum(DType, "dtype")
    if kind is Kind.REDUCE_KIND:
        return r.enum(ReduceKind, "reduce kind")
    if kind is Kind.ACC_KIND:
        return r.enum(AccKind, "acc kind")
    return r.u16() if OPERAND_SIZES[kind] == 2 else r.u8()


def _read_extent(r: _Reader) -> Extent:
    """One SHAPE entry: kind, index and (except for slots) a dim."""
    kind = r.enum(ExtentKind, "extent kind")
    index = r.u16()
    return Extent(kind, index, r.u8() if kind is not ExtentKind.SLOT else 0)


def layout(program: Program) -> Offsets:
    """The byte offsets `program` would have once encoded (for error messages)."""
    return decode(encode(program)).offsets or _NO_OFFSETS


_NO_OFFSETS = Offsets((), 0, (), (), (), 0)


# --------------------------------------------------------------------------
# Module files: several named programs
# --------------------------------------------------------------------------

MODULE_MAGIC = b"DVMM"


def encode_programs(programs: Sequence[tuple[str, Program]]) -> bytes:
    """A module file of named programs."""
    out = [MODULE_MAGIC, struct.pack("<H", len(programs))]
    for name, program in programs:
        data = encode(program)
        name_bytes = name.encode()
        out += [struct.pack("<H", len(name_bytes)), name_bytes, struct.pack("<I", len(data)), data]
    return b"".join(out)


def decode_module(data: bytes) -> list[tuple[str, Program]]:
    """The named programs of a module file; BytecodeError on malformed data."""
    if data[:4] != MODULE_MAGIC:
        raise BytecodeError(
            0, f"not a dvm module file (magic {data[:4]!r}, expected {MODULE_MAGIC!r})"
        )
    pos, found = 6, []
    (count,) = struct.unpack_from("<H", data, 4) if len(data) >= 6 else (0,)
    for _ in range(count):
        try:
            (n,) = struct.unpack_from("<H", data, pos)
            name = data[pos + 2 : pos + 2 + n].decode()
            (size,) = struct.unpack_from("<I", data, pos + 2 + n)
        except (struct.error, UnicodeDecodeError) as e:
            raise BytecodeError(pos, f"truncated or corrupt program entry: {e}") from None
        start = pos + 6 + n
        if start + size > len(data):
            raise BytecodeError(start, f"program {name!r} runs past the end of the file")
        found.append((name, decode(data[start : start + size], name)))
        pos = start + size
    if pos != len(data):
        raise BytecodeError(pos, f"{len(data) - pos} bytes after the last program")
    return found
