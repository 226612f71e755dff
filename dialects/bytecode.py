"""The `bytecode` dialect: VM programs as IR, one op per instruction.

A `bytecode.program` is one kernel's bytecode: declarations of its
arguments, parameter slots, grid, registers and views, then its
instructions. The instruction ops are not written by hand: one op class is
derived from each row of the VM's ISA table (`dvm.vm.isa.OPCODES`), and its
syntax from the row's operand kinds, as in the VM's assembler:

    bytecode.program @layernorm_k0 params [] {
      bytecode.arg a0 f32 [x_0, x_1]
      bytecode.slot s0 = x_0
      bytecode.grid [s3]
      bytecode.reg r0 f32 (s4, s1) at s5
      bytecode.view v0 a0 offset s6 (s0 s1 g0 s4) (s1 s7)
      bytecode.load r0, v0
      bytecode.reduce r1, r0, sum, {1}, [keepdims]
      bytecode.div.rs r1, r1, s1
      ...
    }

Slots hold sympy expressions of the shape symbols (the symbols each
argument's dims are named by) and of earlier slots (`s3`), in the typed
attributes of `dvm.dialects.expr`; encoding turns them into the binary's small
postfix expressions.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, ClassVar, TypeVar

import sympy
from xdsl.dialects.builtin import (
    UNKNOWN_LOC,
    ArrayAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    SymbolNameConstraint,
    f64,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValues
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, NoTerminator, SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from dvm.dialects.attrs import float_attr, i64_attr, text_attr
from dvm.dialects.derived_ops import derived_op
from dvm.dialects.expr import (
    NAME,
    ExprAttr,
    ShapeAttr,
    expr_attr,
    expr_text,
    parse_expression,
    parse_expressions,
    print_expressions,
    shape_attr,
)
from dvm.dialects.tile_checks import verify_device
from dvm.vm.isa import DTYPE_BY_TEXT, MAX_RANK, OPCODES, AccKind, Kind, OpDef, ReduceKind

OpT = TypeVar("OpT", bound=IRDLOperation)


def bare_op(cls: type[OpT], properties: dict[str, Attribute]) -> OpT:
    """An op of `cls` made of its `properties` alone, all of them, as xDSL's `create`
    makes it. The instructions and declarations below have no operands, results,
    successors, regions or defaults, so the steps of `create` for those (half its
    cost) are left out; `build` would also match the properties against the op's
    definition, twice the cost of the op itself. A kernel's program makes dozens."""
    op = cls.__new__(cls)
    op._operands = NO_VALUES  # pyright: ignore[reportPrivateUsage]
    op._operand_uses = ()  # pyright: ignore[reportPrivateUsage]
    op.results = NO_VALUES
    op._successors = ()  # pyright: ignore[reportPrivateUsage]
    op._successor_uses = ()  # pyright: ignore[reportPrivateUsage]
    op.regions = ()
    op.properties = properties
    op.attributes = {}
    op.location = UNKNOWN_LOC
    op.parent = op._next_op = op._prev_op = None  # pyright: ignore[reportPrivateUsage]
    return op


NO_VALUES: SSAValues[Any] = SSAValues(())


# --------------------------------------------------------------------------
# Operand syntax, one reader and one writer per operand kind of the ISA
# --------------------------------------------------------------------------

Operand = Any
"""int (REG, VIEW, SLOT, AXES mask, FLAGS mask), str (DTYPE text), ReduceKind,
AccKind, float or ("slot", n) for SCALAR, tuple of extents for SHAPE where an
extent is ("s", n), ("v", view, dim) or ("r", reg, dim)."""


def parse_ref(parser: Parser, prefix: str) -> int:
    """`r3` -> 3 for prefix `r`."""
    pos = parser.pos
    word = parser.parse_identifier(context_msg=f" ({prefix}<number>)")
    if not re.fullmatch(prefix + r"\d+", word):
        parser.raise_error(f"expected {prefix}<number>, got {word!r}", pos)
    return int(word[len(prefix) :])


def parse_axes(parser: Parser) -> int:
    """`{0, 2}` -> the mask 0b101; each axis below the VM's `MAX_RANK` (a mask of
    `1 << 2**63` would not fit the memory)."""

    def axis() -> int:
        start = parser.pos
        value = parser.parse_integer()
        if not 0 <= value < MAX_RANK:
            parser.raise_error(f"axis {value} is not one of 0 to {MAX_RANK - 1}", start, parser.pos)
        return value

    return sum(
        1 << a for a in set(parser.parse_comma_separated_list(parser.Delimiter.BRACES, axis))
    )


SPECIAL_SCALARS = {"inf": math.inf, "nan": math.nan}
"""Scalars that print as words (`repr` of a float)."""


def parse_scalar(parser: Parser) -> Operand:
    """A number (`1.5`, `-inf`, `nan`, as `operand_text` writes it) or a slot (`s3`)."""
    sign = -1.0 if parser.parse_optional_punctuation("-") is not None else 1.0
    for word, value in SPECIAL_SCALARS.items():
        if parser.parse_optional_keyword(word):
            return sign * value
    number = parser.parse_optional_number()
    if number is not None:
        return sign * float(number)
    if sign < 0:
        parser.raise_error("expected a number after '-'")
    return ("slot", parse_ref(parser, "s"))


def parse_extent(parser: Parser) -> tuple[Any, ...]:
    pos = parser.pos
    word = parser.parse_identifier(context_msg=" (an extent: sN, vN[d] or rN[d])")
    kind, index = word[0], word[1:]
    if kind not in "svr" or not index.isdigit():
        parser.raise_error(f"expected an extent sN, vN[d] or rN[d], got {word!r}", pos)
    if kind == "s":
        return ("s", int(index))
    parser.parse_punctuation("[")
    dim = parser.parse_integer(allow_negative=False)
    parser.parse_punctuation("]")
    return (kind, int(index), dim)


def parse_flags(parser: Parser, op: OpDef) -> int:
    pos = parser.pos
    names = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_identifier)
    unknown = [n for n in names if n not in op.flags]
    if unknown:
        flags = ", ".join(op.flags)
        parser.raise_error(f"{op.name} has no flag {unknown[0]!r}; flags: {flags}", pos)
    return sum(1 << op.flags.index(n) for n in names)


def parse_enum(parser: Parser, enum: type[ReduceKind] | type[AccKind]) -> Operand:
    pos = parser.pos
    word = parser.parse_identifier()
    if word.upper() not in enum.__members__:
        choices = ", ".join(m.lower() for m in enum.__members__)
        parser.raise_error(f"expected one of {choices}, got {word!r}", pos)
    return enum[word.upper()]


def parse_dtype(parser: Parser) -> str:
    pos = parser.pos
    word = parser.parse_identifier()
    if word not in DTYPE_BY_TEXT:
        parser.raise_error(
            f"expected an element type ({', '.join(DTYPE_BY_TEXT)}), got {word!r}", pos
        )
    return word


OPERAND_PARSERS: dict[Kind, Callable[[Parser, OpDef], Operand]] = {
    Kind.REG: lambda p, _: parse_ref(p, "r"),
    Kind.VIEW: lambda p, _: parse_ref(p, "v"),
    Kind.SLOT: lambda p, _: parse_ref(p, "s"),
    Kind.SCALAR: lambda p, _: parse_scalar(p),
    Kind.DTYPE: lambda p, _: parse_dtype(p),
    Kind.AXES: lambda p, _: parse_axes(p),
    Kind.FLAGS: parse_flags,
    Kind.REDUCE_KIND: lambda p, _: parse_enum(p, ReduceKind),
    Kind.ACC_KIND: lambda p, _: parse_enum(p, AccKind),
    Kind.SHAPE: lambda p, _: tuple(
        p.parse_comma_separated_list(p.Delimiter.PAREN, lambda: parse_extent(p))
    ),
}


def operand_text(op: OpDef, kind: Kind, value: Operand) -> str:
    if kind in (Kind.REG, Kind.VIEW, Kind.SLOT):
        return f"{kind.value[0]}{value}"
    if kind is Kind.SCALAR:
        return f"s{value[1]}" if isinstance(value, tuple) else repr(float(value))
    if kind is Kind.DTYPE:
        return str(value)
    if kind is Kind.AXES:
        return "{" + ", ".join(str(a) for a in range(8) if value >> a & 1) + "}"
    if kind is Kind.FLAGS:
        return "[" + ", ".join(f for b, f in enumerate(op.flags) if value >> b & 1) + "]"
    if kind in (Kind.REDUCE_KIND, Kind.ACC_KIND):
        return value.name.lower()
    return "(" + ", ".join(extent_text(e) for e in value) + ")"


def extent_text(extent: tuple[Any, ...]) -> str:
    return f"s{extent[1]}" if extent[0] == "s" else f"{extent[0]}{extent[1]}[{extent[2]}]"


# --------------------------------------------------------------------------
# Instructions: one op class per ISA row
# --------------------------------------------------------------------------


def encode_operand(kind: Kind, value: Operand) -> Attribute:
    """An operand as a property: ints for references and masks, a float for
    an immediate scalar, text for element types, kinds and shapes."""
    if kind is Kind.SCALAR:
        return i64_attr(value[1]) if isinstance(value, tuple) else float_attr(value, f64)
    if kind in (Kind.DTYPE,):
        return text_attr(str(value))
    if kind in (Kind.REDUCE_KIND, Kind.ACC_KIND):
        return text_attr(value.name.lower())
    if kind is Kind.SHAPE:
        return ArrayAttr([text_attr(extent_text(e)) for e in value])
    return i64_attr(int(value))


EXTENT = re.compile(r"([svr])(\d+)(?:\[(\d+)\])?")


def decode_operand(kind: Kind, attr: Attribute) -> Operand:
    """The inverse of `encode_operand`."""
    if kind is Kind.SCALAR:
        assert isinstance(attr, IntegerAttr | FloatAttr)
        return (
            ("slot", attr.value.data) if isinstance(attr, IntegerAttr) else float(attr.value.data)
        )
    if kind is Kind.SHAPE:
        assert isinstance(attr, ArrayAttr)
        extents = [EXTENT.fullmatch(e.data) for e in attr.data if isinstance(e, StringAttr)]
        return tuple(
            (m[1], int(m[2])) if m[3] is None else (m[1], int(m[2]), int(m[3]))
            for m in extents
            if m is not None
        )
    if isinstance(attr, StringAttr):
        if kind is Kind.REDUCE_KIND:
            return ReduceKind[attr.data.upper()]
        if kind is Kind.ACC_KIND:
            return AccKind[attr.data.upper()]
        return attr.data
    assert isinstance(attr, IntegerAttr)
    return attr.value.data


def operand_fits(kind: Kind, attr: Attribute) -> bool:
    """Whether `attr` encodes an operand of `kind` (as `encode_operand` makes them)."""
    if kind is Kind.SCALAR:
        return isinstance(attr, IntegerAttr | FloatAttr)
    if kind is Kind.SHAPE:
        return isinstance(attr, ArrayAttr) and all(
            isinstance(e, StringAttr) and EXTENT.fullmatch(e.data) for e in attr.data
        )
    if kind is Kind.DTYPE:
        return isinstance(attr, StringAttr) and attr.data in DTYPE_BY_TEXT
    if kind in (Kind.REDUCE_KIND, Kind.ACC_KIND):
        enum = ReduceKind if kind is Kind.REDUCE_KIND else AccKind
        return isinstance(attr, StringAttr) and attr.data.upper() in enum.__members__
    return isinstance(attr, IntegerAttr)


class InstructionOp(IRDLOperation):
    """Base of the instruction ops; `OPDEF` is the ISA row the op stands for."""

    OPDEF: ClassVar[OpDef]
    operand_values = prop_def(ArrayAttr)

    @classmethod
    def make(cls, operands: Sequence[Operand]) -> InstructionOp:
        kinds = [k for _, k in cls.OPDEF.operands]
        if len(operands) != len(kinds):
            raise ValueError(f"{cls.OPDEF.name} takes {len(kinds)} operands, got {len(operands)}")
        try:
            values = operand_values(cls.OPDEF, tuple(operands))
        except TypeError:  # an operand that is no key (a list): encoded afresh
            values = _operand_values.__wrapped__(cls.OPDEF, operands, ())
        return bare_op(cls, {"operand_values": values})

    @property
    def values(self) -> list[Operand]:
        kinds = [k for _, k in self.OPDEF.operands]
        return [decode_operand(k, a) for k, a in zip(kinds, self.operand_values.data, strict=True)]

    def verify_(self) -> None:
        kinds = [k for _, k in self.OPDEF.operands]
        values = self.operand_values.data
        if len(values) != len(kinds):
            raise VerifyException(f"'{self.name}' takes {len(kinds)} operands, got {len(values)}")
        for i, (kind, attr) in enumerate(zip(kinds, values, strict=True)):
            if not operand_fits(kind, attr):
                raise VerifyException(f"'{self.name}' operand {i} is no {kind.value} operand")

    def print(self, printer: Printer) -> None:
        kinds = [k for _, k in self.OPDEF.operands]
        texts = [operand_text(self.OPDEF, k, v) for k, v in zip(kinds, self.values, strict=True)]
        if texts:
            printer.print_string(" " + ", ".join(texts))

    @classmethod
    def parse(cls, parser: Parser) -> InstructionOp:
        operands: list[Operand] = []
        for i, (_, kind) in enumerate(cls.OPDEF.operands):
            if i:
                parser.parse_punctuation(",")
            operands.append(OPERAND_PARSERS[kind](parser, cls.OPDEF))
        return cls.make(operands)


def operand_values(opdef: OpDef, operands: tuple[Operand, ...]) -> ArrayAttr:
    """An instruction's operands encoded (`encode_operand`), made once per operand list
    (attributes are immutable): kernels repeat their loads, stores and arithmetic on the
    same few registers and views, and xDSL verifies each attribute as it is made. The
    floats' signs are part of the key: 0.0 and -0.0 are equal floats, and each must
    keep its own immediate."""
    signs = tuple(math.copysign(1.0, v) for v in operands if type(v) is float)
    return _operand_values(opdef, operands, signs)


@lru_cache(maxsize=1 << 12)
def _operand_values(
    opdef: OpDef, operands: tuple[Operand, ...], signs: tuple[float, ...]
) -> ArrayAttr:
    kinds = [k for _, k in opdef.operands]
    return ArrayAttr([encode_operand(k, v) for k, v in zip(kinds, operands, strict=True)])


def instruction_class(opdef: OpDef) -> type[InstructionOp]:
    class_name = "".join(part.capitalize() for part in re.split(r"[._]", opdef.name)) + "Op"
    namespace = {
        "name": f"bytecode.{opdef.name}",
        "OPDEF": opdef,
        "__annotations__": {"OPDEF": ClassVar[OpDef]},
        "__doc__": opdef.doc,
    }
    return derived_op(InstructionOp, class_name, namespace)


INSTRUCTIONS: dict[str, type[InstructionOp]] = {d.name: instruction_class(d) for d in OPCODES}
"""Mnemonic -> its op class, for every opcode of the ISA."""


# --------------------------------------------------------------------------
# Declarations
# --------------------------------------------------------------------------


@irdl_op_definition
class ArgOp(IRDLOperation):
    """`bytecode.arg a0 f32 [x_0, x_1]`: an argument's element type and
    the symbol (or static size) that names each of its dims."""

    name = "bytecode.arg"
    index = prop_def(IntegerAttr)
    dtype = prop_def(StringAttr)
    dims = prop_def(ShapeAttr)

    @classmethod
    def make(cls, index: int, dtype: str, dims: Sequence[sympy.Expr | int]) -> ArgOp:
        props = {
            "index": i64_attr(index),
            "dtype": text_attr(dtype),
            "dims": shape_attr(dims),
        }
        return bare_op(cls, props)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" a{self.index.value.data} {self.dtype.data} ")
        print_expressions(printer, self.dims.data)

    @classmethod
    def parse(cls, parser: Parser) -> ArgOp:
        index, dtype = parse_ref(parser, "a"), parse_dtype(parser)
        return cls.make(index, dtype, parse_expressions(parser, parser.Delimiter.SQUARE))


@irdl_op_definition
class SlotOp(IRDLOperation):
    """`bytecode.slot s2 = ceiling(x_0/s0)`: a parameter slot, an integer
    expression of the shape symbols and earlier slots."""

    name = "bytecode.slot"
    index = prop_def(IntegerAttr)
    expr = prop_def(ExprAttr)

    @classmethod
    def make(cls, index: int, expr: sympy.Expr | int) -> SlotOp:
        return bare_op(cls, {"index": i64_attr(index), "expr": expr_attr(expr)})

    def print(self, printer: Printer) -> None:
        printer.print_string(f" s{self.index.value.data} = {expr_text(self.expr.data)}")

    @classmethod
    def parse(cls, parser: Parser) -> SlotOp:
        index = parse_ref(parser, "s")
        parser.parse_punctuation("=")
        return cls.make(index, parse_expression(parser))


@irdl_op_definition
class GridOp(IRDLOperation):
    """`bytecode.grid [s3, s4]`: the slots giving the grid's extents."""

    name = "bytecode.grid"
    extents = prop_def(ArrayAttr[IntegerAttr])

    @classmethod
    def make(cls, slots: Sequence[int]) -> GridOp:
        return bare_op(cls, {"extents": ArrayAttr([i64_attr(s) for s in slots])})

    @property
    def slots(self) -> list[int]:
        return [a.value.data for a in self.extents.data]

    def print(self, printer: Printer) -> None:
        printer.print_string(" [" + ", ".join(f"s{s}" for s in self.slots) + "]")

    @classmethod
    def parse(cls, parser: Parser) -> GridOp:
        return cls.make(
            parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, lambda: parse_ref(parser, "s")
            )
        )


@irdl_op_definition
class RegOp(IRDLOperation):
    """`bytecode.reg r0 f32 (s4, s1) at s5`: a register's element type, its
    largest shape and its byte offset in local memory, all slots."""

    name = "bytecode.reg"
    index = prop_def(IntegerAttr)
    dtype = prop_def(StringAttr)
    shape = prop_def(ArrayAttr[IntegerAttr])
    offset = prop_def(IntegerAttr)

    @classmethod
    def make(cls, index: int, dtype: str, shape: Sequence[int], offset: int) -> RegOp:
        return bare_op(
            cls,
            {
                "index": i64_attr(index),
                "dtype": text_attr(dtype),
                "shape": ArrayAttr([i64_attr(s) for s in shape]),
                "offset": i64_attr(offset),
            },
        )

    @property
    def shape_slots(self) -> list[int]:
        return [a.value.data for a in self.shape.data]

    def print(self, printer: Printer) -> None:
        shape = ", ".join(f"s{s}" for s in self.shape_slots)
        printer.print_string(
            f" r{self.index.value.data} {self.dtype.data} ({shape}) at s{self.offset.value.data}"
        )

    @classmethod
    def parse(cls, parser: Parser) -> RegOp:
        index, dtype = parse_ref(parser, "r"), parse_dtype(parser)
        shape = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: parse_ref(parser, "s")
        )
        parser.parse_keyword("at")
        return cls.make(index, dtype, shape, parse_ref(parser, "s"))


VIEW_INDEX = re.compile(r"(g|l)(\d+)")


@irdl_op_definition
class ViewOp(IRDLOperation):
    """`bytecode.view v0 a0 offset s6 (s0 s1 g0 s4) (s1 s7)`: per dim its size
    and stride slots, and for a tiled dim the grid axis (`gN`) or loop level
    (`lN`) that picks the tile and the tile size slot."""

    name = "bytecode.view"
    index = prop_def(IntegerAttr)
    arg = prop_def(IntegerAttr)
    offset = prop_def(IntegerAttr)
    dims = prop_def(ArrayAttr[StringAttr])

    @classmethod
    def make(cls, index: int, arg: int, offset: int, dims: Sequence[str]) -> ViewOp:
        return bare_op(
            cls,
            {
                "index": i64_attr(index),
                "arg": i64_attr(arg),
                "offset": i64_attr(offset),
                "dims": ArrayAttr([text_attr(d) for d in dims]),
            },
        )

    @property
    def dim_texts(self) -> list[str]:
        """Each dim as `sA sB` or `sA sB gI sT` / `sA sB lI sT`."""
        return [d.data for d in self.dims.data]

    def print(self, printer: Printer) -> None:
        dims = "".join(f" ({d})" for d in self.dim_texts)
        head = f" v{self.index.value.data} a{self.arg.value.data} offset s{self.offset.value.data}"
        printer.print_string(head + dims)

    @classmethod
    def parse(cls, parser: Parser) -> ViewOp:
        index, arg = parse_ref(parser, "v"), parse_ref(parser, "a")
        parser.parse_keyword("offset")
        offset = parse_ref(parser, "s")
        dims: list[str] = []
        while parser.parse_optional_punctuation("("):
            size, stride = parse_ref(parser, "s"), parse_ref(parser, "s")
            text = f"s{size} s{stride}"
            if not parser.parse_optional_punctuation(")"):
                pos = parser.pos
                walker = parser.parse_identifier()
                if not VIEW_INDEX.fullmatch(walker):
                    parser.raise_error(f"expected gN or lN, got {walker!r}", pos)
                text += f" {walker} s{parse_ref(parser, 's')}"
                parser.parse_punctuation(")")
            dims.append(text)
        return cls.make(index, arg, offset, dims)


# --------------------------------------------------------------------------
# The program
# --------------------------------------------------------------------------


def parse_symbol_name(parser: Parser) -> str:
    """A shape symbol's name (`n`), as a parameter of a program."""
    pos = parser.pos
    name = parser.parse_identifier(context_msg=" (a parameter's symbol)")
    if not NAME.fullmatch(name):
        parser.raise_error(f"{name!r} is not a symbol name (letters, digits and _)", pos)
    return name


@irdl_op_definition
class ProgramOp(IRDLOperation):
    """One kernel's bytecode: declarations, then instructions in order.
    `params` names the shape symbols that no argument dim gives: the caller
    passes their values (in this order) when it launches the program."""

    name = "bytecode.program"
    sym_name = prop_def(SymbolNameConstraint())
    params = prop_def(ArrayAttr[StringAttr])
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), NoTerminator(), SymbolOpInterface())

    @classmethod
    def make(cls, name: str, params: Sequence[str], body: Region | None = None) -> ProgramOp:
        return cls.build(
            properties={
                "sym_name": StringAttr(name),
                "params": ArrayAttr([StringAttr(p) for p in params]),
            },
            regions=[body or Region(Block())],
        )

    @property
    def param_names(self) -> list[str]:
        return [p.data for p in self.params.data]

    def print(self, printer: Printer) -> None:
        params = ", ".join(self.param_names)
        printer.print_string(f" @{self.sym_name.data} params [{params}]")
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body)

    @classmethod
    def parse(cls, parser: Parser) -> ProgramOp:
        name = parser.parse_symbol_name().data
        parser.parse_keyword("params")
        params = parser.parse_comma_separated_list(
            parser.Delimiter.SQUARE, lambda: parse_symbol_name(parser)
        )
        attributes = parser.parse_optional_attr_dict_with_keyword()
        program = cls.make(name, params, parser.parse_region())
        if attributes is not None:  # the device it was lowered for (`dvm.device`)
            program.attributes.update(attributes.data)
        return program

    def verify_(self) -> None:
        verify_device(f"'{self.name}' @{self.sym_name.data}", self.attributes.get("dvm.device"))
        for param in self.param_names:
            if not NAME.fullmatch(param):
                raise VerifyException(f"'{self.name}' parameter {param!r} is not a symbol name")
        seen = {"a": 0, "s": 0, "r": 0, "v": 0}
        for op in self.body.block.ops:
            prefix = DECLARATION_PREFIX.get(type(op))
            if prefix is None:
                continue
            index = op.properties.get("index")
            if not isinstance(index, IntegerAttr):
                raise VerifyException(f"'{op.name}' needs an integer `index`")
            if index.value.data != seen[prefix]:
                raise VerifyException(
                    f"'{self.name}' declares {prefix}{index.value.data} where "
                    f"{prefix}{seen[prefix]} comes next (declarations are numbered in order)"
                )
            seen[prefix] += 1


DECLARATION_PREFIX: dict[type[Operation], str] = {
    ArgOp: "a",
    SlotOp: "s",
    RegOp: "r",
    ViewOp: "v",
}

Bytecode = Dialect(
    "bytecode",
    [ProgramOp, ArgOp, SlotOp, GridOp, RegOp, ViewOp, *INSTRUCTIONS.values()],
)
