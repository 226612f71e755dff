"""Numbers in program text: constants that mean exactly what they say, and sizes that fit.

`LiteralParser` is xDSL's parser with these rules for `dense<...>` and
scalar constants (`arith.constant 1.5 : f32`), each error located at the
literal:

- a float element is the value of the type nearest to the literal; a finite
  literal beyond the type's largest value (`1.0e39` for f32) is an error,
  and `inf`, `-inf`, `nan` and `-nan` are written as such;
- a hexadecimal literal in a float constant is the element's bit pattern,
  as in MLIR (`0xFF800000 : f32` is -inf): it has no sign and at most as
  many bits as the type;
- an integer literal must fit its type: `-128` to `255` for i8 (a signless
  integer is a bit pattern, so both readings are accepted, as in MLIR), and
  the signed 64-bit range for index;
- a static tensor shape holds at most 2**63 - 1 bytes, so that every size
  and offset fits the VM's 64-bit integers.

With `dvm.dialects.dense`, which prints non-finite floats as their bits,
every float constant survives printing and parsing unchanged, bit for bit.
"""

from __future__ import annotations

import math
from typing import Any, NoReturn, cast

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    BytesAttr,
    ComplexType,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    RankedStructure,
    f64,
    i64,
)
from xdsl.ir import Attribute
from xdsl.parser import Parser
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRTokenKind

from dvm.dialects.dense import (
    BF16,
    FLOAT_FORMATS,
    float_bytes_per_element,
    pack_float,
    unpack_float,
)

MAX_BYTES = 2**63 - 1
"""The largest static tensor, in bytes: sizes and offsets are 64-bit in the VM."""

SPECIAL_FLOATS = {"inf": math.inf, "nan": math.nan}
"""Float literals written as words."""

LARGEST_FLOAT = {"<e": 65504.0, "<f": 3.4028234663852886e38, "<d": 1.7976931348623157e308}
LARGEST_FLOAT[BF16] = 3.3895313892515355e38


class LiteralParser(Parser):
    """xDSL's parser, with the number rules of this module."""

    # -- dense<...> ---------------------------------------------------------------

    def _parse_tensor_literal_element(self) -> Parser._TensorLiteralElement:
        """One element of a `dense<...>` literal: a number, `inf` or `nan` (each maybe
        negated); xDSL parses the rest (booleans, complex numbers)."""
        start = self.pos
        negative = self._parse_optional_token(MLIRTokenKind.MINUS) is not None
        token = self._current_token
        if token.kind == MLIRTokenKind.INTEGER_LIT:
            value: int | float = token.kind.get_int_value(token.span)
        elif token.kind == MLIRTokenKind.FLOAT_LIT:
            value = token.kind.get_float_value(token.span)
        elif token.kind == MLIRTokenKind.BARE_IDENT and token.text in SPECIAL_FLOATS:
            value = SPECIAL_FLOATS[token.text]
        else:
            if negative:
                self._resume_from(start)
            return super()._parse_tensor_literal_element()
        self._consume_token()
        span = Span(start, token.span.end, self.lexer.input)
        return self._TensorLiteralElement(negative, -value if negative else value, span)

    def parse_dense_int_or_fp_elements_attr(
        self, type: RankedStructure[Any] | None
    ) -> DenseIntOrFPElementsAttr:
        """A `dense<...>` literal whose elements are stored as the bits they denote."""
        start = self.pos
        self.parse_punctuation("<", " in dense attribute")
        if self._current_token.kind in (MLIRTokenKind.STRING_LIT, MLIRTokenKind.GREATER):
            self._resume_from(start)  # hex data or no elements: xDSL stores them as they are
            return super().parse_dense_int_or_fp_elements_attr(type)
        elements, shape = self._parse_tensor_literal()
        literal = Span(start, self.pos + 1, self.lexer.input)  # `<` to `>`
        self.parse_punctuation(">", " in dense attribute")
        given = type
        if type is None:
            self.parse_punctuation(":", " in dense attribute")
            type = self._parse_dense_literal_type()
        element_type = type.get_element_type()
        if isinstance(element_type, ComplexType):
            for element in elements:  # (xDSL asserts that each is a pair)
                if not isinstance(element.value, tuple):
                    self.raise_error(
                        f"an element of type {element_type} is a pair (re, im)", element.span
                    )
        if not isinstance(element_type, IntegerType | IndexType) and (
            element_type.__class__ not in FLOAT_FORMATS
        ):
            self._resume_from(start)  # complex or other floats: xDSL's rules
            return super().parse_dense_int_or_fp_elements_attr(given)
        type_shape = list(type.get_shape())
        if shape and shape != type_shape:
            self.raise_error(
                f"dense literal has shape {shape} but its type {type} has shape {type_shape}",
                literal,
            )
        data = b"".join(self.element_bytes(e.value, e.span, element_type) for e in elements)
        if not shape:  # a splat
            data *= math.prod(type_shape)
        return DenseIntOrFPElementsAttr(type, BytesAttr(data))

    # -- scalar constants -------------------------------------------------------------

    def parse_optional_builtin_int_or_float_attr(self) -> IntegerAttr | FloatAttr | None:
        """`1.5 : f32`, `-3 : i8`, `0x7FC00000 : f32`, `inf : f16`; a number without a
        type is an i64 or f64."""
        if (boolean := self.try_parse_builtin_boolean_attr()) is not None:
            return boolean
        number = self.parse_optional_special_float() or self.parse_optional_number_span()
        if number is None:
            return None
        value, span = number
        if self._current_token.kind == MLIRTokenKind.COLON:
            type = self._parse_attribute_type()
        else:
            type = f64 if isinstance(value, float) else i64
        if type.__class__ in FLOAT_FORMATS:
            bits = self.element_bytes(value, span, type)
            return FloatAttr(unpack_float(FLOAT_FORMATS[type.__class__], bits), cast(Any, type))
        if isinstance(type, IntegerType | IndexType):
            self.element_bytes(value, span, type)  # checks the range
            return IntegerAttr(cast(int, value), type)
        self.raise_error(f"{type} is not an integer or float type for the literal {span.text}")

    def parse_optional_number_span(self) -> tuple[int | float, Span] | None:
        """A (possibly negative) integer or float literal, and where it was written."""
        start = self.pos
        value = self.parse_optional_number()
        if value is None:
            return None
        end = start + len(self.lexer.input.content[start : self.pos].rstrip())
        return value, Span(start, end, self.lexer.input)

    def parse_optional_special_float(self) -> tuple[float, Span] | None:
        """`inf`, `nan`, `-inf` or `-nan`, if the next tokens are one of them."""
        start = self.pos
        negative = self._current_token.kind == MLIRTokenKind.MINUS
        if negative:  # look past the sign (and come back unless inf or nan follows)
            self._consume_token()
        token = self._current_token
        if token.kind != MLIRTokenKind.BARE_IDENT or token.text not in SPECIAL_FLOATS:
            if negative:
                self._resume_from(start)
            return None
        self._consume_token()
        value = SPECIAL_FLOATS[token.text]
        return (-value if negative else value), Span(start, token.span.end, self.lexer.input)

    # -- one element --------------------------------------------------------------------

    def element_bytes(self, value: Any, span: Span, type: Attribute) -> bytes:
        """The bytes of one element of `type` written as `span` (whose value is `value`)."""
        if type.__class__ in FLOAT_FORMATS:
            return self.float_bytes(value, span, cast(AnyFloat, type))
        if isinstance(value, bool) and not (isinstance(type, IntegerType) and type.width.data == 1):
            self.raise_error(f"true and false are i1 values, not {type} ones", span)
        if not isinstance(value, int):
            self.raise_error(f"expected an integer literal for {type}, got {span.text}", span)
        if isinstance(type, IntegerType):
            low, high = type.value_range()
        else:
            low, high = -(2**63), 2**63
        if not low <= value < high:
            self.raise_error(
                f"integer literal {span.text} is out of range for {type} ({low} to {high - 1})",
                span,
            )
        if isinstance(type, IntegerType):
            value = type.get_normalized_value(value)
        return cast(IntegerType | IndexType, type).pack([value])

    def float_bytes(self, value: Any, span: Span, type: AnyFloat) -> bytes:
        """The bits of a float element: a hex literal's own, else the nearest value's."""
        fmt = FLOAT_FORMATS[type.__class__]
        if isinstance(value, float) and math.isfinite(value):  # the common case, first
            try:
                return pack_float(fmt, value)
            except OverflowError:
                self.out_of_range(span, type)
        text = span.text
        if isinstance(value, tuple):
            self.raise_error(f"expected a float literal for {type}, got the complex {text}", span)
        if isinstance(value, int) and text.lower().lstrip("-").startswith("0x"):
            return self.bit_pattern(value, span, type)
        if isinstance(value, float) and text.lstrip("-") not in SPECIAL_FLOATS:
            self.out_of_range(span, type)  # beyond even f64: the lexer made it inf
        try:
            return pack_float(fmt, float(value))  # inf, nan, or an integer literal
        except OverflowError:
            self.out_of_range(span, type)

    def bit_pattern(self, value: int, span: Span, type: AnyFloat) -> bytes:
        """The bytes of a hex literal in a float constant: the element's bits."""
        width = float_bytes_per_element(FLOAT_FORMATS[type.__class__]) * 8
        if span.text.startswith("-"):
            self.raise_error(
                f"a hexadecimal float literal is a bit pattern and takes no sign: {span.text}",
                span,
            )
        if value >> width:
            self.raise_error(
                f"hexadecimal literal {span.text} has more bits than {type} ({width}): "
                f"it cannot be a bit pattern of {type}",
                span,
            )
        return value.to_bytes(width // 8, "little")

    def out_of_range(self, span: Span, type: AnyFloat) -> NoReturn:
        largest = LARGEST_FLOAT[FLOAT_FORMATS[type.__class__]]
        self.raise_error(
            f"float literal {span.text} is out of range for {type} (its largest finite "
            f"value is {largest:.8g}); write inf for infinity",
            span,
        )

    # -- shapes --------------------------------------------------------------------------

    def parse_ranked_shape(self) -> tuple[list[int], Attribute]:
        """`4x?xf32`: a static part of at most `MAX_BYTES` bytes."""
        start = self.pos
        dims, element = super().parse_ranked_shape()
        static = math.prod(d for d in dims if d != DYNAMIC_INDEX)
        try:
            size = max(getattr(element, "compile_time_size", 1), 1)  # bytes per element
        except NotImplementedError:  # a type xDSL has no size for (f80): verifiers reject it
            size = 1
        if static * size > MAX_BYTES:
            shape = "x".join("?" if d == DYNAMIC_INDEX else str(d) for d in dims)
            self.raise_error(
                f"shape {shape} of {element} is too large: its static dims alone hold "
                f"{static * size} bytes, more than the 2**63 - 1 that 64-bit sizes allow",
                start,
                self.pos,
            )
        return dims, element
