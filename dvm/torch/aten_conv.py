"""ATen's convolution and its backward, as strided slices and matmuls (see `aten`).

A convolution reads, for each kernel offset, the input at `o*s - p + k*d` along each
spatial dim: one strided slice of the padded input per offset (`aten_nn`'s windows).
The slices side by side along a new dim are the im2col matrix, channels by offsets
(the weight's own order), and the convolution is one batched matmul of the weight,
per group, by it. Its backward: the weight's gradient is the output gradient times
the im2col matrix (summed over the batch); the input's, the weight's transpose times
the output gradient, added back at each offset's slice (a strided insert) and cut to
the input; the bias's, a sum. A transposed convolution is that input's gradient of
the convolution it transposes (from its output back to its input), and its backward
that convolution itself and its weight's gradient. Batch and group norms, which
follow convolutions, are here too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dvm.lazy import LazyArray, asarray, record
from dvm.numerics import is_float_dtype
from dvm.torch.aten import (
    Handler,
    Unsupported,
    lazy,
    narrowed,
    needs,
    number,
    reshaped,
    widened,
)
from dvm.torch.aten_nn import Window, added_at_windows, offset_slices, per_dim, window
from dvm.torch.sizes import specialized


def conv_windows(x: LazyArray, weight: LazyArray, stride: Any, padding: Any, dilation: Any,
                 groups: Any) -> tuple[list[Window], int]:  # fmt: skip
    """The windows along each spatial dim of a convolution, and its groups."""
    count = weight.ndim - 2
    groups = specialized(groups)
    if count < 1 or x.ndim != weight.ndim or x.dtype != weight.dtype:
        raise Unsupported("a convolution of unbatched or mixed inputs")
    if not is_float_dtype(x.dtype) or groups < 1 or x.shape[1] != weight.shape[1] * groups:
        raise Unsupported("a convolution of integers, or whose channels do not match")
    if weight.shape[0] % groups != 0:
        raise Unsupported("a convolution whose output channels do not split in groups")
    kernels = [specialized(k) for k in weight.shape[2:]]
    strides, paddings = per_dim(stride, count), per_dim(padding, count)
    dilations = per_dim(dilation, count)
    spans = [
        window(*args, False)
        for args in zip(x.shape[2:], kernels, strides, paddings, dilations, strict=True)
    ]
    return spans, groups


def im2col(x: LazyArray, spans: list[Window], groups: int) -> LazyArray:
    """The slices of the padded input per kernel offset, as (batch, groups, channels
    of a group x offsets, output positions)."""
    columns = [
        LazyArray(record.insert_unit_dims(values._node, (2,)))
        for _, values in offset_slices(x, spans, 0.0)
    ]
    stacked = (
        columns[0]._node if len(columns) == 1 else record.concat([c._node for c in columns], 2)
    )
    assert stacked is not None
    batch, channels = x.shape[0], x.shape[1]
    rows = channels // groups * math.prod(w.kernel for w in spans)
    return reshaped(LazyArray(stacked), (batch, groups, rows, math.prod(w.out for w in spans)))


def grouped_weight(weight: LazyArray, groups: int) -> LazyArray:
    """The weight as (groups, output channels of a group, channels x offsets)."""
    out = weight.shape[0]
    rows = math.prod(weight.shape[1:])
    return reshaped(weight, (groups, out // groups, rows))


def grouped_channels(t: LazyArray, groups: int) -> LazyArray:
    """A (batch, channels, spatial...) tensor as (batch, groups, channels of a group,
    positions): the right operand of a group's weight."""
    batch, channels = t.shape[0], t.shape[1]
    return reshaped(t, (batch, groups, channels // groups, math.prod(t.shape[2:])))


def convolution(x: Any, weight: Any, bias: Any, stride: Any, padding: Any, dilation: Any,
                transposed: bool, output_padding: Any, groups: Any) -> Any:  # fmt: skip
    """`convolution` (1-, 2- or 3-d; stride, padding, dilation, groups; a bias), or a
    transposed one."""
    x, weight = lazy(x), lazy(weight)
    if transposed:
        return transposed_convolution(x, weight, bias, stride, padding, dilation,
                                      output_padding, groups)  # fmt: skip
    spans, groups = conv_windows(x, weight, stride, padding, dilation, groups)
    product = needs(grouped_weight(weight, groups) @ im2col(x, spans, groups))
    shape = (x.shape[0], weight.shape[0], *(w.out for w in spans))
    result = reshaped(product, shape)
    if bias is None:
        return result
    return needs(result + reshaped(lazy(bias), (weight.shape[0], *([1] * len(spans)))))


def convolution_backward(grad: Any, x: Any, weight: Any, bias_sizes: Any, stride: Any,
                         padding: Any, dilation: Any, transposed: bool, output_padding: Any,
                         groups: Any, output_mask: Sequence[bool]) -> Any:  # fmt: skip
    """The gradients of the input, the weight and the bias (those `output_mask` asks
    for; None for the others)."""
    grad, x, weight = lazy(grad), lazy(x), lazy(weight)
    if transposed:
        return transposed_backward(grad, x, weight, stride, padding, dilation, output_padding,
                                   groups, output_mask)  # fmt: skip
    spans, groups = conv_windows(x, weight, stride, padding, dilation, groups)
    per_group = grouped_channels(grad, groups)
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        columns = np.swapaxes(grouped_weight(weight, groups), -1, -2) @ per_group
        grad_input = narrowed(col2im(needs(columns), x.shape[:2], spans), grad.dtype)
    if output_mask[1]:
        product = per_group @ np.swapaxes(im2col(x, spans, groups), -1, -2)
        grad_weight = reshaped(needs(product).sum(axis=0), weight.shape)
    if output_mask[2]:
        grad_bias = needs(grad.sum(axis=(0, *range(2, grad.ndim))))
    return grad_input, grad_weight, grad_bias


def col2im(columns: LazyArray, front: Sequence[Any], spans: list[Window]) -> LazyArray:
    """The input's gradient from the im2col matrix's: each offset's rows added at its
    strided slice of the padded input, the padding then cut off; `front` the input's
    batch and channels. Half precision is added in float32 (the caller rounds once)."""
    columns = widened(columns)
    batch, channels = front
    offsets = list(np.ndindex(*(w.kernel for w in spans)))
    rows = reshaped(columns, (batch, channels, len(offsets), *(w.out for w in spans)))

    def part(index: int) -> LazyArray:
        pick: list[Any] = [None, None, (index, 1, 1)] + [None] * len(spans)
        return LazyArray(record.squeeze(record.extract_slice(rows._node, pick), (2,)))

    parts = ((offset, part(index)) for index, offset in enumerate(offsets))
    return added_at_windows(parts, spans, (batch, channels), columns.dtype)


def transposed_windows(x: LazyArray, weight: LazyArray, stride: Any, padding: Any,
                       dilation: Any, extra: Any, groups: Any) -> list[Window]:  # fmt: skip
    """The windows of the convolution a transposed one transposes: over its output
    (`length`, torch's `(L - 1)*s - 2p + d*(k - 1) + output_padding + 1`, `extra`
    being the output padding), with its input's length `L` as their count."""
    count = weight.ndim - 2
    groups = specialized(groups)
    if count < 1 or x.ndim != weight.ndim or x.dtype != weight.dtype or not is_float_dtype(x.dtype):
        raise Unsupported("a transposed convolution of unbatched, mixed or integer inputs")
    if groups < 1 or x.shape[1] != weight.shape[0] or weight.shape[0] % groups:
        raise Unsupported("a transposed convolution whose channels do not match")
    kernels = [specialized(k) for k in weight.shape[2:]]
    strides, paddings = per_dim(stride, count), per_dim(padding, count)
    dilations, extras = per_dim(dilation, count), per_dim(extra, count)
    spans = []
    for length, k, s, p, d, e in zip(x.shape[2:], kernels, strides, paddings, dilations, extras,
                                     strict=True):  # fmt: skip
        if k < 1 or s < 1 or d < 1 or p < 0 or not 0 <= e < max(s, d):
            raise Unsupported("a transposed convolution torch would refuse")
        spans.append(Window((length - 1) * s - 2 * p + d * (k - 1) + e + 1, k, s, p, d, length))
    return spans


def transposed_convolution(x: LazyArray, weight: LazyArray, bias: Any, stride: Any,
                           padding: Any, dilation: Any, output_padding: Any,
                           groups: Any) -> Any:  # fmt: skip
    """`convolution` with `transposed`: the weight (input channels, output channels of
    a group, kernel...) times the input, added back at each offset's window of the
    output (`col2im`, as a convolution's input gradient is)."""
    spans = transposed_windows(x, weight, stride, padding, dilation, output_padding, groups)
    groups, batch = specialized(groups), x.shape[0]
    per_group = grouped_channels(widened(x), groups)
    columns = np.swapaxes(grouped_weight(widened(weight), groups), -1, -2) @ per_group
    outputs = weight.shape[1] * groups
    result = col2im(needs(columns), (batch, outputs), spans)
    if bias is not None:
        result = needs(result + widened(reshaped(lazy(bias), (outputs, *([1] * len(spans))))))
    return narrowed(result, x.dtype)


def transposed_backward(grad: LazyArray, x: LazyArray, weight: LazyArray, stride: Any,
                        padding: Any, dilation: Any, output_padding: Any, groups: Any,
                        output_mask: Sequence[bool]) -> Any:  # fmt: skip
    """`convolution_backward` of a transposed convolution: the input's gradient is the
    convolution it transposes of the output gradient, the weight's the input times that
    gradient's im2col matrix (summed over the batch), the bias's a sum."""
    spans = transposed_windows(x, weight, stride, padding, dilation, output_padding, groups)
    groups = specialized(groups)
    columns = im2col(grad, spans, groups)
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        product = needs(grouped_weight(weight, groups) @ columns)
        grad_input = reshaped(product, x.shape)
    if output_mask[1]:
        per_group = grouped_channels(x, groups)
        product = per_group @ np.swapaxes(columns, -1, -2)
        grad_weight = reshaped(needs(product).sum(axis=0), weight.shape)
    if output_mask[2]:
        grad_bias = needs(grad.sum(axis=(0, *range(2, grad.ndim))))
    return grad_input, grad_weight, grad_bias


def batch_norm_inference(x: Any, weight: Any, bias: Any, running_mean: Any,
                         running_var: Any, momentum: Any, eps: float) -> Any:  # fmt: skip
    """`_native_batch_norm_legit_no_training` (a batch norm in eval mode, which follows a
    convolution): the channels (dim 1) normalized by the running statistics, and the
    two empty statistics torch returns beside them."""
    x = lazy(x)
    if x.ndim < 2 or not is_float_dtype(x.dtype):
        raise Unsupported("a batch norm without channels, or of integers")
    per_channel = (x.shape[1], *([1] * (x.ndim - 2)))

    def along(v: Any) -> LazyArray:
        return channels_of(v, per_channel)

    scale = 1 / np.sqrt(along(running_var) + eps)
    if weight is not None:
        scale = scale * along(weight)
    out = (widened(x) - along(running_mean)) * scale
    if bias is not None:
        out = out + along(bias)
    empty = asarray(np.zeros((0,), statistics_dtype(x, weight, running_mean)))
    return narrowed(needs(out), x.dtype), empty, empty


def batch_norm_training(x: Any, weight: Any, bias: Any, running_mean: Any, running_var: Any,
                        training: bool, momentum: float, eps: float) -> Any:  # fmt: skip
    """`_native_batch_norm_legit_functional` in training mode: the channels normalized by
    the batch's mean and (biased) variance, which it returns as the mean and the
    inverse deviation, and the running statistics moved by `momentum` towards the
    batch's (the variance unbiased: over n - 1)."""
    x = lazy(x)
    if not training:
        raise Unsupported("a functional batch norm of eval mode")
    out, mean, variance, inverse = batch_statistics(x, weight, bias, eps)
    count = x.size // x.shape[1]
    unbiased = variance * number(count, variance) / number(count - 1, variance)
    running_mean, running_var = lazy(running_mean), lazy(running_var)
    moved_mean = widened(running_mean) * (1 - momentum) + mean * momentum
    moved_variance = widened(running_var) * (1 - momentum) + unbiased * momentum
    kept = statistics_dtype(x, weight, running_mean)
    return (
        narrowed(needs(out), x.dtype),
        *(narrowed(needs(v), kept) for v in (mean, inverse)),
        narrowed(needs(moved_mean), running_mean.dtype),
        narrowed(needs(moved_variance), running_var.dtype),
    )


def batch_norm_without_statistics(x: Any, weight: Any, bias: Any, training: bool,
                                  momentum: float, eps: float) -> Any:  # fmt: skip
    """`_native_batch_norm_legit.no_stats`, a batch norm that keeps no running
    statistics (an `InstanceNorm` without them, a `BatchNorm` made with
    `track_running_stats=False`): the batch's statistics in either mode."""
    x = lazy(x)
    out, mean, _, inverse = batch_statistics(x, weight, bias, eps)
    kept = statistics_dtype(x, weight)
    return narrowed(needs(out), x.dtype), *(narrowed(needs(v), kept) for v in (mean, inverse))


def statistics_dtype(x: LazyArray, *parameters: Any) -> np.dtype[Any]:
    """The dtype of the statistics a batch norm returns: its parameters' (float32 ones
    beside a half-precision input), or the input's."""
    given = [lazy(p).dtype for p in parameters if p is not None]
    return given[0] if given else x.dtype


def batch_statistics(x: LazyArray, weight: Any, bias: Any, eps: float) -> Any:
    """The channels (dim 1) of `x` normalized by the batch's mean and (biased) variance,
    scaled and shifted; with the mean, variance and inverse deviation per channel. All
    in float32 for a half-precision `x`, which the caller rounds once, as torch does."""
    if x.ndim < 2 or not is_float_dtype(x.dtype):
        raise Unsupported("a batch norm without channels, or of integers")
    x = widened(x)
    axes = (0, *range(2, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(axis=axes, keepdims=True)
    inverse = 1 / np.sqrt(variance + eps)
    out = centred * inverse
    per_channel = (x.shape[1], *([1] * (x.ndim - 2)))
    if weight is not None:
        out = out * channels_of(weight, per_channel)
    if bias is not None:
        out = out + channels_of(bias, per_channel)
    channels = (x.shape[1],)
    statistics = (channels_of(s, channels) for s in (mean, variance, inverse))
    return out, *statistics


def group_norm(x: Any, weight: Any, bias: Any, batch: Any, channels: Any, inner: Any,
               groups: int, eps: float) -> Any:  # fmt: skip
    """`native_group_norm`: the channels (dim 1) in `groups` groups, each normalized over
    its channels and positions by its mean and (biased) variance, then scaled and
    shifted per channel; with the mean and the inverse deviation per (batch, group).
    Half-precision inputs are normalized in float32, as torch's kernel does."""
    x = lazy(x)
    groups = specialized(groups)
    if x.ndim < 2 or not is_float_dtype(x.dtype) or channels % groups:
        raise Unsupported("a group norm without channels, or of integers")
    wide = widened(x)
    rows = reshaped(wide, (batch, groups, channels // groups * inner))
    mean = rows.mean(axis=2, keepdims=True)
    centred = rows - mean
    inverse = 1 / np.sqrt((centred * centred).mean(axis=2, keepdims=True) + eps)
    out = reshaped(needs(centred * inverse), x.shape)
    per_channel = (channels, *([1] * (x.ndim - 2)))
    if weight is not None:
        out = out * channels_of(weight, per_channel)
    if bias is not None:
        out = out + channels_of(bias, per_channel)
    statistics = [reshaped(needs(s), (batch, groups)) for s in (mean, inverse)]
    return tuple(narrowed(needs(v), x.dtype) for v in (out, *statistics))


def channels_of(v: Any, shape: tuple[Any, ...]) -> LazyArray:
    """A per-channel vector shaped to `shape` (to broadcast along dim 1, or back to a
    vector), in float32 if it is of half precision (the norms compute in it)."""
    return widened(reshaped(lazy(v), shape))


HANDLERS: dict[str, Handler] = {
    "convolution": convolution, "convolution_backward": convolution_backward,
    "_native_batch_norm_legit_no_training": batch_norm_inference,
    "_native_batch_norm_legit_functional": batch_norm_training,
    "_native_batch_norm_legit": batch_norm_without_statistics,
    "native_group_norm": group_norm,
}  # fmt: skip
"""The ATen ops of this module, by name."""
