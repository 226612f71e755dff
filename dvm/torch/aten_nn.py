"""ATen's pooling and convolution ops, as slices, elementwise ops and matmuls of the
dialect (see `aten`).

A pooling window of K positions along a spatial dim, at stride s and dilation d, reads
for output position o the input at `o*s - p + k*d` for each offset k < K: for each
offset, one strided slice of the input padded by p (and by what a `ceil_mode` window
reaches past its end) holds that element of every window. A pooling is then a
maximum (or a sum) over the K1*K2 slices, elementwise ops that fuse into one kernel;
its backward adds the gradient back at the slices (a strided insert per offset) or at
the indices a max pooling chose (`tensor.scatter_add`). The spatial dims are the last
ones: the 1-d forms reach ATen as 2-d ones of height 1.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dvm.lazy import LazyArray, asarray, record
from dvm.numerics import is_float_dtype
from dvm.torch.aten import (
    Handler,
    Unsupported,
    filled,
    lazy,
    narrowed,
    needs,
    number,
    reshaped,
    select,
    slice_,
    widened,
)
from dvm.torch.aten_index import flat_add, flat_positions
from dvm.torch.sizes import Size, plain, specialized

INT64 = np.dtype(np.int64)


# -- windows ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    """A pooling window along one spatial dim of `length` elements (a size of the
    call): `kernel` offsets at `stride` and `dilation`, after `padding`, `out`
    positions."""

    length: Any
    kernel: int
    stride: int
    padding: int
    dilation: int
    out: Any
    ceil_mode: bool = False

    @property
    def span(self) -> Any:
        """The padded length the windows read: up to the last window's last offset."""
        return (self.out - 1) * self.stride + self.dilation * (self.kernel - 1) + 1

    @property
    def after(self) -> Any:
        """The padding after the input: its right padding, and with `ceil_mode` the
        most a last partial window can reach past it, `stride - 1` (the span is at most
        `length + 2*padding + stride - 1`). All of it at every length, though a stride
        may leave its last elements unread: which it leaves, and how far a `ceil_mode`
        window reaches, depend on the length's remainder, and a program that padded
        only those would differ with it (a plan per remainder, noted as guards)."""
        return self.padding + self.stride - 1 if self.ceil_mode else self.padding

    def reads_padding(self) -> bool:
        """Whether a window may read outside the input (a `ceil_mode` one's last, at some
        remainders of the length: always counted, for one plan over them all)."""
        return self.padding > 0 or self.ceil_mode


def window(length: Any, kernel: int, stride: int, padding: int, dilation: int,
           ceil_mode: bool) -> Window:  # fmt: skip
    """torch's output size of a pooling or a convolution: windows that start in the
    input or its left padding (with `ceil_mode`, a last partial window too, if it
    starts before the end of the input and its left padding)."""
    if kernel < 1 or stride < 1 or dilation < 1 or padding < 0:
        raise Unsupported("a window torch would refuse")
    reach = length + 2 * padding - dilation * (kernel - 1) - 1
    out = (reach + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= length + padding:
        out = out - 1
    if out < 1:
        raise Unsupported("a pooling window larger than its input")
    return Window(length, kernel, stride, padding, dilation, out, ceil_mode)


def per_dim(values: Any, count: int, default: Sequence[int] | None = None) -> list[int]:
    """A pooling argument for `count` spatial dims (torch gives one for all, or none
    for the default)."""
    values = [values] if isinstance(values, int) else values
    if not all(isinstance(v, int) for v in values):
        raise Unsupported("a window argument that is not a number")
    given = [specialized(v) for v in values] if values else list(default or [])
    if len(given) == 1:
        given = given * count
    if len(given) != count:
        raise Unsupported("a pooling argument of another length")
    return given


def windows(x: LazyArray, count: int, kernel: Sequence[Any], stride: Sequence[Any],
            padding: Any, dilation: Any, ceil_mode: bool) -> list[Window]:  # fmt: skip
    """The windows along the last `count` dims of `x` (with a batch dim or without)."""
    if x.ndim not in (count + 1, count + 2):
        raise Unsupported("a pooling input of another rank")
    kernels = per_dim(kernel, count)
    strides = per_dim(stride, count, kernels)
    paddings = per_dim(padding, count, [0])
    dilations = per_dim(dilation, count, [1])
    lengths = x.shape[x.ndim - count :]
    if any(2 * p > k for p, k in zip(paddings, kernels, strict=True)):
        raise Unsupported("a pooling padded by more than half its window")
    return [
        window(*args, ceil_mode)
        for args in zip(lengths, kernels, strides, paddings, dilations, strict=True)
    ]


def padded(x: LazyArray, axis: int, low: Any, high: Any, fill: Any) -> LazyArray:
    """`x` between `low` and `high` elements of `fill` along `axis` (sizes of the call
    kept: numpy's `pad` would read them as plain numbers)."""
    pieces = []
    for width in (low, high):
        shape = tuple(width if a == axis else d for a, d in enumerate(x.shape))
        given = fill if isinstance(fill, LazyArray) else asarray(np.asarray(fill, x.dtype))
        constant = given.astype(x.dtype, copy=False)._node
        pieces.append(record.broadcast_to(constant, shape) if width else None)
    parts = [p for p in (pieces[0], x._node, pieces[1]) if p is not None]
    if len(parts) == 1:
        return x
    joined = record.concat(parts, axis)
    assert joined is not None
    return LazyArray(joined)


def constant_pad(x: Any, pad: Sequence[Any], value: Any = 0) -> Any:
    """`constant_pad_nd`: `pad` holds (before, after) pairs from the last dim back; a
    positive width pads with `value`, a negative one cuts that many elements off."""
    x = given = lazy(x)
    if len(pad) % 2 or len(pad) // 2 > x.ndim or isinstance(value, LazyArray):
        raise Unsupported("a padding of more dims than the input, or by a computed value")
    value = number(value, x)  # (a size of the call: a number a replay computes anew)
    for k in range(len(pad) // 2):
        axis, low, high = x.ndim - 1 - k, pad[2 * k], pad[2 * k + 1]
        if low < 0 or high < 0:
            start, end = (-low if low < 0 else 0), (x.shape[axis] + high if high < 0 else None)
            x = slice_(x, axis, start, end)
        x = padded(x, axis, low if low > 0 else 0, high if high > 0 else 0, value)
    return x if x is not given else LazyArray(record.convert(x._node, x.dtype))  # (a copy)


def offset_slices(
    x: LazyArray, spans: list[Window], fill: float
) -> Iterator[tuple[Any, LazyArray]]:
    """Per kernel offset (k1, k2...), the strided slice of `x` padded with `fill` that
    holds that element of every window (made one at a time: a long recording flushes
    what is alive, and only the running results should be)."""
    first = x.ndim - len(spans)
    for axis, w in enumerate(spans, first):
        x = padded(x, axis, w.padding, w.after, fill)
    for offsets in np.ndindex(*(w.kernel for w in spans)):
        yield offsets, LazyArray(record.extract_slice(x._node, window_specs(offsets, spans, first)))


def window_specs(offsets: Sequence[int], spans: list[Window], first: int) -> list[Any]:
    """The strided slice of the padded input that holds element `offsets` of every
    window, as the specs of `record.extract_slice` (the dims before `first` whole)."""
    specs: list[Any] = [None] * first
    return specs + [(k * w.dilation, w.out, w.stride) for k, w in zip(offsets, spans, strict=True)]


def added_at_windows(parts: Iterable[tuple[Sequence[int], LazyArray]], spans: list[Window],
                     front: tuple[Any, ...], dtype: Any) -> LazyArray:  # fmt: skip
    """An input's gradient from its windows' (a backward): each kernel offset's part
    added at that offset's slice of the padded input (a strided insert), the padding
    then cut off; `front` the dims before the spatial ones."""
    first = len(front)
    total = filled((*front, *(w.padding + w.length + w.after for w in spans)), 0, dtype)
    for offsets, part in parts:
        specs = window_specs(offsets, spans, first)
        added = LazyArray(record.extract_slice(total._node, specs)) + part
        total = LazyArray(record.insert_slice(total._node, needs(added)._node, specs))
    if all(w.padding == 0 and w.after == 0 for w in spans):
        return total
    inner: list[Any] = [None] * first + [(w.padding, w.length, 1) for w in spans]
    return LazyArray(record.extract_slice(total._node, inner))


def starts(shape: Sequence[Any], axis: int, w: Window) -> LazyArray:
    """Each output position's window start along `axis` (`o*s - p`), int64, in `shape`."""
    position = LazyArray(record.iota(tuple(shape), axis, INT64))
    start = position * w.stride if w.stride != 1 else position
    return needs(start - w.padding) if w.padding else start


# -- max pooling ---------------------------------------------------------------------------------


def max_pool(x: Any, kernel: Sequence[Any], stride: Sequence[Any] = (), padding: Any = 0,
             dilation: Any = 1, ceil_mode: bool = False, count: int = 2) -> Any:  # fmt: skip
    """`max_pool2d_with_indices` (`count` 2) or `max_pool3d_with_indices`: the maximum
    of each window and its flat position in the input's plane, as torch's kernel
    finds them: from the window's first element in the input (and -inf), on to each
    larger one or NaN (the first of equal maxima, the last NaN), padding never."""
    x = lazy(x)
    if not is_float_dtype(x.dtype):
        raise Unsupported("a max pooling of integers")
    spans = windows(x, count, kernel, stride, padding, dilation, ceil_mode)
    first = x.ndim - count
    out_shape = (*x.shape[:first], *(w.out for w in spans))
    begins = [starts(out_shape, axis, w) for axis, w in enumerate(spans, first)]
    strides = plane_strides(spans)
    base = flat_sum([b * number(s, b) for b, s in zip(begins, strides, strict=True)])
    inside = [
        [inside_mask(b, w, k) for k in range(w.kernel)] for b, w in zip(begins, spans, strict=True)
    ]
    chosen = flat_sum(
        [first_inside(b, w) * number(s, b) for b, w, s in zip(begins, spans, strides, strict=True)]
    )
    best: Any = None
    for offsets, values in offset_slices(x, spans, -math.inf):
        # the maximum alone (NaN wins; padding is -inf), which inference reads without
        # the indices' chain
        take = values != -np.inf if best is None else (values > best) | np.isnan(values)
        masks = [m[k] for m, k in zip(inside, offsets, strict=True) if m[k] is not None]
        for mask in masks:
            take = take & mask
        shift = sum(k * w.dilation * s for k, w, s in zip(offsets, spans, strides, strict=True))
        position = base + number(shift, base) if type(shift) is not int or shift else base
        chosen = np.where(take, position, chosen)
        best = values if best is None else np.maximum(best, values)
    return needs(best), needs(chosen)


def plane_strides(spans: list[Window]) -> list[Any]:
    """Per spatial dim, how far apart its elements are in the input's plane."""
    strides: list[Any] = []
    step: Any = 1
    for w in reversed(spans):
        strides.insert(0, step)
        step = step * w.length
    return strides


def flat_sum(terms: list[Any]) -> LazyArray:
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return needs(total)


def inside_mask(begin: LazyArray, w: Window, k: int) -> Any:
    """Where offset `k` of each window lies in the input (None: everywhere). Whether
    the last window's offset can pass the input's end depends on the length's
    remainder; it is decided from what it reaches at most (`Window.after`), so that
    one plan serves every length."""
    at = begin + k * w.dilation if k else begin
    low = k * w.dilation < w.padding
    high = w.after > w.dilation * (w.kernel - 1 - k)
    if low and high:
        return (at >= 0) & (at < number(w.length, at))
    if low:
        return at >= 0
    return at < number(w.length, at) if high else None


def first_inside(begin: LazyArray, w: Window) -> Any:
    """The first offset of each window that lies in the input (past its left
    padding)."""
    if not w.padding:
        return begin
    skipped = (np.maximum(-begin, 0) + (w.dilation - 1)) // w.dilation
    return begin + skipped * w.dilation if w.dilation != 1 else begin + skipped


def max_pool_backward(grad: Any, x: Any, kernel: Sequence[Any], stride: Sequence[Any],
                      padding: Any, dilation: Any, ceil_mode: bool, indices: Any,
                      count: int = 2) -> Any:  # fmt: skip
    """The gradient of a max pooling: each output's gradient added at the position
    its window chose (`tensor.scatter_add` within each plane, equal ones adding up)."""
    return added_at_indices(lazy(grad), lazy(x), lazy(indices), count)


def added_at_indices(grad: LazyArray, x: LazyArray, indices: LazyArray, count: int) -> LazyArray:
    """Each output's gradient added at the flat position `indices` names in its plane of
    `x` (the last `count` dims)."""
    first = x.ndim - count
    planes, plane = math.prod(x.shape[:first]), math.prod(x.shape[first:])
    outputs = math.prod(grad.shape[first:])
    rows, at = reshaped(grad, (planes, outputs)), reshaped(indices, (planes, outputs))
    zeros = filled((planes, plane), 0, grad.dtype)
    return reshaped(flat_add(zeros, flat_positions(at, (planes, plane), 1), rows), x.shape)


# -- average pooling -------------------------------------------------------------------------------


def avg_pool(x: Any, kernel: Sequence[Any], stride: Sequence[Any] = (), padding: Any = 0,
             ceil_mode: bool = False, count_include_pad: bool = True,
             divisor_override: Any = None, count: int = 2) -> Any:  # fmt: skip
    """`avg_pool2d` (`count` 2) or `avg_pool3d`: each window's sum over its divisor
    (half precision in float32, rounded once, as torch's kernel)."""
    x = lazy(x)
    if not is_float_dtype(x.dtype):
        raise Unsupported("an average pooling of integers")
    spans = windows(x, count, kernel, stride, padding, 1, ceil_mode)
    total: Any = None
    for _, values in offset_slices(widened(x), spans, 0.0):
        total = values if total is None else total + values
    mean = needs(total / divisor(total, spans, count_include_pad, divisor_override))
    return narrowed(mean, x.dtype)


def divisor(like: LazyArray, spans: list[Window], count_include_pad: bool,
            override: Any) -> Any:  # fmt: skip
    """What torch divides each window's sum by: `override`; else the window's size,
    cut at the end of the padding (with `count_include_pad`) or to the input."""
    if override is not None:
        return number(override, like)
    if not any(w.reads_padding() for w in spans):
        return math.prod(w.kernel for w in spans)
    first = like.ndim - len(spans)
    size: Any = None
    for axis, w in enumerate(spans, first):
        start = starts(like.shape, axis, w)
        end = np.minimum(start + w.kernel, number(w.length + w.padding, start))
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, number(w.length, start))
        extent = needs(end - start)
        size = extent if size is None else size * extent
    return needs(size).astype(like.dtype)


def avg_pool_backward(grad: Any, x: Any, kernel: Sequence[Any], stride: Sequence[Any],
                      padding: Any, ceil_mode: bool, count_include_pad: bool,
                      divisor_override: Any, count: int = 2) -> Any:  # fmt: skip
    """The gradient of an average pooling: each window's gradient over its divisor,
    added at every position it read (a strided insert per kernel offset into the
    padded input, whose padding is then cut off)."""
    grad, x = lazy(grad), lazy(x)
    spans = windows(x, count, kernel, stride, padding, 1, ceil_mode)
    share = needs(grad / divisor(grad, spans, count_include_pad, divisor_override))
    parts = ((offsets, share) for offsets in np.ndindex(*(w.kernel for w in spans)))
    return added_at_windows(parts, spans, x.shape[: x.ndim - count], share.dtype)


# -- adaptive average pooling ----------------------------------------------------------------------


def divides(x: LazyArray, output_size: Sequence[Any]) -> bool:
    """Whether each output size divides its spatial dim of `x` at every call: a fixed
    length, or a size whose identity is a multiple (`4 * s0`). A length that divides
    only at this call is not taken as dividing, which would tie the plan to a
    remainder of the length (a plan per remainder) for a reshape rather than a product."""
    lengths = x.shape[x.ndim - len(output_size) :]
    return all(
        type(out) is int and out >= 1 and always_multiple(length, out)
        for length, out in zip(lengths, output_size, strict=True)
    )


def always_multiple(length: Any, factor: int) -> bool:
    if isinstance(length, Size):
        import sympy

        return factor == 1 or sympy.Mod(length.identity(), factor) == 0
    return plain(length) % factor == 0


def averaging_matrix(out: Any, length: Any, like: LazyArray) -> LazyArray:
    """The (out, length) matrix of an adaptive average pooling along one dim: row i
    averages the input positions from floor(i * length / out) up to ceil((i + 1) *
    length / out), torch's windows, which overlap where out does not divide length."""
    if not is_float_dtype(like.dtype):
        raise Unsupported("an adaptive average pooling of integers")
    inside, size = adaptive_windows(out, length)
    return needs(inside.astype(like.dtype) / size.astype(like.dtype))


def adaptive_windows(out: Any, length: Any) -> tuple[LazyArray, LazyArray]:
    """torch's adaptive pooling windows along a dim: the (out, length) mask of the input
    positions from floor(i * length / out) up to ceil((i + 1) * length / out) in row i
    (windows that overlap where out does not divide length), and each one's size."""
    shape = (out, length)
    rows, cols = (LazyArray(record.iota(shape, axis, INT64)) for axis in (0, 1))
    n, m = number(length, rows), number(out, rows)
    begin, end = rows * n // m, ((rows + 1) * n + m - 1) // m
    return needs((cols >= begin) & (cols < end)), needs(end - begin)


def adaptive_blocks(x: LazyArray, output_size: Sequence[Any]) -> list[tuple[Any, Any]]:
    """Per spatial dim, (output size, block size) where the output divides the input
    evenly (each window is then a block of its own); other sizes run in torch."""
    count = len(output_size)
    if x.ndim not in (count + 1, count + 2):
        raise Unsupported("an adaptive pooling input of another rank")
    blocks = []
    for length, out in zip(x.shape[x.ndim - count :], output_size, strict=True):
        if out < 1 or length % out != 0:
            raise Unsupported("an adaptive pooling whose output does not divide its input")
        blocks.append((out, length // out))
    return blocks


def adaptive_avg_pool(x: Any, output_size: Sequence[Any]) -> Any:
    """`_adaptive_avg_pool2d` (or 3d). An output dividing the input: each spatial dim
    split into (output, block), and the mean over the blocks; any other output: a
    product by each dim's averaging matrix (`averaging_matrix`). Half precision in
    float32, rounded once."""
    given = lazy(x)
    return narrowed(adaptive_mean(widened(given), output_size), given.dtype)


def adaptive_mean(x: LazyArray, output_size: Sequence[Any]) -> Any:
    if not divides(x, output_size):
        first = x.ndim - len(output_size)
        for axis, out in zip(range(first, x.ndim), output_size, strict=True):
            averaging = averaging_matrix(out, x.shape[axis], x)
            x = np.swapaxes(needs(np.swapaxes(x, axis, -1) @ averaging.T), axis, -1)
        return needs(x)
    blocks = adaptive_blocks(x, output_size)
    first = x.ndim - len(blocks)
    split = (*x.shape[:first], *(d for pair in blocks for d in pair))
    axes = tuple(first + 2 * k + 1 for k in range(len(blocks)))
    return needs(reshaped(x, split).mean(axis=axes))


def adaptive_max_pool(x: Any, output_size: Sequence[Any]) -> Any:
    """`adaptive_max_pool2d` (or 3d): the maximum of each window and its flat position
    in the input's plane (or volume). An output dividing the input: the block's
    elements in a row of their own, the first maximum's offset in it turned into a
    position along each dim; any other output: `adaptive_max_pool_of_windows`."""
    x = lazy(x)
    count = len(output_size)
    if not is_float_dtype(x.dtype) or count not in (2, 3):
        raise Unsupported("an adaptive max pooling of integers, or not 2-d or 3-d")
    if not divides(x, output_size):
        return adaptive_max_pool_of_windows(x, output_size)
    blocks = adaptive_blocks(x, output_size)
    first = x.ndim - count
    front = x.shape[:first]
    split = reshaped(x, (*front, *(d for pair in blocks for d in pair)))
    order = (*range(first), *(first + 2 * k for k in range(count)),
             *(first + 2 * k + 1 for k in range(count)))  # fmt: skip
    outputs = tuple(out for out, _ in blocks)
    block_size = math.prod(block for _, block in blocks)
    in_rows = reshaped(needs(split.transpose(order)), (*front, *outputs, block_size))
    offset = pooled_position(in_rows)
    position: Any = None
    for k, (_, block) in enumerate(blocks):
        inner = math.prod(b for _, b in blocks[k + 1 :])  # (the offset's stride along k)
        along = offset // number(inner, offset) % number(block, offset)
        start = LazyArray(record.iota((*front, *outputs), first + k, INT64))
        at = start * number(block, offset) + along
        position = at if position is None else position * number(x.shape[first + k], at) + at
    return needs(np.max(in_rows, axis=-1)), needs(position)


def adaptive_max_pool_of_windows(x: LazyArray, output_size: Sequence[Any]) -> Any:
    """`adaptive_max_pool2d` (or 3d) whose windows overlap (an output not dividing the
    input): the maximum along the last dim's windows, then along the one before's, and
    so on (a window is a box), each of every position masked by its window
    (`adaptive_windows`); the position is the first maximum's in row-major order (or
    the last NaN's), as torch's: the dim before's, then the one it had in its row."""
    values, position = max_of_windows(x, output_size[-1])
    inner: Any = x.shape[-1]
    for k in range(2, len(output_size) + 1):
        moved = needs(np.swapaxes(values, -1, -k))
        values, at = max_of_windows(moved, output_size[-k])
        values, at = needs(np.swapaxes(values, -1, -k)), needs(np.swapaxes(at, -1, -k))
        # (the positions are argmax positions, in range: numpy's checks are not needed)
        within = LazyArray(record.take_along_axis(position._node, at._node, x.ndim - k))
        position = needs(at * number(inner, at) + within)
        inner = inner * x.shape[-k]
    return values, position


def max_of_windows(x: LazyArray, out: Any) -> tuple[LazyArray, LazyArray]:
    """The maximum of each of the last dim's `out` windows, and its first position."""
    inside, _ = adaptive_windows(out, x.shape[-1])
    spread = needs(np.where(inside, x[..., None, :], -np.inf))
    return needs(np.max(spread, axis=-1)), pooled_position(spread)


def pooled_position(rows: LazyArray) -> LazyArray:
    """Where in each row (the last dim) torch's max poolings take their maximum: the
    first maximum, or the last NaN (its kernels take a value greater than the maximum
    so far, or NaN)."""
    count = rows.shape[-1]
    first = np.argmax(rows, axis=-1)
    last_nan = number(count - 1, first) - np.argmax(np.flip(rows, -1), axis=-1)
    return needs(np.where(np.isnan(np.max(rows, axis=-1)), last_nan, first))


def adaptive_avg_pool_backward(grad: Any, x: Any, count: int = 2) -> Any:
    """Each output's gradient over its block's size, spread over the block (or, for
    an output that does not divide the input, by the transposed averaging matrices)."""
    grad, x = lazy(grad), lazy(x)
    if not divides(x, grad.shape[grad.ndim - count :]):
        for axis in range(x.ndim - count, x.ndim):
            averaging = averaging_matrix(grad.shape[axis], x.shape[axis], grad)
            grad = np.swapaxes(needs(np.swapaxes(grad, axis, -1) @ averaging), axis, -1)
        return needs(grad)
    blocks = adaptive_blocks(x, grad.shape[grad.ndim - count :])
    first = x.ndim - len(blocks)
    split = (*x.shape[:first], *(d for pair in blocks for d in pair))
    units = (*x.shape[:first], *(d for out, _ in blocks for d in (out, 1)))
    size = math.prod(block for _, block in blocks)
    share = reshaped(grad, units) / number(size, grad)
    return reshaped(needs(np.broadcast_to(share, split)), x.shape)


def unfold(x: Any, dim: int, size: int, step: int) -> Any:
    """`Tensor.unfold`: the windows of `size` elements at `step` along `dim`, in a new
    last dim; with `dim` moved last, the strided slice of each offset in the window
    holds that element of every window, as a pooling reads its input."""
    x = lazy(x)
    if x.ndim == 0:  # (torch's windows of a 0-d tensor: one, with no dim of windows)
        return select(unfold(reshaped(x, (1,)), 0, size, step), 0, 0)
    axis = specialized(dim) % x.ndim
    span = window(x.shape[axis], specialized(size), specialized(step), 0, 1, False)
    last = [a for a in range(x.ndim) if a != axis] + [axis]
    parts = [np.expand_dims(part, -1) for _, part in offset_slices(x.transpose(last), [span], 0)]
    windows = needs(np.concatenate(parts, axis=-1))
    return windows.transpose([*np.argsort(last), x.ndim])


def unfold_backward(grad: Any, sizes: Sequence[Any], dim: int, size: int, step: int) -> Any:
    """The input's gradient of `unfold`: each offset's part of the windows' gradient
    added at its strided slice of the input."""
    grad, ndim = lazy(grad), len(sizes)
    if ndim == 0:
        return reshaped(unfold_backward(reshaped(grad, (1, size)), (1,), 0, size, step), ())
    axis = specialized(dim) % ndim
    span = window(sizes[axis], specialized(size), specialized(step), 0, 1, False)
    last = [a for a in range(ndim) if a != axis] + [axis]
    moved = grad.transpose([*last, ndim])
    parts = (((k,), select(moved, -1, k)) for k in range(span.kernel))
    total = added_at_windows(parts, [span], moved.shape[: ndim - 1], grad.dtype)
    return total.transpose(list(np.argsort(last)))


HANDLERS: dict[str, Handler] = {
    "unfold": unfold, "unfold_backward": unfold_backward,
    "max_pool2d_with_indices": max_pool,
    "max_pool2d_with_indices_backward": max_pool_backward,
    "max_pool3d_with_indices": lambda *a, **k: max_pool(*a, **k, count=3),
    "max_pool3d_with_indices_backward": lambda *a, **k: max_pool_backward(*a, **k, count=3),
    "avg_pool2d": avg_pool, "avg_pool2d_backward": avg_pool_backward,
    "avg_pool3d": lambda *a, **k: avg_pool(*a, **k, count=3),
    "avg_pool3d_backward": lambda *a, **k: avg_pool_backward(*a, **k, count=3),
    "constant_pad_nd": constant_pad,
    "adaptive_max_pool2d": adaptive_max_pool,
    "adaptive_max_pool2d_backward": lambda grad, x, indices: added_at_indices(
        lazy(grad), lazy(x), lazy(indices), 2
    ),
    "adaptive_max_pool3d": adaptive_max_pool,
    "adaptive_max_pool3d_backward": lambda grad, x, indices: added_at_indices(
        lazy(grad), lazy(x), lazy(indices), 3
    ),
    "_adaptive_avg_pool2d": adaptive_avg_pool, "_adaptive_avg_pool3d": adaptive_avg_pool,
    "_adaptive_avg_pool2d_backward": adaptive_avg_pool_backward,
    "_adaptive_avg_pool3d_backward": lambda *a: adaptive_avg_pool_backward(*a, count=3),
}  # fmt: skip
"""The ATen ops of this module, by name."""
