"""Running extremes (`cummax`, `cummin`) and selections by rank (`median`,
`nanmedian`, `kthvalue`, `mode`), each with the index torch's CPU kernel returns
(see `aten`), and the running `logcumsumexp`.

The dialect has no running maximum, so `cummax` combines each element with the one
`s` before it for s = 1, 2, 4... (a prefix scan by doubling): after the round of `s`
every element holds the extreme of the `2s` elements up to it. The rounds' count
depends on the dim's length, so a plan serves the lengths of one power of two.
`logcumsumexp` is the same scan of pairs (m, t) standing for `m + ln t`: the running
maximum m and the sum t of `exp(x - m)`, rescaled as m grows, so no `exp` overflows
and no small term is lost against a later large one.

The selections read a stable ascending sort (`aten_index.sort`: equal values by
their index, NaN last). torch's `median` and `nanmedian` pick from exactly that
order (`std::nth_element` by value, then index); its `kthvalue` runs a quickselect
whose index among equal values follows its swaps, and its `mode` a `std::sort` by
value alone, stable only for the insertion sort it does below 17 elements. Where
that order decides the index, the op runs in torch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dvm.lazy import LazyArray, asarray, record
from dvm.numerics import is_float_dtype, reduction_identity
from dvm.torch.aten import (
    Handler,
    Unsupported,
    cat,
    filled,
    held,
    lazy,
    narrowed,
    needs,
    number,
    reshaped,
    slice_,
)
from dvm.torch.aten_index import sort
from dvm.torch.sizes import specialized

INT64 = np.dtype(np.int64)
FLOAT64 = np.dtype(np.float64)
LONGEST_INSERTION_SORT = 16
"""The longest row `std::sort` orders by insertion, which keeps equal values in
the order of their index (libstdc++'s threshold)."""


def shifted(x: LazyArray, step: Any, axis: int, fill: Any) -> LazyArray:
    """`x` moved `step` places along `axis` (step < its length), `fill` before it."""
    length = x.shape[axis]
    head = filled([step if a == axis else d for a, d in enumerate(x.shape)], fill, x.dtype)
    return cat([head, slice_(x, axis, 0, length - step)], axis)


def running_extreme(largest: bool) -> Handler:
    """`cummax` (`largest`) or `cummin`: values, and the index torch's loop keeps, the
    last element at least as large (small) as every one before it, or the last NaN
    once there is one (a NaN then stays)."""

    def handler(x: Any, dim: Any) -> Any:
        x = lazy(x)
        if x.ndim == 0:
            return x.copy(), asarray(np.zeros((), INT64))
        axis = specialized(dim) % x.ndim
        values = needs(x.astype(np.uint8)) if x.dtype.kind == "b" else x
        indices = LazyArray(record.iota(tuple(x.shape), axis, INT64))
        fill, step = reduction_identity("max" if largest else "min", values.dtype), 1
        while step < x.shape[axis]:  # (a guard per round: a plan per power of two)
            before = shifted(values, step, axis, fill)
            beats = (values >= before) if largest else (values <= before)
            if is_float_dtype(values.dtype):
                beats = np.isnan(values) | (beats & ~np.isnan(before))
            values = needs(np.where(beats, values, before))
            indices = needs(np.where(beats, indices, shifted(indices, step, axis, 0)))
            step *= 2
        return needs(values.astype(x.dtype, copy=False)), indices

    return handler


def logcumsumexp(x: Any, dim: Any) -> Any:
    """`ln(cumsum(exp(x)))` along `dim`, by doubling over pairs (m, t), `m + ln t`: m the
    largest element so far, t the sum of `exp(x - m)` (from 1 to the count). Computed
    in float64 and rounded once, as torch's CPU loop accumulates float32 in double.
    torch's values: NaN from a NaN on, else inf from an inf on, -inf while every
    element is -inf. Integers and bools run in torch (which raises)."""
    x = lazy(x)
    if not is_float_dtype(x.dtype):
        raise Unsupported(f"logcumsumexp of {x.dtype}")
    if x.ndim == 0:
        return x.copy()
    axis = specialized(dim) % x.ndim
    largest = narrowed(x, FLOAT64)
    total = filled(list(x.shape), 1.0, FLOAT64)
    step = 1
    while step < x.shape[axis]:  # (a guard per round: a plan per power of two)
        largest_before = shifted(largest, step, axis, -np.inf)
        total_before = shifted(total, step, axis, 0.0)
        top = needs(np.maximum(largest, largest_before))  # (NaN stays NaN)
        total = needs(rescaled(total, largest, top) + rescaled(total_before, largest_before, top))
        largest, step = top, step * 2
    return narrowed(needs(largest + np.log(total)), x.dtype)


def rescaled(total: LazyArray, largest: LazyArray, top: LazyArray) -> Any:
    """`total exp(largest - top)`, the sum of a pair moved to the maximum `top`; `total`
    itself where `largest` is `top` (also an infinity, whose difference is NaN)."""
    return np.where(largest == top, total, total * np.exp(largest - top))


def picked(x: LazyArray, position: Any, axis: int, keepdim: bool) -> tuple[Any, Any]:
    """The value and the index at `position` (one per row, kept along `axis`) of `x`'s
    stable ascending sort along `axis`."""
    values, order = sort(x, axis)
    shape = [1 if a == axis else d for a, d in enumerate(x.shape)]
    if isinstance(position, LazyArray):
        at = needs(np.broadcast_to(position, tuple(shape)))
    else:
        at = filled(shape, position, INT64)
    chosen = [LazyArray(record.take_along_axis(v._node, at._node, axis)) for v in (values, order)]
    return kept(chosen[0], axis, keepdim), kept(chosen[1], axis, keepdim)


def kept(x: LazyArray, axis: int, keepdim: bool) -> LazyArray:
    """A reduction's result `x` (of length 1 along `axis`) without that dim, unless
    `keepdim`."""
    return x if keepdim else reshaped(x, [d for a, d in enumerate(x.shape) if a != axis])


def rows(x: Any, dim: Any, operation: str) -> tuple[LazyArray, int, Any]:
    """`x`, the axis `dim` names and its length, which must not be 0 (torch raises)."""
    x = lazy(x)
    axis = specialized(dim) % max(x.ndim, 1)
    length = x.shape[axis] if x.ndim else 1
    if length == 0:
        raise Unsupported(f"a {operation} of an empty dim")
    return x, axis, length


def median_along(ignore_nan: bool) -> Handler:
    """`median` (the lower median, or the first NaN of a row that has one) or
    `nanmedian` (the lower median of the row's numbers), by dim or of the whole tensor
    (the value alone). A row of NaNs alone leaves `nanmedian`'s index to the order of
    torch's `std::nth_element`: such a call runs in torch (read now, a sync point, and
    on each replay)."""

    def handler(x: Any, dim: Any = None, keepdim: bool = False) -> Any:
        whole = dim is None
        if whole:
            x = reshaped(lazy(x), [lazy(x).size])
        x, axis, length = rows(x, 0 if whole else dim, "median")
        if x.ndim == 0:
            return x.copy() if whole else (x.copy(), asarray(np.zeros((), INT64)))
        position = (length - 1) // 2
        if is_float_dtype(x.dtype):
            nans = needs(np.isnan(x)).sum(axis=axis, keepdims=True)
            numbers = number(length, nans) - nans
            if ignore_nan:
                if not whole:  # (torch's index in a row of NaNs follows its nth_element)
                    unique_everywhere(needs(np.all(numbers > 0)), "nanmedian of NaNs")
                position = np.maximum(numbers - 1, 0) // 2
            else:
                position = np.where(nans > 0, numbers, number(position, nans))
        value, index = picked(x, position, axis, keepdim and not whole)
        return reshaped(value, []) if whole else (value, index)

    return handler


def kthvalue(x: Any, k: Any, dim: Any = -1, keepdim: bool = False) -> Any:
    """The k-th smallest along `dim` (NaN above every number) and its index. Where that
    value occurs more than once in a row, which of them torch's quickselect names
    depends on its swaps: the op then runs in torch. Whether it does is read now (a
    sync point), and again on each replay."""
    x, axis, length = rows(x, dim, "kthvalue")
    if not 1 <= k <= length:
        raise Unsupported("a kthvalue out of the dim's range")
    if x.ndim == 0:
        return x.copy(), asarray(np.zeros((), INT64))
    value, index = picked(x, k - 1, axis, True)
    equal = x == value
    if is_float_dtype(x.dtype):
        equal = equal | (np.isnan(x) & np.isnan(value))
    unique_everywhere(needs(np.all(needs(equal).sum(axis=axis) == 1)), "kthvalue")
    return kept(value, axis, keepdim), kept(index, axis, keepdim)


def unique_everywhere(condition: LazyArray, operation: str) -> None:
    """Unsupported where `condition`, read now and on each replay (`held`), is false."""
    if not held(condition):
        raise Unsupported(f"a {operation} whose index torch's own ordering decides")


def mode(x: Any, dim: Any = -1, keepdim: bool = False) -> Any:
    """The most frequent value along `dim` (the smallest of equally frequent ones) and
    the last index of it, as torch's kernel, which sorts each row by value: rows of
    up to 16 elements, which its sort keeps in the order of their index, without
    NaN (checked now, a sync point, and on each replay); others run in torch."""
    x, axis, length = rows(x, dim, "mode")
    if x.ndim == 0:
        return x.copy(), asarray(np.zeros((), INT64))
    if length > LONGEST_INSERTION_SORT:
        raise Unsupported("a mode of more than 16 elements, whose index torch's sort decides")
    if is_float_dtype(x.dtype):
        unique_everywhere(needs(~np.any(np.isnan(x))), "mode of NaN")
    work = needs(x.astype(np.uint8)) if x.dtype.kind == "b" else x
    counts = needs(np.expand_dims(work, axis) == np.expand_dims(work, axis + 1)).sum(axis=axis)
    frequent = counts == counts.max(axis=axis, keepdims=True)
    top = reduction_identity("min", work.dtype)
    smallest = needs(np.where(frequent, work, top)).min(axis=axis, keepdims=True)
    positions = LazyArray(record.iota(tuple(x.shape), axis, INT64))
    index = needs(np.where(work == smallest, positions, -1)).max(axis=axis, keepdims=True)
    value = LazyArray(record.take_along_axis(x._node, index._node, axis))
    return kept(value, axis, keepdim), kept(index, axis, keepdim)


HANDLERS: dict[str, Handler] = {
    "cummax": running_extreme(largest=True), "cummin": running_extreme(largest=False),
    "median": median_along(ignore_nan=False), "nanmedian": median_along(ignore_nan=True),
    "kthvalue": kthvalue, "mode": mode, "logcumsumexp": logcumsumexp,
}  # fmt: skip
"""The ATen ops of this module, by name."""
