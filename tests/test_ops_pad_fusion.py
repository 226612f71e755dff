"""A constant pad fused with the ops that compute its source, at every level.

The kernel fills the padded result with the constant, then stores the source,
computed in the same kernel, at the low pads. Every program is checked against
numpy in the interpreter, after each pass level and compiled, on both device
presets, on shapes with 0, 1, primes and large dims, and its kernel count.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_ops_concat import DTYPES, values
from test_ops_concat_fusion import kernels, seeded
from test_ops_pad import constant_of
from test_ops_slices import PRESETS, check, levels

import dvm
from dvm.errors import ExecutionError

PRODUCED = """
func.func @f(%t: tensor<?x?xf32>, %u: tensor<?x1xf32>, %l: index, %h: index) -> tensor<?x?xf32> {
  %cst = arith.constant -2.5 : f32
  %x = tensor.abs %t : tensor<?x?xf32>
  %s = tensor.add %x, %u : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %r = tensor.pad %s low[1, %l] high[%h, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<?x?xf32> to tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_the_source_is_computed_in_the_pad_kernel(device: str) -> None:
    assert kernels(PRODUCED) == 1
    cases = []
    for seed, (rows, cols, low, high) in enumerate(
        [(0, 3, 2, 0), (1, 1, 0, 0), (7, 13, 3, 2), (97, 301, 1, 5), (3001, 2, 0, 7)]
    ):
        cases.append((seeded((rows, cols), seed), seeded((rows, 1), seed + 9), low, high))

    def want(t: np.ndarray, u: np.ndarray, low: int, high: int) -> np.ndarray:
        return np.pad(abs(t) + u, ((1, high), (low, 0)), constant_values=-2.5)

    check(PRODUCED, device, cases, want)
    with pytest.raises(ExecutionError, match=r"tensor\.pad: slice \[offset -1"):
        dvm.compile(PRODUCED, device=device)(seeded((2, 2), 0), seeded((2, 1), 1), -1, 0)


@pytest.mark.parametrize("element", DTYPES)
def test_every_element_type(element: str) -> None:
    """A max (on booleans: a logical or) of the source with itself, then the pad."""
    t = f"tensor<?x?x?x{element}>"
    op = "tensor.logical_or" if element == "i1" else "tensor.max"
    scalar = "i" + element[2:] if element.startswith("ui") else element
    src = f"""
func.func @f(%t: {t}) -> {t} {{
  %c = arith.constant {constant_of(element)}
  %x = {op} %t, %t : ({t}, {t}) -> {t}
  %r = tensor.pad %x low[0, 2, 1] high[1, 0, 3] {{
  ^bb0(%i: index, %j: index, %k: index):
    tensor.yield %c : {scalar}
  }} : {t} to {t}
  func.return %r : {t}
}}
"""
    assert kernels(src) == 1
    fill = values((1,), element, 0).dtype.type(True if element == "i1" else 3)
    shapes = [(0, 1, 2), (1, 1, 1), (2, 3, 5)]
    cases = [(values(shape, element, i),) for i, shape in enumerate(shapes)]
    check(src, "host", cases, lambda t: np.pad(t, ((0, 1), (2, 0), (1, 3)), constant_values=fill))


def test_a_source_used_elsewhere_keeps_the_pad_apart() -> None:
    src = """
func.func @f(%t: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %cst = arith.constant 0.0 : f32
  %x = tensor.neg %t : tensor<?xf32>
  %r = tensor.pad %x low[2] high[1] {
  ^bb0(%i: index):
    tensor.yield %cst : f32
  } : tensor<?xf32> to tensor<?xf32>
  func.return %r, %x : tensor<?xf32>, tensor<?xf32>
}
"""
    assert kernels(src) == 2
    t = seeded((5,), 0)
    for name, run in levels(src, "host"):
        got = run(t)
        np.testing.assert_array_equal(got[0], np.pad(-t, (2, 1)), err_msg=name)
        np.testing.assert_array_equal(got[1], -t, err_msg=name)


VIEWS = """
func.func @f(%t: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %cst = arith.constant 1.0 : f32
  %x = tensor.transpose %t {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %r = tensor.pad %x low[0, 1] high[2, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<?x?xf32> to tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_a_pad_of_a_transposed_input(device: str) -> None:
    """The source is a view of the input: read transposed, stored at the low pads."""
    assert kernels(VIEWS) == 1
    cases = [(seeded(shape, i),) for i, shape in enumerate([(0, 2), (1, 1), (7, 13), (3001, 3)])]
    check(VIEWS, device, cases, lambda t: np.pad(t.T, ((0, 2), (1, 0)), constant_values=1.0))


def test_a_reduced_source_keeps_the_pad_apart() -> None:
    src = """
func.func @f(%t: tensor<?x?xf32>) -> tensor<?x1xf32> {
  %cst = arith.constant 0.0 : f32
  %s = tensor.reduce_max %t {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %r = tensor.pad %s low[1, 0] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f32
  } : tensor<?x1xf32> to tensor<?x1xf32>
  func.return %r : tensor<?x1xf32>
}
"""
    assert kernels(src) == 2
    cases = [(seeded((rows, 5), rows),) for rows in (0, 1, 7)]
    check(src, "host", cases, lambda t: np.pad(t.max(1, keepdims=True), ((1, 0), (0, 0))))
