"""Scans and arg reductions as kernels: long axes walked in chunks, on both presets."""

from __future__ import annotations

import numpy as np
import pytest

import dvm
import dvm.pipeline as pipeline

LONG = """
func.func @f(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xi32>) {
  %s = tensor.cumsum %x {axis = 0} : tensor<?x?xf32> -> tensor<?x?xf32>
  %p = tensor.cumprod %x {axis = 0, exclusive = true, reverse = true}
      : tensor<?x?xf32> -> tensor<?x?xf32>
  %a = tensor.argmin %x {axis = 0} : tensor<?x?xf32> -> tensor<?xi32>
  func.return %s, %p, %a : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xi32>
}
"""


@pytest.mark.parametrize("device", ["host", "ascend910b"])
def test_a_long_first_axis_is_scanned_in_order_across_chunks(device: str) -> None:
    """Along 40009 rows (many chunks of a tile) numpy's running sum, bit for bit (a
    scan from a carry does not reassociate), and the first index of the minimum."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((40009, 3)).astype(np.float32)
    x[rng.integers(0, 40009, 5), 1] = np.nan
    near_one = rng.uniform(0.999, 1.001, (40009, 3)).astype(np.float32)
    compiled = dvm.compile(LONG, device=device)
    for arg in (x, near_one):
        s, p, a = compiled(arg)
        np.testing.assert_array_equal(s, np.cumsum(arg, axis=0, dtype=np.float32))
        flipped = np.cumprod(arg[::-1], axis=0, dtype=np.float32)
        want = np.concatenate([np.ones_like(arg[:1]), flipped[:-1]])[::-1]
        np.testing.assert_array_equal(p, want)
        np.testing.assert_array_equal(a, np.argmin(arg, axis=0).astype(np.int32))


def test_the_long_scan_at_the_bytecode_level_matches_the_vm() -> None:
    x = np.random.default_rng(12).standard_normal((5003, 2)).astype(np.float32)
    module = pipeline.run(dvm.parse(LONG), "dvm-pipeline{device=ascend910b}")
    for got, want in zip(
        dvm.interpret(module, x), dvm.compile(LONG, device="ascend910b")(x), strict=True
    ):
        np.testing.assert_array_equal(got, want)
