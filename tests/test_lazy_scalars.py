"""`dvm.lazy`'s 0-d results against numpy's scalars and 0-d arrays.

Where numpy gives a scalar (`x.sum()`, `x[0, 1]`, a ufunc of scalars) a lazy array
gives a 0-d lazy array that must behave as that scalar: numpy's result dtypes (a
scalar's `**` is `np.power`, an array's `** 2` is `np.square`), the scalar's hash and
repr, no item assignment, and an in-place operator that makes a new scalar (scalars
are immutable: another name keeps the old value). Where numpy gives a 0-d array (a
view, a copy, `s[...]`, `np.where`) the lazy result must be one too, writable, its
writes reaching what numpy's reach. Each case runs on numpy's values and on lazy
ones; its results are compared by kind (scalar, 0-d array, array or Python object),
dtype and value, or by the type of the error raised.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from dvm import lazy

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (numpy's overflows)

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, np.float16, ml_dtypes.bfloat16, np.float32, np.float64]  # fmt: skip
FEW_DTYPES = [np.bool_, np.uint64, np.float32]
"""Where the dtype matters less than the kind of the result (kept cheap)."""


def matrix(dtype: Any) -> np.ndarray[Any, Any]:
    """A 2x3 array of `dtype`: 2 at [0, 1], 6 its largest (bools: a mix)."""
    if np.dtype(dtype) == np.bool_:
        return np.array([[True, True, False], [False, True, True]])
    return np.array([[1, 2, 3], [4, 5, 6]]).astype(dtype)


SCALARS: dict[str, Callable[[Any], Any]] = {
    "x[0, 1]": lambda x: x[0, 1],
    "x.max()": lambda x: x.max(),
}
"""Scalars as numpy code makes them."""
ZERO_D_ARRAYS: dict[str, Callable[[Any], Any]] = {
    "x[0, 1, ...]": lambda x: x[0, 1, ...],  # (a view of x)
    "(x * 1)[:1, 1].reshape(())": lambda x: (x * 1)[:1, 1].reshape(()),  # (of a temporary)
}
"""0-d arrays as numpy code makes them."""


def plus_equals(s: Any) -> Any:
    t = s
    s += 1
    return t, s


def times_equals(s: Any) -> Any:
    t = s
    s *= 2
    return t, s


def power_equals(s: Any) -> Any:
    t = s
    s **= 2
    return t, s


def set_all(s: Any) -> Any:
    s[...] = 1
    return s


def set_item(s: Any) -> Any:
    s[()] = 1
    return s


def written(make: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`r = make(s); r[...] = 1`: what numpy's `r` is decides who sees the write."""

    def case(s: Any) -> Any:
        r = make(s)
        r[...] = 1
        return r

    return case


def updated(make: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`r = make(s); r += 1`: in place where `r` is an array, a new scalar where not."""

    def case(s: Any) -> Any:
        r = make(s)
        r += 1
        return r

    return case


ARITHMETIC: dict[str, Callable[[Any], Any]] = {
    "s ** 2": lambda s: s**2,
    "s ** 3": lambda s: s**3,
    "s ** 0": lambda s: s**0,
    "s ** 1": lambda s: s**1,
    "s ** -1": lambda s: s**-1,
    "s ** 0.5": lambda s: s**0.5,
    "s ** 2.0": lambda s: s**2.0,
    "s ** True": lambda s: s**True,
    "2 ** s": lambda s: 2**s,
    "s ** s": lambda s: s**s,
    "np.power(s, 2)": lambda s: np.power(s, 2),
    "np.square(s)": np.square,
    "s // 3": lambda s: s // 3,
    "s % 3": lambda s: s % 3,
    "divmod(s, 3)": lambda s: divmod(s, 3),
    "s / 2": lambda s: s / 2,
    "s + 1": lambda s: s + 1,
    "s + 2.5": lambda s: s + 2.5,
    "s + True": lambda s: s + True,
    "s - s": lambda s: s - s,
    "s + np.float32(1)": lambda s: s + np.float32(1),
    "np.int8(1) + s": lambda s: np.int8(1) + s,
    "s * np.array(3, np.int16)": lambda s: s * np.array(3, np.int16),
    "s < 2": lambda s: s < 2,
    "s == s": lambda s: s == s,
    "-s": operator.neg,
    "~s": operator.invert,
    "abs(s)": abs,
    "np.sqrt(s)": np.sqrt,
    "np.positive(s)": np.positive,
    "s.item()": lambda s: s.item(),
    "float(s)": float,
    "int(s)": int,
    "bool(s)": bool,
    "hash(s)": hash,
    "t = s; s += 1": plus_equals,
    "t = s; s **= 2": power_equals,
    "s[...] = 1": set_all,
}
"""Operations whose result dtype or kind could depend on the dtype: on every dtype."""

SHAPES_AND_KINDS: dict[str, Callable[[Any], Any]] = {
    "s & 1": lambda s: s & 1,
    "s << 1": lambda s: s << 1,
    "np.add(s, 1)": lambda s: np.add(s, 1),
    "np.maximum(s, 1)": lambda s: np.maximum(s, 1),
    "s.tolist()": lambda s: s.tolist(),
    "len(s)": len,
    "list(s)": list,
    "s[()]": lambda s: s[()],
    "s[...]": lambda s: s[...],
    "s[None]": lambda s: s[None],
    "s.T": lambda s: s.T,
    "s.reshape(())": lambda s: s.reshape(()),
    "s.reshape(1)": lambda s: s.reshape(1),
    "s.copy()": lambda s: s.copy(),
    "s.astype(np.float64)": lambda s: s.astype(np.float64),
    "s.astype(np.uint64)": lambda s: s.astype(np.uint64),
    "np.squeeze(s)": np.squeeze,
    "np.transpose(s)": np.transpose,
    "s.ravel()": lambda s: s.ravel(),
    "s.sum()": lambda s: s.sum(),
    "s.max()": lambda s: s.max(),
    "s.mean()": lambda s: s.mean(),
    "np.any(s)": np.any,
    "np.all(s)": np.all,
    "np.where(s > 1, s, 0)": lambda s: np.where(s > 1, s, 0),
    "np.clip(s, 1, 3)": lambda s: np.clip(s, 1, 3),
    "np.round(s)": np.round,
    "np.copy(s)": np.copy,
    "np.zeros_like(s)": np.zeros_like,
    "np.broadcast_to(s, ())": lambda s: np.broadcast_to(s, ()),
    "np.nan_to_num(s)": np.nan_to_num,
    "np.dot(s, s)": lambda s: np.dot(s, s),
    "s @ s": lambda s: s @ s,
    "2 @ s": lambda s: 2 @ s,
    "round(s)": round,
    "np.flip(s)": np.flip,
    "np.einsum('->', s)": lambda s: np.einsum("->", s),
    "np.isclose(s, 2)": lambda s: np.isclose(s, 2),
    "s.shape, s.ndim, s.size": lambda s: (s.shape, s.ndim, s.size),
    "t = s; s *= 2": times_equals,
    "s[()] = 1": set_item,
    "np.add(s, 1, out=s)": lambda s: np.add(s, 1, out=s),
    "np.mean(s, out=s)": lambda s: np.mean(s, out=s),
    "r = s[...]; r[...] = 1": written(lambda s: s[...]),
    "r = s[()]; r[...] = 1": written(lambda s: s[()]),
    "r = s.T; r[...] = 1": written(lambda s: s.T),
    "r = s.reshape(()); r[...] = 1": written(lambda s: s.reshape(())),
    "r = np.squeeze(s); r[...] = 1": written(np.squeeze),
    "r = s.copy(); r[...] = 1": written(lambda s: s.copy()),
    "r = np.flip(s); r[...] = 1": written(np.flip),
    "r = s + 0; r[...] = 1": written(lambda s: s + 0),
    "r = np.where(s > 1, s, 0); r[...] = 1": written(lambda s: np.where(s > 1, s, 0)),
    "r = s[...]; r += 1": updated(lambda s: s[...]),
    "r = s.T; r += 1": updated(lambda s: s.T),
    "r = s.reshape(()); r += 1": updated(lambda s: s.reshape(())),
    "r = s.copy(); r += 1": updated(lambda s: s.copy()),
}
"""Operations whose result's kind (scalar or array) is the point: on a few dtypes."""


def described(value: Any) -> Any:
    """What numpy code can tell of `value`: a scalar's or an array's kind, dtype and
    values (a lazy 0-d array is a scalar if it prints as one), or a Python object."""
    if isinstance(value, lazy.LazyArray | np.ndarray | np.generic):
        array = np.asarray(value)
        kind = (
            "array" if array.ndim else "0-d array" if repr(value).startswith("array(") else "scalar"
        )
        return kind, array.dtype, array
    if isinstance(value, tuple | list):
        return type(value), [described(v) for v in value]
    return value


def outcome(
    case: Callable[[Any], Any], source: Callable[[Any], Any], x: Any, computed: bool = False
) -> Any:
    """The case's result on the source's 0-d value (`computed` first, or recorded with
    the case), that value and `x` after it ran (who saw a write), or the type of the
    error raised."""
    s = source(x)
    if computed:
        lazy.sync()
    try:
        return described((case(s), s, x))
    except Exception as error:  # (compared by type with numpy's own)
        return type(error)


def agree(got: Any, want: Any, where: str) -> None:
    if isinstance(want, tuple) and len(want) == 3 and isinstance(want[1], np.dtype):
        assert isinstance(got, tuple) and got[:2] == want[:2], where
        tolerance = {2: 1e-2, 4: 1e-6}.get(want[1].itemsize, 1e-12)
        if want[1].kind == "f" or want[1] == ml_dtypes.bfloat16:
            np.testing.assert_allclose(
                got[2].astype(np.float64), want[2].astype(np.float64), rtol=tolerance,
                err_msg=where,
            )  # fmt: skip
        else:
            np.testing.assert_array_equal(got[2], want[2], err_msg=where)
    elif isinstance(want, tuple | list):
        assert type(got) is type(want) and len(got) == len(want), where
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            agree(g, w, f"{where}[{k}]")
    else:
        assert type(got) is type(want), (where, got, want)
        assert got == want or (got != got and want != want), (where, got, want)


def compare(
    cases: dict[str, Callable[[Any], Any]],
    sources: dict[str, Callable[[Any], Any]],
    dtype: Any,
    computed: bool = False,
) -> list[str]:
    """Each case on each source of `dtype`: the differences from numpy, as text."""
    differences = []
    for source_name, source in sources.items():
        for name, case in cases.items():
            where = f"{np.dtype(dtype).name}: {name} of s = {source_name}"
            want = outcome(case, source, matrix(dtype))
            x = lazy.asarray(matrix(dtype)).copy()  # (an op's result, as numpy's x is its own)
            got = outcome(case, source, x, computed)
            try:
                agree(got, want, where)
            except AssertionError:
                differences.append(f"{where}: {got!r} != numpy's {want!r}")
    return differences


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_arithmetic_on_scalars_is_numpys(dtype: Any) -> None:
    """(On computed values: each case's program is then one for every source.)"""
    sources = {**SCALARS, "x[0, 1, ...]": ZERO_D_ARRAYS["x[0, 1, ...]"]}
    assert compare(ARITHMETIC, sources, dtype, computed=True) == []


@pytest.mark.parametrize("dtype", FEW_DTYPES, ids=lambda d: np.dtype(d).name)
def test_scalars_and_zero_d_arrays_are_numpys(dtype: Any) -> None:
    assert compare(SHAPES_AND_KINDS, SCALARS | ZERO_D_ARRAYS, dtype) == []
