"""Exercise: `tensor.log2`, the base-2 logarithm, at every level.

Skipped until the op table has a `log2` row (docs/tutorial/02-tensor-dialect.md).
"""

from __future__ import annotations

import numpy as np
import pytest

import dvm
from dvm.dialects.elementwise import BY_OP_NAME

pytestmark = pytest.mark.skipif("log2" not in BY_OP_NAME, reason="exercise: add tensor.log2")

SOURCE = """
func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = tensor.log2 %x : tensor<?xf32>
  func.return %y : tensor<?xf32>
}
"""


def test_log2_at_the_tensor_level_and_on_the_vm() -> None:
    x = np.array([0.5, 1, 2, 8, 1024, 3], np.float32)
    expected = np.log2(x)
    np.testing.assert_allclose(dvm.interpret(dvm.parse(SOURCE), x), expected, rtol=1e-6)
    np.testing.assert_allclose(dvm.compile(SOURCE)(x), expected, rtol=1e-6)


def test_log2_is_float_only() -> None:
    with pytest.raises(Exception, match="float"):
        dvm.parse(SOURCE.replace("f32", "i32"))
