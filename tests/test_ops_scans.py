"""Reductions and scans beyond `tensor.reduce_<kind>` at every level.

Each program runs in the reference interpreter, after `fuse`, as tile IR, as
bytecode and compiled, on both device presets, on shapes with 0, 1, primes
and large dims, and must match numpy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

import dvm
import dvm.pipeline as pipeline

PRESETS = ("host", "ascend910b")
LEVELS = (
    "symbolic-shapes,fuse",
    "symbolic-shapes,fuse,stack,convert-tensor-to-tile{device=%s}",
    "dvm-pipeline{device=%s}",
)
SHAPES = [(0, 3), (3, 0), (1, 1), (7, 13), (3, 3001), (2, 40009)]


@cache
def lowered(src: str, spec: str) -> Any:
    return pipeline.run(dvm.parse(src), spec)


def levels(src: str, device: str) -> list[tuple[str, Callable[..., Any]]]:
    """(name, run) for each level: interpreted after each pass level, and compiled."""
    runs: list[tuple[str, Callable[..., Any]]] = [("interpret", lambda *a: dvm.interpret(src, *a))]
    for spec in LEVELS:
        module = lowered(src, spec.replace("%s", device))
        runs.append((spec, lambda *a, m=module: dvm.interpret(m, *a)))
    runs.append(("compiled", dvm.compile(src, device=device)))
    return runs


def check(
    src: str,
    device: str,
    cases: Sequence[tuple[Any, ...]],
    want: Callable[..., Any],
    compare: Callable[[Any, Any, str], None] | None = None,
) -> None:
    """Every level on every case matches `want` (exactly, unless `compare` says)."""
    runs = levels(src, device)
    for args in cases:
        expected = want(*args)
        expected = expected if isinstance(expected, tuple) else (expected,)
        for name, run in runs:
            got = run(*args)
            got = got if isinstance(got, tuple) else (got,)
            assert len(got) == len(expected), name
            for g, e in zip(got, expected, strict=True):
                message = f"{name} on shapes {[np.shape(a) for a in args]}"
                if compare is None:
                    assert g.dtype == e.dtype, message
                    np.testing.assert_array_equal(g, e, err_msg=message)
                else:
                    compare(g, e, message)


def rows_of(shape: tuple[int, int], seed: int, dtype: Any = np.float32) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# -- any and all ----------------------------------------------------------------------

ANY_ALL = """
func.func @f(%x: tensor<?x?xf32>, %b: tensor<?x?xi1>)
    -> (tensor<?xi1>, tensor<?x1xi1>, tensor<?xi1>, tensor<i1>) {
  %z = arith.constant dense<0.5> : tensor<f32>
  %big = tensor.gt %x, %z : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xi1>
  %a = tensor.reduce_any %big {axes = [1]} : tensor<?x?xi1> -> tensor<?xi1>
  %l = tensor.reduce_all %big {axes = [1], keepdims = true} : tensor<?x?xi1> -> tensor<?x1xi1>
  %c = tensor.reduce_all %b {axes = [0]} : tensor<?x?xi1> -> tensor<?xi1>
  %e = tensor.reduce_any %b {axes = [0, 1]} : tensor<?x?xi1> -> tensor<i1>
  func.return %a, %l, %c, %e : tensor<?xi1>, tensor<?x1xi1>, tensor<?xi1>, tensor<i1>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_any_and_all_over_booleans_at_every_level(device: str) -> None:
    cases = []
    for i, shape in enumerate(SHAPES):
        x = rows_of(shape, i)
        rng = np.random.default_rng(100 + i)
        # mostly true, so that `all` is true along some short rows
        cases.append((x, rng.random(shape) < 0.9995))
        cases.append((np.full(shape, 0.7, np.float32), np.zeros(shape, np.bool_)))

    def want(x: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
        big = x > 0.5
        return big.any(1), big.all(1, keepdims=True), b.all(0), np.asarray(b.any())

    check(ANY_ALL, device, cases, want)


@pytest.mark.parametrize("op", ["reduce_any", "reduce_all"])
def test_any_and_all_take_only_booleans(op: str) -> None:
    src = f"""
func.func @f(%x: tensor<4xf32>) -> tensor<f32> {{
  %r = tensor.{op} %x {{axes = [0]}} : tensor<4xf32> -> tensor<f32>
  func.return %r : tensor<f32>
}}"""
    with pytest.raises(VerifyException, match=f"'tensor.{op}' operand has element type f32"):
        dvm.parse(src)
