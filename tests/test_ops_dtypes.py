"""The element types u8, i16, u16, u32, u64 and bf16 (and the others) at every level.

`tensor.convert` between every pair of element types runs at the tensor, tile,
bytecode and VM levels on both presets against a reference written here from the
documented rules alone: exact rational arithmetic rounding to nearest even (so it
also checks `ml_dtypes`' bf16 casts), truncation with saturation from floats to
integers, wrapping between integers. Unsigned values above the signed range go
through division, comparison, max/min, shifts and reductions without a signed
reinterpretation; the programs survive the `.dvmb` round trip; the verifier names
the op and the type it rejects. (Every elementwise op on every type it accepts:
tests/test_elementwise.py.)
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from test_elementwise import NUMPY
from test_ops_math import DEVICES, levels, run_everywhere
from xdsl.utils.exceptions import VerifyException

import dvm
import dvm.pipeline as pipeline
from dvm import vm
from dvm.dialects.bytecode import ProgramOp
from dvm.errors import CallError
from dvm.lowering.bytecode_to_vm import decode_module, encode_module, to_program
from dvm.tools import dvm_run

TYPES = ("i1", "i8", "ui8", "i16", "ui16", "i32", "ui32", "i64", "ui64")
TYPES += ("f16", "bf16", "f32", "f64")

FLOAT_FORMATS = {"f16": (11, -14, 15), "bf16": (8, -126, 127), "f32": (24, -126, 127)}
FLOAT_FORMATS["f64"] = (53, -1022, 1023)
"""Each float type's precision in bits, smallest normal and largest exponent."""


# ---------------------------------------------------------------------------
# The reference: the documented rules on exact values
# ---------------------------------------------------------------------------


def round_to_float(value: Fraction, target: str) -> float:
    """`value` rounded to nearest, ties to even, in the float type `target` (inf beyond
    its largest finite value), as a Python float (every such value is one)."""
    precision, min_exp, max_exp = FLOAT_FORMATS[target]
    if value == 0:
        return 0.0
    magnitude = abs(value)
    exp = math.floor(math.log2(magnitude))
    exp += 1 if Fraction(2) ** (exp + 1) <= magnitude else 0  # log2 may be off by one
    exp -= 1 if Fraction(2) ** exp > magnitude else 0
    quantum = Fraction(2) ** (max(exp, min_exp) - precision + 1)
    steps = magnitude / quantum
    whole = math.floor(steps)
    if steps - whole > Fraction(1, 2) or (steps - whole == Fraction(1, 2) and whole % 2):
        whole += 1
    rounded = whole * quantum
    largest = (2 - Fraction(2) ** (1 - precision)) * Fraction(2) ** max_exp
    result = math.inf if rounded > largest else float(rounded)
    return math.copysign(result, value)


def convert_one(value: Any, target: str) -> Any:
    """One element converted as `tensor.convert` is documented to convert it."""
    if isinstance(value, float) and target == "i1":
        return value != 0  # NaN too
    if isinstance(value, float) and target in FLOAT_FORMATS:
        if not math.isfinite(value):
            return value
        return math.copysign(round_to_float(Fraction(value), target), value)
    if isinstance(value, float):  # to an integer: truncated, saturated, NaN is 0
        info = np.iinfo(NUMPY[target])
        if math.isnan(value):
            return 0
        whole = math.trunc(value) if math.isfinite(value) else int(math.copysign(2**64, value))
        return min(max(whole, info.min), info.max)
    number = int(value)
    if target == "i1":
        return number != 0
    if target in FLOAT_FORMATS:
        return round_to_float(Fraction(number), target)
    info = np.iinfo(NUMPY[target])
    return (number - info.min) % 2**info.bits + info.min  # wraps around


def sources(dtype: str) -> np.ndarray:
    """Values of `dtype` that test conversions: ties, boundaries of every type's range,
    integers just beyond a float type's precision, signed zeros, inf and NaN."""
    if dtype == "i1":
        return np.array([False, True])
    np_dtype = np.dtype(NUMPY[dtype])
    if dtype in FLOAT_FORMATS:
        values = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.1, 1 / 3, 127.9, 128.0, -128.5]
        values += [-129.0, 255.5, 256.0, -1.0, 65504.0, 65519.0, 65520.0, 65535.5, 6e-8]
        values += [2.0**31, -(2.0**31) - 1, 2.0**32, 2.0**63, -(2.0**63), 2.0**64, 1e30]
        values += [-1e30, 3.39e38, 1e300, math.inf, -math.inf, math.nan, 2.0**-130]
        values += [1 + 2.0**-8 + 2.0**-20, 1 + 2.0**-11 + 2.0**-30, 1 + 2.0**-24 + 2.0**-40]
        with np.errstate(over="ignore", under="ignore"):
            return np.array(values, np.float64).astype(np_dtype)
    info = np.iinfo(np_dtype)
    candidates = [0, 1, -1, 127, 128, -129, 255, 256, 2**15, -(2**15) - 1, 2**16 + 1]
    candidates += [2**24 + 1, 2**24 + 3, 2**31 - 1, 2**32 + 5, 2**53 + 1, 2**63 - 1, 2**64 - 1]
    candidates += [info.min, info.max, info.min + 1, info.max - 1, 2**24 + 2**16 + 1]
    return np.array([v for v in candidates if info.min <= v <= info.max], np_dtype)


def expected(values: np.ndarray, target: str) -> np.ndarray:
    items = [float(v) if v.dtype.kind not in "iub" else int(v) for v in values]
    results = [convert_one(v, target) for v in items]
    if target in FLOAT_FORMATS:  # each result is a value of the target type: exact
        return np.array(results, np.float64).astype(NUMPY[target])
    return np.array(results, NUMPY[target])


def convert_all(source: str) -> str:
    t = f"tensor<?x{source}>"
    results = [f"tensor<?x{target}>" for target in TYPES]
    lines = [f"  %r{i} = tensor.convert %x : {t} -> {r}" for i, r in enumerate(results)]
    names = ", ".join(f"%r{i}" for i in range(len(TYPES)))
    return "\n".join(
        [
            f"func.func @f(%x: {t}) -> ({', '.join(results)}) {{",
            *lines,
            f"  func.return {names} : {', '.join(results)}",
            "}",
        ]
    )


def same(got: np.ndarray, want: np.ndarray) -> bool:
    """Equal values, NaN equal to NaN (bf16 compared through f64)."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if want.dtype.kind not in "iub":
        return np.array_equal(got.astype(np.float64), want.astype(np.float64), equal_nan=True)
    return np.array_equal(got, want)


@pytest.mark.parametrize("source", TYPES)
def test_convert_between_every_pair_of_types(source: str) -> None:
    values = sources(source)
    want = [expected(values, target) for target in TYPES]
    for device in DEVICES:
        for level, run in levels(convert_all(source), device).items():
            for target, got, w in zip(TYPES, run(values), want, strict=True):
                where = f"{source} -> {target} at the {level} level on {device}"
                assert same(got, w), f"{where}: {values} gave {got}, expected {w}"


def test_the_reference_rounds_to_nearest_even() -> None:
    """Ties go to the even neighbour; just above a tie goes up; beyond the largest
    value is inf; the smallest subnormals."""
    assert round_to_float(Fraction(1) + Fraction(1, 2**8), "bf16") == 1.0
    assert round_to_float(Fraction(1) + Fraction(3, 2**8), "bf16") == 1 + 2**-6
    assert round_to_float(Fraction(2**24 + 2**16 + 1), "bf16") == 2**24 + 2**17
    assert round_to_float(Fraction(65520), "f16") == math.inf
    assert round_to_float(Fraction(65519), "f16") == 65504.0
    assert round_to_float(Fraction(1, 2**134), "bf16") == 0.0
    assert round_to_float(Fraction(3, 2**135), "bf16") == 2.0**-133


# ---------------------------------------------------------------------------
# Unsigned integers are never read as signed ones
# ---------------------------------------------------------------------------

BIG = 2**63 + 5
"""A u64 value that a signed reading would make negative."""

UNSIGNED_CASES = [
    # (op, dtype, a, b, result)
    ("div", "ui8", [200, 255, 7, 9], [3, 254, 0, 200], [66, 1, 0, 0]),
    ("div", "ui64", [BIG, BIG, 2**64 - 1], [2, BIG, 2**63], [BIG // 2, 1, 1]),
    ("remainder", "ui64", [BIG, 2**64 - 1], [10, 2**63], [BIG % 10, 2**63 - 1]),
    ("max", "ui8", [200, 1, 128], [100, 255, 127], [200, 255, 128]),
    ("min", "ui64", [BIG, 3], [2**62, 2**64 - 1], [2**62, 3]),
    ("shr", "ui8", [200, 255, 128], [1, 7, 8], [100, 1, 0]),
    ("shr", "ui64", [2**64 - 1], [63], [1]),
    ("sub", "ui16", [1, 65535], [2, 65535], [65535, 0]),
    ("pow", "ui64", [3, 2], [40, 64], [3**40 % 2**64, 0]),
]


@pytest.mark.parametrize(("op", "dtype", "a", "b", "want"), UNSIGNED_CASES)
def test_unsigned_arithmetic_on_values_beyond_the_signed_range(
    op: str, dtype: str, a: list[int], b: list[int], want: list[int]
) -> None:
    t = f"tensor<?x{dtype}>"
    text = f"""func.func @f(%a: {t}, %b: {t}) -> {t} {{
  %r = tensor.{op} %a, %b : ({t}, {t}) -> {t}
  func.return %r : {t}
}}"""
    np_dtype = NUMPY[dtype]
    got = run_everywhere(text, np.array(a, np_dtype), np.array(b, np_dtype))
    np.testing.assert_array_equal(got, np.array(want, np_dtype))


@pytest.mark.parametrize("dtype", ["ui8", "ui32", "ui64"])
def test_unsigned_comparisons(dtype: str) -> None:
    t, r = f"tensor<?x{dtype}>", "tensor<?xi1>"
    text = f"""func.func @f(%a: {t}, %b: {t}) -> ({r}, {r}) {{
  %lt = tensor.lt %a, %b : ({t}, {t}) -> {r}
  %ge = tensor.ge %a, %b : ({t}, {t}) -> {r}
  func.return %lt, %ge : {r}, {r}
}}"""
    top = np.iinfo(NUMPY[dtype]).max
    a = np.array([1, top, top // 2 + 1, 0], NUMPY[dtype])
    b = np.array([top, 1, top // 2, 0], NUMPY[dtype])
    results = [run(a, b) for device in DEVICES for run in levels(text, device).values()]
    for lt, ge in results:
        np.testing.assert_array_equal(lt, [True, False, False, False])
        np.testing.assert_array_equal(ge, [False, True, True, True])


REDUCE = """func.func @f(%x: tensor<?x?xT>)
    -> (tensor<?xT>, tensor<?xT>, tensor<?xT>, tensor<?xT>) {
  %s = tensor.reduce_sum %x {axes = [1]} : tensor<?x?xT> -> tensor<?xT>
  %mx = tensor.reduce_max %x {axes = [1]} : tensor<?x?xT> -> tensor<?xT>
  %mn = tensor.reduce_min %x {axes = [1]} : tensor<?x?xT> -> tensor<?xT>
  %p = tensor.reduce_prod %x {axes = [1]} : tensor<?x?xT> -> tensor<?xT>
  func.return %s, %mx, %mn, %p : tensor<?xT>, tensor<?xT>, tensor<?xT>, tensor<?xT>
}"""


@pytest.mark.parametrize("dtype", ["ui8", "i16", "ui16", "ui32", "ui64"])
@pytest.mark.parametrize("shape", [(3, 0), (1, 1), (5, 13), (2, 4099)])
def test_integer_reductions_wrap_and_compare_unsigned(
    dtype: str, shape: tuple[int, int], rng: np.random.Generator
) -> None:
    info = np.iinfo(NUMPY[dtype])
    x = rng.integers(info.min, info.max, shape, dtype=NUMPY[dtype], endpoint=True)
    want = [
        np.sum(x, axis=1, dtype=x.dtype),  # wraps in the type
        np.max(x, axis=1, initial=info.min),
        np.min(x, axis=1, initial=info.max),
        np.prod(x, axis=1, dtype=x.dtype),
    ]
    for got, w in zip(run_everywhere(REDUCE.replace("T", dtype), x), want, strict=True):
        np.testing.assert_array_equal(got, w)


def test_bf16_reductions_and_matmul_accumulate_in_f32(rng: np.random.Generator) -> None:
    """bf16 sums, products and matmuls are computed in f32 and rounded once."""
    bf16 = ml_dtypes.bfloat16
    x = rng.standard_normal((5, 130)).astype(bf16)
    wide = x.astype(np.float32)
    sums, top, bottom, _ = run_everywhere(REDUCE.replace("T", "bf16"), x)
    np.testing.assert_array_equal(sums, wide.sum(axis=1).astype(bf16))
    np.testing.assert_array_equal(top, x.max(axis=1))
    np.testing.assert_array_equal(bottom, x.min(axis=1))
    text = """func.func @f(%a: tensor<?x?xbf16>, %b: tensor<?x?xbf16>) -> tensor<?x?xbf16> {
  %r = tensor.matmul %a, %b : (tensor<?x?xbf16>, tensor<?x?xbf16>) -> tensor<?x?xbf16>
  func.return %r : tensor<?x?xbf16>
}"""
    a, b = x[:, :64], rng.standard_normal((64, 33)).astype(bf16)
    got = run_everywhere(text, a, b).astype(np.float32)
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(bf16).astype(np.float32)
    # f32 sums in any order: a few f32 roundings, far below one bf16 rounding
    np.testing.assert_allclose(got, want, rtol=2**-8, atol=1e-6)


def test_small_integer_matmul_wraps(rng: np.random.Generator) -> None:
    text = """func.func @f(%a: tensor<?x?xui8>, %b: tensor<?x?xui8>) -> tensor<?x?xui8> {
  %r = tensor.matmul %a, %b : (tensor<?x?xui8>, tensor<?x?xui8>) -> tensor<?x?xui8>
  func.return %r : tensor<?x?xui8>
}"""
    a = rng.integers(0, 256, (9, 31), dtype=np.uint8)
    b = rng.integers(0, 256, (31, 5), dtype=np.uint8)
    want = (a.astype(np.int64) @ b.astype(np.int64)) % 256
    np.testing.assert_array_equal(run_everywhere(text, a, b), want)


# ---------------------------------------------------------------------------
# Constants, the binary format and the verifier
# ---------------------------------------------------------------------------


def test_constants_of_the_new_types_fold_into_kernels() -> None:
    text = """func.func @f(%x: tensor<?xbf16>, %u: tensor<?xui8>)
    -> (tensor<?xbf16>, tensor<?xui8>) {
  %k = arith.constant dense<0.1> : tensor<bf16>
  %m = arith.constant dense<[200, 255, 0, 7]> : tensor<4xui8>
  %y = tensor.mul %x, %k : (tensor<?xbf16>, tensor<bf16>) -> tensor<?xbf16>
  %v = tensor.add %u, %m : (tensor<?xui8>, tensor<4xui8>) -> tensor<?xui8>
  func.return %y, %v : tensor<?xbf16>, tensor<?xui8>
}"""
    x = np.array([1, 2, 3, 1e30], ml_dtypes.bfloat16)
    u = np.array([100, 1, 255, 250], np.uint8)
    y, v = run_everywhere(text, x, u)
    np.testing.assert_array_equal(y, x * np.array(0.1, ml_dtypes.bfloat16))
    np.testing.assert_array_equal(v, [44, 0, 255, 1])


@pytest.mark.parametrize("device", DEVICES)
def test_programs_of_every_type_survive_the_binary_round_trip(device: str) -> None:
    sources_ = [convert_all(t).replace("@f", f"@from_{t}") for t in TYPES]
    module = pipeline.run("\n".join(sources_), f"dvm-pipeline{{device={device}}}")
    programs = [op for op in module.ops if isinstance(op, ProgramOp)]
    decoded = decode_module(encode_module(module))
    assert len(decoded) == len(programs)
    dtypes = set()
    for (_, program), original in zip(decoded, programs, strict=True):
        assert program == to_program(original)
        text = vm.disassemble(program)
        assert vm.disassemble(vm.assemble(text)) == text
        dtypes |= {r.dtype for r in program.registers}
    assert dtypes == set(vm.DType)


REJECTED = [
    (
        "tensor<4xbf16>",
        "%r = tensor.bitwise_or %a, %a : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>",
        "'tensor.bitwise_or' lhs has element type bf16, expected an integer type",
    ),
    (
        "tensor<4xui16>",
        "%r = tensor.tanh %a : tensor<4xui16>",
        "'tensor.tanh' operand has element type ui16, expected a float type",
    ),
    (
        "tensor<4xsi8>",
        "%r = tensor.add %a, %a : (tensor<4xsi8>, tensor<4xsi8>) -> tensor<4xsi8>",
        "'tensor.add' lhs has element type si8, expected a numeric type",
    ),
    (
        "tensor<4xi4>",
        "%r = tensor.convert %a : tensor<4xi4> -> tensor<4xi8>",
        "'tensor.convert' operand has element type i4, expected any supported type",
    ),
    (
        "tensor<4xui8>",
        "%r = tensor.add %a, %a : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi8>",
        "'tensor.add' result type tensor<4xi8> must have element type ui8",
    ),
]


@pytest.mark.parametrize(("arg", "line", "message"), REJECTED)
def test_the_verifier_names_the_op_and_the_type(arg: str, line: str, message: str) -> None:
    text = f"""func.func @f(%a: {arg}) {{
  {line}
  func.return
}}"""
    with pytest.raises(VerifyException) as error:
        dvm.parse(text)
    assert message in str(error.value)


def test_a_call_with_the_wrong_new_type_names_the_argument() -> None:
    text = """func.func @f(%a: tensor<?xui8>) -> tensor<?xui8> {
  func.return %a : tensor<?xui8>
}"""
    with pytest.raises(CallError, match=r"expected element type ui8 \(numpy uint8\)"):
        dvm.compile(text)(np.zeros(3, np.int8))


# ---------------------------------------------------------------------------
# Integers that an f64 cannot hold
# ---------------------------------------------------------------------------


def test_float_to_integer_saturates_at_every_level() -> None:
    """The VM's convert once used numpy's cast, which is undefined out of range."""
    text = """func.func @f(%x: tensor<?xf32>) -> (tensor<?xi8>, tensor<?xui8>, tensor<?xi64>) {
  %a = tensor.convert %x : tensor<?xf32> -> tensor<?xi8>
  %b = tensor.convert %x : tensor<?xf32> -> tensor<?xui8>
  %c = tensor.convert %x : tensor<?xf32> -> tensor<?xi64>
  func.return %a, %b, %c : tensor<?xi8>, tensor<?xui8>, tensor<?xi64>
}"""
    x = np.array([np.nan, np.inf, -np.inf, 300.5, -300.5, 1.7, -1.7, 1e19], np.float32)
    i8, u8, i64 = run_everywhere(text, x)
    np.testing.assert_array_equal(i8, [0, 127, -128, 127, -128, 1, -1, 127])
    np.testing.assert_array_equal(u8, [0, 255, 0, 255, 0, 1, 0, 255])
    top, bottom = 2**63 - 1, -(2**63)
    np.testing.assert_array_equal(i64, [0, top, bottom, 300, -300, 1, -1, top])


@pytest.mark.parametrize("dtype", ["i64", "ui64"])
def test_a_chunked_min_starts_from_the_largest_integer(dtype: str) -> None:
    """A row too long for one tile is reduced chunk by chunk from the identity, the
    type's maximum (2**63 - 1, 2**64 - 1), which an f64 immediate rounds up: it must
    saturate, not wrap to the minimum."""
    text = f"""func.func @f(%x: tensor<?x?x{dtype}>) -> tensor<?x{dtype}> {{
  %m = tensor.reduce_min %x {{axes = [1]}} : tensor<?x?x{dtype}> -> tensor<?x{dtype}>
  func.return %m : tensor<?x{dtype}>
}}"""
    x = np.full((2, 300_000), 5, NUMPY[dtype])
    x[1, 123_456] = 3
    for device in DEVICES:
        np.testing.assert_array_equal(dvm.compile(text, device=device)(x), [5, 3])


@pytest.mark.parametrize(("dtype", "value"), [("i64", 2**53 + 1), ("ui64", 2**64 - 3)])
def test_an_integer_constant_beyond_f64_stays_exact(dtype: str, value: int) -> None:
    """A splat integer constant an f64 immediate cannot hold is a kernel input."""
    t = f"tensor<?x{dtype}>"
    text = f"""func.func @f(%x: {t}) -> {t} {{
  %c = arith.constant dense<{value}> : tensor<{dtype}>
  %r = tensor.sub %x, %c : ({t}, tensor<{dtype}>) -> {t}
  func.return %r : {t}
}}"""
    x = np.array([0, 1, 2], NUMPY[dtype])
    want = np.array([(v - value) % 2**64 for v in range(3)], np.uint64).view(NUMPY[dtype])
    np.testing.assert_array_equal(run_everywhere(text, x), want)


def test_dvm_run_makes_and_checks_inputs_of_the_new_types(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """dvm-run draws bf16 inputs from a normal distribution, unsigned ones
    nonnegative, and compares bf16 results to bf16's precision."""
    path = tmp_path / "p.mlir"
    path.write_text("""func.func @f(%x: tensor<?x4xbf16>, %u: tensor<?xui8>)
    -> (tensor<?x4xbf16>, tensor<?xui8>) {
  %y = tensor.sin %x : tensor<?x4xbf16>
  %v = tensor.shl %u, %u : (tensor<?xui8>, tensor<?xui8>) -> tensor<?xui8>
  func.return %y, %v : tensor<?x4xbf16>, tensor<?xui8>
}""")
    assert dvm_run.main([str(path), "--shapes", "3x4", "5", "--check"]) == 0
    out = capsys.readouterr().out
    assert "(3, 4) bfloat16" in out and "(5,) uint8" in out
    assert "check result 0: ok" in out and "check result 1: ok" in out
