"""The `tensor` dialect: DVM's meta-ops on builtin tensors with dynamic dims.

Values are builtin `tensor<...>` types whose dims may be `?`. Ops follow
numpy semantics (broadcasting, reductions, batched matmul). Where an op name
exists in upstream MLIR's `tensor` dialect (`dim`, `extract`, `expand_shape`,
`collapse_shape`) we keep upstream's syntax and meaning, with verifiers
whose messages name the op and the offending types.

Verifiers check element types, ranks and the static dims that are known;
dims that are `?` are checked at run time from the guards that the
`symbolic-shapes` pass derives.
"""

from __future__ import annotations

import operator
import re
from abc import ABC
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, cast

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    BFloat16Type,
    BoolAttr,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.dialects.utils import DynamicIndexList, EnumAttribute
from xdsl.dialects.utils.reshape_ops_utils import (
    ContiguousArrayOfIntArray,
    verify_reshape_like_types,
)
from xdsl.ir import Attribute, Dialect, Operation, Region, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, IsTerminator, Pure
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Span
from xdsl.utils.str_enum import StrEnum

from dvm.dialects.derived_ops import derived_op
from dvm.dialects.elementwise import ELEMENTWISE, ElementwiseSpec
from dvm.dialects.expr import ConditionAttr, parse_condition

DYN = DYNAMIC_INDEX
"""How builtin tensor types store a `?` dim."""

# --------------------------------------------------------------------------
# Element types
# --------------------------------------------------------------------------

FLOAT_TYPES = (Float16Type, BFloat16Type, Float32Type, Float64Type)
INTEGER_WIDTHS = (8, 16, 32, 64)
"""The widths of the integer types, signless (`i8`: signed) and unsigned (`ui8`)."""


def is_float(t: Attribute) -> bool:
    return isinstance(t, FLOAT_TYPES)


def is_bool(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 1 and is_signless(t)


def is_signless(t: IntegerType) -> bool:
    return t.signedness.data == Signedness.SIGNLESS


def is_int(t: Attribute) -> bool:
    """An integer type other than i1: signless ones are signed (`i8`), `ui8` unsigned."""
    return (
        isinstance(t, IntegerType)
        and t.width.data in INTEGER_WIDTHS
        and t.signedness.data in (Signedness.SIGNLESS, Signedness.UNSIGNED)
    )


def is_element_type(t: Attribute) -> bool:
    return is_float(t) or is_int(t) or is_bool(t)


ELEMENT_KINDS = {
    "float": is_float,
    "integer": is_int,
    "numeric": lambda t: is_float(t) or is_int(t),
    "bool": is_bool,
    "any": is_element_type,
}
"""Which element types an op accepts, by name; messages quote the name."""


def fmt_shape(shape: Sequence[int]) -> str:
    return "x".join("?" if d == DYN else str(d) for d in shape) or "scalar"


# --------------------------------------------------------------------------
# Shape rules shared by verifiers (static dims only; `?` is checked later)
# --------------------------------------------------------------------------


def broadcast_static(
    op_name: str, shapes: Sequence[Sequence[int]], *, types: Sequence[Attribute] = ()
) -> list[int]:
    """numpy broadcasting of shapes whose dims may be `?` (DYN).

    Returns the broadcast shape: a dim is static when some operand fixes it
    (a static dim other than 1, or all operands agree on 1), else DYN.
    Raises VerifyException when two static dims other than 1 disagree; its
    message shows `types` (the operand types) when given, else the shapes.
    """
    rank = max((len(s) for s in shapes), default=0)
    out: list[int] = []
    for axis in range(rank):
        dims = [s[len(s) - rank + axis] for s in shapes if len(s) - rank + axis >= 0]
        fixed = {d for d in dims if d not in (1, DYN)}
        if len(fixed) > 1:
            shown = ", ".join(str(t) for t in types) or ", ".join(fmt_shape(s) for s in shapes)
            raise VerifyException(
                f"'{op_name}' operands are not broadcast-compatible: "
                f"dims {sorted(fixed)} at result axis {axis} ({shown})"
            )
        if fixed:
            out.append(fixed.pop())
        elif DYN in dims:
            out.append(DYN)
        else:
            out.append(1)
    return out


def check_result_shape(
    op_name: str, expected: Sequence[int], result: TensorType[Attribute]
) -> None:
    """The result's shape must have the expected rank and agree on static dims.

    A `?` on either side agrees with anything here; a static dim claimed for a
    dynamic one becomes a run-time guard of the `symbolic-shapes` pass.
    """
    got = result.get_shape()
    if len(got) != len(expected):
        raise VerifyException(
            f"'{op_name}' result type {result} has rank {len(got)}, "
            f"expected rank {len(expected)} (shape {fmt_shape(expected)})"
        )
    for axis, (g, e) in enumerate(zip(got, expected, strict=True)):
        if g != DYN and e != DYN and g != e:
            raise VerifyException(
                f"'{op_name}' result type {result} has dim {g} at axis {axis}, "
                f"expected {e} (shape {fmt_shape(expected)})"
            )


def check_mixed_shape(op_name: str, what: str, static: Sequence[int], operands: int) -> None:
    """A shape of constants and `index` operands (`[%n, 4]`): one operand per `?`
    (stored as DYN), and no negative constant."""
    if static.count(DYN) != operands:
        raise VerifyException(
            f"'{op_name}' {what} has {static.count(DYN)} dynamic dims but {operands} index operands"
        )
    if any(d < 0 and d != DYN for d in static):
        shown = ", ".join("?" if d == DYN else str(d) for d in static)
        raise VerifyException(f"'{op_name}' {what} [{shown}] has a negative dim")


def check_element(op_name: str, role: str, t: Attribute, kind: str) -> None:
    if not ELEMENT_KINDS[kind](t):
        article = "an" if kind[0] in "aeiou" else "a"
        wanted = "any supported" if kind == "any" else f"{article} {kind}"
        raise VerifyException(f"'{op_name}' {role} has element type {t}, expected {wanted} type")


def tensor_type(value: SSAValue) -> TensorType[Attribute]:
    t = value.type
    assert isinstance(t, TensorType)
    return t


def int_list(attr: ArrayAttr[Attribute], op_name: str, what: str) -> list[int]:
    values: list[int] = []
    for a in attr.data:
        if not isinstance(a, IntegerAttr):
            raise VerifyException(f"'{op_name}' {what} must be a list of integers, got {attr}")
        values.append(a.value.data)
    return values


# --------------------------------------------------------------------------
# Elementwise ops: one class per row of the op table (`elementwise.py`)
# --------------------------------------------------------------------------


class UnaryOp(IRDLOperation, ABC):
    """`tensor.<op> %x : tensor<...>`: result has the operand's type."""

    T: ClassVar = VarConstraint("T", TensorType.constr())
    input = operand_def(T)
    result = result_def(T)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input)"
    SYNTAX: ClassVar = "{name} %x : tensor<...> (the result has the operand's type)"

    SPEC: ClassVar[ElementwiseSpec]
    """The op's row of the op table."""

    def __init__(self, input: SSAValue | Operation):
        value = SSAValue.get(input)
        super().__init__(operands=[value], result_types=[value.type])

    def verify_(self) -> None:
        element = tensor_type(self.input).element_type
        check_element(self.name, "operand", element, self.SPEC.operand_kind)


class PredicateOp(IRDLOperation, ABC):
    """`tensor.isfinite %x : tensor<?xf32> -> tensor<?xi1>`: a test of each element."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    SYNTAX: ClassVar = "{name} %x : tensor<...xT> -> tensor<...xi1>"

    SPEC: ClassVar[ElementwiseSpec]
    """The op's row of the op table."""

    def verify_(self) -> None:
        source, result = tensor_type(self.input), tensor_type(self.result)
        check_element(self.name, "operand", source.element_type, self.SPEC.operand_kind)
        check_element(self.name, "result", result.element_type, "bool")
        check_result_shape(self.name, source.get_shape(), result)


@irdl_op_definition
class ConvertOp(IRDLOperation):
    """Element type conversion (numpy `astype`), shape unchanged."""

    name = "tensor.convert"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def verify_(self) -> None:
        source, result = tensor_type(self.input), tensor_type(self.result)
        check_element(self.name, "operand", source.element_type, "any")
        check_element(self.name, "result", result.element_type, "any")
        check_result_shape(self.name, source.get_shape(), result)


class ElementwiseOp(IRDLOperation, ABC):
    """Shared verifier: operands broadcast to the result's shape."""

    result = result_def(TensorType)
    traits = traits_def(Pure())

    def broadcast_operand_shapes(self) -> list[int]:
        types = [tensor_type(v) for v in self.operands]
        return broadcast_static(self.name, [t.get_shape() for t in types], types=types)


class BinaryOp(ElementwiseOp, ABC):
    """`tensor.<op> %a, %b : (tensor<..>, tensor<..>) -> tensor<..>`, numpy broadcasting."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"
    SYNTAX: ClassVar = "{name} %a, %b : (tensor<...>, tensor<...>) -> tensor<...>"

    SPEC: ClassVar[ElementwiseSpec]
    """The op's row of the op table."""

    def __init__(
        self, lhs: SSAValue | Operation, rhs: SSAValue | Operation, result_type: Attribute
    ):
        super().__init__(operands=[lhs, rhs], result_types=[result_type])

    def verify_(self) -> None:
        a, b, r = tensor_type(self.lhs), tensor_type(self.rhs), tensor_type(self.result)
        check_element(self.name, "lhs", a.element_type, self.SPEC.operand_kind)
        if a.element_type != b.element_type:
            raise VerifyException(
                f"'{self.name}' operands have different element types: {a} and {b}"
            )
        want = a.element_type if self.SPEC.same_type else IntegerType(1)
        if r.element_type != want:
            raise VerifyException(f"'{self.name}' result type {r} must have element type {want}")
        check_result_shape(self.name, self.broadcast_operand_shapes(), r)


def elementwise_class(spec: ElementwiseSpec) -> type[IRDLOperation]:
    """The op class of a row of the op table: `UnaryOp`'s syntax when the result has
    the operand's type, `PredicateOp`'s when it is i1, or `BinaryOp`'s."""
    base = BinaryOp if spec.arity == 2 else UnaryOp if spec.same_type else PredicateOp
    namespace: dict[str, object] = {
        "__module__": __name__,
        "__doc__": f"`tensor.{spec.name}`: {spec.meaning}",
        "__annotations__": {"SPEC": ClassVar[ElementwiseSpec]},
        "name": f"tensor.{spec.name}",
        "SPEC": spec,
    }
    class_name = "".join(part.capitalize() for part in spec.name.split("_")) + "Op"
    op = derived_op(cast(type[IRDLOperation], base), class_name, namespace)
    return with_syntax_in_errors(
        with_plain_verify(op, base.verify_), base.SYNTAX.format(name=op.name)
    )


def with_plain_verify(
    op: type[IRDLOperation],
    own: Callable[[Any], None],
    plain_properties: Callable[[dict[str, Attribute]], bool] = operator.not_,
) -> type[IRDLOperation]:
    """`op`, whose verifier accepts a plain op (its operands and one result ranked
    tensors, as IRDL's definition wants them, and properties that `plain_properties`
    accepts: by default none) without IRDL's generic walk of its definition, then runs
    its own checks (`own`): a program's elementwise ops are most of its ops, and the
    generic walk costs each about 1,200 bytecodes. Any other op takes the generic walk,
    which says what is wrong."""
    generic = op.verify_
    op_def = op.get_irdl_definition()
    arity, same_type = len(op_def.operands), UnaryOp in op.__mro__
    assert not op_def.attributes and not op_def.regions

    def verify_(self: IRDLOperation) -> None:
        operands, results = self.operands, self.results
        plain = (
            len(operands) == arity
            and len(results) == 1
            and plain_properties(self.properties)
            and not self.regions
            and not self.successors
            and all(type(v.type) is TensorType for v in operands)
            and type(results[0].type) is TensorType
            and (not same_type or operands[0].type == results[0].type)
        )
        if not plain:
            return generic(self)
        for trait in op_def.traits:
            trait.verify(self)
        own(self)

    op.verify_ = verify_  # pyright: ignore[reportAttributeAccessIssue]
    return op


_VALUE = r"\s*(%[\w$.-]+)\s*"
_TENSOR = r"\s*(tensor<[0-9?x]*[a-z][a-z0-9]*>)\s*"
PLAIN_FORMS: dict[type[IRDLOperation], re.Pattern[str]] = {
    BinaryOp: re.compile(f"{_VALUE},{_VALUE}:\\s*\\({_TENSOR},{_TENSOR}\\)\\s*->{_TENSOR}"),
    UnaryOp: re.compile(f"{_VALUE}:{_TENSOR}(?!->|\\s)"),
    PredicateOp: re.compile(f"{_VALUE}:{_TENSOR}->{_TENSOR}"),
}
"""Each elementwise syntax written plainly: operands, no attributes, ranked tensor
types. Such an op is read by `parse_plain_elementwise`, from the groups of the match:
the operands' names, then the types."""


def parse_plain_elementwise(
    cls: type[IRDLOperation], parser: Parser, form: re.Match[str]
) -> IRDLOperation:
    """An elementwise op (or a matmul, written as a binary op is) written as its
    `PLAIN_FORMS` entry says (`form`, matched at the parser's position): the same
    operands, types and op as its assembly format's parser makes, read off the match,
    where xDSL would read the text token by token (a program's elementwise ops are most
    of its ops); the parser then goes on after it."""
    source = parser.lexer.input
    arity = 2 if BinaryOp in cls.__mro__ or cls is MatmulOp else 1
    operands = [UnresolvedOperand(Span(*form.span(g), source), 0) for g in range(1, arity + 1)]
    types = [plain_tensor_type(parser, *form.span(g)) for g in range(arity + 1, form.re.groups + 1)]
    parser._resume_from(form.end())  # pyright: ignore[reportPrivateUsage]
    # (a unary op's result has its operand's type; the others' is written last)
    result = types[0] if len(types) == arity else types[-1]
    values = [parser.resolve_operand(o, t) for o, t in zip(operands, types[:arity], strict=True)]
    return cls.create(operands=values, result_types=[result])


def plain_tensor_type(parser: Parser, start: int, end: int) -> Attribute:
    """The type written from `start` to `end` (a plain ranked tensor type), parsed there
    the first time its text is met in the process: types are immutable values, and
    nothing in a plain one depends on the program around it."""
    text = parser.lexer.input.content[start:end]
    known = _plain_tensor_types.get(text)
    if known is None:
        parser._resume_from(start)  # pyright: ignore[reportPrivateUsage]
        known = parser.parse_type()
        if len(_plain_tensor_types) >= MAX_PLAIN_TENSOR_TYPES:
            _plain_tensor_types.clear()
        _plain_tensor_types[text] = known
    return known


MAX_PLAIN_TENSOR_TYPES = 1024
"""The most types `_plain_tensor_types` keeps (it starts again when full)."""
_plain_tensor_types: dict[str, Attribute] = {}
"""Each plain tensor type an elementwise op's plain form wrote, by its text."""


def with_syntax_in_errors(op: type[IRDLOperation], syntax: str) -> type[IRDLOperation]:
    """`op`, whose parse errors say what its syntax is. A type after a unary op's
    operand type (`-> tensor<...>`) is an error here, where the parser would
    otherwise fail later, at the block, with no word of the op. Its `parse_at` reads
    the op written plainly at a position of the text (`dvm.ir`: just after its
    heading), or says None."""
    parse_format = op.parse
    plain = next(form for base, form in PLAIN_FORMS.items() if base in op.__mro__)

    def read(cls: type[IRDLOperation], parser: Parser, form: re.Match[str] | None) -> IRDLOperation:
        """The op at the parser's position: read off `form`, the match of its plain
        form there, or (None) by its assembly format's parser."""
        try:
            if form is not None:
                parsed = parse_plain_elementwise(cls, parser, form)
            else:
                parsed = parse_format(parser)
        except ParseError as error:
            if not error.msg.startswith("Expected"):  # not the syntax: a type, a name
                raise
            raise ParseError(error.span, f"{error.msg}: the syntax is `{syntax}`") from None
        arrow = parser.pos
        # (its bases, not `issubclass`: an ABC's first test of a class that is not its
        # subclass asks each of its subclasses, Python calls for every unary op)
        if UnaryOp in cls.__mro__ and parser.parse_optional_punctuation("->") is not None:
            parser.raise_error(
                f"'{cls.name}' names no result type: the syntax is `{syntax}`", arrow, parser.pos
            )
        return parsed

    def parse(cls: type[IRDLOperation], parser: Parser) -> IRDLOperation:
        return read(cls, parser, plain.match(parser.lexer.input.content, parser.pos))

    def parse_at(cls: type[IRDLOperation], parser: Parser, position: int) -> Operation | None:
        form = plain.match(parser.lexer.input.content, position)
        return None if form is None else read(cls, parser, form)

    op.parse = classmethod(parse)  # pyright: ignore[reportAttributeAccessIssue]
    op.parse_at = classmethod(parse_at)  # pyright: ignore[reportAttributeAccessIssue]
    return op


ELEMENTWISE_OPS: dict[str, type[IRDLOperation]] = {
    spec.name: elementwise_class(spec) for spec in ELEMENTWISE
}
"""Every elementwise op's class, by its name without `tensor.`."""

UNARY_OPS: tuple[type[IRDLOperation], ...] = tuple(
    ELEMENTWISE_OPS[spec.name] for spec in ELEMENTWISE if spec.arity == 1
)
BINARY_OPS: tuple[type[BinaryOp], ...] = tuple(
    op for op in ELEMENTWISE_OPS.values() if issubclass(op, BinaryOp)
)


def binary_op(name: str) -> type[BinaryOp]:
    """The class of the binary op `tensor.<name>`."""
    op = ELEMENTWISE_OPS[name]
    assert issubclass(op, BinaryOp)
    return op


# The ops the compiler builds itself (reductions combine and scale with them).
AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, GtOp = (
    binary_op(name) for name in ("add", "sub", "mul", "div", "pow", "max", "min", "gt")
)


@irdl_op_definition
class SelectOp(ElementwiseOp):
    """`select(cond, a, b)`: numpy `where`, all three operands broadcast."""

    name = "tensor.select"
    condition = operand_def(TensorType)
    true_value = operand_def(TensorType)
    false_value = operand_def(TensorType)
    assembly_format = (
        "$condition `,` $true_value `,` $false_value attr-dict "
        "`:` functional-type(operands, results)"
    )

    def verify_(self) -> None:
        c, a, b = (tensor_type(v) for v in (self.condition, self.true_value, self.false_value))
        r = tensor_type(self.result)
        check_element(self.name, "condition", c.element_type, "bool")
        if not (a.element_type == b.element_type == r.element_type):
            raise VerifyException(
                f"'{self.name}' values and result must have one element type, got {a}, {b} -> {r}"
            )
        check_result_shape(self.name, self.broadcast_operand_shapes(), r)


@irdl_op_definition
class ClampOp(ElementwiseOp):
    """`clamp(x, lo, hi)`: numpy `clip`, `min(max(x, lo), hi)`, all three operands
    broadcast (a rank-0 bound is a scalar one). NaN propagates from any operand; where
    `lo > hi` the result is `hi`."""

    name = "tensor.clamp"
    input = operand_def(TensorType)
    low = operand_def(TensorType)
    high = operand_def(TensorType)
    assembly_format = "$input `,` $low `,` $high attr-dict `:` functional-type(operands, results)"

    def verify_(self) -> None:
        x, lo, hi = (tensor_type(v) for v in (self.input, self.low, self.high))
        r = tensor_type(self.result)
        check_element(self.name, "operand", x.element_type, "numeric")
        if not (x.element_type == lo.element_type == hi.element_type == r.element_type):
            raise VerifyException(
                f"'{self.name}' operand, bounds and result must have one element type, "
                f"got {x}, {lo}, {hi} -> {r}"
            )
        check_result_shape(self.name, self.broadcast_operand_shapes(), r)


# --------------------------------------------------------------------------
# Layout ops
# --------------------------------------------------------------------------


@irdl_op_definition
class BroadcastToOp(IRDLOperation):
    """numpy `broadcast_to`.

    `tensor.broadcast_to %x to [%n, 64] : tensor<64xf32> -> tensor<?x64xf32>`

    The target shape mixes constants and `index` values, as in upstream
    `expand_shape`'s `output_shape`.
    """

    name = "tensor.broadcast_to"
    input = operand_def(TensorType)
    dynamic_shape = var_operand_def(IndexType)
    static_shape = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    custom_directives = (DynamicIndexList,)
    assembly_format = (
        "$input `to` custom<DynamicIndexList>($dynamic_shape, $static_shape) "
        "attr-dict `:` type($input) `->` type($result)"
    )

    def __init__(
        self,
        input: SSAValue | Operation,
        shape: Sequence[int | SSAValue],
        result_type: TensorType[Attribute],
    ):
        static = [d if isinstance(d, int) else DYN for d in shape]
        dynamic = [d for d in shape if isinstance(d, SSAValue)]
        super().__init__(
            operands=[input, dynamic],
            result_types=[result_type],
            properties={"static_shape": DenseArrayBase.from_list(i64, static)},
        )

    def verify_(self) -> None:
        source, result = tensor_type(self.input), tensor_type(self.result)
        static = self.static_shape.get_values()
        check_mixed_shape(self.name, "target shape", static, len(self.dynamic_shape))
        check_result_shape(self.name, static, result)
        if source.element_type != result.element_type:
            raise VerifyException(f"'{self.name}' changes the element type: {source} -> {result}")
        if len(source.get_shape()) > len(static):
            raise VerifyException(
                f"'{self.name}' cannot broadcast {source} to lower rank {len(static)}"
            )
        offset = len(static) - len(source.get_shape())
        for axis, d in enumerate(source.get_shape()):
            target = static[offset + axis]
            if d not in (1, DYN) and target != DYN and d != target:
                raise VerifyException(
                    f"'{self.name}' cannot broadcast dim {d} of {source} "
                    f"to {target} at axis {offset + axis}"
                )


def permutation(op: IRDLOperation, attr: ArrayAttr[Attribute], rank: int) -> list[int]:
    perm = int_list(attr, op.name, "perm")
    if sorted(perm) != list(range(rank)):
        raise VerifyException(f"'{op.name}' perm {perm} is not a permutation of 0..{rank - 1}")
    return perm


@irdl_op_definition
class TransposeOp(IRDLOperation):
    """numpy `transpose(x, perm)`: result dim i is input dim perm[i]."""

    name = "tensor.transpose"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    perm = prop_def(ArrayAttr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(
        self, input: SSAValue | Operation, perm: Sequence[int], result_type: TensorType[Attribute]
    ):
        super().__init__(
            operands=[input],
            result_types=[result_type],
            properties={"perm": ArrayAttr([IntegerAttr(p, i64) for p in perm])},
        )

    @property
    def permutation(self) -> list[int]:
        return int_list(self.perm, self.name, "perm")

    def verify_(self) -> None:
        source, result = tensor_type(self.input), tensor_type(self.result)
        shape = source.get_shape()
        perm = permutation(self, self.perm, len(shape))
        if source.element_type != result.element_type:
            raise VerifyException(f"'{self.name}' changes the element type: {source} -> {result}")
        check_result_shape(self.name, [shape[p] for p in perm], result)


# --------------------------------------------------------------------------
# Reductions
# --------------------------------------------------------------------------


class ReduceOp(IRDLOperation, ABC):
    """`tensor.reduce_<kind> %x {axes = [...], keepdims = false}`.

    Over an empty axis the result is the reduction's identity: 0 for sum,
    1 for prod, -inf/+inf (or the integer type's min/max) for max/min, NaN
    for mean.
    """

    input = operand_def(TensorType)
    result = result_def(TensorType)
    axes = prop_def(ArrayAttr)
    keepdims = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    ELEMENT_KIND: ClassVar[str] = "numeric"

    def __init__(
        self,
        input: SSAValue | Operation,
        axes: Sequence[int],
        keepdims: bool,
        result_type: TensorType[Attribute],
    ):
        props: dict[str, Attribute] = {"axes": ArrayAttr([IntegerAttr(a, i64) for a in axes])}
        if keepdims:
            props["keepdims"] = BoolAttr.from_bool(True)
        super().__init__(operands=[input], result_types=[result_type], properties=props)

    @property
    def reduced_axes(self) -> list[int]:
        return int_list(self.axes, self.name, "axes")

    @property
    def keeps_dims(self) -> bool:
        return self.keepdims is not None and bool(self.keepdims.value.data)

    def verify_(self) -> None:
        source, result = tensor_type(self.input), tensor_type(self.result)
        shape = source.get_shape()
        check_element(self.name, "operand", source.element_type, self.ELEMENT_KIND)
        if source.element_type != result.element_type:
            raise VerifyException(f"'{self.name}' changes the element type: {source} -> {result}")
        axes = self.reduced_axes
        for a in axes:
            if not 0 <= a < len(shape):
                raise VerifyException(
                    f"'{self.name}' axis {a} is out of range for {source} (rank {len(shape)})"
                )
        if len(set(axes)) != len(axes):
            raise VerifyException(f"'{self.name}' axes {axes} repeat an axis")
        if self.keeps_dims:
            expected = [1 if i in axes else d for i, d in enumerate(shape)]
        else:
            expected = [d for i, d in enumerate(shape) if i not in axes]
        check_result_shape(self.name, expected, result)


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    name = "tensor.reduce_sum"


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    name = "tensor.reduce_mean"
    ELEMENT_KIND: ClassVar[str] = "float"


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    name = "tensor.reduce_max"


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    name = "tensor.reduce_min"


@irdl_op_definition
class ReduceProdOp(ReduceOp):
    name = "tensor.reduce_prod"


REDUCE_OPS: tuple[type[ReduceOp], ...] = (
    ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp,
)  # fmt: skip

# --------------------------------------------------------------------------
# Reductions written plainly
# --------------------------------------------------------------------------

BOOLS = (BoolAttr.from_bool(True), BoolAttr.from_bool(False))
"""keepdims's values."""


def reduce_properties_plain(properties: dict[str, Attribute]) -> bool:
    """Whether a reduction's properties are what IRDL's definition wants (its axes an
    array, its keepdims absent or a bool) and nothing else."""
    keepdims = properties.get("keepdims")
    return (
        type(properties.get("axes")) is ArrayAttr
        and len(properties) == 1 + (keepdims is not None)
        and (keepdims is None or keepdims in BOOLS)
    )


PLAIN_REDUCE = re.compile(f"{_VALUE}(\\{{[\\w .,=\\[\\]-]*\\}})?\\s*:{_TENSOR}->{_TENSOR}")
"""A reduction written plainly: its operand, an attribute dictionary of names, numbers,
words and arrays of them (its axes and keepdims), its ranked tensor types."""


def parse_plain_reduce(cls: type[IRDLOperation], parser: Parser, form: re.Match[str]) -> Operation:
    """A reduction written as `PLAIN_REDUCE` says (`form`, matched at the parser's
    position): the op its assembly format's parser makes (the dictionary's axes and
    keepdims its properties, in the order written), read off the match."""
    operand = UnresolvedOperand(Span(*form.span(1), parser.lexer.input), 0)
    attributes: dict[str, Attribute] = {}
    if form.group(2) is not None:
        parser._resume_from(form.start(2))  # pyright: ignore[reportPrivateUsage]
        attributes = parser.parse_optional_attr_dict()
    source, result = (plain_tensor_type(parser, *form.span(g)) for g in (3, 4))
    parser._resume_from(form.end())  # pyright: ignore[reportPrivateUsage]
    names = [k for k in attributes if k in ("axes", "keepdims")]
    properties = {k: attributes.pop(k) for k in names}
    value = parser.resolve_operand(operand, source)
    return cls.create(
        operands=[value], result_types=[result], properties=properties, attributes=attributes
    )


def with_plain_parse(
    op: type[IRDLOperation],
    form: re.Pattern[str],
    read: Callable[[type[IRDLOperation], Parser, re.Match[str]], Operation],
) -> type[IRDLOperation]:
    """`op`, whose parser reads an op written as `form` says with `read`, off the
    match, and any other with its assembly format's parser (which says what is wrong).
    Its `parse_at` reads one written as `form` says at a position of the text, or
    says None."""
    parse_format = op.parse

    def parse(cls: type[IRDLOperation], parser: Parser) -> Operation:
        match = form.match(parser.lexer.input.content, parser.pos)
        return parse_format(parser) if match is None else read(cls, parser, match)

    def parse_at(cls: type[IRDLOperation], parser: Parser, position: int) -> Operation | None:
        match = form.match(parser.lexer.input.content, position)
        return None if match is None else read(cls, parser, match)

    op.parse = classmethod(parse)  # pyright: ignore[reportAttributeAccessIssue]
    op.parse_at = classmethod(parse_at)  # pyright: ignore[reportAttributeAccessIssue]
    return op


for _reduce in REDUCE_OPS:
    with_plain_verify(
        with_plain_parse(_reduce, PLAIN_REDUCE, parse_plain_reduce),
        ReduceOp.verify_,
        reduce_properties_plain,
    )

# --------------------------------------------------------------------------
# Matmul
# --------------------------------------------------------------------------


def matmul_shape(
    op_name: str,
    a: Sequence[int],
    b: Sequence[int],
    transpose_a: bool,
    transpose_b: bool,
    *,
    types: Sequence[Attribute] = (),
) -> list[int]:
    """numpy `matmul` shape rule for operands of rank >= 2 (batch dims broadcast).

    Messages show `types` (lhs and rhs types) when given, else the shapes (printed
    only for a message: xDSL prints a type in some 1,000 bytecodes).
    """
    for role, s in (("lhs", a), ("rhs", b)):
        if len(s) < 2:
            raise VerifyException(f"'{op_name}' {role} must have rank >= 2, got rank {len(s)}")
    m, ka = (a[-1], a[-2]) if transpose_a else (a[-2], a[-1])
    kb, n = (b[-1], b[-2]) if transpose_b else (b[-2], b[-1])
    if DYN not in (ka, kb) and ka != kb:
        lhs, rhs = (str(t) for t in types) if types else (f"shape {fmt_shape(s)}" for s in (a, b))
        raise VerifyException(
            f"'{op_name}' contraction dims differ: lhs {lhs} has {ka}, rhs {rhs} has {kb}"
        )
    batch = broadcast_static(op_name, [a[:-2], b[:-2]], types=types)
    return [*batch, m, n]


@irdl_op_definition
class MatmulOp(IRDLOperation):
    """numpy `a @ b` with batch broadcasting; `transpose_a`/`transpose_b`
    swap the last two dims of an operand first."""

    name = "tensor.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    transpose_a = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    transpose_b = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        lhs: SSAValue | Operation,
        rhs: SSAValue | Operation,
        result_type: Attribute,
        transpose_a: bool = False,
        transpose_b: bool = False,
    ):
        props: dict[str, Attribute] = {}
        if transpose_a:
            props["transpose_a"] = BoolAttr.from_bool(True)
        if transpose_b:
            props["transpose_b"] = BoolAttr.from_bool(True)
        super().__init__(operands=[lhs, rhs], result_types=[result_type], properties=props)

    @property
    def flags(self) -> tuple[bool, bool]:
        """(transpose_a, transpose_b) as Python bools."""
        return (
            self.transpose_a is not None and bool(self.transpose_a.value.data),
            self.transpose_b is not None and bool(self.transpose_b.value.data),
        )

    def verify_(self) -> None:
        check_matmul(self)


def check_matmul(op: MatmulOp) -> None:
    """A matmul's own checks (beyond IRDL's definition): element types and shapes."""
    a, b, r = tensor_type(op.lhs), tensor_type(op.rhs), tensor_type(op.result)
    check_element(op.name, "lhs", a.element_type, "numeric")
    if not (a.element_type == b.element_type == r.element_type):
        raise VerifyException(
            f"'{op.name}' operands and result must have one element type, got {a}, {b} -> {r}"
        )
    expected = matmul_shape(op.name, a.get_shape(), b.get_shape(), *op.flags, types=[a, b])
    check_result_shape(op.name, expected, r)


with_plain_verify(
    with_plain_parse(MatmulOp, PLAIN_FORMS[BinaryOp], parse_plain_elementwise), check_matmul
)


# --------------------------------------------------------------------------
# Upstream ops, with verifiers that name the op and the types
# --------------------------------------------------------------------------


@irdl_op_definition
class DimOp(IRDLOperation):
    """Upstream `tensor.dim %t, %i : tensor<...>`; a constant index must be in range."""

    name = "tensor.dim"
    source = operand_def(TensorType)
    index = operand_def(IndexType)
    result = result_def(IndexType)
    traits = traits_def(Pure())
    assembly_format = "attr-dict $source `,` $index `:` type($source)"

    def __init__(self, source: SSAValue | Operation, index: SSAValue | Operation):
        super().__init__(operands=[source, index], result_types=[IndexType()])

    @property
    def constant_index(self) -> int | None:
        """The dim's index when it is an `arith.constant`, else None."""
        return constant_index(self.index)

    def verify_(self) -> None:
        source = tensor_type(self.source)
        rank = len(source.get_shape())
        index = self.constant_index
        if rank == 0:
            raise VerifyException(f"'{self.name}' cannot take a dim of rank-0 {source}")
        if index is not None and not 0 <= index < rank:
            raise VerifyException(
                f"'{self.name}' index {index} is out of range for {source} (rank {rank})"
            )


@irdl_op_definition
class ExtractOp(IRDLOperation):
    """Upstream `tensor.extract %t[%i, ...] : tensor<...>`: one index per dim."""

    name = "tensor.extract"
    ELEMENT: ClassVar = VarConstraint("ELEMENT", AnyAttr())
    tensor = operand_def(TensorType.constr(ELEMENT))
    indices = var_operand_def(IndexType)
    result = result_def(ELEMENT)
    traits = traits_def(Pure())
    assembly_format = "$tensor `[` $indices `]` attr-dict `:` type($tensor)"

    def __init__(self, tensor: SSAValue | Operation, indices: Sequence[SSAValue]):
        value = SSAValue.get(tensor)
        element = tensor_type(value).element_type
        super().__init__(operands=[value, indices], result_types=[element])

    def verify_(self) -> None:
        source = tensor_type(self.tensor)
        shape = source.get_shape()
        if len(self.indices) != len(shape):
            raise VerifyException(
                f"'{self.name}' takes {len(shape)} indices for {source}, got {len(self.indices)}"
            )
        for axis, (value, size) in enumerate(zip(self.indices, shape, strict=True)):
            index = constant_index(value)
            if index is not None and (index < 0 or (size != DYN and index >= size)):
                raise VerifyException(
                    f"'{self.name}' index {index} is out of range for axis {axis} of {source}"
                )


PLAIN_EXTRACT = re.compile(
    f"{_VALUE}\\[\\s*((?:%[\\w$.-]+(?:\\s*,\\s*%[\\w$.-]+)*)?)\\s*\\]\\s*:{_TENSOR}"
)
"""An extract written plainly: its tensor, its indices' names, no attributes, the
tensor's ranked type."""
_INDEX_NAME = re.compile(r"%[\w$.-]+")


def parse_plain_extract(cls: type[IRDLOperation], parser: Parser, form: re.Match[str]) -> Operation:
    """An extract written as `PLAIN_EXTRACT` says (`form`, matched at the parser's
    position): the op its assembly format's parser makes, read off the match (that
    parser costs some 4,000 bytecodes; a branch's condition is an extract)."""
    source = parser.lexer.input
    tensor = UnresolvedOperand(Span(*form.span(1), source), 0)
    names = _INDEX_NAME.finditer(form.string, *form.span(2))
    indices = [UnresolvedOperand(Span(*m.span(), source), 0) for m in names]
    type_ = plain_tensor_type(parser, *form.span(3))
    parser._resume_from(form.end())  # pyright: ignore[reportPrivateUsage]
    value = parser.resolve_operand(tensor, type_)
    values = [parser.resolve_operand(i, IndexType()) for i in indices]
    assert isinstance(type_, TensorType)
    return cls.create(operands=[value, *values], result_types=[type_.element_type])


with_plain_parse(ExtractOp, PLAIN_EXTRACT, parse_plain_extract)


def constant_index(value: SSAValue) -> int | None:
    """An `index` operand's value when an `arith.constant` gives it, else None."""
    owner = value.owner
    if isinstance(owner, Operation):
        attr = owner.properties.get("value")
        if isinstance(attr, IntegerAttr):
            return attr.value.data
    return None


def check_reshape(
    op: IRDLOperation,
    collapsed: TensorType[Attribute],
    expanded: TensorType[Attribute],
    reassociation: ArrayAttr[ArrayAttr[IntegerAttr]],
) -> None:
    """Upstream's reshape rules, with messages that name the op.

    An empty reassociation reshapes between rank 0 and a shape of static 1s
    (upstream's rule: `tensor<1x1xf32>` into `tensor<f32>` with `[]`)."""
    if collapsed.element_type != expanded.element_type:
        raise VerifyException(f"'{op.name}' changes the element type: {expanded} vs {collapsed}")
    if not reassociation.data and not collapsed.get_shape():
        if any(d != 1 for d in expanded.get_shape()):
            raise VerifyException(
                f"'{op.name}' with an empty reassociation needs every dim of {expanded} "
                f"to be a static 1 (it reshapes to or from rank 0)"
            )
        return
    try:
        verify_reshape_like_types(
            collapsed_type=collapsed, expanded_type=expanded, reassociation=reassociation
        )
    except VerifyException as e:
        raise VerifyException(f"'{op.name}' {e}") from None


@irdl_op_definition
class ExpandShapeOp(IRDLOperation):
    """Upstream `tensor.expand_shape %x [[0], [1, 2]] output_shape [%a, %b, 4]`."""

    name = "tensor.expand_shape"
    src = operand_def(TensorType)
    dynamic_output_shape = var_operand_def(IndexType)
    reassociation = prop_def(ContiguousArrayOfIntArray())
    static_output_shape = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)
    traits = traits_def(Pure())
    custom_directives = (DynamicIndexList,)
    assembly_format = (
        "$src $reassociation `output_shape` "
        "custom<DynamicIndexList>($dynamic_output_shape, $static_output_shape) "
        "attr-dict `:` type($src) `into` type($result)"
    )

    def __init__(
        self,
        src: SSAValue | Operation,
        reassociation: Sequence[Sequence[int]],
        output_shape: Sequence[int | SSAValue],
        result_type: TensorType[Attribute],
    ):
        static = [d if isinstance(d, int) else DYN for d in output_shape]
        dynamic = [d for d in output_shape if isinstance(d, SSAValue)]
        super().__init__(
            operands=[src, dynamic],
            result_types=[result_type],
            properties={
                "reassociation": reassociation_attr(reassociation),
                "static_output_shape": DenseArrayBase.from_list(i64, static),
            },
        )

    @property
    def groups(self) -> list[list[int]]:
        """The reassociation as lists of dims."""
        return reassociation_groups(self.reassociation)

    def verify_(self) -> None:
        result = tensor_type(self.result)
        check_reshape(self, tensor_type(self.src), result, self.reassociation)
        static = self.static_output_shape.get_values()
        check_mixed_shape(self.name, "output_shape", static, len(self.dynamic_output_shape))
        check_result_shape(self.name, static, result)


@irdl_op_definition
class CollapseShapeOp(IRDLOperation):
    """Upstream `tensor.collapse_shape %x [[0], [1, 2]] : tensor<..> into tensor<..>`."""

    name = "tensor.collapse_shape"
    src = operand_def(TensorType)
    reassociation = prop_def(ContiguousArrayOfIntArray())
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$src $reassociation attr-dict `:` type($src) `into` type($result)"

    def __init__(
        self,
        src: SSAValue | Operation,
        reassociation: Sequence[Sequence[int]],
        result_type: TensorType[Attribute],
    ):
        super().__init__(
            operands=[src],
            result_types=[result_type],
            properties={"reassociation": reassociation_attr(reassociation)},
        )

    @property
    def groups(self) -> list[list[int]]:
        """The reassociation as lists of dims."""
        return reassociation_groups(self.reassociation)

    def verify_(self) -> None:
        check_reshape(self, tensor_type(self.result), tensor_type(self.src), self.reassociation)


def reassociation_groups(attr: ArrayAttr[ArrayAttr[IntegerAttr]]) -> list[list[int]]:
    return [[i.value.data for i in g.data] for g in attr.data]


def reassociation_attr(groups: Sequence[Sequence[int]]) -> ArrayAttr[ArrayAttr[IntegerAttr]]:
    return ArrayAttr([ArrayAttr([IntegerAttr(i, i64) for i in g]) for g in groups])


# --------------------------------------------------------------------------
# Kernels: what the `fuse` and `stack` passes build
# --------------------------------------------------------------------------


class KernelKind(StrEnum):
    """DVM's kernel kinds: vector ops only; a matmul; a matmul with a vector epilogue
    (cube and mix kernels run on the cube cores)."""

    VECTOR = "vector"
    CUBE = "cube"
    MIX = "mix"


KERNEL_KINDS = tuple(kind.value for kind in KernelKind)
CUBE_OPS = ("tensor.matmul", "tensor.grouped_matmul")
"""The ops a cube or mix kernel holds one of (by name: the grouped matmul's module
builds on this one)."""


@irdl_attr_definition
class KernelKindAttr(EnumAttribute[KernelKind], SpacedOpaqueSyntaxAttribute):
    """A kernel's kind: `vector`, `cube` or `mix` in the ops' syntax, `#tensor<kind
    vector>` in the generic form."""

    name = "tensor.kind"

    @staticmethod
    def of(kind: KernelKind | str) -> KernelKindAttr:
        return KernelKindAttr(KernelKind(kind))


def parse_kernel_kind(parser: AttrParser) -> KernelKindAttr:
    return KernelKindAttr.of(parse_keyword(parser, KERNEL_KINDS, "kernel kind"))


STACK_MODES = ("parallel", "sequence")
"""How `tensor.stack` launches its kernels: side by side on different cores,
or one after another in a single launch."""


def parse_keyword(parser: AttrParser, allowed: Sequence[str], what: str) -> str:
    pos = parser.pos
    word = parser.parse_identifier(context_msg=f" as the {what}")
    if word not in allowed:
        parser.raise_error(f"expected {what} to be one of {', '.join(allowed)}, got '{word}'", pos)
    return word


def print_results_and_body(printer: Printer, op: IRDLOperation, regions: Sequence[Region]) -> None:
    printer.print_op_attributes(op.attributes)
    if op.results:
        printer.print_string(" -> (")
        printer.print_list(op.result_types, printer.print_attribute)
        printer.print_string(")")
    elif not op.attributes:  # (else the region's `{` would read as an attribute dictionary)
        printer.print_string(" {}")
    for i, region in enumerate(regions):
        printer.print_string(" else " if i else " ")
        printer.print_region(region)


def parse_results_and_bodies(
    parser: Parser, count: int, args: Sequence[Parser.Argument] = ()
) -> tuple[dict[str, Attribute], list[Attribute], list[Region]]:
    attrs = parser.parse_optional_attr_dict()
    result_types: list[Attribute] = []
    if parser.parse_optional_punctuation("->"):
        result_types = parser.parse_comma_separated_list(Parser.Delimiter.PAREN, parser.parse_type)
    regions = [parser.parse_region(args)]
    for _ in range(count - 1):
        parser.parse_keyword("else")
        regions.append(parser.parse_region())
    return attrs, result_types, regions


class KernelBodyOp(IRDLOperation, ABC):
    """Shared checks: the body yields values of the op's result types."""

    def check_yield(self, region: Region) -> None:
        last = region.block.last_op
        if not isinstance(last, YieldOp):
            raise VerifyException(f"'{self.name}' body must end with tensor.yield")
        got = [v.type for v in last.values]
        if got != list(self.result_types):
            raise VerifyException(
                f"'{self.name}' body yields ({', '.join(map(str, got))}) but the op "
                f"returns ({', '.join(map(str, self.result_types))})"
            )


@irdl_op_definition
class FusionOp(KernelBodyOp):
    """A fused kernel, isolated from above: the body's arguments are the
    kernel's inputs, its `tensor.yield` gives the kernel's outputs.

        %y = tensor.fusion vector (%x, %w) : (tensor<?x?xf32>, tensor<?xf32>) -> (tensor<?x?xf32>) {
        ^0(%a: tensor<?x?xf32>, %b: tensor<?xf32>):
          ...
          tensor.yield %r : tensor<?x?xf32>
        }
    """

    name = "tensor.fusion"
    inputs = var_operand_def(TensorType | IndexType)
    """Tensors, and the `index` values that layout ops inside need."""
    outputs = var_result_def(TensorType)
    kind = prop_def(KernelKindAttr)
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), Pure())

    def __init__(
        self,
        kind: KernelKind | str,
        inputs: Sequence[SSAValue],
        output_types: Sequence[Attribute],
        body: Region,
        attributes: dict[str, Attribute] | None = None,
    ):
        # made of its parts as given, as `Operation.create` makes an op (`tile.init_flat`
        # says why): fuse makes one for each kernel
        Operation.__init__(
            self,
            operands=inputs,
            result_types=output_types,
            properties={"kind": KernelKindAttr.of(kind)},
            attributes=attributes or {},
            regions=[body],
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.kind.data.value} (")
        printer.print_list(self.inputs, printer.print_operand)
        printer.print_string(")")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_function_type(self.inputs.types, self.outputs.types)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=True)

    @classmethod
    def parse(cls, parser: Parser) -> FusionOp:
        kind = parse_kernel_kind(parser).data
        operands = parser.parse_comma_separated_list(
            Parser.Delimiter.PAREN, parser.parse_unresolved_operand
        )
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        pos = parser.pos
        function_type = parser.parse_function_type()
        inputs = parser.resolve_operands(operands, function_type.inputs.data, pos)
        body = parser.parse_region()
        return cls(kind, inputs, function_type.outputs.data, body, attrs)

    def verify_(self) -> None:
        block = self.body.block
        if [a.type for a in block.args] != list(self.inputs.types):
            raise VerifyException(f"'{self.name}' body arguments must match the input types")
        self.check_yield(self.body)
        has_matmul = any(op.name in CUBE_OPS for op in block.ops)
        if has_matmul != (self.kind.data in (KernelKind.CUBE, KernelKind.MIX)):
            raise VerifyException(
                f"'{self.name}' of kind {self.kind.data.value} "
                + ("must not contain" if has_matmul else "must contain")
                + " a tensor.matmul or tensor.grouped_matmul"
            )


@irdl_op_definition
class ChoiceOp(KernelBodyOp):
    """A guarded choice between two equivalent ways to compute the same values,
    resolved from the real shapes when the program is specialized (DVM's
    streaming fusion). The first region is taken when every condition holds.

        %r:2 = tensor.choice [x_0 == y_0] -> (tensor<?xf32>, tensor<?xf32>) {
          ... one fused kernel ...
        } else {
          ... two kernels ...
        }
    """

    name = "tensor.choice"
    conditions = prop_def(ArrayAttr[ConditionAttr])
    outputs = var_result_def(TensorType)
    then_body = region_def("single_block")
    else_body = region_def("single_block")

    def __init__(
        self,
        conditions: Sequence[ConditionAttr],
        output_types: Sequence[Attribute],
        then_body: Region,
        else_body: Region,
    ):
        super().__init__(
            result_types=[output_types],
            properties={"conditions": ArrayAttr(conditions)},
            regions=[then_body, else_body],
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" [" + ", ".join(c.text for c in self.conditions.data) + "]")
        print_results_and_body(printer, self, [self.then_body, self.else_body])

    @classmethod
    def parse(cls, parser: Parser) -> ChoiceOp:
        conditions = parser.parse_comma_separated_list(
            Parser.Delimiter.SQUARE, lambda: parse_condition(parser), " as the list of conditions"
        )
        attrs, result_types, (then_body, else_body) = parse_results_and_bodies(parser, 2)
        op = cls(conditions, result_types, then_body, else_body)
        op.attributes.update(attrs)
        return op

    def verify_(self) -> None:
        self.check_yield(self.then_body)
        self.check_yield(self.else_body)


@irdl_op_definition
class StackOp(KernelBodyOp):
    """Independent kernels launched together (DVM's stacking):
    `parallel` spreads them over the cores, `sequence` runs them one after
    another in one launch. The body holds only kernels and a yield."""

    name = "tensor.stack"
    mode = prop_def(StringAttr)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")

    def __init__(self, mode: str, output_types: Sequence[Attribute], body: Region):
        super().__init__(
            result_types=[output_types], properties={"mode": StringAttr(mode)}, regions=[body]
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.mode.data}")
        print_results_and_body(printer, self, [self.body])

    @classmethod
    def parse(cls, parser: Parser) -> StackOp:
        mode = parse_keyword(parser, STACK_MODES, "stack mode")
        attrs, result_types, (body,) = parse_results_and_bodies(parser, 1)
        op = cls(mode, result_types, body)
        op.attributes.update(attrs)
        return op

    def verify_(self) -> None:
        if self.mode.data not in STACK_MODES:
            raise VerifyException(f"'{self.name}' mode must be one of {STACK_MODES}")
        self.check_yield(self.body)
        for op in self.body.block.ops:
            if not isinstance(op, FusionOp | YieldOp) and op.name != "tile.launch":
                raise VerifyException(f"'{self.name}' body may hold only kernels, found {op.name}")


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends the body of `tensor.fusion`, `tensor.choice` and `tensor.stack` (tensors),
    and of `tensor.pad` (its padding value, a scalar)."""

    name = "tensor.yield"
    values = var_operand_def()
    traits = traits_def(IsTerminator(), Pure())
    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, *values: SSAValue):
        Operation.__init__(self, operands=values)  # (as `FusionOp` is made)

    def verify_(self) -> None:
        parent = self.parent_op()
        scalar = parent is not None and parent.name == "tensor.pad"
        if not scalar and not isinstance(parent, FusionOp | ChoiceOp | StackOp):
            raise VerifyException(
                "'tensor.yield' expects parent op to be one of 'tensor.fusion', "
                "'tensor.choice', 'tensor.stack', 'tensor.pad'"
            )
        if not scalar and not all(isinstance(v.type, TensorType) for v in self.values):
            raise VerifyException("'tensor.yield' of a kernel yields tensors")


KERNEL_OPS = (FusionOp, ChoiceOp, StackOp, YieldOp)


LAYOUT_OPS = (BroadcastToOp, TransposeOp, DimOp, ExtractOp, ExpandShapeOp, CollapseShapeOp)

Tensor = Dialect(
    "tensor",
    [
        *UNARY_OPS,
        ConvertOp,
        *BINARY_OPS,
        SelectOp,
        ClampOp,
        *LAYOUT_OPS,
        *REDUCE_OPS,
        MatmulOp,
        *KERNEL_OPS,
    ],
    [KernelKindAttr],
)
