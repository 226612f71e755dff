"""In-place writes into lazy arrays a sync has computed: recorded as new values where no
other holder of the memory could see the write (`Node.updatable`), numpy's writes into the
memory where one could (a numpy view, a lazy view alive, the caller's own array, a
fallback's argument). Each case runs on numpy arrays and on lazy arrays and returns
what it wrote to, so the comparison sees every array a write reached; the training
loops must record and give numpy's values. Indexing by None keeps the sizes `dvm.torch`
tracks (one plan, replayed). Inputs are seeded."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from test_lazy_numpy_semantics import agree, lazy_copy, numpy_copy, outcome

from dvm import lazy

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (numpy's, on casts)


def computed(a: Any) -> Any:
    """A result a sync has computed (a program's own array, seen by no numpy code)."""
    y = a * 2
    float(y.sum())  # (a sync point that hands out no memory)
    return y


def runs(function: Any, *args: Any) -> dict[str, int]:
    """`function` on numpy arrays and on lazy arrays gives numpy's result (or error);
    the fallbacks it made on lazy arrays."""
    want = outcome(function, tuple(map(numpy_copy, args)))
    before = lazy.stats()["fallbacks"]
    got = outcome(function, tuple(map(lazy_copy, args)))
    agree(got, want, function.__name__)
    after = lazy.stats()["fallbacks"]
    return {k: v - before.get(k, 0) for k, v in after.items() if v > before.get(k, 0)}


# -- writes that record: nothing else holds the memory -------------------------------


def update_after_a_sync(a: Any) -> Any:
    y = computed(a)
    y -= 0.5 * a
    y *= 3
    np.add(y, 1, out=y)
    y /= y.sum()
    return y


def assign_parts(a: Any) -> Any:
    y = computed(a)
    y[0] = 1.5
    y[1:, 0] = y[1:, 1] * 2  # (its own value, read before the write)
    y[:, ::2] = 0
    y[-1] = np.arange(a.shape[1], dtype=a.dtype)
    y[..., -1] = 7
    y[2, 1:3] = True
    return y


def assign_whole(a: Any) -> Any:
    y, z = computed(a), a + 1
    y[...] = z  # (a copy of z's values: z's later writes do not reach y)
    z += 1
    y[:] = 3
    return y, z


def sliced_temporaries(a: Any) -> Any:
    """A view that no longer lives (the slices of a stencil) does not hold the memory."""
    u = computed(a)
    for _ in range(3):
        u[1:-1] = u[1:-1] + 0.25 * (u[:-2] - 2 * u[1:-1] + u[2:])
    return u


def read_without_holding(a: Any) -> Any:
    """Printing, converting and pickling read the value and hold none of its memory."""
    y = computed(a)
    text = repr(y) + str(y) + format(y.sum(), ".3f")
    loaded = pickle.loads(pickle.dumps(y))
    copied = copy.copy(y)
    y += 1
    return y, loaded, copied, len(text) > 0, float(y[0, 0])


RECORDED = [update_after_a_sync, assign_parts, assign_whole, sliced_temporaries,
            read_without_holding]  # fmt: skip


@pytest.mark.parametrize("case", RECORDED, ids=lambda f: f.__name__)
def test_writes_into_computed_results_record(case: Any) -> None:
    a = np.random.default_rng(1).standard_normal((5, 4))
    assert runs(case, a) == {}


# -- writes that reach the memory: someone else holds it --------------------------------


def numpy_view_first(a: Any) -> Any:
    y = computed(a)
    seen = np.asarray(y)
    y += 1
    y[0] = -1
    return seen, y


def lazy_view_first(a: Any) -> Any:
    y = computed(a)
    row, column, flat, chained = y[1], y[:, 0], y.reshape(-1), y[1:][1:]
    y -= 1
    y[2, 2] = 100
    return row, column, flat, chained, y


def view_of_a_dead_view(a: Any) -> Any:
    y = computed(a)
    chained = y.T[1:]  # (`y.T` dies; `chained` still shares y's memory)
    y += 1
    return chained, y


def fallback_view(a: Any) -> Any:
    y = computed(a)
    grown = np.atleast_3d(y)  # (numpy's view, from a fallback)
    y *= 2
    return grown, y


def einsum_view(a: Any) -> Any:
    y = computed(a)
    t = np.einsum("ij->ji", y)
    t += 1
    return y, t


def memory_attributes(a: Any) -> Any:
    y = computed(a)
    base = y.base
    y += 1
    return y, base is None


def numpy_array_as_out(a: Any) -> Any:
    target = np.zeros_like(np.asarray(a))
    y = computed(a)
    target += y
    np.subtract(target, y, out=target)
    return target, type(target) is np.ndarray


ALIASED = [numpy_view_first, lazy_view_first, view_of_a_dead_view, fallback_view, einsum_view,
           memory_attributes, numpy_array_as_out]  # fmt: skip


@pytest.mark.parametrize("case", ALIASED, ids=lambda f: f.__name__)
def test_writes_reach_memory_someone_holds(case: Any) -> None:
    runs(case, np.random.default_rng(2).standard_normal((5, 4)))


def test_the_callers_array_is_written() -> None:
    """`asarray` does not copy: writes into its array reach the caller's memory, as
    `np.asarray`'s would, whether the array was computed on since or not."""
    mine = np.arange(12.0).reshape(3, 4)
    x = lazy.asarray(mine)
    x += 1
    x[0, 0] = -5
    float(x.sum())
    x *= 2
    x[2] = 0
    expected = np.arange(12.0).reshape(3, 4) + 1
    expected[0, 0] = -5
    expected *= 2
    expected[2] = 0
    np.testing.assert_array_equal(mine, expected)
    assert np.asarray(x) is mine


def assign_across_kinds(a: Any) -> Any:
    counts = (computed(a) * 10).astype(np.int32)
    counts[0] = 2.7  # (numpy truncates a float into integers)
    counts[1] = np.float64(-3.5)
    counts[2, :2] = np.array([1.9, -1.9])
    counts[3] = True
    halves = computed(a).astype(np.float16)
    halves[0] = 70000  # (inf, as numpy's cast)
    halves[1] = counts[1]
    return counts, halves


def assign_errors(a: Any) -> Any:
    small = computed(a).astype(np.int8)
    results = []
    for key, value in [(0, 300), ((0, 9), 1), (slice(None), np.ones(3)), (0, "x"),
                       ((None, 0), 1), (0, np.ones((2, 4)))]:  # fmt: skip
        try:
            small[key] = value
            results.append(None)
        except Exception as error:
            results.append(type(error))
    return small, results


@pytest.mark.parametrize("case", [assign_across_kinds, assign_errors], ids=lambda f: f.__name__)
def test_assignments_cast_and_fail_as_numpys(case: Any) -> None:
    runs(case, np.random.default_rng(3).standard_normal((5, 4)))


# -- in place through views and masks ------------------------------------------------------


def recorded(function: Any, *args: Any) -> None:
    """`function` gives numpy's results on lazy arrays, every array it returns still
    pending (its writes recorded: no sync after the first), and no fallback."""
    assert runs(function, *args) == {}
    results = function(*map(lazy_copy, args))
    for result in results if isinstance(results, tuple) else (results,):
        if isinstance(result, lazy.LazyArray):
            assert result._node.pending, function.__name__


def operators_on_parts(a: Any) -> Any:
    x = computed(a)
    x[1] *= 2
    x[:, 2] -= x[:, 0]  # (the operand, a live view, sees the write afterwards)
    x[::2] /= 3.0
    x[1:, 1:][:, ::2] += 1  # (a view of a view)
    x[..., None] += 1
    x[::-1, 1] *= 0.5
    x[3:0:-2, -1] -= 4
    x[...] += 1
    x[-1, 1:] //= 0.5
    return x


def stencil(a: Any) -> Any:
    u = computed(a)
    for _ in range(3):
        u[1:-1, 1:-1] += 0.1 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                                - 4 * u[1:-1, 1:-1])  # fmt: skip
    return u


def kept_views(a: Any) -> Any:
    """Views the program keeps see each write, and write through to the array."""
    u = computed(a)
    inner, first = u[1:-1], u[0]
    corner = inner[:2, :2]
    alias = inner
    inner += 1
    corner *= 2
    u[0] -= 3
    first += u[-1]
    return u, inner, first, corner, alias is inner


def outs_of_views(a: Any) -> Any:
    x, y = computed(a), a + 1
    np.add(x[:-1], y[:-1], out=x[1:])  # (overlapping: numpy reads the old values)
    np.multiply(y, 2, out=y)
    part = y[:, 1:3]
    np.subtract(part, 1, out=part)
    return x, y, part


def masked_writes(a: Any) -> Any:
    x, y = computed(a), a + 1
    x[x < 0] = 0
    x[np.asarray(a) > 1] = np.float64(-1)
    x[y > 1.5] = y.max()
    np.putmask(x, x > 0.5, 0.5)
    np.putmask(x, x < 0.1, y)
    np.copyto(x, y, where=y < 0.8)
    np.copyto(y, 3)
    return x, y


@pytest.mark.parametrize(
    "case", [operators_on_parts, stencil, kept_views, outs_of_views, masked_writes],
    ids=lambda f: f.__name__,
)  # fmt: skip
def test_writes_through_views_and_masks_record(case: Any) -> None:
    recorded(case, np.random.default_rng(4).standard_normal((6, 5)))


def random_key(rng: np.random.Generator, shape: tuple[int, ...]) -> tuple[Any, ...]:
    """A basic indexing key: ints (negative too), slices of steps of either sign, None."""
    key: list[Any] = []
    for size in shape:
        pick = rng.random()
        if pick < 0.2:
            key.append(int(rng.integers(-size, size)))
        elif pick < 0.3:
            key += [None, slice(None)]
        else:
            start, stop = [None if rng.random() < 0.3 else int(rng.integers(-size - 1, size + 1))
                           for _ in range(2)]  # fmt: skip
            key.append(slice(start, stop, int(rng.choice([1, 2, 3, -1, -2]))))
    return tuple(key)


def test_random_parts_written_as_numpy_writes_them() -> None:
    """`x[key] = x[key] * 3 + v` and `x[key] += v` over random basic keys (negative
    steps, new axes, integers): numpy's values, recorded."""
    rng = np.random.default_rng(5)
    for _ in range(60):
        a = rng.standard_normal((5, 4, 3)[: int(rng.integers(1, 4))])
        key = random_key(rng, a.shape)
        v = rng.standard_normal(a[key].shape)
        if v.size == 0:
            continue

        def plain(x: Any, key: Any = key, v: Any = v) -> Any:
            x = x * 2
            x[key] = x[key] * 3 + v
            return x

        def in_place(x: Any, key: Any = key, v: Any = v) -> Any:
            x = x * 2
            x[key] += v
            return x

        recorded(plain, a)
        recorded(in_place, a)


def through_a_transpose(a: Any) -> Any:
    y = computed(a)
    y.T[1:] += 1
    return y


def view_computed_before(a: Any) -> Any:
    y = computed(a)
    inner = y[1:]
    float(inner.sum())  # (a sync: `inner` is numpy's view of y's memory now)
    inner += 1
    y[0] += inner[0]
    return y, inner


def view_given_to_numpy(a: Any) -> Any:
    y = computed(a)
    inner = y[1:]
    seen = np.asarray(inner)
    inner *= 2
    return y, seen


def masks_numpy_keeps(a: Any) -> Any:
    x = computed(a)
    x[x > 0] = np.arange(int((np.asarray(x) > 0).sum()), dtype=x.dtype)  # (the mask's count)
    x[x[:, 0] > 0] = 7  # (a mask of another shape: rows)
    x[x < 0] *= 0.5
    small = (computed(a) * 10).astype(np.int32)
    small[small > 0] = 2.5  # (a float into integers)
    np.putmask(x, x > 1, np.array([1.0, 2.0]))  # (repeated in flat order)
    np.copyto(small, x, casting="unsafe", where=x > 0)
    return x, small


def write_errors(a: Any) -> Any:
    results = []
    for write in (lambda y: y.__setitem__(y > 0, np.ones(3)),
                  lambda y: np.putmask(y, y[0] > 0, 1.0),
                  lambda y: np.copyto(y.astype(np.int8), y, where=y > 0),
                  lambda y: y[1:].__iadd__(np.ones(3))):  # fmt: skip
        try:
            write(computed(a))
            results.append(None)
        except Exception as error:
            results.append(type(error))
    return results


@pytest.mark.parametrize(
    "case", [through_a_transpose, view_computed_before, view_given_to_numpy,
             masks_numpy_keeps, write_errors],
    ids=lambda f: f.__name__,
)  # fmt: skip
def test_writes_numpy_keeps_are_numpys(case: Any) -> None:
    runs(case, np.random.default_rng(6).standard_normal((6, 5)))


def heat(u: Any, steps: int = 12, alpha: float = 0.2) -> Any:
    """A 2-d heat equation, its boundary held, that prints its energy now and then."""
    u = u.copy()
    energies = []
    for step in range(steps):
        u[1:-1, 1:-1] += alpha * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                                  - 4 * u[1:-1, 1:-1])  # fmt: skip
        u[u < 0] = 0
        if step % 4 == 3:
            energies.append(float((u * u).sum()))
    return u, energies


def assert_recorded(step: int, before: dict[str, Any], after: dict[str, Any]) -> None:
    """No fallback between the two `lazy.stats()`; at a stream's third shape, segments
    reused and nothing compiled."""
    assert after["fallbacks"] == before["fallbacks"]
    if step == 2:
        assert after["compiled"] == before["compiled"]
        assert after["reused"] > before["reused"]


def test_a_stencil_in_place_records_and_reuses_its_segments() -> None:
    for step, size in enumerate([(20, 24), (31, 17), (26, 40)]):
        grid = np.random.default_rng(step).standard_normal(size)
        want = heat(grid)
        before = lazy.stats()
        got = heat(lazy.asarray(grid))
        after = lazy.stats()
        np.testing.assert_allclose(flat(got), flat(want), rtol=1e-13, atol=1e-13)
        assert_recorded(step, before, after)


# -- training loops ----------------------------------------------------------------------


def logistic_regression(x: Any, y: Any, steps: int = 40) -> Any:
    n = x.shape[0]
    w = np.zeros_like(x[0])
    b = 0.0
    losses = []
    for step in range(steps):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        w -= 0.1 * (x.T @ (p - y) / n)
        b -= 0.1 * np.mean(p - y)
        if step % 8 == 0:  # (a sync point: `w` is then computed)
            losses.append(float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))))
    return w, b, losses


def momentum_sgd(x: Any, y: Any, steps: int = 25) -> Any:
    w = x[:2].T @ x[:2] * 0.0 + 0.1  # (a computed start)
    velocity = np.zeros_like(w)
    for _ in range(steps):
        grad = x.T @ (x @ w - y[:, None]) / x.shape[0]
        velocity *= 0.9
        velocity += grad
        w -= 0.05 * velocity
        w[:, 0] = np.clip(w[:, 0], -1, 1)
        if float(np.abs(grad).max()) < 1e-12:
            break
    return w


def flat(result: Any) -> np.ndarray[Any, Any]:
    """A loop's results (arrays, numbers, lists of them) as one float64 vector."""
    parts = result if isinstance(result, tuple | list) else [result]
    return np.concatenate([np.ravel(np.asarray(flat(p) if isinstance(p, list) else p, float))
                           for p in parts])  # fmt: skip


@pytest.mark.parametrize("loop", [logistic_regression, momentum_sgd], ids=lambda f: f.__name__)
def test_training_loops_record_and_reuse_their_segments(loop: Any) -> None:
    """Updates in place after each sync record: no fallback, numpy's values (float64),
    and the third shape compiles nothing the second did not."""
    for step, rows in enumerate([40, 57, 71]):
        rng = np.random.default_rng(step)
        x = rng.standard_normal((rows, 6))
        y = (rng.random(rows) > 0.5).astype(np.float64)
        want = loop(x, y)
        before = lazy.stats()
        got = loop(lazy.asarray(x), lazy.asarray(y))
        after = lazy.stats()
        # (an ulp apart at most: numpy's matmul and mean sum in BLAS's and pairwise order)
        np.testing.assert_allclose(flat(got), flat(want), rtol=1e-14, atol=1e-15)
        assert_recorded(step, before, after)


# -- new axes keep their sizes' origin -------------------------------------------------------


def test_indexing_by_none_replays_one_plan() -> None:
    """`x[..., None]` (and `x[:, None, :]`) in a `dvm.torch` handler keeps the sizes
    symbolic, as `np.expand_dims` does: one plan, replayed at the other sizes."""
    torch = pytest.importorskip("torch")
    import dvm.torch
    from dvm.torch import aten, graph

    def by_index(x: Any, dim: int) -> Any:
        x = aten.lazy(x)
        axis = int(dim) % (x.ndim + 1)
        return aten.needs(x[(Ellipsis, None) + (slice(None),) * (x.ndim - axis)])

    def f(x: Any) -> Any:
        return (x.unsqueeze(-1) * x.unsqueeze(1)).sum(0) + x.unsqueeze(0).sum(1)

    original = graph.HANDLERS["unsqueeze"]
    graph.HANDLERS["unsqueeze"] = by_index
    try:
        first = len(dvm.torch.reports())
        compiled = torch.compile(f, backend="dvm", dynamic=True)
        torch.manual_seed(0)
        with torch.no_grad():
            for rows in (3, 5, 6, 9):
                x = torch.randn(rows, 4)
                torch.testing.assert_close(compiled(x), f(x))
    finally:
        graph.HANDLERS["unsqueeze"] = original
    (report,) = dvm.torch.reports()[first:]
    assert (report["plans"], report["replayed"]) == (1, 3), report


def test_a_new_axis_view_and_a_diagonal_see_later_writes() -> None:
    """`x[None]` is a view (its key is None, not "no view"), and a diagonal is numpy's
    read-only view: both show a write into `x` made after them, as numpy's do."""
    a = np.arange(12, dtype=np.float64).reshape(3, 4)

    def program(x: Any) -> list[Any]:
        x = x * 2
        expanded = x[None]
        squeezed = np.squeeze(expanded)
        diagonal = x.diagonal()
        upper = np.diag(x, 1)
        x -= 1
        return [expanded, squeezed, diagonal, upper, x]

    want = program(a.copy())
    got = program(lazy.asarray(a.copy()))
    for w, g in zip(want, got, strict=True):
        np.testing.assert_array_equal(np.asarray(g), w)
    with pytest.raises(ValueError):
        got[2] += 1  # (numpy's diagonal is read-only)


ZERO_SIZE_WRITES: dict[str, Callable[[Any], Any]] = {
    "all": lambda a: a.__setitem__(Ellipsis, 1.5),
    "empty slice": lambda a: a.__setitem__(slice(0, 0), 2.0),
    "column": lambda a: a.__setitem__((slice(None), 1), 2.0),
    "first row": lambda a: a.__setitem__(0, 2.0),
    "augmented": lambda a: a.__iadd__(1.0),
    "mask": lambda a: a.__setitem__(a > 0, 3.0),
    "no ids": lambda a: a.__setitem__(np.array([], np.intp), 4.0),
    "through a view": lambda a: a[:, :2].__setitem__(Ellipsis, 9.0),
    "through a transpose": lambda a: a.T.__setitem__(Ellipsis, 9.0),
    "through a reversal": lambda a: a[::-1].__setitem__(Ellipsis, 6.0),
    "a row broadcast": lambda a: a.__setitem__(Ellipsis, np.arange(a.shape[-1], dtype=np.float32)),
    "of itself": lambda a: a.__setitem__(Ellipsis, a[::-1] + a.sum(axis=0, keepdims=True)),
}


@pytest.mark.parametrize("name", ZERO_SIZE_WRITES)
def test_writes_into_an_array_with_a_zero_size_dim_are_numpys(name: str) -> None:
    """Every write does what numpy does to an array with a dim of 0 (nothing, or the
    same IndexError), an array made by the program too."""
    write = ZERO_SIZE_WRITES[name]
    for shape in [(0, 3), (3, 0), (2, 0, 4)]:
        start = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) - 1
        want = start.copy()
        try:
            write(want)
        except IndexError:
            want = None
        for got in (lazy.asarray(start.copy()), lazy.asarray(start) * 1):
            if want is None:
                with pytest.raises(IndexError):
                    write(got)
                continue
            write(got)
            assert np.asarray(got).shape == want.shape
            np.testing.assert_array_equal(np.asarray(got), want)
