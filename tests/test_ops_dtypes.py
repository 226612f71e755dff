"""Element types and conversions between them, at every level."""

from __future__ import annotations

import numpy as np
from test_ops_math import run_everywhere


def test_float_to_integer_saturates_at_every_level() -> None:
    """The VM's convert once used numpy's cast, which is undefined out of range."""
    text = """func.func @f(%x: tensor<?xf32>) -> (tensor<?xi8>, tensor<?xi64>) {
  %a = tensor.convert %x : tensor<?xf32> -> tensor<?xi8>
  %c = tensor.convert %x : tensor<?xf32> -> tensor<?xi64>
  func.return %a, %c : tensor<?xi8>, tensor<?xi64>
}"""
    x = np.array([np.nan, np.inf, -np.inf, 300.5, -300.5, 1.7, -1.7, 1e19], np.float32)
    i8, i64 = run_everywhere(text, x)
    np.testing.assert_array_equal(i8, [0, 127, -128, 127, -128, 1, -1, 127])
    top, bottom = 2**63 - 1, -(2**63)
    np.testing.assert_array_equal(i64, [0, top, bottom, 300, -300, 1, -1, top])
