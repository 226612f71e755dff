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


ROPE = """
func.func @rope(%x: tensor<?x?xf32>, %pos: tensor<?x1xf32>, %inv: tensor<1x?xf32>)
    -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %h = tensor.dim %inv, %c1 : tensor<1x?xf32>
  %angle = tensor.mul %pos, %inv : (tensor<?x1xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
  %angles = tensor.concat dim(1) %angle, %angle
      : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %cos = tensor.cos %angles : tensor<?x?xf32>
  %sin = tensor.sin %angles : tensor<?x?xf32>
  %x1 = tensor.extract_slice %x[0, 0] [%n, %h] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %x2 = tensor.extract_slice %x[0, %h] [%n, %h] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %neg = tensor.neg %x2 : tensor<?x?xf32>
  %rotated = tensor.concat dim(1) %neg, %x1 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %a = tensor.mul %x, %cos : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %b = tensor.mul %rotated, %sin : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %out = tensor.add %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %out : tensor<?x?xf32>
}
"""


def rope_numpy(x: np.ndarray, pos: np.ndarray, inv: np.ndarray) -> np.ndarray:
    angles = np.concatenate([pos * inv, pos * inv], axis=1)
    h = inv.shape[1]
    rotated = np.concatenate([-x[:, h:], x[:, :h]], axis=1)
    return x * np.cos(angles) + rotated * np.sin(angles)


@pytest.mark.parametrize("device", PRESETS)
def test_a_rotary_embedding_on_a_stream_of_shapes(device: str) -> None:
    """`rotate_half` from two slices and a concat; sin and cos of the angles computed
    in the program from the positions and inverse frequencies passed in."""
    cases = []
    for i, (n, h) in enumerate([(0, 2), (1, 1), (7, 4), (13, 32), (3001, 3), (2, 0)]):
        x = seeded((n, 2 * h), i)
        pos = np.arange(n, dtype=np.float32).reshape(n, 1)
        inv = (10000.0 ** (-np.arange(h, dtype=np.float32) / max(h, 1))).reshape(1, h)
        cases.append((x, pos, inv.astype(np.float32)))
    check_close(ROPE, device, cases, rope_numpy)


KV_APPEND = """
func.func @attend(%q: tensor<?x?xf32>, %cache: tensor<?x?xf32>, %new: tensor<?x?xf32>)
    -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %keys = tensor.concat dim(0) %cache, %new : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %scores = tensor.matmul %q, %keys {transpose_b = true}
      : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %keys, %scores : tensor<?x?xf32>, tensor<?x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_a_kv_cache_append_on_a_stream_of_shapes(device: str) -> None:
    """The cache grows by the new rows each step; the queries score every key."""
    d, cache = 8, seeded((0, 8), 0)
    cases = []
    for step, rows in enumerate([1, 3, 1, 0, 17, 1]):
        new, q = seeded((rows, d), 2 * step + 1), seeded((2, d), 2 * step + 2)
        cases.append((q, cache, new))
        cache = np.concatenate([cache, new])
    cases.append((seeded((3, d), 99), seeded((3001, d), 98), seeded((1, d), 97)))

    def want(q: np.ndarray, cache: np.ndarray, new: np.ndarray) -> tuple[np.ndarray, ...]:
        keys = np.concatenate([cache, new])
        return keys, q @ keys.T

    check_close(KV_APPEND, device, cases, want)
