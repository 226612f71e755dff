"""`LazyArray`: an array whose value is recorded, not computed, until a sync point.

numpy's protocols (`__array_ufunc__`, `__array_function__`, the operators) bring
numpy code here; what `numpy_api` records becomes a new lazy array. Anything it
does not record runs in numpy on the arrays' values (a flush first), and its array
results are lazy again: a fallback, counted by name in `dvm.lazy.stats()`.

Sync points flush: `np.asarray(x)`, `x.numpy()`, `float(x)`, `int(x)`, `bool(x)` (a
branch on a value: the taken path is what is recorded next), printing, iterating,
in-place writes and a fallback. Shapes are never lazy: `x.shape`, `len(x)` and
`x.ndim` are known as each op is recorded.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from dvm.lazy import arrange, composed, einsum, functions, numpy_api, record, writes
from dvm.lazy.functions import View
from dvm.lazy.graph import Memory, Node, is_supported, same_shape
from dvm.lazy.record import MAX_SEGMENT, TRACE
from dvm.lazy.segment import flush, settle
from dvm.lazy.stats import STATS


class LazyArray(NDArrayOperatorsMixin):
    """An array of recorded ops (see the module docstring); make one with
    `dvm.lazy.asarray`."""

    __slots__ = ("__weakref__", "_node")
    __array_priority__ = 1000  # numpy defers its operators to ours

    def __init__(self, node: Node) -> None:
        self._node = node
        if node.value is None:  # (pending: not the property, a call per op)
            node.owner = weakref.ref(self)
            if not node.shape:
                node.scalar = makes_scalar(node)
            if len(TRACE.nodes) > MAX_SEGMENT:
                settle()
        elif node.owner is not None:
            node.escape()  # a second array shows a computed result: a write must reach both

    # -- what is known without running anything --------------------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        return self._node.shape

    @shape.setter
    def shape(self, shape: Any) -> None:
        """`x.shape = ...`: numpy's reshape in place, of the value (a sync point): a view
        of the same memory, or numpy's error where the layout cannot be kept."""
        STATS.fallbacks["ndarray.shape"] += 1
        value = self.numpy().view()
        value.shape = shape
        self._node = Node.of(value)

    @property
    def dtype(self) -> np.dtype[Any]:
        return self._node.dtype

    @dtype.setter
    def dtype(self, dtype: Any) -> None:
        """`x.dtype = ...`: numpy's view of the value's memory as another type, in
        place (a sync point, numpy's error where the sizes do not fit)."""
        STATS.fallbacks["ndarray.dtype"] += 1
        self._node = Node.of(self.numpy().view(dtype))

    @property
    def ndim(self) -> int:
        return self._node.ndim

    @property
    def size(self) -> int:
        return math.prod(self._node.shape)

    @property
    def itemsize(self) -> int:
        return self._node.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self._node.dtype.itemsize

    def __len__(self) -> int:
        if self._node.scalar:
            raise TypeError(f"object of type 'numpy.{self.dtype.name}' has no len()")
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    # -- sync points --------------------------------------------------------------------

    def numpy(self) -> np.ndarray[Any, Any]:
        """The value, as a numpy array (a flush if it is pending): its memory, which
        writes into this array must reach from now on (`Node.updatable`)."""
        node = self._node
        node.escape()
        return value_of(node)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray[Any, Any]:
        value = value_of(self._node)
        if dtype is not None and np.dtype(dtype) != value.dtype:
            return value.astype(dtype)
        if copy:
            return value.copy()
        self._node.escape()
        return value

    # (the conversions below read the value and keep none of its memory)

    def __float__(self) -> float:
        return float(value_of(self._node))

    def __int__(self) -> int:
        return int(value_of(self._node))

    def __index__(self) -> int:
        return value_of(self._node).__index__()

    def __bool__(self) -> bool:
        return bool(value_of(self._node))

    def __complex__(self) -> complex:
        return complex(value_of(self._node))

    def __iter__(self) -> Any:
        """numpy's iteration: a 1-d array's numpy scalars, a larger one's rows (lazy
        again, views of the value); a 0-d array is not iterable."""
        if self._node.scalar:
            raise TypeError(f"'numpy.{self.dtype.name}' object is not iterable")
        value = self.numpy()
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return iter(value) if self.ndim == 1 else iter([LazyArray(Node.of(v)) for v in value])

    def __contains__(self, item: Any) -> bool:
        return unwrap_values(item) in value_of(self._node)

    def __hash__(self) -> int:
        """A numpy scalar's hash for an op's 0-d result (`x.sum()` as a dict key); an
        array is unhashable, as numpy's."""
        if not self._node.scalar:
            raise TypeError("unhashable type: 'numpy.ndarray'")
        return hash(value_of(self._node)[()])

    def __copy__(self) -> LazyArray:
        return self.copy()

    def __deepcopy__(self, memo: dict[int, Any]) -> LazyArray:
        return self.copy()

    def __reduce__(self) -> Any:
        """Pickled as its value: a numpy scalar for an op's 0-d result, else an array
        that unpickles lazy again."""
        value = value_of(self._node)
        if self._node.scalar:
            return value[()].__reduce__()
        return known, (np.array(value),)

    def __round__(self, ndigits: int | None = None) -> Any:
        """`round(x)` of an op's 0-d result: as of the numpy scalar it stands for;
        numpy's error for an array (a 0-d one too)."""
        value = value_of(self._node)
        return round(value[()] if self._node.scalar else value, ndigits)  # type: ignore[call-overload]

    def __repr__(self) -> str:
        value = value_of(self._node)
        if self._node.scalar:
            return repr(value[()])  # an op's 0-d result: numpy gives a scalar there
        return repr(value)

    def __str__(self) -> str:
        return str(value_of(self._node))

    def __format__(self, spec: str) -> str:
        return format(value_of(self._node), spec)

    def item(self, *args: Any) -> Any:
        return value_of(self._node).item(*args)

    def tolist(self) -> Any:
        return value_of(self._node).tolist()

    def __setitem__(self, key: Any, value: Any) -> None:
        """An in-place write: recorded where no other holder of the memory could see it
        (`writes.assigned`), else a sync point, then numpy's write (through the views
        numpy would share memory with: see `Node.view`). An op's 0-d result stands for
        a numpy scalar, which takes no writes."""
        if self._node.scalar:
            raise TypeError(f"'numpy.{self.dtype.name}' object does not support item assignment")
        shares = value._node.memory if type(value) is LazyArray else None
        if shares is not None and shares.base is self._node and same_key(shares.index, key):
            return  # (`u[k] += v` stores the view it wrote through: its own values)
        if self._node.updatable():
            node = masked_assignment(self._node, unwrap(key), unwrap(value))
            if node is None:
                node = writes.assigned(self._node, key, unwrap(value))
            if node is not None:
                replace(self, node)
                return
        flush()
        self.numpy()[unwrap_values(key)] = unwrap_values(value)

    def __delitem__(self, key: Any) -> None:
        if self._node.scalar:
            raise TypeError(f"'numpy.{self.dtype.name}' object does not support item deletion")
        raise ValueError("cannot delete array elements")

    # -- numpy's protocols ----------------------------------------------------------

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if method == "__call__" and not kwargs:
            operands = [x._node if isinstance(x, LazyArray) else x for x in inputs]
            if ufunc is np.divmod:
                both = [numpy_api.ufunc(f, operands) for f in (np.floor_divide, np.remainder)]
                if all(both):
                    return tuple(LazyArray(n) for n in both)  # type: ignore[arg-type]
            node = numpy_api.ufunc(ufunc, operands)
            if node is not None:
                return LazyArray(node)
        elif method == "outer" and not kwargs and len(inputs) == 2:
            node = outer_ufunc(ufunc, *inputs)
            if node is not None:
                return LazyArray(node)
        elif method == "__call__" and kwargs.keys() == {"out"}:
            written = in_place(ufunc, inputs, kwargs["out"])
            if written is not None:
                return written
        elif method == "reduce" and len(inputs) == 1 and isinstance(inputs[0], LazyArray):
            node = numpy_api.ufunc_reduce(ufunc, inputs[0]._node, **unwrap_values(kwargs))
            if node is not None:
                return LazyArray(node)
        return fallback(ufunc.__name__, getattr(ufunc, method), inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if (func is np.copyto or func is np.putmask) and masked_write(func, args, kwargs):
            return None  # (recorded)
        return dispatch(func, args, kwargs)

    # -- numpy's methods that record ------------------------------------------------------

    def __getitem__(self, key: Any) -> Any:
        supported = is_supported(self.dtype)  # (a complex array's indexing runs in numpy)
        node = numpy_api.basic_index(self._node, key) if supported else None
        if node is None:
            copied = numpy_api.advanced_index(self._node, unwrap_values(key)) if supported else None
            if copied is not None:  # (advanced indexing copies: no view)
                return LazyArray(copied)
            return fallback("ndarray.__getitem__", lambda a, k: a[k], (self, key), {})
        if node.ndim == 0 and not has_ellipsis(key):
            return shown(node, scalar=True)  # (an element: numpy's scalar, not a view)
        return viewed(node, self._node, key)

    def reshape(self, *shape: Any, order: str = "C", copy: bool | None = None) -> Any:
        if not shape or copy is not None:  # (numpy's TypeError; a copy or numpy's error)
            keywords = {"order": order, "copy": copy}
            return fallback("ndarray.reshape", np.ndarray.reshape, (self, *shape), keywords)
        target = shape[0] if len(shape) == 1 else shape
        return dispatch(np.reshape, (self, target), {"order": order})

    def transpose(self, *axes: Any) -> Any:
        return dispatch(np.transpose, (self, axes[0] if len(axes) == 1 else axes or None), {})

    @property
    def T(self) -> Any:
        return self.transpose()

    def swapaxes(self, axis1: int, axis2: int) -> Any:
        return dispatch(np.swapaxes, (self, axis1, axis2), {})

    def astype(self, dtype: Any, order: str = "K", casting: str = "unsafe", subok: bool = True,
               copy: bool = True) -> Any:  # fmt: skip
        target = np.dtype(dtype)
        given = (order, casting, subok)
        supported = is_supported(target) and is_supported(self.dtype)
        if given != ("K", "unsafe", True) or not supported:
            arguments = (self, dtype, *given, copy)
            return fallback("ndarray.astype", np.ndarray.astype, arguments, {})
        if target == self.dtype and not copy:
            return self
        return shown(record.convert(self._node, target), scalar=self._node.scalar)

    def copy(self, order: str = "C") -> LazyArray:
        """A copy: of a scalar a scalar, of a 0-d array a 0-d array (as numpy's). Another
        memory order than C's runs in numpy (its flags and strides say which it is)."""
        if order != "C" or not is_supported(self.dtype):
            return fallback("ndarray.copy", np.ndarray.copy, (self, order), {})
        return shown(record.convert(self._node, self.dtype), scalar=self._node.scalar)

    def flatten(self, order: str = "C") -> Any:
        """A copy of `ravel`'s view (numpy's other orders run in numpy)."""
        if order != "C":
            return fallback("ndarray.flatten", np.ndarray.flatten, (self, order), {})
        return dispatch(np.ravel, (self,), {}).copy()

    def __getattr__(self, name: str) -> Any:
        """Any other attribute of ndarray: the value's (a sync point), and a method's
        array results are lazy again."""
        if not name.startswith("__") and self._node.scalar:
            found = scalar_attribute(self.numpy()[()], name)
            if found is not None:
                return found
        if name.startswith("__") or not hasattr(np.ndarray, name):
            raise AttributeError(f"'LazyArray' object has no attribute {name!r}")
        attribute = getattr(np.ndarray, name)
        if not callable(attribute):
            STATS.fallbacks[f"ndarray.{name}"] += 1
            return wrap(getattr(self.numpy(), name))
        return lambda *args, **kwargs: fallback(f"ndarray.{name}", attribute, (self, *args), kwargs)


def makes_scalar(node: Node) -> bool:
    """Whether numpy's op gives a scalar where `node` is 0-d: every op (a ufunc, a
    reduction) but a view of a 0-d array (a reshape, a transpose). Where the op alone
    does not tell (a copy or `astype` keeps its operand's kind, an element `x[()]` is a
    scalar, `np.where` gives an array) its maker says (`shown`)."""
    return not node.shape and node.view is None and node.op != "value"


def is_scalar(x: Any) -> bool:
    """Whether `x` (an operand, a lazy array's as its node) is a number or a numpy
    scalar, or an op's 0-d result that stands for one."""
    return x.scalar if type(x) is Node else isinstance(x, int | float | complex | np.generic)


def has_ellipsis(key: Any) -> bool:
    """Whether an indexing key has `...`: numpy's result is then a view, even of one
    element (`x[0, ...]` is a 0-d array, `x[0]` of a 1-d `x` a scalar)."""
    return key is Ellipsis or (type(key) is tuple and any(k is Ellipsis for k in key))


def scalar_attribute(scalar: Any, name: str) -> Any:
    """The attribute `name` of the numpy scalar an op's 0-d result stands for (a sync
    point), its array results lazy again; None if the scalar has none. A scalar has
    methods an array lacks (`is_integer`), and its in-place ones (`fill`, `sort`)
    change nothing: it is immutable."""
    if not hasattr(scalar, name):
        return None
    STATS.fallbacks[f"generic.{name}"] += 1
    attribute = getattr(scalar, name)
    if not callable(attribute):
        return wrap(attribute)
    return lambda *args, **kwargs: wrap(attribute(*unwrap_values(args), **unwrap_values(kwargs)))


def refuse_scalar_outputs(out: Any) -> None:
    """numpy's error for an `out=` that is an op's 0-d result (of a ufunc, `np.mean`...):
    a numpy scalar there."""
    for target in out if isinstance(out, tuple) else (out,):
        if isinstance(target, LazyArray) and target._node.scalar:
            raise TypeError("return arrays must be of ArrayType")


def writable_attribute(name: str) -> property:
    """`x.name` as any other attribute of the value (`__getattr__`), and `x.name = v`
    numpy's write into the value (`x.real = 0`, `x.flat = 1`: a sync point); a numpy
    scalar's attributes are not writable."""

    def write(self: LazyArray, value: Any) -> None:
        if self._node.scalar:
            raise AttributeError(f"attribute {name!r} of 'numpy.generic' objects is not writable")
        STATS.fallbacks[f"ndarray.{name}"] += 1
        flush()
        setattr(self.numpy(), name, unwrap_values(value))

    return property(lambda self: self.__getattr__(name), write)


def known(value: np.ndarray[Any, Any]) -> LazyArray:
    """A lazy array of a known value (what a pickled lazy array loads as)."""
    return LazyArray(Node.of(value))


def outer_ufunc(ufunc: np.ufunc, a: Any, b: Any) -> Node | None:
    """`ufunc.outer(a, b)`: `a` with a unit dim for each of `b`'s, broadcast."""
    if not all(isinstance(x, LazyArray | np.ndarray) for x in (a, b)) or ufunc.nin != 2:
        return None
    first = a._node if isinstance(a, LazyArray) else Node.of(a)
    if not is_supported(first.dtype):
        return None
    column = record.insert_unit_dims(first, tuple(range(a.ndim, a.ndim + b.ndim)))
    return numpy_api.ufunc(ufunc, [column, b._node if isinstance(b, LazyArray) else b])


def in_place(ufunc: np.ufunc, inputs: Any, out: Any) -> LazyArray | None:
    """`ufunc(*inputs, out=target)` recorded (`x -= lr * g`, `p /= p.sum()`) where no
    other holder of the target's memory could see the write (`Node.updatable`): the
    target then shows the new value (`writes.updated`). None otherwise: the write into
    the memory runs in numpy (a sync point)."""
    outs = out if isinstance(out, tuple) else (out,)
    if len(outs) != 1 or type(outs[0]) is not LazyArray:
        return None
    target: LazyArray = outs[0]
    old = target._node
    if old.scalar:
        refuse_scalar_outputs(target)
    operands = [x._node if isinstance(x, LazyArray) else x for x in inputs]
    if not old.updatable():
        return in_place_through_view(target, ufunc, operands)
    node = writes.updated(old, ufunc, operands)
    if node is None:
        return None
    replace(target, node)
    return target


def in_place_through_view(view: LazyArray, ufunc: np.ufunc, operands: list[Any]) -> Any:
    """`ufunc(*operands, out=view)` where `view` is a lazy array's `base[key]`, or a view
    of such a view (`u[1:-1, 1:-1] += v`, `out=a[1:]`): numpy's write into the base's
    memory, recorded where no numpy code holds that memory and every live view of it is
    such a view (by basic keys). The base's array then shows its value with the part
    replaced (`writes.assigned`, through each view between), and each view a view of
    that new value at its key, as numpy's views see the base. None otherwise (numpy's
    write)."""
    chain = view_chain(view._node)
    if chain is None:
        return None  # (no view, or one by a transpose, a reshape: numpy's)
    base = chain[-1][0]
    owner = base.owner() if base.owner is not None else None
    views = views_by_key(base)
    if owner is None or owner._node is not base or views is None:
        return None
    node = writes.updated(view._node, ufunc, operands)
    for parent, key in chain:  # (the write into each view is one into its base)
        node = None if node is None else writes.assigned(parent, key, node)
    if node is None:
        return None  # (unrecorded ops no array shows: dropped at the next flush)
    renewed: dict[Node, Node | None] = {base: node}
    seen = [renew(v._node, renewed) for v in views]
    if any(s is None or not same_shape(s.shape, v.shape) for s, v in zip(seen, views, strict=True)):
        return None
    node.memory = Memory(views=[weakref.ref(v) for v in views])
    replace(owner, node)
    for array, new in zip(views, seen, strict=True):
        replace(array, new)  # type: ignore[arg-type]
    return view


def view_chain(node: Node) -> list[tuple[Node, Any]] | None:
    """The (base, key) of a view, of its base if that is a view too... up to a node no
    view: None if `node` is no view, or one of them is not by a key (a transpose)."""
    chain = []
    memory = node.memory
    while memory is not None and memory.base is not None:
        if callable(memory.index):
            return None
        chain.append((memory.base, memory.index))
        memory = memory.base.memory
    return chain or None


def views_by_key(base: Node) -> list[LazyArray] | None:
    """The live lazy views of `base`'s memory (`view_chain` leads from each to `base`);
    None if numpy code holds the memory, or another view lives (a transpose)."""
    memory = base.memory
    if base.op == "value" or memory is None or memory.held:
        return None
    views = [v for v in (ref() for ref in memory.views) if v is not None]
    for v in views:
        chain = view_chain(v._node)
        if chain is None or chain[-1][0] is not base:
            return None
    return views


def renew(node: Node, renewed: dict[Node, Node | None]) -> Node | None:
    """The view `node` (of a view...) taken again of the new value of its base (in
    `renewed`, by the old node): a pending view of it, at the same key."""
    if node not in renewed:
        assert node.memory is not None and node.memory.base is not None
        key = node.memory.index
        base = renew(node.memory.base, renewed)
        new = None if base is None else numpy_api.basic_index(base, key)
        if base is not None and new is not None:
            new.view, new.memory = (base, key), Memory(held=True, base=base, index=key)
        renewed[node] = new
    return renewed[node]


def masked_assignment(old: Node, key: Any, value: Any) -> Node | None:
    """`x[mask] = v` for a mask of bools of `x`'s shape and one value (a number or a 0-d
    array): `writes.selected`. A value of the mask's count (`x[m] = y[m]`) is numpy's."""
    if type(key) is not Node and not (isinstance(key, np.ndarray) and key.dtype == np.bool_):
        return None
    if not same_shape(key.shape, old.shape) or np.ndim(value) != 0:
        return None
    return writes.selected(old, key, value)


def masked_write(func: Any, args: Any, kwargs: dict[str, Any]) -> bool:
    """`np.copyto(x, y, where=m)` (numpy's `casting`) and `np.putmask(x, m, v)` (a
    number, or an array of `x`'s shape numpy casts safely) recorded into a lazy `x` no
    other holder of its memory could see: whether they were."""
    target = args[0] if args else kwargs.get("dst", kwargs.get("a"))
    if type(target) is not LazyArray or target._node.scalar or not target._node.updatable():
        return False
    rest = {k: unwrap(v) for k, v in kwargs.items() if k not in ("dst", "a")}
    given = [unwrap(a) for a in args[1:]]
    if func is np.copyto:
        names = ["src", "casting", "where"]
        found = dict(zip(names, given, strict=False)) | rest
        if "src" not in found or found.keys() - set(names) or len(given) > 3:
            return False
        if found.get("casting", "same_kind") != "same_kind":
            return False
        node = writes.selected(target._node, found.get("where", True), found["src"])
    else:
        found = dict(zip(["mask", "values"], given, strict=False)) | rest
        if found.keys() != {"mask", "values"} or len(given) > 2:
            return False
        mask, value = found["mask"], found["values"]
        if not isinstance(mask, Node | np.ndarray) or not same_shape(mask.shape, target.shape):
            return False  # (numpy's error, or its reading of the mask's flat order)
        if np.ndim(value) != 0 and not same_shape(np.shape(value), target.shape):
            return False  # (numpy repeats a shorter value in flat order)
        node = writes.selected(target._node, mask, value, "safe")
    if node is None:
        return False
    replace(target, node)
    return True


def same_key(a: Any, b: Any) -> bool:
    """Whether two basic indexing keys pick the same part (ints, slices of ints, `...`,
    None, and tuples of them; compared without `==` on arrays, which has no truth)."""
    if a is b:
        return True
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same_key(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, slice) and isinstance(b, slice):
        parts = (a.start, a.stop, a.step, b.start, b.stop, b.step)
        return all(p is None or numpy_api.is_int(p) for p in parts) and a == b
    return numpy_api.is_int(a) and numpy_api.is_int(b) and a == b


def replace(target: LazyArray, node: Node) -> None:
    """`target` shows `node`, the new value an in-place write recorded."""
    target._node = node
    node.owner = weakref.ref(target)
    if len(TRACE.nodes) > MAX_SEGMENT:
        settle()


def operator_method(function: np.ufunc, name: str, reflected: bool = False) -> Any:
    """The operator `name` (`add`: `__add__`, or `__radd__` if `reflected`), recorded
    without numpy's dispatch (the common case, a third of an op's cost); anything else
    runs as ndarray's operator on the values, which is not always the ufunc: `x == "a"`
    is all False, and an operand numpy does not know gets its reflected operator."""
    operator = getattr(np.ndarray, f"__{'r' if reflected else ''}{name}__")

    def method(self: LazyArray, other: Any) -> Any:
        theirs = other._node if type(other) is LazyArray else other
        if function is np.matmul and self._node.scalar and is_scalar(theirs):
            raise TypeError(f"unsupported operand type(s) for @: 'numpy.{self.dtype.name}'")
        if reflected:
            node = numpy_api.binary_ufunc(function, theirs, self._node)
        else:
            node = numpy_api.binary_ufunc(function, self._node, theirs)
        if node is not None:
            return LazyArray(node)
        return fallback(function.__name__, operator, (self, other), {})

    return method


for _name, _ufunc in {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
    "pow": np.power, "mod": np.remainder, "matmul": np.matmul,
}.items():  # fmt: skip
    setattr(LazyArray, f"__{_name}__", operator_method(_ufunc, _name))
    setattr(LazyArray, f"__r{_name}__", operator_method(_ufunc, _name, reflected=True))


_power_operator = operator_method(np.power, "pow")


def _pow(self: LazyArray, other: Any) -> Any:
    """`x ** 2` is `np.square(x)`, as numpy's operator makes it (a bool squares to int8,
    where `np.power` gives int64); a numpy scalar's `**` is `np.power`."""
    if type(other) is int and other == 2 and not self._node.scalar:
        node = numpy_api.square(self._node)
        if node is not None:
            return LazyArray(node)
    return _power_operator(self, other)


LazyArray.__pow__ = _pow
for _name in ("real", "imag", "flat"):
    setattr(LazyArray, _name, writable_attribute(_name))


def in_place_operator(function: np.ufunc, name: str) -> Any:
    """`x op= y` (`name`: `add` for `+=`): numpy's write into `x`, but a new object for an
    op's 0-d result, as for the numpy scalar it stands for (`t = s; s += 1` leaves `t`)."""

    def method(self: LazyArray, other: Any) -> Any:
        if self._node.scalar:
            return getattr(self, f"__{name}__")(other)
        return function(self, other, out=(self,))

    return method


for _name, _ufunc in {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.true_divide,
    "floordiv": np.floor_divide, "mod": np.remainder, "pow": np.power, "matmul": np.matmul,
    "lshift": np.left_shift, "rshift": np.right_shift, "and": np.bitwise_and,
    "or": np.bitwise_or, "xor": np.bitwise_xor,
}.items():  # fmt: skip
    setattr(LazyArray, f"__i{_name}__", in_place_operator(_ufunc, _name))


for _name, _ufunc in {"lt": np.less, "le": np.less_equal, "gt": np.greater,
                      "ge": np.greater_equal, "eq": np.equal,
                      "ne": np.not_equal}.items():  # fmt: skip
    setattr(LazyArray, f"__{_name}__", operator_method(_ufunc, _name))


# -- between lazy arrays and numpy ---------------------------------------------------------


def value_of(node: Node) -> np.ndarray[Any, Any]:
    if node.pending:
        flush([node])
    assert node.value is not None
    return node.value


def unwrap(x: Any) -> Any:
    """`x` with every lazy array in it (in lists, tuples and dicts) as its node."""
    if isinstance(x, LazyArray):
        return x._node
    if isinstance(x, list | tuple):
        return type(x)(unwrap(v) for v in x)
    if isinstance(x, dict):
        return {k: unwrap(v) for k, v in x.items()}
    return x


def unwrap_values(x: Any) -> Any:
    """`x` with every lazy array in it (in lists, tuples and dicts) as its value."""
    if isinstance(x, LazyArray):
        return x.numpy()
    if isinstance(x, list | tuple):
        return type(x)(unwrap_values(v) for v in x)
    if isinstance(x, dict):
        return {k: unwrap_values(v) for k, v in x.items()}
    return x


def wrap(x: Any) -> Any:
    """numpy's results as lazy arrays (arrays of dtypes the compiler takes)."""
    if isinstance(x, np.ndarray) and is_supported(x.dtype):
        return LazyArray(Node.of(x))
    if isinstance(x, tuple) and any(isinstance(v, np.ndarray) for v in x):
        items = [wrap(v) for v in x]  # (a named tuple, such as `eigh`'s, keeps its type)
        return type(x)(*items) if hasattr(x, "_fields") else tuple(items)
    if isinstance(x, list) and any(isinstance(v, np.ndarray) for v in x):
        return [wrap(v) for v in x]
    return x


def fallback(name: str, function: Callable[..., Any], args: Any, kwargs: dict[str, Any]) -> Any:
    """Run `function` in numpy on the values (a sync point). `out=` arrays, lazy or
    numpy's, are written and returned as given, as numpy returns them (`a += x` on a
    numpy array `a` leaves `a` that array); so is an argument numpy returns itself
    (`np.nan_to_num(x, copy=False)` is `x`)."""
    STATS.fallbacks[name] += 1
    refuse_scalar_outputs(kwargs.get("out"))  # (not its value's memory: a 0-d array)
    flush()
    values = unwrap_values(tuple(args))
    result = function(*values, **unwrap_values(kwargs))
    out = kwargs.get("out")
    if out is None:
        for argument, value in zip(args, values, strict=True):
            if value is result and type(argument) is LazyArray and not argument._node.scalar:
                return argument
        return wrap(result)
    outs = out if isinstance(out, tuple) else (out,)
    results = result if isinstance(result, tuple) else (result,)
    # (an output not given, `np.modf(x, y)`'s second, is numpy's new array)
    given = [wrap(r) if o is None else o for o, r in zip(outs, results, strict=True)]
    return tuple(given) if len(given) > 1 else given[0]


FUNCTIONS = {
    **functions.FUNCTIONS,
    **arrange.FUNCTIONS,
    **composed.FUNCTIONS,
    np.einsum: einsum.einsum,
}
"""numpy's functions that record, and their handlers."""
numpy_api.SPECIAL[np.heaviside] = composed.heaviside  # (a composite: numpy_api is not its home)


def dispatch(func: Any, args: Any, kwargs: dict[str, Any]) -> Any:
    """numpy's `func(*args, **kwargs)`: recorded by its handler, or run in numpy."""
    handler = FUNCTIONS.get(func)
    made = None
    if handler is not None and all(map(of_supported_dtype, args)):
        nodes = [a._node if type(a) is LazyArray else unwrap(a) for a in args]
        try:
            made = handler(*nodes, **{k: unwrap(v) for k, v in kwargs.items()} if kwargs else {})
        except TypeError as error:
            # (an argument the handler does not take, as `np.max(x, 0, None, False, 5)`'s
            # `initial` or `np.empty_like(prototype=x)`: numpy's call, run in numpy)
            if not takes_no_such_arguments(error):
                raise
    if made is None:
        return fallback(func.__name__, func, args, kwargs)
    if isinstance(made, View):  # (`broadcast_to` views a scalar's memory, read-only)
        return viewed(*made, of_a_copy=func is not np.broadcast_to)
    if isinstance(made, list) and made and all(isinstance(m, View) for m in made):
        return [viewed(*m) for m in made]  # (`split`: views of the one array)
    if isinstance(made, tuple) and all(isinstance(m, Node) for m in made):
        return tuple(LazyArray(m) for m in made)  # (`gradient` along several axes)
    if isinstance(made, Node):  # (`np.where` of 0-d operands gives a 0-d array)
        return shown(made, scalar=False if func is np.where else None)
    return made


def of_supported_dtype(argument: Any) -> bool:
    """Whether an array among a call's arguments (or in a list of them), lazy or
    numpy's, has an element type the compiler takes: with a complex one
    (`lazy.asarray(z)`, `np.einsum("i,j", z, x)`) the call runs in numpy."""
    if isinstance(argument, LazyArray | np.ndarray):
        return is_supported(argument.dtype)
    if isinstance(argument, list | tuple):
        return all(map(of_supported_dtype, argument))
    return True


def takes_no_such_arguments(error: TypeError) -> bool:
    """Whether `error` is Python's refusal of a call's arguments (raised in the frame
    that made the call), not an error inside the function called."""
    trace = error.__traceback__
    return trace is not None and trace.tb_next is None


def viewed(node: Node, base: Node, index: Any, of_a_copy: bool = True) -> LazyArray:
    """`node`, which numpy would make a view of `base` (`index`: how, a key for `[]`,
    None included, or a function). The base, and the bases it is a view of, are not
    updated while the view lives. Of a scalar base, the view is (`of_a_copy`) of a copy
    no name holds, as numpy's scalar methods take (`s.T` a scalar again, `s[...]` a
    0-d array)."""
    if node is base or not TRACE.views:
        return shown(node)
    if base.scalar and of_a_copy:
        return shown(node, scalar=not has_ellipsis(index))
    node.view, node.memory = (base, index), Memory(held=True, base=base, index=index)
    array = LazyArray(node)
    shares: Node | None = base
    while shares is not None:  # (a view of a view: its base's base, through views)
        memory = shares.memory
        if memory is None:
            memory = shares.memory = Memory()
        if not memory.held:
            if len(memory.views) >= 16:  # (forget the dead: a loop's temporary slices)
                memory.views = [ref for ref in memory.views if ref() is not None]
            memory.views.append(weakref.ref(array))
        shares = memory.base
    return array


def shown(node: Node, scalar: bool | None = None) -> LazyArray:
    """A lazy array of `node`, which a handler may have returned as it was given (then a
    second array shows it: a write into either must reach both). `scalar`: whether a
    new 0-d node stands for numpy's scalar, where its op alone does not tell."""
    if node.owner is not None:
        node.escape()
        return LazyArray(node)
    array = LazyArray(node)
    if scalar is not None and not node.shape:
        node.scalar = scalar
    return array


def dialect_op(name: str, *operands: LazyArray) -> LazyArray | None:
    """The dialect's elementwise op `name` (one numpy lacks, such as `erf`) on lazy
    arrays of one dtype it accepts; None otherwise."""
    node = numpy_api.dialect_op(name, [x._node for x in operands])
    return None if node is None else LazyArray(node)
