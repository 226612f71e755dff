"""ATen ops as numpy calls on lazy arrays, which record them (`dvm.lazy`).

One handler per ATen op (by its name without the overload, `aten.add.Tensor` is
`add`): it takes the node's arguments, tensors as lazy arrays and sizes as ints, and
returns what the op returns, or raises `Unsupported` (the op then runs in torch,
between the programs: a partial graph). The graphs come from AOTAutograd with the
core ATen decompositions, so the ops to cover are few and functional.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

from dvm.lazy import LazyArray, asarray, record
from dvm.lazy.arrange import vector_norm as vector_norm_of
from dvm.lazy.array import dialect_op
from dvm.numerics import is_float_dtype, working_dtype
from dvm.torch.plan import BUILDING
from dvm.torch.promotion import torch_promoted
from dvm.torch.sizes import Quotient, Size, plain, specialized
from dvm.vm.isa import MAX_RANK

Handler = Callable[..., Any]


class Unsupported(Exception):
    """This op (with these arguments) runs in torch."""


def lazy(x: Any) -> LazyArray:
    if not isinstance(x, LazyArray):
        raise Unsupported(kept_in_torch(x) or "an operand that is not a tensor")
    return x


def kept_in_torch(x: Any) -> str | None:
    """Why `x` is a torch tensor still (a dtype or a device dvm does not compute on:
    `graph.to_lazy` leaves those in torch); None for anything else."""
    return f"a tensor of {x.dtype} on {x.device}" if isinstance(x, torch.Tensor) else None


def operand(x: Any) -> Any:
    """An elementwise operand: a lazy array or a number (a tensor left in torch is
    Unsupported, with the reason)."""
    reason = kept_in_torch(x)
    if reason is not None:
        raise Unsupported(reason)
    return x


def needs(value: Any) -> Any:
    """A result, or Unsupported where the lazy layer would not record it."""
    if not isinstance(value, LazyArray):
        raise Unsupported("not recorded")
    return value


def dims(sizes: Sequence[int], ndim: int) -> tuple[int, ...]:
    return tuple(specialized(d) % ndim if ndim else 0 for d in sizes)


def number(x: Any, like: Any) -> Any:
    """An operand as numpy takes it: a size (or a `Quotient` of sizes) used as a number
    becomes a 0-d array of `like`'s dtype, which a replayed call computes from its own
    sizes."""
    if not isinstance(x, Size | Quotient):
        return x
    if BUILDING and isinstance(like, LazyArray):
        if isinstance(x, Quotient) and not is_float_dtype(like.dtype):
            raise Unsupported("a quotient of sizes with a tensor of integers")
        return BUILDING[-1].scalar(x, like.dtype)
    return plain(x) if isinstance(x, Size) else float(x)


# -- elementwise --------------------------------------------------------------------------


def binary(function: np.ufunc, scalar_in_opmath: bool = False) -> Handler:
    def handler(a: Any, b: Any, alpha: Any = 1) -> Any:
        a, b = number(in_range(operand(a), b), b), number(in_range(operand(b), a), a)
        a, b = torch_promoted(a, b, scalar_in_opmath)  # (numpy's promotes wider)
        a, b = (np.bool_(v) if type(v) is bool else v for v in (a, b))  # (recorded as numpy's)
        if alpha != 1:
            return needs(with_alpha(function, a, b, alpha))
        return needs(function(a, b))

    return handler


def with_alpha(function: np.ufunc, a: Any, b: Any, alpha: Any) -> Any:
    """`function(a, alpha * b)` (`add`, `sub`) rounded once, as torch's kernels compute it:
    a float32 tensor's with a fused multiply-add (here in float64), a half's in float32
    with `alpha` and a number `b` first rounded to the half. Integers and float64 as
    written (float64's fused rounding has no wider type here)."""
    like = a if isinstance(a, LazyArray) else b
    scale = number(alpha, like)
    dtype = getattr(like, "dtype", None)
    if dtype is None or not is_float_dtype(dtype) or dtype == np.float64 or scale is not alpha:
        return function(a, b * scale)  # (`scale is not alpha`: a size, recorded)
    wide = np.dtype(np.float64) if dtype == np.float32 else working_dtype(dtype)

    def in_wide(x: Any) -> Any:
        return x.astype(wide) if isinstance(x, LazyArray) else wide.type(dtype.type(x))

    return function(in_wide(a), in_wide(b) * in_wide(scale)).astype(dtype)


def in_range(number: Any, like: Any) -> Any:
    """`number`; Unsupported if an int outside `like`'s integer dtype (torch wraps it)."""
    dtype = like.dtype if isinstance(like, LazyArray) else like
    integral = type(number) in (int, Size) and isinstance(dtype, np.dtype) and dtype.kind in "iu"
    if integral and not np.iinfo(dtype).min <= number <= np.iinfo(dtype).max:
        raise Unsupported("an integer out of the range of the tensor's dtype")
    return number


def unary(function: Callable[[Any], Any]) -> Handler:
    return lambda x: needs(function(lazy(x)))


def to_integer(function: Callable[[Any], Any]) -> Handler:
    """`floor`, `ceil`, `trunc`: of an integer tensor, a copy of it, as torch's (numpy's
    would be floats); of bools, torch raises."""

    def handler(x: Any) -> Any:
        x = lazy(x)
        if x.dtype.kind == "b":
            raise Unsupported("a rounding of bools")
        return needs(function(x) if is_float_dtype(x.dtype) else x.copy())

    return handler


def float_unary(function: Callable[[Any], Any]) -> Handler:
    """A unary op whose result is a float: torch computes a bool or integer tensor in
    float32 (its default dtype), where numpy would compute a bool or an int8 in float16
    (rounding to its 11 bits) and an int64 in float64."""

    def handler(x: Any) -> Any:
        x = lazy(x)
        return needs(function(x if is_float_dtype(x.dtype) else x.astype(np.float32)))

    return handler


def named(name: str) -> Handler:
    def handler(*xs: Any) -> Any:
        made = dialect_op(name, *map(lazy, xs))
        if made is None:
            raise Unsupported(f"{name} of this dtype")
        return made

    return handler


def rounded_once(function: Callable[[Any], Any]) -> Handler:
    """`function` of a half-precision float in float32, rounded once, as torch's kernels
    compute it (the VM's composite `sigmoid` rounds at each step)."""
    return lambda x: narrowed(needs(function(widened(lazy(x)))), lazy(x).dtype)


def gelu(x: Any, approximate: str = "none") -> Any:
    """(Halves in float32, rounded once, as torch's kernel.)"""
    x = lazy(x)
    wide = widened(x)
    if approximate == "tanh":
        inner = math.sqrt(2 / math.pi) * (wide + 0.044715 * wide * wide * wide)
        return narrowed(0.5 * wide * (1 + np.tanh(inner)), x.dtype)
    return narrowed(0.5 * wide * (1 + named("erf")(wide * (1 / math.sqrt(2)))), x.dtype)


def clamp(x: Any, low: Any = None, high: Any = None) -> Any:
    return needs(np.clip(lazy(x), number(low, x), number(high, x)))


def where(condition: Any, a: Any, b: Any) -> Any:
    return needs(np.where(condition, a, b))


def masked_fill(x: Any, mask: Any, value: Any) -> Any:
    if isinstance(value, Size | Quotient):
        value = number(value, x)
    elif not isinstance(value, LazyArray):
        value = np.asarray(value, x.dtype)
    return needs(np.where(mask, value, x))


# -- reductions ----------------------------------------------------------------------------


def reduction(function: Callable[..., Any]) -> Handler:
    def handler(x: Any, axes: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
        x = lazy(x)
        if dtype is not None:  # (torch casts, then reduces)
            x = narrowed(x, numpy_dtype(dtype, None))
        axis = (
            None  # (a 0-d tensor's dim 0 or -1 is the whole of it, to torch)
            if axes is None or axes == [] or x.ndim == 0
            else dims(axes if isinstance(axes, Sequence) else [axes], x.ndim)
        )
        return needs(function(x, axis=axis, keepdims=keepdim))

    return handler


def var(x: Any, axes: Any = None, correction: Any = None, keepdim: bool = False) -> Any:
    """torch's variance: the squared deviations' sum over n - correction, where n, a
    size, is a number the plan computes anew on each call (numpy's `var` would read
    it as a plain float, which no replay could recompute)."""
    x = lazy(x)
    axis = tuple(range(x.ndim)) if axes is None or axes == [] else dims(axes, x.ndim)
    wide = widened(x)  # (halves in float32, rounded once, as torch's kernel)
    centred = wide - wide.mean(axis=axis, keepdims=True)
    total = (centred * centred).sum(axis=axis, keepdims=keepdim)
    correction = 1 if correction is None else correction
    if isinstance(correction, float) and correction.is_integer():
        correction = int(correction)  # (std's 1.0: a size minus a float is no size)
    count = math.prod(x.shape[a] for a in axis) - correction
    if isinstance(count, Quotient):  # (a correction that dynamo made a float of a size)
        return narrowed(needs(total / np.maximum(number(count, total), 0)), x.dtype)
    return narrowed(needs(total / number(max(count, 0), total)), x.dtype)


def var_mean(x: Any, axes: Any = None, correction: Any = None, keepdim: bool = False) -> Any:
    """`var_mean` (`torch.var_mean`, which torch's decompositions leave whole)."""
    x = lazy(x)
    axis = tuple(range(x.ndim)) if axes is None or axes == [] else dims(axes, x.ndim)
    return var(x, axes, correction, keepdim), needs(x.mean(axis=axis, keepdims=keepdim))


def widened(x: LazyArray) -> LazyArray:
    """A half-precision float tensor in float32, as torch's CPU kernels of softmax and
    the norms compute it (rounding once, at the end); any other tensor as it is."""
    return narrowed(x, working_dtype(x.dtype))


def narrowed(x: LazyArray, dtype: np.dtype[Any]) -> LazyArray:
    """`x` in `dtype` (back after `widened`; no op where it is in it already)."""
    return x if x.dtype == dtype else needs(x.astype(dtype))


def softmax(x: Any, dim: int, half_to_float: bool = False) -> Any:
    x = lazy(x)
    wide = widened(x)
    e = np.exp(wide - wide.max(axis=dim, keepdims=True))
    result = needs(e / e.sum(axis=dim, keepdims=True))
    return result if half_to_float else narrowed(result, x.dtype)


def log_softmax(x: Any, dim: int, half_to_float: bool = False) -> Any:
    x = lazy(x)
    wide = widened(x)
    shifted = wide - wide.max(axis=dim, keepdims=True)
    result = needs(shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True)))
    return result if half_to_float else narrowed(result, x.dtype)


def native_layer_norm(x: Any, shape: Sequence[int], weight: Any, bias: Any, eps: float) -> Any:
    x = lazy(x)
    wide = widened(x)
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    mean = wide.mean(axis=axes, keepdims=True)
    centred = wide - mean
    rstd = 1 / np.sqrt((centred * centred).mean(axis=axes, keepdims=True) + eps)
    out = centred * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return tuple(narrowed(needs(v), x.dtype) for v in (out, mean, rstd))


# -- matmul ---------------------------------------------------------------------------------


def matmul(a: Any, b: Any) -> Any:
    return needs(lazy(a) @ lazy(b))


# -- shapes ------------------------------------------------------------------------------------


def view(x: Any, sizes: Sequence[int]) -> Any:
    x = lazy(x)
    target = list(sizes)
    if any(d == -1 for d in target):
        known = math.prod(d for d in target if d != -1)
        target = [x.size // known if d == -1 else d for d in target]
    node = record.reshape(x._node, tuple(target))
    if node is None:
        raise Unsupported("a view to a shape of another size")
    return LazyArray(node if node is not x._node else record.convert(node, node.dtype))


def permute(x: Any, perm: Sequence[int]) -> Any:
    x = lazy(x)
    return x.transpose(dims(perm, x.ndim))


def transpose(x: Any, a: int = 0, b: int = 1) -> Any:
    return lazy(x).swapaxes(a, b)


def expand(x: Any, sizes: Sequence[int], implicit: bool = False) -> Any:
    x = lazy(x)
    lead = len(sizes) - x.ndim
    target = tuple(x.shape[i - lead] if d == -1 else d for i, d in enumerate(sizes))
    return needs(np.broadcast_to(x, target))


def unsqueeze(x: Any, dim: int) -> Any:
    x = lazy(x)
    return needs(np.expand_dims(x, int(dim) % (x.ndim + 1)))


def squeeze(x: Any, axes: Any = None) -> Any:
    x = lazy(x)
    if axes is None:
        return needs(np.squeeze(x))
    if x.ndim == 0:  # (torch squeezes a 0-d tensor along dim 0 or -1: itself)
        return x
    chosen = dims(axes if isinstance(axes, Sequence) else [axes], x.ndim)
    return needs(np.squeeze(x, tuple(a for a in chosen if x.shape[a] == 1)))


def slice_specs(x: LazyArray, dim: int, start: Any, end: Any, step: int) -> list[Any] | None:
    """torch's slice of `x` (bounds clamped to the dim, as torch does) as the specs of
    `record.extract_slice`, sizes kept symbolic; None for the whole of `x`."""
    axis, step = specialized(dim) % x.ndim, specialized(step)
    size = x.shape[axis]
    start = 0 if start is None else start + size if start < 0 else start
    end = size if end is None else end + size if end < 0 else end
    start, end = min(max(start, 0), size), min(max(end, 0), size)
    length = (end - start + step - 1) // step if end > start else 0
    if step < 1:
        raise Unsupported("a slice with a step below 1")
    if start == 0 and length == size and step == 1:
        return None
    specs: list[Any] = [None] * x.ndim
    specs[axis] = (start, length, step)
    return specs


def slice_(x: Any, dim: int = 0, start: Any = None, end: Any = None, step: int = 1) -> Any:
    x = lazy(x)
    specs = slice_specs(x, dim, start, end, step)
    if specs is None:
        return LazyArray(record.convert(x._node, x.dtype))
    return LazyArray(record.extract_slice(x._node, specs))


def slice_scatter(
    x: Any, source: Any, dim: int = 0, start: Any = None, end: Any = None, step: int = 1
) -> Any:
    """`x` with its slice replaced by `source` (an in-place slice write, made functional)."""
    x, source = lazy(x), lazy(source)
    specs = slice_specs(x, dim, start, end, step)
    if specs is None:
        return copy(x, source)
    if source.dtype != x.dtype:
        raise Unsupported("a slice_scatter of another dtype")
    return LazyArray(record.insert_slice(x._node, source._node, specs))


def select(x: Any, dim: int, index: Any) -> Any:
    x = lazy(x)
    axis = specialized(dim) % x.ndim
    size = x.shape[axis]
    index = index + size if index < 0 else index
    if not 0 <= index < size:
        raise Unsupported("an index out of range")
    specs: list[Any] = [None] * x.ndim
    specs[axis] = (index, 1, 1)
    return LazyArray(record.squeeze(record.extract_slice(x._node, specs), (axis,)))


def split_with_sizes(x: Any, sizes: Sequence[int], dim: int = 0) -> list[Any]:
    x = lazy(x)
    axis, start, parts = specialized(dim) % x.ndim, 0, []
    for size in sizes:
        parts.append(slice_(x, axis, start, start + size))
        start += size
    return parts


def split(x: Any, size: int, dim: int = 0) -> list[Any]:
    x = lazy(x)
    total = x.shape[specialized(dim)]
    count = specialized((total + size - 1) // size)
    return split_with_sizes(x, [min(size, total - k * size) for k in range(count)], dim)


def cat(tensors: Sequence[Any], dim: int = 0) -> Any:
    """torch's `cat`, which skips 1-d tensors of size 0 beside tensors of higher rank
    (an empty cache that older model code starts from, `torch.zeros(0)`), keeping
    their dtype in the result's."""
    arrays = [lazy(t) for t in tensors]
    rank = max(a.ndim for a in arrays)
    kept = [a for a in arrays if a.ndim == rank or specialized(a.shape[0]) != 0] or arrays
    result = needs(np.concatenate(kept, axis=int(dim)))
    dtype = np.result_type(*(a.dtype for a in arrays))
    return result if result.dtype == dtype else result.astype(dtype)


def to_copy(x: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """A cast or a copy. Its `memory_format` changes strides alone, which a lazy array
    has none of (an output gets the traced graph's strides: `aliases.output_layouts`),
    and `non_blocking` changes nothing on the CPU."""
    from dvm.torch.convert import DTYPES

    x = lazy(x)
    if kwargs.get("device") not in (None, "cpu", torch.device("cpu")):
        raise Unsupported(f"a copy to {kwargs['device']}")
    if dtype is not None and dtype not in DTYPES:
        raise Unsupported(f"a cast to {dtype}")
    return x.astype(DTYPES[dtype]) if dtype is not None else x.copy()


def scalar_tensor(value: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """A 0-d tensor of a Python number (float32 unless told: torch's default dtype)."""
    kind = numpy_dtype(dtype, 0.0)
    if isinstance(value, Size | Quotient):  # (a size as a number: replay computes it anew)
        return filled((), in_range(value, kind), kind)
    return asarray(np.asarray(value).astype(kind))  # (-1 as a uint8 is 255, as in torch)


def numpy_dtype(dtype: Any, value: Any) -> np.dtype[Any]:
    """torch's dtype for a factory's result: `dtype`, or the one a Python number takes
    (bool, int64, or the default float32)."""
    from dvm.torch.convert import DTYPES

    if dtype is not None:
        if dtype not in DTYPES:
            raise Unsupported(f"a result of {dtype}")
        return DTYPES[dtype]
    if isinstance(value, bool):
        return np.dtype(np.bool_)
    return np.dtype(np.int64 if isinstance(value, int) else np.float32)


def full(size: Sequence[Any], value: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """A constant broadcast to `size` (whose dims may be the call's sizes)."""
    return filled(size, value, numpy_dtype(dtype, value))


def empty(size: Sequence[Any], *layout: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """`empty`, `empty_strided`, `empty_permuted` (a gradient's buffer that `full_like`
    then fills): memory whose contents torch leaves undefined, here zeros."""
    return filled(size, 0, numpy_dtype(dtype, 0.0))


def bucketize(x: Any, boundaries: Any, out_int32: bool = False, right: bool = False) -> Any:
    """`bucketize` by sorted 1-d boundaries: how many boundaries lie below each element
    (`right`: at or below), counted as torch's binary search compares (`!(b >= x)`),
    which puts NaN past every boundary."""
    x, boundaries = lazy(x), lazy(boundaries)
    if boundaries.ndim != 1:
        raise Unsupported("a bucketize by boundaries of more than one dim")
    after = np.expand_dims(x, -1)
    above = (boundaries > after) if right else (boundaries >= after)
    counts = needs(np.logical_not(above)).sum(axis=-1)
    return needs(counts.astype(np.int32 if out_int32 else np.int64))


def full_like(x: Any, value: Any, dtype: Any = None, **kwargs: Any) -> Any:
    x = lazy(x)
    return filled(x.shape, value, numpy_dtype(dtype, value) if dtype is not None else x.dtype)


def reshaped(x: LazyArray, shape: Sequence[Any]) -> LazyArray:
    """`x` in `shape`, of as many elements, keeping the call's sizes among the dims (a
    lazy array's `reshape` would read them as plain numbers)."""
    node = record.reshape(x._node, tuple(shape))
    assert node is not None
    return LazyArray(node)


def filled(size: Sequence[Any], value: Any, dtype: np.dtype[Any]) -> Any:
    """`value` broadcast to `size`; a size (or a quotient of sizes: `t ** 0.5`) is a
    0-d array that a replayed call computes from its own sizes."""
    if isinstance(value, LazyArray):
        raise Unsupported("a fill value computed in the graph")
    if isinstance(value, Size | Quotient) and BUILDING:
        if isinstance(value, Quotient) and not is_float_dtype(dtype):
            raise Unsupported("a quotient of sizes filling a tensor of integers")
        return needs(np.broadcast_to(BUILDING[-1].scalar(value, dtype), tuple(size)))
    return needs(np.broadcast_to(asarray(np.asarray(plain(value), dtype)), tuple(size)))


def arange(*bounds: Any, dtype: Any = None, **kwargs: Any) -> Any:
    """`arange(end)`, `arange(start, end)` or `arange(start, end, step)` of integers
    (sizes of the call among them): an iota of the count, scaled and shifted."""
    start, end, step = (0, bounds[0], 1) if len(bounds) == 1 else (*bounds, 1)[:3]
    if step == 0:
        raise Unsupported("an arange of step 0")
    if not all(isinstance(b, int) for b in (start, end, step)):
        return float_arange(start, end, step, dtype)
    # (comparisons of sizes are guards, and a start or step that is a size of the call,
    # a past length, is an argument that a replay computes anew: never a constant)
    count = (end - start + step - 1) // step if step > 0 else (start - end - step - 1) // -step
    if count < 0:
        raise Unsupported("an arange whose bounds and step disagree")
    kind = numpy_dtype(dtype, 0)  # (unsigned: counted in int64, where a step may be < 0)
    result = LazyArray(record.iota((count,), 0, np.dtype(np.int64) if kind.kind == "u" else kind))
    if step != 1:
        result = result * number(step, result)
    return narrowed(result + number(start, result) if start != 0 else result, kind)


def float_arange(start: Any, end: Any, step: Any, dtype: Any) -> Any:
    """An `arange` with a float among its bounds, all Python numbers (`arange(1.0, 7.0)`,
    class weights): `start + i * step` in float64, rounded once to the result's dtype,
    as torch's CPU kernel computes it; ceil((end - start) / step) elements."""
    if not all(type(b) in (int, float) for b in (start, end, step)):
        raise Unsupported("an arange of floats computed from sizes")
    count = math.ceil((end - start) / step)
    if count < 0:
        raise Unsupported("an arange whose bounds and step disagree")
    steps = LazyArray(record.iota((count,), 0, np.dtype(np.float64)))
    values = steps * np.float64(step) + np.float64(start)
    return needs(values.astype(numpy_dtype(dtype, 0.0)))


def copy(x: Any, source: Any, non_blocking: bool = False) -> Any:
    """The functional `copy`: `source` broadcast to `x`'s shape, in `x`'s dtype."""
    x, source = lazy(x), lazy(source)
    return needs(np.broadcast_to(source.astype(x.dtype), x.shape))


def checked(indices: Any, bound: Any) -> LazyArray:
    """Indices into a dim of `bound` elements: of the call, checked now and on each
    replay; computed, checked as the program runs (`IndexOutOfRangeError`)."""
    indices = lazy(indices)
    ids = indices._node.value
    if indices.dtype.kind not in "iu" or indices.dtype.itemsize < 4:
        raise Unsupported("indices of a small dtype")
    if ids is not None:
        if ids.size and not (ids.min() >= 0 and ids.max() < plain(bound)):
            raise Unsupported("an index out of range")
        if BUILDING:
            BUILDING[-1].check_indices(indices, bound)
    return indices


ASSERTION_FAILED = "Expected Tensor with single nonzero value, but got zero"
"""torch's error for a false `_assert_async` without a message."""


def held(condition: LazyArray) -> bool:
    """Whether `condition` (one boolean) holds, read now (a sync point: what it needs
    runs) and again on each replay, before the program after it runs (another value
    sends the call back to recording)."""
    holds = bool(condition)
    if BUILDING:
        BUILDING[-1].check_condition(condition)
    return holds


def assert_async(condition: Any, message: str = "") -> None:
    """torch's `_assert_async` (one_hot's checks that its classes are in range):
    torch's `RuntimeError` where the condition, read now and on each replay (`held`),
    is false."""
    condition = lazy(condition)
    if condition.size != 1:
        raise Unsupported("an assertion on several values")
    if not held(condition):
        raise RuntimeError(message or ASSERTION_FAILED)


def embedding(weight: Any, indices: Any, *args: Any, **kwargs: Any) -> Any:
    weight = lazy(weight)
    return LazyArray(record.take(weight._node, checked(indices, weight.shape[0])._node, 0))


def one_index(x: LazyArray, indices: Sequence[Any]) -> tuple[int, LazyArray]:
    """The dim and the ids of an `index`/`index_put` by one integer tensor, wrapped and
    checked (a boolean mask, or several index tensors: Unsupported)."""
    given = [(axis, ids) for axis, ids in enumerate(indices) if ids is not None]
    if len(given) != 1 or lazy(given[0][1]).dtype.kind not in "iu":
        raise Unsupported("indexing by a mask or by several tensors")
    axis, ids = given[0]
    return axis, checked(wrapped(ids, x.shape[axis]), x.shape[axis])


def wrapped(ids: LazyArray, bound: Any) -> LazyArray:
    """Ids that count from the end when negative, as torch's (-1 is the last): computed
    ones, and known ones with a negative id, become `where(ids < 0, ids + bound, ids)`
    (a computed index, checked as the program runs); known ones in [0, n) stay as
    they are (checked on each replay, where a negative one records anew)."""
    known = ids._node.value
    if known is not None and not (known.size and known.min() < 0):
        return ids
    return needs(np.where(ids < 0, ids + number(bound, ids), ids))


def index_add(x: Any, dim: int, index: Any, source: Any, alpha: Any = 1) -> Any:
    """`x` with the rows of `source` added at `index` along `dim` (duplicates too)."""
    x = lazy(x)
    axis = specialized(dim) % max(x.ndim, 1)
    if lazy(index).ndim != 1:
        raise Unsupported("index_add of a 0-d index")
    ids = checked(index, x.shape[axis])
    updates = lazy(source) if alpha == 1 else lazy(source) * number(alpha, x)
    if tuple(updates.shape) != (*x.shape[:axis], *ids.shape, *x.shape[axis + 1 :]):
        raise Unsupported("index_add of a source of other sizes")
    return LazyArray(record.scatter_add(x._node, ids._node, updates._node, axis))


def flip(x: Any, dims: Sequence[Any]) -> Any:
    if not lazy(x).shape:  # (torch takes dim 0 or -1 of a 0-d tensor: a copy of it)
        return lazy(x).copy()
    return needs(np.flip(lazy(x), tuple(specialized(d) for d in dims)))


def repeat(x: Any, sizes: Sequence[Any]) -> Any:
    """torch's `repeat` is numpy's `tile` (sizes for every dim, and more in front). A
    count that is a size of the call (an `InstanceNorm`'s weight repeated per batch
    element) is a broadcast over a new dim before each repeated one, flattened into it:
    the count stays a size rather than a number the plan is tied to. As many dims at a
    time as the VM's ranks allow (a 6-d tensor repeated along every dim would be 12-d)."""
    x = lazy(x)
    if not sizes:  # (a 0-d tensor repeated by no counts: itself)
        return x.copy()
    if not any(isinstance(n, Size) for n in sizes):
        return needs(np.tile(x, tuple(sizes)))
    x = reshaped(x, (*[1] * (len(sizes) - x.ndim), *x.shape))
    repeated = [d for d, n in enumerate(sizes) if not (type(n) is int and n == 1)]
    room = max(MAX_RANK - x.ndim, 1)
    for start in range(0, len(repeated), room):
        now = set(repeated[start : start + room])
        x = tiled(x, [n if d in now else 1 for d, n in enumerate(sizes)])
    return x


def tiled(x: LazyArray, counts: Sequence[Any]) -> LazyArray:
    """`x` repeated `counts[d]` times along each dim d: a broadcast over a unit dim put
    before each dim whose count is not 1, then merged into it."""
    spread: list[Any] = []
    wide: list[Any] = []
    for n, size in zip(counts, x.shape, strict=True):
        once = type(n) is int and n == 1
        spread += [size] if once else [1, size]
        wide += [size] if once else [n, size]
    stretched = needs(np.broadcast_to(reshaped(x, spread), tuple(wide)))
    return reshaped(stretched, [n * size for n, size in zip(counts, x.shape, strict=True)])


def vector_norm(x: Any, ord: Any = 2, dim: Any = None, keepdim: bool = False,
                dtype: Any = None) -> Any:  # fmt: skip
    """`linalg_vector_norm` of a float tensor (cast to `dtype` first, as torch's): `ord`
    1, 2, inf, -inf or another p > 0 (halves in float32, rounded once, as torch's
    kernel: not each power rounded), or 0, the count of nonzero elements."""
    x = lazy(x) if dtype is None else narrowed(lazy(x), numpy_dtype(dtype, None))
    p = ord if isinstance(ord, int | float) and not isinstance(ord, bool) else -1
    if not is_float_dtype(x.dtype) or not (p >= 0 or p == -math.inf):
        raise Unsupported("this vector norm")
    axes = None if x.ndim == 0 or not dim else tuple(specialized(d) for d in dim)
    if p == 0:
        return needs(needs(x != 0).sum(axis=axes, keepdims=keepdim).astype(x.dtype))
    if x.ndim == 0:  # (its magnitude, whatever p: `dvm.lazy` takes norms along dims)
        return needs(np.absolute(x))
    node = vector_norm_of(widened(x)._node, p, axes, keepdim)
    return narrowed(needs(None if node is None else LazyArray(node)), x.dtype)


def scan(function: Callable[..., Any]) -> Handler:
    """`cumsum`, `cumprod` (integers in int64, as numpy's and torch's; with a `dtype`,
    cast to it first, as torch's). A 0-d tensor is its own scan, where numpy's is 1-d."""

    def handler(x: Any, dim: int, dtype: Any = None) -> Any:
        x = lazy(x)
        if dtype is not None:
            x = narrowed(x, numpy_dtype(dtype, None))
        if x.ndim == 0:
            return reshaped(needs(function(reshaped(x, (1,)), axis=0)), ())
        return needs(function(x, axis=int(dim)))

    return handler


def elu(x: Any, alpha: Any = 1.0, scale: Any = 1.0, input_scale: Any = 1.0) -> Any:
    """(Halves in float32, rounded once, as torch's kernel.)"""

    def of(wide: LazyArray) -> Any:
        return np.where(wide > 0, wide * scale, np.expm1(wide * input_scale) * (alpha * scale))

    return rounded_once(of)(x)


def arg_reduction(function: Callable[..., Any]) -> Handler:
    def handler(x: Any, dim: Any = None, keepdim: bool = False) -> Any:
        x = lazy(x)
        if x.ndim == 0:  # (torch's argmax of a 0-d tensor, along 0 or -1 too, is 0)
            return asarray(np.zeros((), np.int64))
        return needs(function(x, axis=dim, keepdims=keepdim))

    return handler


def extremum(value: Callable[..., Any], index: Callable[..., Any]) -> Handler:
    """torch's `max`/`min`: of the whole tensor, or along `dim` as (values, indices)."""

    def handler(x: Any, dim: Any = None, keepdim: bool = False) -> Any:
        x = lazy(x)
        if dim is None:
            return needs(value(x))
        axis = specialized(dim) % max(x.ndim, 1)
        return (
            needs(value(x, axis=axis, keepdims=keepdim)),
            needs(index(x, axis=axis, keepdims=keepdim)),
        )

    return handler


def topk(x: Any, k: Any, dim: Any = -1, largest: bool = True, sorted: bool = True) -> Any:
    """The k largest, descending (`tensor.top_k`); the k smallest and unsorted orders
    run in torch."""
    x, k, axis = lazy(x), specialized(k), specialized(dim)
    if not (largest and sorted) or not -x.ndim <= axis < x.ndim or not 0 <= k <= x.shape[axis]:
        raise Unsupported("topk of the smallest, unsorted, or out of range")
    values, indices = record.top_k(x._node, k, axis % x.ndim)
    return LazyArray(values), LazyArray(indices)


def identity(x: Any, *args: Any, **kwargs: Any) -> Any:
    return lazy(x)


HANDLERS: dict[str, Handler] = {
    "add": binary(np.add), "sub": binary(np.subtract),
    "div": binary(np.true_divide), "true_divide": binary(np.true_divide),
    "maximum": binary(np.maximum), "minimum": binary(np.minimum),
    "eq": binary(np.equal), "ne": binary(np.not_equal), "lt": binary(np.less),
    "le": binary(np.less_equal), "gt": binary(np.greater), "ge": binary(np.greater_equal),
    "logical_and": binary(np.logical_and), "logical_or": binary(np.logical_or),
    "bitwise_and": binary(np.bitwise_and), "bitwise_or": binary(np.bitwise_or),
    "neg": unary(np.negative), "abs": unary(np.absolute), "exp": float_unary(np.exp),
    "log": float_unary(np.log), "sqrt": float_unary(np.sqrt), "tanh": float_unary(np.tanh),
    "sin": float_unary(np.sin), "cos": float_unary(np.cos), "log1p": float_unary(np.log1p),
    "tan": float_unary(np.tan), "asin": float_unary(np.arcsin), "acos": float_unary(np.arccos),
    "atan": float_unary(np.arctan), "sinh": float_unary(np.sinh), "cosh": float_unary(np.cosh),
    "asinh": float_unary(np.arcsinh), "acosh": float_unary(np.arccosh),
    "atanh": float_unary(np.arctanh), "logical_xor": binary(np.logical_xor),
    "expm1": float_unary(np.expm1), "floor": to_integer(np.floor),
    "ceil": to_integer(np.ceil), "trunc": to_integer(np.trunc),
    "reciprocal": float_unary(np.reciprocal),
    "logical_not": unary(np.logical_not), "bitwise_not": unary(np.invert),
    "relu": unary(lambda x: np.maximum(x, 0)), "elu": elu,
    "hardtanh": lambda x, low=-1.0, high=1.0: clamp(x, low, high),
    "rsqrt": float_unary(rounded_once(named("rsqrt"))),
    "sigmoid": float_unary(rounded_once(named("sigmoid"))), "erf": float_unary(named("erf")),
    "silu": rounded_once(lambda x: x / (1 + np.exp(-x))),  # (torch's order)
    "gelu": gelu, "clamp": clamp, "clamp_min": lambda x, low: clamp(x, low, None),
    "clamp_max": lambda x, high: clamp(x, None, high), "where": where,
    "masked_fill": masked_fill,
    "sum": reduction(np.sum), "mean": reduction(np.mean), "amax": reduction(np.max),
    "amin": reduction(np.min), "prod": reduction(np.prod), "var": var,
    "var_mean": var_mean,
    "_softmax": softmax, "_log_softmax": log_softmax, "native_layer_norm": native_layer_norm,
    "mm": matmul, "bmm": matmul, "matmul": matmul,
    "view": view, "_unsafe_view": view, "reshape": view, "permute": permute,
    "t": lambda x: lazy(x).T, "transpose": transpose, "expand": expand,
    "unsqueeze": unsqueeze, "squeeze": squeeze, "slice": slice_, "select": select,
    "slice_scatter": slice_scatter,
    "split_with_sizes": split_with_sizes, "split": split, "cat": cat,
    "clone": lambda x, **kw: lazy(x).copy(), "_to_copy": to_copy,
    "convert_element_type": lambda x, dtype: to_copy(x, dtype), "scalar_tensor": scalar_tensor,
    "sym_size": lambda x, axis: lazy(x).shape[specialized(axis)],
    "sym_numel": lambda x: lazy(x).size,
    "embedding": embedding,
    "index_add": index_add,
    "linalg_vector_norm": vector_norm, "flip": flip, "repeat": repeat, "topk": topk,
    "bitwise_xor": binary(np.bitwise_xor), "__lshift__": binary(np.left_shift),
    "__rshift__": binary(np.right_shift), "bitwise_left_shift": binary(np.left_shift),
    "bitwise_right_shift": binary(np.right_shift),
    "cumsum": scan(np.cumsum), "cumprod": scan(np.cumprod), "arange": arange, "full": full,
    "full_like": full_like, "copy": copy, "empty": empty, "empty_strided": empty,
    "empty_permuted": empty, "bucketize": bucketize,
    "any": reduction(np.any), "all": reduction(np.all),
    "argmax": arg_reduction(np.argmax), "argmin": arg_reduction(np.argmin),
    "max": extremum(np.max, np.argmax), "min": extremum(np.min, np.argmin),
    "_assert_async": assert_async,
    "alias": identity, "detach": identity, "lift_fresh_copy": lambda x: lazy(x).copy(),
}  # fmt: skip
"""The ATen ops that record, by name."""
