"""Whole numpy programs on lazy arrays against numpy: each function is written as a
numpy user writes it, runs on numpy arrays and on `dvm.lazy.asarray` ones over a stream
of shapes (a 1, primes, non-square), and must give numpy's results (dtype and shape
exactly, values within the float tolerance of its inputs, Python scalars and strings as
numpy's) or numpy's error. Each program states the numpy functions it may fall back on
(what the dialect cannot express); any other fallback fails. On the stream's third shape,
the second of the structure the stream's second shape made, no segment compiles: the
programs compiled for the second are reused. Inputs are seeded.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dvm import lazy

sys.path.insert(0, str(Path(__file__).parent))
from test_lazy_numpy_semantics import as_numpy

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (numpy's, on log(0))

Array = Any
"""An ndarray or a lazy array: the programs take either."""

SHAPES = [(1, 7), (11, 7), (17, 13), (23, 19)]
"""(rows, columns): a unit dim, then non-square primes none of the programs' constants
equal. The third shape must reuse what the second compiled."""

FLOATS = [np.float32, np.float64]
TOLERANCE = {np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-9}


@dataclass
class Program:
    function: Callable[..., Any]
    inputs: Callable[[tuple[int, int], Any, np.random.Generator], tuple[Any, ...]]
    dtypes: list[Any] = field(default_factory=lambda: list(FLOATS))
    fallbacks: frozenset[str] = frozenset()
    """The calls it may run in numpy."""
    reuses: bool = True
    """Whether its structure is the same on every shape (not on data-dependent sizes)."""


def outcome(function: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    try:
        return as_numpy(function(*args))
    except Exception as error:  # (compared by type with numpy's own error)
        return type(error)


def agree(got: Any, want: Any, tolerance: float, where: str) -> None:
    """numpy's result: dtype and shape exactly, floats within `tolerance`."""
    if isinstance(want, type):
        assert got is want, f"{where}: {got} raised, numpy raised {want}"
    elif isinstance(want, list | tuple):
        assert type(got) is type(want) and len(got) == len(want), where
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            agree(g, w, tolerance, f"{where}[{k}]")
    elif isinstance(want, np.ndarray | np.generic):
        got = np.asarray(got)
        assert (got.dtype, got.shape) == (want.dtype, want.shape), where
        if want.dtype.kind == "f":
            desired: Any = want  # (numpy's stubs take no `generic` here)
            np.testing.assert_allclose(got, desired, tolerance, tolerance, err_msg=where)
        else:
            np.testing.assert_array_equal(got, want, err_msg=where)
    elif isinstance(want, float):
        assert type(got) is float and math.isclose(got, want, rel_tol=tolerance), where
    else:
        assert type(got) is type(want) and got == want, f"{where}: {got!r} != {want!r}"


def new_fallbacks(before: dict[str, int]) -> set[str]:
    return {k for k, v in lazy.stats()["fallbacks"].items() if v > before.get(k, 0)}


def check(name: str, program: Program, dtype: Any, shapes: list[tuple[int, int]] = SHAPES) -> None:
    """The program on each of `shapes`, in numpy and on lazy arrays; the third must
    reuse what the second compiled where the program says it does."""
    tolerance = TOLERANCE.get(np.dtype(dtype), 1e-4)
    for step, shape in enumerate(shapes):
        rng = np.random.default_rng((len(name), step, np.dtype(dtype).num))
        args = program.inputs(shape, dtype, rng)
        want = outcome(program.function, tuple(copied(a) for a in args))
        before = lazy.stats()
        got = outcome(program.function, tuple(lazy_copy(a) for a in args))
        where = f"{name} {np.dtype(dtype)} {shape}"
        agree(got, want, tolerance, where)
        unexpected = new_fallbacks(before["fallbacks"]) - program.fallbacks
        assert not unexpected, f"{where}: fell back on {unexpected}"
        if step == 2 and program.reuses:
            after = lazy.stats()
            assert after["compiled"] == before["compiled"], f"{where}: compiled again"
            assert after["reused"] > before["reused"], where


def copied(a: Any) -> Any:
    return a.copy() if isinstance(a, np.ndarray) else a


def lazy_copy(a: Any) -> Any:
    return lazy.asarray(a.copy()) if isinstance(a, np.ndarray) else a


def normal(rng: np.random.Generator, *shape: int, dtype: Any = np.float64) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


# -- normalizations and activations ---------------------------------------------------


def layer_norm(x: Array, weight: Array, bias: Array, eps: float = 1e-5) -> Array:
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def rms_norm(x: Array, weight: Array, eps: float = 1e-6) -> Array:
    return x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps) * weight


def batch_norm(x: Array, gamma: Array, beta: Array, running_mean: Array, running_var: Array,
               momentum: float = 0.1, eps: float = 1e-5) -> tuple[Array, Array, Array]:  # fmt: skip
    mean = x.mean(axis=0)
    var = x.var(axis=0)
    y = gamma * (x - mean) / np.sqrt(var + eps) + beta
    running_mean = (1 - momentum) * running_mean + momentum * mean
    if x.shape[0] > 1:
        running_var = (1 - momentum) * running_var + momentum * x.var(axis=0, ddof=1)
    return y, running_mean, running_var


def softmax(x: Array, axis: int = -1) -> Array:
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def softmax_in_place(x: Array) -> Array:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    e /= e.sum(axis=-1, keepdims=True)
    return e


def log_softmax(x: Array) -> Array:
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True))


def logsumexp(x: Array) -> Array:
    m = np.max(x, axis=1)
    return m + np.log(np.exp(x - m[:, None]).sum(axis=1))


def activations(x: Array) -> tuple[Array, ...]:
    gelu = 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    gelu_f64 = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * np.power(x, 3))))
    silu = x / (1 + np.exp(-x))
    softplus = np.logaddexp(0, x)
    relu6 = np.clip(x, 0, 6)
    leaky = np.where(x > 0, x, 0.01 * x)
    return gelu, gelu_f64, silu, softplus, relu6, leaky, np.maximum(x, 0), np.tanh(x)


def row(shape: tuple[int, int], dtype: Any, rng: np.random.Generator) -> tuple[Any, ...]:
    return (normal(rng, *shape, dtype=dtype),)


def with_row_vectors(count: int) -> Callable[..., tuple[Any, ...]]:
    """Inputs: a matrix, then `count` vectors as long as its rows."""

    def inputs(shape: tuple[int, int], dtype: Any, rng: np.random.Generator) -> tuple[Any, ...]:
        vectors = [normal(rng, shape[1], dtype=dtype) for _ in range(count)]
        return (normal(rng, *shape, dtype=dtype), *vectors)

    return inputs


def running_statistics(
    shape: tuple[int, int], dtype: Any, rng: np.random.Generator
) -> tuple[Any, ...]:
    return (
        *with_row_vectors(2)(shape, dtype, rng),
        np.zeros(shape[1], dtype),
        np.ones(shape[1], dtype),
    )


NORMALIZATIONS = {
    "layer_norm": Program(layer_norm, with_row_vectors(2)),
    "rms_norm": Program(rms_norm, with_row_vectors(1)),
    "batch_norm": Program(batch_norm, running_statistics),
    "softmax": Program(softmax, row),
    "softmax_columns": Program(lambda x: softmax(x, axis=0), row),
    "softmax_in_place": Program(softmax_in_place, row),
    "log_softmax": Program(log_softmax, row),
    "logsumexp": Program(logsumexp, row),
    "activations": Program(activations, row),
}


# -- attention, MLP, training loops ----------------------------------------------------


def causal_attention(q: Array, k: Array, v: Array) -> Array:
    n, d = q.shape
    scores = q @ k.T / np.sqrt(d)
    mask = np.triu(np.ones((n, n), dtype=bool), k=1)
    scores = np.where(mask, -np.inf, scores)
    return softmax(scores) @ v


def batched_attention(q: Array, k: Array, v: Array) -> tuple[Array, Array]:
    n, d = q.shape[1:]
    scores = np.einsum("bqd,bkd->bqk", q, k) * d**-0.5
    scores = np.where(np.tril(np.ones((n, n))) == 0, -np.inf, scores)
    scores = scores - scores.max(-1, keepdims=True)
    p = np.exp(scores)
    p /= p.sum(-1, keepdims=True)
    return np.matmul(p, v), p


def mlp_step(x: Array, w1: Array, b1: Array, w2: Array, b2: Array, y: Array) -> tuple[Any, ...]:
    """Forward, mean squared error and the gradients by hand."""
    h = x @ w1 + b1
    a = np.maximum(h, 0)
    out = a @ w2 + b2
    diff = out - y
    loss = 0.5 * np.mean(diff**2)
    g = diff / diff.size
    grad_w2, grad_b2 = a.T @ g, g.sum(axis=0)
    grad_h = (g @ w2.T) * (h > 0)
    grad_w1, grad_b1 = x.T @ grad_h, np.sum(grad_h, axis=0)
    return float(loss), grad_w1, grad_b1, grad_w2, grad_b2


def mlp_inputs(shape: tuple[int, int], dtype: Any, rng: np.random.Generator) -> tuple[Any, ...]:
    n, features = shape
    return (
        normal(rng, n, features, dtype=dtype), normal(rng, features, 6, dtype=dtype),
        normal(rng, 6, dtype=dtype), normal(rng, 6, 4, dtype=dtype), normal(rng, 4, dtype=dtype),
        normal(rng, n, 4, dtype=dtype),
    )  # fmt: skip


def logistic_regression(X: Array, y: Array, lr: float = 0.5, tol: float = 0.3) -> tuple[Any, ...]:
    """Gradient descent until the loss is under `tol` (a branch on a value)."""
    w = np.zeros(X.shape[1], dtype=X.dtype)
    b = 0.0
    losses: list[float] = []
    for _ in range(25):
        p = 1 / (1 + np.exp(-(X @ w + b)))
        loss = -np.mean(y * np.log(p + 1e-7) + (1 - y) * np.log(1 - p + 1e-7))
        losses.append(float(loss))
        if loss < tol:
            break
        g = p - y
        w -= lr * (X.T @ g) / len(y)
        b -= lr * float(g.mean())
    return w, b, losses, f"{losses[-1]:.3f}"


def classes(shape: tuple[int, int], dtype: Any, rng: np.random.Generator) -> tuple[Any, ...]:
    X = normal(rng, *shape, dtype=dtype)
    return X, (X[:, 0] + 0.3 * X[:, -1] > 0).astype(dtype)


def linear_regression(X: Array, y: Array, lr: float = 0.05) -> tuple[Any, ...]:
    w = np.zeros((X.shape[1], 1), X.dtype)
    losses = [math.inf]
    for _ in range(40):
        residual = X @ w - y
        losses.append(float((residual * residual).mean()))
        if abs(losses[-2] - losses[-1]) < 1e-4:
            break
        np.subtract(w, lr * 2 * X.T @ residual / X.shape[0], out=w)
    return w, len(losses), round(losses[-1], 3)


def momentum_sgd(w0: Array, g: Array) -> tuple[Array, Array]:
    w = w0.copy()
    velocity = np.zeros_like(w)
    for i in range(4):
        velocity *= 0.9
        velocity += 0.1 * g
        w -= 0.5 * velocity
        np.clip(w, -2, 2, out=w)
        w[0] = i
        w[:, -1] += 1
    return w, velocity


def regression(shape: tuple[int, int], dtype: Any, rng: np.random.Generator) -> tuple[Any, ...]:
    X = normal(rng, *shape, dtype=dtype) / 2
    return X, X @ normal(rng, shape[1], 1, dtype=dtype) + 0.1


IN_PLACE = frozenset({"add", "subtract", "multiply", "clip", "ndarray.__setitem__"})
"""In-place writes into arrays that exist: numpy's own (a sync point)."""

MODELS = {
    "causal_attention": Program(
        causal_attention, lambda s, d, r: tuple(normal(r, *s, dtype=d) for _ in range(3))
    ),
    "batched_attention": Program(
        batched_attention, lambda s, d, r: tuple(normal(r, 2, *s, dtype=d) for _ in range(3))
    ),
    "mlp_step": Program(mlp_step, mlp_inputs),
    "logistic_regression": Program(logistic_regression, classes, fallbacks=IN_PLACE, reuses=False),
    "linear_regression": Program(linear_regression, regression, fallbacks=IN_PLACE, reuses=False),
    "momentum_sgd": Program(
        momentum_sgd,
        lambda s, d, r: (normal(r, *s, dtype=d), normal(r, *s, dtype=d)),
        fallbacks=IN_PLACE,
    ),
}


# -- clustering and search ---------------------------------------------------------------


def kmeans(X: Array, centers: Array, steps: int = 3) -> tuple[Any, ...]:
    history = []
    for _ in range(steps):
        distances = ((X[:, None, :] - centers[None, :, :]) ** 2).sum(-1)
        labels = np.argmin(distances, axis=1)
        counts = np.bincount(labels, minlength=len(centers))
        centers = np.stack(
            [X[labels == c].mean(0) if counts[c] else centers[c] for c in range(len(centers))]
        )
        history.append((labels, counts, float(distances.min(axis=1).sum())))
    return centers, history


def kmeans_one_hot(X: Array, centers: Array) -> Array:
    labels = np.linalg.norm(X[:, None] - centers[None], axis=-1).argmin(1)
    one_hot = (labels[:, None] == np.arange(centers.shape[0])).astype(X.dtype)
    counts = one_hot.sum(0)
    means = one_hot.T @ X / np.maximum(counts, 1)[:, None]
    return np.where(counts[:, None] > 0, means, centers)


def points(shape: tuple[int, int], dtype: Any, rng: np.random.Generator) -> tuple[Any, ...]:
    centers = normal(rng, 4, shape[1], dtype=dtype)
    return normal(rng, 3 * shape[0] + 2, shape[1], dtype=dtype), centers


def cosine_top_k(query: Array, docs: Array, k: int = 2) -> tuple[Any, ...]:
    sims = docs / np.linalg.norm(docs, axis=1, keepdims=True) @ (query / np.linalg.norm(query))
    best = np.argsort(-sims)[:k]
    some = np.argpartition(-sims, k - 1)[:k]
    return best, sims[best], np.sort(sims[some])[::-1], int(np.argmax(sims))


def row_top_k(S: Array, k: int = 2) -> tuple[Array, Array, Array]:
    order = np.argsort(S, axis=1)[:, ::-1][:, :k]
    best = np.take_along_axis(S, np.argmax(S, axis=1)[:, None], axis=1)
    return order, np.take_along_axis(S, order, axis=1), best


SEARCH = {
    "kmeans": Program(
        kmeans, points, fallbacks=frozenset({"bincount", "ndarray.__getitem__"}), reuses=False
    ),
    "kmeans_one_hot": Program(kmeans_one_hot, points),
    "cosine_top_k": Program(
        cosine_top_k,
        lambda s, d, r: (normal(r, s[1], dtype=d), normal(r, s[0] + 4, s[1], dtype=d)),
        fallbacks=frozenset({"argsort", "argpartition", "sort"}),
    ),
    "row_top_k": Program(
        row_top_k,
        lambda s, d, r: (normal(r, s[0], s[1] + 2, dtype=d),),
        fallbacks=frozenset({"argsort", "take_along_axis"}),
    ),
}


# -- images, statistics, masks ---------------------------------------------------------------


def image_ops(img: Array) -> tuple[Array, ...]:
    p = np.pad(img, 1)
    box = (p[:-2, :-2] + p[:-2, 1:-1] + p[:-2, 2:] + p[1:-1, :-2] + p[1:-1, 1:-1]
           + p[1:-1, 2:] + p[2:, :-2] + p[2:, 1:-1] + p[2:, 2:]) / 9  # fmt: skip
    rolled = (img + np.roll(img, 1, axis=0) + np.roll(img, -1, axis=1)) / 3
    return (
        box, rolled, img[::2, 1::2], img[::-1, ::-2], np.flip(img), np.flip(img, 1),
        np.rot90(img), np.rot90(img, 2), np.rot90(img, -1), np.clip(img, -0.5, 0.5),
        np.pad(img, ((2, 1), (0, 3)), constant_values=0.5), np.roll(img, (1, 2), axis=(0, 1)),
        np.roll(img, 3), img.T[::3],
    )  # fmt: skip


def channels(img: Array) -> tuple[Array, ...]:
    gray = img @ np.array([0.299, 0.587, 0.114], img.dtype)
    as_bytes = (np.clip(img, 0, 1) * 255).astype(np.uint8)
    normalized = (img - img.mean(axis=(0, 1))) / (img.std(axis=(0, 1)) + 1e-6)
    return gray, as_bytes, as_bytes.astype(np.float32) / 255, normalized, img.mean(axis=-1)


def statistics(x: Array) -> tuple[Any, ...]:
    return (
        np.var(x, ddof=1), np.std(x, axis=0, ddof=1), x.std(), np.mean(x, axis=(0, 1)),
        np.cumsum(x, axis=1), np.cumsum(x), np.diff(x), np.diff(x, n=2, axis=-1),
        np.ptp(x, axis=1), np.average(x, axis=0), np.median(x), np.median(x, axis=1),
        np.percentile(x, 90), np.percentile(x, [25, 75], axis=0), np.quantile(x, 0.5),
        np.histogram(x, bins=5), np.histogram(x, bins=4, range=(-1, 1)),
        (x - x.mean(0)) / x.std(0), float(x.max() - x.min()),
    )  # fmt: skip


def masks(x: Array) -> tuple[Any, ...]:
    clipped = x.copy()
    clipped[clipped < 0] = 0
    return (
        x[x > 0], np.nonzero(x > 0.5), np.count_nonzero(x > 0), np.count_nonzero(x > 0, axis=1),
        clipped, np.where(x > 0, x, 0.0), np.any(x > 2), np.all(x > -5), (x > 0).any(axis=0),
        np.all(x < 3, axis=1), bool(np.any(x > 1)), x[np.abs(x) > 1].sum(), np.argwhere(x > 1),
        np.flatnonzero(x > 0), int((x > 0).sum()),
    )  # fmt: skip


DATA = {
    "image_ops": Program(image_ops, row),
    "channels": Program(channels, lambda s, d, r: (r.random((*s, 3)).astype(d),)),
    "statistics": Program(
        statistics,
        row,
        fallbacks=frozenset({"median", "percentile", "quantile", "histogram"}),
    ),
    "masks": Program(
        masks,
        row,
        fallbacks=frozenset(
            {"ndarray.__getitem__", "ndarray.__setitem__", "nonzero", "count_nonzero"}
            | {"argwhere", "flatnonzero"}
        ),
    ),
}


# -- array functions, integers, promotion, scalars --------------------------------------------


def contractions(a: Array, b: Array) -> tuple[Array, ...]:
    return (
        np.einsum("ij,jk->ik", a, b.T), np.einsum("ij->j", a), np.einsum("ij,ij->i", a, b),
        np.einsum("ij->", a), np.einsum("i,j->ij", a[0], b[0]), np.einsum("ij->ji", a),
        np.linalg.norm(a), np.linalg.norm(a, axis=1), np.linalg.norm(a, ord=1, axis=0),
        np.linalg.norm(a[0], ord=np.inf), np.linalg.norm(a, "fro"),
        np.linalg.norm(a, axis=1, keepdims=True), np.outer(a[0], b[:, 0]), a.dot(b.T),
    )  # fmt: skip


def rearrangements(x: Array) -> tuple[Any, ...]:
    pieces = np.array_split(x, 3, axis=1)
    halves = np.split(np.concatenate([x, x]), 2)
    return (
        np.tile(x, 2), np.tile(x, (2, 1)), np.repeat(x, 2), np.repeat(x, 3, axis=0),
        x.repeat(2, axis=1), np.stack([x, x * 2], axis=1), np.stack([x[0], x[-1]]), pieces,
        halves, np.hstack([x, x]), np.vstack([x, x[:1]]), np.column_stack([x[:, 0], x[:, -1]]),
        np.split(x, [1, 2], axis=1), x.ravel(), x.flatten(), x.T.reshape(-1, 1).squeeze(1),
    )  # fmt: skip


def integer_arithmetic(a: Array, b: Array) -> tuple[Any, ...]:
    return (
        a // 3, a % 3, a // -3, a % -3, -a // 4, (-a) % 4, a // b, a % b, np.floor_divide(a, b),
        np.mod(a, b), a * 2 - 5, a / 2, np.abs(a), a**2, a.sum(), a.mean(), a.max(axis=0),
        np.cumsum(a), a.prod(axis=1), a & 3, a >> 1, np.clip(a, -3, 3), np.where(a > 0, a, -a),
        np.maximum(a, 0) * 1.5, np.var(a), np.std(a, ddof=1), int(a.argmax()),
    )  # fmt: skip


def integers(shape: tuple[int, int], dtype: Any, rng: np.random.Generator) -> tuple[Any, ...]:
    a = rng.integers(-50, 50, shape).astype(dtype)
    b = (rng.integers(1, 7, shape) * rng.choice([-1, 1], shape)).astype(dtype)
    return a, b


def promotion(x: Array) -> tuple[Any, ...]:
    return (
        x * 2.5, np.float64(2.0) * x, x * np.float32(2), x + 1, x / 3, x**2, np.abs(x) ** 0.5,
        2**x, x * np.int64(3), x + np.array(1.5), x.sum() * 1.5,
        np.float64(1) + x.mean(), x + True, x // 0.7, x % 0.5, -x % 1.0, np.float16(2) * x,
        x * np.int8(2), x > np.float64(0.5), (x > 0) * 1.0, (x > 0) + (x < -1),
    )  # fmt: skip


def scalars(x: Array) -> tuple[Any, ...]:
    total = float(x.sum())
    where = int(np.argmax(x))
    text = f"{x.mean():.3f} {x.shape} {x.dtype}"
    return total, where, text, x.max().item(), int(x.argmin()), round(float(x.min()), 3), len(x)


def errors(x: Array) -> tuple[Any, ...]:
    """numpy's errors, one program each (the first raises)."""
    results = []
    for attempt in (
        lambda: x @ x,  # (rows != columns)
        lambda: x + x[:, :2],
        lambda: np.split(x, 2, axis=1),
        lambda: x.reshape(2, -1, 5),
        lambda: x.astype(np.int32) + 2**40,
        lambda: np.concatenate([x, x.T]),
        lambda: x[x.shape[0]],
    ):
        results.append(outcome(attempt, ()))
    return tuple(results)


ARRAYS = {
    "contractions": Program(
        contractions, lambda s, d, r: (normal(r, *s, dtype=d), normal(r, *s, dtype=d))
    ),
    "rearrangements": Program(rearrangements, row),
    "integer_arithmetic": Program(
        integer_arithmetic, integers, dtypes=[np.int32, np.int64, np.int8]
    ),
    "promotion": Program(promotion, row),
    "scalars": Program(scalars, row),
    "errors": Program(
        errors,
        row,
        fallbacks=frozenset(
            {"matmul", "add", "split", "reshape", "concatenate", "ndarray.__getitem__"}
        ),
    ),
}

PROGRAMS = {**NORMALIZATIONS, **MODELS, **SEARCH, **DATA, **ARRAYS}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program(name: str) -> None:
    program = PROGRAMS[name]
    for dtype in program.dtypes:
        check(name, program, dtype)


def test_explain_shows_a_program_at_each_level() -> None:
    x = lazy.asarray(normal(np.random.default_rng(0), 7, 3, dtype=np.float32))
    y = layer_norm(x, 1.0, 0.0)
    recorded = lazy.explain(y)
    assert "func.func @segment" in recorded and "tensor.reduce_mean" in recorded
    assert "tensor.fusion" in lazy.explain(y, passes="symbolic-shapes,fuse")
    assert lazy.explain(y, passes="dvm-pipeline")
    np.testing.assert_allclose(np.asarray(y), layer_norm(np.asarray(x), 1.0, 0.0), 1e-5, 1e-5)
