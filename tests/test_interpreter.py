"""Unit tests of the reference interpreter, one section per op family.

Each test runs a small hand-written program through `dvm.interpret` and
compares with numpy (or with hand-computed values where our semantics differ
from numpy's: integer division, empty reductions, float -> int conversion).
Every numpy warning is an error here: the interpreter must not leak any.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_elementwise import float64_result
from tolerances import elementwise_tolerance

import dvm
from dvm import numerics
from dvm.dialects.elementwise import ELEMENTWISE
from dvm.errors import CallError, DvmError, ExecutionError, ShapeError

pytestmark = pytest.mark.filterwarnings("error")

F16, F32, F64 = np.float16, np.float32, np.float64
I8, I32, I64, BOOL = np.int8, np.int32, np.int64, np.bool_
MLIR = {F16: "f16", F32: "f32", F64: "f64", I8: "i8", I32: "i32", I64: "i64", BOOL: "i1"}
FLOATS = (F16, F32, F64)
INTS = (I8, I32, I64)


def ttype(shape: str, dtype: Any) -> str:
    """`tensor<?x4xf32>` from `"?x4"` and np.float32 (`""` for rank 0)."""
    return f"tensor<{shape}x{MLIR[dtype]}>" if shape else f"tensor<{MLIR[dtype]}>"


def unary_program(op: str, t: str, result: str | None = None) -> str:
    arrow = f" -> {result}" if result else ""
    return f"""func.func @f(%x: {t}) -> {result or t} {{
  %y = tensor.{op} %x : {t}{arrow}
  func.return %y : {result or t}
}}"""


def binary_program(op: str, a: str, b: str, r: str) -> str:
    return f"""func.func @f(%a: {a}, %b: {b}) -> {r} {{
  %y = tensor.{op} %a, %b : ({a}, {b}) -> {r}
  func.return %y : {r}
}}"""


def reduce_program(kind: str, t: str, r: str, axes: list[int], keepdims: bool = False) -> str:
    keep = ", keepdims = true" if keepdims else ""
    return f"""func.func @f(%x: {t}) -> {r} {{
  %y = tensor.reduce_{kind} %x {{axes = {axes}{keep}}} : {t} -> {r}
  func.return %y : {r}
}}"""


def arr(values: Any, dtype: Any) -> np.ndarray:
    return np.asarray(values, dtype=dtype)


def assert_same(actual: Any, expected: Any, rtol: float = 0.0, atol: float = 0.0) -> None:
    """Same shape, same dtype, values equal (NaN == NaN) within the tolerances."""
    expected = np.asarray(expected)
    assert isinstance(actual, np.ndarray)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)


# --------------------------------------------------------------------------
# Elementwise unary
# --------------------------------------------------------------------------

UNARY_FLOAT = sorted(
    spec.name
    for spec in ELEMENTWISE
    if spec.arity == 1 and spec.same_type and spec.operand_kind in ("float", "numeric")
)
"""Every unary op on floats whose result has the operand's type, from the op table."""


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", UNARY_FLOAT)
def test_unary_float_ops_match_numpy(op: str, dtype: Any) -> None:
    x = np.array([[-2.5, -1.0, -0.5, 0.0], [0.25, 0.5, 1.5, 3.0], [7.0, 20.0, -20.0, 100.0]])
    if op in ("log", "sqrt", "rsqrt"):
        x = np.abs(x) + 0.5
    x = x.astype(dtype)
    expected = float64_result(op, x)
    tol = elementwise_tolerance(op, dtype)
    got = dvm.interpret(unary_program(op, ttype("?x4", dtype)), x)
    assert_same(got, expected, rtol=tol, atol=tol)


def test_unary_on_empty_and_rank0() -> None:
    assert_same(dvm.interpret(unary_program("exp", ttype("?x?", F32)), np.zeros((0, 3), F32)),
                np.zeros((0, 3), F32))  # fmt: skip
    got = dvm.interpret(unary_program("exp", ttype("", F32)), arr(0, F32))
    assert_same(got, arr(1, F32))  # a 0-d array, not a numpy scalar


def test_round_is_ties_to_even() -> None:
    x = arr([0.5, 1.5, 2.5, -0.5, -2.5, 3.5], F32)
    got = dvm.interpret(unary_program("round", ttype("?", F32)), x)
    assert_same(got, arr([0, 2, 2, -0.0, -2, 4], F32))


@pytest.mark.parametrize("dtype", INTS)
def test_neg_and_abs_on_integers_wrap(dtype: Any) -> None:
    info = np.iinfo(dtype)
    x = arr([info.min, -3, 0, 5, info.max], dtype)
    assert_same(dvm.interpret(unary_program("abs", ttype("?", dtype)), x),
                arr([info.min, 3, 0, 5, info.max], dtype))  # fmt: skip
    assert_same(dvm.interpret(unary_program("neg", ttype("?", dtype)), x),
                arr([info.min, 3, 0, -5, -info.max], dtype))  # fmt: skip


def test_special_values_give_no_warnings() -> None:
    x = arr([-1.0, 0.0, np.inf, -np.inf, np.nan], F32)
    with np.errstate(all="ignore"):
        expected_log = np.log(x)
    assert_same(dvm.interpret(unary_program("log", ttype("?", F32)), x), expected_log)
    assert_same(dvm.interpret(unary_program("reciprocal", ttype("?", F32)), x),
                arr([-1, np.inf, 0, -0.0, np.nan], F32))  # fmt: skip
    sig = dvm.interpret(unary_program("sigmoid", ttype("?", F32)), arr([-1e4, 1e4, -100], F32))
    assert_same(sig, arr([0, 1, 3.720076e-44], F32), rtol=1e-5)


def test_logical_not_and_isfinite() -> None:
    b = arr([True, False], BOOL)
    assert_same(dvm.interpret(unary_program("logical_not", ttype("?", BOOL)), b), ~b)
    x = arr([1.0, np.inf, -np.inf, np.nan], F16)
    got = dvm.interpret(unary_program("isfinite", ttype("?", F16), ttype("?", BOOL)), x)
    assert_same(got, arr([True, False, False, False], BOOL))


# --------------------------------------------------------------------------
# erf (dvm.numerics)
# --------------------------------------------------------------------------


def test_erf_float64_matches_math_erf() -> None:
    rng = np.random.default_rng(0)
    x = np.concatenate([
        np.linspace(-7, 7, 20001), rng.uniform(-6, 6, 20000), rng.standard_normal(20000),
        np.geomspace(1e-300, 6, 2000), -np.geomspace(1e-300, 6, 2000), [0.0, -0.0, 1.0, 2.0],
    ])  # fmt: skip
    expected = np.array([math.erf(v) for v in x])
    got = numerics.erf(x)
    assert got.dtype == F64
    rel = np.abs(got - expected) / np.maximum(np.abs(expected), 1e-300)
    assert rel.max() < 1e-15


def test_erf_special_values_and_float32() -> None:
    special = numerics.erf(np.array([np.inf, -np.inf, np.nan, -0.0, 40.0]))
    np.testing.assert_array_equal(special, [1.0, -1.0, np.nan, -0.0, 1.0])
    assert np.signbit(special[3])
    x = np.random.default_rng(1).uniform(-5, 5, 10000).astype(F32)
    expected = np.array([math.erf(float(v)) for v in x]).astype(F32)
    got = numerics.erf(x)
    assert got.dtype == F32
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-30)


# --------------------------------------------------------------------------
# Elementwise binary, comparisons, select
# --------------------------------------------------------------------------

BROADCAST_CASES = [  # (lhs shape text, lhs shape, rhs shape text, rhs shape, result text)
    ("?x?", (3, 4), "?", (4,), "?x?"),
    ("?x1", (3, 1), "?", (5,), "?x?"),
    ("?x?", (3, 4), "", (), "?x?"),
    ("", (), "", (), ""),
    ("?x?", (0, 4), "1x?", (1, 4), "?x?"),
    ("?x1x?", (2, 1, 7), "?x1", (13, 1), "?x?x?"),
]


@pytest.mark.parametrize(("sa", "a_shape", "sb", "b_shape", "sr"), BROADCAST_CASES)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "max", "min", "pow"])
def test_binary_float_broadcasting(
    op: str, sa: str, a_shape: tuple[int, ...], sb: str, b_shape: tuple[int, ...], sr: str
) -> None:
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 2, a_shape).astype(F32)
    b = rng.uniform(0.5, 2, b_shape).astype(F32)
    fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
          "max": np.maximum, "min": np.minimum, "pow": np.power}[op]  # fmt: skip
    program = binary_program(op, ttype(sa, F32), ttype(sb, F32), ttype(sr, F32))
    assert_same(dvm.interpret(program, a, b), np.asarray(fn(a, b)), rtol=1e-6)


@pytest.mark.parametrize("dtype", (F16, F64, I8, I32, I64))
def test_binary_ops_keep_the_element_type(dtype: Any) -> None:
    a, b = arr([[1, 2, 3]], dtype), arr([[2], [5]], dtype)
    for op, fn in (("add", np.add), ("mul", np.multiply), ("max", np.maximum)):
        program = binary_program(op, ttype("1x3", dtype), ttype("2x1", dtype), ttype("2x3", dtype))
        assert_same(dvm.interpret(program, a, b), fn(a, b))


def test_integer_arithmetic_wraps() -> None:
    program = binary_program("add", ttype("?", I8), ttype("", I8), ttype("?", I8))
    assert_same(dvm.interpret(program, arr([127, -128], I8), arr(1, I8)), arr([-128, -127], I8))


@pytest.mark.parametrize("dtype", INTS)
def test_integer_division_rounds_toward_zero_and_zero_divisor_gives_zero(dtype: Any) -> None:
    info = np.iinfo(dtype)
    a = arr([7, -7, 7, -7, 6, 5, 0, info.min, info.min, info.max], dtype)
    b = arr([2, 2, -2, -2, 3, 0, 0, -1, 1, -1], dtype)
    expected = arr([3, -3, -3, 3, 2, 0, 0, info.min, info.min, -info.max], dtype)
    program = binary_program("div", ttype("?", dtype), ttype("?", dtype), ttype("?", dtype))
    assert_same(dvm.interpret(program, a, b), expected)


def test_float_division_by_zero_is_ieee() -> None:
    program = binary_program("div", ttype("?", F32), ttype("", F32), ttype("?", F32))
    got = dvm.interpret(program, arr([1, -1, 0], F32), arr(0, F32))
    assert_same(got, arr([np.inf, -np.inf, np.nan], F32))


def test_max_min_propagate_nan() -> None:
    a, b = arr([np.nan, 1, 2], F32), arr([0, np.nan, 3], F32)
    for op, expected in (("max", [np.nan, np.nan, 3]), ("min", [np.nan, np.nan, 2])):
        program = binary_program(op, ttype("?", F32), ttype("?", F32), ttype("?", F32))
        assert_same(dvm.interpret(program, a, b), arr(expected, F32))


@pytest.mark.parametrize("dtype", (F16, F32, I8, I64, BOOL))
@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_comparisons_give_i1(op: str, dtype: Any) -> None:
    a = arr([[0, 1, 1], [1, 0, 0]], dtype)
    b = arr([1, 1, 0], dtype)
    fn = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
          "gt": np.greater, "ge": np.greater_equal}[op]  # fmt: skip
    program = binary_program(op, ttype("?x3", dtype), ttype("3", dtype), ttype("?x3", BOOL))
    assert_same(dvm.interpret(program, a, b), fn(a, b))


def test_comparisons_with_nan() -> None:
    a, b = arr([np.nan, 1], F32), arr([np.nan, np.nan], F32)
    for op, expected in (("eq", [False, False]), ("ne", [True, True]), ("lt", [False, False])):
        program = binary_program(op, ttype("?", F32), ttype("?", F32), ttype("?", BOOL))
        assert_same(dvm.interpret(program, a, b), arr(expected, BOOL))


def test_logical_and_or() -> None:
    a, b = arr([[True], [False]], BOOL), arr([True, False], BOOL)
    for op, fn in (("logical_and", np.logical_and), ("logical_or", np.logical_or)):
        program = binary_program(op, ttype("?x1", BOOL), ttype("?", BOOL), ttype("?x?", BOOL))
        assert_same(dvm.interpret(program, a, b), fn(a, b))


def test_select_broadcasts_all_three_operands() -> None:
    program = """func.func @f(%c: tensor<?x1xi1>, %a: tensor<?xi32>, %b: tensor<i32>)
    -> tensor<?x?xi32> {
  %y = tensor.select %c, %a, %b : (tensor<?x1xi1>, tensor<?xi32>, tensor<i32>) -> tensor<?x?xi32>
  func.return %y : tensor<?x?xi32>
}"""
    c, a, b = arr([[True], [False]], BOOL), arr([1, 2, 3], I32), arr(-1, I32)
    assert_same(dvm.interpret(program, c, a, b), arr([[1, 2, 3], [-1, -1, -1]], I32))
    empty = dvm.interpret(program, np.zeros((0, 1), BOOL), a, b)
    assert_same(empty, np.zeros((0, 3), I32))


# --------------------------------------------------------------------------
# convert
# --------------------------------------------------------------------------


def convert(x: np.ndarray, target: Any) -> np.ndarray:
    program = unary_program("convert", ttype("?", x.dtype.type), ttype("?", target))
    return dvm.interpret(program, x)


def test_convert_float_to_int_truncates_and_saturates() -> None:
    x = arr([1.9, -1.9, 300.0, -300.0, np.nan, np.inf, -np.inf, 126.5], F32)
    assert_same(convert(x, I8), arr([1, -1, 127, -128, 0, 127, -128, 126], I8))
    big = arr([3e9, -3e9, 2.0**63, -(2.0**63), 1e30], F64)
    assert_same(convert(big, I32), arr([2**31 - 1, -(2**31), 2**31 - 1, -(2**31), 2**31 - 1], I32))
    i64 = np.iinfo(I64)
    assert_same(convert(big, I64), arr([3e9, -3e9, i64.max, i64.min, i64.max], I64))


def test_convert_between_other_types() -> None:
    assert_same(convert(arr([1e5, 1.0, -1e6], F32), F16), arr([np.inf, 1, -np.inf], F16))
    assert_same(convert(arr([300, -129, 5], I32), I8), arr([44, 127, 5], I8))  # wraps
    assert_same(convert(arr([True, False], BOOL), F32), arr([1, 0], F32))
    assert_same(convert(arr([0.0, -0.5, np.nan], F32), BOOL), arr([False, True, True], BOOL))
    assert_same(convert(arr([-3, 0, 7], I8), I64), arr([-3, 0, 7], I64))
    assert_same(convert(arr([2**24 + 1], I32), F32), arr([2**24], F32))


# --------------------------------------------------------------------------
# Layout ops: broadcast_to, transpose, expand/collapse_shape, dim, extract
# --------------------------------------------------------------------------


def test_broadcast_to_with_dynamic_target() -> None:
    program = """func.func @f(%x: tensor<?xf32>, %like: tensor<?x?xf32>) -> tensor<3x?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %like, %c0 : tensor<?x?xf32>
  %y = tensor.broadcast_to %x to [%n, 3] : tensor<?xf32> -> tensor<?x3xf32>
  %z = tensor.broadcast_to %y to [2, %n, 3] : tensor<?x3xf32> -> tensor<2x?x3xf32>
  %w = tensor.collapse_shape %z [[0, 1], [2]] : tensor<2x?x3xf32> into tensor<?x3xf32>
  %v = tensor.transpose %w {perm = [1, 0]} : tensor<?x3xf32> -> tensor<3x?xf32>
  %u = tensor.expand_shape %v [[0], [1, 2]] output_shape [3, %n, 2]
       : tensor<3x?xf32> into tensor<3x?x2xf32>
  %r = tensor.collapse_shape %u [[0], [1, 2]] : tensor<3x?x2xf32> into tensor<3x?xf32>
  func.return %r : tensor<3x?xf32>
}"""
    x = arr([1, 2, 3], F32)
    for n in (0, 1, 4):
        got = dvm.interpret(program, x, np.zeros((n, 5), F32))
        expected = np.broadcast_to(x, (2, n, 3)).reshape(2 * n, 3).T
        assert_same(got, expected)
        assert got.flags.writeable and got.flags.c_contiguous


def test_broadcast_to_rejects_incompatible_shape() -> None:
    program = """func.func @f(%x: tensor<?xf32>, %n: index) -> tensor<2x?xf32> {
  %y = tensor.broadcast_to %x to [2, %n] : tensor<?xf32> -> tensor<2x?xf32>
  func.return %y : tensor<2x?xf32>
}"""
    assert dvm.interpret(program, arr([1, 2], F32), 2).shape == (2, 2)
    with pytest.raises(
        ShapeError, match=r"%y = tensor.broadcast_to: cannot broadcast shape \(3,\)"
    ):
        dvm.interpret(program, arr([1, 2, 3], F32), 2)
    with pytest.raises(ShapeError, match="negative dim"):
        dvm.interpret(program, arr([1], F32), -1)


def test_transpose_matches_numpy() -> None:
    program = """func.func @f(%x: tensor<?x?x?xi64>) -> tensor<?x?x?xi64> {
  %y = tensor.transpose %x {perm = [2, 0, 1]} : tensor<?x?x?xi64> -> tensor<?x?x?xi64>
  func.return %y : tensor<?x?x?xi64>
}"""
    x = np.arange(2 * 3 * 4, dtype=I64).reshape(2, 3, 4)
    assert_same(dvm.interpret(program, x), x.transpose(2, 0, 1))


def test_expand_and_collapse_use_c_order() -> None:
    program = """func.func @f(%x: tensor<?x6xi32>, %a: index)
    -> (tensor<?x2x3xi32>, tensor<?xi32>) {
  %e = tensor.expand_shape %x [[0], [1, 2]] output_shape [%a, 2, 3]
       : tensor<?x6xi32> into tensor<?x2x3xi32>
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<?x6xi32> into tensor<?xi32>
  func.return %e, %c : tensor<?x2x3xi32>, tensor<?xi32>
}"""
    x = np.arange(12, dtype=I32).reshape(2, 6)
    e, c = dvm.interpret(program, x, 2)
    assert_same(e, x.reshape(2, 2, 3))
    assert_same(c, x.reshape(12))
    with pytest.raises(ShapeError, match=r"output dims \[3\] do not multiply to dim 2"):
        dvm.interpret(program, x, 3)


def test_dim_and_extract() -> None:
    program = """func.func @f(%x: tensor<?x?xf16>, %i: index, %j: index) -> (index, f16) {
  %c1 = arith.constant 1 : index
  %d = tensor.dim %x, %c1 : tensor<?x?xf16>
  %e = tensor.extract %x[%i, %j] : tensor<?x?xf16>
  func.return %d, %e : index, f16
}"""
    x = np.arange(6, dtype=F16).reshape(2, 3)
    d, e = dvm.interpret(program, x, 1, 2)
    assert d == 3 and type(d) is int
    assert e == 5 and type(e) is np.float16
    for i, j, axis, size in ((2, 0, 0, 2), (0, -1, 1, 3)):
        bad = i if axis == 0 else j
        message = rf"tensor.extract: index {bad} is out of range for axis {axis} of size {size}"
        with pytest.raises(ExecutionError, match=message):
            dvm.interpret(program, x, i, j)


def test_extract_rank0_bool_drives_scf_if() -> None:
    program = """func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
  %zero = arith.constant dense<0.0> : tensor<f32>
  %s = tensor.reduce_sum %x {axes = [0]} : tensor<?xf32> -> tensor<f32>
  %p = tensor.gt %s, %zero : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %c = tensor.extract %p[] : tensor<i1>
  %y = scf.if %c -> (tensor<?xf32>) {
    scf.yield %x : tensor<?xf32>
  } else {
    %n = tensor.neg %x : tensor<?xf32>
    scf.yield %n : tensor<?xf32>
  }
  func.return %y : tensor<?xf32>
}"""
    assert_same(dvm.interpret(program, arr([1, -0.5], F32)), arr([1, -0.5], F32))
    assert_same(dvm.interpret(program, arr([-1, 0.5], F32)), arr([1, -0.5], F32))
    assert_same(dvm.interpret(program, np.zeros(0, F32)), np.zeros(0, F32))


# --------------------------------------------------------------------------
# Reductions
# --------------------------------------------------------------------------

REDUCE_FN = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod}
NUMERIC = (*FLOATS, *INTS)


def kinds_for(dtype: Any) -> list[str]:
    return sorted(REDUCE_FN) if np.dtype(dtype).kind == "f" else ["max", "min", "prod", "sum"]


def expected_identity(kind: str, dtype: Any) -> Any:
    if kind in ("sum", "prod", "mean"):
        return {"sum": 0, "prod": 1, "mean": np.nan}[kind]
    if np.dtype(dtype).kind == "f":
        return -np.inf if kind == "max" else np.inf
    info = np.iinfo(dtype)
    return info.min if kind == "max" else info.max


@pytest.mark.parametrize("dtype", NUMERIC)
def test_reductions_over_an_empty_axis_give_the_identity(dtype: Any) -> None:
    x = np.zeros((3, 0), dtype)
    for kind in kinds_for(dtype):
        identity = expected_identity(kind, dtype)
        program = reduce_program(kind, ttype("?x?", dtype), ttype("?", dtype), [1])
        assert_same(dvm.interpret(program, x), np.full(3, identity, dtype))
        program = reduce_program(kind, ttype("?x?", dtype), ttype("?x1", dtype), [1], True)
        assert_same(dvm.interpret(program, x), np.full((3, 1), identity, dtype))
        program = reduce_program(kind, ttype("?x?", dtype), ttype("", dtype), [0, 1])
        assert_same(dvm.interpret(program, x.T), np.full((), identity, dtype))


@pytest.mark.parametrize("dtype", NUMERIC)
def test_reductions_match_numpy(dtype: Any) -> None:
    x = np.random.default_rng(0).integers(-3, 4, (4, 5, 6)).astype(dtype)
    for kind in kinds_for(dtype):
        for axes, keepdims in (([1], False), ([0, 2], True), ([2, 0], False), ([], False)):
            shape = x.shape
            kept = [1 if i in axes else d for i, d in enumerate(shape)]
            out = kept if keepdims else [d for i, d in enumerate(shape) if i not in axes]
            program = reduce_program(
                kind, ttype("4x5x6", dtype), ttype("x".join(map(str, out)), dtype), axes, keepdims
            )
            expected = REDUCE_FN[kind](x.astype(F64), axis=tuple(axes), keepdims=keepdims)
            got = dvm.interpret(program, x)
            tol = 1e-3 if dtype == F16 else 1e-6
            assert_same(got, np.asarray(expected).astype(dtype), rtol=tol)


def test_integer_sum_wraps_in_its_own_type() -> None:
    program = reduce_program("sum", ttype("?", I8), ttype("", I8), [0])
    assert_same(dvm.interpret(program, arr([100, 100], I8)), arr(-56, I8))


def test_f16_sum_accumulates_in_f32() -> None:
    program = reduce_program("sum", ttype("?", F16), ttype("", F16), [0])
    assert_same(dvm.interpret(program, np.ones(4096, F16)), arr(4096, F16))  # f16 alone: 2048
    mean = reduce_program("mean", ttype("?", F16), ttype("", F16), [0])
    assert_same(dvm.interpret(mean, np.full(10000, 0.1, F16)), arr(0.1, F16), rtol=1e-3)


def test_reduce_max_propagates_nan() -> None:
    program = reduce_program("max", ttype("?x?", F32), ttype("?", F32), [1])
    got = dvm.interpret(program, arr([[1, np.nan], [2, 3]], F32))
    assert_same(got, arr([np.nan, 3], F32))


# --------------------------------------------------------------------------
# Matmul
# --------------------------------------------------------------------------


def matmul_program(a: str, b: str, r: str, ta: bool = False, tb: bool = False) -> str:
    flags = [f for f, on in (("transpose_a = true", ta), ("transpose_b = true", tb)) if on]
    attrs = f" {{{', '.join(flags)}}}" if flags else ""
    return f"""func.func @f(%a: {a}, %b: {b}) -> {r} {{
  %y = tensor.matmul %a, %b{attrs} : ({a}, {b}) -> {r}
  func.return %y : {r}
}}"""


@pytest.mark.parametrize(("ta", "tb"), [(False, False), (True, False), (False, True), (True, True)])
def test_matmul_transposes_swap_the_last_two_dims(ta: bool, tb: bool) -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 3, 4)).astype(F32)  # as lhs: (2, 3, 4), or (2, 4, 3) transposed
    b = rng.standard_normal((4, 5) if not ta else (3, 5)).astype(F32)
    b = b.T.copy() if tb else b
    program = matmul_program(ttype("?x?x?", F32), ttype("?x?", F32), ttype("?x?x?", F32), ta, tb)
    expected = (a.swapaxes(-1, -2) if ta else a) @ (b.T if tb else b)
    assert_same(dvm.interpret(program, a, b), expected, rtol=1e-5, atol=1e-6)


def test_matmul_broadcasts_batch_dims() -> None:
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 1, 3, 4)).astype(F64)
    b = rng.standard_normal((5, 4, 6)).astype(F64)
    program = matmul_program(ttype("?x1x?x?", F64), ttype("?x?x?", F64), ttype("?x?x?x?", F64))
    assert_same(dvm.interpret(program, a, b), a @ b, rtol=1e-12)
    x = rng.standard_normal((3, 4)).astype(F64)
    program = matmul_program(ttype("?x?", F64), ttype("?x?x?", F64), ttype("?x?x?", F64))
    assert_same(dvm.interpret(program, x, b), x @ b, rtol=1e-12)


@pytest.mark.parametrize("dtype", (F16, I8, I32, I64))
def test_matmul_element_types(dtype: Any) -> None:
    a = np.arange(6).reshape(2, 3).astype(dtype)
    b = np.arange(12).reshape(3, 4).astype(dtype)
    program = matmul_program(ttype("?x?", dtype), ttype("?x?", dtype), ttype("?x?", dtype))
    assert_same(dvm.interpret(program, a, b), (a.astype(F64) @ b.astype(F64)).astype(dtype))


def test_matmul_with_empty_contraction_gives_zeros() -> None:
    program = matmul_program(ttype("?x?", F32), ttype("?x?", F32), ttype("?x?", F32))
    got = dvm.interpret(program, np.zeros((3, 0), F32), np.zeros((0, 2), F32))
    assert_same(got, np.zeros((3, 2), F32))


def test_matmul_shape_errors_name_the_op() -> None:
    program = matmul_program(ttype("?x?", F32), ttype("?x?", F32), ttype("?x?", F32))
    with pytest.raises(
        ShapeError, match=r"tensor.matmul: contraction dims differ.*\(2, 3\).*3.*\(4, 5\).*4"
    ):
        dvm.interpret(program, np.zeros((2, 3), F32), np.zeros((4, 5), F32))
    batched = matmul_program(ttype("?x?x?", F32), ttype("?x?x?", F32), ttype("?x?x?", F32))
    with pytest.raises(ShapeError, match=r"tensor.matmul: batch shapes \(2,\), \(3,\)"):
        dvm.interpret(batched, np.zeros((2, 1, 1), F32), np.zeros((3, 1, 1), F32))


# --------------------------------------------------------------------------
# Constants and arith
# --------------------------------------------------------------------------


def test_dense_constants_of_every_element_type() -> None:
    program = """func.func @f()
    -> (tensor<2x2xf16>, tensor<3xi1>, tensor<2xi8>, tensor<f64>, tensor<2x3xi64>) {
  %a = arith.constant dense<[[1.5, 2.0], [-3.0, 0.25]]> : tensor<2x2xf16>
  %b = arith.constant dense<[true, false, true]> : tensor<3xi1>
  %c = arith.constant dense<[-128, 127]> : tensor<2xi8>
  %d = arith.constant dense<0.1> : tensor<f64>
  %e = arith.constant dense<7> : tensor<2x3xi64>
  func.return %a, %b, %c, %d, %e
      : tensor<2x2xf16>, tensor<3xi1>, tensor<2xi8>, tensor<f64>, tensor<2x3xi64>
}"""
    a, b, c, d, e = dvm.interpret(program)
    assert_same(a, arr([[1.5, 2], [-3, 0.25]], F16))
    assert_same(b, arr([True, False, True], BOOL))
    assert_same(c, arr([-128, 127], I8))
    assert_same(d, arr(0.1, F64))
    assert_same(e, np.full((2, 3), 7, I64))


def test_index_arithmetic() -> None:
    program = """func.func @f(%a: index, %b: index)
    -> (index, index, index, index, index, i1, index) {
  %s = arith.addi %a, %b : index
  %m = arith.muli %a, %b : index
  %d = arith.divsi %a, %b : index
  %r = arith.remsi %a, %b : index
  %fl = arith.floordivsi %a, %b : index
  %lt = arith.cmpi slt, %a, %b : index
  %ce = arith.ceildivsi %a, %b : index
  func.return %s, %m, %d, %r, %fl, %lt, %ce : index, index, index, index, index, i1, index
}"""
    assert dvm.interpret(program, -7, 2) == (-5, -14, -3, -1, -4, True, -3)
    assert dvm.interpret(program, 7, 2) == (9, 14, 3, 1, 3, False, 4)
    assert dvm.interpret(program, 7, 0)[2:5] == (0, 0, 0)
    assert all(type(v) is int for v in dvm.interpret(program, 7, 2)[:5])


def test_scalar_float_arith_and_casts() -> None:
    program = """func.func @f(%x: f32, %n: index) -> (f32, f16, i32, i1, f32, i64) {
  %two = arith.constant 2.0 : f32
  %y = arith.mulf %x, %two : f32
  %h = arith.truncf %y : f32 to f16
  %i = arith.fptosi %y : f32 to i32
  %c = arith.cmpf olt, %x, %two : f32
  %ni = arith.index_cast %n : index to i64
  %nf = arith.sitofp %ni : i64 to f32
  %b = arith.extui %c : i1 to i64
  %t = arith.select %c, %y, %nf : f32
  func.return %t, %h, %i, %c, %nf, %b : f32, f16, i32, i1, f32, i64
}"""
    t, h, i, c, nf, b = dvm.interpret(program, 1.25, 3)
    assert (t, h, i, c, nf, b) == (2.5, 2.5, 2, True, 3.0, 1)
    assert [type(v) for v in (t, h, i, c, nf, b)] == [F32, F16, I32, BOOL, F32, I64]


def test_arith_on_tensors() -> None:
    program = """func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %s = arith.addf %a, %b : tensor<?xf32>
  %m = arith.maxnumf %s, %b : tensor<?xf32>
  func.return %m : tensor<?xf32>
}"""
    got = dvm.interpret(program, arr([1, np.nan], F32), arr([2, 3], F32))
    assert_same(got, arr([3, 3], F32))  # maxnumf ignores NaN


def test_cmpf_predicates_with_nan() -> None:
    pairs = [(1.0, 1.0), (np.nan, 1.0), (2.0, 1.0)]
    expected = {  # predicate: (1 vs 1, nan vs 1, 2 vs 1)
        "oeq": [1, 0, 0], "ueq": [1, 1, 0], "one": [0, 0, 1], "une": [0, 1, 1],
        "ogt": [0, 0, 1], "ugt": [0, 1, 1], "ole": [1, 0, 0], "ule": [1, 1, 0],
        "ord": [1, 0, 1], "uno": [0, 1, 0], "false": [0, 0, 0], "true": [1, 1, 1],
    }  # fmt: skip
    for predicate, want in expected.items():
        program = f"""func.func @f(%a: f64, %b: f64) -> i1 {{
  %c = arith.cmpf {predicate}, %a, %b : f64
  func.return %c : i1
}}"""
        got = [dvm.interpret(program, a, b) for a, b in pairs]
        assert got == [bool(w) for w in want], predicate


def test_cmpi_unsigned_predicates() -> None:
    program = """func.func @f(%a: i8, %b: i8) -> (i1, i1) {
  %u = arith.cmpi ult, %a, %b : i8
  %s = arith.cmpi slt, %a, %b : i8
  func.return %u, %s : i1, i1
}"""
    assert dvm.interpret(program, I8(-1), I8(1)) == (False, True)


def test_unsigned_and_shift_ops_read_the_bits() -> None:
    program = """func.func @f(%a: i8, %b: i8) -> (i8, i8, i8, i8, i8, i8, i8, i8) {
  %q = arith.divui %a, %b : i8
  %r = arith.remui %a, %b : i8
  %c = arith.ceildivui %a, %b : i8
  %m = arith.maxui %a, %b : i8
  %l = arith.shli %a, %b : i8
  %s = arith.shrsi %a, %b : i8
  %u = arith.shrui %a, %b : i8
  %z = arith.shli %a, %a : i8
  func.return %q, %r, %c, %m, %l, %s, %u, %z : i8, i8, i8, i8, i8, i8, i8, i8
}"""
    got = dvm.interpret(program, I8(-8), I8(3))  # -8 is 248 unsigned
    assert got == (82, 2, 83, -8, -64, -1, 31, 0)
    assert all(type(v) is I8 for v in got)
    assert dvm.interpret(program, I8(-8), I8(9))[4:7] == (0, -1, 0)  # shifted past the width


def test_i1_arithmetic_is_one_bit() -> None:
    program = """func.func @f(%a: i1, %b: i1) -> (i1, i1, i1, i1, f32, index, i32) {
  %s = arith.addi %a, %b : i1
  %d = arith.subi %a, %b : i1
  %m = arith.minsi %a, %b : i1
  %lt = arith.cmpi slt, %a, %b : i1
  %f = arith.sitofp %a : i1 to f32
  %i = arith.index_cast %a : i1 to index
  %u = arith.extui %a : i1 to i32
  func.return %s, %d, %m, %lt, %f, %i, %u : i1, i1, i1, i1, f32, index, i32
}"""
    # a set i1 is -1 read as signed (min, slt, sitofp, index_cast), 1 read as unsigned
    assert dvm.interpret(program, True, True) == (False, False, True, False, -1.0, -1, 1)
    assert dvm.interpret(program, True, False)[2:4] == (True, True)


def test_extended_arith_gives_both_halves() -> None:
    program = """func.func @f(%a: i32, %b: i32) -> (i32, i32, i32, i32, i32, i1) {
  %sl, %sh = arith.mulsi_extended %a, %b : i32
  %ul, %uh = arith.mului_extended %a, %b : i32
  %sum, %over = arith.addui_extended %a, %b : i32, i1
  func.return %sl, %sh, %ul, %uh, %sum, %over : i32, i32, i32, i32, i32, i1
}"""
    # -1 * -2 = 2 signed; 0xFFFFFFFF * 0xFFFFFFFE = 0xFFFFFFFD_00000002 unsigned
    assert dvm.interpret(program, I32(-1), I32(-2)) == (2, 0, 2, -3, -3, True)
    assert dvm.interpret(program, I32(2**30), I32(4)) == (0, 1, 0, 1, 2**30 + 4, False)


def test_unsigned_casts_and_bitcast() -> None:
    program = """func.func @f(%a: i8, %x: f32) -> (f32, i8, i8, i32, i64) {
  %u = arith.uitofp %a : i8 to f32
  %p = arith.fptoui %x : f32 to i8
  %t = arith.trunci %a : i8 to i1
  %bits = arith.bitcast %x : f32 to i32
  %i = arith.index_cast %a : i8 to index
  %w = arith.index_cast %i : index to i64
  %t8 = arith.extui %t : i1 to i8
  func.return %u, %p, %t8, %bits, %w : f32, i8, i8, i32, i64
}"""
    u, p, t8, bits, w = dvm.interpret(program, I8(-3), F32(200.5))
    assert (u, p, t8, w) == (253.0, -56, 1, -3)  # fptoui 200 is 0xC8, -56 as i8
    assert bits == np.float32(200.5).view(np.int32)
    assert dvm.interpret(program, I8(3), F32(1e10))[1] == -1  # saturates at 255


# --------------------------------------------------------------------------
# Control flow: scf.for, scf.while, scf.if, func.call
# --------------------------------------------------------------------------

FOR_PROGRAM = """func.func @f(%x: tensor<?xi32>, %lo: index, %hi: index, %step: index)
    -> (tensor<?xi32>, index) {
  %c0 = arith.constant 0 : index
  %r:2 = scf.for %i = %lo to %hi step %step iter_args(%acc = %x, %k = %c0)
      -> (tensor<?xi32>, index) {
    %one = arith.constant dense<1> : tensor<i32>
    %next = tensor.add %acc, %one : (tensor<?xi32>, tensor<i32>) -> tensor<?xi32>
    %k2 = arith.addi %k, %i : index
    scf.yield %next, %k2 : tensor<?xi32>, index
  }
  func.return %r#0, %r#1 : tensor<?xi32>, index
}"""


def test_scf_for_carries_tensors_and_indices() -> None:
    x = arr([5], I32)
    acc, k = dvm.interpret(FOR_PROGRAM, x, 0, 4, 1)
    assert_same(acc, arr([9], I32))
    assert k == 0 + 1 + 2 + 3
    acc, k = dvm.interpret(FOR_PROGRAM, x, 1, 8, 3)  # i = 1, 4, 7
    assert_same(acc, arr([8], I32))
    assert k == 12
    acc, k = dvm.interpret(FOR_PROGRAM, x, 0, 0, 1)  # zero trips: the inputs come back
    assert_same(acc, x)
    assert acc is not x and k == 0
    with pytest.raises(ExecutionError, match=r"= scf.for: step must be positive, got 0"):
        dvm.interpret(FOR_PROGRAM, x, 0, 4, 0)


def test_scf_while_doubles_until_a_data_dependent_limit() -> None:
    program = """func.func @f(%x: tensor<?xf32>, %limit: tensor<f32>) -> tensor<?xf32> {
  %r = scf.while (%arg = %x) : (tensor<?xf32>) -> tensor<?xf32> {
    %s = tensor.reduce_sum %arg {axes = [0]} : tensor<?xf32> -> tensor<f32>
    %c = tensor.lt %s, %limit : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %b = tensor.extract %c[] : tensor<i1>
    scf.condition(%b) %arg : tensor<?xf32>
  } do {
  ^bb0(%a: tensor<?xf32>):
    %d = tensor.add %a, %a : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    scf.yield %d : tensor<?xf32>
  }
  func.return %r : tensor<?xf32>
}"""
    got = dvm.interpret(program, np.ones(3, F32), arr(100, F32))
    assert_same(got, np.full(3, 64, F32))
    assert_same(dvm.interpret(program, np.ones(3, F32), arr(1, F32)), np.ones(3, F32))


def test_scf_if_on_an_i1_argument() -> None:
    program = """func.func @f(%c: i1, %x: tensor<2xf64>) -> tensor<2xf64> {
  %y = scf.if %c -> (tensor<2xf64>) {
    scf.yield %x : tensor<2xf64>
  } else {
    %z = tensor.neg %x : tensor<2xf64>
    scf.yield %z : tensor<2xf64>
  }
  func.return %y : tensor<2xf64>
}"""
    x = arr([1, -2], F64)
    assert_same(dvm.interpret(program, True, x), x)
    assert_same(dvm.interpret(program, False, x), -x)


def test_func_call_and_entry_selection() -> None:
    program = """func.func @square(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = tensor.mul %x, %x : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = func.call @square(%x) : (tensor<?xf32>) -> tensor<?xf32>
  %z = func.call @square(%y) : (tensor<?xf32>) -> tensor<?xf32>
  func.return %z : tensor<?xf32>
}"""
    x = arr([2, 3], F32)
    assert_same(dvm.interpret(program, x, entry="main"), arr([16, 81], F32))
    assert_same(dvm.interpret(program, x, entry="@square"), arr([4, 9], F32))
    with pytest.raises(CallError, match=r"2 functions \(@square, @main\); choose with entry="):
        dvm.interpret(program, x)
    with pytest.raises(CallError, match=r"no function @nope; available: @square, @main"):
        dvm.interpret(program, x, entry="nope")


# --------------------------------------------------------------------------
# The public call: sources, results, errors
# --------------------------------------------------------------------------

SOFTMAX_LIKE = """func.func @g(%x: tensor<?x128xf32>, %n: index) -> tensor<?x128xf32> {
  func.return %x : tensor<?x128xf32>
}"""


def test_accepts_a_module_text_or_path(tmp_path: Path) -> None:
    program = unary_program("neg", ttype("?", F32))
    path = tmp_path / "neg.mlir"
    path.write_text(program)
    x = arr([1, 2], F32)
    for source in (program, dvm.parse(program), path, str(path)):
        assert_same(dvm.interpret(source, x), -x)


def test_results_never_alias_arguments() -> None:
    x = np.zeros((2, 128), F32)
    y = dvm.interpret(SOFTMAX_LIKE, x, 0)
    assert y is not x and not np.shares_memory(x, y)


X = "@g argument 0 (%x): "
N = "@g argument 1 (%n): "
T = "tensor<?x128xf32>"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((np.zeros((2, 128), F32),), "@g takes 2 arguments (0 (%x), 1 (%n)), got 1"),
        (([1.0], 0), f"{X}expected a numpy array for {T}, got list"),
        ((np.zeros((2, 128), F64), 0),
         f"{X}expected element type f32 (numpy float32) for {T}, got float64"),
        ((np.zeros((2, 128, 1), F32), 0),
         f"{X}expected rank 2 for {T}, got rank 3 (shape (2, 128, 1))"),
        ((np.zeros((2, 127), F32), 0), f"{X}axis 1 must be 128 for {T}, got 127 (shape (2, 127))"),
        ((np.zeros((2, 128), F32), 1.5), f"{N}expected an int for index, got float"),
        ((np.zeros((2, 128), F32), True), f"{N}expected an int for index, got bool"),
    ],
)  # fmt: skip
def test_call_errors_name_argument_and_mismatch(args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(CallError, match=re.escape(message)) as info:
        dvm.interpret(SOFTMAX_LIKE, *args)
    assert isinstance(info.value, DvmError) and isinstance(info.value, ValueError)


def test_unnamed_arguments_are_named_by_position() -> None:
    module = dvm.parse(unary_program("neg", ttype("4", F32)))
    module.body.block.ops.first.body.block.args[0].name_hint = None  # type: ignore[union-attr]
    with pytest.raises(CallError, match=r"argument 0: axis 0 must be 4"):
        dvm.interpret(module, np.zeros(3, F32))


def test_run_time_shape_errors_name_the_op() -> None:
    add = binary_program("add", ttype("?", F32), ttype("?", F32), ttype("?", F32))
    with pytest.raises(
        ShapeError, match=r":2:3: %y = tensor.add: operand shapes \(3,\), \(4,\) do not broadcast"
    ):
        dvm.interpret(add, np.zeros(3, F32), np.zeros(4, F32))
    claims_static = binary_program("add", ttype("?", F32), ttype("?", F32), ttype("4", F32))
    assert dvm.interpret(claims_static, np.zeros(4, F32), np.zeros(1, F32)).shape == (4,)
    contradicts = r"%y = tensor.add: computed shape \(5,\), .* tensor<4xf32>"
    with pytest.raises(ShapeError, match=contradicts):
        dvm.interpret(claims_static, np.zeros(5, F32), np.zeros(1, F32))


# --------------------------------------------------------------------------
# dvm.numerics used directly (later levels do): no warnings, defined edge cases
# --------------------------------------------------------------------------


def test_numerics_integer_division_family() -> None:
    a = arr([7, -7, 7, -7, 5, -128], I8)
    b = arr([2, 2, -2, -2, 0, -1], I8)
    assert_same(numerics.divide(a, b), arr([3, -3, -3, 3, 0, -128], I8))
    assert_same(numerics.remainder(a, b), arr([1, -1, 1, -1, 0, 0], I8))
    assert_same(numerics.floor_divide(a, b), arr([3, -4, -4, 3, 0, -128], I8))
    assert_same(numerics.ceil_divide(a, b), arr([4, -3, -3, 4, 0, -128], I8))


def test_numerics_convert_and_reduce_edge_cases() -> None:
    x = arr([np.nan, np.inf, -np.inf, 1e10, -2.7], F64)
    assert_same(numerics.convert(x, np.uint8), arr([0, 255, 0, 255, 0], np.uint8))
    assert_same(numerics.convert(x, I64), arr([0, 2**63 - 1, -(2**63), 10**10, -2], I64))
    assert_same(numerics.convert(arr([70000.0], F64), F16), arr([np.inf], F16))
    empty = np.zeros((0, 2), F32)
    assert_same(numerics.reduce("mean", empty, [0], keepdims=False), arr([np.nan] * 2, F32))
    assert_same(numerics.reduce("max", empty, [0, 1], keepdims=True), arr([[-np.inf]], F32))
    assert numerics.reduction_identity("min", np.dtype(I32)) == np.iinfo(I32).max
