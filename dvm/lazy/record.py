"""Recording ops: each function checks its operands as numpy would, computes the
result's shape and type, and appends a pending node to the thread's trace.

The functions take nodes whose dtypes already agree (`numpy_api` converts); they
return None where numpy would raise, so the caller can run numpy and raise numpy's
own error.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar

import numpy as np

from dvm.lazy.graph import (
    Node,
    Static,
    broadcast_nodes,
    broadcast_pair,
    broadcast_shape,
    broadcast_static,
    same_shape,
)
from dvm.lazy.stats import STATS
from dvm.numerics import is_float_dtype

MAX_SEGMENT = 128
"""Live pending ops after which recording flushes on its own: a long loop that never
syncs still compiles programs of a bounded size."""

BOOL = np.dtype(np.bool_)
INT64, UINT64 = np.dtype(np.int64), np.dtype(np.uint64)


class Trace(threading.local):
    """The pending nodes of this thread, in the order they were recorded."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.views = True
        """Whether a result numpy would make a view becomes one once known (off where
        nothing writes in place: every result is then a program's own array)."""
        self.constants: Callable[[], bool] | None = None
        """Whether a Python number an op reads is a constant of the program (its value
        written in the text and part of the segment's key: `Node.constant`) rather than
        an argument. Off (None) for numpy code, whose numbers change from call to call
        (a loop's variable) and share one program as arguments; `dvm.torch` turns it on
        while a graph, whose numbers are fixed, is recorded."""


TRACE = Trace()

T = TypeVar("T")


class PerThread(threading.local, Generic[T]):
    """A list of which each thread has its own: the callbacks and builders of the call
    a thread records or exports, which another thread's segments must not reach."""

    def __init__(self) -> None:
        self.items: list[T] = []

    def __bool__(self) -> bool:
        return bool(self.items)

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __getitem__(self, i: int) -> T:
        return self.items[i]

    def append(self, item: T) -> None:
        self.items.append(item)

    def remove(self, item: T) -> None:
        self.items.remove(item)


def constant_numbers() -> bool:
    """Whether a Python number an op reads now is a constant of the program
    (`Trace.constants`)."""
    constants = TRACE.constants
    return constants is not None and constants()


def record(
    op: str,
    operands: Sequence[Node],
    params: tuple[Any, ...],
    shape: tuple[int, ...],
    dtype: np.dtype[Any],
    static: Static,
    indices: tuple[int, ...] = (),
) -> Node:
    node = Node(op, tuple(operands), params, indices, shape, dtype, static)
    TRACE.nodes.append(node)
    STATS.ops_recorded += 1
    return node


def unary(name: str, x: Node, dtype: np.dtype[Any]) -> Node:
    node = Node("unary", (x,), (name,), (), x.shape, dtype, x.static)
    TRACE.nodes.append(node)
    STATS.ops_recorded += 1
    return node


def binary(name: str, a: Node, b: Node, dtype: np.dtype[Any]) -> Node | None:
    """`elementwise` of two operands, the case of most ops (kept short: it runs once
    per op recorded)."""
    if (same_shape(a.shape, b.shape) and a.static == b.static) or not b.shape:
        shape, static = a.shape, a.static  # no broadcast, or by a 0-d operand
    elif not a.shape:
        shape, static = b.shape, b.static
    else:
        found = broadcast_pair(a, b)
        if found is None:
            return None
        shape, static = found
    node = Node("nary", (a, b), (name,), (), shape, dtype, static)
    TRACE.nodes.append(node)
    STATS.ops_recorded += 1
    return node


def elementwise(name: str, operands: Sequence[Node], dtype: np.dtype[Any]) -> Node | None:
    """An elementwise op (`unary` for one operand, else broadcast together)."""
    if len(operands) == 1:
        return unary(name, operands[0], dtype)
    if len(operands) == 2:
        return binary(name, operands[0], operands[1], dtype)
    shaped = [o for o in operands if o.shape]  # a 0-d operand changes no dim
    first = shaped[0] if shaped else operands[0]
    if all(same_shape(o.shape, first.shape) and o.static == first.static for o in shaped):
        shape, static = first.shape, first.static  # the common case: no broadcast
    else:
        found = broadcast_nodes(shaped)
        if found is None:
            return None
        shape, static = found
    return record("nary", operands, (name,), shape, dtype, static)


def convert(x: Node, dtype: np.dtype[Any]) -> Node:
    """`x.astype(dtype)`. A float becomes a narrower integer as numpy's cast does: the
    compiler's `convert` saturates at the target's range, numpy's C cast wraps (a
    negative float to `uint8`: -1.5 is 255), so it goes through int64 (exact for
    every value inside int64's range), whose narrowing wraps. Beyond that range, and
    for NaN and infinities, numpy's result is the platform's (it warns `invalid value
    encountered in cast`); the program's saturates."""
    if dtype.kind in "iu" and dtype != INT64 and is_float_dtype(x.dtype):
        whole = record("convert", [x], (), x.shape, INT64, x.static)
        if dtype != UINT64:
            return record("convert", [whole], (), x.shape, dtype, x.static)
        return float_to_uint64(x, whole)
    return record("convert", [x], (), x.shape, dtype, x.static)


def float_to_uint64(x: Node, whole: Node) -> Node:
    """`x` (a float) as uint64: through int64 (`whole`) below 2**63, numpy's wrap of
    negatives included, and directly above it, where int64 would saturate."""
    high = Node("value", (), (), (), (), x.dtype, (), np.asarray(2.0**63, x.dtype))
    above = binary("ge", x, high, BOOL)
    direct = record("convert", [x], (), x.shape, UINT64, x.static)
    wrapped = record("convert", [whole], (), x.shape, UINT64, x.static)
    assert above is not None  # (a 0-d operand broadcasts)
    return record("nary", [above, direct, wrapped], ("select",), x.shape, UINT64, x.static)


def reduce(kind: str, x: Node, axes: tuple[int, ...], keepdims: bool, dtype: np.dtype[Any]) -> Node:
    """`axes` normalized (0 .. rank-1, sorted, distinct)."""
    if keepdims:  # (lists, not generators: a reduction is among the commonest ops)
        shape = tuple([1 if a in axes else d for a, d in enumerate(x.shape)])
        static: Static = tuple([1 if a in axes else s for a, s in enumerate(x.static)])
    else:
        shape = tuple([d for a, d in enumerate(x.shape) if a not in axes])
        static = tuple([s for a, s in enumerate(x.static) if a not in axes])
    return record("reduce", [x], (kind, axes, keepdims), shape, dtype, static)


def matmul(a: Node, b: Node) -> Node | None:
    """numpy's matmul of operands of rank >= 2 (1-d ones are reshaped by the caller)."""
    if a.shape[-1] != b.shape[-2]:
        return None
    batch = broadcast_shape(a.shape[:-2], b.shape[:-2])
    if batch is None:
        return None
    shape = (*batch, a.shape[-2], b.shape[-1])
    static = (*broadcast_static(a.static[:-2], b.static[:-2]), a.static[-2], b.static[-1])
    return record("matmul", [a, b], (), shape, a.dtype, static)


def transpose(x: Node, perm: tuple[int, ...]) -> Node:
    shape = tuple(x.shape[p] for p in perm)
    static = tuple(x.static[p] for p in perm)
    return record("transpose", [x], (perm,), shape, x.dtype, static)


def broadcast_to(x: Node, shape: tuple[int, ...], fixed: Static = ()) -> Node | None:
    """`x` broadcast to `shape`; `fixed`, where given, the sizes the program's structure
    fixes (a tile's count of copies: a constant of the type, not a size of the call)."""
    if broadcast_shape(x.shape, shape) != shape or len(shape) < x.ndim:
        return None
    # A static size of `x` stays (the target equals it there); else 1s are static
    offset = len(shape) - x.ndim
    kept = [None] * offset + [s if s != 1 else None for s in x.static]
    for axis, size in enumerate(fixed):
        kept[axis] = kept[axis] if size is None else size
    static = tuple(
        s if s is not None else 1 if d == 1 else None for d, s in zip(shape, kept, strict=True)
    )
    indices = tuple(d for d, s in zip(shape, static, strict=True) if s is None)
    return record("broadcast_to", [x], (static,), shape, x.dtype, static, indices)


def iota(shape: tuple[int, ...], axis: int, dtype: np.dtype[Any]) -> Node:
    """numpy's `arange` along `axis`, broadcast to `shape` (`tensor.iota`)."""
    static = tuple(1 if d == 1 else None for d in shape)
    indices = tuple(d for d in shape if d != 1)
    return record("iota", [], (axis,), shape, dtype, static, indices)


def reshape(x: Node, shape: tuple[int, ...]) -> Node | None:
    """numpy's reshape to `shape` (-1 already resolved): a collapse of each group of
    dims that merge, then an expand of each group that splits (`reshape_groups`), each
    left out where it would do nothing. Dims a reshape keeps stay dims of their own, so
    `[B, S, H] -> [B * S, H]` keeps `H`'s axis: the compiler sees which axes a reshape
    merges (to fuse across it) rather than a flattening to one dim and back."""
    if math.prod(shape) != math.prod(x.shape):
        return None
    if same_shape(shape, x.shape):
        return x
    if not shape:  # to rank 0: every dim is 1
        return squeeze(x, tuple(range(x.ndim)))
    if x.ndim == 0:
        return unsqueeze(x, shape)
    found = reshape_groups(x.shape, shape)
    if found is None:  # (a 0 size: any grouping is one)
        found = [tuple(range(x.ndim))], [tuple(range(len(shape)))]
    sources, targets = found
    merged = x = units_made_static(x, [g for g in sources if len(g) > 1])
    if any(len(g) > 1 for g in sources):
        sizes = tuple(math.prod(x.shape[a] for a in g) for g in sources)
        static = tuple(group_static(x.static, g) for g in sources)
        merged = record("collapse", [x], (tuple(sources),), sizes, x.dtype, static)
    if all(len(g) == 1 for g in targets):
        return merged
    return split(merged, targets, shape)


def reshape_groups(
    source: tuple[int, ...], target: tuple[int, ...]
) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]] | None:
    """The finest pairing of consecutive source dims with consecutive target dims of
    equal products (a reshape is a collapse of each source group to one dim, then an
    expand of it to its target group), or None for a 0 size. Trailing 1s join the
    last group."""
    if 0 in source or 0 in target:
        return None
    sources: list[tuple[int, ...]] = []
    targets: list[tuple[int, ...]] = []
    i = j = 0
    while i < len(source) and j < len(target):
        group_i, group_j = [i], [j]
        merged, split_size = source[i], target[j]
        while merged != split_size:
            if merged < split_size:
                i += 1
                group_i.append(i)
                merged *= source[i]
            else:
                j += 1
                group_j.append(j)
                split_size *= target[j]
        sources.append(tuple(group_i))
        targets.append(tuple(group_j))
        i, j = i + 1, j + 1
    sources[-1] += tuple(range(i, len(source)))  # (1s: the products are equal)
    targets[-1] += tuple(range(j, len(target)))
    return sources, targets


def group_static(static: Static, group: Sequence[int]) -> int | None:
    """The type dim of `group`'s dims collapsed: their product if all are static (the
    collapse's verifier wants it: a squeezed `tensor<?x32x1x?xf32>` is `?x32x?`)."""
    sizes = [static[a] for a in group]
    return None if None in sizes else math.prod(sizes)  # type: ignore[arg-type]


def pinned(size: int) -> int:
    """`size` as a plain int that a type fixes. Compared with its value first: a size
    that tracks its origin (`dvm.torch`'s) then notes that a replay needs that value."""
    value = int.__index__(size)
    _ = size == value
    return value


def units_made_static(x: Node, groups: Sequence[Sequence[int]]) -> Node:
    """`x` with the `?` dims of each group of its axes that holds only 1s sliced to
    static 1s, where a collapse or an expand is about to read the group as one dim.
    The compiler stretches a `?` that is 1 only where it is an argument's dim, so the
    product `a_0*a_1` of a `(1, 1)` array raveled would not broadcast as numpy's 1
    does: a static 1 always does. (A size that tracks its origin notes that the
    program needs that 1.)"""
    loose = [
        a
        for g in groups
        if all(int.__index__(x.shape[a]) == 1 for a in g)
        for a in g
        if x.static[a] is None and pinned(x.shape[a]) == 1
    ]
    if not loose:
        return x
    return extract_slice(x, [(0, 1, 1) if a in loose else None for a in range(x.ndim)])


def split(x: Node, groups: list[tuple[int, ...]], shape: tuple[int, ...]) -> Node:
    """An expand of each dim of `x` into its group of `shape`'s dims. A dim split from a
    static one is static (the type fixes the numbers); else 1s are static 1s, the rest
    `?`. A `?` into 1s only is sliced to a static 1 first (`units_made_static`)."""
    ones = [(a,) for a, g in enumerate(groups) if len(g) > 1 and all(shape[b] == 1 for b in g)]
    x = units_made_static(x, ones)
    static: list[int | None] = []
    for axis, group in enumerate(groups):
        if len(group) == 1:
            static.append(x.static[axis])
        elif x.static[axis] is not None:
            static.extend(pinned(shape[a]) for a in group)
        else:
            static.extend(1 if shape[a] == 1 else None for a in group)
    indices = tuple(d for d, s in zip(shape, static, strict=True) if s is None)
    fixed = tuple(static)
    return record("expand", [x], (tuple(groups), fixed), shape, x.dtype, fixed, indices)


def unsqueeze(x: Node, shape: tuple[int, ...]) -> Node:
    """An expand of a rank-1 `x` to `shape`, or of a rank-0 `x` to 1s."""
    groups = (tuple(range(len(shape))),) if x.ndim == 1 else ()
    static = tuple(1 if d == 1 else None for d in shape)
    if x.ndim == 1 and all(s == 1 for s in static):
        x = units_made_static(x, [(0,)])  # a `?` into 1s only
    indices = tuple(d for d, s in zip(shape, static, strict=True) if s is None)
    return record("expand", [x], (groups, static), shape, x.dtype, static, indices)


def squeeze(x: Node, axes: tuple[int, ...]) -> Node:
    """`x` without its size-1 dims `axes`, each collapsed into a kept neighbour."""
    keep = [a for a in range(x.ndim) if a not in axes]
    if not keep:
        return to_rank_0(x)
    groups: list[list[int]] = [[] for _ in keep]
    k = 0
    for a in range(x.ndim):
        groups[min(k, len(keep) - 1)].append(a)
        if a in keep:
            k += 1
    x = units_made_static(x, [g for g in groups if len(g) > 1])
    shape = tuple(x.shape[a] for a in keep)
    static = tuple(group_static(x.static, g) for g in groups)
    return record("collapse", [x], (tuple(map(tuple, groups)),), shape, x.dtype, static)


def to_rank_0(x: Node) -> Node:
    """The one element of `x` as a 0-d tensor: a collapse of static 1s, else a
    reduction over every axis (of one element: the element itself)."""
    if all(s == 1 for s in x.static):
        return record("collapse", [x], ((),), (), x.dtype, ())
    if x.dtype == BOOL:
        small = reduce(
            "max", convert(x, np.dtype(np.int8)), tuple(range(x.ndim)), False, np.dtype(np.int8)
        )
        return convert(small, BOOL)
    return reduce("max", x, tuple(range(x.ndim)), False, x.dtype)


def insert_unit_dims(x: Node, positions: tuple[int, ...]) -> Node:
    """`x` with a new dim of size 1 at each of `positions` (of the result)."""
    rank = x.ndim + len(positions)
    shape, static, kept = [], [], []
    source = iter(range(x.ndim))
    for axis in range(rank):
        if axis in positions:
            shape.append(1)
            static.append(1)
        else:
            a = next(source)
            kept.append(axis)
            shape.append(x.shape[a])
            static.append(x.static[a])
    if not kept:
        return unsqueeze(x, tuple(shape))
    groups: list[list[int]] = [[] for _ in kept]
    k = 0
    for axis in range(rank):  # each new dim joins the group of the kept dim after it
        groups[min(k, len(kept) - 1)].append(axis)
        if axis in kept:
            k += 1
    indices = tuple(d for d, s in zip(shape, static, strict=True) if s is None)
    return record(
        "expand",
        [x],
        (tuple(map(tuple, groups)), tuple(static)),
        tuple(shape),
        x.dtype,
        tuple(static),
        indices,
    )


def extract_slice(x: Node, specs: Sequence[tuple[int, int, int] | None]) -> Node:
    """Per dim: None for the whole dim, else (offset, size, stride) with a stride >= 1.
    A size of 1 is static (an integer index, which the caller then squeezes)."""
    params: list[tuple[int, int | None] | None] = []
    indices: list[int] = []
    shape, static = [], []
    for axis, spec in enumerate(specs):
        if spec is None:
            params.append(None)
            shape.append(x.shape[axis])
            static.append(x.static[axis])
            continue
        offset, size, stride = spec
        fixed = 1 if size == 1 else None
        params.append((stride, fixed))
        indices.append(offset)
        if fixed is None:
            indices.append(size)
        shape.append(size)
        static.append(fixed)
    return record(
        "extract_slice", [x], (tuple(params),), tuple(shape), x.dtype, tuple(static), tuple(indices)
    )


def insert_slice(dest: Node, source: Node, specs: Sequence[tuple[int, int, int] | None]) -> Node:
    """`dest` with its slice (`specs` as `extract_slice` takes them) replaced by `source`,
    functional (`tensor.insert_slice`). A size is static where the source's dim is."""
    params: list[tuple[int, int | None] | None] = []
    indices: list[int] = []
    for axis, spec in enumerate(specs):
        if spec is None:
            params.append(None)
            continue
        offset, size, stride = spec
        fixed = source.static[axis]
        params.append((stride, fixed))
        indices.extend([offset] if fixed is not None else [offset, size])
    return record(
        "insert_slice", [dest, source], (tuple(params),), dest.shape, dest.dtype, dest.static,
        tuple(indices),
    )  # fmt: skip


def concat(operands: Sequence[Node], axis: int) -> Node | None:
    """numpy's concatenate along `axis`. The result's size there is static when every
    operand's is (the sum: a stack of unit dims has as many rows as it has operands),
    so what follows knows it, as a program written by hand would. A `?` sum of 1 (an
    empty part and one of 1) is made a static 1, which broadcasts
    (`units_made_static`)."""
    first = operands[0]
    for o in operands:
        if o.ndim != first.ndim or any(
            d != e for a, (d, e) in enumerate(zip(o.shape, first.shape, strict=True)) if a != axis
        ):
            return None
    shape = list(first.shape)
    shape[axis] = sum(o.shape[axis] for o in operands)
    static = list(broadcast_static(*(o.static for o in operands)))
    along = [o.static[axis] for o in operands]
    static[axis] = None if None in along else sum(along)  # type: ignore[arg-type]
    joined = record("concat", operands, (axis,), tuple(shape), first.dtype, tuple(static))
    return units_made_static(joined, [(axis,)])


def arg_reduce(kind: str, x: Node, axis: int, keepdims: bool) -> Node:
    """`argmax` or `argmin` along `axis` (int64 indices, the first on ties)."""
    shape = tuple(1 if a == axis else d for a, d in enumerate(x.shape) if keepdims or a != axis)
    static = tuple(1 if a == axis else s for a, s in enumerate(x.static) if keepdims or a != axis)
    return record(kind, [x], (axis, keepdims), shape, np.dtype(np.int64), static)


def scan(kind: str, x: Node, axis: int) -> Node:
    """`cumsum` or `cumprod` along `axis`, in `x`'s dtype."""
    return record(kind, [x], (axis,), x.shape, x.dtype, x.static)


def take(x: Node, indices: Node, axis: int) -> Node:
    """numpy's `take` along `axis` with an index array of any rank."""
    shape = (*x.shape[:axis], *indices.shape, *x.shape[axis + 1 :])
    static = (*x.static[:axis], *indices.static, *x.static[axis + 1 :])
    return record("take", [x, indices], (axis,), shape, x.dtype, static)


def reverse(x: Node, axes: tuple[int, ...]) -> Node:
    """numpy's `flip` along `axes`."""
    return record("reverse", [x], (axes,), x.shape, x.dtype, x.static)


def take_along_axis(x: Node, indices: Node, axis: int) -> Node:
    """numpy's `take_along_axis`: indices of `x`'s rank, the other dims as `x`'s."""
    return record("take_along_axis", [x, indices], (axis,), indices.shape, x.dtype, indices.static)


def scatter_add(x: Node, indices: Node, updates: Node, axis: int) -> Node:
    """`x` with `updates` (of `take(x, indices, axis)`'s shape) added at `indices` along
    `axis`, equal indices accumulating (numpy's `add.at` on a copy)."""
    return record("scatter_add", [x, indices, updates], (axis,), x.shape, x.dtype, x.static)


def top_k(x: Node, k: int, axis: int) -> tuple[Node, Node]:
    """The k largest along `axis`, descending, and their int64 indices: a `top_k` node
    of the indices (`tensor.top_k`'s second result), and the values taken along the
    axis at them, which is how the compiler computes them too."""
    shape = tuple(k if a == axis else d for a, d in enumerate(x.shape))
    static = tuple(k if a == axis else s for a, s in enumerate(x.static))
    indices = record("top_k", [x], (k, axis), shape, np.dtype(np.int64), static)
    return take_along_axis(x, indices, axis), indices


def collective(op: str, x: Node, params: tuple[Any, ...], world: int) -> Node:
    """A collective of the default process group of `world` processes: `all_reduce`
    (params `(kind,)`), or `all_gather` (`(axis,)`) or `reduce_scatter` (`(axis, kind)`),
    whose axis grows or shrinks by the world size (a `?` in the program: its size is
    the group's)."""
    shape, static = list(x.shape), list(x.static)
    if op != "all_reduce":
        axis = params[0]
        shape[axis] = shape[axis] * world if op == "all_gather" else shape[axis] // world
        static[axis] = None
    return record(op, [x], params, tuple(shape), x.dtype, tuple(static))
