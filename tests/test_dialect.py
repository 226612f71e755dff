"""The tensor dialect from Python: builders, verifiers, printing, and the shared examples.

The `.mlir` tests in `tests/filecheck` cover the textual syntax and every
verifier message; here we check what Python users of the dialect rely on:
op builders make ops that verify and print as expected, the shape helpers
agree with numpy, the element-type rules per op, and that every program in
`shared/examples` parses, verifies and round-trips through both printed forms.
"""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from conftest import EXAMPLES_DIR
from xdsl.dialects import func
from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    Float80Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

import dvm
from dvm.dialects import tensor
from dvm.ir import DvmParseError, make_context

DYN = DYNAMIC_INDEX
f16, f32, f64 = Float16Type(), Float32Type(), Float64Type()
i1, i8, i16, i32, i64 = (IntegerType(w) for w in (1, 8, 16, 32, 64))


def t(*shape: int, element: Attribute = f32) -> TensorType[Attribute]:
    """`t(DYN, 4)` is `tensor<?x4xf32>`."""
    return TensorType(element, shape)


def args(*types: Attribute) -> list[SSAValue]:
    """Block arguments of the given types, to build ops on."""
    return list(Block(arg_types=types).args)


def printed(op: Operation, generic: bool = False) -> str:
    stream = StringIO()
    Printer(stream=stream, print_generic_format=generic).print_op(op)
    return stream.getvalue()


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def verify_error(op: Operation) -> str:
    """The message of the verifier error `op` must raise."""
    with pytest.raises(VerifyException) as info:
        op.verify()
    return str(info.value)


# --------------------------------------------------------------------------
# The shared example programs
# --------------------------------------------------------------------------

EXAMPLE_NAMES = (
    sorted(p.name for p in EXAMPLES_DIR.glob("*.mlir")) if EXAMPLES_DIR.is_dir() else ["-"]
)


def test_examples_exist(examples_dir: Path) -> None:
    assert len(list(examples_dir.glob("*.mlir"))) >= 10


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_round_trips(examples_dir: Path, name: str) -> None:
    module = parse((examples_dir / name).read_text())
    custom = printed(module)
    assert printed(parse(custom)) == custom, "custom print -> parse -> print changed the text"
    generic = printed(module, generic=True)
    assert printed(parse(generic)) == custom, "generic print -> parse -> custom print differs"


def test_a_repeated_type_is_read_once() -> None:
    """The parser reads a plain ranked type's text once per process (xDSL reads it token
    by token, most of a parse): every op of a program, and of the next one, that writes
    `tensor<?x3xf32>` gets the same type; types it does not know are read as before."""
    text = """func.func @f(%x: tensor<?x3xf32>, %y: tensor<?x3xf32>) -> tensor<?x3xf32> {
      %s = tensor.add %x, %y : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
      %t = tensor.add %s, %y :  (tensor<?x3xf32>,tensor<?x3xf32>) ->tensor<?x3xf32>
      func.return %t : tensor<?x3xf32>
    }"""
    first, second = (dvm.parse(text).body.block.first_op for _ in range(2))
    assert isinstance(first, func.FuncOp) and isinstance(second, func.FuncOp)
    types = [
        v.type for f in (first, second) for op in f.walk() for v in (*op.operands, *op.results)
    ]
    assert types[0] == TensorType(Float32Type(), [DYNAMIC_INDEX, 3])
    assert all(t is types[0] for t in types)
    assert printed(dvm.parse(text)) == printed(parse(text))


def test_repeated_dictionaries_and_constants_are_read_once() -> None:
    """A plain attribute dictionary and a short `dense` literal are read once per text in
    the process, as types are, and elementwise ops written plainly skip their format's
    generic steps: each op still gets all of its attributes, parse after parse, and the
    program prints as xDSL's own parser reads it."""
    text = """func.func @f(%x: tensor<?x3xf32>) -> tensor<?x1xi1> {
      %c = arith.constant dense<2.5> : tensor<f32>
      %a = tensor.reduce_sum %x {axes = [1], keepdims = true} : tensor<?x3xf32> -> tensor<?x1xf32>
      %b = tensor.reduce_max %x {axes = [1], keepdims = true} : tensor<?x3xf32> -> tensor<?x1xf32>
      %d = tensor.mul %a, %c : (tensor<?x1xf32>, tensor<f32>) -> tensor<?x1xf32>
      %e = tensor.sub %d, %b : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
      %n = tensor.neg %e : tensor<?x1xf32>
      %f = tensor.isfinite %n : tensor<?x1xf32> -> tensor<?x1xi1>
      func.return %f : tensor<?x1xi1>
    }"""
    modules = [dvm.parse(text) for _ in range(3)]
    for module in modules:
        reductions = [op for op in module.walk() if op.name.startswith("tensor.reduce_")]
        assert [sorted(op.properties) for op in reductions] == [["axes", "keepdims"]] * 2
    constants = [op for m in modules for op in m.walk() if isinstance(op, ConstantOp)]
    assert all(c.value is constants[0].value for c in constants)
    assert {printed(m) for m in modules} == {printed(parse(text))}


def test_a_plain_op_is_read_where_its_heading_ends() -> None:
    """An op written plainly is read from the end of its heading (`%d = tensor.mul`),
    past white space as the lexer skips it: after a tab or a line break, and after a
    comment (which the lexer reads), each op is the one xDSL's own parser reads; a
    space the lexer refuses there is refused where it stands."""
    ops = """
      %d = tensor.mul\t%x, %x : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
      %e = tensor.reduce_sum
        %d {axes = [1]} : tensor<?x3xf32> -> tensor<?xf32>
      %n = tensor.neg // the sum's negation
        %e : tensor<?xf32>"""
    text = f"""func.func @f(%x: tensor<?x3xf32>) -> tensor<?xf32> {{{ops}
      func.return %n : tensor<?xf32>
    }}"""
    assert printed(dvm.parse(text)) == printed(parse(text))
    with pytest.raises(DvmParseError, match="Unexpected character") as refused:
        dvm.parse(text.replace("tensor.mul\t", "tensor.mul \u00a0"))
    assert ":2:23: " in str(refused.value)


# --------------------------------------------------------------------------
# The op set is the design's
# --------------------------------------------------------------------------

DESIGN_OPS = """
    neg abs exp log sqrt rsqrt reciprocal tanh sigmoid erf floor ceil round trunc
    logical_not isfinite add sub mul div pow max min eq ne lt le gt ge logical_and
    logical_or select convert broadcast_to transpose expand_shape collapse_shape dim
    extract reduce_sum reduce_mean reduce_max reduce_min reduce_prod matmul
""".split()  # noqa: SIM905 (the design lists them like this)


def test_every_op_of_the_design_is_in_the_dialect() -> None:
    names = {op.name for op in tensor.Tensor.operations}
    assert {f"tensor.{n}" for n in DESIGN_OPS} <= names


# --------------------------------------------------------------------------
# Element types per op
# --------------------------------------------------------------------------

FLOATS = (f16, BFloat16Type(), f32, f64)
UNSIGNED = tuple(IntegerType(w, Signedness.UNSIGNED) for w in (8, 16, 32, 64))
INTS = (i8, i16, i32, i64, *UNSIGNED)
UNSUPPORTED = (IntegerType(16, Signedness.SIGNED), IntegerType(4), Float80Type())


SAME_TYPE_UNARY = [op for op in tensor.UNARY_OPS if issubclass(op, tensor.UnaryOp)]
"""The unary ops whose result has the operand's type (not `isfinite`)."""


@pytest.mark.parametrize("op", SAME_TYPE_UNARY, ids=lambda op: op.name)
def test_unary_element_types(op: type[tensor.UnaryOp]) -> None:
    kind = op.SPEC.operand_kind
    accepted = {"float": FLOATS, "integer": INTS, "numeric": FLOATS + INTS, "bool": (i1,)}[kind]
    for element in (*FLOATS, *INTS, i1, *UNSUPPORTED):
        (x,) = args(t(DYN, 3, element=element))
        built = op(x)
        assert built.result.type == x.type
        if element in accepted:
            built.verify()
        else:
            message = verify_error(built)
            assert message.startswith(f"'{op.name}' operand has element type {element}")


@pytest.mark.parametrize("op", tensor.BINARY_OPS, ids=lambda op: op.name)
def test_binary_element_types(op: type[tensor.BinaryOp]) -> None:
    accepted = {
        "float": FLOATS,
        "integer": INTS,
        "numeric": FLOATS + INTS,
        "bool": (i1,),
        "any": (*FLOATS, *INTS, i1),
    }[op.SPEC.operand_kind]
    for element in (*FLOATS, *INTS, i1):
        a, b = args(t(4, 1, element=element), t(5, element=element))
        result = t(4, 5, element=element if op.SPEC.same_type else i1)
        built = op(a, b, result)
        if element in accepted:
            built.verify()
        else:
            assert f"lhs has element type {element}" in verify_error(built)


def test_comparisons_return_bool() -> None:
    a, b = args(t(4), t(4))
    assert verify_error(tensor.binary_op("lt")(a, b, t(4))) == (
        "'tensor.lt' result type tensor<4xf32> must have element type i1"
    )


def test_no_implicit_promotion() -> None:
    a, b = args(t(4), t(4, element=f64))
    assert "operands have different element types" in verify_error(tensor.AddOp(a, b, t(4)))


def test_convert_accepts_every_element_type_pair() -> None:
    supported = (*FLOATS, *INTS, i1)
    for source in supported:
        for target in supported:
            (x,) = args(t(DYN, 2, element=source))
            tensor.ConvertOp(operands=[x], result_types=[t(DYN, 2, element=target)]).verify()


# --------------------------------------------------------------------------
# Shape rules agree with numpy on static shapes; `?` is left to run time
# --------------------------------------------------------------------------

BROADCASTS = [
    ((4, 3), (3,)),
    ((4, 1), (1, 5)),
    ((), (2, 3)),
    ((2, 1, 3), (4, 1)),
    ((1,), ()),
    ((0, 3), (1, 3)),
]


@pytest.mark.parametrize(("a", "b"), BROADCASTS)
def test_broadcast_static_agrees_with_numpy(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    expected = list(np.broadcast_shapes(a, b))
    assert tensor.broadcast_static("op", [a, b]) == expected


def test_broadcast_static_with_dynamic_dims() -> None:
    assert tensor.broadcast_static("op", [(DYN, 3), (3,)]) == [DYN, 3]
    assert tensor.broadcast_static("op", [(DYN, 1), (1, 5)]) == [DYN, 5]
    assert tensor.broadcast_static("op", [(DYN,), (7,)]) == [7]  # `?` must then be 1 or 7
    assert tensor.broadcast_static("op", [(DYN,), (DYN,)]) == [DYN]


def test_broadcast_static_rejects_static_mismatch() -> None:
    with pytest.raises(VerifyException, match=r"dims \[4, 5\] at result axis 0 \(4x3, 5x3\)"):
        tensor.broadcast_static("'tensor.add'", [(4, 3), (5, 3)])


@pytest.mark.parametrize(
    ("a", "b", "ta", "tb"),
    [
        ((4, 5), (5, 7), False, False),
        ((2, 1, 4, 5), (3, 5, 7), False, False),
        ((5, 4), (5, 7), True, False),
        ((4, 5), (7, 5), False, True),
        ((3, 5, 4), (7, 5), True, True),
    ],
)
def test_matmul_shape_agrees_with_numpy(
    a: tuple[int, ...], b: tuple[int, ...], ta: bool, tb: bool
) -> None:
    x, y = np.zeros(a), np.zeros(b)
    x = np.swapaxes(x, -1, -2) if ta else x
    y = np.swapaxes(y, -1, -2) if tb else y
    assert tensor.matmul_shape("op", a, b, ta, tb) == list((x @ y).shape)


def test_dynamic_dims_are_not_checked_statically() -> None:
    # A `?` agrees with any static dim: the symbolic-shapes pass guards it.
    a, b, w = args(t(DYN, 3), t(4, DYN), t(DYN, 8))
    tensor.AddOp(a, b, t(4, 3)).verify()
    tensor.MatmulOp(a, w, t(DYN, 8)).verify()  # the contraction dims 3 and ? agree for now


# --------------------------------------------------------------------------
# Builders: the ops passes construct verify and print as users write them
# --------------------------------------------------------------------------


def test_reduce_builder_and_accessors() -> None:
    (x,) = args(t(DYN, DYN, 128))
    op = tensor.ReduceMaxOp(x, [2], True, t(DYN, DYN, 1))
    op.verify()
    assert op.reduced_axes == [2] and op.keeps_dims
    assert "{axes = [2 : i64], keepdims = true}" in printed(op)
    plain = tensor.ReduceSumOp(x, [0, 2], False, t(DYN))
    plain.verify()
    assert not plain.keeps_dims and "keepdims" not in printed(plain)


def test_reduce_rejects_bad_axes() -> None:
    (x,) = args(t(4, 3))
    assert "axis 2 is out of range" in verify_error(tensor.ReduceSumOp(x, [2], False, t(4)))
    assert "repeat an axis" in verify_error(tensor.ReduceSumOp(x, [1, 1], False, t(4)))


def test_matmul_builder_and_flags() -> None:
    a, b = args(t(8, 4), t(5, 8))
    op = tensor.MatmulOp(a, b, t(4, 5), transpose_a=True, transpose_b=True)
    op.verify()
    assert op.flags == (True, True)
    assert "{transpose_a = true, transpose_b = true}" in printed(op)
    assert tensor.MatmulOp(a, a, t(8, 8), transpose_b=True).flags == (False, True)


def test_transpose_builder() -> None:
    (x,) = args(t(DYN, 4, 16))
    op = tensor.TransposeOp(x, [1, 2, 0], t(4, 16, DYN))
    op.verify()
    assert op.permutation == [1, 2, 0]
    assert "not a permutation" in verify_error(tensor.TransposeOp(x, [0, 0, 1], t(DYN, DYN, 4)))


def test_broadcast_to_builder_mixes_values_and_constants() -> None:
    x, n = args(t(64), IndexType())
    op = tensor.BroadcastToOp(x, [n, 64], t(DYN, 64))
    op.verify()
    assert (
        printed(op)
        == "%0 = tensor.broadcast_to %1 to [%2, 64] : tensor<64xf32> -> tensor<?x64xf32>"
    )


def test_reshape_builders() -> None:
    x, n = args(t(DYN, 12), IndexType())
    expand = tensor.ExpandShapeOp(x, [[0], [1, 2]], [n, 3, 4], t(DYN, 3, 4))
    expand.verify()
    collapse = tensor.CollapseShapeOp(expand.result, [[0], [1, 2]], t(DYN, 12))
    collapse.verify()
    assert tensor.reassociation_groups(collapse.reassociation) == [[0], [1, 2]]
    wrong = tensor.CollapseShapeOp(expand.result, [[0], [1, 2]], t(DYN, 11))
    assert "expected dimension 1 of collapsed type to be static value of 12" in verify_error(wrong)


def test_dim_checks_a_constant_index() -> None:
    (x,) = args(t(4, 3))
    index = ConstantOp(IntegerAttr(2, IndexType()))
    op = tensor.DimOp(x, index)
    assert op.constant_index == 2
    assert verify_error(op) == "'tensor.dim' index 2 is out of range for tensor<4x3xf32> (rank 2)"
    (y,) = args(t(element=f32))
    (i,) = args(IndexType())
    assert (
        verify_error(tensor.DimOp(y, i)) == "'tensor.dim' cannot take a dim of rank-0 tensor<f32>"
    )


def test_extract_builder() -> None:
    p, m, i = args(t(element=i1), t(DYN, DYN), IndexType())
    scalar = tensor.ExtractOp(p, [])
    scalar.verify()
    assert scalar.result.type == i1
    assert printed(scalar) == "%0 = tensor.extract %1[] : tensor<i1>"
    assert "takes 2 indices" in verify_error(tensor.ExtractOp(m, [i]))


def test_binary_builder_prints_the_functional_type() -> None:
    x, b = args(t(DYN, 4), t(4))
    assert printed(tensor.AddOp(x, b, t(DYN, 4))) == (
        "%0 = tensor.add %1, %2 : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>"
    )
