"""The run-time checks of a launch (slice bounds, take indices) hold inside a stack.

Independent kernels are launched together as a `tensor.stack`; each member's checks
run before it, as a launch's do alone.
"""

from __future__ import annotations

import numpy as np
import pytest

import dvm
import dvm.pipeline
from dvm.errors import ExecutionError

SLICES = """
func.func @f(%a: tensor<?x4xf32>, %b: tensor<?x8xf32>, %r: index, %o: index, %n: index)
    -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %sa = tensor.extract_slice %a[0, %o] [%r, %n] [1, 1] : tensor<?x4xf32> to tensor<?x?xf32>
  %ea = tensor.exp %sa : tensor<?x?xf32>
  %sb = tensor.extract_slice %b[0, %o] [%r, %n] [1, 1] : tensor<?x8xf32> to tensor<?x?xf32>
  %eb = tensor.exp %sb : tensor<?x?xf32>
  func.return %ea, %eb : tensor<?x?xf32>, tensor<?x?xf32>
}
"""


def test_a_slice_in_a_stack_is_checked() -> None:
    """Columns 2..5 of a width-4 input, on all rows but the last: past the dim's end
    but inside the buffer, where only the check tells it from a valid slice."""
    assert "tensor.stack" in str(dvm.pipeline.run(dvm.parse(SLICES), "dvm-pipeline"))
    a, b = np.zeros((10, 4), np.float32), np.zeros((10, 8), np.float32)
    compiled = dvm.compile(SLICES)
    got = compiled(a, b, 9, 1, 2)
    np.testing.assert_array_equal(got[0], np.exp(a[:9, 1:3]))
    with pytest.raises(ExecutionError, match=r"%sa = tensor\.extract_slice: slice \[offset 2"):
        compiled(a, b, 9, 2, 4)


TAKES = """
func.func @f(%a: tensor<?x4xf32>, %b: tensor<?x8xf32>, %i: tensor<?xi32>)
    -> (tensor<?x4xf32>, tensor<?x8xf32>) {
  %ta = tensor.take %a, %i dim(0) : (tensor<?x4xf32>, tensor<?xi32>) -> tensor<?x4xf32>
  %tb = tensor.take %b, %i dim(0) : (tensor<?x8xf32>, tensor<?xi32>) -> tensor<?x8xf32>
  func.return %ta, %tb : tensor<?x4xf32>, tensor<?x8xf32>
}
"""


def test_a_take_in_a_stack_is_checked() -> None:
    a, b = np.zeros((10, 4), np.float32), np.zeros((3, 8), np.float32)
    compiled = dvm.compile(TAKES)
    compiled(a, b, np.array([0, 2], np.int32))
    with pytest.raises(ExecutionError, match=r"%tb = tensor\.take: index 5 is out of range"):
        compiled(a, b, np.array([0, 5], np.int32))
