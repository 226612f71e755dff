"""`tensor.concat` at every level.

Each program runs in the reference interpreter, after `fuse`, as tile IR, as
bytecode and compiled, on both device presets, on shapes with 0, 1, primes
and large dims, for every element type, and must match numpy's `concatenate`.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_elementwise import NUMPY
from test_ops_slices import PRESETS, check, lowered
from xdsl.utils.exceptions import VerifyException

import dvm
from dvm.errors import CallError, ExecutionError

DTYPES = ("i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64")
DTYPES += ("f16", "bf16", "f32", "f64")


def program(count: int, axis: int, rank: int, element: str) -> str:
    """A concat of `count` arguments of rank `rank`, all dims dynamic."""
    t = f"tensor<{'?x' * rank}{element}>"
    args = ", ".join(f"%a{i}: {t}" for i in range(count))
    names = ", ".join(f"%a{i}" for i in range(count))
    types = ", ".join([t] * count)
    return f"""
func.func @f({args}) -> {t} {{
  %r = tensor.concat dim({axis}) {names} : ({types}) -> {t}
  func.return %r : {t}
}}
"""


def values(shape: tuple[int, ...], element: str, seed: int) -> np.ndarray:
    """Seeded values of `element` (small integers, so every type holds them)."""
    raw = np.random.default_rng(seed).integers(0, 100, shape)
    return (raw % 2 == 1) if element == "i1" else raw.astype(NUMPY[element])


@pytest.mark.parametrize("device", PRESETS)
def test_two_inputs_along_the_last_axis(device: str) -> None:
    src = program(2, 1, 2, "f32")
    rng = np.random.default_rng(0)
    cases = []
    sizes = [(0, 3, 2), (1, 1, 1), (7, 0, 13), (7, 13, 0), (97, 301, 5), (2, 3001, 1499)]
    for rows, left, right in sizes:
        a = rng.standard_normal((rows, left)).astype(np.float32)
        b = rng.standard_normal((rows, right)).astype(np.float32)
        cases.append((a, b))
    check(src, device, cases, lambda a, b: np.concatenate([a, b], axis=1))


@pytest.mark.parametrize("element", DTYPES)
def test_every_element_type(element: str) -> None:
    src = program(3, 0, 2, element)
    cases = [
        tuple(values((rows, 5), element, seed) for seed, rows in enumerate(counts))
        for counts in [(0, 0, 0), (1, 0, 2), (3, 7, 1)]
    ]
    check(src, "host", cases, lambda *xs: np.concatenate(xs, axis=0))


@pytest.mark.parametrize("device", PRESETS)
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_three_inputs_of_rank_three(device: str, axis: int) -> None:
    """Along the outer, middle and inner axis, with empty inputs among them."""
    src = program(3, axis, 3, "f32")
    rng = np.random.default_rng(axis)
    cases = []
    for base, parts in [((2, 3, 5), (1, 0, 4)), ((1, 1, 1), (1, 1, 1)), ((3, 0, 7), (2, 3, 1))]:
        shapes = [tuple(p if a == axis else d for a, d in enumerate(base)) for p in parts]
        cases.append(tuple(rng.standard_normal(s).astype(np.float32) for s in shapes))
    check(src, device, cases, lambda *xs: np.concatenate(xs, axis=axis))


def test_one_input_and_a_large_dim() -> None:
    src = program(1, 0, 1, "f64")
    cases = [(np.arange(n, dtype=np.float64),) for n in (0, 1, 3001)]
    check(src, "host", cases, lambda x: x)
    src = program(2, 0, 2, "i32")
    big = [(values((3001, 3), "i32", 1), values((2, 3), "i32", 2))]
    check(src, "ascend910b", big, lambda a, b: np.concatenate([a, b]))


STATIC = """
func.func @f(%a: tensor<2x?xf32>) -> tensor<3x?xf32> {
  %z = arith.constant dense<7.0> : tensor<1x3xf32>
  %r = tensor.concat dim(0) %a, %z : (tensor<2x?xf32>, tensor<1x3xf32>) -> tensor<3x?xf32>
  func.return %r : tensor<3x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_a_splat_constant_input_and_an_equal_guard(device: str) -> None:
    """A constant input is loaded like any other; the other dims must agree, checked
    when the program runs."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    check(STATIC, device, [(a,)], lambda a: np.concatenate([a, np.full((1, 3), 7, np.float32)]))
    wrong = np.zeros((2, 4), np.float32)
    with pytest.raises(ExecutionError, match=r"tensor\.concat: inputs of shapes 2x4, 1x3"):
        dvm.interpret(STATIC, wrong)
    with pytest.raises(CallError, match=r"tensor\.concat needs a_1 == 3"):
        dvm.compile(STATIC, device=device)(wrong)


def test_inputs_that_differ_off_the_axis_are_an_error() -> None:
    src = program(2, 1, 2, "f32")
    a, b = np.zeros((2, 3), np.float32), np.zeros((3, 3), np.float32)
    with pytest.raises(ExecutionError, match=r"tensor.concat: inputs of shapes 2x3, 3x3 differ"):
        dvm.interpret(src, a, b)
    with pytest.raises(CallError, match=r"tensor.concat needs a0_0 == a1_0"):
        dvm.compile(src)(a, b)


def test_a_concat_and_the_ops_around_it_are_one_kernel() -> None:
    """Its inputs differ along the axis: their producers run in its kernel, one piece
    per input, and its elementwise user moves into the pieces."""
    src = """
func.func @f(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %e = tensor.exp %a : tensor<?x?xf32>
  %r = tensor.concat dim(1) %e, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %n = tensor.neg %r : tensor<?x?xf32>
  func.return %n : tensor<?x?xf32>
}
"""
    assert str(lowered(src, "symbolic-shapes,fuse")).count("tensor.fusion") == 1
    a, b = values((4, 3), "f32", 0) / 50, values((4, 5), "f32", 1)
    check(src, "host", [(a, b)], lambda a, b: -np.concatenate([np.exp(a), b], axis=1))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "tensor.concat dim(2) %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>",
            r"'tensor.concat' dim\(2\) is not an axis of tensor<4x3xf32>",
        ),
        (
            "tensor.concat dim(0) %a, %b : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<4x3xf32>",
            r"'tensor.concat' inputs \(tensor<2x3xf32>, tensor<2x3xi32>\) and result "
            r"tensor<4x3xf32> differ in rank or element type",
        ),
        (
            "tensor.concat dim(0) %a, %b : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>",
            r"differ in dim 1, which is not the concatenated one",
        ),
        (
            "tensor.concat dim(0) %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<5x3xf32>",
            r"'tensor.concat' result type tensor<5x3xf32> has dim 5 at axis 0, expected 4",
        ),
    ],
)
def test_verifier_names_the_op_and_types(text: str, message: str) -> None:
    types = text.split(": (")[1].split(")")[0].split(", ")
    src = f"""
func.func @f(%a: {types[0]}, %b: {types[1]}) -> {text.split("-> ")[1]} {{
  %r = {text}
  func.return %r : {text.split("-> ")[1]}
}}
"""
    with pytest.raises(VerifyException, match=message):
        dvm.parse(src)
