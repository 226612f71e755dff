"""More whole numpy programs on lazy arrays against numpy, as `test_lazy_programs.py`
runs them (its `Program` and `check`): optimizers, losses, clustering,
filters, numpy's composite functions, boolean and integer arrays. The stream of shapes
adds empty arrays (a dim of 0) after the shapes whose structure must be reused. Each
program states the numpy functions it may fall back on; any other fallback fails.
Inputs are seeded.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_lazy_programs import (
    FLOATS,
    Program,
    check,
    normal,
    row,
)

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (numpy's, on 0 / 0)

Array = Any

SHAPES = [(1, 7), (11, 7), (17, 13), (0, 5), (6, 0)]
"""(rows, columns): a unit dim, non-square primes (the third shape reuses what the
second compiled), then no rows and no columns."""


def two(shape: tuple[int, int], dtype: Any, rng: np.random.Generator) -> tuple[Any, ...]:
    return normal(rng, *shape, dtype=dtype), normal(rng, *shape, dtype=dtype)


def with_nans(shape: tuple[int, int], dtype: Any, rng: np.random.Generator) -> tuple[Any, ...]:
    x = normal(rng, *shape, dtype=dtype)
    x.flat[::3] = np.nan
    x.flat[1::5] = np.inf
    return (x,)


# -- optimizers and losses ---------------------------------------------------------------


def adam(p: Array, g: Array) -> tuple[Array, ...]:
    m, v = np.zeros_like(p), np.zeros_like(p)
    beta1, beta2, lr, eps = 0.9, 0.999, 1e-2, 1e-8
    for t in range(1, 4):
        m *= beta1
        m += (1 - beta1) * g
        v *= beta2
        v += (1 - beta2) * g**2
        m_hat, v_hat = m / (1 - beta1**t), v / (1 - beta2**t)
        p -= lr * m_hat / (np.sqrt(v_hat) + eps)
        g = g * 0.5
    return p, m, v


def logistic_until_small(X: Array, y: Array) -> tuple[Any, ...]:
    """Gradient descent until the gradient's norm is small (a branch on a value)."""
    w, b, steps = np.zeros(X.shape[1], X.dtype), X.dtype.type(0), 0
    while True:
        p = 1.0 / (1.0 + np.exp(-(X @ w + b)))
        grad = X.T @ (p - y) / max(len(y), 1)
        w = w - 0.1 * grad
        b = b - 0.1 * np.mean(p - y) if len(y) else b
        steps += 1
        if np.linalg.norm(grad) < 1e-2 or steps >= 12:
            return w, b, steps


def cross_entropy(logits: Array, labels: Array) -> tuple[Any, ...]:
    n = logits.shape[0]
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    picked = p[np.arange(n), labels]
    along = np.take_along_axis(p, labels[:, None], axis=1)
    grad = p.copy()
    grad[np.arange(n), labels] -= 1
    return picked, along, -np.log(picked + 1e-12).mean(), grad, p[:, labels], p[[0, -1]]


def logits_and_labels(shape: tuple[int, int], dtype: Any, rng: np.random.Generator) -> Any:
    rows, classes = shape[0] + 1, shape[1] + 2
    return normal(rng, rows, classes, dtype=dtype), rng.integers(0, classes, rows)


def kmeans_step(X: Array, centers: Array) -> tuple[Any, ...]:
    distances = ((X[:, None, :] - centers[None]) ** 2).sum(-1)
    labels = distances.argmin(axis=1)
    one_hot = labels[:, None] == np.arange(len(centers))
    counts = np.bincount(labels, minlength=len(centers))
    means = one_hot.T.astype(X.dtype) @ X / np.maximum(counts, 1)[:, None]
    return labels, one_hot, counts, means, distances.min(axis=1).sum()


def points(shape: tuple[int, int], dtype: Any, rng: np.random.Generator) -> tuple[Any, ...]:
    return normal(rng, shape[0] + 3, shape[1] + 1, dtype=dtype), normal(
        rng, 3, shape[1] + 1, dtype=dtype
    )


def principal(X: Array) -> tuple[Any, ...]:
    centred = X - X.mean(axis=0)
    cov = centred.T @ centred / max(len(X) - 1, 1)
    return (
        np.linalg.norm(centred, axis=0, keepdims=True), np.linalg.norm(centred, ord=1, axis=1),
        cov, np.trace(cov), np.diag(cov), np.diag(np.diag(cov)), cov.diagonal(1), cov.trace(-1),
        np.diag(X[:1].sum(0), 1), np.diag(X, -2),
    )  # fmt: skip


def cosine(a: Array, b: Array) -> tuple[Array, ...]:
    an = a / np.linalg.norm(a, axis=1, keepdims=True)
    bn = b / np.linalg.norm(b, axis=1, keepdims=True)
    return an @ bn.T, np.sum(an * bn, axis=1), np.einsum("ij,ij->i", an, bn), np.isclose(an, bn)


MODELS = {
    "adam": Program(adam, two, fallbacks=frozenset({"multiply", "add", "subtract"})),
    "logistic_until_small": Program(
        logistic_until_small,
        lambda s, d, r: (normal(r, *s, dtype=d), (r.random(s[0]) > 0.5).astype(d)),
        reuses=False,
    ),
    "cross_entropy": Program(
        cross_entropy, logits_and_labels, fallbacks=frozenset({"take_along_axis"})
    ),
    "kmeans_step": Program(kmeans_step, points, fallbacks=frozenset({"bincount"})),
    "principal": Program(principal, row),
    "cosine": Program(cosine, two),
}


# -- filters, composites, reductions -----------------------------------------------------


def filters(img: Array) -> tuple[Array, ...]:
    laplace = (np.roll(img, 1, 0) + np.roll(img, -1, 0) + np.roll(img, 1, 1)
               + np.roll(img, -1, 1) - 4 * img)  # fmt: skip
    gradients = (img[:, 1:] - img[:, :-1], np.clip(img, -1, None), np.clip(img, None, 0.5))
    if not img.size:  # (numpy cannot pad an empty axis by copying)
        return laplace, *gradients
    return (
        laplace, *gradients, np.pad(img, 1, mode="edge"), np.pad(img, (0, 2), mode="reflect"),
        np.pad(img, ((1, 2), (0, 3)), mode="wrap"), np.pad(img, ((2, 1), (3, 0)), "symmetric"),
    )  # fmt: skip


def composites(a: Array, b: Array) -> tuple[Any, ...]:
    return (
        np.isclose(a, b, atol=0.5), np.isclose(a, a + 1e-12), np.isclose(1.0, a, rtol=0.5),
        np.allclose(a, a), np.allclose(a, b), np.fmax(a, np.where(b > 0, np.nan, b)),
        np.fmin(np.nan, a), np.logical_xor(a > 0, b > 0), np.sin(a) ** 2 + np.cos(a) ** 2,
    )  # fmt: skip


def nan_statistics(x: Array) -> tuple[Any, ...]:
    return (
        np.nansum(x), np.nansum(x, axis=0), np.nanmean(x, axis=1, keepdims=True),
        np.nanmean(x), np.isclose(x, x, equal_nan=True), np.isclose(x, 0.5), np.allclose(x, x),
    )  # fmt: skip


def masked_reductions(x: Array) -> tuple[Any, ...]:
    positive = x > 0
    return (
        x.sum(where=positive), np.sum(x, axis=0, where=positive), x.prod(axis=1, where=positive),
        x.mean(where=positive), np.mean(x, axis=0, where=positive[:1]), x.mean(dtype=np.float64),
        np.sum(x, where=[True] * x.shape[1], keepdims=True), x.sum(dtype=np.float32),
    )  # fmt: skip


def grids(x: Array) -> tuple[Any, ...]:
    n, m = x.shape
    X, Y = np.meshgrid(np.linspace(0, 1, m), np.arange(n))
    return X * x, Y + x, x * np.arange(m), x + np.linspace(-1, 1, m, dtype=x.dtype)


def views(x: Array) -> tuple[Array, ...]:
    tail = x[1:]
    tail += 1
    if x.shape[1]:
        x.T[-1] *= 2
    flat = x.reshape(-1)
    flat[:2] = 7
    every_other = x[:, ::2]
    every_other -= 3
    return x, tail, flat, every_other


DATA = {
    "filters": Program(filters, row),
    "composites": Program(composites, two),
    "nan_statistics": Program(nan_statistics, with_nans),
    "masked_reductions": Program(masked_reductions, row),
    "grids": Program(grids, row),
    "views": Program(  # (writes into the caller's array run in numpy: nothing to reuse)
        views, row, fallbacks=frozenset({"add", "multiply", "subtract"}), reuses=False
    ),
}


# -- booleans and integers ----------------------------------------------------------------


def booleans(x: Array) -> tuple[Any, ...]:
    m = x > 0
    logical = (np.logical_xor(m, x < 1), m ^ True, m.sum(axis=1), m + m, m.mean(axis=0))
    if not m.size:  # (numpy's extrema of nothing raise)
        return logical
    return (*logical, m.max(axis=1), m.min(axis=0), m.argmax(axis=1), np.argmin(m, axis=0))


def indexing(x: Array) -> tuple[Any, ...]:
    rows = np.arange(x.shape[0])
    every_column = x[rows[:, None], np.arange(x.shape[1])[None]]
    if not x.size:
        return (every_column,)
    columns = rows % x.shape[1]
    return every_column, x[rows, columns], x[[0, -1]], x[..., [0, -1]], x[[[0]], :]


def integers(shape: tuple[int, int], dtype: Any, rng: np.random.Generator) -> tuple[Any, ...]:
    return (rng.integers(-20, 20, shape).astype(dtype),)


INTEGERS = [np.int32, np.int64, np.uint8, np.int8]


def integer_composites(x: Array) -> tuple[Any, ...]:
    padded = np.pad(x, 1, mode="edge") if x.size else x
    return (
        np.isclose(x, 3), np.allclose(x, x), np.trace(x), np.diag(x), x.sum(where=x > 0),
        np.nansum(x), np.nanmean(x, axis=0), np.fmax(x, 2), padded,
    )  # fmt: skip


TYPES = {
    "booleans": Program(booleans, row, dtypes=[np.float64]),
    "indexing": Program(indexing, integers, dtypes=[np.int32, np.float32]),
    "integer_composites": Program(integer_composites, integers, dtypes=INTEGERS),
}

PROGRAMS = {**MODELS, **DATA, **TYPES}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program(name: str) -> None:
    program = PROGRAMS[name]
    for dtype in program.dtypes or FLOATS:
        check(name, program, dtype, SHAPES)
