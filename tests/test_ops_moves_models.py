"""Blocks of real models built from slices and concat, each compiled once and run
on a stream of shapes at every level: a fused QKV weight split inside the
program, a rotary embedding (`rotate_half`) and a KV-cache append."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from test_ops_slices import PRESETS, levels, lowered

SPLIT_QKV = """
func.func @qkv(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>)
    -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %d = tensor.dim %w, %c0 : tensor<?x?xf32>
  %w3 = tensor.dim %w, %c1 : tensor<?x?xf32>
  %h = arith.divsi %w3, %c3 : index
  %o2 = arith.addi %h, %h : index
  %wq = tensor.extract_slice %w[0, 0] [%d, %h] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %wk = tensor.extract_slice %w[0, %h] [%d, %h] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %wv = tensor.extract_slice %w[0, %o2] [%d, %h] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %q = tensor.matmul %x, %wq : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %k = tensor.matmul %x, %wk : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %v = tensor.matmul %x, %wv : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %q, %k, %v : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
}
"""


def seeded(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def check_close(
    src: str, device: str, cases: Sequence[tuple[Any, ...]], want: Callable[..., Any]
) -> None:
    """Every level matches numpy on every case (to float32 rounding: sums may be
    ordered differently)."""
    runs = levels(src, device)
    for args in cases:
        expected = want(*args)
        expected = expected if isinstance(expected, tuple) else (expected,)
        for name, run in runs:
            got = run(*args)
            got = got if isinstance(got, tuple) else (got,)
            for g, w in zip(got, expected, strict=True):
                np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-5, err_msg=f"{name}")


@pytest.mark.parametrize("device", PRESETS)
def test_a_fused_qkv_weight_split_inside_the_program(device: str) -> None:
    """Split is slicing: three slices of one weight, sized by `tensor.dim`
    arithmetic, each a view that its matmul reads (no copy)."""
    fused = str(lowered(SPLIT_QKV, "symbolic-shapes,fuse"))
    assert fused.count("tensor.fusion cube") == 3 and "tensor.fusion vector" not in fused
    cases = [
        (seeded((n, d), i), seeded((d, 3 * h), i + 1))
        for i, (n, d, h) in enumerate([(0, 4, 2), (1, 1, 1), (7, 13, 5), (3, 64, 0), (2, 8, 1001)])
    ]

    def want(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, ...]:
        h = w.shape[1] // 3
        return tuple(x @ w[:, i * h : (i + 1) * h] for i in range(3))

    check_close(SPLIT_QKV, device, cases, want)
