"""Constant `tensor.pad` at every level.

Each program runs in the reference interpreter, after `fuse`, as tile IR, as
bytecode and compiled, on both device presets, on shapes with 0, 1, primes
and large dims, and must match numpy's `pad` with a constant; a negative pad
is a verifier error when constant and an error naming the op when a value.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_ops_concat import DTYPES, values
from test_ops_slices import LEVELS, PRESETS, check, lowered
from xdsl.utils.exceptions import VerifyException

import dvm
from dvm.errors import ExecutionError

ROWS_AND_COLUMNS = """
func.func @f(%t: tensor<?x?xf32>, %l: index, %h: index) -> tensor<?x?xf32> {
  %cst = arith.constant -2.5 : f32
  %r = tensor.pad %t low[1, %l] high[%h, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<?x?xf32> to tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_static_and_dynamic_pads(device: str) -> None:
    rng = np.random.default_rng(0)
    cases = []
    for rows, cols, low, high in [
        (0, 3, 2, 0),
        (1, 1, 0, 0),
        (7, 13, 3, 2),
        (97, 301, 1, 5),
        (3001, 2, 0, 7),
    ]:
        cases.append((rng.standard_normal((rows, cols)).astype(np.float32), low, high))

    def want(t: np.ndarray, low: int, high: int) -> np.ndarray:
        return np.pad(t, ((1, high), (low, 0)), constant_values=-2.5)

    check(ROWS_AND_COLUMNS, device, cases, want)


def constant_of(element: str) -> str:
    """`arith.constant` text of 3 (true) of `element` (a signless one for unsigned)."""
    if element == "i1":
        return "true"
    if element.startswith("ui"):
        return f"3 : i{element[2:]}"
    return f"3.0 : {element}" if element in ("f16", "bf16", "f32", "f64") else f"3 : {element}"


@pytest.mark.parametrize("element", DTYPES)
def test_every_element_type(element: str) -> None:
    src = f"""
func.func @f(%t: tensor<?x?x?x{element}>) -> tensor<?x?x?x{element}> {{
  %c = arith.constant {constant_of(element)}
  %r = tensor.pad %t low[0, 2, 1] high[1, 0, 3] {{
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %c : {"i" + element[2:] if element.startswith("ui") else element}
  }} : tensor<?x?x?x{element}> to tensor<?x?x?x{element}>
  func.return %r : tensor<?x?x?x{element}>
}}
"""
    fill = values((1,), element, 0).dtype.type(True if element == "i1" else 3)
    cases = [
        (values(shape, element, i),) for i, shape in enumerate([(0, 1, 2), (1, 1, 1), (2, 3, 5)])
    ]
    check(src, "host", cases, lambda t: np.pad(t, ((0, 1), (2, 0), (1, 3)), constant_values=fill))


@pytest.mark.parametrize("level", ["interpret", *LEVELS, "compiled"])
def test_a_negative_pad_value_is_an_error_naming_the_op(level: str) -> None:
    t = np.ones((2, 3), np.float32)
    if level == "compiled":
        run = dvm.compile(ROWS_AND_COLUMNS)
    elif level == "interpret":
        run = lambda *a: dvm.interpret(ROWS_AND_COLUMNS, *a)  # noqa: E731
    else:
        module = lowered(ROWS_AND_COLUMNS, level.replace("%s", "host"))
        run = lambda *a: dvm.interpret(module, *a)  # noqa: E731
    with pytest.raises(ExecutionError, match=r"tensor\.pad: slice \[offset -1, size 3"):
        run(t, -1, 0)
    with pytest.raises(ExecutionError, match=r"tensor\.pad: .* of a padded result of shape 2x3"):
        run(t, 0, -1)


def test_a_pad_is_a_kernel_of_its_own_holding_its_constant() -> None:
    text = str(lowered(ROWS_AND_COLUMNS, "symbolic-shapes,fuse"))
    assert text.count("tensor.fusion") == 1
    assert "dvm.shape = #dvm.shape<h + t_0 + 1, l + t_1>" in text
    body = text.split("tensor.pad")[1]
    assert "arith.constant -2.5" in body.split("tensor.yield")[0]


PAD = """
func.func @f(%t: tensor<2x3xf32>) -> RESULT {
  %c = arith.constant 0.0 : f32
  %r = tensor.pad %t PADS {
  ^bb0(%i: index, %j: index):
    tensor.yield YIELDED
  } : tensor<2x3xf32> to RESULT
  func.return %r : RESULT
}
"""


@pytest.mark.parametrize(
    ("pads", "result", "yielded", "message"),
    [
        (
            "low[0, -1] high[0, 0]",
            "tensor<2x2xf32>",
            "%c : f32",
            r"low pads \[0, -1\] are negative",
        ),
        ("low[0, 0] high[1, 0]", "tensor<2x3xf32>", "%c : f32", r"has dim 2 at axis 0, expected 3"),
        ("low[0, 0] high[0, 0]", "tensor<2x3xf32>", "%i : index", r"must yield one arith.constant"),
        ("low[0] high[0, 0]", "tensor<2x3xf32>", "%c : f32", r"low has 1 entries"),
    ],
)
def test_verifier_names_the_op_and_types(
    pads: str, result: str, yielded: str, message: str
) -> None:
    src = PAD.replace("PADS", pads).replace("RESULT", result).replace("YIELDED", yielded)
    with pytest.raises(VerifyException, match=message):
        dvm.parse(src)


def test_an_unsigned_pad_takes_a_signless_constant_bit_for_bit() -> None:
    """`arith.constant` has no unsigned types: -1 : i8 pads a ui8 tensor with 255."""
    src = """
func.func @f(%t: tensor<?xui8>) -> tensor<?xui8> {
  %c = arith.constant -1 : i8
  %r = tensor.pad %t low[2] high[1] {
  ^bb0(%i: index):
    tensor.yield %c : i8
  } : tensor<?xui8> to tensor<?xui8>
  func.return %r : tensor<?xui8>
}
"""
    t = np.arange(5, dtype=np.uint8)
    check(src, "ascend910b", [(t,)], lambda t: np.pad(t, (2, 1), constant_values=255))
