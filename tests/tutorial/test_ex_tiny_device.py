"""Exercise: a `tiny` device preset, and the tiles that fit it.

Skipped until `convert-tensor-to-tile` knows a device named `tiny`
(docs/tutorial/05-tiling.md): 4 vector cores, 2 cube cores and 4 KiB of local
memory a core, with the usual 32-byte alignment. Every level takes the name:
`dvm.compile(..., device="tiny")`, `dvm-run --device tiny`.
"""

from __future__ import annotations

import numpy as np
import pytest

import dvm
from dvm.lowering.tensor_to_tile import DEVICES

pytestmark = pytest.mark.skipif("tiny" not in DEVICES, reason="exercise: add the tiny device")

SOURCE = """
func.func @f(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %m = tensor.reduce_max %x {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %y = tensor.sub %x, %m : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
"""


def test_the_tiny_device() -> None:
    device = DEVICES["tiny"]()
    assert (device.vector_cores, device.cube_cores) == (4, 2)
    assert device.local_memory_bytes == 4096 and device.alignment == 32


def test_programs_run_on_it_in_tiles_that_fit() -> None:
    x = np.random.default_rng(0).random((64, 300), dtype=np.float32)
    y, stats = dvm.compile(SOURCE, device="tiny").profile(x)
    np.testing.assert_array_equal(y, x - x.max(1, keepdims=True))
    for _, launch in stats:
        assert launch.peak_local_memory <= 4096
        assert launch.tiles > 1
