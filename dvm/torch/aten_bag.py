"""`nn.EmbeddingBag`'s ATen ops (`_embedding_bag` and its backward) as ops the
dialect has (see `aten`).

A bag is a run of consecutive indices, from one offset to the next; the offsets
are data, so each index's bag is computed as torch computes it: a one added at
every offset (`tensor.scatter_add`, empty bags adding up), then a cumulative sum.
Sums and means add the rows into their bag (`tensor.scatter_add`, as an
`index_add`); a maximum compares every row with every bag (the dialect has no
segment maximum), which costs bags x indices x features. torch's forward returns
three more tensors, which its backward reads: `offset2bag` (each index's bag),
`bag_size` (each bag's count of indices, but for `sum`, where it is zeros) and
`max_indices` (for `max`, the row each maximum came from; otherwise `bag_size`
again). The handlers return them in those conventions, so torch's backward reads
theirs and theirs read torch's; the backward recomputes the bags from the offsets
rather than reading `offset2bag`, which torch leaves empty on its fast path.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from dvm.lazy import LazyArray, asarray, record
from dvm.numerics import is_bfloat16, is_float_dtype, working_dtype
from dvm.torch.aten import Handler, Unsupported, checked, filled, lazy, needs, reshaped
from dvm.torch.aten_index import flat_add, flat_positions
from dvm.torch.sizes import specialized

SUM, MEAN, MAX = 0, 1, 2
"""torch's codes of the bag reductions."""

FAST_SUMS = {np.dtype(np.float32), np.dtype(np.float16)}
"""The weights' dtypes, with bf16, whose sums (without padding) take torch's fast
path, which computes no `offset2bag`."""


class Bags(NamedTuple):
    """Where each index goes: its bag as torch numbers it (`offset2bag`), the same
    where it counts and 0 where not (an index to read and write at), and whether it
    counts (in a bag, not padding)."""

    numbered: LazyArray
    at: LazyArray
    counted: LazyArray
    count: Any


def bags_of(indices: LazyArray, offsets: Any, count: Any, padding_idx: Any) -> Bags:
    """Each index's bag, torch's `make_offset2bag`: ones added at the first `count`
    offsets (a slot past the indices for an offset at their end), summed
    cumulatively, less 1. Indices past the last offset of `include_last_offset` are
    in the last bag, as torch's."""
    offsets = lazy(offsets)
    if indices.ndim != 1 or offsets.ndim != 1 or indices.dtype.kind not in "iu":
        raise Unsupported("an embedding bag of n-d indices or offsets")
    if type(count) is int and count == 0:
        raise Unsupported("an embedding bag without bags")
    total = indices.shape[0]
    starts = leading(checked(offsets, total + 1), count).astype(indices.dtype, copy=False)
    marks = filled((total + 1,), 0, indices.dtype)
    ones = filled(starts.shape, 1, indices.dtype)
    marked = LazyArray(record.scatter_add(marks._node, starts._node, ones._node, 0))
    numbered = needs(leading(needs(np.cumsum(marked, axis=0)), total) - 1)
    counted = needs(numbered >= 0)
    if specialized(padding_idx) >= 0:
        counted = needs(counted & (indices != specialized(padding_idx)))
    return Bags(numbered, needs(np.where(counted, numbered, 0)), counted, count)


def leading(x: LazyArray, count: Any) -> LazyArray:
    """The first `count` elements of the 1-d `x` (a size kept symbolic: no guard)."""
    return LazyArray(record.extract_slice(x._node, [(0, count, 1)]))


def per_bag(bags: Bags, rows: LazyArray) -> LazyArray:
    """The sum of `rows` (one per index, zeros where it does not count) in each bag."""
    block = zeros_with_rows((bags.count, *rows.shape[1:]), rows)
    return LazyArray(record.scatter_add(block._node, bags.at._node, rows._node, 0))


def zeros_with_rows(shape: tuple[Any, ...], rows: LazyArray) -> LazyArray:
    """Zeros of `shape` whose dims after the first are `rows`'s, static where those
    are (a filled block's would all be sizes of the call, which the fusion cannot
    match with the rows added into it)."""
    zero = asarray(np.asarray(0, rows.dtype))
    fixed = (None, *rows._node.static[1:])
    made = record.broadcast_to(zero._node, tuple(shape), fixed)
    if made is None:
        raise Unsupported("a block of these sizes")
    return LazyArray(made)


def per_index(bags: Bags, values: LazyArray) -> LazyArray:
    """Each index's bag's row of `values` (one per bag)."""
    return LazyArray(record.take(values._node, bags.at._node, 0))


def sizes_of(bags: Bags) -> LazyArray:
    """Each bag's count of indices that count (torch's `bag_size`)."""
    return per_bag(bags, bags.counted.astype(bags.numbered.dtype))


def column(x: LazyArray) -> Any:
    return np.expand_dims(x, 1)


def embedding_bag(weight: Any, indices: Any, offsets: Any, scale_grad_by_freq: bool = False,
                  mode: int = SUM, sparse: bool = False, per_sample_weights: Any = None,
                  include_last_offset: bool = False, padding_idx: Any = -1) -> Any:  # fmt: skip
    """`_embedding_bag` (and `_embedding_bag_forward_only`): each bag's sum, mean or
    maximum of its rows of `weight`, zeros for an empty bag; then `offset2bag`,
    `bag_size` and `max_indices` in torch's conventions."""
    weight, indices = lazy(weight), lazy(indices)
    if not is_float_dtype(weight.dtype) or weight.ndim != 2:
        raise Unsupported("an embedding bag of integers")
    count = lazy(offsets).shape[0] - (1 if include_last_offset else 0)
    bags = bags_of(indices, offsets, count, padding_idx)
    ids = checked(indices, weight.shape[0])
    rows = LazyArray(record.take(weight._node, ids._node, 0))
    if mode == MAX:
        if per_sample_weights is not None:
            raise Unsupported("per-sample weights of a max bag")
        sizes = sizes_of(bags)
        output, max_indices = bag_maximum(bags, rows, ids, sizes)
        return output, bags.numbered, sizes, max_indices
    work = working_dtype(weight.dtype)  # (half precision added in float32, as torch's)
    scale = bags.counted.astype(work)
    if per_sample_weights is not None:
        scale = scale * lazy(per_sample_weights).astype(weight.dtype, copy=False).astype(work)
    output = per_bag(bags, needs(rows.astype(work, copy=False) * column(scale)))
    if mode == MEAN:
        sizes = sizes_of(bags)
        output = needs(output / column(needs(np.maximum(sizes, 1))).astype(work))
        output = output.astype(weight.dtype, copy=False)
        return output, bags.numbered, sizes, needs(sizes + 0)
    output = output.astype(weight.dtype, copy=False)
    numbered = bags.numbered
    if (weight.dtype in FAST_SUMS or is_bfloat16(weight.dtype)) and specialized(padding_idx) < 0:
        numbered = filled((0,), 0, indices.dtype)  # (torch's fast path leaves it empty)
    unused = (lazy(offsets).shape[0],)  # (torch's sizes: the offsets', not the bags')
    return output, numbered, filled(unused, 0, indices.dtype), filled(unused, 0, indices.dtype)


def bag_maximum(bags: Bags, rows: LazyArray, ids: LazyArray, sizes: LazyArray) -> Any:
    """Each bag's maximum per feature and the row it came from (the first of equal
    ones), 0 and 0 for an empty bag: every row against every bag, rows of other bags
    and padding at -inf (the dialect has no segment maximum)."""
    numbers = LazyArray(record.iota((bags.count, 1), 0, bags.numbered.dtype))
    members = needs((np.expand_dims(bags.numbered, 0) == numbers) & bags.counted)
    inside = np.expand_dims(members, 2)
    lowest = asarray(np.asarray(-np.inf, rows.dtype))
    candidates = needs(np.where(inside, np.expand_dims(rows, 0), lowest))
    maximum = candidates.max(axis=1)
    first = np.argmax((inside & (candidates == np.expand_dims(maximum, 1))).astype(np.int32), 1)
    origin = LazyArray(record.take(ids._node, needs(first.astype(ids.dtype))._node, 0))
    nonempty = column(sizes > 0)
    output = needs(np.where(nonempty, maximum, 0).astype(rows.dtype))
    return output, needs(np.where(nonempty, origin, 0))


def embedding_bag_backward(grad: Any, indices: Any, offsets: Any, offset2bag: Any,
                           bag_size: Any, maximum_indices: Any, num_weights: Any,
                           scale_grad_by_freq: bool, mode: int, sparse: bool,
                           per_sample_weights: Any, padding_idx: Any = -1) -> Any:  # fmt: skip
    """`_embedding_bag_backward`: the weight's gradient, dense. A sum's or a mean's
    adds each bag's gradient (scaled by the per-sample weight, or by 1 / the bag's
    size) at its indices' rows; a maximum's adds it at the row
    each maximum came from (`maximum_indices`), for the bags that are not empty."""
    grad, indices = lazy(grad), lazy(indices)
    if sparse or grad.ndim != 2 or not is_float_dtype(grad.dtype):
        raise Unsupported("a sparse embedding bag gradient")
    if scale_grad_by_freq:
        raise Unsupported("an embedding bag gradient scaled by frequency")
    bags = bags_of(indices, offsets, grad.shape[0], padding_idx)
    block = zeros_with_rows((num_weights, grad.shape[1]), grad)
    if mode == MAX:
        origins = checked(maximum_indices, num_weights)
        positions = flat_positions(origins, block.shape, 0)
        kept = needs(np.where(column(sizes_of(bags) > 0), grad, 0))
        flat = grad.shape[0] * grad.shape[1]
        return flat_add(block, reshaped(positions, (flat,)), reshaped(kept, (flat,)))
    ids = checked(indices, num_weights)
    scale = bags.counted.astype(grad.dtype)
    if per_sample_weights is not None:
        scale = scale * lazy(per_sample_weights).astype(grad.dtype, copy=False)
    if mode == MEAN:
        scale = scale / per_index(bags, needs(np.maximum(sizes_of(bags), 1))).astype(grad.dtype)
    terms = needs(per_index(bags, grad) * column(needs(scale)))
    return LazyArray(record.scatter_add(block._node, ids._node, terms._node, 0))


def per_sample_weights_backward(
    grad: Any,
    weight: Any,
    indices: Any,
    offsets: Any,
    offset2bag: Any,
    mode: int,
    padding_idx: Any = -1,
) -> Any:
    """`_embedding_bag_per_sample_weights_backward` (a sum's only): each index's bag's
    gradient dotted with its row, 0 for padding."""
    grad, weight, indices = lazy(grad), lazy(weight), lazy(indices)
    if mode != SUM:
        raise Unsupported("per-sample weights of a mean or a max bag")
    bags = bags_of(indices, offsets, grad.shape[0], padding_idx)
    rows = LazyArray(record.take(weight._node, checked(indices, weight.shape[0])._node, 0))
    dots = (per_index(bags, grad) * rows).sum(axis=1)
    return needs(np.where(bags.counted, dots, 0).astype(grad.dtype))


HANDLERS: dict[str, Handler] = {
    "_embedding_bag": embedding_bag, "_embedding_bag_forward_only": embedding_bag,
    "_embedding_bag_backward": embedding_bag_backward,
    "_embedding_bag_per_sample_weights_backward": per_sample_weights_backward,
}  # fmt: skip
"""The ATen ops of this module, by name."""
