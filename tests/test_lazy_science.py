"""Whole programs of the kinds scientists and ML students write, on lazy arrays against
numpy (the harness of `test_lazy_programs`): k-means, models trained by hand-written
gradient descent, PCA, stencils and PDE time loops, image and signal code, ML utilities,
statistics, and programs in float16, integers, uint8 and bools. Each states the numpy
functions it may fall back on; the third shape reuses what the second compiled."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dvm import lazy

sys.path.insert(0, str(Path(__file__).parent))
from test_lazy_programs import Array, Program, check, normal

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (numpy's, on ddof and 0/0)


def matrix(shape: tuple[int, int], dtype: Any, rng: np.random.Generator) -> tuple[Any, ...]:
    return (normal(rng, *shape, dtype=dtype),)


def labelled(shape: tuple[int, int], dtype: Any, rng: np.random.Generator) -> tuple[Any, ...]:
    return normal(rng, *shape, dtype=dtype), (rng.random(shape[0]) > 0.5).astype(dtype)


def points(shape: tuple[int, int], dtype: Any, rng: np.random.Generator) -> tuple[Any, ...]:
    return (rng.random((shape[0] * 5, 2)).astype(dtype),)


# -- learning --------------------------------------------------------------------------


def kmeans(x: Array, k: int = 3) -> Any:
    """Lloyd's iterations until the centroids stop moving (a data-dependent count)."""
    centroids = x[:k].copy()
    labels = None
    for _ in range(20):
        distances = ((x[:, None, :] - centroids[None, :, :]) ** 2).sum(-1)
        labels = np.argmin(distances, axis=1)
        moved = np.stack(
            [x[labels == j].mean(0) if (labels == j).any() else centroids[j] for j in range(k)]
        )
        if np.allclose(moved, centroids):
            break
        centroids = moved
    return centroids, labels


def kmeans_one_hot(x: Array) -> Any:
    """k-means with no masks: distances by the expanded square, counts by one-hot."""
    k = min(3, x.shape[0])
    centroids = x[:k]
    labels = None
    for _ in range(10):
        squared = (x**2).sum(1)[:, None] - 2 * x @ centroids.T + (centroids**2).sum(1)[None, :]
        labels = squared.argmin(1)
        one_hot = (labels[:, None] == np.arange(k)[None, :]).astype(x.dtype)
        moved = (one_hot.T @ x) / np.maximum(one_hot.sum(0), 1)[:, None]
        shift = np.linalg.norm(moved - centroids)
        centroids = moved
        if shift < 1e-6:
            break
    return centroids, labels


def logistic_regression(x: Array, y: Array) -> Any:
    n = x.shape[0]
    w = np.zeros_like(x[0])
    b = 0.0
    losses = []
    for step in range(30):
        p = 1 / (1 + np.exp(-(x @ w + b)))
        p = np.clip(p, 1e-7, 1 - 1e-7)
        loss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
        w -= 0.1 * (x.T @ (p - y) / n)
        b -= 0.1 * float(np.mean(p - y))
        if step % 10 == 0:
            losses.append(f"{float(loss):.3f}")
    return w, b, losses


def two_layer_mlp(x: Array, y: Array) -> Any:
    rng = np.random.default_rng(0)
    n, d = x.shape
    w1 = rng.standard_normal((d, 8)).astype(x.dtype) * 0.1
    w2 = rng.standard_normal((8, 1)).astype(x.dtype) * 0.1
    loss = None
    for _ in range(10):
        h = np.tanh(x @ w1)
        error = (h @ w2)[:, 0] - y
        loss = (error**2).mean()
        grad_out = (2 * error / n)[:, None]
        grad_h = grad_out @ w2.T * (1 - h**2)
        w2 -= 0.05 * (h.T @ grad_out)  # (numpy's w2: a write into it, a sync point)
        w1 -= 0.05 * (x.T @ grad_h)
    return w1, w2, loss


def adam(x: Array) -> Any:
    w = x.copy()
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t in range(1, 4):
        g = 2 * w
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w -= 1e-3 * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return w


def pca(x: Array) -> Any:
    centered = x - x.mean(axis=0)
    covariance = centered.T @ centered / (x.shape[0] - 1)
    values, vectors = np.linalg.eigh(covariance)
    order = np.argsort(values)[::-1]
    projected = centered @ vectors[:, order][:, :2]
    return projected.shape, (projected**2).sum()  # (the sign of a vector is eigh's choice)


def zscore(x: Array) -> Any:
    return (x - x.mean(0)) / np.std(x, axis=0, ddof=1), x.var(ddof=1)


# -- stencils and PDEs ------------------------------------------------------------------


def heat_1d(u: Array) -> Any:
    u = u[0].copy()
    for _ in range(6):
        u[1:-1] = u[1:-1] + 0.1 * (u[:-2] - 2 * u[1:-1] + u[2:])
    return u


def heat_2d_periodic(u: Array) -> Any:
    for _ in range(4):
        neighbours = np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1)
        u = u + 0.1 * (neighbours - 4 * u)
    return u


def wave_1d(u: Array) -> Any:
    previous, current = u.copy(), u.copy()
    for _ in range(3):
        laplacian = np.zeros_like(current)
        laplacian[1:-1] = current[2:] - 2 * current[1:-1] + current[:-2]
        previous, current = current, 2 * current - previous + 0.1 * laplacian
    return current


def derivatives(x: Array) -> Any:
    row = x[0]
    return (np.diff(x, axis=1), np.cumsum(x, axis=0), np.gradient(row),
            np.gradient(x, 0.5, axis=0) if x.shape[0] > 1 else row)  # fmt: skip


def game_of_life(x: Array) -> Any:
    grid = (x > 0).astype(np.int64)
    for _ in range(3):
        shifts = [(i, j) for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0)]
        neighbours = sum(np.roll(np.roll(grid, i, 0), j, 1) for i, j in shifts)
        grid = np.where((neighbours == 3) | ((grid == 1) & (neighbours == 2)), 1, 0)
    return grid, np.count_nonzero(grid)


# -- signals and images -----------------------------------------------------------------


def moving_average(x: Array) -> Any:
    csum = np.cumsum(x, axis=1)
    row = x[0]
    return ((csum[:, 3:] - csum[:, :-3]) / 3, np.convolve(row, np.ones(3) / 3, mode="same"),
            np.convolve(row, [1, -2, 1], "valid"), np.convolve([0.25, 0.5, 0.25], row))  # fmt: skip


def gamma_correction(x: Array) -> Any:
    image = (np.abs(x) * 100).astype(np.uint8)
    low, high = image.min(axis=0, keepdims=True), image.max(axis=0, keepdims=True)
    scaled = (image - low) / (high - low + 1e-8)
    corrected = np.power(scaled, 1 / 2.2)
    return (np.clip(np.round(corrected * 255), 0, 255).astype(np.uint8),
            (corrected * 300).astype(np.uint8), 255 - image, image + 10)  # fmt: skip


def histogram_equalization(x: Array) -> Any:
    image = (np.abs(x) * 50).astype(np.uint8)
    histogram, bins = np.histogram(image.ravel(), 256, (0, 256))
    cdf = histogram.cumsum()
    cdf = cdf / cdf[-1]
    return np.interp(image.ravel(), bins[:-1], cdf * 255).reshape(image.shape).astype(np.uint8)


# -- ML utilities -------------------------------------------------------------------------


def cross_entropy(logits: Array) -> Any:
    n, k = logits.shape
    labels = np.arange(n) % k
    e = np.exp(logits - logits.max(1, keepdims=True))
    p = e / e.sum(1, keepdims=True)
    one_hot = np.eye(k)[labels]
    predicted = np.eye(k, dtype=logits.dtype)[p.argmax(1)]
    return (-np.log(p[np.arange(n), labels]).mean(), -(one_hot * np.log(p)).sum(1).mean(),
            (p.argmax(1) == labels).mean(), predicted)  # fmt: skip


def retrieval(x: Array) -> Any:
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    similarity = unit @ unit.T
    top = np.argsort(similarity, axis=1)[:, ::-1][:, :2]
    return similarity, top, np.take_along_axis(similarity, top, axis=1)


def causal_attention(x: Array) -> Any:
    n, d = x.shape
    scores = np.einsum("id,jd->ij", x, x) / np.sqrt(d)
    scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("ij,jd->id", p, x)


def noisy(x: Array) -> Any:
    rng = np.random.default_rng(0)
    return x + 0.1 * rng.normal(size=x.shape).astype(x.dtype), (x > rng.random(x.shape)).sum()


# -- statistics -------------------------------------------------------------------------


def summary_statistics(x: Array) -> Any:
    return (np.mean(x), np.var(x), np.percentile(x, 90), np.median(x, axis=0),
            np.histogram(x, bins=5)[0], np.corrcoef(x.T)[0])  # fmt: skip


def robust_statistics(x: Array) -> Any:
    """Outliers by the median absolute deviation, and an interquartile clip."""
    med = np.median(x, axis=0)
    mad = np.median(np.abs(x - med), axis=0)
    outliers = np.abs(0.6745 * (x - med) / (mad + 1e-12)) > 3.5
    q1, q3 = np.percentile(x, [25, 75], axis=0)
    clipped = np.clip(x, q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1))
    return med, mad, outliers.sum(), clipped.mean(axis=0), np.median(x), np.quantile(x, 0.9)


def steps(x: Array) -> Any:
    return np.heaviside(x, 0.5), np.heaviside(x - x.mean(), x)


def inserted_moving_average(x: Array, w: int = 3) -> Any:
    """Two cumulative-sum moving averages (the second with a leading zero inserted)."""
    s = x.ravel()
    c = np.cumsum(s, dtype=float)
    c[w:] = c[w:] - c[:-w]
    padded = np.cumsum(np.insert(s, 0, 0.0))
    return c[w - 1 :] / w, (padded[w:] - padded[:-w]) / w


def monte_carlo_pi(points: Array) -> Any:
    inside = points[:, 0] ** 2 + points[:, 1] ** 2 <= 1
    return 4 * inside.mean(), np.count_nonzero(inside), inside.sum()


def counting(x: Array) -> Any:
    labels = (np.abs(x) * 10).astype(np.int64).ravel()
    return np.bincount(labels), np.unique(labels, return_counts=True)


# -- dtypes -------------------------------------------------------------------------------


def half_precision(x: Array) -> Any:
    h = x.astype(np.float16)
    y = np.tanh(h) * np.float16(0.5) + h * 2
    return y, (h > 0).sum(), h.max(), np.sqrt(np.abs(h))


def small_integers(x: Array) -> Any:
    a = (x * 10).astype(np.int8)
    f = x.astype(np.float32)
    return (a + 1, a * 100, a // 3, a % 3, a >> 1, a + np.int64(5), a * 0.5,
            f * 2.5, f + np.float32(1.5), f * np.float64(2), np.float32(3) - f,
            (x * 1000).astype(np.uint8), (x * 1e5).astype(np.int16))  # fmt: skip


def index_arithmetic(x: Array) -> Any:
    i = np.arange(x.shape[0], dtype=np.int32)
    counts = (np.abs(x) * 10).astype(np.int32)
    return (counts * 3 + i[:, None]) % 5, (counts // 2).astype(np.int64) - i[:, None]


def masks(x: Array) -> Any:
    m = x > 0
    return x[m].sum(), np.where(m, x, 0).sum(0), m.mean(), (~m).sum(1), m.any(), m.all(0)


PROGRAMS = {
    "kmeans": Program(kmeans, matrix, fallbacks=frozenset({"ndarray.__getitem__"}), reuses=False),
    "kmeans_one_hot": Program(kmeans_one_hot, matrix, reuses=False),
    "logistic_regression": Program(logistic_regression, labelled),
    "two_layer_mlp": Program(two_layer_mlp, labelled, fallbacks=frozenset({"subtract"})),
    "adam": Program(adam, matrix),
    "pca": Program(pca, matrix, fallbacks=frozenset({"eigh", "argsort"})),
    "zscore": Program(zscore, matrix),
    "heat_1d": Program(heat_1d, matrix),
    "heat_2d_periodic": Program(heat_2d_periodic, matrix),
    "wave_1d": Program(wave_1d, matrix),
    "derivatives": Program(derivatives, matrix),
    "game_of_life": Program(game_of_life, matrix),
    "moving_average": Program(moving_average, matrix),
    "gamma_correction": Program(gamma_correction, matrix),
    "histogram_equalization": Program(
        histogram_equalization, matrix, fallbacks=frozenset({"histogram", "interp"})
    ),
    "cross_entropy": Program(cross_entropy, matrix),
    "retrieval": Program(retrieval, matrix, fallbacks=frozenset({"argsort", "take_along_axis"})),
    "causal_attention": Program(causal_attention, matrix),
    "noisy": Program(noisy, matrix),
    "summary_statistics": Program(
        summary_statistics,
        matrix,
        fallbacks=frozenset({"percentile", "median", "histogram", "corrcoef"}),
    ),
    "robust_statistics": Program(
        robust_statistics, matrix, fallbacks=frozenset({"median", "percentile", "quantile"})
    ),
    "steps": Program(steps, matrix),
    "inserted_moving_average": Program(inserted_moving_average, matrix),
    "monte_carlo_pi": Program(monte_carlo_pi, points),
    "counting": Program(counting, matrix, fallbacks=frozenset({"bincount", "unique"})),
    "half_precision": Program(half_precision, matrix, dtypes=[np.float32]),
    "small_integers": Program(small_integers, matrix, dtypes=[np.float32]),
    "index_arithmetic": Program(index_arithmetic, matrix, dtypes=[np.float64]),
    "masks": Program(masks, matrix, fallbacks=frozenset({"ndarray.__getitem__"})),
}


@pytest.mark.parametrize(
    ("name", "dtype"),
    [(name, dtype) for name, program in PROGRAMS.items() for dtype in program.dtypes],
)
def test_science_program(name: str, dtype: Any) -> None:
    check(name, PROGRAMS[name], dtype)


def test_gradient_records_as_numpy_computes_it() -> None:
    """`np.gradient` of floats and integers, along one axis, several or all, with a
    spacing: numpy's bits and dtype, nothing run in numpy; a spacing of an array, or
    `edge_order=2`, falls back."""
    rng = np.random.default_rng(3)
    calls: list[tuple[tuple[int, ...], tuple[Any, ...], dict[str, Any]]] = [
        ((7,), (), {}), ((5, 4), (), {}), ((5, 4), (), {"axis": -1}), ((2, 3), (2, 3.0), {}),
        ((1, 4), (0.5,), {"axis": 1}), ((3, 4), (), {"axis": (1, 0)}),
    ]  # fmt: skip
    for shape, spacings, options in calls:
        for dtype in (np.float16, np.float32, np.float64, np.int32, np.uint8):
            x = (rng.standard_normal(shape) * 10).astype(dtype)
            before = dict(lazy.stats()["fallbacks"])
            got, want = (np.gradient(a, *spacings, **options) for a in (lazy.asarray(x), x))
            assert dict(lazy.stats()["fallbacks"]) == before, (shape, dtype)
            assert type(got) is (tuple if isinstance(want, tuple) else lazy.LazyArray)
            for g, w in zip(
                got if isinstance(got, tuple) else [got],
                want if isinstance(want, tuple) else [want],
                strict=True,
            ):
                g = np.asarray(g)
                assert (g.dtype, g.shape) == (w.dtype, w.shape) and np.array_equal(g, w)
    x = rng.standard_normal(5)
    np.testing.assert_array_equal(
        np.gradient(lazy.asarray(x), edge_order=2), np.gradient(x, edge_order=2)
    )
    np.testing.assert_array_equal(
        np.gradient(lazy.asarray(x), np.arange(5.0)), np.gradient(x, np.arange(5.0))
    )
    with pytest.raises(ValueError):
        np.gradient(lazy.asarray(x[:1]))


def test_count_nonzero_of_the_whole_array_is_a_number() -> None:
    """Of the whole array, the count records with what is pending and is a number of
    numpy's type."""
    x = np.random.default_rng(4).standard_normal((5, 3))
    before = dict(lazy.stats()["fallbacks"])
    count = np.count_nonzero(lazy.asarray(x) > 0)
    want = np.count_nonzero(x > 0)
    assert type(count) is type(want) and count == want
    kept = np.count_nonzero(lazy.asarray(x), axis=None, keepdims=True)
    assert type(kept) is lazy.LazyArray and np.asarray(kept).shape == (1, 1)
    assert dict(lazy.stats()["fallbacks"]) == before


def test_convolve_with_a_known_kernel_records() -> None:
    """A lazy signal and a kernel of numbers, either way round, in each mode and dtype:
    numpy's dtype, shape and values; a kernel with an infinity, float16 and bools, a
    kernel longer than `MAX_KERNEL`, and an empty one fall back (its error)."""
    rng = np.random.default_rng(5)
    kernels: list[Any] = [[1 / 3] * 3, np.ones(4, np.float32) / 4, np.array([1, -2, 1]), [2]]
    for n in (1, 2, 5, 8):
        for kernel in kernels:
            for dtype in (np.float32, np.float64, np.int32, np.uint8):
                x = (rng.standard_normal(n) * 5).astype(dtype)
                for mode in ("full", "same", "valid"):
                    before = dict(lazy.stats()["fallbacks"])
                    want = np.convolve(x, kernel, mode)
                    got = np.asarray(np.convolve(lazy.asarray(x), kernel, mode))
                    swapped = np.asarray(np.convolve(kernel, lazy.asarray(x), mode))
                    assert dict(lazy.stats()["fallbacks"]) == before
                    for result in (got, swapped):
                        assert (result.dtype, result.shape) == (want.dtype, want.shape)
                        np.testing.assert_allclose(result, want, rtol=1e-5, atol=1e-5)
    x = rng.standard_normal(6)
    for kernel in ([1.0, np.inf], np.ones(17), np.array([1, 2], np.float16)):
        np.testing.assert_array_equal(np.convolve(lazy.asarray(x), kernel), np.convolve(x, kernel))
    with pytest.raises(ValueError):
        np.convolve(lazy.asarray(x), [])
