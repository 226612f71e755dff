"""Parsing `.mlir` text into verified modules with the project's dialects.

Every error names its place in the source: `file:line:col: error: message`,
then the source line with carets under the spot. `dvm.compile`, `dvm-run` and
`dvm-opt` all parse through `LocatingParser`, so they report the same places.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache, partial
from pathlib import Path
from typing import Any, cast

# (first: xDSL and sympy imported with the collector paused, see its doc)
import dvm.libraries  # noqa: F401  # isort: skip
from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    ComplexType,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    IndexType,
    IntAttr,
    IntegerType,
    ModuleOp,
    RankedStructure,
    StringAttr,
    UnknownLoc,
    i1,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import AttrConstraint, base
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.utils.exceptions import (
    DiagnosticException,
    MultipleSpansParseError,
    ParseError,
    VerifyException,
)
from xdsl.utils.lexer import Input, Span
from xdsl.utils.mlir_lexer import MLIRTokenKind

from dvm.dialects import DIALECTS
from dvm.dialects.control_flow import RegionError, check_control_flow
from dvm.dialects.plain_verify import verify_module
from dvm.dialects.tensor import plain_tensor_type
from dvm.dialects.walk import ops_within
from dvm.literals import LiteralParser


def make_context() -> Context:
    """A context that knows every dialect the project's programs may use."""
    ctx = Context()
    for name, factory in DIALECTS.items():
        ctx.register_dialect(name, factory)
    return ctx


def parse(source: str | Path, filename: str | None = None) -> ModuleOp:
    """Parse and verify a program given as `.mlir` text or a path to a file.

    A `str` is read as a path when it names an existing `.mlir` file and has
    no newline; otherwise it is program text. Raises xDSL's `ParseError` or
    `VerifyException`, whose message starts with the `file:line:col` of the
    culprit, on bad input.
    """
    text, name = read_source(source, filename)
    context = _parsing_context[0].clone()
    parser = LocatingParser(context, text, name)
    try:
        module = parser.parse_module()
    except LocatedDiagnostic as e:
        raise VerifyException(str(e)) from None
    _parsing_context[0] = context  # (no other thread changes it: each parses a clone)
    verify(module, parser.spans)
    return module


_parsing_context = [make_context()]
"""A context that holds the dialects the programs parsed so far have loaded: `parse`
parses with a copy of it, then keeps that copy, so that a dialect is loaded (its ops
listed and registered one by one, 5k interpreted bytecodes a program) once per process,
not once per program."""


def verify(module: ModuleOp, spans: dict[Operation, Span[str]]) -> None:
    """Verify a parsed module: xDSL's verifiers, and the region rules of
    `check_control_flow` that xDSL lacks. Raises a `VerifyException` whose message
    starts with the `file:line:col` of the culprit."""
    try:
        check_control_flow(module)
    except RegionError as e:
        raise VerifyException(located(str(e), e.places, spans) or str(e)) from None
    check_unique_symbols(module, spans)
    try:
        verify_module(module, ops_within(module))
    except VerifyException as e:
        raise VerifyException(locate(e, module, spans) or str(e)) from None


def check_unique_symbols(module: ModuleOp, spans: dict[Operation, Span[str]]) -> None:
    """Raise a located `VerifyException` at the second definition of a function name in
    a module (xDSL's check, a module's, names the symbol but not where it is)."""
    for inner in ops_within(module):
        if not isinstance(inner, ModuleOp):
            continue
        first: dict[str, Operation] = {}
        for op in inner.ops:
            name = op.properties.get("sym_name") or op.attributes.get("sym_name")
            if not isinstance(name, StringAttr):
                continue
            if name.data in first:
                message = f'redefinition of symbol "{name.data}"'
                if first[name.data] in spans:
                    line = spans[first[name.data]].get_location().line
                    message += f" (first defined on line {line})"
                raise VerifyException(located(message, [op], spans) or message)
            first[name.data] = op


def read_source(source: str | Path, filename: str | None = None) -> tuple[str, str]:
    """The text of `source` and the name to report in diagnostics."""
    if isinstance(source, Path) or ("\n" not in source and source.endswith(".mlir")):
        path = Path(source)
        name = filename or str(path)
        return decode_utf8(path.read_bytes(), name), name
    return source, filename or "<string>"


# --------------------------------------------------------------------------
# Diagnostics
# --------------------------------------------------------------------------


class LocatedDiagnostic(DiagnosticException):
    """A diagnostic already formatted with its location and source context."""


@dataclass
class DvmParseError(ParseError):
    """A parse error that prints like every other diagnostic (see `format_diagnostic`)."""

    def __str__(self) -> str:
        return format_diagnostic(self.span, self.msg)


def format_diagnostic(span: Span[str] | Span[bytes], msg: str) -> str:
    """`file:line:col: error: msg`, then the source line with carets under `span`."""
    context = span.print_with_context().splitlines()[1:]  # drop xDSL's location line
    return "\n".join([f"{span.get_location()}: error: {msg}", *context])


def format_parse_error(e: ParseError) -> str:
    """A parse error in the same layout as every other diagnostic."""
    text = format_diagnostic(e.span, e.msg)
    if isinstance(e, MultipleSpansParseError):
        if e.ref_text is not None:
            text += "\n" + e.ref_text.rstrip("\n")
        for span, note in e.refs:
            text += "\n" + format_diagnostic(span, note or "").replace(": error: ", ": note: ", 1)
    return text


def decode_utf8(data: bytes, name: str) -> str:
    """The input as text; invalid UTF-8 is a `ParseError` at the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        shown = data.decode("utf-8", errors="replace")
        start = len(data[: e.start].decode("utf-8"))
        span = Span(start, start + 1, Input(shown, name))
        raise DvmParseError(
            span, f"invalid UTF-8 (byte 0x{data[e.start]:02x}): {e.reason}"
        ) from None


STRING_OR_COMMENT = re.compile(r'"|//[^\n]*')
"""What the lexer skips over whole: a string literal (from its quote) or a comment."""
STRING_BODY = re.compile(r'(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*')
"""A string literal's characters, one at a time (MLIR's: no line break, and the escapes
`\\"`, `\\n`, `\\t`, `\\\\` and two hex digits)."""


def check_string_literals(text: str, name: str, line_offset: int = 0) -> None:
    """Raise a `DvmParseError` at the first string literal that does not end with a quote
    on its own line, or that holds an escape MLIR does not know.

    xDSL's lexer matches a string with a regular expression whose nested repetition
    backtracks exponentially in the rest of the line when the string is not closed
    there, so such strings are found here first, in one pass over the text.
    """
    position = 0
    while found := STRING_OR_COMMENT.search(text, position):
        position = found.end()
        if found.group() != '"':
            continue  # a comment: a quote in it starts nothing
        body = STRING_BODY.match(text, position)
        end = body.end() if body else position
        stop = text[end : end + 1]
        if stop == '"':
            position = end + 1
            continue
        if stop == "\\":
            span = Span(end, end + 2, Input(text, name), line_offset)
            raise DvmParseError(span, f"unknown escape `{text[end : end + 2]}` in a string literal")
        if stop in ("\v", "\f"):
            span = Span(end, end + 1, Input(text, name), line_offset)
            raise DvmParseError(span, "a vertical tab or form feed in a string literal")
        span = Span(found.start(), found.end(), Input(text, name), line_offset)
        what = "the end of its line" if stop else "the end of the input"
        raise DvmParseError(span, f"string literal not closed before {what}")


# --------------------------------------------------------------------------
# Parsing with locations
# --------------------------------------------------------------------------


MAX_NESTING = 32
"""How deeply regions may nest (a function body is one level, an `scf.if` in it
two; a module's own region does not count): the passes, the interpreter and
the runtime recurse into regions, and Python's stack holds this many levels
with room to spare."""


class LocatingParser(LiteralParser):
    """A parser that remembers where each op was written, and says where the
    program breaks a rule that xDSL's parser does not check.

    `spans` maps every parsed op to its source span (the first line of the
    chunk is line `line_offset + 1` of the file), and ops without a `loc(...)`
    get a `FileLineColLoc`, as MLIR's parser does. Numbers follow
    `dvm.literals`. Each of these is an error at its place:

    - a value used but never defined (xDSL notices at the end of the input);
    - a value used before its definition, or in it (xDSL accepts the forward
      reference, as for a graph region; dvm programs have none);
    - regions nested more than `MAX_NESTING` deep, or any other syntax nested
      deeper than Python's stack allows;
    - a string literal not closed on its line (`check_string_literals`).
    """

    def __init__(self, ctx: Context, text: str, name: str, line_offset: int = 0):
        check_string_literals(text, name, line_offset)  # before xDSL lexes the first token
        super().__init__(ctx, text, name)
        self.line_offset = line_offset
        self.spans: dict[Operation, Span[str]] = {}
        self.first_uses: dict[str, Span[str]] = {}
        """Where each value used before its definition was first used."""
        self.op_starts: list[int] = []
        """Where each op being parsed starts, the innermost last."""
        self.nesting = 0
        """How many regions enclose the parser's position."""
        self.file_attr: StringAttr | None = None
        """The file name of the ops' locations, made once."""

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        """The module; a parse error is a `DvmParseError` (one with several spans keeps
        its own type and layout)."""
        if self._current_token.text.strip('"') in ("builtin.module", "module"):
            self.nesting = -1  # a module's own region is no nesting level
        try:
            return super().parse_module(allow_implicit_module)
        except ParseError as e:
            if type(e) is not ParseError:
                raise
            undefined = [n for n in self.forward_ssa_references if n in self.first_uses]
            if not undefined or not e.msg.startswith("values used but not defined"):
                raise DvmParseError(e.span, e.msg) from None
            first, *others = undefined
            also = f" (also undefined: {', '.join('%' + n for n in others)})" if others else ""
            message = f"use of undefined value %{first}{also}"
            raise DvmParseError(self.first_uses[first], message) from None
        except RecursionError:
            span = self._current_token.span
            raise DvmParseError(
                Span(span.start, span.end, span.input, self.line_offset),
                "the program nests too deeply here for the parser (Python's stack ran out)",
            ) from None

    def parse_optional_region(self, arguments: Sequence[Parser.Argument] | None = None) -> Any:
        """A region, at most `MAX_NESTING` deep."""
        if self._current_token.kind == MLIRTokenKind.L_BRACE and self.nesting == MAX_NESTING:
            self.raise_error(
                f"regions nest more than {MAX_NESTING} deep here, which dvm does not support",
                self._current_token.span,
            )
        self.nesting += 1
        try:
            return super().parse_optional_region(arguments)
        finally:
            self.nesting -= 1

    def _register_ssa_definition(self, name: str, values: Sequence[SSAValue], span: Span) -> None:
        """Define `%name`; an earlier use of it is an error at that use."""
        use = self.first_uses.get(name)
        if use is not None and name in self.forward_ssa_references:
            own = bool(self.op_starts) and use.start >= self.op_starts[-1]
            line = Span(span.start, span.end, span.input, self.line_offset).get_location().line
            where = "in its own definition" if own else f"before its definition on line {line}"
            raise DvmParseError(use, f"%{name} is used {where}")
        super()._register_ssa_definition(name, values, span)

    def _parse_block(self) -> Block:
        """A labelled block: xDSL's `_parse_block`, which also takes labels such as `^0`
        (valid MLIR, but not as a block's name hint in xDSL)."""
        label = self._parse_token(MLIRTokenKind.CARET_IDENT, " in block definition")
        name = label.text[1:]
        if name not in self.blocks:
            block = Block()
            self.blocks[name] = (block, label.span)
        else:
            block, original = self.blocks[name]
            if original is not None:
                raise MultipleSpansParseError(
                    label.span,
                    f"re-declaration of block '{name}'",
                    "originally declared here:",
                    [(original, None)],
                )
            self.forward_block_references.pop(name)
        if Block.is_valid_name(name) and not Block.is_default_block_name(name):
            block.name_hint = name
        self._parse_optional_block_arg_list(block)
        self.parse_punctuation(":")
        self._parse_block_body(block)
        return block

    def _parse_dense_literal_type(self) -> Any:
        """xDSL's check of a `dense<...>` literal's type, with its constraint built once
        (xDSL builds it from the generic type at every literal, which costs more than
        parsing the literal), and
        its errors at the type (not at the token after it)."""
        start = self.pos
        type = self.expect(self.parse_optional_type, "Dense attribute must be typed!")
        end = start + len(self.lexer.input.content[start : self.pos].rstrip())
        if not dense_literal_types().verifies(type):
            self.raise_error(DENSE_TYPE_ERROR, start, end)
        if any(dim == DYNAMIC_INDEX for dim in cast(Any, type).get_shape()):
            self.raise_error("Dense literal attribute should have a static shape.", start, end)
        return type

    def parse_dense_int_or_fp_elements_attr(self, type: Any) -> Any:
        """A `dense<...>` literal; a short one with its type (`dense<1.0> : tensor<f32>`,
        a program's scalar constants) is read once per text (`read_once`)."""
        parse = partial(super().parse_dense_int_or_fp_elements_attr, type)
        return parse() if type is not None else self.read_once(PLAIN_DENSE, _plain_dense, parse)

    def parse_optional_type(self) -> Any:
        """A type; a plain ranked one (`tensor<?x4xf32>`) is read once per text
        (`read_once`): programs repeat a handful of types at every op."""
        return self.read_once(PLAIN_TYPE, _plain_types, super().parse_optional_type)

    def parse_optional_dictionary_attr_dict(self) -> dict[str, Attribute]:
        """An op's attribute dictionary; a plain one (`{axes = [1], keepdims = true}`) is
        read once per text (`read_once`). A copy each time: the parser moves properties
        out of it."""
        parse = super().parse_optional_dictionary_attr_dict
        return dict(self.read_once(PLAIN_DICTIONARY, _plain_dictionaries, parse))

    def read_once(
        self, pattern: re.Pattern[str], known: dict[str, Any], parse: Callable[[], Any]
    ) -> Any:
        """`parse()` at the parser's position, or, where `pattern` matches the text there,
        what it gave for the same text before, in this process: xDSL reads token by
        token, and programs repeat a few types and attributes at many ops (values
        immutable, read whole; `known` starts again when full)."""
        text = pattern.match(self.lexer.input.content, self.pos)
        if text is None:
            return parse()
        value = known.get(text.group())
        if value is not None:
            self._resume_from(text.end())
            return value
        value = parse()
        if value is not None and self.pos >= text.end():
            if len(known) >= MAX_PLAIN_TYPES:
                known.clear()
            known[text.group()] = value
        return value

    def resolve_operand(self, operand: UnresolvedOperand, type: Attribute) -> SSAValue:
        name = operand.operand_name
        if name not in self.ssa_values and name not in self.first_uses:
            span = operand.span
            self.first_uses[name] = Span(span.start, span.end, span.input, self.line_offset)
        return super().resolve_operand(operand, type)

    def parse_operation(self) -> Operation:
        start = self._current_token.span  # the op's first token: a result or its name
        span = Span(start.start, start.start + 1, start.input, self.line_offset)
        self.op_starts.append(start.start)
        try:
            op = (
                self.parse_plain_operation()
                or self.parse_custom_operation()
                or super().parse_operation()
            )
        except VerifyException as e:  # a constraint checked while the op is built
            raise LocatedDiagnostic(format_diagnostic(span, str(e))) from None
        except ValueError as e:  # xDSL builds some attributes unchecked (`low[2**64]`)
            raise DvmParseError(span, str(e)) from None
        finally:
            self.op_starts.pop()
        self.spans[op] = span
        if isinstance(op.location, UnknownLoc):
            where = span.get_location()
            if self.file_attr is None:
                self.file_attr = StringAttr(where.file)
            op.location = file_location(self.file_attr, where.line, where.col)
        return op

    def parse_custom_operation(self) -> Operation | None:
        """An op in its custom syntax, its heading (`PLAIN_HEAD`) binding one result or
        none and naming a registered op: what xDSL's `parse_operation` makes of it, with
        the heading read off the match, where xDSL lexes it token by token (some 750
        bytecodes an op). None otherwise: the op is then read as xDSL reads it."""
        form = PLAIN_HEAD.match(self.lexer.input.content, self.pos)
        if form is None:
            return None
        state = self._parser_state
        op_type = self.ctx.get_optional_op(form.group(2), dialect_stack=state.dialect_stack)
        if op_type is None:
            return None
        heading = self._current_token.span
        state.dialect_stack.append(op_type.dialect_name())
        op = self.parse_plain_body(op_type, form.end())
        if op is None:
            self._resume_from(form.end())
            op = op_type.parse(self)
        state.dialect_stack.pop()
        if (location := self.parse_optional_location()) is not None:
            op.location = location
        if form.group(1) is not None:
            if len(op.results) != 1:
                message = f"Operation has {len(op.results)} results, but was given 1 to bind."
                self.raise_error(message, at_position=heading)
            name = Span(*form.span(1), self.lexer.input)
            self._register_ssa_definition(form.group(1)[1:], op.results, name)
        return op

    def parse_plain_body(self, op_type: type[Operation], end: int) -> Operation | None:
        """The op whose heading ends at `end`, when the op's class reads its plain form
        at a position (`parse_at`: an elementwise op, a reduction, a matmul, an extract)
        and the op is written so after the heading's white space; None otherwise.
        The parser then goes on after the op, having lexed no token before it (one
        lexed after the heading, some 250 bytecodes, is what the op's parser reads off
        the text anyway)."""
        parse_at = getattr(op_type, "parse_at", None)
        if parse_at is None:
            return None
        # (as the lexer skips it: ASCII white space; a comment or other white space
        # there, which the lexer refuses, takes the lexer)
        text = self.lexer.input.content
        gap = _GAP.match(text, end)
        assert gap is not None  # (it matches the empty text)
        start = gap.end()
        return None if text[start : start + 1].isspace() else parse_at(self, start)

    def parse_plain_operation(self) -> Operation | None:
        """A terminator (`func.return`, `scf.yield`) of plain values and ranked tensor
        types, an `scf.if` (`parse_plain_if`), an `arith.constant` of a short `dense`
        literal, or a function (`parse_plain_function`), at the parser's position, read
        off the match of its plain form (`PLAIN_TERMINATOR`, `PLAIN_CONSTANT`): the op
        the op's own parser makes, without its format's generic steps (2,500-3,500
        bytecodes an op). None where no form matches: the op is then read as any other."""
        text = self.lexer.input.content
        form = PLAIN_TERMINATOR.match(text, self.pos)
        if form is not None:
            names = list(PLAIN_VALUE.finditer(text, *form.span(2)))
            types = list(PLAIN_TENSOR.finditer(text, *form.span(3)))
            if len(names) != len(types):
                return None
            values = [
                self.resolve_operand(
                    UnresolvedOperand(Span(*n.span(), self.lexer.input), 0),
                    plain_tensor_type(self, *t.span()),
                )
                for n, t in zip(names, types, strict=True)
            ]
            self._resume_from(form.end())
            return TERMINATORS[form.group(1)].create(operands=values)
        form = PLAIN_IF.match(text, self.pos)
        if form is not None:
            return self.parse_plain_if(form)
        form = PLAIN_CONSTANT.match(text, self.pos)
        if form is None:
            return self.parse_plain_function()
        # a literal read before is taken from its text (`parse_dense_int_or_fp_elements_attr`
        # would, after xDSL's dispatch on the attribute's keyword)
        known = _plain_dense.get(form.group(2).removeprefix("dense"))
        value = cast(DenseIntOrFPElementsAttr | None, known)
        self._resume_from(form.start(2) if value is None else form.end(2))
        if value is None:
            value = cast(DenseIntOrFPElementsAttr, self.parse_attribute())  # (a `dense` literal)
        op = arith.ConstantOp.create(result_types=[value.get_type()], properties={"value": value})
        name = Span(*form.span(1), self.lexer.input)
        self._register_ssa_definition(form.group(1)[1:], op.results, name)
        return op

    def parse_plain_if(self, form: re.Match[str]) -> Operation | None:
        """An `scf.if` whose heading is `PLAIN_IF` (`form`, matched at the parser's
        position), binding as many results as it declares: the op `IfOp.parse` makes,
        with its heading read off the match (its generic steps cost some 5,000
        bytecodes beside the regions). None when the results do not pair up: the op is
        then read as any other, which says what is wrong."""
        text = self.lexer.input.content
        written = list(PLAIN_TENSOR.finditer(text, *form.span(3))) if form.group(3) else []
        if len(written) != (form.group(1) is not None):
            return None
        types = [plain_tensor_type(self, *t.span()) for t in written]
        source = self.lexer.input
        condition = self.resolve_operand(UnresolvedOperand(Span(*form.span(2), source), 0), i1)
        self._resume_from(form.end())
        self._parser_state.dialect_stack.append("scf")  # (`yield` names scf.yield)
        then = scf.IfOp.parse_region_with_yield(self)
        otherwise = (
            scf.IfOp.parse_region_with_yield(self)
            if self.parse_optional_keyword("else")
            else Region()
        )
        attributes = self.parse_optional_attr_dict()
        self._parser_state.dialect_stack.pop()
        op = scf.IfOp.create(
            operands=[condition],
            result_types=types,
            attributes=attributes,
            regions=[then, otherwise],
        )
        if (location := self.parse_optional_location()) is not None:
            op.location = location
        if form.group(1) is not None:
            self._register_ssa_definition(
                form.group(1)[1:], op.results, Span(*form.span(1), source)
            )
        return op

    def parse_plain_function(self) -> Operation | None:
        """A `func.func` whose heading names its arguments and gives them and its
        results plain ranked tensor types, nothing else (`PLAIN_FUNCTION`), read off
        the match: the function `FuncOp.parse` makes (8-12 thousand bytecodes for its
        heading alone, where each argument is lexed token by token). None otherwise."""
        text = self.lexer.input.content
        form = PLAIN_FUNCTION.match(text, self.pos)
        if form is None:
            return None
        source = self.lexer.input
        arguments = [
            Parser.Argument(Span(*a.span(1), source), plain_tensor_type(self, *a.span(2)))
            for a in PLAIN_ARGUMENT.finditer(text, *form.span(2))
        ]
        written = PLAIN_TENSOR.finditer(text, *form.span(3)) if form.group(3) else ()
        results = [plain_tensor_type(self, *r.span()) for r in written]
        self._resume_from(form.end())
        self._parser_state.dialect_stack.append("func")  # (`return` names func.return)
        body = self.parse_optional_region(arguments)
        self._parser_state.dialect_stack.pop()
        function = func.FuncOp(form.group(1), ([a.type for a in arguments], results), body)
        if (location := self.parse_optional_location()) is not None:
            function.location = location
        return function


@lru_cache(maxsize=4096)
def file_location(file: StringAttr, line: int, col: int) -> FileLineColLoc:
    """The location of an op at `line`:`col` of `file`, made once (xDSL verifies each
    attribute as it is made, some 280 bytecodes a location; attributes are immutable,
    and the programs of a process share their file name, `<string>`, and positions)."""
    return FileLineColLoc(file, IntAttr(line), IntAttr(col))


PLAIN_TYPE = re.compile(r"(?:tensor|vector|memref)<[0-9?x]*[a-z][a-z0-9]*>")
"""A ranked type without an encoding or a layout, whose element type is a bare word."""
_plain_types: dict[str, Attribute] = {}
"""Each plain type parsed so far, by its text (types are immutable values)."""
MAX_PLAIN_TYPES = 4096
"""The most types `_plain_types` keeps (it starts again when full), and the most
dictionaries `_plain_dictionaries` keeps."""
PLAIN_DENSE = re.compile(r"<[\w.,+\[\] -]{1,64}>[ ]*:[ ]*" + PLAIN_TYPE.pattern)
"""The elements and type of a short `dense` literal (after the word `dense`)."""
_plain_dense: dict[str, Attribute] = {}
"""Each short dense literal parsed so far, by its text."""
PLAIN_DICTIONARY = re.compile(r"\{[\w .,=\[\]-]*\}")
"""An attribute dictionary of names, numbers, builtin words (`true`, `f32`) and arrays
of them: nothing in it depends on the dialects loaded or on the program around it."""
_plain_dictionaries: dict[str, dict[str, Attribute]] = {}
"""Each plain attribute dictionary parsed so far, by its text (attributes are
immutable values)."""


PLAIN_VALUE = re.compile(r"%[\w$.-]+")
PLAIN_TENSOR = re.compile(r"tensor<(?:[0-9?]+x)*[a-z][a-z0-9]*>")
"""A plain ranked tensor type, each dim and the element type found one way only: a
heading of many types that does not match fails at once (with the dims' `x` also
an element type's letter, a failed match would try every split of every type)."""
_VALUES = rf"{PLAIN_VALUE.pattern}(?:\s*,\s*{PLAIN_VALUE.pattern})*"
_TENSORS = rf"{PLAIN_TENSOR.pattern}(?:\s*,\s*{PLAIN_TENSOR.pattern})*"
PLAIN_TERMINATOR = re.compile(
    rf"(func\.return|scf\.yield)\s+({_VALUES})\s*:\s*({_TENSORS})(?=\s*\}})"
)
"""A terminator that returns or yields plain values of plain ranked tensor types, the
last op of its region (a `}` follows: no location, nothing else)."""
TERMINATORS: dict[str, type[Operation]] = {"func.return": func.ReturnOp, "scf.yield": scf.YieldOp}
_ARGUMENT = rf"{PLAIN_VALUE.pattern}\s*:\s*{PLAIN_TENSOR.pattern}"
PLAIN_FUNCTION = re.compile(
    rf"func\.func\s+@([A-Za-z_][\w$.]*)\s*\(\s*((?:{_ARGUMENT}(?:\s*,\s*{_ARGUMENT})*)?)\s*\)"
    rf"\s*(?:->\s*({PLAIN_TENSOR.pattern}|\(\s*(?:{_TENSORS})?\s*\)))?\s*(?=\{{)"
)
"""A function's heading: its name, its named arguments and its results (one type, or
a list in parentheses), all plain ranked tensor types, then its body."""
_GAP = re.compile(r"\s*", re.ASCII)
"""White space, as xDSL's lexer skips it between tokens (ASCII)."""
PLAIN_HEAD = re.compile(rf"(?:({PLAIN_VALUE.pattern})\s*=\s*)?([A-Za-z_][A-Za-z0-9_$.]*)")
"""The heading of an op in its custom syntax: the name of its one result (or none) and
the op's name, as the lexer reads them."""
PLAIN_IF = re.compile(
    rf"(?:({PLAIN_VALUE.pattern})\s*=\s*)?scf\.if\s+({PLAIN_VALUE.pattern})"
    rf"\s*(?:->\s*\(\s*({_TENSORS})\s*\))?\s*(?=\{{)"
)
"""The heading of an `scf.if`: the name of its one result (or none), its condition, and
the plain ranked tensor types of its results, then its first region."""
PLAIN_ARGUMENT = re.compile(rf"({PLAIN_VALUE.pattern})\s*:\s*({PLAIN_TENSOR.pattern})")
PLAIN_CONSTANT = re.compile(
    rf"({PLAIN_VALUE.pattern})\s*=\s*arith\.constant\s+"
    rf"(dense<[\w.,+\[\] -]{{1,64}}>[ ]*:[ ]*{PLAIN_TENSOR.pattern})(?!\s*loc\()"
)
"""An `arith.constant` of one result, a short `dense` literal and a plain ranked type,
without a location."""

DENSE_TYPE_ERROR = (
    "Expected memref, vector or tensor type of integer, index, float, or complex type"
)


@cache
def dense_literal_types() -> AttrConstraint:
    """The types a `dense<...>` literal may have (xDSL's rule, built once)."""
    return base(RankedStructure[IntegerType | IndexType | AnyFloat | ComplexType])


def locate(
    error: VerifyException, module: ModuleOp, spans: dict[Operation, Span[str]]
) -> str | None:
    """`error` as a located diagnostic, if the op that raised it can be found (None if not).

    xDSL's verifier does not say which op failed, so each op is verified on
    its own, in source order, until one fails with the same message.
    """
    message = str(error)
    culprit: Operation | None = None  # the op with this message, else the first that fails
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            if str(e) == message:
                culprit = op
                break
            if culprit is None:
                culprit = op
    if culprit is None:  # a block's own check (a body without a terminator): its op's
        culprit = next(
            (op for op in reversed(ops_within(module)) if blocks_fail(op, message)), None
        )
    return located(message, [culprit] if culprit is not None else [], spans)


def blocks_fail(op: Operation, message: str) -> bool:
    """Whether a block of `op`'s regions fails its verification with `message` (a
    check of the block, which verifying the op alone does not make)."""
    for region in op.regions:
        for block in region.blocks:
            try:
                block.verify()
            except VerifyException as e:
                if str(e) == message:
                    return True
    return False


def located(
    message: str, places: Sequence[Operation], spans: dict[Operation, Span[str]]
) -> str | None:
    """`message` at the first of `places` whose source is known (None if none is)."""
    for op in places:
        if op in spans:
            return format_diagnostic(spans[op], message)
    for op in places:
        if isinstance(loc := op.location, FileLineColLoc):
            return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}: error: {message}"
    return None
