"""`dvm.lazy` arrays as Python objects, against numpy's: views and aliasing (which
object a write changes), copies and pickles, Python's protocols on arrays and on the
0-d results that stand for numpy's scalars, and the arguments of ufuncs and
reductions. Each case runs on numpy arrays and on lazy arrays and returns what it
wrote to, so the comparison sees every array a write reached. Inputs are seeded."""

from __future__ import annotations

import copy
import operator
import pickle
from typing import Any

import numpy as np
import pytest
from test_lazy_numpy_semantics import each, sample

from dvm import lazy

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (numpy's, on zeros)


def slice_add(a: Any) -> Any:
    y = a[1:]
    y += 1
    return a, y


def transpose_add(a: Any) -> Any:
    t = a.T
    t += 1
    return a


def reshape_write(a: Any) -> Any:
    r = a.reshape(4, 3)
    r[0, 0] = 99
    return a


def add_into_a_row(a: Any) -> Any:
    np.add(a[0], 1, out=a[1])
    return a


def add_into_numpy(a: Any) -> Any:
    out = np.zeros((3, 4), np.float32)
    returned = np.add(a, a, out=out)
    return out, returned is out


def copy_then_write(a: Any) -> Any:
    b, c, d = copy.copy(a), copy.deepcopy(a * 2), a.copy()
    b[0, 0], c[0, 0] = 9, 9
    d += 1
    return a, b, c, d


def deepcopy_a_list(a: Any) -> Any:
    copies = copy.deepcopy([a, a[0]])
    copies[1][0] = 5
    return a, copies[0]


def view_of_a_result(a: Any) -> Any:
    b = a * 2
    row = b[0]
    row += 100
    return b


def fill_and_sort(a: Any) -> Any:
    a[0].fill(7)
    a[1].sort()
    b = a * 2
    b.sort(axis=0)
    return a, b


def assign_shape(a: Any) -> Any:
    a.shape = (4, 3)
    b = a + 1
    b.shape = (12,)
    return a, b, a.shape, b.shape


def assign_a_bad_shape(a: Any) -> Any:
    a.shape = (5,)


def assign_a_shape_to_a_transpose(a: Any) -> Any:
    t = a.T
    t.shape = (12,)  # (numpy: an AttributeError, the layout cannot be kept)


def assign_a_dtype(a: Any) -> Any:
    b = a * 1
    b.dtype = np.int32  # (the same memory, read as another type)
    return b


def assign_parts(a: Any) -> Any:
    real = a.real
    real[0, 0] = 5
    b = a * 2
    b.flat = 3.0
    a.real = a.imag
    return a, b, a.flat[3]


def assign_the_imaginary_part(a: Any) -> Any:
    a.imag = 1  # (numpy: a TypeError, the array has none)


def memory_attributes(a: Any) -> Any:
    return (a.strides, (a + 1).strides, bool(a.T.flags.c_contiguous), (a + 1).base is None,
            np.shares_memory(a, a[1:]), np.shares_memory(a, a + 1))  # fmt: skip


def scalar_updated_in_place(a: Any) -> Any:
    s, e = a.sum(), a[0, 0]
    t, f = s, e
    s += 1
    e *= 2
    return t, s, f, e, a


def zero_d_arrays_stay_arrays(a: Any) -> Any:
    """A reshape to 0-d is a view, and a copy of one a 0-d array: written in place."""
    one = a[:1, :1] * 1
    view, copied = one.reshape(()), one.reshape(()).copy()
    alias = copied
    view += 1
    copied += 2
    copied[()] = copied + 1
    return one, view, alias, repr(np.einsum("ij->", a)).startswith("np.float32(")


def scalar_item_assignment(a: Any) -> Any:
    s = a.sum()
    s[()] = 3


def item_deletion(a: Any) -> Any:
    del a[0]


def scalar_item_deletion(a: Any) -> Any:
    s = a.sum()
    del s[()]


def scalar_methods(a: Any) -> Any:
    s = a.sum()
    s.fill(0)  # (a scalar's copy is filled: the scalar is immutable)
    return s, a[0, 0].is_integer(), (s * 0 + 0.5).as_integer_ratio(), s.real


def scalar_attribute_assignment(a: Any) -> Any:
    s = a.sum()
    s.real = 1


def scalar_as_an_out(a: Any) -> Any:
    s = a.sum()
    np.add(s, 1, out=s)


def scalars_as_keys(a: Any) -> Any:
    counts = {a.sum(): 1, a[0, 0]: 2}
    return counts[a.sum()], a.max() in {a.max()}, a.sum() in {1: 2}


def zeros_then_updates(a: Any) -> Any:
    m, v = np.zeros_like(a), np.zeros_like(a)
    for _ in range(3):
        m *= 0.9
        m += 0.1 * a
        v *= 0.99
        v += 0.01 * a * a
    return m / (np.sqrt(v) + 1e-8)


def filled_like(a: Any) -> Any:
    m, v = np.ones_like(a), np.ones_like(a)
    m[0, 0] = 5  # (two fills of one value: two arrays)
    v += 1
    return (
        m,
        v,
        np.full_like(a, 2.5, dtype=np.int32),
        np.full_like(a, 300, np.int8),
        np.zeros_like(a, np.complex64),
        np.ones_like(a, order="F"),
        np.full_like(a, [1, 2, 3, 4]),
        np.zeros_like(a, shape=(2,)),
        np.zeros_like(a.sum()),
        np.full_like(a, fill_value=3),
        np.full_like(a, a.max()),
    )


def empty_like(a: Any) -> Any:
    """(Its values are whatever memory held: shape, dtype and layout are compared.)"""
    made = [
        np.empty_like(a),
        np.empty_like(a, np.int16),
        np.empty_like(a, None, "F"),
        np.empty_like(a, None, "K", True, (2, 5)),
        np.empty_like(a, order="F"),
    ]
    return [(np.shape(e), np.asarray(e).dtype, np.asarray(e).flags.f_contiguous) for e in made]


def index_by_scalars(a: Any) -> Any:
    i = a.argmax()
    return list(range(i)), [*range(12)][i], operator.index(i), np.arange(12)[i]


def arguments(a: Any) -> Any:
    return (
        np.add(a, 1, dtype=np.float64),
        np.add(a, 1, dtype=np.int16, casting="unsafe"),
        np.add(a, 1, where=a > 0, out=np.zeros((3, 4), np.float32)),
        a.sum(dtype=np.float64),
        np.mean(a, axis=(-2, -1), keepdims=True),
        a.max(axis=(0, -1), keepdims=True),
        a.sum(axis=None, keepdims=True),
        a.max(initial=100.0),
        np.sum(a, where=a > 0, axis=1),
        np.maximum.reduce(a, axis=0, initial=0.0),
    )


CASES = {
    "y = x[1:]; y += 1": slice_add,
    "t = x.T; t += 1": transpose_add,
    "a reshape written": reshape_write,
    "out= a row": add_into_a_row,
    "out= a numpy array": add_into_numpy,
    "copies": copy_then_write,
    "deepcopy of a list": deepcopy_a_list,
    "a view of a result": view_of_a_result,
    "fill and sort in place": fill_and_sort,
    "x.shape = ...": assign_shape,
    "x.shape = a bad size": assign_a_bad_shape,
    "x.T.shape = ...": assign_a_shape_to_a_transpose,
    "x.dtype = ...": assign_a_dtype,
    "x.real = ..., x.flat = ...": assign_parts,
    "x.imag = ...": assign_the_imaginary_part,
    "memory attributes": memory_attributes,
    "scalar methods": scalar_methods,
    "scalar attribute assignment": scalar_attribute_assignment,
    "out= a scalar": scalar_as_an_out,
    "scalars updated in place": scalar_updated_in_place,
    "0-d arrays stay arrays": zero_d_arrays_stay_arrays,
    "scalar item assignment": scalar_item_assignment,
    "item deletion": item_deletion,
    "scalar item deletion": scalar_item_deletion,
    "scalars as keys": scalars_as_keys,
    "zeros_like then updates": zeros_then_updates,
    "empty_like's arguments": empty_like,
    "filled like": filled_like,
    "hash of an array": hash,
    "ufunc and reduction arguments": arguments,
    "the builtins": lambda a: (max(a[0]), sum(a[0]), sorted([a[0, 0], a[1, 1], a[2, 2]])),
    "bool of many": lambda a: bool(a > 0),
    "== None, a list, a tuple": lambda a: (a == None, a[0] == [1, 2, 3, 4], a[0] == (1, 2)),  # noqa: E711
    "np.array of lazy scalars": lambda a: (np.array([a.sum(), 1.0]), np.asarray([a[0], a[1]])),
    "integer division by zero": lambda a: (a.astype(np.int32) // 0, a.astype(np.int64) % 0),
    "clip's bounds": lambda a: (np.clip(a, 1, None), a.clip(1), a.clip(max=1), np.clip(a, min=0)),
    "np.clip(x, lo)": lambda a: np.clip(a, 1),
    "an output not given": lambda a: np.modf(a, np.zeros((3, 4), np.float32)),
    "out=(None,)": lambda a: np.add(a, 1, out=(None,)),
}


def test_lazy_arrays_behave_as_numpys_objects() -> None:
    each(CASES, sample(np.float32))


def test_a_pickled_lazy_array_loads_with_its_value() -> None:
    x = sample(np.float32)
    a = lazy.asarray(x) * 2
    loaded = pickle.loads(pickle.dumps(a))
    assert isinstance(loaded, lazy.LazyArray)
    np.testing.assert_array_equal(np.asarray(loaded), x * 2)
    total = pickle.loads(pickle.dumps(a.sum()))  # numpy's scalar, as numpy pickles it
    assert type(total) is np.float32 and total == np.asarray(a).sum()


def test_updates_of_a_zeros_like_record_without_a_sync() -> None:
    lazy.reset()
    x = sample(np.float32)
    zeros_then_updates(lazy.asarray(x))
    # (the call flushes nothing: every update is recorded, and nothing falls back)
    assert lazy.stats()["segments"] == 0 and not lazy.stats()["fallbacks"]
