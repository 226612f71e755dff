"""`dvm.lazy`'s reshapes: recorded as the dims they merge and split, with sizes named
by the arguments' dims they equal, so that the compiler fuses across them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from dvm import lazy
from dvm.dialects import tensor as t
from dvm.lazy.record import reshape_groups
from dvm.pipeline import run


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


@pytest.mark.parametrize(
    ("source", "target", "groups"),
    [
        ((2, 3, 4), (6, 4), ([(0, 1), (2,)], [(0,), (1,)])),
        ((6, 4), (2, 3, 4), ([(0,), (1,)], [(0, 1), (2,)])),
        ((2, 3, 4), (2, 3, 2, 2), ([(0,), (1,), (2,)], [(0,), (1,), (2, 3)])),
        ((2, 3), (3, 2), ([(0, 1)], [(0, 1)])),  # no finer grouping
        ((5, 1, 7), (5, 7), ([(0,), (1, 2)], [(0,), (1,)])),
        ((5, 7), (5, 7, 1, 1), ([(0,), (1,)], [(0,), (1, 2, 3)])),
        ((0, 4), (4, 0), None),
    ],
)
def test_a_reshape_pairs_the_dims_it_merges_and_splits(
    source: tuple[int, ...], target: tuple[int, ...], groups: Any
) -> None:
    assert reshape_groups(source, target) == groups


RESHAPES = [
    ((3, 7, 16), (21, 16)),
    ((21, 16), (3, 7, 4, 4)),
    ((3, 7, 16), (3, 7, 2, 8)),
    ((3, 7, 16), (7, 3, 16)),
    ((6, 1, 5), (2, 3, 5, 1)),
    ((4, 6), (6, 4)),
    ((1, 5, 1), (5,)),
    ((0, 4), (2, 0, 2)),
]


@pytest.mark.parametrize(("source", "target"), RESHAPES)
def test_reshapes_match_numpy(source: tuple[int, ...], target: tuple[int, ...]) -> None:
    a = normal(*source)
    got = np.asarray(lazy.asarray(a).reshape(target) * 2 + 1)
    np.testing.assert_array_equal(got, a.reshape(target) * 2 + 1)


def test_a_flatten_keeps_the_dims_it_does_not_merge() -> None:
    x = lazy.asarray(normal(3, 7, 16))
    text = lazy.explain((x.reshape(21, 16) @ lazy.asarray(normal(16, 16))).reshape(3, 7, 16))
    assert "tensor.collapse_shape %a0 [[0, 1], [2]]" in text
    assert "tensor.expand_shape %v1 [[0, 1], [2]]" in text


def test_a_split_of_a_static_dim_is_static() -> None:
    a = normal(3, 32)
    x = lazy.asarray(a)
    x._node.static = (None, 32)
    split = x.reshape(3, 4, 8) * 2
    assert "into tensor<?x4x8xf32>" in lazy.explain(split)
    np.testing.assert_array_equal(np.asarray(split), a.reshape(3, 4, 8) * 2)


def test_an_unflatten_reads_its_sizes_from_the_argument() -> None:
    """The sizes of `.reshape(x.shape)` are the argument's dims (so the compiler knows
    the result has the argument's shape), not index arguments of their own."""
    x = lazy.asarray(normal(3, 7, 16))
    y = (x.reshape(-1, 16) @ lazy.asarray(normal(16, 16))).reshape(x.shape) + x
    text = lazy.explain(y)
    assert "output_shape [%d2, %d4, %d6]" in text and "%d2 = tensor.dim %a0, %c0" in text
    assert ": index" not in text.splitlines()[0]


def test_a_split_named_by_chance_only_when_all_its_sizes_are() -> None:
    """The sizes a dim splits into are named by equal dims only all together: a head
    size that equals another dim by chance reuses the program; when every size of the
    split equals a dim, that equality is part of the structure (a program of its own,
    with right results)."""

    def heads(x: Any) -> Any:
        b, s, d = x.shape
        return x.reshape(b, s, 2, d // 2).sum(-1)

    lazy.reset()
    for b, s, d in [(3, 5, 8), (5, 7, 8), (3, 4, 8), (2, 4, 8)]:
        a = normal(b, s, d)
        np.testing.assert_allclose(np.asarray(heads(lazy.asarray(a))), heads(a), rtol=1e-5)
    stats = lazy.stats()
    assert stats["compiled"] == 2 and stats["reused"] == 2  # (2, 4, 8): 2 == b, 4 == s
    assert stats["failed"] == 0


def test_a_second_split_into_the_same_sizes_is_named_as_the_first() -> None:
    """Attention splits each projection into the same heads: a batch equal to the head
    size by chance must not make the later splits differ from the first (one program)."""

    def two_heads(x: Any, w: Any) -> Any:
        b, s, _ = x.shape
        q = (x @ w).reshape(b, s, 2, 4)
        k = (x @ w * 2).reshape(b, s, 2, 4)
        return (q * k).sum(-1)

    lazy.reset()
    w = normal(8, 8, seed=1)
    for b, s in [(3, 5), (4, 5), (2, 5)]:
        a = normal(b, s, 8)
        got = np.asarray(two_heads(lazy.asarray(a), lazy.asarray(w)))
        np.testing.assert_allclose(got, two_heads(a, w), rtol=1e-5, atol=1e-5)
    stats = lazy.stats()
    assert stats["compiled"] == 1 and stats["reused"] == 2 and stats["failed"] == 0


def test_a_kept_dim_is_its_operands_even_when_two_dims_are_equal() -> None:
    """A reshape's kept dims are written as its operand's dims, not looked up by value:
    a batch equal to the length by chance is the same program."""

    def heads(x: Any) -> Any:
        b, s, d = x.shape
        return (x * 2).reshape(b, s, 2, d // 2).sum(-1)

    lazy.reset()
    for b, s in [(3, 5), (4, 4), (6, 6)]:
        a = normal(b, s, 16)
        np.testing.assert_allclose(np.asarray(heads(lazy.asarray(a))), heads(a), rtol=1e-5)
    stats = lazy.stats()
    assert stats["compiled"] == 1 and stats["reused"] == 2 and stats["failed"] == 0


def linear_layernorm(x: Any, w: Any, b: Any) -> Any:
    """A linear layer as torch writes one (flatten, matmul, unflatten), a residual
    add and a LayerNorm."""
    y = (x.reshape(-1, x.shape[-1]) @ w + b).reshape(x.shape)
    z = x + y
    return (z - z.mean(-1, keepdims=True)) / np.sqrt(z.var(-1, keepdims=True) + 1e-5)


def test_a_linear_layer_fuses_with_its_residual_and_layernorm() -> None:
    arrays = [normal(3, 7, 16), normal(16, 16, seed=1), normal(16, seed=2)]
    y = linear_layernorm(*map(lazy.asarray, arrays))
    module = run(lazy.explain(y), "symbolic-shapes,fuse")
    kernels = [op for op in module.walk() if isinstance(op, t.FusionOp)]
    assert any(
        any(isinstance(o, t.MatmulOp) for o in k.walk())
        and any(isinstance(o, t.ReduceOp) for o in k.walk())
        for k in kernels
    )
    np.testing.assert_allclose(np.asarray(y), linear_layernorm(*arrays), rtol=1e-4, atol=1e-4)


def test_a_flatten_that_merges_the_contracted_dims_matches_numpy() -> None:
    """`[B, S, 4, 4] -> [B * S, 16]` merges the matmul's contraction dims too: its
    collapse stays above the matmul (below, the matmul would be another product)."""
    x, w = normal(3, 7, 4, 4), normal(16, 5, seed=1)
    got = (lazy.asarray(x).reshape(21, 16) @ lazy.asarray(w)).reshape(3, 7, 5) + 1
    np.testing.assert_allclose(np.asarray(got), (x.reshape(21, 16) @ w).reshape(3, 7, 5) + 1,
                               rtol=1e-5, atol=1e-5)  # fmt: skip


ONES_THEN_BROADCAST = [
    ("ravel", lambda a, b: a.ravel() + b, [((2, 3), (6,)), ((1, 1), (5,))]),
    ("squeeze", lambda a, b: np.squeeze(a, 0) + b, [((1, 4), (4,)), ((1, 1), (5,))]),
    ("outer", lambda a, b: np.outer(b.ravel(), a.ravel()), [((2, 3), (4, 1)), ((1, 1), (3, 1))]),
    ("reshape", lambda a, b: a.reshape(1, -1) * b, [((1, 2, 2), (3, 4)), ((1, 1, 1), (3, 4))]),
]


@pytest.mark.parametrize(
    ("function", "shapes"),
    [case[1:] for case in ONES_THEN_BROADCAST],
    ids=[case[0] for case in ONES_THEN_BROADCAST],
)
def test_a_reshape_of_ones_broadcasts_as_numpys_1(function: Any, shapes: Any) -> None:
    """Dims of size 1 merged, or split into 1s only, make a static 1, so the result
    broadcasts: the compiler stretches a `?` of size 1 only where it is an argument's
    dim, not a product of them (`a_0*a_1`), and the call raised a `CallError`. The
    same code runs first on a shape where the dims are not 1."""
    for shape_a, shape_b in shapes:
        a, b = normal(*shape_a, seed=1), normal(*shape_b, seed=2)
        failed = lazy.stats()["failed"]
        got = np.asarray(function(lazy.asarray(a), lazy.asarray(b)))
        np.testing.assert_array_equal(got, function(a, b))
        assert lazy.stats()["failed"] == failed


def test_a_concatenation_of_one_element_broadcasts_as_numpys_1() -> None:
    """An empty part joined to one of 1 (`np.hstack([x[:0], x[1:2]])`) is a size the
    sum of two `?`s: made a static 1, it broadcasts against a row of 5, as in numpy."""
    x, y = normal(6, seed=3), normal(3, 5, seed=4)
    got = np.asarray(np.hstack([lazy.asarray(x)[:0], lazy.asarray(x)[1:2]]) + lazy.asarray(y))
    np.testing.assert_array_equal(got, np.hstack([x[:0], x[1:2]]) + y)
