"""`dvm.lazy` against numpy's own semantics, case by case: each function runs on numpy
arrays and on lazy arrays, and must give the same result (the same dtype, exactly, and
shape; values equal, floats within their tolerance) or raise the same type of error.

The cases are systematic where numpy's rules are: every operator on every pair of
element types and scalar kinds, every ufunc numpy has, the reductions over every kind
of axis argument, basic and advanced indexing, the shape functions, sync points,
in-place writes and the calls that fall back to numpy. Inputs are seeded.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from dvm import lazy

UNTYPED: Any = np
"""numpy, for the cases that pass what its type stubs reject (numpy's error is the point)."""

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (numpy's, on NaNs and zeros)


def sample(dtype: Any, shape: tuple[int, ...] = (3, 4), seed: int = 0) -> np.ndarray[Any, Any]:
    """Values of `dtype` with negatives (where the type has them), zeros and ones, the
    same for the same arguments whatever ran before."""
    dtype = np.dtype(dtype)
    rng = np.random.default_rng((seed, dtype.num))
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if dtype.kind == "f":
        return (rng.standard_normal(shape) * 3).astype(dtype)
    low = 0 if dtype.kind == "u" else -7
    return rng.integers(low, 8, shape).astype(dtype)


SPECIAL_FLOATS = np.array([[np.nan, 1.5, -np.inf, 0.0], [np.inf, -0.0, -2.5, 7.0]])
"""NaNs, infinities and signed zeros."""


def lazy_copy(value: Any) -> Any:
    """An ndarray argument as a lazy array (of a copy: a case may write to it)."""
    return lazy.asarray(value.copy()) if isinstance(value, np.ndarray) else value


def numpy_copy(value: Any) -> Any:
    return value.copy() if isinstance(value, np.ndarray) else value


def outcome(function: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """The function's result with lazy arrays made numpy's (a sync point), or the type
    of the error it raised, at the call or at the sync."""
    try:
        return as_numpy(function(*args))
    except Exception as error:  # (compared by type with numpy's own error)
        return type(error)


def as_numpy(value: Any) -> Any:
    if isinstance(value, lazy.LazyArray):
        return np.asarray(value)
    if isinstance(value, list | tuple) and not hasattr(value, "_fields"):
        return type(value)(as_numpy(v) for v in value)
    return value


def agree(got: Any, want: Any, where: str = "") -> None:
    if isinstance(want, type) and issubclass(want, Exception):
        assert got is want or (isinstance(got, type) and issubclass(got, want)), where
    elif isinstance(want, list | tuple):
        assert type(got) is type(want) and len(got) == len(want), where
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            agree(g, w, f"{where}[{k}]")
    elif isinstance(want, np.ndarray | np.generic):
        got = np.asarray(got)
        assert (got.dtype, got.shape) == (want.dtype, want.shape), where
        if want.dtype.kind in "fc":
            size = want.dtype.itemsize // (2 if want.dtype.kind == "c" else 1)
            tolerance = {2: 2e-3, 4: 2e-5}.get(size, 1e-12)
            np.testing.assert_allclose(
                got, np.asarray(want), rtol=tolerance, atol=tolerance, err_msg=where
            )
        else:
            np.testing.assert_array_equal(got, want, err_msg=where)
    else:
        assert type(got) is type(want), where
        assert got == want or (got != got and want != want), where  # (NaN is NaN)


def same(function: Callable[..., Any], *args: Any, name: str = "") -> None:
    """`function` gives numpy's result (or error) on lazy arrays."""
    want = outcome(function, tuple(map(numpy_copy, args)))
    got = outcome(function, tuple(map(lazy_copy, args)))
    agree(got, want, name)


def each(cases: dict[str, Callable[..., Any]], *args: Any) -> None:
    for name, function in cases.items():
        same(function, *args, name=name)


# -- operators, promotion, scalars ---------------------------------------------------

DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.uint64, np.float16, np.float32,
          np.float64]  # fmt: skip
SCALARS = [2, -3, 300, 2.5, True, np.float64(2), np.int32(3), np.uint8(3), np.float32(1.5),
           np.array(2.0), np.array(3, np.int8)]  # fmt: skip
OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
             operator.mod, operator.pow, operator.lt, operator.le, operator.eq, operator.ne,
             operator.and_, operator.or_, operator.xor, operator.lshift,
             operator.rshift]  # fmt: skip


def every_operator(x: Any, y: Any) -> list[Any]:
    """Each operator's result, or the type of its error: one segment for all."""
    results = []
    for op in OPERATORS:
        try:
            results.append(op(x, y))
        except Exception as error:
            results.append(type(error))
    return results


@pytest.mark.parametrize("left", DTYPES, ids=lambda d: np.dtype(d).name)
def test_operators_promote_as_numpy(left: Any) -> None:
    """Every operator, both ways round, between an array of `left` and arrays of every
    dtype, Python and numpy scalars and 0-d arrays (NEP 50's weak Python scalars)."""
    x = sample(left)
    for right in [*[sample(d, seed=1) for d in DTYPES], *SCALARS]:
        kind = getattr(right, "dtype", type(right).__name__)
        same(every_operator, x, right, name=f"{x.dtype} op {kind}")
        same(lambda a, b: every_operator(b, a), x, right, name=f"{kind} op {x.dtype}")


def test_comparisons_of_int64_with_uint64_run_in_numpy() -> None:
    """numpy compares int64 with uint64 exactly, in a loop of the two types (no common
    type holds both); no op of the dialect takes two types, so the call falls back
    rather than recording a segment that cannot compile."""
    lazy.reset()
    signed, unsigned = np.array([-1, 0, 5, 2**62]), np.array([0, 0, 5, 2**63 + 1], np.uint64)
    for compare in (operator.eq, operator.ne, operator.lt, operator.ge):
        same(compare, signed, unsigned, name=compare.__name__)
        same(compare, unsigned, signed, name=compare.__name__)
    assert lazy.stats()["failed"] == 0


def test_a_python_int_beyond_int64_in_a_logical_op_raises_numpys_error() -> None:
    """numpy's logical ops read a Python int as a C long: 2**63 raises OverflowError
    with an array of any dtype (it was recorded as True)."""
    for dtype in (np.int64, np.uint8, np.float32):
        for function in (np.logical_and, np.logical_xor):
            same(lambda a, f=function: f(a, 2**63), sample(dtype), name=f"{dtype}")
            same(lambda a, f=function: f(-(2**63) - 1, a), sample(dtype), name=f"{dtype}")


def test_clip_between_two_bounds_takes_numpys_clip_loop() -> None:
    """Between two bounds numpy clips in its `clip` ufunc: bfloat16 has no loop of it and
    clips in float32 (one bound is a `maximum` or `minimum`, which keeps bfloat16)."""
    x = (np.linspace(-3, 3, 31)).astype(ml_dtypes.bfloat16)
    for low, high in [(-2, 2), (-0.3, 0.3), (None, 2), (np.float16(-1), np.float64(1))]:
        same(lambda a, lo=low, hi=high: np.clip(a, lo, hi), x, name=f"clip {low} {high}")
    same(lambda a: np.clip(a, -2, 2.5), np.arange(-5, 5, dtype=np.int8), name="int8")


def test_integer_division_and_powers_follow_numpy() -> None:
    low, high = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    # (divisors near the minimum: a - a % b leaves the range, as 17 - 17 % low does)
    a = np.array([-7, 7, -7, 7, 0, -1, 5, low, 17, -17, high, low + 1], np.int32)
    b = np.array([2, -2, -2, 2, 3, 0, -5, -1, low, low, low, low], np.int32)
    each(
        {
            "//": lambda x, y: x // y,
            "%": lambda x, y: x % y,
            "fmod": np.fmod,
            "divmod": lambda x, y: divmod(x, y),
            "//-1": lambda x, y: x // -1,
            "** 0..4": lambda x, y: [x**k for k in range(5)],
            "** -1": lambda x, y: x**-1,
            "** array": lambda x, y: x ** abs(y),
            "** negative array": lambda x, y: x**y,
            "2 ** x": lambda x, y: 2 ** abs(x % 8),
            "2.0 ** x": lambda x, y: 2.0**x,
            "** 0.5": lambda x, y: abs(x) ** 0.5,
            "/": lambda x, y: x / y,
        },
        a,
        b,
    )
    f = np.array([-7.5, 7.5, -7, 7, 0, -1, 5, 1, np.inf, np.nan])
    g = np.array([2, -2, -2, 2, 3, 0, -5, 0.1, 2, 1])
    each(
        {
            "//": operator.floordiv,
            "%": operator.mod,
            "fmod": np.fmod,
            "**": operator.pow,
            "** -2": lambda x, y: x**-2,
            "** 3.0": lambda x, y: x**3.0,
        },
        f,
        g,
    )


def test_half_floor_division_rounds_once_as_numpy() -> None:
    """numpy's float16 `//` computes in float32 and rounds once: a quotient of 13,132.3
    floors to 13,132, which rounds to 13,136 (rounding the division first gave 13,128)."""
    a = np.array([65504, -65504, 30000, -12345, 1000.5, 7], np.float16)
    b = np.array([-4.988, 3.0, 7.1, 2.3, 0.3, -0.0], np.float16)
    for function in (operator.floordiv, divmod):
        want = function(a, b)
        got = as_numpy(function(lazy.asarray(a), lazy.asarray(b)))
        np.testing.assert_array_equal(got, want, strict=True)  # (bit for bit, NaNs equal)


def test_masked_mean_keeps_a_bfloat16_dtype() -> None:
    """`np.mean(x, where=mask)` of bfloat16 is bfloat16, as numpy's (not float64)."""
    x = np.array([[1.5, 2.25, -3.0], [7.0, -0.5, 4.0]], ml_dtypes.bfloat16)
    mask = np.array([True, False, True])
    for axis in (None, 0, 1):
        want = np.mean(x, axis=axis, where=mask)
        got = as_numpy(np.mean(lazy.asarray(x), axis=axis, where=mask))
        np.testing.assert_array_equal(got, want, strict=True)


def test_a_mean_in_float16_rounds_the_sum_to_a_half_first() -> None:
    """numpy's `mean(dtype=np.float16)` sums in float16: 60000 + 60000 is inf there, so
    the mean is inf (without `dtype=`, a mean of halves sums in float32: 60000)."""
    for x in (np.array([60000, 60000, 7], np.int32), np.array([[6e4, 6e4, 1]], np.float16)):
        for axis in (None, -1):
            want = np.mean(x, axis=axis, dtype=np.float16)
            got = as_numpy(lazy.asarray(x).mean(axis=axis, dtype=np.float16))
            np.testing.assert_array_equal(got, want, strict=True)


# -- ufuncs -----------------------------------------------------------------------------

UFUNCS = sorted(
    (u for u in vars(np).values() if isinstance(u, np.ufunc) and u.nin <= 2),
    key=lambda u: u.__name__,
)


@pytest.mark.parametrize(
    "dtype", [np.bool_, np.int8, np.uint8, np.int64, np.float16, np.float32, np.float64]
)
def test_every_ufunc_matches_numpy(dtype: Any) -> None:
    """Each of numpy's ufuncs: recorded, or run in numpy; the same result either way
    (NaNs, infinities and signed zeros included for floats)."""
    x = SPECIAL_FLOATS.astype(dtype) if np.dtype(dtype).kind == "f" else sample(dtype, (2, 4))
    other = x[::-1].copy()
    for u in UFUNCS:
        if u.nin == 1:
            same(u, x, name=f"{u.__name__}({x.dtype})")
        else:
            same(u, x, other, name=f"{u.__name__}({x.dtype}, {x.dtype})")
            same(lambda a, u=u: u(a, 2), x, name=f"{u.__name__}({x.dtype}, 2)")


@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float32, np.float64])
def test_atan2_and_copysign_record_with_numpys_signs(dtype: Any) -> None:
    """Instructions of their own (numpy's ufuncs on the VM): recorded in the dtype of
    numpy's loop (float16 for int8), the signs of zeros and NaNs included."""
    x = SPECIAL_FLOATS.astype(dtype) if np.dtype(dtype).kind == "f" else sample(dtype, (2, 4))
    y = x[::-1, ::-1].copy()
    lazy.reset()
    for u in (np.arctan2, np.copysign):
        want = u(x, y)
        got = np.asarray(u(lazy.asarray(x), y))
        assert got.dtype == want.dtype, u.__name__
        np.testing.assert_array_equal(got, want, err_msg=u.__name__)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want), err_msg=u.__name__)
    assert lazy.stats()["segments"] == 2 and not lazy.stats()["fallbacks"]


# -- reductions -------------------------------------------------------------------------

REDUCTIONS = ["sum", "mean", "max", "min", "prod", "var", "std", "argmax", "argmin",
              "cumsum", "cumprod", "any", "all", "ptp", "average", "count_nonzero"]  # fmt: skip
AXES = [None, 0, 1, -1, -2, (0, 1), (), (-1, 0), 2, (0, 0), True]


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions_match_numpy(name: str) -> None:
    """Every kind of axis (negative, tuples, empty, out of range, repeated, a bool),
    keepdims, dtype=, and empty arrays, in each dtype numpy sums differently."""
    function = getattr(np, name)
    for dtype in [np.bool_, np.int8, np.uint8, np.int32, np.float16, np.float32, np.float64]:
        if np.dtype(dtype) == np.float16 and name.startswith("cum"):
            continue  # numpy rounds each f16 partial sum, the program once: see docs/lazy.md
        x = sample(dtype)
        for axis in AXES:
            same(lambda a, k=axis: function(a, axis=k), x, name=f"{name}({x.dtype}, {axis})")
            same(lambda a, k=axis: function(a, axis=k, keepdims=True), x, name=f"{name} keepdims")
        for accumulate in [np.float64, np.int32, np.int8, np.bool_]:
            same(lambda a, t=accumulate: function(a, dtype=t), x, name=f"{name} dtype={accumulate}")
    for shape in [(0,), (0, 3), (3, 0)]:
        for axis in [None, 0, -1]:
            same(lambda a, k=axis: function(a, axis=k), np.ones(shape, np.float32), name=f"{shape}")


def test_reductions_of_nans_and_ties_match_numpy() -> None:
    x = np.array([[1.0, np.nan, 3.0, 3.0], [2.0, 5.0, 5.0, -1.0]], np.float32)
    each(
        {
            "max": lambda a: (a.max(), a.max(1), a.min(0)),
            "arg": lambda a: (a.argmax(), a.argmax(1), a.argmin(0)),
            "maximum": lambda a: (np.maximum(a, 0), np.minimum(a, np.nan), np.fmax(a, 0)),
            "compare": lambda a: (a == a, a != a, a < np.nan, np.nan >= a),
        },
        x,
    )


# -- broadcasting, indexing, shapes -----------------------------------------------------

SHAPES = [(), (1,), (4,), (3,), (3, 1), (1, 4), (2, 1, 4), (0,), (1, 0)]


def test_broadcasting_matches_numpy() -> None:
    for s in SHAPES:
        for t in SHAPES:
            a, b = np.ones(s, np.float32), np.full(t, 2, np.int32)
            same(lambda x, y: (x + y, np.where(x > 0, x, y)), a, b, name=f"{s} {t}")


KEYS = [0, -1, (0, 1), (-1, -2), slice(None, None, -1), (slice(None), slice(None, None, -2)),
        (Ellipsis, 0), (None, 0), (Ellipsis, None), (slice(1, None), None, slice(None, -1)),
        5, (0, 5), (slice(10, 20),), (slice(None, None, 0),), [0, 2], ([0, 2], [1, 3]),
        np.array([True, False, True]), (slice(None), [0, 3]), (slice(None), np.array([-1, 0])),
        (0, Ellipsis, 0), (Ellipsis, Ellipsis), np.int64(1), (np.int32(1), slice(None)),
        [[0, 1], [1, 2]], np.array(1), (0.5,), [], (1, [0, 1]), True, None, (0, 0, 0),
        ([0, 1], slice(None), None), (slice(None), [True, False, True, False])]  # fmt: skip


def test_indexing_matches_numpy() -> None:
    """Basic indexing records; masks and other advanced indexing copy or fall back; a
    bad key raises numpy's error."""
    x = sample(np.float32)
    for key in KEYS:
        same(lambda a, k=key: a[k], x, name=repr(key))
    same(lambda a: a[a > 0], x, name="a lazy mask")
    same(lambda a: a[np.argmax(a, axis=0)], x, name="lazy indices")


def test_shape_functions_match_numpy() -> None:
    x = sample(np.float64, (2, 3, 4))
    cases: dict[str, Callable[..., Any]] = {}
    for shape in [(-1,), (4, -1), (-1, 2, 3), (6, 4), (24, 1), (1, -1, 1), (5, -1), (-1, -1),
                  (0, -1), 24, (2, 3, 4, 1), (True, 24), (2.0, 12)]:  # fmt: skip
        cases[f"reshape {shape}"] = lambda a, s=shape: a.reshape(s)
    for axes in [None, (1, 0, 2), (2, 0, 1), (-1, 0, 1), (0, 0, 1), (0, 1)]:
        cases[f"transpose {axes}"] = lambda a, p=axes: np.transpose(a, p)
    for axis in [0, 1, -1, 3, -4, None, (0,), True]:
        cases[f"concatenate {axis}"] = lambda a, k=axis: np.concatenate([a, a * 2], axis=k)
        cases[f"stack {axis}"] = lambda a, k=axis: np.stack([a, a.astype(np.float32)], axis=k)
    cases |= {
        "reshape()": lambda a: a.reshape(),
        "reshape args": lambda a: a.reshape(4, 6),
        ".T": lambda a: a.T,
        "swapaxes": lambda a: a.swapaxes(0, -1),
        "squeeze": lambda a: a[:, :1].squeeze(),
        "bad squeeze": lambda a: a.squeeze(0),
        "expand_dims": lambda a: np.expand_dims(a, (0, -1)),
        "ravel": lambda a: a.ravel(),
        "concatenate an array": lambda a: np.concatenate(a),
        "stack an array": lambda a: np.stack(a),
        "concatenate casting": lambda a: np.concatenate([a, a.astype(np.int32)], casting="no"),
        "vstack casting": lambda a: np.vstack([a[0], a[1].astype(np.int32)], casting="no"),
        "concatenate mixed": lambda a: np.concatenate([a[0], np.zeros((1, 4), np.int8)]),
        "concatenate 0-d": lambda a: np.concatenate([a[0, 0, 0], a[0, 0, 1]]),
        "stack 0-d": lambda a: np.stack([a[0, 0, 0], a[1, 0, 0]]),
        "hstack": lambda a: np.hstack([a[0], a[1]]),
        "vstack": lambda a: np.vstack([a[0], a[1]]),
        "diff axis=None": lambda a: UNTYPED.diff(a, axis=None),
        "diff axis=(0,)": lambda a: UNTYPED.diff(a, axis=(0,)),
        "pad overflow": lambda a: np.pad(a.astype(np.int8), 1, constant_values=300),
        "pad fill": lambda a: np.pad(a.astype(np.int32), 1, constant_values=2.7),
        "average of nothing": lambda a: np.average(a[:0], axis=-1),
        "average of no rows": lambda a: np.average(a[:0], axis=0),
    }
    each(cases, x)


# -- conversions ----------------------------------------------------------------------


def test_astype_matches_numpy_inside_the_targets_range() -> None:
    """A float to an integer truncates, and wraps into a narrower type as numpy's cast
    does (-1.5 to uint8 is 255, 300.7 to int8 is 44); NaN, infinities and values
    outside int32 are the platform's in numpy (see docs/lazy.md): compared only where
    the target holds them."""
    values = np.array([-300.7, -128.5, -1.5, -0.5, 0.5, 1.5, 127.9, 255.9, 300.7, 7e4, -7e4])
    targets = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
               np.float16, np.float32, np.float64, np.bool_, np.complex64]  # fmt: skip
    for source in [np.float32, np.float64]:
        x = values.astype(source)
        for target in targets:
            same(lambda a, t=target: a.astype(t), x, name=f"{x.dtype} to {target}")
            same(lambda a, t=target: (a * 2).astype(t), x, name=f"computed {x.dtype} to {target}")
    big = np.array([2.0**63, 1.5e19, 3e9, 5.0, -1.5])
    same(lambda a: (a + 0).astype(np.uint64), big, name="uint64 above int64")
    same(lambda a: ((a % 2**32).astype(np.uint32), (a - 2e19).astype(np.int64)), big)
    each(
        {
            "sum": lambda a: (a * 50).astype(np.uint8).cumsum(),
            "abs": lambda a: np.abs((a * 10).astype(np.uint8)),
            "astype names": lambda a: (
                a.astype("int32"),
                a.astype(float),
                a.astype(int),
                a.astype("f"),
            ),
        },
        sample(np.float32),
    )


# -- sync points, methods, in-place writes ---------------------------------------------------


FOUR = [1, 2, 3, 4]


def test_sync_points_and_python_protocols_match_numpy() -> None:
    x = sample(np.float32)
    each(
        {
            "len": len,
            "len of 0-d": lambda a: len(a[0, 0]),
            "iterate rows": lambda a: [r.sum() for r in a],
            "iterate a row": lambda a: list(a[0]),
            "iterate 0-d": lambda a: list(a.sum()),
            "max()": lambda a: max(a[0]),
            "sorted()": lambda a: sorted(a[1]),
            "sum()": lambda a: sum(a.ravel()),
            "in": lambda a: (float(a[1, 2]) in a, 1e9 in a),
            "round": lambda a: (round(a[0, 0]), round(a.sum(), 2)),
            "round of an array": lambda a: round(a),
            "float": lambda a: float(a.sum()),
            "int": lambda a: int(a[0, 0]),
            "float of many": lambda a: float(a[0]),
            "bool": lambda a: bool(a[0, 0] > 0),
            "bool of many": lambda a: bool(a),
            "repr": repr,
            "repr of a reduction": lambda a: repr(a.sum()),
            "repr of an element": lambda a: repr(a[0, 1]),
            "str": lambda a: str(a.max()),
            "format": lambda a: f"{a.sum():.3f}",
            "np.float32": lambda a: np.float32(a.sum()),
            "np.zeros(n)": lambda a: np.zeros(a.argmax() + 1),
            "range(n)": lambda a: list(range(a.argmax())),
            "== str": lambda a: a == "a",
            "!= str": lambda a: a != "a",
            "== None": lambda a: a == None,  # noqa: E711
            "+ list": lambda a: a + FOUR,
            "list +": lambda a: FOUR + a,
            "+ str": lambda a: a + "a",
            "shape": lambda a: (a.shape, a.ndim, a.size, a.dtype, np.shape(a), np.ndim(a)),
            "named tuple": lambda a: np.linalg.eigh(a[:, :3] @ a[:, :3].T).eigenvalues,
            "svd": lambda a: np.linalg.svd(a, compute_uv=False),
        },
        x,
    )


IN_PLACE = {"+=": operator.iadd, "-=": operator.isub, "*=": operator.imul,
            "/=": operator.itruediv, "//=": operator.ifloordiv, "%=": operator.imod,
            "**=": operator.ipow, "&=": operator.iand}  # fmt: skip


def test_in_place_operators_match_numpy() -> None:
    """`x op= y` on a lazy array, and on a numpy array with a lazy operand (which stays
    that numpy array, written in place)."""
    for name, op in IN_PLACE.items():
        for x in [sample(np.float32), sample(np.int32)]:
            operands = [sample(np.float64), sample(np.int32, seed=1), sample(np.float32, (4,))]
            for y in [*operands, 2, 0.5, np.ones((2, 4))]:
                same(op, x, y, name=f"{x.dtype} {name} {getattr(y, 'dtype', y)}")
                if isinstance(y, np.ndarray):
                    target = x.copy()
                    result = op(target, lazy.asarray(y)) if can(op, x, y) else None
                    assert result is None or result is target

    def view_then_write(x: Any) -> Any:
        row, flat = x[0], x.reshape(-1)
        x += 1
        flat[3] = -7.0
        return row, x

    def masked(x: Any) -> Any:
        x[x > 0] *= -1
        x[:, 0] = x[1]
        return x

    each({"views": view_then_write, "masked": masked}, sample(np.float32))


def can(op: Callable[[Any, Any], Any], x: Any, y: Any) -> bool:
    try:
        op(x.copy(), y)
    except Exception:
        return False
    return True


def test_out_arguments_return_what_numpy_returns() -> None:
    x = lazy.asarray(sample(np.float32))
    out = np.zeros((3, 4), np.float32)
    assert np.add(x, 1, out=out) is out
    assert np.multiply(x, 2, out=(out,)) is out
    q, r = np.zeros((3, 4), np.float32), np.zeros((3, 4), np.float32)
    quotient, remainder = np.divmod(x, 2, out=(q, r))
    assert quotient is q and remainder is r
    total = np.zeros(4, np.float32)
    assert np.sum(x, axis=0, out=total) is total
    np.testing.assert_allclose(total, np.asarray(x).sum(0), rtol=1e-6)


# -- functions lazy does not record, and loops on data ----------------------------------------


def test_unsupported_functions_give_numpys_answer() -> None:
    x = sample(np.float64, (4, 4))
    each(
        {
            "sort": np.sort,
            "unique": lambda a: np.unique(np.round(a), return_counts=True),
            "norm": lambda a: (
                np.linalg.norm(a),
                np.linalg.norm(a, 1),
                np.linalg.norm(a, "nuc"),
                np.linalg.norm(a, axis=0),
            ),
            "einsum": lambda a: (
                np.einsum("ii", a),
                np.einsum("ij,jk->ik", a, a),
                np.einsum("...j->...", a),
            ),
            "clip": lambda a: (np.clip(a, -0.5, 0.5), np.clip(a, a[0], None), np.clip(a, 1, -1)),
            "abs": np.abs,
            "round": lambda a: (np.round(a), np.round(a, 2), np.round(a * 100, -1)),
            "median": lambda a: np.median(a, axis=1),
            "percentile": lambda a: np.percentile(a, [10, 90], axis=0),
            "nonzero": lambda a: np.nonzero(a > 0),
            "argsort": lambda a: np.argsort(a, axis=1),
            "searchsorted": lambda a: np.searchsorted(np.sort(a.ravel()), 0.0),
            "cumsum rev": lambda a: np.cumsum(a[::-1], 0)[::-1],
            "inv": lambda a: np.linalg.inv(a + 4 * np.eye(4)),
            "qr": lambda a: np.abs(np.linalg.qr(a).R),
            "histogram": lambda a: np.histogram(a, bins=3, range=(-2, 2))[0],
            "isclose": lambda a: np.isclose(a, a + 1e-9),
            "where 1 arg": lambda a: np.where(a > 0),
            "take_along_axis": lambda a: np.take_along_axis(a, np.argsort(a, 1), 1),
            "pad edge": lambda a: np.pad(a, 1, mode="edge"),
            "tile": lambda a: np.tile(a, (2, 1)),
            "sliding window": lambda a: np.lib.stride_tricks.sliding_window_view(a, 3, axis=1).mean(
                -1
            ),
            "mixed with numpy": lambda a: np.ones(4) * a + np.arange(4)[:, None] @ a[:1],
        },
        x,
    )


def test_loops_on_data_match_numpy() -> None:
    def halve_until_small(x: Any) -> Any:
        steps = 0
        while float(x.max()) > 0.1:
            x = x * 0.5
            steps += 1
        return x, steps

    def accumulate_rows(x: Any) -> Any:
        total, acc = 0.0, np.zeros(x.shape[1], x.dtype)
        for row in x:
            total = total + row.sum()
            acc += row
        return total, acc

    def branch_per_row(x: Any) -> Any:
        for i in range(len(x)):
            x = x + i if x[i].sum() > 0 else x - i
        return x

    def fill_numpy(x: Any) -> Any:
        out = np.empty(x.shape, x.dtype)
        for i in range(len(x)):
            out[i] = x[i] * 2
        out[x > 1] = 0
        return out, np.array([x[i].max() for i in range(len(x))])

    each(
        {
            "while": halve_until_small,
            "rows": accumulate_rows,
            "branch": branch_per_row,
            "numpy targets": fill_numpy,
        },
        np.abs(sample(np.float32)),
    )


# -- numpy's positional arguments and keywords ----------------------------------------------


def test_positional_arguments_take_numpys_places() -> None:
    """A sixth argument of `np.sum` is `initial`, not `where`; methods and functions
    take the arguments numpy's signatures give them, or run in numpy."""
    x = sample(np.float64)
    assert float(np.sum(lazy.asarray(x), None, None, None, False, True)) == x.sum() + 1
    each(
        {
            "sum initial": lambda a: (
                np.sum(a, None, None, None, False, True),
                a.sum(0, None, None, False, 5),
                np.prod(a, 0, None, None, False, 2),
            ),
            "max initial": lambda a: (np.max(a, 0, None, False, 100), a.min(-1, None, False, -9)),
            "nansum initial": lambda a: np.nansum(a, 0, None, None, False, 3),
            "diff prepend": lambda a: np.diff(a, 1, -1, 0),
            "like": lambda a: (UNTYPED.empty_like(prototype=a).shape, np.full_like(a, 3, np.int8)),
            "split ary": lambda a: np.split(ary=a, indices_or_sections=3),
            "any method": lambda a: (a.any(0, None, None, True), a.all(-1, None)),
            "any method out": lambda a: a.any(0, None, True),  # (numpy reads True as `out`)
            "clip out": lambda a: a.clip(-1, 1, np.zeros((3, 4))),
            "astype": lambda a: (a.astype(np.float32, "C", "unsafe"), a.astype(np.int8, "K")),
            "astype casting": lambda a: a.astype(np.int32, casting="same_kind"),
            "copy order": lambda a: (a.copy(order="F"), a.T.copy("K").flags.f_contiguous),
            "reshape copy": lambda a: a.reshape(12, copy=True),
        },
        x,
    )


def test_dot_of_bfloat16_is_bfloat16_where_matmul_gives_float32() -> None:
    x = (np.arange(9).reshape(3, 3) * 0.37 - 1).astype(ml_dtypes.bfloat16)
    got = np.dot(lazy.asarray(x), lazy.asarray(x))
    assert np.asarray(got).dtype == ml_dtypes.bfloat16
    each({"dot": lambda a: (np.dot(a, a), np.dot(a[0], a[1]), a.dot(a[0]), a @ a)}, x)


def test_a_masked_mean_in_an_integer_dtype_truncates_as_numpys() -> None:
    x = np.array([[1, 2, 4], [7, -5, 3]], np.int8)
    got = np.mean(lazy.asarray(x), axis=1, dtype=np.int32, where=x > 0)
    np.testing.assert_array_equal(got, np.array([2, 5], np.int32))
    assert np.asarray(got).dtype == np.int32
    each({"mean": lambda a: np.mean(a, dtype=np.uint8, where=a > 0)}, x * 1.7)


def test_a_fallback_returning_its_argument_returns_the_lazy_array() -> None:
    x = lazy.asarray(SPECIAL_FLOATS.copy())
    assert np.nan_to_num(x, copy=False, nan=5.0) is x
    assert x.astype(np.float64, "C", copy=False) is x
    np.testing.assert_array_equal(x[:, :2], [[5.0, 1.5], [np.finfo(np.float64).max, -0.0]])


def test_einsum_sums_in_the_operands_dtype() -> None:
    """`np.einsum("ij->", ints)` sums int32s in int32 (wrapping as numpy's), where
    `np.sum` takes int64."""
    x = (np.arange(12, dtype=np.int32) * 400_000_000).reshape(3, 4)
    got = np.asarray(np.einsum("ij->", lazy.asarray(x)))
    assert got.dtype == np.int32 and got == np.einsum("ij->", x)
    each({"einsum": lambda a: (np.einsum("ij->i", a), np.einsum("ij,jk->i", a, a.T))}, x)
    halves = x.astype(ml_dtypes.bfloat16)  # (numpy's einsum refuses them: TypeError)
    each({"sum": lambda a: np.einsum("ij->", a), "view": lambda a: np.einsum("ij->ji", a)}, halves)


def test_complex_arrays_run_in_numpy_with_no_program_refused() -> None:
    """A complex lazy array (or a complex numpy operand beside a lazy one) records no
    op: each call gives numpy's values, and no segment of a type the compiler lacks is
    attempted (it would warn and run op by op)."""
    z = sample(np.float32, (3, 3)) + 1j * sample(np.float32, (3, 3), seed=1)
    x = sample(np.float64, (3, 3))
    lazy.reset()
    each(
        {
            "argmin": lambda a, b: np.argmin(a.real + a.imag),
            "copies": lambda a, b: (a.copy(), a[[0, 2]], a[np.triu_indices(3)], a[0][1]),
            "repeat take": lambda a, b: (np.repeat(a, 2), np.take(a, [0, 4])),
            "einsum": lambda a, b: np.einsum("i,j->ij", np.asarray(a)[0], b[0]),
            "concatenate": lambda a, b: np.concatenate([b, np.asarray(a)]),
        },
        z,
        x,
    )
    assert lazy.stats()["failed"] == 0
