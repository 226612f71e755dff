"""In-place writes recorded as new values (functional updates).

numpy's `x -= g`, `np.add(p, 1, out=p)` and `x[1:-1] = v` write into `x`'s memory.
Where no other holder of that memory could see the write (`Node.updatable`), the lazy
array shows a new pending value instead: the ufunc's result cast to `x`'s dtype, or
`x` with the indexed part replaced (`tensor.insert_slice`). The ops recorded before
still read the old value, as they read it before the write in numpy. Each function
returns None for anything else; the caller then writes into the memory in numpy (a
sync point), which also raises numpy's own errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from dvm.lazy import numpy_api, record
from dvm.lazy.graph import Node, broadcast_shape, is_supported, same_shape
from dvm.lazy.numpy_api import Spec, index_parts


def updated(old: Node, ufunc: np.ufunc, inputs: Sequence[Any]) -> Node | None:
    """`ufunc(*inputs, out=x)` where `x` shows `old`: numpy's result cast to `old`'s
    dtype, as numpy's `same_kind` rule allows (inputs: nodes, arrays or scalars)."""
    node = numpy_api.ufunc(ufunc, inputs)
    if node is None or not same_shape(node.shape, old.shape):
        return None  # (numpy's broadcast into the target, or its error)
    if node.dtype != old.dtype:
        if not np.can_cast(node.dtype, old.dtype, "same_kind"):
            return None  # numpy's casting error
        node = record.convert(node, old.dtype)
    return node


def assigned(old: Node, key: Any, value: Any) -> Node | None:
    """`x[key] = value` where `x` shows `old`: `old` with the part `key` picks (ints,
    slices, `...`, None) replaced by `value` (a node, an array or a number) broadcast to
    it. A value numpy would cast across kinds (a float into integers), a part with no
    element and any other key run in numpy."""
    part = index_parts(old.shape, key)
    source = value_node(value, old.dtype)
    if part is None or source is None:
        return None
    specs, dropped = part.specs, part.dropped
    kept = [a for a in range(old.ndim) if a not in dropped]
    target = tuple(old.shape[a] if specs[a] is None else specs[a][1] for a in kept)  # type: ignore[index]
    indexed = list(target)  # (`x[key]`'s shape: with the new axes of None)
    for axis in part.new:
        indexed.insert(axis, 1)
    if 0 in old.shape or 0 in target or source.ndim > len(indexed):
        return None
    if not same_shape(source.shape, tuple(indexed)):
        source = record.broadcast_to(source, tuple(indexed))
        if source is None:
            return None  # (numpy's error: the value does not broadcast to the part)
    elif source.op == "value" or source.owner is not None:
        source = record.convert(source, old.dtype)  # a value of its own, not the operand's
    if part.new:
        source = record.squeeze(source, part.new)
    if dropped:
        source = record.insert_unit_dims(source, dropped)
    if part.flipped:  # (the part's elements in the other order, at positive strides)
        source = record.reverse(source, part.flipped)
        specs = [forward(specs[a], old.shape[a]) if a in part.flipped else specs[a]
                 for a in range(old.ndim)]  # fmt: skip
    if all(s is None for s in specs):
        return source
    return record.insert_slice(old, source, specs)


def forward(spec: Spec, size: int) -> Spec:
    """The positions of a slice of an axis reversed (`index_parts`' spec), as a slice of
    the axis itself, the same elements in the other order."""
    if spec is None:
        return None
    start, length, step = spec
    return (size - 1 - start - (length - 1) * step, length, step)


def value_node(value: Any, dtype: np.dtype[Any]) -> Node | None:
    """`value` as a node of `dtype` where numpy's assignment gives what a recorded cast
    gives: an array cast within its kind or to a wider one (numpy's `same_kind`), a
    Python bool, an int into integers (in range) or floats, a float into floats;
    None otherwise (a float into integers: numpy's cast of NaN is the platform's)."""
    kind = type(value)
    number = kind is bool or (kind is int and dtype.kind in "iuf")
    if number or (kind is float and dtype.kind == "f"):
        return numpy_api.as_node(value, dtype)  # (None for an int out of range: numpy's error)
    if kind is Node:
        source = value
    elif isinstance(value, np.ndarray | np.generic):
        source = Node.of(np.array(value))  # (a copy: the caller may write to it later)
    else:
        return None
    if not is_supported(source.dtype) or not np.can_cast(source.dtype, dtype, "same_kind"):
        return None
    return source if source.dtype == dtype else record.convert(source, dtype)


def selected(
    old: Node, mask: Any, value: Any, casting: Literal["same_kind", "safe"] = "same_kind"
) -> Node | None:
    """`old` with `value` where `mask` is True, both broadcast to `old`'s shape, which
    stays: `np.copyto(x, y, where=m)`, `np.putmask(x, m, v)` and `x[m] = v` for a mask of
    `x`'s shape (a `select`). `casting`: numpy's rule for an array value (numpy casts a
    number by value). None for anything else: a mask that is no bools, a value numpy
    would cast across kinds (a float into integers) or reject."""
    if type(mask) is not Node:
        if not isinstance(mask, np.ndarray | np.bool_ | bool):
            return None
        mask = Node.of(np.array(mask))  # (a copy: the caller may write to it later)
    source = value_node(value, old.dtype)
    array = value.dtype if isinstance(value, Node | np.ndarray | np.generic) else None
    if mask.dtype != np.bool_ or source is None or 0 in old.shape:
        return None
    if array is not None and not np.can_cast(array, old.dtype, casting):
        return None
    if broadcast_shape(old.shape, mask.shape, source.shape) != old.shape:
        return None  # (numpy's error, or its repeat of a shorter value for `putmask`)
    return record.elementwise("select", [mask, source, old], old.dtype)
