"""Numbers in program text: float constants survive printing bit for bit, hex float
literals are bit patterns, and literals that do not fit their type are located errors.

See `dvm/literals.py` (parsing) and `dvm/dialects/dense.py` (printing).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, ModuleOp
from xdsl.utils.exceptions import ParseError

import dvm
from dvm.tools.dvm_opt import main as dvm_opt

FLOATS = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
UNSIGNED = {16: np.uint16, 32: np.uint32, 64: np.uint64}


def special_bits(dtype: Any) -> list[int]:
    """Bit patterns of the values a round trip can lose: signed zeros, subnormals, the
    extremes, infinities, quiet and signaling NaNs with payloads; then random ones."""
    info = np.finfo(dtype)
    unsigned = UNSIGNED[info.bits]

    def bits(value: float) -> int:
        return int(np.array(value, dtype).view(unsigned))

    values = [0.0, -0.0, info.smallest_subnormal, -info.smallest_subnormal]
    values += [info.smallest_normal, info.max, -info.max, info.eps, 1 / 3, 0.1, -2.5]
    patterns = [bits(v) for v in values]
    patterns.append(bits(info.smallest_normal) - 1)  # the largest subnormal
    infinity = bits(np.inf)
    sign = 1 << (info.bits - 1)
    quiet = 1 << (info.nmant - 1)
    patterns += [infinity, infinity | sign]
    patterns += [infinity | quiet, infinity | quiet | sign, infinity | quiet | 1, infinity | 1]
    rng = np.random.default_rng(28)
    patterns += [int(b) for b in rng.integers(0, 2**info.bits, size=64, dtype=np.uint64)]
    return patterns


def constant(module: ModuleOp) -> DenseIntOrFPElementsAttr | FloatAttr:
    op = next(op for op in module.walk() if isinstance(op, ConstantOp))
    assert isinstance(op.value, DenseIntOrFPElementsAttr | FloatAttr)
    return op.value


def program(literal: str, type_: str) -> str:
    return f"""func.func @main() -> {type_} {{
  %k = arith.constant {literal} : {type_}
  func.return %k : {type_}
}}
"""


def dense_bytes(text: str) -> bytes:
    value = constant(dvm.parse(text))
    assert isinstance(value, DenseIntOrFPElementsAttr)
    return value.data.data


@pytest.mark.parametrize("repeats", [1, 3])  # 3: over 100 elements, printed as hex data
@pytest.mark.parametrize("name", FLOATS)
def test_hex_literal_is_the_bit_pattern_and_round_trips(name: str, repeats: int) -> None:
    dtype = FLOATS[name]
    patterns = special_bits(dtype) * repeats
    width = np.finfo(dtype).bits
    literal = "dense<[" + ", ".join(f"0x{b:0{width // 4}X}" for b in patterns) + "]>"
    text = program(literal, f"tensor<{len(patterns)}x{name}>")
    expected = b"".join(b.to_bytes(width // 8, "little") for b in patterns)
    assert dense_bytes(text) == expected
    printed = str(dvm.parse(text))
    assert dense_bytes(printed) == expected
    assert str(dvm.parse(printed)) == printed


@pytest.mark.parametrize("name", FLOATS)
def test_every_special_value_round_trips_as_a_splat(name: str) -> None:
    dtype = FLOATS[name]
    width = np.finfo(dtype).bits
    for pattern in special_bits(dtype):
        text = program(f"dense<0x{pattern:X}>", f"tensor<3x{name}>")
        printed = str(dvm.parse(text))
        want = pattern.to_bytes(width // 8, "little") * 3
        assert dense_bytes(printed) == want, printed


@pytest.mark.parametrize("name", FLOATS)
def test_written_special_values(name: str) -> None:
    dtype = FLOATS[name]
    literal = "dense<[-inf, inf, nan, -nan, -0.0, 0.0]>"
    got = np.frombuffer(dense_bytes(program(literal, f"tensor<6x{name}>")), dtype)
    np.testing.assert_array_equal(got[:2], [-np.inf, np.inf])
    assert np.isnan(got[2]) and not np.signbit(got[2])
    assert np.isnan(got[3]) and np.signbit(got[3])
    assert np.signbit(got[4]) and not np.signbit(got[5]) and got[4] == 0 == got[5]


@pytest.mark.parametrize(
    ("literal", "name", "value"),
    [
        ("1.0e-45", "f32", np.float32(1.0e-45)),  # the smallest subnormal
        ("5.0e-324", "f64", np.float64(5.0e-324)),
        ("6.0e-8", "f16", np.float16(6.0e-8)),
        ("65519.0", "f16", np.float16(65504.0)),  # rounds to the largest finite value
        ("0.1", "f16", np.float16(0.1)),
    ],
)
def test_decimal_literal_is_the_nearest_value(literal: str, name: str, value: Any) -> None:
    got = np.frombuffer(dense_bytes(program(f"dense<{literal}>", f"tensor<{name}>")), FLOATS[name])
    assert got.tobytes() == np.array(value).tobytes()


def test_mixed_signed_zeros_are_not_a_splat() -> None:
    text = program("dense<[0.0, -0.0]>", "tensor<2xf32>")
    printed = str(dvm.parse(text))
    assert "dense<[0.000000e+00, -0.000000e+00]>" in printed
    assert dense_bytes(printed) == np.array([0.0, -0.0], np.float32).tobytes()


@pytest.mark.parametrize("name", ["f32", "f64"])
def test_scalar_float_constants_round_trip(name: str) -> None:
    dtype = FLOATS[name]
    for pattern in special_bits(dtype):
        value = np.array(pattern, UNSIGNED[np.finfo(dtype).bits]).view(dtype)
        if np.isnan(value) and not pattern & (1 << (np.finfo(dtype).nmant - 1)):
            continue  # a scalar holds a Python float, which quiets a signaling NaN
        printed = str(dvm.parse(program(f"0x{pattern:X}", name)))
        attr = constant(dvm.parse(printed))
        assert isinstance(attr, FloatAttr)
        assert np.array(attr.value.data, dtype).tobytes() == value.tobytes(), printed


def test_dvm_opt_output_parses_back_to_itself(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = program("dense<[-inf, inf, nan, -0.0, 1.0e-45, 0x7FC00001]>", "tensor<6xf32>")
    source = tmp_path / "f.mlir"
    source.write_text(text)
    assert dvm_opt([str(source)]) == 0
    first = capsys.readouterr().out
    again = tmp_path / "g.mlir"
    again.write_text(first)
    assert dvm_opt([str(again)]) == 0
    assert capsys.readouterr().out == first
    assert dense_bytes(first) == dense_bytes(text)


# Literals that do not fit: located errors -------------------------------------


@pytest.mark.parametrize(
    ("literal", "type_", "culprit", "message"),
    [
        ("dense<1.0e39>", "tensor<f32>", "1.0e39", "float literal 1.0e39 is out of range for f32"),
        ("dense<65520.0>", "tensor<f16>", "65520.0", "float literal 65520.0 is out of range"),
        ("dense<1.0e309>", "tensor<f64>", "1.0e309", "float literal 1.0e309 is out of range"),
        ("dense<[1.0, -1.0e39]>", "tensor<2xf32>", "-1.0e39", "float literal -1.0e39 is out"),
        ("1.0e39", "f32", "1.0e39", "float literal 1.0e39 is out of range for f32"),
        ("dense<0x1FF800000>", "tensor<f32>", "0x1FF800000", "has more bits than f32 (32)"),
        ("dense<0x10000>", "tensor<f16>", "0x10000", "has more bits than f16 (16)"),
        ("dense<-0xFF800000>", "tensor<f32>", "-0xFF800000", "is a bit pattern and takes no sign"),
        ("-0x7F800000", "f32", "-0x7F800000", "is a bit pattern and takes no sign"),
        ("dense<2>", "tensor<i1>", "2", "integer literal 2 is out of range for i1 (-1 to 1)"),
        ("dense<300>", "tensor<i8>", "300", "literal 300 is out of range for i8 (-128 to 255)"),
        ("dense<[0, -129]>", "tensor<2xi8>", "-129", "literal -129 is out of range for i8"),
        ("dense<4294967296>", "tensor<i32>", "4294967296", "is out of range for i32"),
        ("dense<-9223372036854775809>", "tensor<i64>", "-9", "is out of range for i64"),
        ("dense<9223372036854775808>", "tensor<index>", "9", "is out of range for index"),
        ("300", "i8", "300", "integer literal 300 is out of range for i8 (-128 to 255)"),
        ("99999999999999999999", "index", "9", "is out of range for index"),
        ("dense<1.5>", "tensor<i32>", "1.5", "expected an integer literal for i32, got 1.5"),
        ("dense<true>", "tensor<i8>", "true", "true and false are i1 values, not i8 ones"),
    ],
)
def test_literal_that_does_not_fit_is_a_located_error(
    literal: str, type_: str, culprit: str, message: str
) -> None:
    text = program(literal, type_)
    with pytest.raises(ParseError) as info:
        dvm.parse(text)
    first = str(info.value).splitlines()[0]
    column = text.splitlines()[1].index(culprit, len("  %k = arith.constant")) + 1
    assert first.startswith(f"<string>:2:{column}: error: "), first
    assert message in first


# A nanoGPT-style masked_fill(-inf) --------------------------------------------

MASKED_SOFTMAX = """
func.func @main(%scores: tensor<?x?x?xf32>, %keep: tensor<?x?xi1>) -> tensor<?x?x?xf32> {
  %ninf = arith.constant dense<-inf> : tensor<f32>
  %masked = tensor.select %keep, %scores, %ninf
      : (tensor<?x?xi1>, tensor<?x?x?xf32>, tensor<f32>) -> tensor<?x?x?xf32>
  %m = tensor.reduce_max %masked {axes = [2], keepdims = true}
      : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %d = tensor.sub %masked, %m : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %e = tensor.exp %d : tensor<?x?x?xf32>
  %s = tensor.reduce_sum %e {axes = [2], keepdims = true} : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %p = tensor.div %e, %s : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  func.return %p : tensor<?x?x?xf32>
}
"""


@pytest.mark.parametrize("printed_first", [False, True])
def test_causal_masked_softmax_with_minus_inf(printed_first: bool) -> None:
    text = str(dvm.parse(MASKED_SOFTMAX)) if printed_first else MASKED_SOFTMAX
    rng = np.random.default_rng(7)
    scores = rng.standard_normal((3, 6, 6)).astype(np.float32)
    causal = np.tril(np.ones((6, 6), bool))
    want = dvm.interpret(text, scores, causal)
    got = dvm.compile(text)(scores, causal)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    assert np.all(got[:, ~causal] == 0)  # exp(-inf) is exactly 0
    np.testing.assert_allclose(got.sum(axis=2), 1, rtol=1e-6)
    exact = np.where(causal, scores, -np.inf)
    exact = np.exp(exact - exact.max(axis=2, keepdims=True))
    np.testing.assert_allclose(got, exact / exact.sum(axis=2, keepdims=True), rtol=1e-5)


@pytest.mark.parametrize("pipeline", ["dvm-pipeline", "dvm-pipeline{device=ascend910b}"])
def test_every_level_prints_minus_inf_so_it_parses_back(
    pipeline: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The -inf reaches the tile and bytecode levels as a scalar (`bytecode.fill r0, -inf`)."""
    source = tmp_path / "softmax.mlir"
    source.write_text(MASKED_SOFTMAX)
    assert dvm_opt([str(source), "-p", pipeline]) == 0
    lowered = capsys.readouterr().out
    assert "-inf" in lowered
    again = tmp_path / "lowered.mlir"
    again.write_text(lowered)
    assert dvm_opt([str(again)]) == 0
    assert capsys.readouterr().out == lowered


SELECT_ZERO = """func.func @main(%c: tensor<?x?xi1>, %x: tensor<?x?xf32>, %d: tensor<?xi1>,
    %y: tensor<?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>) {
  %k = arith.constant dense<FIRST> : tensor<f32>
  %l = arith.constant dense<SECOND> : tensor<f32>
  %a = tensor.select %c, %k, %x : (tensor<?x?xi1>, tensor<f32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %b = tensor.select %d, %l, %y : (tensor<?xi1>, tensor<f32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %a, %b : tensor<?x?xf32>, tensor<?xf32>
}"""


def test_zeros_of_either_sign_keep_their_sign_in_every_program() -> None:
    """0.0 and -0.0 are equal floats: programs (and kernels of one program) that differ
    only in a zero's sign are compiled in one process, each keeping its own."""
    c, x = np.array([[True, False]]), np.ones((1, 2), np.float32)
    d, y = np.array([True, False]), np.ones(2, np.float32)
    for first, second in [("-0.0", "0.0"), ("0.0", "-0.0"), ("-0.0", "-0.0"), ("0.0", "0.0")]:
        text = SELECT_ZERO.replace("FIRST", first).replace("SECOND", second)
        a, b = dvm.compile(text, cache=False)(c, x, d, y)
        assert np.signbit(a[0, 0]) == first.startswith("-"), (first, second)
        assert np.signbit(b[0]) == second.startswith("-"), (first, second)
        assert a[0, 1] == b[1] == 1
