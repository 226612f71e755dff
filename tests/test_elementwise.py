"""Every elementwise op of the op table, at every level, against numpy.

For each row of `dialects/elementwise.py` and each element type it accepts,
one program applying the op runs at the tensor level (`dvm.interpret`), at
the tile level (the interpreter running the tiles of
`convert-tensor-to-tile`) and on the VM (`dvm.compile`). Float results must
be within the row's tolerance of the float64 result rounded to the type,
computed by `FLOAT64_ORACLE`, which states each op's meaning apart from the
tables (a new op is tested once it has an entry there); integer and i1
results must equal the reference function's.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from tolerances import elementwise_tolerance

import dvm
import dvm.pipeline as pipeline
from dvm.dialects.elementwise import (
    BY_OP_NAME,
    ELEMENTWISE,
    ElementwiseSpec,
    ElementwiseTableError,
    check_elementwise,
)
from dvm.numerics import is_float_dtype

FLOATS = ("f16", "bf16", "f32", "f64")
INTEGERS = ("i8", "ui8", "i16", "ui16", "i32", "ui32", "i64", "ui64")
KIND_DTYPES = {
    "float": FLOATS,
    "integer": INTEGERS,
    "numeric": FLOATS + INTEGERS,
    "bool": ("i1",),
    "any": (*FLOATS, *INTEGERS, "i1"),
}
NUMPY = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}
NUMPY |= {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "i1": np.bool_}
NUMPY |= {"ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "ui64": np.uint64}
SHAPE = (9, 37)
"""The first operand's shape; a second operand is one row, broadcast."""

TO_TILES = "symbolic-shapes,fuse,stack,convert-tensor-to-tile"


def program(spec: ElementwiseSpec, dtype: str) -> str:
    x, row = f"tensor<?x?x{dtype}>", f"tensor<?x{dtype}>"
    out = x if spec.same_type else "tensor<?x?xi1>"
    if spec.arity == 2:
        return f"""func.func @f(%a: {x}, %b: {row}) -> {out} {{
  %y = tensor.{spec.name} %a, %b : ({x}, {row}) -> {out}
  func.return %y : {out}
}}"""
    types = f"{x}" if spec.same_type else f"{x} -> {out}"
    return f"""func.func @f(%a: {x}) -> {out} {{
  %y = tensor.{spec.name} %a : {types}
  func.return %y : {out}
}}"""


def operand(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """Values of `dtype` with the awkward ones first: for floats signed zeros, ties,
    large values, inf and NaN; for integers the extremes and 0 (a divisor)."""
    np_dtype = np.dtype(NUMPY[dtype])
    if dtype == "i1":
        return rng.random(shape) < 0.5
    flat = rng.standard_normal(int(np.prod(shape))) * 3
    if np_dtype.kind in "iu":
        info = np.iinfo(np_dtype)
        values = rng.integers(info.min, info.max, flat.size, dtype=np_dtype, endpoint=True)
        special = np.array([0, 1, info.max, info.min, 7, info.max - 6, -1 % info.max], np_dtype)
    else:
        values = flat.astype(np_dtype)
        special = np.array(
            [0.0, -0.0, 0.5, -0.5, 2.5, 3e4, -3e4, np.inf, -np.inf, np.nan], np_dtype
        )
    values[: special.size] = special[: values.size]
    return values.reshape(shape)


FLOAT64_ORACLE: dict[str, Callable[..., Any]] = {
    "neg": operator.neg,
    "abs": abs,
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "reciprocal": lambda x: 1 / x,
    "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "erf": np.frompyfunc(math.erf, 1, 1),
    "floor": np.floor,
    "ceil": np.ceil,
    "round": np.round,
    "trunc": np.trunc,
    "isfinite": np.isfinite,
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "div": operator.truediv,
    "pow": operator.pow,
    "max": np.maximum,
    "min": np.minimum,
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "expm1": np.expm1,
    "log1p": np.log1p,
    "isinf": np.isinf,
    "isnan": np.isnan,
    "sign": np.sign,
    "remainder": np.remainder,
    "fmod": np.fmod,
    "atan2": np.frompyfunc(math.atan2, 2, 1),
    "copysign": np.frompyfunc(math.copysign, 2, 1),
}
"""What each elementwise op on floats computes, in float64, written apart from the op
table (whose functions every level runs), so that a wrong function there fails."""


def float64_result(op: str, *operands: np.ndarray) -> np.ndarray:
    """The elementwise op `op` on float operands computed in float64, rounded to their
    dtype (or to i1 for a comparison or a test)."""
    dtype = operands[0].dtype if BY_OP_NAME[op].same_type else np.dtype(np.bool_)
    with np.errstate(all="ignore"):
        wide = FLOAT64_ORACLE[op](*(x.astype(np.float64) for x in operands))
        return np.asarray(wide).astype(dtype)


def test_every_float_op_has_an_oracle() -> None:
    floats = {spec.name for spec in ELEMENTWISE if "f32" in KIND_DTYPES[spec.operand_kind]}
    missing = floats - set(FLOAT64_ORACLE)
    assert not missing, f"say what {sorted(missing)} compute in FLOAT64_ORACLE"


def expected(spec: ElementwiseSpec, args: list[np.ndarray]) -> np.ndarray:
    if is_float_dtype(args[0].dtype):
        return float64_result(spec.name, *args)
    with np.errstate(all="ignore"):
        return np.asarray(spec.numpy_fn(*args))


LEVELS: dict[str, Callable[[str, list[np.ndarray]], Any]] = {
    "tensor": lambda text, args: dvm.interpret(text, *args),
    "tile": lambda text, args: dvm.interpret(pipeline.run(text, TO_TILES), *args),
    "vm": lambda text, args: dvm.compile(text)(*args),
}

CASES = [
    pytest.param(spec.name, dtype, id=f"{spec.name}-{dtype}")
    for spec in ELEMENTWISE
    for dtype in KIND_DTYPES[spec.operand_kind]
]


@pytest.mark.parametrize(("op", "dtype"), CASES)
def test_every_level_computes_the_op(op: str, dtype: str, rng: np.random.Generator) -> None:
    spec = BY_OP_NAME[op]
    args = [operand(rng, dtype, SHAPE)]
    if spec.arity == 2:
        args.append(operand(rng, dtype, SHAPE[1:]))
    want = expected(spec, args)
    tol = elementwise_tolerance(op, want.dtype) if is_float_dtype(want.dtype) else 0.0
    text = program(spec, dtype)
    for level, run in LEVELS.items():
        got = run(text, args)
        assert got.dtype == want.dtype and got.shape == want.shape, level
        assert_close(got, want, tol, level)


def assert_close(got: np.ndarray, want: np.ndarray, tol: float, where: str) -> None:
    """`got` is `want` to `tol` (relative and absolute; NaN where `want` has NaN); bf16
    arrays are compared in f64 (numpy's testing does not know them)."""
    if got.dtype == NUMPY["bf16"]:
        got, want = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=where)


SIN_AND_COS = """func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
  %s = tensor.sin %x : tensor<?xf32>
  %c = tensor.cos %x : tensor<?xf32>
  %s2 = tensor.mul %s, %s : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %c2 = tensor.mul %c, %c : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %one = tensor.add %s2, %c2 : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %one : tensor<?xf32>
}"""


def test_sin_and_cos_fuse_into_one_kernel(rng: np.random.Generator) -> None:
    """sin(x)**2 + cos(x)**2 is one launch running both instructions, 1 to rounding."""
    x = (rng.standard_normal(1000) * 100).astype(np.float32)
    got, stats = dvm.compile(SIN_AND_COS).profile(x)
    ((_, launch),) = stats
    assert launch.instructions.get("sin") and launch.instructions.get("cos")
    np.testing.assert_allclose(got, np.ones_like(x), rtol=0, atol=4 * np.finfo(np.float32).eps)
    np.testing.assert_array_equal(got, dvm.interpret(SIN_AND_COS, x))


SIGNS = """func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %t = tensor.atan2 %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %c = tensor.copysign %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %t, %c : tensor<?xf32>, tensor<?xf32>
}"""


def test_atan2_and_copysign_read_the_signs_of_zeros_and_nans() -> None:
    """The quadrant of `atan2(+-0, +-0)` and the sign `copysign` copies are the sign
    bits, which a comparison of values does not see: every level keeps them."""
    a = np.array([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, np.nan, 2.0], np.float32)
    b = np.array([-0.0, -0.0, 0.0, 0.0, -np.inf, np.inf, -1.0, -np.nan], np.float32)
    for level, run in LEVELS.items():
        for got, want in zip(
            run(SIGNS, [a, b]), (np.arctan2(a, b), np.copysign(a, b)), strict=True
        ):
            np.testing.assert_array_equal(got, want, err_msg=level)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(want), err_msg=level)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (ElementwiseSpec("sine"), "'sine' has no elementwise instruction"),
        (ElementwiseSpec("reduce"), "'reduce' has no elementwise instruction"),
        (ElementwiseSpec("exp", accepts="numeric"), "accepts numeric, more than its instruction's"),
        (ElementwiseSpec("sigmoid"), "'sigmoid' needs a reference function"),
    ],
)
def test_a_bad_row_of_the_op_table_is_an_error(row: ElementwiseSpec, message: str) -> None:
    with pytest.raises(ElementwiseTableError, match=message):
        check_elementwise([row])


def test_an_op_listed_twice_is_an_error() -> None:
    with pytest.raises(ElementwiseTableError, match="'add' is listed twice"):
        check_elementwise([BY_OP_NAME["add"], BY_OP_NAME["add"]])
