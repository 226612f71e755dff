"""numpy functions of scientists' programs that record, against numpy: `gradient`,
`convolve` with a known kernel and `count_nonzero` of a whole array."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from dvm import lazy

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (numpy's, on ddof and 0/0)


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


def test_count_nonzero_of_the_whole_array_is_an_int() -> None:
    """Of the whole array, the count records with what is pending and is a Python int."""
    x = np.random.default_rng(4).standard_normal((5, 3))
    before = dict(lazy.stats()["fallbacks"])
    count = np.count_nonzero(lazy.asarray(x) > 0)
    assert type(count) is int and count == np.count_nonzero(x > 0)
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
