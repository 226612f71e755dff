"""torch's fused transformer kernels, written as their math (see `aten`).

In eval mode under `no_grad`, `nn.TransformerEncoderLayer` and `nn.MultiheadAttention`
(batch first, self-attention) call one fused kernel each rather than their layers:
`_transformer_encoder_layer_fwd` and `_native_multi_head_attention`. dynamo traces
that call as it is and torch has no decomposition of either, so these handlers
record what the kernels compute, with their conventions, which differ from the
layers' own path in two ways: a mask is read as booleans (any nonzero element masks
its position, so a float mask of 0 and -inf masks what it would add -inf to), and a
row that masks every key gives NaN.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dvm.lazy import LazyArray
from dvm.numerics import is_float_dtype
from dvm.torch.aten import (
    Handler,
    Unsupported,
    gelu,
    lazy,
    native_layer_norm,
    needs,
    reshaped,
    softmax,
)

PADDING_MASK = 1
"""The kernels' `mask_type` of a (batch, keys) key padding mask; 0 is an (queries,
keys) attention mask and 2 a (batch, heads, queries, keys) one."""


def linear(x: LazyArray, weight: Any, bias: Any) -> LazyArray:
    """`x @ weight.T + bias` (a weight of torch's (out, in) layout)."""
    return needs(x @ lazy(weight).T + lazy(bias))


def heads(x: LazyArray, count: int) -> LazyArray:
    """(batch, length, embedding) as (batch, heads, length, embedding of a head)."""
    batch, length, width = x.shape
    return reshaped(x, (batch, length, count, width // count)).transpose(0, 2, 1, 3)


def masked_scores(scores: LazyArray, mask: Any, mask_type: Any) -> LazyArray:
    """Scores (batch, heads, queries, keys) with -inf where the mask is nonzero."""
    if mask is None:
        return scores
    mask = lazy(mask)
    if mask.dtype != np.dtype(np.bool_):
        mask = needs(mask != 0)
    if mask_type == PADDING_MASK:
        mask = reshaped(mask, (mask.shape[0], 1, 1, mask.shape[1]))
    if mask.ndim > scores.ndim:
        raise Unsupported("an attention mask of more dims than the scores")
    return needs(np.where(mask, np.asarray(-np.inf, scores.dtype), scores))


def multi_head_attention(
    query: Any, key: Any, value: Any, embed_dim: int, num_heads: int, qkv_weight: Any,
    qkv_bias: Any, proj_weight: Any, proj_bias: Any, mask: Any = None,
    need_weights: bool = True, average_attn_weights: bool = True, mask_type: Any = None,
) -> Any:  # fmt: skip
    """`_native_multi_head_attention`: the output, and the attention weights (averaged
    over the heads, or per head) if `need_weights`, else None."""
    query, key, value = lazy(query), lazy(key), lazy(value)
    if query.ndim != 3 or not is_float_dtype(query.dtype):
        raise Unsupported("an unbatched or nested attention, or one of integers")
    weight, bias = lazy(qkv_weight), lazy(qkv_bias)
    rows = [slice(k * embed_dim, (k + 1) * embed_dim) for k in range(3)]
    parts = [linear(x, weight[r], bias[r]) for r, x in zip(rows, (query, key, value), strict=True)]
    q, k, v = (heads(p, num_heads) for p in parts)
    q = q * (1 / math.sqrt(embed_dim // num_heads))  # (as the kernel scales: q, before q @ k)
    scores = masked_scores(needs(q @ np.swapaxes(k, -1, -2)), mask, mask_type)
    weights = softmax(scores, -1)
    context = needs(weights @ v).transpose(0, 2, 1, 3)
    batch, length = query.shape[0], query.shape[1]
    out = linear(reshaped(context, (batch, length, embed_dim)), proj_weight, proj_bias)
    if not need_weights:
        return out, None
    return out, needs(weights.mean(axis=1)) if average_attn_weights else weights


def encoder_layer(
    src: Any, embed_dim: int, num_heads: int, qkv_weight: Any, qkv_bias: Any,
    proj_weight: Any, proj_bias: Any, use_gelu: bool, norm_first: bool, eps: float,
    norm_weight_1: Any, norm_bias_1: Any, norm_weight_2: Any, norm_bias_2: Any,
    ffn_weight_1: Any, ffn_bias_1: Any, ffn_weight_2: Any, ffn_bias_2: Any,
    mask: Any = None, mask_type: Any = None,
) -> Any:  # fmt: skip
    """`_transformer_encoder_layer_fwd`: self-attention and a ReLU or GELU feed-forward,
    each added to its input, with LayerNorms before (`norm_first`) or after them."""
    src = lazy(src)

    def norm(x: LazyArray, weight: Any, bias: Any) -> LazyArray:
        return native_layer_norm(x, [embed_dim], weight, bias, eps)[0]

    x = norm(src, norm_weight_1, norm_bias_1) if norm_first else src
    attended = multi_head_attention(
        x, x, x, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias,
        mask, False, True, mask_type,
    )[0]  # fmt: skip
    x = needs(attended + src)
    if not norm_first:
        x = norm(x, norm_weight_1, norm_bias_1)
    before_ffn = x
    if norm_first:
        x = norm(x, norm_weight_2, norm_bias_2)
    hidden = linear(x, ffn_weight_1, ffn_bias_1)
    hidden = gelu(hidden) if use_gelu else needs(np.maximum(hidden, 0))
    x = needs(linear(hidden, ffn_weight_2, ffn_bias_2) + before_ffn)
    return x if norm_first else norm(x, norm_weight_2, norm_bias_2)


HANDLERS: dict[str, Handler] = {
    "_native_multi_head_attention": multi_head_attention,
    "_transformer_encoder_layer_fwd": encoder_layer,
}
"""The ATen ops of this module, by name."""
