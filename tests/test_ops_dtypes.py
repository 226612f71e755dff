"""Element types and conversions between them, at every level."""

from __future__ import annotations

import numpy as np
from test_ops_math import DEVICES, run_everywhere

import dvm


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


def test_a_chunked_min_starts_from_the_largest_integer() -> None:
    """A row too long for one tile is reduced chunk by chunk from the identity, the
    type's maximum (2**63 - 1), which an f64 immediate rounds up: it must saturate,
    not wrap to the minimum."""
    text = """func.func @f(%x: tensor<?x?xi64>) -> tensor<?xi64> {
  %m = tensor.reduce_min %x {axes = [1]} : tensor<?x?xi64> -> tensor<?xi64>
  func.return %m : tensor<?xi64>
}"""
    x = np.full((2, 300_000), 5, np.int64)
    x[1, 123_456] = 3
    for device in DEVICES:
        np.testing.assert_array_equal(dvm.compile(text, device=device)(x), [5, 3])


def test_an_integer_constant_beyond_f64_stays_exact() -> None:
    """A splat integer constant an f64 immediate cannot hold is a kernel input."""
    value = 2**53 + 1
    text = f"""func.func @f(%x: tensor<?xi64>) -> tensor<?xi64> {{
  %c = arith.constant dense<{value}> : tensor<i64>
  %r = tensor.sub %x, %c : (tensor<?xi64>, tensor<i64>) -> tensor<?xi64>
  func.return %r : tensor<?xi64>
}}"""
    x = np.array([0, 1, 2], np.int64)
    np.testing.assert_array_equal(run_everywhere(text, x), [-value, 1 - value, 2 - value])
