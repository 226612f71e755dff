"""The math ops (trigonometric and hyperbolic functions, expm1, log1p, isinf, isnan,
sign, remainder, fmod, clamp, integer pow, bitwise ops and shifts) at every level.

Each op runs on a stream of shapes (empty, unit, prime and large dims) through one
compiled program, at the tensor level (`dvm.interpret`), the tile level, the bytecode
level (the interpreter launching the lowered programs on the VM) and compiled
(`dvm.compile`), on both device presets, against numpy (`test_elementwise.expected`:
float64 rounded once, or the op table's reference for integers). Known values pin
down the integer rules the docs state.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from random_programs import SYMBOLS, Generator
from test_elementwise import KIND_DTYPES, NUMPY, assert_close, expected, operand, program
from tolerances import elementwise_tolerance
from xdsl.utils.exceptions import VerifyException

import dvm
import dvm.pipeline as pipeline
from dvm.dialects.elementwise import BY_OP_NAME
from dvm.numerics import is_float_dtype

MATH_OPS = [
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
    "expm1",
    "log1p",
    "isinf",
    "isnan",
    "sign",
    "remainder",
    "fmod",
    "pow",
    "bitwise_not",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "shl",
    "shr",
]

SHAPES = [(0, 3), (3, 0), (1, 1), (1, 13), (7, 31), (2, 4099), (1, 65537)]
"""First operands' shapes (a second operand is one row, broadcast): empty, unit, prime
and large dims, all through one compiled program."""

DEVICES = ("host", "ascend910b")
TILES = "symbolic-shapes,fuse,stack,convert-tensor-to-tile{device=D}"


def levels(text: str, device: str) -> dict[str, Callable[..., Any]]:
    """Each level's way to run `text`, compiled once (so the shapes stream through it)."""
    tiles = pipeline.run(text, TILES.replace("D", device))
    bytecode = pipeline.run(text, f"dvm-pipeline{{device={device}}}")
    compiled = dvm.compile(text, device=device)
    return {
        "tensor": lambda *args: dvm.interpret(text, *args),
        "tile": lambda *args: dvm.interpret(tiles, *args),
        "bytecode": lambda *args: dvm.interpret(bytecode, *args),
        "vm": compiled,
    }


def second_operand(
    op: str, rng: np.random.Generator, dtype: str, shape: tuple[int, ...]
) -> np.ndarray:
    """A right operand with values that exercise the op: shift amounts around the bit
    width (negative ones included), small integer exponents, else `operand`'s values."""
    np_dtype = np.dtype(NUMPY[dtype])
    if np_dtype.kind in "iu" and op in ("shl", "shr"):
        bits = 8 * np_dtype.itemsize
        low = -2 if np_dtype.kind == "i" else 0
        return rng.integers(low, bits + 3, shape).astype(np_dtype)
    if np_dtype.kind in "iu" and op == "pow":
        low = -3 if np_dtype.kind == "i" else 0
        return rng.integers(low, 12, shape).astype(np_dtype)
    return operand(rng, dtype, shape)


STREAMED = ("f16", "bf16", "f32", "i8", "ui8", "i32", "ui64")
"""The element types the shape streams run on (test_elementwise runs every op on every
type it accepts, on one shape)."""


def cases() -> list[Any]:
    out = []
    for op in MATH_OPS:
        dtypes = [d for d in KIND_DTYPES[BY_OP_NAME[op].operand_kind] if d in STREAMED]
        for device in DEVICES:
            # the second preset tiles differently: one type of each kind is enough there
            chosen = dtypes if device == "host" else dtypes[2:3] + dtypes[-1:]
            out += [pytest.param(op, d, device, id=f"{op}-{d}-{device}") for d in chosen]
    return out


@pytest.mark.parametrize(("op", "dtype", "device"), cases())
def test_the_op_matches_numpy_at_every_level_on_every_shape(
    op: str, dtype: str, device: str, rng: np.random.Generator
) -> None:
    spec = BY_OP_NAME[op]
    runs = levels(program(spec, dtype), device)
    for shape in SHAPES:
        args = [operand(rng, dtype, shape)]
        if spec.arity == 2:
            args.append(second_operand(op, rng, dtype, shape[1:]))
        want = expected(spec, args)
        tol = elementwise_tolerance(op, want.dtype) if is_float_dtype(want.dtype) else 0.0
        for level, run in runs.items():
            got = run(*args)
            where = f"{level} on shape {shape}"
            assert got.dtype == want.dtype and got.shape == want.shape, where
            assert_close(got, want, tol, where)


def run_everywhere(text: str, *args: np.ndarray) -> list[np.ndarray]:
    """`text` on `args` at every level, on both presets, all equal; the result."""
    results = [run(*args) for device in DEVICES for run in levels(text, device).values()]
    for got in results[1:]:
        np.testing.assert_array_equal(got, results[0])
    return results[0]


def binary_program(op: str, dtype: str) -> str:
    t = f"tensor<?x{dtype}>"
    return f"""func.func @f(%a: {t}, %b: {t}) -> {t} {{
  %r = tensor.{op} %a, %b : ({t}, {t}) -> {t}
  func.return %r : {t}
}}"""


# ---------------------------------------------------------------------------
# Integer rules, by known values
# ---------------------------------------------------------------------------

SHIFTS = [
    # (op, dtype, a, b, a op b)
    ("shl", "i8", [1, 1, 1, -1, 3, 5], [7, 8, 100, 1, -1, 0], [-128, 0, 0, -2, 0, 5]),
    ("shr", "i8", [-128, -128, -128, 64, 64, -1], [7, 8, 100, 6, -1, 3], [-1, -1, -1, 1, 0, -1]),
    ("shl", "i32", [1, 1, 7], [31, 32, 33], [-(2**31), 0, 0]),
    ("shr", "i64", [-(2**63), 2**62, -5], [63, 64, 1], [-1, 0, -3]),
]


@pytest.mark.parametrize(("op", "dtype", "a", "b", "want"), SHIFTS)
def test_shifts_by_the_width_or_more_shift_every_bit_out(
    op: str, dtype: str, a: list[int], b: list[int], want: list[int]
) -> None:
    np_dtype = NUMPY[dtype]
    got = run_everywhere(binary_program(op, dtype), np.array(a, np_dtype), np.array(b, np_dtype))
    np.testing.assert_array_equal(got, np.array(want, np_dtype))


def test_remainder_takes_the_divisors_sign_and_fmod_the_dividends() -> None:
    a = np.array([7, -7, 7, -7, 5, -128, 0], np.int8)
    b = np.array([3, 3, -3, -3, 0, -1, 0], np.int8)
    remainder = run_everywhere(binary_program("remainder", "i8"), a, b)
    fmod = run_everywhere(binary_program("fmod", "i8"), a, b)
    np.testing.assert_array_equal(remainder, [1, 2, -2, -1, 0, 0, 0])
    np.testing.assert_array_equal(fmod, [1, -1, 1, -1, 0, 0, 0])
    x = np.array([7.5, -7.5, 7.5, -0.0, 1.0, np.inf], np.float32)
    y = np.array([2.0, 2.0, -2.0, 3.0, 0.0, 2.0], np.float32)
    remainder = run_everywhere(binary_program("remainder", "f32"), x, y)
    np.testing.assert_array_equal(remainder, [1.5, 0.5, -0.5, 0, np.nan, np.nan])
    fmod = run_everywhere(binary_program("fmod", "f32"), x, y)
    np.testing.assert_array_equal(fmod, [1.5, -1.5, 1.5, -0.0, np.nan, np.nan])


def test_integer_pow_is_exact_and_defines_negative_exponents() -> None:
    a = np.array([3, 2, 2, -3, 1, -1, -1, 0, 5, 0], np.int64)
    b = np.array([39, 62, 64, 3, -7, -3, -4, -1, -1, 0], np.int64)
    want = [3**39, 2**62, 0, -27, 1, -1, 1, 0, 0, 1]
    np.testing.assert_array_equal(run_everywhere(binary_program("pow", "i64"), a, b), want)
    small = np.array([3, -2, 7], np.int8)
    got = run_everywhere(binary_program("pow", "i8"), small, np.array([5, 7, 9], np.int8))
    wrapped = [(x**e + 128) % 256 - 128 for x, e in ((3, 5), (-2, 7), (7, 9))]
    np.testing.assert_array_equal(got, wrapped)  # 3**5 = 243 wraps to -13


def test_bitwise_ops_on_known_bits() -> None:
    a = np.array([0b1100, -1, 0, 0x7F], np.int8)
    b = np.array([0b1010, 0x0F, -1, -128], np.int8)
    for op, want in (("bitwise_and", [8, 15, 0, 0]), ("bitwise_or", [14, -1, -1, -1])):
        np.testing.assert_array_equal(run_everywhere(binary_program(op, "i8"), a, b), want)
    np.testing.assert_array_equal(
        run_everywhere(binary_program("bitwise_xor", "i8"), a, b), [6, -16, -1, -1]
    )
    text = """func.func @f(%a: tensor<?xi32>) -> tensor<?xi32> {
  %r = tensor.bitwise_not %a : tensor<?xi32>
  func.return %r : tensor<?xi32>
}"""
    got = run_everywhere(text, np.array([0, -1, 5, 2**31 - 1], np.int32))
    np.testing.assert_array_equal(got, [-1, 0, -6, -(2**31)])


def test_an_overflow_guard_is_one_kernel(rng: np.random.Generator) -> None:
    """isinf or isnan, then select: one launch, as a model's overflow guard wants."""
    text = """func.func @f(%x: tensor<?x?xf16>) -> tensor<?x?xf16> {
  %zero = arith.constant dense<0.0> : tensor<f16>
  %inf = tensor.isinf %x : tensor<?x?xf16> -> tensor<?x?xi1>
  %nan = tensor.isnan %x : tensor<?x?xf16> -> tensor<?x?xi1>
  %bad = tensor.logical_or %inf, %nan : (tensor<?x?xi1>, tensor<?x?xi1>) -> tensor<?x?xi1>
  %r = tensor.select %bad, %zero, %x
      : (tensor<?x?xi1>, tensor<f16>, tensor<?x?xf16>) -> tensor<?x?xf16>
  func.return %r : tensor<?x?xf16>
}"""
    with np.errstate(over="ignore"):  # some overflow to inf
        x = (rng.standard_normal((5, 9)) * 3e4).astype(np.float16)
    x[0, :3] = [np.nan, np.inf, -np.inf]
    got, stats = dvm.compile(text).profile(x)
    assert len(stats) == 1
    np.testing.assert_array_equal(got, np.where(np.isfinite(x), x, np.float16(0)))
    np.testing.assert_array_equal(run_everywhere(text, x), got)


# ---------------------------------------------------------------------------
# clamp
# ---------------------------------------------------------------------------

CLAMP = """func.func @f(%x: tensor<?x?xT>, %lo: tensor<?xT>, %hi: tensor<T>) -> tensor<?x?xT> {
  %r = tensor.clamp %x, %lo, %hi : (tensor<?x?xT>, tensor<?xT>, tensor<T>) -> tensor<?x?xT>
  func.return %r : tensor<?x?xT>
}"""


@pytest.mark.parametrize("dtype", STREAMED)
def test_clamp_matches_numpy_clip_on_every_shape(dtype: str, rng: np.random.Generator) -> None:
    text = CLAMP.replace("T", dtype)
    for device in DEVICES:
        runs = levels(text, device)
        for shape in SHAPES:
            x, lo = operand(rng, dtype, shape), operand(rng, dtype, shape[1:])
            hi = operand(rng, dtype, ())
            want = np.clip(x, lo, hi)  # lo > hi gives hi, as np.clip does
            for level, run in runs.items():
                got = run(x, lo, hi)
                where = f"{level} on {device}, shape {shape}"
                np.testing.assert_array_equal(got, want, err_msg=where)


def test_clamp_by_constants_is_two_scalar_instructions_in_one_kernel() -> None:
    """relu6: `max.rs` then `min.rs`, fused with what follows; NaN propagates."""
    text = """func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
  %lo = arith.constant dense<0.0> : tensor<f32>
  %hi = arith.constant dense<6.0> : tensor<f32>
  %c = tensor.clamp %x, %lo, %hi : (tensor<?xf32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  %r = tensor.mul %c, %c : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}"""
    x = np.array([-1.0, 0.5, 7.0, np.nan, -np.inf, np.inf], np.float32)
    got, stats = dvm.compile(text).profile(x)
    ((_, launch),) = stats
    assert launch.instructions.get("max.rs") and launch.instructions.get("min.rs")
    np.testing.assert_array_equal(got, np.clip(x, 0, 6) ** 2)
    np.testing.assert_array_equal(run_everywhere(text, x), got)


# ---------------------------------------------------------------------------
# Verifiers
# ---------------------------------------------------------------------------

REJECTED = [
    (
        "%r = tensor.bitwise_and %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
        "'tensor.bitwise_and' lhs has element type f32, expected an integer type",
    ),
    (
        "%r = tensor.shl %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
        "'tensor.shl' lhs has element type f32, expected an integer type",
    ),
    (
        "%r = tensor.bitwise_not %a : tensor<4xf32>",
        "'tensor.bitwise_not' operand has element type f32, expected an integer type",
    ),
    (
        "%r = tensor.tan %i : tensor<4xi32>",
        "'tensor.tan' operand has element type i32, expected a float type",
    ),
    (
        "%r = tensor.isnan %i : tensor<4xi32> -> tensor<4xi1>",
        "'tensor.isnan' operand has element type i32, expected a float type",
    ),
    (
        "%r = tensor.sign %p : tensor<4xi1>",
        "'tensor.sign' operand has element type i1, expected a numeric type",
    ),
    (
        "%r = tensor.clamp %a, %i, %i : (tensor<4xf32>, tensor<4xi32>, tensor<4xi32>) "
        "-> tensor<4xf32>",
        "'tensor.clamp' operand, bounds and result must have one element type",
    ),
    (
        "%r = tensor.clamp %a, %a, %a : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) "
        "-> tensor<5xf32>",
        "'tensor.clamp' result type tensor<5xf32> has dim 5 at axis 0, expected 4",
    ),
]


@pytest.mark.parametrize(("line", "message"), REJECTED)
def test_the_verifier_names_the_op_and_the_type(line: str, message: str) -> None:
    text = f"""func.func @f(%a: tensor<4xf32>, %i: tensor<4xi32>, %p: tensor<4xi1>) {{
  {line}
  func.return
}}"""
    with pytest.raises(VerifyException) as error:
        dvm.parse(text)
    assert message in str(error.value)


def test_a_rank0_argument_stays_rank0_at_the_tile_level() -> None:
    """A 0-d argument (a scalar bound, say) keeps its rank when the interpreter launches
    a kernel's tiles (np.ascontiguousarray alone makes it rank 1)."""
    text = """func.func @f(%x: tensor<?xf32>, %s: tensor<f32>) -> tensor<?xf32> {
  %r = tensor.max %x, %s : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}"""
    x, s = np.array([-1.0, 2.0, 0.5], np.float32), np.array(1.0, np.float32)
    got = run_everywhere(text, x, s)
    np.testing.assert_array_equal(got, [1.0, 2.0, 1.0])


# ---------------------------------------------------------------------------
# The random programs draw them
# ---------------------------------------------------------------------------


def test_random_programs_draw_the_math_ops() -> None:
    """The generator's math and clamp steps make every math op (the random program
    tests run what they make)."""
    seen: set[str] = set()

    @settings(max_examples=200, deadline=None, database=None, derandomize=True)
    @given(data=st.data())
    def collect(data: st.DataObject) -> None:
        g = Generator(data.draw, SYMBOLS)
        for _ in range(6):
            g.pick([g.op_math, g.op_math, g.op_clamp])()
        seen.update(re.findall(r"tensor\.(\w+)", "\n".join(g.blocks[0])))

    collect()
    missing = {*MATH_OPS, "clamp"} - seen
    assert not missing, sorted(missing)
