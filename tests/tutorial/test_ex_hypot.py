"""Exercise: `tensor.hypot`, `sqrt(a**2 + b**2)`, a binary op with scalar forms.

Skipped until the op table has a `hypot` row (docs/tutorial/02-tensor-dialect.md
and 06-bytecode-vm.md): a row of `BINARY_OPS` gives the VM `hypot`, `hypot.rs`
and `hypot.sr`; a constant operand becomes the scalar one.
"""

from __future__ import annotations

import numpy as np
import pytest

import dvm
import dvm.pipeline
from dvm.dialects.elementwise import BY_OP_NAME

pytestmark = pytest.mark.skipif("hypot" not in BY_OP_NAME, reason="exercise: add tensor.hypot")

TWO_TENSORS = """
func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %y = tensor.hypot %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}
"""

WITH_A_CONSTANT = """
func.func @f(%a: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %c = arith.constant dense<4.0> : tensor<f32>
  %y = tensor.hypot %a, %c : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
  %z = tensor.hypot %c, %a : (tensor<f32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %y, %z : tensor<?xf32>, tensor<?xf32>
}
"""


def test_hypot_of_two_tensors() -> None:
    a = np.array([3, 5, 0, -8], np.float32)
    b = np.array([4, 12, 0, 15], np.float32)
    np.testing.assert_allclose(dvm.compile(TWO_TENSORS)(a, b), [5, 13, 0, 17], rtol=1e-6)
    np.testing.assert_allclose(dvm.interpret(dvm.parse(TWO_TENSORS), a, b), [5, 13, 0, 17])


def test_a_constant_operand_is_a_scalar_operand() -> None:
    module = dvm.parse(WITH_A_CONSTANT)
    dvm.pipeline.run(module, "dvm-pipeline")
    text = str(module)
    assert "bytecode.hypot.rs" in text and "bytecode.hypot.sr" in text
    a = np.array([3, -3], np.float32)
    y, z = dvm.compile(WITH_A_CONSTANT)(a)
    np.testing.assert_allclose(y, [5, 5], rtol=1e-6)
    np.testing.assert_allclose(z, [5, 5], rtol=1e-6)
