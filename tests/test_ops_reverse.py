"""`tensor.reverse` (numpy's `flip`) at every level.

Inside a kernel a reverse of an input is a view with negative strides, which
fuses with the ops that read it; a reverse of a computed value is a copy
kernel of its own. Each program runs in the reference interpreter, after
`fuse`, as tile IR, as bytecode and compiled, on both device presets, on
shapes with 0, 1, primes and large dims.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_ops_concat import DTYPES, values
from test_ops_slices import PRESETS, check, lowered
from xdsl.utils.exceptions import VerifyException

import dvm

FUSED = """
func.func @f(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = tensor.reverse %x {axes = [1]} : tensor<?x?xf32>
  %s = tensor.add %r, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %s : tensor<?x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_a_reverse_of_an_input_fuses_as_a_view(device: str) -> None:
    text = str(lowered(FUSED, "symbolic-shapes,fuse"))
    assert text.count("tensor.fusion") == 1
    rng = np.random.default_rng(0)
    cases = []
    for shape in [(0, 3), (1, 1), (7, 13), (97, 301), (2, 3001)]:
        x, y = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
        cases.append((x, y))
    check(FUSED, device, cases, lambda x, y: np.flip(x, 1) + y)


@pytest.mark.parametrize("element", DTYPES)
def test_every_element_type_through_layout_ops(element: str) -> None:
    src = f"""
func.func @f(%x: tensor<?x?x?x{element}>) -> tensor<?x?x?x{element}> {{
  %t = tensor.transpose %x {{perm = [0, 2, 1]}} : tensor<?x?x?x{element}> -> tensor<?x?x?x{element}>
  %r = tensor.reverse %t {{axes = [0, 2]}} : tensor<?x?x?x{element}>
  func.return %r : tensor<?x?x?x{element}>
}}
"""
    cases = [
        (values(shape, element, i),) for i, shape in enumerate([(0, 2, 3), (1, 1, 1), (3, 5, 7)])
    ]
    check(src, "host", cases, lambda x: np.flip(np.transpose(x, (0, 2, 1)), (0, 2)))


@pytest.mark.parametrize("device", PRESETS)
def test_a_reverse_of_a_computed_value_is_a_copy_kernel(device: str) -> None:
    src = """
func.func @f(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %e = tensor.neg %x : tensor<?x?xf32>
  %r = tensor.reverse %e {axes = [0, 1]} : tensor<?x?xf32>
  %c = tensor.collapse_shape %r [[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
  %s = tensor.reduce_sum %c {axes = [0]} : tensor<?xf32> -> tensor<f32>
  %b = tensor.mul %r, %s : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  func.return %b : tensor<?x?xf32>
}
"""
    assert str(lowered(src, "symbolic-shapes,fuse")).count("tensor.fusion") == 3
    rng = np.random.default_rng(1)
    cases = [
        (np.round(rng.standard_normal(s) * 4).astype(np.float32) / 4,)
        for s in [(0, 2), (1, 1), (5, 7), (3, 3001)]
    ]

    def want(x: np.ndarray) -> np.ndarray:
        r = np.flip(-x, (0, 1))
        return r * r.sum(dtype=np.float32)

    check(src, device, cases, want)


def test_verifier_names_the_op_and_types() -> None:
    src = """
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = tensor.reverse %x {axes = [1, 1]} : tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
"""
    with pytest.raises(
        VerifyException,
        match=r"'tensor.reverse' axes \[1, 1\] are not distinct axes of tensor<2x3xf32>",
    ):
        dvm.parse(src)
    with pytest.raises(VerifyException, match=r"axes \[2\] are not distinct axes"):
        dvm.parse(src.replace("[1, 1]", "[2]"))
