"""ATen's writes at indices, indexing by several tensors and sorts, as ops the dialect
has (see `aten`).

`scatter` and its relatives write values at positions an index tensor names along a
dim, each position of the index in a place of its own (`x[i][index[i][j]] = src[i][j]`
along dim 1). The dialect's `tensor.scatter_add` adds rows at one index per row
(numpy's `add.at`), so these handlers flatten the target and number every element
of the index with its flat position. Where the index is one wide along the dim (a
one-hot, cross-entropy's gradient) the write is an elementwise `where` against an
iota, which fuses with its neighbours.

`masked_scatter` reads its source at each element's rank among the mask's trues (a
`cumsum` of the mask), and its backward adds the gradient back at those ranks.

`sort` is a `tensor.top_k` whose k is the dim's size: the largest first, equal ones
by the lower index and NaN above every number, which is torch's stable descending
sort; the ascending one is the same on the reversed dim, reversed back.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dvm.lazy import LazyArray, asarray, record
from dvm.lazy.graph import Node
from dvm.numerics import is_float_dtype, reduction_identity
from dvm.torch.aten import (
    Handler,
    Unsupported,
    checked,
    filled,
    held,
    lazy,
    needs,
    number,
    one_index,
    reshaped,
    wrapped,
)
from dvm.torch.plan import BUILDING, distinct
from dvm.torch.sizes import specialized

INT32, INT64 = np.dtype(np.int32), np.dtype(np.int64)


# -- scatter ---------------------------------------------------------------------------------


def in_range(index: LazyArray, bound: Any) -> LazyArray:
    """`index`, whose values must lie in `[0, bound)` (torch raises otherwise): one of
    the call's is checked now and on each replay (`checked`); a computed one is taken
    from `arange(bound)`, a `tensor.take` the program checks as it runs (the identity
    on indices in range)."""
    index = checked(index, bound)
    if index._node.value is not None:
        return index
    positions = record.iota((bound,), 0, index.dtype)
    return LazyArray(record.take(positions, index._node, 0))


# -- indexing by several tensors --------------------------------------------------------------


def index(x: Any, indices: Sequence[Any]) -> Any:
    """Advanced indexing (`x[:, ids]`, `x[..., rows[:, None], cols]`): a `take` along
    the dim of the index tensor (or of the dims it names, merged)."""
    merged, axis, ids = flat_index(lazy(x), indices)
    return LazyArray(record.take(merged._node, ids._node, axis))


def index_put(x: Any, indices: Sequence[Any], values: Any, accumulate: bool = False) -> Any:
    """`x[ids] += values` made functional (an embedding's or an upsampling's gradient):
    a `scatter_add` along the indexed dim (or dims, merged). Without `accumulate`:
    `index_overwritten`."""
    x = lazy(x)
    if not accumulate:
        return index_overwritten(x, indices, values)
    merged, axis, ids = flat_index(x, indices)
    updates = broadcast_values(
        values, x, (*merged.shape[:axis], *ids.shape, *merged.shape[axis + 1 :])
    )
    merged_dims = merged is not x
    if x.dtype == np.dtype(np.bool_):  # (torch's sum of bools is their `or`)
        merged, updates = merged.astype(INT32), updates.astype(INT32)
    added = LazyArray(record.scatter_add(merged._node, ids._node, updates._node, axis))
    added = added if added.dtype == x.dtype else needs(added != 0)
    return reshaped(added, x.shape) if merged_dims else added


def put(x: Any, index: Any, source: Any, accumulate: bool = False) -> Any:
    """`put`: `index_put` of the flat source at the flat ids (from the end where
    negative) in `x` flattened."""
    x, index, source = lazy(x), lazy(index), lazy(source)
    if index.size != source.size:
        raise Unsupported("a put of as many values as ids")  # (torch raises)
    if index.size == 0:
        return x.copy()
    # (a 1-d index as it is: ids of the call are checked for repeats at each call)
    flat, ids = reshaped(x, (x.size,)), index if index.ndim == 1 else reshaped(index, (index.size,))
    return reshaped(index_put(flat, [ids], reshaped(source, (source.size,)), accumulate), x.shape)


def broadcast_values(values: Any, x: LazyArray, shape: Sequence[Any]) -> LazyArray:
    """An `index_put`'s values (a tensor, or a number: a constant of x's dtype) in
    x's dtype, broadcast to the `shape` the ids write."""
    values = number(values, x)
    if not isinstance(values, LazyArray):
        values = asarray(np.asarray(values, x.dtype))
    # (the sizes kept: plain ones would tie the plan to this call's by a guard)
    return lazy(np.broadcast_to(values.astype(x.dtype, copy=False), tuple(shape)))


def index_overwritten(x: LazyArray, indices: Sequence[Any], values: Any) -> Any:
    """`x[ids] = values` made functional (`index_copy_` into a KV cache at the positions
    `arange(past, past + t)`), by one 1-d index tensor: the values added to -0.0 at the
    ids and taken where a second `scatter_add` counts a write. torch leaves the result of
    equal ids undefined, so the ids must be distinct: an `arange` of step 1 no longer than
    the dim (consecutive numbers, so distinct when wrapped from the end too), or ids of
    the call, checked at each call. One value everywhere (`index_fill`'s) is written
    where the count is nonzero, by any ids. Others run in torch."""
    given = [ids for ids in indices if ids is not None]
    if len(given) != 1 or lazy(given[0]).ndim != 1:
        raise Unsupported("index_put without accumulate by a mask, or by several or n-d ids")
    axis, ids = one_index(x, indices)
    shape = (*x.shape[:axis], *ids.shape, *x.shape[axis + 1 :])
    ones = filled(shape, 1, INT32)
    counts = record.scatter_add(filled(x.shape, 0, INT32)._node, ids._node, ones._node, axis)
    written = LazyArray(counts) > 0
    single = one_value(values, x)
    if single is not None:  # (equal ids write the same value: `index_fill`'s)
        return needs(np.where(written, single, x))
    if ids._node.value is not None:
        distinct_along(ids, 0)
    elif not (consecutive(lazy(given[0])._node) and ids.shape[0] <= x.shape[axis]):
        raise Unsupported("index_put without accumulate by computed ids, which may repeat")
    work = INT32 if x.dtype == np.dtype(np.bool_) else x.dtype
    updates = broadcast_values(values, x, shape).astype(work, copy=False)
    base = filled(x.shape, -0.0, work)  # (-0.0 + v is v, -0.0 included)
    put = LazyArray(record.scatter_add(base._node, ids._node, updates._node, axis))
    return needs(np.where(written, put.astype(x.dtype, copy=False), x))


def one_value(values: Any, x: LazyArray) -> LazyArray | None:
    """`values` as a 0-d tensor of `x`'s dtype where it is one value everywhere (a
    number, or a tensor broadcast from one element: `index_fill`'s); else None."""
    if not isinstance(values, LazyArray):
        return value_written(x, values)
    node = values._node
    if node.op == "broadcast_to" and node.operands:  # (a value computed drops them)
        node = node.operands[0]
    if not all(type(d) is int and d == 1 for d in node.shape):
        return None
    return reshaped(LazyArray(node), ()).astype(x.dtype, copy=False)


def consecutive(node: Node) -> bool:
    """Whether `node` is an `arange` of step 1: an iota, or an iota plus a number."""
    if node.op == "iota":
        return node.ndim == 1
    if node.op == "nary" and node.params == ("add",) and len(node.operands) == 2:
        first, second = node.operands
        return (consecutive(first) and not second.shape) or (
            consecutive(second) and not first.shape
        )
    return False


def flat_index(x: LazyArray, indices: Sequence[Any]) -> tuple[LazyArray, int, LazyArray]:
    """`x` as an `index` by integer tensors reads it, the dim it reads along, and the
    ids along it: by one tensor, its dim and ids (`one_index`); by several on adjacent
    dims, those dims merged into one and the flat position the tensors name in it
    (each one's ids checked against its own dim). Boolean masks, and tensors on dims
    apart (whose result torch puts first), run in torch."""
    given = [(axis, ids) for axis, ids in enumerate(indices) if ids is not None]
    if len(given) == 1:
        axis, ids = one_index(x, indices)
        return x, axis, ids
    axes = [axis for axis, _ in given]
    if not given or axes != list(range(axes[0], axes[0] + len(axes))):
        raise Unsupported("indexing by tensors on dims apart")
    if any(lazy(ids).dtype.kind not in "iu" for _, ids in given):
        raise Unsupported("indexing by a mask")
    first, last = axes[0], axes[-1] + 1
    flat: Any = None
    for axis, ids in given:
        bound = x.shape[axis]
        ids = in_range(wrapped(ids, bound), bound)
        flat = ids if flat is None else needs(flat * number(bound, flat) + ids)
    merged = reshaped(x, (*x.shape[:first], math.prod(x.shape[first:last]), *x.shape[last:]))
    return merged, first, flat


def index_select(x: Any, dim: int, index: Any) -> Any:
    """A `take` along `dim` by a 1-d index; of a 0-d tensor, by an index of one id, a
    0-d tensor (`of_one_element`)."""
    x, index = lazy(x), lazy(index)
    if x.ndim == 0:
        if index.size != 1:
            raise Unsupported("index_select of a 0-d tensor by several ids")  # (torch raises)
        return reshaped(of_one_element(x, index), ())
    axis = specialized(dim) % x.ndim
    if index.ndim != 1:
        raise Unsupported("index_select of a 0-d index")
    return LazyArray(record.take(x._node, checked(index, x.shape[axis])._node, axis))


def of_one_element(x: LazyArray, index: LazyArray) -> LazyArray:
    """A 0-d tensor's element at each of `index`'s ids (each 0, or an `IndexError`), in
    `index`'s shape."""
    flat = reshaped(index, (index.size,))
    taken = LazyArray(record.take(reshaped(x, (1,))._node, checked(flat, 1)._node, 0))
    return reshaped(taken, index.shape)


def gather(x: Any, dim: int, index: Any, sparse_grad: bool = False) -> Any:
    """`take_along_axis` by an index of the input's rank; one shorter than the input in
    the other dims (as torch's may be) reads their first elements. Of a 0-d tensor, by
    a 0-d or 1-d index: `of_one_element`."""
    x, index = lazy(x), lazy(index)
    if x.ndim == 0:
        if index.ndim > 1:
            raise Unsupported("gather of a 0-d tensor by an index of several dims")
        return of_one_element(x, index)
    axis = specialized(dim) % x.ndim
    specs = target_block(x, index, axis)
    block = x if specs is None else LazyArray(record.extract_slice(x._node, specs))
    index = checked(index, x.shape[axis])
    return LazyArray(record.take_along_axis(block._node, index._node, axis))


def target_block(x: LazyArray, index: LazyArray, axis: int) -> list[Any] | None:
    """The slice of `x` that `index` writes in or reads (torch's index may be shorter
    than `x` in the other dims: it then addresses their first elements), as the specs
    of `record.extract_slice`; None when it spans `x`."""
    if index.ndim != x.ndim:
        raise Unsupported("an index of another rank than its tensor")
    specs: list[Any] = [None] * x.ndim
    for d, (i, n) in enumerate(zip(index.shape, x.shape, strict=True)):
        if d != axis and i != n:
            if i > n:
                raise Unsupported("an index longer than its tensor")
            specs[d] = (0, i, 1)
    return specs if any(s is not None for s in specs) else None


def scattered(x: Any, dim: Any, index: Any, write: Any) -> LazyArray:
    """`x` with the block `index` addresses replaced by `write(block, axis, index)`. A
    0-d `x` (the gradient of a selection from a 0-d tensor) is written as a 1-d one."""
    x, index = lazy(x), lazy(index)
    if x.ndim == 0:
        if index.ndim > 1:
            raise Unsupported("a scatter into a 0-d tensor by an index of more dims")
        flat_index = index if index.ndim else reshaped(index, (1,))
        return reshaped(scattered(reshaped(x, (1,)), 0, flat_index, write), ())
    axis = specialized(dim) % x.ndim
    specs = target_block(x, index, axis)
    block = x if specs is None else LazyArray(record.extract_slice(x._node, specs))
    index = in_range(index, x.shape[axis])
    result = write(block, axis, index)
    if specs is None:
        return result
    return LazyArray(record.insert_slice(x._node, result._node, specs))


def one_wide(index: LazyArray, axis: int) -> bool:
    """Whether `index` names one position per row along `axis` (a size noted as a
    guard): the write is then elementwise."""
    return index.shape[axis] == 1


def hits(block: LazyArray, axis: int, index: LazyArray) -> LazyArray:
    """Where an index one wide along `axis` points, in `block`'s shape."""
    return needs(index == LazyArray(record.iota(block.shape, axis, index.dtype)))


def flat_positions(index: LazyArray, shape: Sequence[Any], axis: int) -> LazyArray:
    """Each element of `index` as the position it names in `shape` flattened: the
    index along `axis`, its own position along every other dim."""
    total: Any = None
    stride: Any = 1
    for d in reversed(range(len(shape))):
        along = index if d == axis else LazyArray(record.iota(index.shape, d, INT64))
        along = along.astype(INT64, copy=False)
        if type(stride) is not int or stride != 1:
            along = along * number(stride, along)
        total = along if total is None else total + along
        stride = stride * shape[d]
    return needs(total)


def flat_add(block: LazyArray, positions: LazyArray, updates: LazyArray) -> LazyArray:
    """`block` with `updates` added at the flat `positions` (`tensor.scatter_add`)."""
    flat = reshaped(block, (block.size,))
    added = record.scatter_add(flat._node, positions._node, updates._node, 0)
    return reshaped(LazyArray(added), block.shape)


def write_counts(block: LazyArray, positions: LazyArray, start: int, dtype: Any) -> LazyArray:
    """How many of the flat `positions` write at each element of `block`, from `start`."""
    return flat_add(filled(block.shape, start, dtype), positions, filled(positions.shape, 1, dtype))


def written(block: LazyArray, positions: LazyArray) -> LazyArray:
    """Where the flat `positions` write in `block`."""
    return needs(write_counts(block, positions, 0, INT32) > 0)


def value_written(block: LazyArray, value: Any) -> Any:
    """A scalar to write (a size as a number, or a Python number) in `block`'s dtype."""
    value = number(value, block)
    if isinstance(value, LazyArray):
        return value.astype(block.dtype, copy=False)
    return asarray(np.asarray(value, block.dtype))


def scatter_value(x: Any, dim: Any, index: Any, value: Any) -> Any:
    """`scatter.value`: one number written at every position the index names (equal
    indices write the same value, so their order does not matter)."""

    def write(block: LazyArray, axis: int, index: LazyArray) -> LazyArray:
        fill = value_written(block, value)
        if one_wide(index, axis):
            return needs(np.where(hits(block, axis, index), fill, block))
        positions = flat_positions(index, block.shape, axis)
        return needs(np.where(written(block, positions), fill, block))

    return scattered(x, dim, index, write)


def source_block(source: Any, index: LazyArray, like: LazyArray) -> LazyArray:
    """The first elements of `source` (torch's may be longer than the index in every
    dim), in `like`'s dtype as torch requires."""
    source = lazy(source)
    if source.ndim == 0 and index.ndim == 1:  # (into a 0-d tensor: `scattered`)
        source = reshaped(source, (1,))
    if source.dtype != like.dtype or source.ndim != index.ndim:
        raise Unsupported("a scatter source of another dtype or rank")
    specs: list[Any] = [None] * source.ndim
    for d, (i, n) in enumerate(zip(index.shape, source.shape, strict=True)):
        if i != n:
            if i > n:
                raise Unsupported("a scatter source shorter than its index")
            specs[d] = (0, i, 1)
    if all(s is None for s in specs):
        return source
    return LazyArray(record.extract_slice(source._node, specs))


def scatter_src(x: Any, dim: Any, index: Any, src: Any) -> Any:
    """`scatter.src`: `src`'s elements written where the index names. torch leaves
    the result of equal indices (in a row along `dim`) undefined; here they never
    reach the program: an index one wide along the dim has none, and a wider one must
    have none by construction or be checked (`distinct_along`)."""
    given = lazy(index)

    def write(block: LazyArray, axis: int, index: LazyArray) -> LazyArray:
        source = source_block(src, index, block)
        if one_wide(index, axis):
            return needs(np.where(hits(block, axis, index), source, block))
        distinct_along(given, axis)
        positions = flat_positions(index, block.shape, axis)
        work = INT32 if block.dtype == np.dtype(np.bool_) else block.dtype
        base = filled(block.shape, -0.0, work)
        # (-0.0 + v is v for every float v, -0.0 included; ints and bools start at 0)
        values = flat_add(base, positions, source.astype(work, copy=False))
        return needs(np.where(written(block, positions), values.astype(block.dtype), block))

    return scattered(x, dim, index, write)


def distinct_along(index: LazyArray, axis: int) -> None:
    """Refuses an index that may have equal values in a row along `axis`. A sort's or
    a top-k's indices have none by construction (`ordering`); one of the call's is
    checked now, and each replay checks it again (`Builder.check_distinct`); any
    other computed index runs in torch."""
    if ordering(index._node, axis):
        return
    ids = index._node.value
    if ids is None:
        raise Unsupported("a scatter of a computed index, which may repeat")
    if not distinct(ids, axis):
        raise Unsupported("a scatter whose index repeats")
    if BUILDING:
        BUILDING[-1].check_distinct(index, axis)


def ordering(node: Node, axis: int) -> bool:
    """Whether `node` holds distinct values in every row along `axis` by construction:
    a `top_k`'s indices along it, reversed, copied, or subtracted from a number (a
    sort's and a top-k's indices)."""
    if node.op == "top_k":
        return node.params[1] == axis
    if node.op == "reverse" or (node.op == "convert" and node.dtype == node.operands[0].dtype):
        return ordering(node.operands[0], axis)
    if node.op == "nary" and node.params == ("sub",) and not node.operands[0].shape:
        return ordering(node.operands[1], axis)
    return False


def scatter_add(x: Any, dim: Any, index: Any, src: Any) -> Any:
    """`scatter_add`: `src`'s elements added where the index names, equal ones too."""

    def write(block: LazyArray, axis: int, index: LazyArray) -> LazyArray:
        source = source_block(src, index, block)
        if block.dtype == np.dtype(np.bool_):
            raise Unsupported("a scatter_add of bools")
        return flat_add(block, flat_positions(index, block.shape, axis), source)

    return scattered(x, dim, index, write)


def scatter_reduce(x: Any, dim: Any, index: Any, src: Any, reduce: str,
                   include_self: bool = True) -> Any:  # fmt: skip
    """`scatter_reduce` by `sum`, by `mean` (the sum over the count of values, `x`'s own
    among them with `include_self`, where any was written; integers rounded toward
    -inf, as torch's), or by `prod`, `amax` or `amin` (`reduced_at`)."""
    dtype = lazy(x).dtype
    if reduce not in ("sum", "mean", *REDUCTIONS) or dtype.kind == "b":
        raise Unsupported(f"scatter_reduce by {reduce} of {dtype}")

    def write(block: LazyArray, axis: int, index: LazyArray) -> LazyArray:
        source = source_block(src, index, block)
        if reduce in REDUCTIONS:
            return reduced_at(block, axis, index, source, reduce, include_self)
        positions = flat_positions(index, block.shape, axis)
        start = block if include_self else np.where(written(block, positions), 0, block)
        total = flat_add(needs(start).astype(block.dtype, copy=False), positions, source)
        if reduce == "sum":
            return total
        counts = write_counts(block, positions, int(include_self), block.dtype)
        divide = np.true_divide if is_float_dtype(block.dtype) else np.floor_divide
        return needs(np.where(counts > 0, divide(total, np.maximum(counts, 1)), block))

    return scattered(x, dim, index, write)


def index_reduce(x: Any, dim: Any, index: Any, source: Any, reduce: str,
                 include_self: bool = True) -> Any:  # fmt: skip
    """`index_reduce`: `scatter_reduce` by the 1-d index along `dim`, broadcast to the
    source's shape (every element of a slice of the source reduced into the slice of
    `x` its index names)."""
    x, index, source = lazy(x), lazy(index), lazy(source)
    if x.ndim == 0 and source.ndim == 0:  # (torch's: as tensors of one element)
        one = (reshaped(x, (1,)), dim, index, reshaped(source, (1,)), reduce, include_self)
        return reshaped(index_reduce(*one), ())
    if index.ndim != 1 or source.ndim != x.ndim:
        raise Unsupported("index_reduce by a 0-d index, or of a source of another rank")
    axis = specialized(dim) % x.ndim
    along = reshaped(index, (*[1] * axis, index.shape[0], *[1] * (x.ndim - axis - 1)))
    spread = needs(np.broadcast_to(along, tuple(source.shape)))
    return scatter_reduce(x, axis, spread, source, reduce, include_self)


REDUCTIONS = {"amax": (np.max, np.maximum, "max"), "amin": (np.min, np.minimum, "min"),
              "prod": (np.prod, np.multiply, "prod")}  # fmt: skip
"""The reductions `reduced_at` computes: along a dim, of two tensors, and the kind whose
identity (`numerics.reduction_identity`) changes nothing in them."""


def reduced_at(block: LazyArray, axis: int, index: LazyArray, source: LazyArray, reduce: str,
               include_self: bool) -> LazyArray:  # fmt: skip
    """`block` with each position along `axis` reduced (`REDUCTIONS`) with the elements
    of `source` whose index names it. The dialect has no segment maximum or product, so
    every index is compared with every position along the dim: K x N elements per row
    for an index of K along a dim of N, which suits a batch's dims, not a graph's
    edges. A NaN propagates (as torch's maximum, minimum and product); a position
    nothing names keeps its value."""
    if index.size == 0:  # (nothing written; numpy has no maximum of no elements)
        return block.copy()
    along, combine, kind = REDUCTIONS[reduce]
    count = block.shape[axis]
    positions = LazyArray(record.iota((count,), 0, index.dtype))
    unit_dims = [1] * (block.ndim - axis - 1)
    positions = reshaped(positions, (*[1] * (axis + 1), count, *unit_dims))
    hits = needs(np.expand_dims(index, axis + 1) == positions)
    identity = asarray(np.asarray(reduction_identity(kind, block.dtype)))
    spread = np.where(hits, np.expand_dims(source, axis + 1), identity)
    reduced = needs(along(needs(spread), axis=axis))
    if include_self:
        return needs(combine(block, reduced))
    return needs(np.where(np.any(hits, axis=axis), reduced, block))


def scatter(x: Any, dim: Any, index: Any, value: Any, reduce: Any = None) -> Any:
    """`scatter.value` or `scatter.src` (by what `value` is); with a `reduce`, add or
    multiply, `scatter_reduce` by sum or prod of the target's values and the source
    (a number broadcast to the index)."""
    if reduce is not None:
        kind = {"add": "sum", "multiply": "prod"}.get(reduce)
        if kind is None:
            raise Unsupported(f"a scatter with the reduce {reduce!r}")
        if not isinstance(value, LazyArray):
            value = needs(np.broadcast_to(value_written(lazy(x), value), lazy(index).shape))
        return scatter_reduce(x, dim, index, value, kind)
    if isinstance(value, LazyArray):
        return scatter_src(x, dim, index, value)
    return scatter_value(x, dim, index, value)


# -- masked_scatter -----------------------------------------------------------------------------


def mask_order(mask: LazyArray) -> tuple[LazyArray, LazyArray]:
    """The flat `mask`, and each of its elements' rank among the true ones (the number
    of true ones before it): where a masked write reads its source, or writes its
    gradient."""
    flat = reshaped(mask, (mask.size,))
    ranks = needs(np.cumsum(flat.astype(INT64), axis=0)) - 1
    return flat, needs(np.maximum(ranks, 0))


def masked_scatter(x: Any, mask: Any, source: Any) -> Any:
    """`x` with the source's elements, in order, where the mask is true (both broadcast
    to one shape): the source flattened and taken at each element's rank among the true ones.
    torch raises where the source has fewer elements than the mask has trues: that is
    read now (a sync point, and again on each replay), and such a call runs in torch."""
    x, mask, source = lazy(x), lazy(mask), lazy(source)
    if source.size == 0 or source.dtype != x.dtype:
        raise Unsupported("a masked_scatter of an empty source or of another dtype")
    rank = max(x.ndim, mask.ndim)
    sizes = [[1] * (rank - t.ndim) + list(t.shape) for t in (x, mask)]
    if any(d != m and 1 not in (d, m) for d, m in zip(*sizes, strict=True)):
        raise Unsupported("a masked_scatter of a mask that does not broadcast")
    shape = tuple(m if d == 1 else d for d, m in zip(*sizes, strict=True))
    x = needs(np.broadcast_to(x, shape))
    flat, ranks = mask_order(needs(np.broadcast_to(mask, shape)))
    if not held(needs(flat.astype(INT64).sum() <= number(source.size, ranks))):
        raise Unsupported("a masked_scatter of fewer source elements than the mask's trues")
    sources = reshaped(source, (source.size,))
    taken = LazyArray(record.take(sources._node, ranks._node, 0))
    return reshaped(needs(np.where(flat, taken, reshaped(x, (x.size,)))), x.shape)


def masked_scatter_backward(grad: Any, mask: Any, sizes: Sequence[Any]) -> Any:
    """The source's gradient: the output's gradient where the mask is true, in order,
    then zeros (a `scatter_add` of them at their ranks onto -0.0, which keeps a -0.0)."""
    grad, mask = lazy(grad), lazy(mask)
    flat, ranks = mask_order(needs(np.broadcast_to(mask, tuple(grad.shape))))
    count = math.prod(sizes)
    grads = reshaped(grad, (grad.size,))
    base = filled((count + 1,), -0.0, grad.dtype)
    at = needs(np.where(flat, ranks, number(count, ranks)))  # (the false ones: one past the end)
    added = LazyArray(record.scatter_add(base._node, at._node, grads._node, 0))
    kept = needs(LazyArray(record.iota((count + 1,), 0, INT64)) < flat.astype(INT64).sum())
    result = needs(np.where(kept, added, asarray(np.zeros((), grad.dtype))))
    return reshaped(LazyArray(record.extract_slice(result._node, [(0, count, 1)])), sizes)


# -- sort ---------------------------------------------------------------------------------------


def sort(x: Any, dim: Any = -1, descending: bool = False, stable: Any = None) -> Any:
    """Values and int64 indices along `dim`, equal ones in the order of their index,
    NaN above every number, as torch's stable sort (its unstable one promises no
    order of equal values: this one is as good). A `tensor.top_k` of all the dim:
    descending as it is, ascending on the reversed dim, with the order reversed back
    (no negation, which integers' minimum and unsigned types would not survive)."""
    x = lazy(x)
    if x.ndim == 0:
        return x.copy(), asarray(np.zeros((), INT64))
    axis = specialized(dim) % x.ndim
    count = specialized(x.shape[axis])
    if descending:
        values, indices = record.top_k(x._node, count, axis)
        return LazyArray(values), LazyArray(indices)
    reversed_x = record.reverse(x._node, (axis,))
    values, indices = record.top_k(reversed_x, count, axis)
    order = (count - 1) - LazyArray(record.reverse(indices, (axis,)))
    return LazyArray(record.reverse(values, (axis,))), needs(order)


def searchsorted(sorted_sequence: Any, values: Any, out_int32: bool = False,
                 right: bool = False, side: Any = None, sorter: Any = None) -> Any:  # fmt: skip
    """Where each value would go in its row of the sorted sequence (`right`, or the side
    "right": after equal ones): a count of the row's elements below it (or at or below),
    compared as torch's binary search compares (`bucketize`), a number too; `sorter`,
    the order that sorts each row, read first."""
    sequence = lazy(sorted_sequence)
    if sorter is not None:
        sequence = gather(sequence, -1, sorter)
    if not isinstance(values, LazyArray):  # (`searchsorted.Scalar`: a 0-d result)
        values = asarray(np.asarray(values, sequence.dtype))
    if sequence.ndim != 1 and (
        values.ndim != sequence.ndim or tuple(values.shape[:-1]) != tuple(sequence.shape[:-1])
    ):
        raise Unsupported("a searchsorted of rows other than the values'")
    after = np.expand_dims(values, -1)
    rows = sequence if sequence.ndim == 1 else np.expand_dims(sequence, -2)
    above = (rows > after) if right or side == "right" else (rows >= after)
    counts = needs(np.logical_not(above)).sum(axis=-1)
    return needs(counts.astype(np.int32 if out_int32 else np.int64))


def argsort(x: Any, dim: Any = -1, descending: bool = False, stable: bool = False) -> Any:
    return sort(x, dim, descending)[1]


HANDLERS: dict[str, Handler] = {
    "gather": gather, "index_select": index_select, "scatter": scatter, "scatter_add": scatter_add,
    "scatter_reduce": scatter_reduce, "index_reduce": index_reduce,
    "sort": sort, "argsort": argsort, "searchsorted": searchsorted, "index": index,
    "index_put": index_put, "put": put, "masked_scatter": masked_scatter,
    "masked_scatter_backward": masked_scatter_backward,
}  # fmt: skip
"""The ATen ops of this module, by name (`sort` and `sort.stable` alike: the second's
arguments are keywords)."""
