"""A sampling step and an MoE router, compiled once and run on a stream of shapes.

The sampling step is what a language model does with its last logits: a softmax,
the greedy token (argmax), and a top-p (nucleus) mask over the k most probable
tokens (top_k, then an exclusive cumsum of their probabilities). The router picks
each token's two experts (top_k with k = 2) and their softmax weights. Both match
numpy at every level on both device presets; which ops fuse is checked in
tests/filecheck/ops_scans/sampling.mlir.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_ops_scans import PRESETS, levels

from dvm.errors import CallError

SAMPLING = """
func.func @sample(%logits: tensor<?x?xf32>, %top_p: tensor<f32>)
    -> (tensor<?xi64>, tensor<?x8xf32>, tensor<?x8xi64>) {
  %zero = arith.constant dense<0.0> : tensor<f32>
  %max = tensor.reduce_max %logits {axes = [1], keepdims = true}
      : tensor<?x?xf32> -> tensor<?x1xf32>
  %shifted = tensor.sub %logits, %max : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %exp = tensor.exp %shifted : tensor<?x?xf32>
  %sum = tensor.reduce_sum %exp {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %probs = tensor.div %exp, %sum : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %greedy = tensor.argmax %probs {axis = 1} : tensor<?x?xf32> -> tensor<?xi64>
  %top, %tokens = tensor.top_k %probs {k = 8} : tensor<?x?xf32> -> tensor<?x8xf32>, tensor<?x8xi64>
  %before = tensor.cumsum %top {axis = 1, exclusive = true} : tensor<?x8xf32> -> tensor<?x8xf32>
  %keep = tensor.lt %before, %top_p : (tensor<?x8xf32>, tensor<f32>) -> tensor<?x8xi1>
  %kept = tensor.select %keep, %top, %zero
      : (tensor<?x8xi1>, tensor<?x8xf32>, tensor<f32>) -> tensor<?x8xf32>
  %total = tensor.reduce_sum %kept {axes = [1], keepdims = true}
      : tensor<?x8xf32> -> tensor<?x1xf32>
  %nucleus = tensor.div %kept, %total : (tensor<?x8xf32>, tensor<?x1xf32>) -> tensor<?x8xf32>
  func.return %greedy, %nucleus, %tokens : tensor<?xi64>, tensor<?x8xf32>, tensor<?x8xi64>
}
"""


def sampling_numpy(logits: np.ndarray, top_p: np.ndarray) -> tuple[np.ndarray, ...]:
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    probs = exp / exp.sum(axis=1, keepdims=True)
    tokens = np.argsort(-probs, axis=1, kind="stable")[:, :8]
    top = np.take_along_axis(probs, tokens, axis=1)
    before = np.cumsum(top, axis=1) - top
    kept = np.where(before < top_p, top, np.float32(0))
    nucleus = kept / kept.sum(axis=1, keepdims=True)
    return probs.argmax(axis=1), nucleus.astype(np.float32), tokens.astype(np.int64)


@pytest.mark.parametrize("device", PRESETS)
def test_a_sampling_step_on_a_stream_of_shapes(device: str) -> None:
    runs = levels(SAMPLING, device)
    for i, (batch, vocab) in enumerate([(1, 8), (3, 50), (0, 97), (7, 1031), (2, 32003)]):
        rng = np.random.default_rng(i)
        logits = (rng.standard_normal((batch, vocab)) * 3).astype(np.float32)
        top_p = np.array(0.6 + 0.1 * i, np.float32)
        greedy, nucleus, tokens = sampling_numpy(logits, top_p)
        for name, run in runs:
            got_greedy, got_nucleus, got_tokens = run(logits, top_p)
            np.testing.assert_array_equal(got_greedy, greedy, err_msg=name)
            np.testing.assert_array_equal(got_tokens, tokens, err_msg=name)
            np.testing.assert_allclose(got_nucleus, nucleus, rtol=1e-5, err_msg=name)


def test_a_vocabulary_smaller_than_k_is_an_error_naming_top_k() -> None:
    compiled = levels(SAMPLING, "host")[-1][1]
    with pytest.raises(CallError, match=r"tensor.top_k .* is 5 and it must be 8"):
        compiled(np.zeros((2, 5), np.float32), np.array(0.9, np.float32))


ROUTER = """
func.func @route(%x: tensor<?x?xf32>, %w: tensor<?x8xf32>) -> (tensor<?x2xf32>, tensor<?x2xi32>) {
  %logits = tensor.matmul %x, %w : (tensor<?x?xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  %top, %experts = tensor.top_k %logits {k = 2}
      : tensor<?x8xf32> -> tensor<?x2xf32>, tensor<?x2xi32>
  %max = tensor.reduce_max %top {axes = [1], keepdims = true} : tensor<?x2xf32> -> tensor<?x1xf32>
  %shifted = tensor.sub %top, %max : (tensor<?x2xf32>, tensor<?x1xf32>) -> tensor<?x2xf32>
  %exp = tensor.exp %shifted : tensor<?x2xf32>
  %sum = tensor.reduce_sum %exp {axes = [1], keepdims = true} : tensor<?x2xf32> -> tensor<?x1xf32>
  %weights = tensor.div %exp, %sum : (tensor<?x2xf32>, tensor<?x1xf32>) -> tensor<?x2xf32>
  func.return %weights, %experts : tensor<?x2xf32>, tensor<?x2xi32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_the_moe_router_picks_two_experts_per_token(device: str) -> None:
    runs = levels(ROUTER, device)
    for i, (tokens, d) in enumerate([(0, 16), (1, 1), (13, 64), (1031, 32)]):
        rng = np.random.default_rng(i)
        x = rng.standard_normal((tokens, d)).astype(np.float32)
        w = rng.standard_normal((d, 8)).astype(np.float32)
        logits = x.astype(np.float64) @ w.astype(np.float64)
        experts = np.argsort(-logits, axis=1, kind="stable")[:, :2]
        top = np.take_along_axis(logits, experts, axis=1)
        weights = np.exp(top - top.max(axis=1, keepdims=True))
        weights /= weights.sum(axis=1, keepdims=True)
        for name, run in runs:
            got_weights, got_experts = run(x, w)
            np.testing.assert_array_equal(got_experts, experts.astype(np.int32), err_msg=name)
            np.testing.assert_allclose(got_weights, weights, rtol=1e-4, atol=1e-6, err_msg=name)
