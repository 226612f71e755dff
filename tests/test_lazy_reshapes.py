"""`dvm.lazy`'s reshapes: recorded as the dims they merge and split, with sizes named
by the arguments' dims they equal, so that the compiler fuses across them."""

from __future__ import annotations

from typing import Any

import numpy as np

from dvm import lazy


def normal(*shape: int, seed: int = 0) -> np.ndarray[Any, Any]:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def test_a_squeezed_dim_keeps_a_static_size() -> None:
    """An argument whose type fixes a size (as `dvm.torch` types a value torch's graph
    fixes), squeezed: the collapse's type keeps the size, as its verifier wants."""
    a = normal(3, 32, 1, 5)
    x = lazy.asarray(a)
    x._node.static = (None, 32, 1, None)
    failed = lazy.stats()["failed"]
    squeezed = np.squeeze(x, 2) + 1
    assert "into tensor<?x32x?xf32>" in lazy.explain(squeezed)
    np.testing.assert_array_equal(np.asarray(squeezed), np.squeeze(a, 2) + 1)
    regrown = np.asarray(x.reshape(3, 32, 5)[:, None] * 2)
    np.testing.assert_array_equal(regrown, a.reshape(3, 1, 32, 5) * 2)
    assert lazy.stats()["failed"] == failed
