"""`dvm.lazy`: ordinary numpy functions on lazy arrays give numpy's results, on streams
of shapes, compiling once per structure; sync points, views, in-place writes and
fallbacks behave as numpy does."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dvm
from dvm import lazy
from dvm.lazy.numpy_api import UFUNCS

SHAPES = [4, 1, 7, 13]
"""Sizes of the dim each stream varies (1: a broadcast dim; primes)."""


def layernorm(x: Any, w: Any, b: Any) -> Any:
    mu = x.mean(-1, keepdims=True)
    d = x - mu
    var = (d * d).mean(-1, keepdims=True)
    return d / np.sqrt(var + 1e-5) * w + b


def softmax(x: Any) -> Any:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def gelu(x: Any) -> Any:
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def attention(q: Any, k: Any, v: Any) -> Any:
    scores = q @ k.swapaxes(-1, -2) / np.sqrt(np.float32(q.shape[-1]))
    return softmax(scores) @ v


def mlp(x: Any, w1: Any, b1: Any, w2: Any) -> Any:
    return np.maximum(x @ w1 + b1, 0) @ w2


def halves(x: Any) -> Any:
    d = x.shape[-1] // 2
    return x[..., :d] * 2 - x[..., d:] + x[:, None, 0:1, ::2].sum()


def heads(x: Any) -> Any:
    b, s, d = x.shape
    y = x.reshape(b, s, 2, d // 2).transpose(0, 2, 1, 3)
    return y.reshape(b * 2, -1).T


def normal(*shape: int, dtype: Any = np.float32, seed: int = 0) -> np.ndarray[Any, Any]:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


CASES: dict[str, tuple[Callable[..., Any], Callable[[int], list[Any]]]] = {
    "layernorm": (layernorm, lambda n: [normal(n, 64), normal(64, seed=1), normal(64, seed=2)]),
    "softmax": (softmax, lambda n: [normal(n, 33)]),
    "gelu_f64": (gelu, lambda n: [normal(n, 7, dtype=np.float64)]),
    "attention": (attention, lambda n: [normal(2, n, 16, seed=s) for s in range(3)]),
    "mlp": (mlp, lambda n: [normal(n, 8), normal(8, 16), normal(16), normal(16, 4)]),
    "halves": (halves, lambda n: [normal(n, 3, 10)]),
    "heads": (heads, lambda n: [normal(2, n, 8)]),
    "int_mean": (
        lambda x: (x + 1).mean(),
        lambda n: [np.arange(4 * n, dtype=np.int32).reshape(n, 4)],
    ),
    "i8_sum": (lambda x: (x * 2).sum(0), lambda n: [np.arange(4 * n, dtype=np.int8).reshape(n, 4)]),
    "leaky_f16": (
        lambda x: np.where(x > 0, x, 0.1 * x),
        lambda n: [normal(n, 4, dtype=np.float16)],
    ),
    "clip_cast": (lambda x: np.clip(x * 3, -1.5, 1.5).astype(np.int32), lambda n: [normal(n)]),
    "argmax": (lambda x: np.argmax(x * 2, axis=1) + x.argmin(), lambda n: [normal(n, 9)]),
    "cumsum": (lambda x: np.cumsum(x * 2, axis=0) + np.cumprod(x, 1), lambda n: [normal(n, 3)]),
    "any_all": (lambda x: np.any(x > 1, axis=1) & (x < 3).all(), lambda n: [normal(n, 5)]),
    "lookup": (
        lambda table, ids: layernorm(np.take(table, ids, axis=0), 1.0, 0.0),
        lambda n: [normal(11, 8), np.arange(2 * n, dtype=np.int64).reshape(2, n) % 11],
    ),
}


def close(got: Any, want: Any) -> None:
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype
    tolerance = {2: 2e-3, 4: 2e-5, 8: 1e-12}.get(want.dtype.itemsize, 0)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name", CASES)
def test_a_function_matches_numpy_on_a_stream_of_shapes(name: str) -> None:
    function, make = CASES[name]
    before = lazy.stats()  # (other tests of this process may have recorded already)
    for n in SHAPES:
        args = make(n)
        got = function(*map(lazy.asarray, args))
        assert isinstance(got, lazy.LazyArray)
        close(got, function(*args))
    stats = lazy.stats()
    assert stats["compiled"] - before["compiled"] <= 1  # one structure: compiled once, reused
    assert stats["fallbacks"] == before["fallbacks"] and stats["failed"] == before["failed"]


def test_a_loop_whose_trip_count_depends_on_data() -> None:
    """Newton's square root until it converges: `float(...)` is a sync point each
    time round, and every iteration's segment is the same program."""

    def newton(a: Any) -> tuple[Any, int]:
        y, steps = a, 0
        while float(np.abs(y * y - a).max()) > 1e-6:
            y = 0.5 * (y + a / y)
            steps += 1
        return y, steps

    for n in (3, 11):
        a = np.random.default_rng(n).uniform(1, 100, n)
        want, want_steps = newton(a)
        before = lazy.stats()
        got, steps = newton(lazy.asarray(a))
        close(got, want)
        assert steps == want_steps > 3
        assert lazy.stats()["segments"] - before["segments"] >= steps


def test_shapes_are_known_without_running_anything() -> None:
    before, fallbacks = lazy.stats()["segments"], lazy.stats()["fallbacks"]
    x = lazy.asarray(normal(5, 3))
    y = (x @ x.T)[1:, None]
    assert (y.shape, len(y), y.ndim, y.size, y.dtype) == ((4, 1, 5), 4, 3, 20, np.float32)
    assert (y.itemsize, y.nbytes, np.size(y), np.size(y, -1)) == (4, 80, 20, 5)
    assert lazy.stats()["segments"] == before
    assert lazy.stats()["fallbacks"] == fallbacks


def test_sync_points_give_numpy_values() -> None:
    a = normal(3, 4)
    x = lazy.asarray(a)
    assert bool((x > 100).sum() == 0)
    assert float(x.sum()) == pytest.approx(float(a.sum()), rel=1e-5)
    assert repr(x * 2) == repr(a * 2) and str(x + 1) == str(a + 1)
    assert [float(v.sum()) for v in x] == pytest.approx([float(v.sum()) for v in a])
    assert (x[0, 0] * 2).item() == pytest.approx(float(a[0, 0] * 2))
    assert (x.max() + 0).tolist() == pytest.approx(float(a.max()))


def test_views_and_in_place_writes_behave_as_numpy() -> None:
    a = np.arange(12.0).reshape(3, 4)
    x = lazy.asarray(a.copy())
    n = a.copy()
    pending = x + 1  # recorded before the writes: sees the old values
    row, n_row = x[1:], n[1:]
    flat, n_flat = row.reshape(-1), n_row.reshape(-1)
    x[1, 0] = 50.0
    n[1, 0] = 50.0
    flat[3] = -7.0
    n_flat[3] = -7.0
    x += 0.5
    n += 0.5
    np.testing.assert_array_equal(np.asarray(pending), a + 1)
    np.testing.assert_array_equal(np.asarray(x), n)
    np.testing.assert_array_equal(np.asarray(row), n_row)
    np.testing.assert_array_equal(np.asarray(flat), n_flat)


def test_an_in_place_op_on_a_pending_result_records() -> None:
    before = lazy.stats()
    x = lazy.asarray(np.arange(6.0).reshape(2, 3))
    y = x * 2
    y -= 1
    y /= y.sum(axis=-1, keepdims=True)
    np.add(y, 1, out=y)
    assert lazy.stats()["segments"] == before["segments"]
    assert lazy.stats()["fallbacks"] == before["fallbacks"]
    want = (np.arange(6.0).reshape(2, 3) * 2 - 1) / [[3], [21]] + 1
    np.testing.assert_allclose(np.asarray(y), want)


def write_into_view(x: Any) -> tuple[Any, Any]:
    p = x * 2
    row = p[0]
    p += 1  # (a view of `p` exists: numpy's write, which the view sees)
    return p, row


def write_into_alias(x: Any) -> Any:
    p = x * 2
    q = p
    p *= 3
    return q


def read_before_write(x: Any) -> tuple[Any, Any]:
    p = x * 2
    before = p + 0
    p -= 1
    return p, before


def write_overlapping(x: Any) -> Any:
    p = x[:, : x.shape[0]] * 1
    p += p.T
    return p


@pytest.mark.parametrize(
    "function",
    [
        write_into_view,
        write_into_alias,
        read_before_write,
        write_overlapping,
        lambda x: (lambda p: p.__iadd__(np.float64(0.1) * x))(x * np.float32(1)),
        lambda x: (lambda p: p.__imul__(p > 0))(x - 0.5),
        lambda x: (lambda p: p.__iadd__(1.5))((x * 2).astype(np.int32)),  # numpy's cast error
        lambda x: (lambda p: p.__iadd__(x))(x[:, :1] * 2),  # numpy's broadcast error
    ],
)
def test_a_write_into_a_pending_result_is_numpys(function: Callable[[Any], Any]) -> None:
    """Recorded, or numpy's write where another array could see the difference, or
    numpy's error."""
    x = normal(4, 6)

    def outcome(arg: Any) -> Any:
        try:
            result = function(arg)
        except Exception as error:  # (compared by type with numpy's)
            return type(error)
        return [np.asarray(r) for r in (result if isinstance(result, tuple) else (result,))]

    want, got = outcome(x.copy()), outcome(lazy.asarray(x.copy()))
    if isinstance(want, type):
        assert got is want
    else:
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-6)


def test_an_in_place_op_on_a_known_array_writes_its_memory() -> None:
    """The array `asarray` wraps is the lazy array's memory, as numpy's."""
    a = np.ones(3)
    x = lazy.asarray(a)
    x += 1
    x *= x
    np.testing.assert_array_equal(a, [4.0, 4.0, 4.0])


def test_unsupported_calls_run_in_numpy_and_recording_resumes() -> None:
    a = normal(6, 5)
    x = lazy.asarray(a)
    before = lazy.stats()
    norm = np.sort(x, axis=1)
    picked = x[a[:, 0] > 0]  # a mask
    order = x.argsort(axis=1)
    out: Any = lazy.asarray(np.empty_like(a))
    returned = np.add(x, 1, out=out)
    close(norm, np.sort(a, axis=1))
    close(picked, a[a[:, 0] > 0])
    close(order, a.argsort(axis=1))
    assert returned is out
    close(out, a + 1)
    after = lazy.stats()
    assert isinstance(norm * 2, lazy.LazyArray)
    assert lazy.stats()["ops_recorded"] > after["ops_recorded"]
    fell_back = {k: v - before["fallbacks"].get(k, 0) for k, v in after["fallbacks"].items()}
    assert {k for k, v in fell_back.items() if v} >= {
        "sort",
        "ndarray.__getitem__",
        "ndarray.argsort",
        "add",
    }


@pytest.mark.parametrize(
    "call",
    [
        lambda x: x + np.ones((4, 3)),
        lambda x: x.reshape(7, -1),
        lambda x: x[3, 0],
        lambda x: x.sum(axis=2),
        lambda x: x.min(-3),
        lambda x: x[:0].max(),
        lambda x: x @ np.ones((5, 2)),
        lambda x: x.astype(np.int32) + 2**40,
    ],
)
def test_what_numpy_rejects_raises_numpys_error(call: Callable[[Any], Any]) -> None:
    a = normal(3, 4)
    with pytest.raises(Exception) as numpy_error:
        call(a)
    with pytest.raises(type(numpy_error.value)) as lazy_error:
        np.asarray(call(lazy.asarray(a)))
    assert str(lazy_error.value) == str(numpy_error.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda x: x.sum(0, None, None, True),
        lambda x: x.max(1, None, True),
        lambda x: x.mean(axis=(0, 1)),
        lambda x: x.sum(-1, dtype=np.float64),
        lambda x: x.prod(keepdims=True),
        lambda x: x.min(axis=-2, keepdims=False) - x.mean(1, keepdims=True),
    ],
)
def test_a_reduction_method_takes_numpys_arguments(call: Callable[[Any], Any]) -> None:
    a = normal(3, 4)
    close(call(lazy.asarray(a)), call(a))


def test_the_key_is_structure_not_shape() -> None:
    def f(x: Any) -> Any:
        return np.tanh(x) * x.sum(0)

    before = lazy.stats()["compiled"]
    for n in (3, 8, 3, 21):
        close(f(lazy.asarray(normal(n, 2))), f(normal(n, 2)))
    assert lazy.stats()["compiled"] == before + 1
    close(f(lazy.asarray(normal(4, 2, dtype=np.float64))), f(normal(4, 2, dtype=np.float64)))
    assert lazy.stats()["compiled"] == before + 2  # a new dtype is a new program


def test_the_key_tells_which_operand_is_which() -> None:
    lazy.reset()  # no program compiled by another test
    a, b = normal(3, 4), normal(3, 4, seed=1)
    x, y = lazy.asarray(a), lazy.asarray(b)
    close(x - y, a - b)
    close(y - x, b - a)  # the same structure on the arguments the other way round
    assert lazy.stats()["compiled"] == 1
    close(x * x, a * a)  # one argument twice
    close(x * y, a * b)  # two arguments
    close((x - y) * x, (a - b) * a)
    close((x - y) * y, (a - b) * b)  # the product's other operand
    assert lazy.stats()["compiled"] == 5


def test_explain_shows_each_level_and_runs_nothing() -> None:
    x = lazy.asarray(normal(4, 8))
    y = softmax(x)
    before = lazy.stats()["segments"]
    text = lazy.explain(y)
    assert "tensor.reduce_max" in text and text.count("func.return") == 1
    assert "tensor.fusion" in lazy.explain(y, passes="symbolic-shapes,fuse")
    assert "bytecode.program" in lazy.explain(y, passes="dvm-pipeline")
    assert lazy.stats()["segments"] == before
    dvm.parse(text)  # the recorded program is valid text for dvm-opt
    close(y, softmax(normal(4, 8)))


def test_only_live_arrays_are_computed() -> None:
    x = lazy.asarray(normal(4, 8))
    kept = x * 2
    y = np.exp(kept) + 1
    del kept  # dead: an intermediate of y, not a result
    assert lazy.explain(y).count("-> (tensor") == 1


def test_a_loop_that_never_syncs_runs_in_bounded_segments() -> None:
    a = normal(5, 3)
    x, n = lazy.asarray(a), a
    before = lazy.stats()["segments"]
    for _ in range(150):
        x = x * 0.99 + 0.01
        n = n * 0.99 + 0.01
    close(x, n)
    assert lazy.stats()["segments"] - before >= 2


def test_a_loop_keeps_no_history_alive() -> None:
    x: Any = np.tanh(lazy.asarray(normal(3, 3))) + 1
    first = weakref.ref(x.numpy())
    for _ in range(3):
        x = x + 1
        x.numpy()
    assert first() is None  # only the last value is held, as in numpy


def test_a_node_held_across_a_flush_of_its_own_is_still_computed() -> None:
    """A handler may hold a node it recorded (no lazy array shows it) while it records
    more: past `MAX_SEGMENT` pending ops recording flushes on its own, and the node,
    left pending, is computed by the segment that needs it later."""
    from dvm.lazy.array import LazyArray
    from dvm.lazy.record import MAX_SEGMENT, binary

    a = normal(4, 3)
    x = lazy.asarray(a)
    held = binary("mul", x._node, x._node, x.dtype)  # (a raw node: no owner)
    assert held is not None
    before = lazy.stats()["segments"]
    y, n = x, a
    for _ in range(MAX_SEGMENT):
        y = y * 0.5 + 1
        n = n * 0.5 + 1
    assert lazy.stats()["segments"] > before  # (the flush the node was held across)
    close(LazyArray(held) + y, a * a + n)
    again = binary("mul", x._node, x._node, x.dtype)
    assert again is not None
    for _ in range(MAX_SEGMENT):
        y = y * 0.5 + 1
        n = n * 0.5 + 1
    close(y, n)  # (a sync: the trace is empty, the node still pending)
    close(LazyArray(again), a * a)


@pytest.mark.filterwarnings("ignore:Mean of empty slice", "ignore:invalid value")
def test_empty_arrays() -> None:
    for shape in [(0, 4), (3, 0)]:
        a = normal(*shape)
        close(layernorm(lazy.asarray(a), 1.0, 0.0), layernorm(a, 1.0, 0.0))


def test_a_segment_the_compiler_refuses_runs_in_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise dvm.errors.CompileError("refused")

    monkeypatch.setattr(dvm, "compile", refuse)
    a = normal(3, 5)
    before = lazy.stats()["failed"]
    close(np.cos(lazy.asarray(a)) * 3 - 1, np.cos(a) * 3 - 1)
    assert lazy.stats()["failed"] == before + 1


def test_a_reshape_of_one_element_to_unit_dims_compiles() -> None:
    """A rank-1 array of one element (its type `?`) reshaped to 1s only: the type of
    the expand keeps a `?`, as the dialect requires of a dynamic source."""
    lazy.reset()
    for size in (3, 1):
        x = np.arange(size, dtype=np.float32)
        y = lazy.asarray(x)[:1].reshape(1, 1) + 1
        np.testing.assert_array_equal(np.asarray(y), x[:1].reshape(1, 1) + 1)
    assert lazy.stats()["failed"] == 0


def test_a_collapse_of_static_dims_is_typed_static() -> None:
    """Dims a caller typed static (`dvm.torch` types the sizes torch's graph fixes)
    collapse, by a reshape or a squeeze, to their product, and expand to static dims:
    the types that `tensor.collapse_shape` and `tensor.expand_shape` verify."""
    lazy.reset()
    x = lazy.asarray(np.ones((3, 7), np.float32))
    x._node.static = (None, 7)
    total = (x * 2).sum(axis=0, keepdims=True)
    views = [(total.reshape(7), (7,)), (np.squeeze(total, 0), (7,)), (total.reshape(7, 1), (7, 1))]
    for y, shape in views:
        np.testing.assert_array_equal(np.asarray(y), np.full(shape, 6, np.float32))
    assert lazy.stats()["failed"] == 0


def test_a_concat_of_static_sizes_is_typed_static() -> None:
    """A stack's size along the new dim is the number of arrays stacked (each brings a
    static 1), and a concat of static sizes their sum: what follows is compiled for
    that size. A `?` among them keeps the result's `?`."""
    lazy.reset()
    rows = [normal(5, 3, seed=k) for k in range(4)]
    stacked = np.stack([lazy.asarray(r) * 2 for r in rows], axis=1)
    assert stacked._node.static == (None, 4, None)
    a, b = normal(5, 3, seed=1), normal(5, 2, seed=2)
    pair = lazy.asarray(a)
    pair._node.static = (None, 3)  # (as `dvm.torch` types the sizes its graph fixes)
    joined = np.concatenate([pair, pair + 1], axis=1)
    assert joined._node.static == (None, 6)
    mixed = np.concatenate([pair, lazy.asarray(b)], axis=1)
    assert mixed._node.static == (None, None)
    close(stacked.sum(axis=1), np.stack(rows, axis=1).sum(axis=1) * 2)
    close(joined * 2, np.concatenate([a, a + 1], axis=1) * 2)
    close(mixed - 1, np.concatenate([a, b], axis=1) - 1)
    assert lazy.stats()["failed"] == 0


@pytest.mark.parametrize("name", sorted({n for f, n in UFUNCS.items() if f.nin == 1}))
def test_every_unary_ufunc_compiles(name: str) -> None:
    """Each one-operand ufunc of the table becomes a compiled kernel (none fails to
    parse and runs in numpy instead), tests such as `isnan` included, whose result
    type is not their operand's."""
    ufunc = next(f for f, n in UFUNCS.items() if n == name)
    dtype = {"logical_not": np.bool_, "bitwise_not": np.int32}.get(name, np.float32)
    x = np.random.default_rng(0).uniform(-0.9, 0.9, (5, 3)).astype(dtype)
    if dtype == np.float32:
        x[0, :] = [np.inf, np.nan, -np.inf]
    lazy.reset()
    with np.errstate(all="ignore"):
        expected = ufunc(x)
        got = np.asarray(ufunc(lazy.asarray(x)))
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6, equal_nan=True)
    assert got.dtype == expected.dtype
    assert lazy.stats()["failed"] == 0 and lazy.stats()["compiled"] == 1


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint8, np.int32, np.float32])
@pytest.mark.parametrize("exponent", [2, 3, 4, 3.0])
def test_a_small_integer_power_is_multiplies_of_numpys_dtype(dtype: type, exponent: float) -> None:
    """`x ** 3` records multiplies, not `pow` (numpy's per-element `pow` call is many
    times slower), in numpy's result dtype: `x ** 2` and `np.square` square a bool to
    int8 as numpy's operator does, `np.power(x, 2)` to int64."""
    x = np.random.default_rng(1).integers(-3, 4, (6, 5)).astype(dtype)
    with np.errstate(all="ignore"):
        calls: list[Callable[[Any], Any]] = [lambda a: a**exponent, lambda a: np.power(a, exponent)]
        if exponent == 2:
            calls.append(np.square)
        for call in calls:
            y = call(lazy.asarray(x))
            assert "tensor.pow" not in lazy.explain(y)
            expected, got = call(x), np.asarray(y)
            assert got.dtype == expected.dtype
            np.testing.assert_allclose(got, expected, rtol=2e-7)


def test_a_copy_to_the_same_dtype_is_the_value_itself() -> None:
    """`astype` to the dtype a value has (GELU code often casts) and `copy` cost no
    `tensor.convert` when the program makes the value; a copy of an input or of a
    result stays an array of its own."""
    x = np.random.default_rng(2).standard_normal((6, 5)).astype(np.float32)
    a = lazy.asarray(x)
    y = (a * 2).astype(np.float32).copy() + 1
    assert "tensor.convert" not in lazy.explain(y)
    np.testing.assert_allclose(np.asarray(y), (x * 2).astype(np.float32) + 1, rtol=1e-6)
    kept = lazy.asarray(x).copy()
    made = a * 3
    same = made.astype(np.float32, copy=True)
    assert np.asarray(kept) is not x and np.shares_memory(np.asarray(kept), x) is False
    assert not np.shares_memory(np.asarray(same), np.asarray(made))
