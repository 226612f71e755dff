"""`dvm.lazy` on numpy's functions that rearrange elements (`flip` and negative-step
slices, `roll`, `tile`, `repeat`, `pad`, `take_along_axis`, `diff`, `tril`/`triu`,
`vstack`, `hstack`), small functions built of others (`ptp`, `count_nonzero`,
`average`, `outer`, `nan_to_num`), bitwise ufuncs, `ufunc.reduce`, and ufuncs composed
of the dialect's (`log2`, `exp2`, `logaddexp`...): numpy's results on a stream of
shapes (1 and primes among them), each recorded and compiled, none run in numpy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dvm
from dvm import lazy

ROWS = [4, 1, 7, 13]
"""Sizes of the dim the stream varies."""

CASES: dict[str, Callable[[Any], Any]] = {
    "flip last": lambda x: np.flip(x, -1) * 2,
    "flip all": lambda x: np.flip(x) + 1,
    "negative step": lambda x: x[::-1, 5:0:-2] * 2,
    "negative step to the start": lambda x: x[:, ::-3] + 1,
    "roll": lambda x: np.roll(x, 3, axis=1) + 0,
    "roll negative": lambda x: np.roll(x, -2, axis=0) * 1,
    "roll flat": lambda x: np.roll(x, 5) - 1,
    "tile": lambda x: np.tile(x, (2, 3)) + 1,
    "tile more dims": lambda x: np.tile(x, (2, 1, 2)) * 2,
    "tile int": lambda x: np.tile(x, 2) + 0,
    "repeat axis": lambda x: np.repeat(x, 3, axis=0) + 0,
    "repeat flat": lambda x: np.repeat(x, 2) + 0,
    "pad": lambda x: np.pad(x, ((1, 2), (0, 3))) + 0,
    "pad value": lambda x: np.pad(x, 2, constant_values=-1.5) * 1,
    "take numpy ids": lambda x: np.take(x, np.array([3, 0, 10, 3]), axis=1) * 2,
    "take a list of ids": lambda x: np.take(x * 2, [[1, 0], [5, 5]], axis=-1),
    "take_along_axis argmax": lambda x: np.take_along_axis(x, np.argmax(x, -1, keepdims=True), -1),
    "take_along_axis argmin": lambda x: np.take_along_axis(x, np.argmin(x, 0, keepdims=True), 0),
    "diff": lambda x: np.diff(x, axis=1),
    "diff twice": lambda x: np.diff(x, n=2, axis=-1),
    "tril": lambda x: np.tril(x),
    "triu": lambda x: np.triu(x, 1) + 0,
    "tril k": lambda x: np.tril(x, -1) * 2,
    "ptp": lambda x: np.ptp(x, axis=1),
    "count_nonzero": lambda x: np.count_nonzero(x > 0, axis=0),
    "average": lambda x: np.average(x, axis=1),
    "add.reduce": lambda x: np.add.reduce(x),
    "maximum.reduce": lambda x: np.maximum.reduce(x, axis=1, keepdims=True),
    "multiply.reduce": lambda x: np.multiply.reduce(x, axis=-1),
    "logical_or.reduce": lambda x: np.logical_or.reduce(x > 1, axis=1),
    "invert": lambda x: ~(x * 10).astype(np.int32),
    "invert bools": lambda x: ~(x > 0) & np.invert(x < 1),
    "shifts": lambda x: ((x * 10).astype(np.int32) << 2) + ((x * 10).astype(np.int64) >> 1),
    "fabs positive": lambda x: np.fabs(x) + np.positive(x),
    "log2 log10": lambda x: np.log2(np.abs(x) + 1) + np.log10(np.abs(x) + 0.5),
    "exp2": lambda x: np.exp2(x),
    "degrees": lambda x: np.deg2rad(x * 90) + np.rad2deg(x) + np.radians(x) + np.degrees(x),
    "logaddexp": lambda x: np.logaddexp(x, x[:1] * 3) + np.logaddexp(x, x),
    "vstack": lambda x: np.vstack([x, x[:1] * 2, x[0]]),
    "hstack": lambda x: np.hstack([x, x[:, :2] + 1]) * 1,
    "hstack 1-d": lambda x: np.hstack([x[0], x[:, 0]]) * 1,
    "outer": lambda x: np.outer(x[0], x[:, 1]),
    "nan_to_num": lambda x: np.nan_to_num(np.log(x) / (x - x[:, :1])),
    "split": lambda x: np.split(x[:, :10], 2, axis=1)[1] * 2,
    "split at": lambda x: np.split(x, [2, 5], axis=1)[2] - 1,
    "array_split": lambda x: np.hstack([p * k for k, p in enumerate(np.array_split(x, 3, 1))]),
    "norm": lambda x: np.linalg.norm(x, axis=1) + np.linalg.norm(x),
    "norm ords": lambda x: np.stack(
        [np.linalg.norm(x, p, axis=1) for p in (1, 2, 3.5, np.inf, -np.inf)]
    ),
    "norm fro": lambda x: np.linalg.norm(x, "fro", axis=(0, 1), keepdims=True) * x,
    "norm ints": lambda x: np.linalg.norm((x * 10).astype(np.int32), axis=0),
    "rot90": lambda x: np.rot90(x) * 1,
    "rot90 twice": lambda x: np.rot90(x, 2) + 0,
    "rot90 back": lambda x: np.rot90(x, -1, axes=(1, 0)) + 0,
    "flipud fliplr": lambda x: np.flipud(x) + np.fliplr(x),
    "roll axes": lambda x: np.roll(x, (1, -2), axis=(0, 1)) + 0,
    "column_stack": lambda x: np.column_stack([x[:, 0], x, x[:, 1] > 0]) * 1,
    "moveaxis": lambda x: np.moveaxis(x[None], 0, -1) + 0,
    "round decimals": lambda x: np.round(x * 100, 1) + np.round(x * 100, -1),
    "round bools": lambda x: np.round(x > 0),
    "ufunc outer": lambda x: np.subtract.outer(x[:, 0], x[0]),
    "divmod": lambda x: sum(np.divmod(x * 10, 3)),
    "bool arithmetic": lambda x: ((x > 0) + (x < -1)) * np.maximum(x > 0, x < 1),
    "number to a power": lambda x: 2**x + 0.5**x,
    "bool scalar": lambda x: x + True,
    "methods": lambda x: (
        x.ravel().reshape(x.shape)
        + x.flatten().reshape(x.shape)
        + x.clip(-1, 1)
        + x.round(1)
        + x[:, :1].squeeze(1)[:, None]
    ),
    "dot repeat methods": lambda x: x.dot(x.T).repeat(2, axis=1),
}


@pytest.mark.parametrize("name", CASES)
def test_a_rearrangement_is_numpys_and_compiles(name: str) -> None:
    function = CASES[name]
    rng = np.random.default_rng(len(name))
    lazy.reset()
    for rows in ROWS:
        x = rng.standard_normal((rows, 11)).astype(np.float32)
        with np.errstate(all="ignore"):
            want = function(x)
            got = np.asarray(function(lazy.asarray(x)))
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    stats = lazy.stats()
    assert stats["fallbacks"] == {} and stats["failed"] == 0
    assert stats["compiled"] >= 1


HIGH_RANK: dict[str, Callable[[Any], Any]] = {
    "tile one dim": lambda x: np.tile(x, (1, 2)) + 1,
    "tile every dim": lambda x: np.tile(x, (2,) * 6) * 2,
    "tile ones": lambda x: np.tile(x, (1, 1, 1)) - 1,
    "repeat": lambda x: np.repeat(x, 3, axis=2) + 0,
    "repeat flat": lambda x: np.repeat(x, 2) + 0,
}


@pytest.mark.parametrize("name", HIGH_RANK)
def test_tile_and_repeat_of_a_high_rank_array_compile(name: str) -> None:
    """A repeated dim is a broadcast of a new unit dim beside it: only the repeated dims
    get one, as many at a time as the VM's rank (8) allows, so a 5-d or 6-d array tiled
    along every dim still compiles (each dim got one, so 10-d and 12-d programs ran in
    numpy)."""
    function = HIGH_RANK[name]
    rng = np.random.default_rng(len(name))
    lazy.reset()
    for shape in [(2, 3, 1, 2, 3), (2, 1, 3, 2, 2, 2), (1, 0, 2, 3, 1)]:
        x = rng.integers(-5, 6, shape).astype(np.float32)
        got = np.asarray(function(lazy.asarray(x)))
        want = function(x)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    assert lazy.stats()["failed"] == 0 and lazy.stats()["fallbacks"] == {}


def test_a_tile_by_ones_is_a_new_array() -> None:
    x = lazy.asarray(np.arange(6.0).reshape(2, 3)) * 1
    tiled = np.tile(x, (1, 1))
    tiled[0, 0] = 99.0
    assert float(np.asarray(x)[0, 0]) == 0.0 and float(np.asarray(tiled)[0, 0]) == 99.0


def test_a_view_made_by_a_negative_step_writes_through() -> None:
    """numpy's `x[::-1]` is a view: a write into it lands in `x`, as in numpy."""
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = lazy.asarray(base.copy())
    y = (x * 1)[::-1, ::-2]
    y[0, 0] = 100.0
    want = base * 1
    want[::-1, ::-2][0, 0] = 100.0
    np.testing.assert_array_equal(np.asarray(y), want[::-1, ::-2])


def test_split_pieces_are_views() -> None:
    """numpy's `split` gives views: a write into a piece lands in the array."""
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = lazy.asarray(base.copy()) * 1
    left, right = np.split(x, 2, axis=1)
    right[1, 0] = -7.0
    want = base * 1
    np.split(want, 2, axis=1)[1][1, 0] = -7.0
    np.testing.assert_array_equal(np.asarray(x), want)
    np.testing.assert_array_equal(np.asarray(left), want[:, :2])


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.take_along_axis(m.ones((3, 4)), m.array([[5], [0], [1]]), 1),  # out of range
        lambda m: m.take_along_axis(m.ones((3, 4)), m.array([[-1], [0], [1]]), 1),  # negative
        lambda m: m.pad(m.ones((2, 2)), -1),
        lambda m: m.roll(m.ones((2, 2)), 1, axis=2),
        lambda m: m.tile(m.ones((2, 2)), -1),
        lambda m: m.diff(m.ones((2, 0)), axis=1),
        lambda m: m.split(m.ones((2, 5)), 2, axis=1),  # sections that do not divide
        lambda m: m.linalg.norm(m.ones((2, 3, 4)), "fro"),
        lambda m: m.insert(m.ones(3), 5, 1.0),  # position out of range
        lambda m: m.insert(m.ones(3, "i8"), 0, float("nan")),  # a cast numpy rejects
    ],
)
def test_what_these_functions_reject_is_numpys_to_say(call: Callable[[Any], Any]) -> None:
    """Arguments the handlers do not record run in numpy: numpy's result or its error."""

    class Lazy:
        def __getattr__(self, name: str) -> Any:
            if name in ("ones", "array"):
                return lambda *a: lazy.asarray(getattr(np, name)(*a))
            if name == "insert":  # (the array to insert into, made lazy)
                return lambda a, *rest: np.insert(lazy.asarray(np.asarray(a)), *rest)
            return getattr(np, name)

    try:
        want: Any = call(np)
    except Exception as error:  # numpy's error, raised by the lazy call too
        with pytest.raises(type(error)):
            np.asarray(call(Lazy()))
        return
    np.testing.assert_array_equal(np.asarray(call(Lazy())), want)


@pytest.mark.parametrize("refused", [False, True])
def test_top_k_values_and_indices(monkeypatch: pytest.MonkeyPatch, refused: bool) -> None:
    """`record.top_k` (what the torch backend records for `topk`): the k largest,
    descending, equal ones by the lower index first, and their indices; compiled, or
    run in numpy when the compiler refuses the segment."""
    from dvm.lazy.array import LazyArray
    from dvm.lazy.record import top_k

    if refused:

        def refuse(*args: Any, **kwargs: Any) -> Any:
            raise dvm.errors.CompileError("refused")

        monkeypatch.setattr(dvm, "compile", refuse)
    lazy.reset()
    x = np.array([[3, 1, 3, 2], [0, 5, -1, 5], [2, 2, 2, 2]], np.float32)
    values, indices = map(LazyArray, top_k(lazy.asarray(x * 1)._node, 3, 1))
    np.testing.assert_array_equal(np.asarray(values), [[3, 3, 2], [5, 5, 0], [2, 2, 2]])
    np.testing.assert_array_equal(np.asarray(indices), [[0, 2, 3], [1, 3, 0], [0, 1, 2]])
    assert lazy.stats()["failed"] == (1 if refused else 0)


@pytest.mark.parametrize("dtype", ["f4", "f8", "i4", "i8", "u1"])
def test_floor_divide_is_numpys_bit_for_bit(dtype: str) -> None:
    """`//` as numpy computes it: floats by its own algorithm (`1 // 0.1` is 9, not 10;
    signed zeros, infinities, NaN and a zero divisor as numpy gives them), integers
    exactly (a zero divisor gives 0)."""
    rng = np.random.default_rng(7)
    if dtype.startswith("f"):
        a = rng.standard_normal(500) * 5
        b = rng.standard_normal(500) * 2
        a[:10] = [1, -1, 0, -0.0, np.inf, -np.inf, np.nan, 1, 3, -3]
        b[:10] = [0.1, 0.1, 3, 3, 2, 2, 1, 0, np.inf, np.inf]
        pairs = [(a, b), (a, 0.3), (a, -0.7)]
    else:
        a = rng.integers(0 if dtype == "u1" else -50, 50, 500)
        b = rng.integers(0 if dtype == "u1" else -5, 6, 500)
        pairs = [(a, b), (a, 3)]
    lazy.reset()
    for x, y in pairs:
        x = x.astype(dtype)
        y = y.astype(dtype) if isinstance(y, np.ndarray) else y
        with np.errstate(all="ignore"):
            want = np.floor_divide(x, y)
            got = np.asarray(lazy.asarray(x) // y)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    assert lazy.stats()["fallbacks"] == {} and lazy.stats()["failed"] == 0


@pytest.mark.parametrize("dtype", ["i1", "u1", "i4", "f2", "f8"])
def test_composed_ufuncs_take_numpys_dtypes(dtype: str) -> None:
    """`log2`, `exp2`, `deg2rad` and `logaddexp` in the dtype numpy's loop gives (int8
    in f16, int32 in f64), halves computed in f32 as numpy computes them."""
    x = np.array([1, 2, 3, 10, 0], dtype)
    lazy.reset()
    for function in (
        np.log2,
        np.exp2,
        np.deg2rad,
        lambda v: np.logaddexp(v, v[::-1]),
    ):
        with np.errstate(all="ignore"):
            want = function(x)
            got = np.asarray(function(lazy.asarray(x)))
        assert got.dtype == want.dtype
        tolerance = 2e-3 if want.dtype == np.float16 else 1e-6
        np.testing.assert_allclose(got, want, rtol=tolerance)
    assert lazy.stats()["fallbacks"] == {} and lazy.stats()["failed"] == 0


@pytest.mark.parametrize(
    "key, records",
    [
        ([1, 3], True),
        ((slice(None), [0, -1, 2]), True),
        (np.array([[0, 1], [3, 3]]), True),
        ((Ellipsis, np.array([5, 0])), True),
        ((slice(None), [6]), False),  # out of range: numpy's IndexError
        (([True, False, True, False],), False),  # a mask
        ((0, [1, 2]), False),  # an int and an array index together
        ((np.array([1]), np.array([2])), True),  # two arrays: one take of the flat rows
        ((np.arange(4), np.array([5, 0, -1, 2])), True),  # `p[np.arange(n), labels]`
        ((np.arange(4)[:, None], [[0, 5]]), True),  # broadcast together
        (([0, 1], [0, 1, 2]), False),  # shapes that do not broadcast: numpy's IndexError
    ],
    ids=lambda value: repr(value).replace("\n", "")[:40],
)
def test_indexing_by_integer_arrays(key: Any, records: bool) -> None:
    """`x[ids]`, `x[:, ids]`, `x[rows, columns]` (a copy, as numpy's advanced indexing
    makes) record as a take, negative ids counting from the end; masks and an int among
    arrays run in numpy, and so does an index numpy rejects, which raises numpy's
    error."""
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    lazy.reset()
    try:
        want: Any = x[key]
    except IndexError:
        with pytest.raises(IndexError):
            lazy.asarray(x)[key]
        return
    np.testing.assert_array_equal(np.asarray(lazy.asarray(x)[key]), want)
    assert (lazy.stats()["fallbacks"] == {}) == records


@pytest.mark.parametrize(
    "call",
    [
        lambda x, i: x.sum(dtype=np.float64),
        lambda x, i: np.mean(x, axis=1, dtype=np.float64),
        lambda x, i: i.sum(axis=0, dtype=np.int8),  # wraps in int8, as numpy's
        lambda x, i: np.prod(i[:, :3], 1, dtype=np.int16),
        lambda x, i: np.mean(i, dtype=np.float32),
        lambda x, i: np.var(x, 0, dtype=np.float64),
        lambda x, i: np.std(i, dtype=np.float32),
        lambda x, i: np.cumsum(i, 1, dtype=np.int8),
        lambda x, i: np.cumprod(x, dtype=np.float64),
    ],
)
def test_a_dtype_to_accumulate_in_records(call: Callable[..., Any]) -> None:
    """`dtype=` of the sums, means, products, variances and scans: the operand in that
    dtype, the result too (numpy's wrapping of small integers included)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 7)).astype(np.float32)
    i = rng.integers(-100, 100, (5, 7)).astype(np.int32)
    lazy.reset()
    want = call(x, i)
    got = np.asarray(call(lazy.asarray(x), lazy.asarray(i)))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert lazy.stats()["fallbacks"] == {}


EINSUMS = [
    ("bhqd,bhkd->bhqk", [(2, 3, "n", 4), (2, 3, 5, 4)]),  # attention's scores
    ("bhqk,bhkd->bhqd", [(2, 3, "n", 5), (2, 3, 5, 4)]),
    ("ij,jk->ik", [("n", 4), (4, 7)]),
    ("ij,jk", [("n", 4), (4, 7)]),  # implicit output
    ("ij,kj->ikj", [("n", 4), (3, 4)]),
    ("ij->ji", [("n", 4)]),
    ("ij->i", [("n", 4)]),
    ("ij,ij->", [("n", 4), ("n", 4)]),
    ("i,j->ij", [("n",), (5,)]),
    ("ij,ab->", [("n", 4), (2, 3)]),
    ("bqhd,bkhd->bhqk", [(2, "n", 3, 4), (2, 5, 3, 4)]),
]


@pytest.mark.parametrize("subscripts, shapes", EINSUMS, ids=[e[0] for e in EINSUMS])
def test_einsum_of_one_or_two_operands(subscripts: str, shapes: list[tuple[Any, ...]]) -> None:
    """Transposes, sums and a batched matmul give numpy's `einsum` on a stream of
    sizes; diagonals, `...` and three operands run in numpy."""
    rng = np.random.default_rng(len(subscripts))
    lazy.reset()
    for n in ROWS:
        arrays = [
            rng.standard_normal([n if d == "n" else d for d in shape]).astype(np.float32)
            for shape in shapes
        ]
        want = np.einsum(subscripts, *arrays)
        got = np.asarray(np.einsum(subscripts, *map(lazy.asarray, arrays)))
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert lazy.stats()["fallbacks"] == {} and lazy.stats()["failed"] == 0
    x = np.ones((3, 3), np.float32)
    np.testing.assert_array_equal(np.asarray(np.einsum("ii->i", lazy.asarray(x))), np.ones(3))
    assert lazy.stats()["fallbacks"] == {"einsum": 1}


@pytest.mark.parametrize("refused", [False, True])
def test_scatter_add_accumulates_equal_ids(monkeypatch: pytest.MonkeyPatch, refused: bool) -> None:
    """`record.scatter_add` (what the torch backend records for an embedding's gradient
    and `index_add`): numpy's `add.at` on a copy, along an axis, with ids of two dims;
    compiled, or run in numpy when the compiler refuses the segment."""
    from dvm.lazy.array import LazyArray
    from dvm.lazy.record import scatter_add

    if refused:

        def refuse(*args: Any, **kwargs: Any) -> Any:
            raise dvm.errors.CompileError("refused")

        monkeypatch.setattr(dvm, "compile", refuse)
    lazy.reset()
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    ids = np.array([[0, 2], [2, 2]])
    updates = np.ones((3, 2, 2), np.float32)
    x = lazy.asarray(base) * 1
    got = LazyArray(scatter_add(x._node, lazy.asarray(ids)._node, lazy.asarray(updates)._node, 1))
    want = base.copy()
    np.add.at(want, (slice(None), ids), updates)
    np.testing.assert_array_equal(np.asarray(got), want)
    assert lazy.stats()["failed"] == (1 if refused else 0)


@pytest.mark.parametrize(
    "function",
    [
        lambda x: np.tile(x, 2),
        lambda x: np.tile(x, (3, 1)),
        lambda x: np.repeat(x, 2, axis=1),
        lambda x: np.pad(x, 1),
        lambda x: np.pad(x, ((2, 1), (0, 3)), constant_values=0.5),
    ],
)
def test_sizes_equal_by_chance_compile_nothing_new(function: Callable[[Any], Any]) -> None:
    """A tile's count or a pad's width is a constant of the program, and a pad's fill
    is as wide as its array by structure: a dim that equals one of them, or a square
    array, is no new structure."""
    rng = np.random.default_rng(0)
    lazy.reset()
    for shape in [(5, 7), (13, 11), (6, 6), (2, 9), (9, 3), (3, 9), (8, 5)]:
        x = rng.standard_normal(shape).astype(np.float32)
        np.testing.assert_array_equal(np.asarray(function(lazy.asarray(x))), function(x))
    assert lazy.stats()["compiled"] == 1


def recorded(function: Callable[..., Any], *arrays: np.ndarray[Any, Any]) -> None:
    """`function` on lazy arrays gives numpy's dtype, shape and values, with no fallback."""
    before = dict(lazy.stats()["fallbacks"])
    got, want = np.asarray(function(*[lazy.asarray(a.copy()) for a in arrays])), function(*arrays)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_array_equal(got, want)  # (NaNs where numpy's are)
    assert lazy.stats()["fallbacks"] == before


def test_heaviside_and_insert_of_one_number_record() -> None:
    """`heaviside` (NaN, -0.0, infinities, ints) and `insert` of one number at one
    position, cast as numpy casts it, on floats, ints and bools."""
    x = np.array([-1.0, 0.0, 2.0, np.nan, -0.0, np.inf], np.float32)
    recorded(lambda v: np.heaviside(v, 0.5), x)
    recorded(lambda v, h: np.heaviside(v, h), x.astype(np.float64), np.arange(6.0))
    recorded(lambda v: np.heaviside(v, 1), np.array([-2, 0, 3], np.int16))
    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.int8, np.bool_):
        a = np.round(rng.normal(size=(3, 4)) * 3).astype(dtype)
        recorded(lambda v: np.insert(v, 0, 0.0), a)
        recorded(lambda v: np.insert(v, -1, 2.7, axis=1), a)  # (cast as numpy casts)
        recorded(lambda v: np.insert(v, 3, True, axis=0), a)
