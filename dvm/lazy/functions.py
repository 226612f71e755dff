"""numpy's array functions (`np.sum`, `np.where`, `np.concatenate`...) that record.

Each handler takes numpy's arguments, lazy arrays already as their nodes, and returns
a `Node`, a `View` (a node numpy would make a view of another), None where it does
not record the call (`LazyArray.__array_function__` then runs numpy), or any other
value as the call's result (`np.shape` needs no value).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy._core import umath

from dvm.lazy import numpy_api, record
from dvm.lazy.graph import Node, is_supported, same_shape
from dvm.lazy.numpy_api import Operand, is_int, missing
from dvm.numerics import is_float_dtype


class View(NamedTuple):
    node: Node
    base: Node
    index: Any
    """How numpy makes it from the base: a key for `[]`, or a function."""


NOT_GIVEN: Any = object()
"""An argument the call left out, where numpy's function tells it from None."""


def reduction(kind: str) -> Callable[..., Node | None]:
    """The handler of `np.sum` (`mean`, `prod`: the same arguments) and of `np.max`
    (`min`: no `dtype`)."""

    # (numpy's positional order: a sixth argument is `initial`, which runs in numpy)
    def handler(a: Operand, axis: Any = None, dtype: Any = None, out: Any = None,
                keepdims: Any = False, initial: Any = NOT_GIVEN, where: Any = True,
                **rest: Any) -> Node | None:  # fmt: skip
        if out is not None or initial is not NOT_GIVEN or rest:
            return None
        if where is not True:
            return masked(kind, a, axis, dtype, keepdims, where)
        x = accumulated(a, dtype, "iuf" if kind in ("sum", "prod") else "f")
        if kind == "mean" and dtype is not None and isinstance(x, Node) and x.dtype == np.float16:
            return mean_of_halves(x, axis, keepdims)
        return typed(numpy_api.reduction(kind, x, axis, keepdims), dtype)

    def extremum(a: Operand, axis: Any = None, out: Any = None, keepdims: Any = False,
                 initial: Any = NOT_GIVEN, where: Any = True) -> Node | None:  # fmt: skip
        return handler(a, axis, None, out, keepdims, initial, where)

    return extremum if kind in ("max", "min") else handler


def mean_of_halves(x: Node, axis: Any, keepdims: Any) -> Node | None:
    """`np.mean(x, dtype=np.float16)`: numpy sums in float16 there, so the sum is
    rounded to a half (inf past 65504) before the divide; a mean of halves without
    `dtype=` sums in float32 and rounds only the quotient."""
    total = numpy_api.reduction("sum", x, axis, keepdims)
    axes = numpy_api.normalized_axes(axis, len(x.shape))
    if total is None or axes is None:
        return None
    count = np.intp(math.prod(x.shape[a] for a in axes))
    quotient = numpy_api.ufunc(np.true_divide, [total, count])  # (in float64, as numpy's)
    return None if quotient is None else numpy_api.as_node(quotient, x.dtype)


def masked(kind: str, a: Operand, axis: Any, dtype: Any, keepdims: Any, where: Any) -> Node | None:
    """`np.sum(a, where=mask)` (`prod`, `mean`): the reduction of `where(mask, a,
    identity)`; a mean, that sum over the count of the mask."""
    if kind not in ("sum", "prod", "mean") or type(a) is not Node or not is_supported(a.dtype):
        return None
    if kind == "mean" and dtype is not None and not is_float_dtype(np.dtype(dtype)):
        return None  # (numpy's mean in an integer dtype truncates the quotient: in numpy)
    mask = where if type(where) is Node else Node.of(np.asarray(where))
    if isinstance(where, list) and mask.value is not None and mask.value.size == 0:
        mask = Node.of(mask.value.astype(np.bool_))  # (`[]`: no dtype of its own)
    if mask.dtype != np.bool_ or a.dtype == np.bool_ or not numpy_api.broadcasts(a, mask):
        return None
    if np.broadcast_shapes(a.shape, mask.shape) != a.shape:
        return None  # (numpy raises: the mask does not broadcast to `a`)
    identity = numpy_api.as_node(1 if kind == "prod" else 0, a.dtype)
    kept = None if identity is None else record.elementwise("select", [mask, a, identity], a.dtype)
    if kept is None or kind != "mean":
        return None if kept is None else reduction(kind)(kept, axis, dtype, None, keepdims)
    total = reduction("sum")(kept, axis, dtype, None, keepdims)
    full = record.broadcast_to(mask, a.shape) if mask.shape != a.shape else mask
    count = None if full is None else numpy_api.reduction("sum", full, axis, keepdims)
    if total is None or count is None:
        return None
    quotient = numpy_api.ufunc(np.true_divide, [total, count])
    # numpy keeps a float mean in its dtype (bfloat16 too, whose kind is not "f")
    wanted = total.dtype if is_float_dtype(total.dtype) else np.dtype(np.float64)
    return None if quotient is None else numpy_api.as_node(quotient, wanted)


def accumulated(a: Operand, dtype: Any, kinds: str) -> Any:
    """`a`, or for a `dtype=` (of `kinds`) that numpy accumulates in, `a` converted to
    it; None where numpy's call is not recorded."""
    if dtype is None:
        return a
    try:
        wanted = np.dtype(dtype)
    except TypeError:
        return None
    if not isinstance(a, Node) or wanted.kind not in kinds or not is_supported(wanted):
        return None
    return a if a.dtype == wanted else record.convert(a, wanted)


def typed(result: Node | None, dtype: Any) -> Node | None:
    """A result in the `dtype=` asked for (a sum of int8s is int8, wrapping as numpy's)."""
    if result is None or dtype is None or result.dtype == np.dtype(dtype):
        return result
    return record.convert(result, np.dtype(dtype))


def var(a: Operand, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
        keepdims: Any = False, **rest: Any) -> Node | None:  # fmt: skip
    if out is not None or rest:
        return None
    return numpy_api.variance(accumulated(a, dtype, "f"), axis, keepdims, ddof)


def std(*args: Any, **kwargs: Any) -> Node | None:
    variance = var(*args, **kwargs)
    return None if variance is None else numpy_api.ufunc(np.sqrt, [variance])


def weak(x: Operand) -> Any:
    """What `np.result_type` takes for an operand (a Python scalar stays weak)."""
    return x.dtype if isinstance(x, Node) else x


def where(condition: Operand, x: Operand = None, y: Operand = None) -> Node | None:
    """The three-argument form: `select`, in the dtype numpy gives `x` and `y`."""
    if x is None or y is None or not any(isinstance(v, Node) for v in (condition, x, y)):
        return None
    dtypes = [numpy_api.operand_dtype(v) for v in (condition, x, y)]
    if missing(dtypes):
        return None
    dtype = np.result_type(weak(x), weak(y))
    nodes = [
        numpy_api.as_node(condition, np.dtype(np.bool_)),
        numpy_api.as_node(x, dtype),
        numpy_api.as_node(y, dtype),
    ]
    if missing(nodes) or not is_supported(dtype):
        return None
    return record.elementwise("select", nodes, dtype)  # type: ignore[arg-type]


CLIP_UFUNC: np.ufunc = umath.clip  # pyright: ignore[reportAttributeAccessIssue]
"""The ufunc `np.clip` calls between two bounds (numpy names it in no public module)."""


def clip(a: Operand, a_min: Operand = NOT_GIVEN, a_max: Operand = NOT_GIVEN,
         out: Any = None, **rest: Any) -> Node | None:  # fmt: skip
    """numpy's clip: `minimum(maximum(a, a_min), a_max)`, a bound None left out. A bound
    not given (numpy raises) or given as `min=`/`max=` goes to numpy."""
    if out is not None or rest or not isinstance(a, Node):
        return None
    if a_min is NOT_GIVEN or a_max is NOT_GIVEN:
        return None
    if a_min is not None and a_max is not None:
        # numpy clips between two bounds in its `clip` ufunc, whose loop may be wider than
        # maximum's and minimum's: bfloat16 has none and clips in float32
        dtypes = tuple(numpy_api.operand_dtype(x) for x in (a, a_min, a_max))
        loop = None if missing(dtypes) else numpy_api.resolved(CLIP_UFUNC, dtypes)
        if loop is None:
            return None
        a = a if a.dtype == loop[0] else record.convert(a, loop[0])
    result: Node | None = a
    if a_min is not None:
        result = numpy_api.ufunc(np.maximum, [result, a_min])
    if a_max is not None and result is not None:
        result = numpy_api.ufunc(np.minimum, [result, a_max])
    return result if result is not a else record.convert(a, a.dtype)


def transpose(a: Operand, axes: Any = None) -> View | None:
    if not isinstance(a, Node):
        return None
    perm = numpy_api.permutation(() if axes is None else (axes,), a.ndim)
    if perm is None:
        return None
    return View(record.transpose(a, perm), a, lambda v: v.transpose(perm))


def swapaxes(a: Operand, axis1: int, axis2: int) -> View | None:
    perm = numpy_api.swapaxes(a.ndim, axis1, axis2) if isinstance(a, Node) else None
    if perm is None:
        return None
    return View(record.transpose(a, perm), a, lambda v: v.transpose(perm))


def reshape(a: Operand, shape: Any = None, order: str = "C", **rest: Any) -> View | None:
    shape = rest.pop("newshape", shape)
    if not isinstance(a, Node) or order != "C" or rest.get("copy") is not None:
        return None
    target = numpy_api.target_shape(shape, int(np.prod(a.shape, dtype=np.int64)))
    node = None if target is None else record.reshape(a, target)
    if node is None:
        return None
    node = node if node is not a else record.convert(a, a.dtype)
    return View(node, a, lambda v: v.reshape(target))


def ravel(a: Operand, order: str = "C") -> View | None:
    return reshape(a, -1, order)


def expand_dims(a: Operand, axis: Any) -> View | None:
    if not isinstance(a, Node):
        return None
    rank = a.ndim + (len(axis) if isinstance(axis, tuple | list) else 1)
    positions = numpy_api.normalized_axes(tuple(axis) if isinstance(axis, list) else axis, rank)
    if positions is None:
        return None
    return View(record.insert_unit_dims(a, positions), a, lambda v: np.expand_dims(v, axis))


def squeeze(a: Operand, axis: Any = None) -> View | None:
    if not isinstance(a, Node):
        return None
    axes = (
        tuple(i for i, d in enumerate(a.shape) if d == 1)
        if axis is None
        else numpy_api.normalized_axes(axis, a.ndim)
    )
    if axes is None or any(a.shape[i] != 1 for i in axes):
        return None
    node = record.squeeze(a, axes) if axes else record.convert(a, a.dtype)
    return View(node, a, lambda v: np.squeeze(v, axis))


def broadcast_to(array: Operand, shape: Any, subok: bool = False) -> View | None:
    target = tuple(shape) if isinstance(shape, tuple | list) else (shape,)
    if not isinstance(array, Node) or not all(isinstance(d, int) for d in target):
        return None
    node = record.broadcast_to(array, target)
    return None if node is None else View(node, array, lambda v: np.broadcast_to(v, target))


def concatenate(arrays: Sequence[Operand], axis: Any = 0, out: Any = None, dtype: Any = None,
                casting: str = "same_kind") -> Node | None:  # fmt: skip
    """numpy's concatenate (in the dtype numpy gives the operands, under its default
    casting rule)."""
    if out is not None or dtype is not None or casting != "same_kind" or not is_int(axis):
        return None
    if not isinstance(arrays, list | tuple) or not arrays:
        return None
    if not all(isinstance(a, Node | np.ndarray) for a in arrays):
        return None
    first = arrays[0]
    axes = numpy_api.normalized_axes(axis, first.ndim) if first.ndim else None
    common = np.result_type(*[a.dtype for a in arrays])
    if axes is None or not is_supported(common):
        return None
    nodes = [numpy_api.as_node(a, common) for a in arrays]
    if missing(nodes):
        return None
    if len(nodes) == 1:
        return record.convert(nodes[0], common)  # type: ignore[arg-type]
    return record.concat(nodes, axes[0])  # type: ignore[arg-type]


def stack(arrays: Sequence[Operand], axis: int = 0, out: Any = None, **rest: Any) -> Node | None:
    if out is not None or rest or not isinstance(arrays, list | tuple) or not arrays:
        return None
    if not is_int(axis) or not all(isinstance(a, Node | np.ndarray) for a in arrays):
        return None
    rank = arrays[0].ndim + 1
    position = numpy_api.normalized_axes(axis, rank)
    if position is None or not all(same_shape(a.shape, arrays[0].shape) for a in arrays):
        return None
    nodes = [numpy_api.as_node(a, a.dtype) for a in arrays]
    grown = [record.insert_unit_dims(n, position) for n in nodes if n is not None]
    return concatenate(grown, position[0])


def round_(a: Operand, decimals: Any = 0, out: Any = None) -> Node | None:
    """numpy's rounding of floats to `decimals` places, as its own: a multiply by ten to
    the `decimals` (a divide for fewer than none), `rint` and the inverse, in the
    array's dtype. Integers to places of their own: a copy."""
    if type(decimals) is not int or out is not None or not isinstance(a, Node):
        return None
    if a.dtype.kind in "iu":  # (numpy's own arithmetic to fewer places)
        return record.convert(a, a.dtype) if decimals >= 0 else None
    if decimals == 0:  # (bools too: numpy's `rint` of a bool is a float16)
        return numpy_api.ufunc(np.rint, [a])
    if a.dtype.kind == "b":
        return None
    scale = 10.0 ** abs(decimals)
    up, down = (np.multiply, np.true_divide) if decimals > 0 else (np.true_divide, np.multiply)
    scaled = numpy_api.ufunc(up, [a, scale])
    rounded = None if scaled is None else numpy_api.ufunc(np.rint, [scaled])
    return None if rounded is None else numpy_api.ufunc(down, [rounded, scale])


def listed_axes(axis: Any, ndim: int) -> list[int] | None:
    """An axis or a sequence of distinct axes, in the order given; None where numpy
    would raise."""
    axes = [axis] if is_int(axis) else list(axis) if isinstance(axis, list | tuple) else None
    if axes is None or not all(is_int(a) and -ndim <= a < ndim for a in axes):
        return None
    normal = [int(a) % ndim for a in axes]
    return normal if len(set(normal)) == len(normal) else None


def moveaxis(a: Operand, source: Any, destination: Any) -> View | None:
    """numpy's permutation: the axes not moved in order, each moved one inserted at its
    destination (in the order of destinations)."""
    if not isinstance(a, Node):
        return None
    sources = listed_axes(source, a.ndim)
    destinations = listed_axes(destination, a.ndim)
    if sources is None or destinations is None or len(sources) != len(destinations):
        return None
    order = [n for n in range(a.ndim) if n not in sources]
    for where, axis in sorted(zip(destinations, sources, strict=True)):
        order.insert(where, axis)
    return transpose(a, tuple(order))


def dot(a: Operand, b: Operand, out: Any = None) -> Node | None:
    if out is not None or not all(isinstance(x, Node | np.ndarray) for x in (a, b)):
        return None
    if not (1 <= a.ndim <= 2 and 1 <= b.ndim <= 2):
        return None
    # (in the operands' type: bfloat16's `matmul` gives float32, its `dot` bfloat16)
    return typed(numpy_api.matmul(a, b), np.result_type(a.dtype, b.dtype))


def empty_like(a: Operand, dtype: Any = None, *args: Any, **kwargs: Any) -> Any:
    """`empty_like`: a known value, made without running anything (numpy's other
    arguments, `order`, `subok`, `shape`: numpy runs it)."""
    if not isinstance(a, Node) or args or kwargs:
        return None
    return Node.of(np.empty(a.shape, a.dtype if dtype is None else dtype))


def filled_like(a: Operand, fill_value: Any, dtype: Any = None, *args: Any, **kwargs: Any) -> Any:
    """`full_like` (and `zeros_like`, `ones_like`): the fill value broadcast to the
    array's shape, a pending result, so that writes into it record as writes into any
    result do (Adam's `m *= b1; m += (1 - b1) * g`). An array as the fill, a dtype the
    compiler does not take, a 0-d array: a known value, made now; a lazy fill or numpy's other
    arguments (`order`, `shape`...): numpy runs it."""
    if not isinstance(a, Node) or isinstance(fill_value, Node) or args or kwargs:
        return None  # (a lazy fill: numpy's, on its value)
    target = a.dtype if dtype is None else np.dtype(dtype)
    scalar = isinstance(fill_value, int | float | bool | np.generic)
    if not scalar or not is_supported(target) or not a.shape:
        return Node.of(np.full(a.shape, fill_value, target))
    return record.broadcast_to(Node.of(np.full((), fill_value, target)), a.shape)


def is_int_or_none(axis: Any) -> bool:
    return axis is None or is_int(axis)


FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.sum: reduction("sum"), np.mean: reduction("mean"), np.prod: reduction("prod"),
    np.max: reduction("max"), np.min: reduction("min"),
    np.amax: reduction("max"), np.amin: reduction("min"),
    np.var: var, np.std: std, np.where: where, np.clip: clip,
    np.transpose: transpose, np.swapaxes: swapaxes, np.reshape: reshape, np.ravel: ravel,
    np.expand_dims: expand_dims, np.squeeze: squeeze, np.broadcast_to: broadcast_to,
    np.concatenate: concatenate, np.stack: stack, np.round: round_, np.around: round_,
    np.dot: dot,
    np.argmax: lambda a, axis=None, out=None, keepdims=False: None if out is not None
    else numpy_api.arg_reduction("argmax", a, axis, keepdims),
    np.argmin: lambda a, axis=None, out=None, keepdims=False: None if out is not None
    else numpy_api.arg_reduction("argmin", a, axis, keepdims),
    np.cumsum: lambda a, axis=None, dtype=None, out=None: None if out is not None
    else typed(numpy_api.cumulative("cumsum", accumulated(a, dtype, "iuf"), axis), dtype),
    np.cumprod: lambda a, axis=None, dtype=None, out=None: None if out is not None
    else typed(numpy_api.cumulative("cumprod", accumulated(a, dtype, "iuf"), axis), dtype),
    np.any: lambda a, axis=None, out=None, keepdims=False, **rest: None if out is not None or rest
    else numpy_api.logical_reduction("any", a, axis, keepdims),
    np.all: lambda a, axis=None, out=None, keepdims=False, **rest: None if out is not None or rest
    else numpy_api.logical_reduction("all", a, axis, keepdims),
    np.take: lambda a, indices, axis=None, out=None, mode="raise": None
    if out is not None or mode != "raise" else numpy_api.take(a, indices, axis),
    np.shape: lambda a: a.shape, np.ndim: lambda a: a.ndim, np.moveaxis: moveaxis,
    np.size: lambda a, axis=None: None if not isinstance(a, Node) or not is_int_or_none(axis)
    else math.prod(a.shape) if axis is None else a.shape[axis] if -a.ndim <= axis < a.ndim
    else None,
    np.zeros_like: lambda a, *args, **kwargs: filled_like(a, 0, *args, **kwargs),
    np.ones_like: lambda a, *args, **kwargs: filled_like(a, 1, *args, **kwargs),
    np.full_like: filled_like,
    np.empty_like: empty_like,
}  # fmt: skip
"""numpy's functions that record, and their handlers."""
