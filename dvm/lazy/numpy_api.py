"""numpy's functions as recorded ops, with numpy's dtype rules.

Each function here takes operands already unwrapped (a `Node`, an ndarray or a Python
or numpy scalar) and returns the node of the result, or None where it does not
record the call (an op or dtype the dialect lacks, or a call numpy would reject):
then the caller runs numpy itself, which computes the result or raises numpy's own
error. Dtypes are numpy's: `ufunc.resolve_dtypes` says which loop numpy would run
(NEP 50: a Python scalar takes the array's type), and the operands are converted to
it first, so the program computes what numpy computes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from typing import Any, NamedTuple

import numpy as np

from dvm.dialects.elementwise import ELEMENTWISE as SPECS
from dvm.lazy import record
from dvm.lazy.floor_division import float_floor_divide, integer_floor_divide
from dvm.lazy.graph import Node, broadcast_pair, is_supported, same_shape
from dvm.numerics import is_float_dtype, working_dtype

Operand = Any
"""A `Node`, an ndarray, or a Python or numpy scalar."""

KINDS = {spec.name: spec.operand_kind for spec in SPECS}
"""The element kinds each elementwise op accepts (`float`, `numeric`, ...)."""

UFUNCS: dict[np.ufunc, str] = {
    np.negative: "neg", np.absolute: "abs", np.exp: "exp", np.log: "log",
    np.sqrt: "sqrt", np.tanh: "tanh", np.floor: "floor", np.ceil: "ceil",
    np.rint: "round", np.trunc: "trunc", np.sin: "sin", np.cos: "cos", np.tan: "tan",
    np.arcsin: "asin", np.arccos: "acos", np.arctan: "atan", np.sinh: "sinh",
    np.cosh: "cosh", np.arcsinh: "asinh", np.arccosh: "acosh", np.arctanh: "atanh",
    np.expm1: "expm1", np.log1p: "log1p", np.sign: "sign", np.isnan: "isnan",
    np.isinf: "isinf", np.isfinite: "isfinite", np.reciprocal: "reciprocal",
    np.logical_not: "logical_not", np.invert: "bitwise_not",
    np.left_shift: "shl", np.right_shift: "shr",
    np.add: "add", np.subtract: "sub", np.multiply: "mul", np.true_divide: "div",
    np.maximum: "max", np.minimum: "min", np.remainder: "remainder", np.fmod: "fmod",
    np.logical_and: "logical_and", np.logical_or: "logical_or", np.logical_xor: "ne",
    np.bitwise_and: "bitwise_and", np.bitwise_or: "bitwise_or", np.bitwise_xor: "bitwise_xor",
    np.equal: "eq", np.not_equal: "ne", np.less: "lt", np.less_equal: "le",
    np.greater: "gt", np.greater_equal: "ge", np.arctan2: "atan2", np.copysign: "copysign",
}  # fmt: skip
"""numpy's ufuncs that are one elementwise op of the dialect."""

LOGICAL = {np.logical_and, np.logical_or, np.logical_xor, np.logical_not}
"""ufuncs numpy computes on any dtype by reading each operand as a bool."""

BOOL_FORMS = {
    np.bitwise_and: "logical_and", np.bitwise_or: "logical_or", np.bitwise_xor: "ne",
    np.invert: "logical_not", np.add: "logical_or", np.multiply: "logical_and",
    np.maximum: "logical_or", np.minimum: "logical_and",
}  # fmt: skip
"""Bitwise and arithmetic ufuncs on bools: the logical ops they are."""

BOOL = np.dtype(np.bool_)
INT64, UINT64, FLOAT64 = np.dtype(np.int64), np.dtype(np.uint64), np.dtype(np.float64)
FLOAT32 = np.dtype(np.float32)


def missing(values: Sequence[Any]) -> bool:
    """Whether any of `values` is None (`None in dtypes` would be true for float64:
    numpy reads None as the default dtype)."""
    return any(v is None for v in values)


def accepts(kind: str, dtype: np.dtype[Any]) -> bool:
    if kind == "any":
        return True
    if kind == "bool":
        return dtype == BOOL
    if kind == "float":
        return is_float_dtype(dtype)
    if kind == "integer":
        return dtype.kind in "iu"
    return dtype != BOOL  # numeric


def operand_dtype(x: Operand) -> Any:
    """What `resolve_dtypes` takes for an operand: a dtype, or a Python scalar's type
    (weak: it takes the other operand's dtype); None for anything else."""
    kind = type(x)
    if kind is Node or isinstance(x, np.ndarray | np.generic):
        return x.dtype if is_supported(x.dtype) else None
    if kind is bool:  # (numpy's lowest kind: as a bool array, it takes the other's type)
        return BOOL
    return kind if kind in (int, float) else None


@cache
def resolved(ufunc: np.ufunc, dtypes: tuple[Any, ...]) -> tuple[np.dtype[Any], ...] | None:
    try:
        return ufunc.resolve_dtypes((*dtypes, *([None] * ufunc.nout)))
    except (TypeError, ValueError):  # no loop: numpy raises its own error
        return None


def as_node(x: Operand, dtype: np.dtype[Any]) -> Node | None:
    """`x` as a node of `dtype`: a node converted if need be, or a known value."""
    kind = type(x)
    if kind is Node:
        return x if x.dtype == dtype else record.convert(x, dtype)
    if kind is float or kind is int or kind is bool:
        key = (kind, x if x or kind is not float else repr(x), dtype)  # -0.0 is no 0.0
        array = SCALARS.get(key)
        if array is None:
            array = as_array(x, dtype)
            if array is None:
                return None
            if len(SCALARS) < 4096:
                array.flags.writeable = False
                SCALARS[key] = array
        # a node of its own per use (a segment's key counts its arguments, not their values)
        node = Node("value", (), (), (), (), dtype, (), array)
        node.constant = record.constant_numbers()
        return node
    array = as_array(x, dtype)
    if array is None:
        return None
    node = Node.of(array)
    if isinstance(x, np.generic):  # (immutable, as a Python number)
        node.constant = record.constant_numbers()
    return node


def as_array(x: Operand, dtype: np.dtype[Any]) -> np.ndarray[Any, Any] | None:
    """`x` as an array of `dtype`; None for a Python int out of its range, or out of
    int64's for a bool (numpy raises an error for it: a logical op's loop reads the
    int as a C long)."""
    if type(x) is int and (dtype.kind in "iu" or dtype == BOOL):
        info = np.iinfo(dtype if dtype != BOOL else INT64)
        if not info.min <= x <= info.max:
            return None
    array = np.asarray(x)
    return array if array.dtype == dtype else array.astype(dtype)


SCALARS: dict[tuple[Any, ...], np.ndarray[Any, Any]] = {}
"""Python scalars as read-only 0-d arrays of a dtype, made once each."""


def ufunc(function: np.ufunc, inputs: Sequence[Operand]) -> Node | None:
    """A ufunc call without keywords, recorded (see the module docstring)."""
    if len(inputs) == 2:
        return binary_ufunc(function, inputs[0], inputs[1])
    special = SPECIAL.get(function)
    if special is not None:
        return special(*inputs)
    key = (function, *[x.dtype if type(x) is Node else operand_key(x) for x in inputs])
    plan = PLANS.get(key, MISSING)
    if plan is MISSING:
        plan = PLANS[key] = ufunc_plan(function, tuple([operand_dtype(x) for x in inputs]))
    if plan is None:
        return None
    name, in_dtypes, out_dtype = plan
    if len(inputs) == 1:  # (the common case: without the general loop)
        a = inputs[0]
        if type(a) is not Node:
            return None
        x = a if a.dtype == in_dtypes[0] else record.convert(a, in_dtypes[0])
        return record.unary(name, x, out_dtype)
    nodes, recorded = [], False
    for x, dtype in zip(inputs, in_dtypes, strict=True):
        node = as_node(x, dtype)
        if node is None:
            return None
        recorded = recorded or type(x) is Node
        nodes.append(node)
    return record.elementwise(name, nodes, out_dtype) if recorded else None


def binary_ufunc(function: np.ufunc, a: Operand, b: Operand) -> Node | None:
    """`ufunc` of two operands, the case of most ops and of every operator (kept
    short: it runs once per op recorded)."""
    special = SPECIAL.get(function)
    if special is not None:
        return special(a, b)
    a_node, b_node = type(a) is Node, type(b) is Node
    key = (
        function,
        a.dtype if a_node else operand_key(a),
        b.dtype if b_node else operand_key(b),
    )
    plan = PLANS.get(key, MISSING)
    if plan is MISSING:
        plan = PLANS[key] = ufunc_plan(function, (operand_dtype(a), operand_dtype(b)))
    if plan is None or not (a_node or b_node):
        return None
    name, (a_dtype, b_dtype), out_dtype = plan
    x = a if a_node and a.dtype == a_dtype else as_node(a, a_dtype)
    y = b if b_node and b.dtype == b_dtype else as_node(b, b_dtype)
    return None if x is None or y is None else record.binary(name, x, y, out_dtype)


def operand_key(x: Operand) -> Any:
    kind = type(x)
    if kind is Node:
        return x.dtype
    return kind if kind in (bool, int, float) else (kind, getattr(x, "dtype", None))


PLANS: dict[tuple[Any, ...], Any] = {}
"""`ufunc_plan` by the ufunc and its operands' dtypes (nodes) or types (Python
scalars): a lookup per recorded op, without checking each operand again."""
MISSING = object()


@cache
def ufunc_plan(
    function: np.ufunc, dtypes: tuple[Any, ...]
) -> tuple[str, tuple[np.dtype[Any], ...], np.dtype[Any]] | None:
    """The op a ufunc is on operands of these dtypes, the dtypes its operands are
    converted to, and its result's dtype (numpy's loop); None: not recorded."""
    name = UFUNCS.get(function)
    loop = None if name is None or missing(dtypes) else resolved(function, dtypes)
    if name is None or loop is None:
        return None
    in_dtypes, out_dtype = loop[: function.nin], loop[function.nin]
    if len(set(in_dtypes)) > 1:
        return None  # (numpy's exact comparisons of int64 with uint64: no op takes two types)
    if function in LOGICAL:
        in_dtypes = (BOOL,) * function.nin
    if in_dtypes[0] == BOOL and function in BOOL_FORMS:
        name = BOOL_FORMS[function]
    if not all(accepts(KINDS[name], d) for d in in_dtypes):
        return None
    return name, in_dtypes, out_dtype


SMALL_POWERS = range(2, 5)
"""Integer exponents taken as multiplications: numpy's `power` calls the C library's
`pow` for each element, many times slower than a multiply, and `x ** 3` is common
(GELU's tanh form). Each multiply rounds, so a float result may differ from numpy's
in its last bit or two, as Inductor's does."""


def power(base: Operand, exponent: Operand) -> Node | None:
    """`base ** exponent`: floats as `pow`; integers only to a Python int >= 0 (numpy
    raises for a negative integer power, a check per element the program skips)."""
    dtypes = (operand_dtype(base), operand_dtype(exponent))
    loop = None if missing(dtypes) else resolved(np.power, dtypes)
    if loop is None or not (isinstance(base, Node) or isinstance(exponent, Node)):
        return None
    if isinstance(base, Node) and type(exponent) in (int, float) and exponent in SMALL_POWERS:
        return repeated_product(base, int(exponent), loop[0])  # type: ignore[arg-type]
    if not is_float_dtype(loop[0]) and not (type(exponent) is int and exponent >= 0):
        return None  # (`2 ** x` of integers too: numpy checks each exponent's sign)
    nodes = [as_node(base, loop[0]), as_node(exponent, loop[1])]
    if missing(nodes) or not accepts(KINDS["pow"], loop[0]):
        return None
    return record.elementwise("pow", nodes, loop[2])  # type: ignore[arg-type]


def repeated_product(base: Node, n: int, dtype: np.dtype[Any]) -> Node | None:
    """`base ** n` (n >= 1) in `dtype` by squaring: at most 2·log2(n) multiplies."""
    square = as_node(base, dtype)
    product = None
    while square is not None:
        if n & 1:
            product = square if product is None else ufunc(np.multiply, [product, square])
        n >>= 1
        if not n:
            return product
        square = ufunc(np.multiply, [square, square])
    return None


def square(x: Operand) -> Node | None:
    """`np.square`: `x * x` in its loop's dtype (a bool squares to int8)."""
    loop = resolved(np.square, (operand_dtype(x),))
    if loop is None or not isinstance(x, Node):
        return None
    return repeated_product(x, 2, loop[0])


def matmul(a: Operand, b: Operand) -> Node | None:
    """numpy's matmul: 1-d operands gain a unit dim, which the result then loses."""
    dtypes = (operand_dtype(a), operand_dtype(b))
    loop = None if missing(dtypes) else resolved(np.matmul, dtypes)
    if loop is None or loop[0] == BOOL or not isinstance(a, Node | np.ndarray):
        return None
    x, y = as_node(a, loop[0]), as_node(b, loop[1])
    if x is None or y is None or x.ndim == 0 or y.ndim == 0:
        return None
    if x.ndim == 1:
        x = record.reshape(x, (1, x.shape[0]))
    if y.ndim == 1:
        y = record.reshape(y, (y.shape[0], 1))
    assert x is not None and y is not None
    product = record.matmul(x, y)
    if product is None:
        return None
    drop = tuple(
        axis
        for axis, one_d in ((product.ndim - 2, a.ndim == 1), (product.ndim - 1, b.ndim == 1))
        if one_d
    )
    return record.squeeze(product, drop) if drop else product


# -- reductions ---------------------------------------------------------------------


def is_int(value: Any) -> bool:
    """Whether numpy takes `value` as an integer argument (an axis, a count): a Python
    or numpy integer, but not a bool (numpy rejects `axis=True`)."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def normalized_axes(axis: Any, ndim: int) -> tuple[int, ...] | None:
    """numpy's `axis` argument as sorted distinct axes, None where numpy would raise."""
    if axis is None:
        return tuple(range(ndim))
    if type(axis) is int:  # (the common case, checked once per op recorded)
        return (axis % ndim,) if -ndim <= axis < ndim else None
    axes = axis if isinstance(axis, tuple) else (axis,)
    if not all(is_int(a) and -ndim <= a < ndim for a in axes):
        return None
    normal = sorted(int(a) % ndim if ndim else 0 for a in axes)
    return tuple(normal) if len(set(normal)) == len(normal) else None


def reduction(kind: str, x: Operand, axis: Any = None, keepdims: bool = False) -> Node | None:
    """`np.sum`, `mean`, `max`, `min`, `prod` with numpy's result dtypes: sums and
    products of small integers in int64 (uint64 unsigned), means of integers in f64."""
    if type(x) is not Node or not is_supported(x.dtype):
        return None
    axes = normalized_axes(axis, len(x.shape))
    if axes is None or not isinstance(keepdims, bool):
        return None
    dtype = x.dtype
    if kind in ("sum", "prod") and dtype.kind in "biu" and dtype.itemsize < 8:
        dtype = UINT64 if dtype.kind == "u" else INT64
    elif kind == "mean" and not is_float_dtype(dtype):
        dtype = FLOAT64
    elif kind in ("max", "min"):
        if any(x.shape[a] == 0 for a in axes):
            return None  # numpy raises
        if dtype == BOOL and axes:
            kind = "any" if kind == "max" else "all"  # (numpy's logical reduction)
    source = x if dtype == x.dtype else record.convert(x, dtype)
    if not axes:
        return record.convert(source, dtype)
    return record.reduce(kind, source, axes, keepdims, dtype)


def variance(x: Operand, axis: Any = None, keepdims: bool = False, ddof: int = 0) -> Node | None:
    """numpy's `var`: the mean of squared deviations from the mean, over n - ddof."""
    mean = reduction("mean", x, axis, True)
    if mean is None or not isinstance(x, Node) or not isinstance(ddof, int):
        return None
    deviation = ufunc(np.subtract, [as_node(x, mean.dtype), mean])
    squares = ufunc(np.multiply, [deviation, deviation])
    total = reduction("sum", squares, axis, keepdims)
    axes = normalized_axes(axis, x.ndim)
    assert total is not None and axes is not None
    count = math.prod(x.shape[a] for a in axes) - ddof
    return ufunc(np.true_divide, [total, float(max(count, 0))])


# -- shapes -------------------------------------------------------------------------


def target_shape(shape: Any, size: int) -> tuple[int, ...] | None:
    """A reshape's target with its -1 resolved; None where numpy would raise."""
    dims = tuple(shape) if isinstance(shape, tuple | list) else (shape,)
    if not all(is_int(d) for d in dims) or sum(d == -1 for d in dims) > 1:
        return None
    known = math.prod(int(d) for d in dims if d != -1)
    if any(d < -1 for d in dims):
        return None
    if -1 in dims:
        if known == 0 or size % known:
            return None
        return tuple(size // known if d == -1 else int(d) for d in dims)
    return tuple(int(d) for d in dims) if known == size else None


def permutation(axes: Any, ndim: int) -> tuple[int, ...] | None:
    if axes is None or axes == ():
        return tuple(reversed(range(ndim)))
    perm = tuple(axes[0]) if len(axes) == 1 and isinstance(axes[0], tuple | list) else axes
    normal = normalized_axes(tuple(perm), ndim)
    if normal is None or len(perm) != ndim:
        return None
    return tuple(int(a) % ndim for a in perm)


def swapaxes(ndim: int, a: int, b: int) -> tuple[int, ...] | None:
    axes = normalized_axes((a,), ndim), normalized_axes((b,), ndim)
    if axes[0] is None or axes[1] is None:
        return None
    perm = list(range(ndim))
    perm[axes[0][0]], perm[axes[1][0]] = perm[axes[1][0]], perm[axes[0][0]]
    return tuple(perm)


WHOLE = slice(None)


def slice_part(entry: slice, size: int) -> tuple[int, int, int]:
    """The (start, length, step) of a slice of integer bounds along a dim of `size`. A
    step of 1 is worked out by arithmetic on `size`, as Python clamps the bounds, so
    that a size which tracks its origin (`dvm.torch.sizes`) keeps it; `slice.indices`
    would read it as a plain int."""
    if entry.step not in (None, 1):
        start, stop, step = entry.indices(size)
        return start, len(range(start, stop, step)), step
    start = 0 if entry.start is None else int(entry.start)
    stop = size if entry.stop is None else int(entry.stop)
    start = max(start + size, 0) if start < 0 else min(start, size)
    stop = max(stop + size, 0) if stop < 0 else min(stop, size)
    return start, (stop - start if stop > start else 0), 1


Spec = tuple[int, int, int] | None
"""A dim of an indexed part: (offset, size, stride), or None for the whole dim."""


class IndexParts(NamedTuple):
    """What a basic-indexing key picks of an array: per source dim its `Spec`, the
    source dims an integer drops, the result's new unit dims (None entries), and the
    source dims a negative step reverses first."""

    specs: list[Spec]
    dropped: tuple[int, ...]
    new: tuple[int, ...]
    flipped: tuple[int, ...]


def index_parts(shape: tuple[int, ...], key: Any) -> IndexParts | None:
    """numpy's basic indexing of an array of `shape` by `key`: ints, slices (a negative
    step reverses the axis first), `...` and None (a new axis); None for anything else
    (advanced indexing) and for an integer out of range (numpy's error)."""
    entries = list(key) if isinstance(key, tuple) else [key]
    if sum(e is Ellipsis for e in entries) > 1:
        return None
    used = sum(1 for e in entries if e is not None and e is not Ellipsis)
    if used > len(shape):
        return None
    at = next((i for i, e in enumerate(entries) if e is Ellipsis), len(entries))
    entries[at : at + 1] = [slice(None)] * (len(shape) - used)
    specs: list[Spec] = []
    drop, new, flipped = [], [], []
    axis = rank = 0  # the source's axis, the result's rank so far
    for entry in entries:
        if entry is None:
            new.append(rank)
            rank += 1
            continue
        size = shape[axis]
        if is_int(entry):
            index = int(entry)
            if not -size <= index < size:
                return None
            specs.append((index % size, 1, 1))
            drop.append(axis)
        elif isinstance(entry, slice) and entry == WHOLE:  # (no size read: `slice_part`)
            specs.append(None)
            rank += 1
        elif isinstance(entry, slice) and all(
            s is None or is_int(s) for s in (entry.start, entry.stop, entry.step)
        ):
            start, length, step = slice_part(entry, size)
            if step < 0:  # a slice of the axis reversed
                flipped.append(axis)
                start, step = (size - 1 - start if length else 0), -step
            specs.append(None if (start, length, step) == (0, size, 1) else (start, length, step))
            rank += 1
        else:
            return None
        axis += 1
    return IndexParts(specs, tuple(drop), tuple(new), tuple(flipped))


def basic_index(x: Node, key: Any) -> Node | None:
    """`x[key]` for numpy's basic indexing (`index_parts`); None for anything else
    (advanced indexing runs in numpy)."""
    parts = index_parts(x.shape, key)
    if parts is None:
        return None
    result = record.reverse(x, parts.flipped) if parts.flipped else x
    if any(s is not None for s in parts.specs):
        result = record.extract_slice(result, parts.specs)
    if parts.dropped:
        result = record.squeeze(result, parts.dropped)
    if parts.new:
        result = record.insert_unit_dims(result, parts.new)
    return result if result is not x else record.convert(x, x.dtype)


# -- floor division -------------------------------------------------------------------


def floor_divide(a: Operand, b: Operand) -> Node | None:
    """numpy's `floor_divide` (`//`), by the algorithms of `dvm/lazy/floor_division.py`."""
    loop = resolved(np.floor_divide, (operand_dtype(a), operand_dtype(b)))
    if loop is None or not (type(a) is Node or type(b) is Node):
        return None
    dtype = loop[2]
    x, y = as_node(a, loop[0]), as_node(b, loop[1])
    if x is None or y is None or dtype.kind not in "iuf" or not broadcasts(x, y):
        return None  # (numpy raises where they do not broadcast)
    if dtype.kind in "iu":
        return integer_floor_divide(x, y, dtype)
    if dtype.itemsize == 2:  # numpy's float16 loop (ml_dtypes' bfloat16 one) works in float32
        work = working_dtype(dtype)
        wide = float_floor_divide(record.convert(x, work), record.convert(y, work), work)
        return record.convert(wide, dtype)
    return float_floor_divide(x, y, dtype)


def advanced_index(x: Node, key: Any) -> Node | None:
    """`x[key]` for integer arrays (or lists) known now, side by side among full
    slices and `...` (`x[ids]`, `x[:, ids]`, `p[np.arange(n), labels]`): a `take`
    along their axes merged into one, each element's flat position computed now, as
    numpy reads them (broadcast together, negative indices counting from the end);
    anything else (masks, arrays apart, numpy's errors) runs in numpy."""
    entries = list(key) if isinstance(key, tuple) else [key]
    if sum(e is Ellipsis for e in entries) > 1 or len(entries) > x.ndim + 1:
        return None
    at = next((k for k, e in enumerate(entries) if e is Ellipsis), None)
    if at is not None:
        entries[at : at + 1] = [slice(None)] * (x.ndim - len(entries) + 1)
    arrays = [k for k, e in enumerate(entries) if isinstance(e, list | np.ndarray)]
    full = all(
        isinstance(e, slice) and e == slice(None) for k, e in enumerate(entries) if k not in arrays
    )
    if not arrays or arrays != list(range(arrays[0], arrays[0] + len(arrays))):
        return None  # (arrays apart put numpy's result dims first)
    if not full or len(entries) > x.ndim:
        return None
    ids = [np.asarray(entries[k]) for k in arrays]
    if any(i.dtype.kind not in "iu" or (i.size == 0 and isinstance(entries[k], list))
           for i, k in zip(ids, arrays, strict=True)):  # fmt: skip
        return None
    first, sizes = arrays[0], [x.shape[k] for k in arrays]
    inside = [
        i.size == 0 or (i.min() >= -n and i.max() < n) for i, n in zip(ids, sizes, strict=True)
    ]
    if not all(inside):
        return None  # (numpy raises its IndexError)
    if len(ids) == 1:
        n = sizes[0]
        return take(x, Node.of(np.where(ids[0] < 0, ids[0] + n, ids[0]).astype(np.int64)), first)
    try:
        broadcast = np.broadcast_arrays(*[i.astype(np.int64) for i in ids])
    except ValueError:  # (numpy's IndexError of shapes that do not broadcast)
        return None
    flat = (
        np.ravel_multi_index(broadcast, sizes, mode="wrap") if broadcast[0].size else broadcast[0]
    )
    shape = (*x.shape[:first], math.prod(sizes), *x.shape[first + len(arrays) :])
    merged = record.reshape(x, shape)
    return None if merged is None else take(merged, Node.of(np.asarray(flat, np.int64)), first)


SPECIAL: dict[np.ufunc, Any] = {
    np.matmul: matmul,
    np.power: power,
    np.square: square,
    np.positive: lambda x: record.convert(x, x.dtype) if numeric_node(x) else None,
    np.fabs: lambda x: ufunc(np.absolute, [x]) if numeric_node(x, "f") else None,
    np.floor_divide: floor_divide,
    np.log2: lambda x: scaled(np.log2, np.log, x, after=1 / math.log(2)),
    np.log10: lambda x: scaled(np.log10, np.log, x, after=1 / math.log(10)),
    np.exp2: lambda x: scaled(np.exp2, np.exp, x, before=math.log(2)),
    np.deg2rad: lambda x: scaled(np.deg2rad, None, x, after=math.pi / 180),
    np.radians: lambda x: scaled(np.radians, None, x, after=math.pi / 180),
    np.rad2deg: lambda x: scaled(np.rad2deg, None, x, after=180 / math.pi),
    np.degrees: lambda x: scaled(np.degrees, None, x, after=180 / math.pi),
    np.logaddexp: lambda a, b: logaddexp(a, b),
    np.fmax: lambda a, b: nan_ignoring(np.fmax, a, b),
    np.fmin: lambda a, b: nan_ignoring(np.fmin, a, b),
}
"""ufuncs recorded as more than one op, or with rules of their own."""


def working(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The float dtype a composite computes a `dtype` result in: halves in f32, as
    numpy's own loops do."""
    return FLOAT32 if dtype.itemsize < 4 else dtype


def scaled(numpy_ufunc: np.ufunc, function: np.ufunc | None, x: Operand, before: float = 1.0,
           after: float = 1.0) -> Node | None:  # fmt: skip
    """`function(x * before) * after` for numpy's `numpy_ufunc`, in the dtype numpy's
    loop gives (int8 in f16, int32 in f64; halves computed in f32): `log2` is
    `log(x) / ln 2`, `exp2` is `exp(x ln 2)`, within an ulp or two of numpy's own."""
    loop = resolved(numpy_ufunc, (x.dtype,)) if type(x) is Node and x.dtype != BOOL else None
    if loop is None or not is_float_dtype(loop[1]) or not is_supported(loop[1]):
        return None
    work = working(loop[1])
    y: Node | None = x if x.dtype == work else record.convert(x, work)
    if before != 1.0:
        y = ufunc(np.multiply, [y, before])
    if function is not None and y is not None:
        y = ufunc(function, [y])
    y = None if y is None else ufunc(np.multiply, [y, after])
    return y if y is None or y.dtype == loop[1] else record.convert(y, loop[1])


def logaddexp(a: Operand, b: Operand) -> Node | None:
    """numpy's `log(exp(a) + exp(b))` without overflow: the larger plus
    `log1p(exp(-|a - b|))`, and `a + ln 2` where they are equal (infinities too)."""
    if not any(type(v) is Node for v in (a, b)) or missing([operand_dtype(a), operand_dtype(b)]):
        return None
    loop = resolved(np.logaddexp, (operand_dtype(a), operand_dtype(b)))
    if loop is None or not is_float_dtype(loop[2]):
        return None
    work = working(loop[2])
    x, y = as_node(a, work), as_node(b, work)
    if x is None or y is None or not broadcasts(x, y):
        return None
    gap = ufunc(np.negative, [ufunc(np.absolute, [ufunc(np.subtract, [x, y])])])
    spread = ufunc(np.log1p, [ufunc(np.exp, [gap])])
    apart = ufunc(np.add, [ufunc(np.maximum, [x, y]), spread])
    same = ufunc(np.add, [x, math.log(2)])
    equal = ufunc(np.equal, [x, y])
    if missing([apart, same, equal]):
        return None
    result = record.elementwise("select", [equal, same, apart], work)  # type: ignore[list-item]
    return result if result is None or work == loop[2] else record.convert(result, loop[2])


def nan_ignoring(function: np.ufunc, a: Operand, b: Operand) -> Node | None:
    """numpy's `fmax`/`fmin`: `maximum`/`minimum`, but where one operand is NaN, the
    other (NaN where both are)."""
    if not any(type(v) is Node for v in (a, b)) or missing([operand_dtype(a), operand_dtype(b)]):
        return None
    loop = resolved(function, (operand_dtype(a), operand_dtype(b)))
    extreme = ufunc(np.maximum if function is np.fmax else np.minimum, [a, b])
    if loop is None or extreme is None or not is_float_dtype(loop[2]):
        return extreme
    x, y = as_node(a, loop[2]), as_node(b, loop[2])
    if x is None or y is None:
        return None
    b_nan, a_nan = ufunc(np.isnan, [y]), ufunc(np.isnan, [x])
    if b_nan is None or a_nan is None:
        return None
    result = record.elementwise("select", [b_nan, x, extreme], loop[2])
    return None if result is None else record.elementwise("select", [a_nan, y, result], loop[2])


def broadcasts(a: Node, b: Node) -> bool:
    """Whether numpy broadcasts `a` with `b` (checked before a composite records)."""
    if same_shape(a.shape, b.shape) or not a.shape or not b.shape:
        return True
    return broadcast_pair(a, b) is not None


def numeric_node(x: Operand, kinds: str = "iuf") -> bool:
    """Whether `x` is a node whose dtype is of `kinds` (numpy's `positive` rejects
    bools; `fabs` on integers computes in f64)."""
    return type(x) is Node and x.dtype.kind in kinds


REDUCE_KINDS = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min"}
"""The ufuncs whose `reduce` is a reduction of the dialect (`np.sum`'s dtypes)."""


def ufunc_reduce(function: np.ufunc, x: Operand, axis: Any = 0, dtype: Any = None,
                 out: Any = None, keepdims: Any = False, **rest: Any) -> Node | None:  # fmt: skip
    """`ufunc.reduce` of add, multiply, maximum, minimum, logical_and and logical_or
    (numpy's default axis is 0)."""
    if dtype is not None or out is not None or rest:
        return None
    if function is np.logical_and or function is np.logical_or:
        kind = "all" if function is np.logical_and else "any"
        return logical_reduction(kind, x, axis, keepdims)
    kind = REDUCE_KINDS.get(function)
    return None if kind is None else reduction(kind, x, axis, keepdims)


def dialect_op(name: str, inputs: Sequence[Node]) -> Node | None:
    """An elementwise op of the dialect that numpy has no ufunc for (`erf`, `sigmoid`,
    `rsqrt`), on nodes of one dtype it accepts (the result has that dtype)."""
    dtype = inputs[0].dtype
    if name not in KINDS or any(x.dtype != dtype for x in inputs):
        return None
    if not accepts(KINDS[name], dtype):
        return None
    return record.elementwise(name, inputs, dtype)


# -- index reductions, scans, take --------------------------------------------------


def flattened(x: Node, axis: Any) -> tuple[Node, int] | None:
    """`x` and the axis to work along: a reshape to one dim for `axis=None`."""
    if axis is None:
        flat = record.reshape(x, (int(np.prod(x.shape, dtype=np.int64)),))
        return None if flat is None else (flat, 0)
    axes = normalized_axes(axis, x.ndim) if is_int(axis) else None
    return None if axes is None else (x, axes[0])


def arg_reduction(kind: str, x: Operand, axis: Any = None, keepdims: bool = False) -> Node | None:
    """numpy's `argmax`/`argmin` (int64 indices; numpy raises for an empty axis); of
    bools, as of their 0s and 1s."""
    if not isinstance(x, Node) or not isinstance(keepdims, bool):
        return None
    found = flattened(x, axis)
    if found is None or found[0].shape[found[1]] == 0 or (axis is None and keepdims):
        return None
    source = found[0] if x.dtype != BOOL else record.convert(found[0], np.dtype(np.uint8))
    return record.arg_reduce(kind, source, found[1], keepdims)


def cumulative(kind: str, x: Operand, axis: Any = None) -> Node | None:
    """numpy's `cumsum`/`cumprod`, in its dtypes (small integers in int64)."""
    if not isinstance(x, Node) or not is_supported(x.dtype):
        return None
    found = flattened(x, axis)
    if found is None:
        return None
    source, along = found
    if source.dtype.kind in "biu" and source.dtype.itemsize < 8:
        source = record.convert(source, UINT64 if source.dtype.kind == "u" else INT64)
    return record.scan(kind, source, along)


def logical_reduction(
    kind: str, x: Operand, axis: Any = None, keepdims: bool = False
) -> Node | None:
    """numpy's `any`/`all`: each element read as a bool."""
    if not isinstance(x, Node) or not is_supported(x.dtype) or not isinstance(keepdims, bool):
        return None
    axes = normalized_axes(axis, x.ndim)
    if axes is None:
        return None
    if not axes:  # (a new value, as numpy's: never the array itself)
        return record.convert(x, BOOL)
    truth = x if x.dtype == BOOL else record.convert(x, BOOL)
    return record.reduce(kind, truth, axes, keepdims, BOOL)


def take(a: Operand, indices: Operand, axis: Any = None) -> Node | None:
    """numpy's `take` with an index array known now (a numpy array or list too), every
    index in range (numpy's negative indices and its errors run in numpy)."""
    if isinstance(indices, np.ndarray | list):
        indices = Node.of(np.asarray(indices))
    if not isinstance(a, Node) or not isinstance(indices, Node) or indices.value is None:
        return None
    ids = indices.value
    found = flattened(a, axis)
    if found is None or ids.dtype.kind not in "iu" or ids.dtype.itemsize < 4:
        return None
    source, along = found
    if ids.size and not (ids.min() >= 0 and ids.max() < source.shape[along]):
        return None
    return record.take(source, indices, along)
