"""Loops whose carried tensors change shape from one iteration to the next (a concat
that grows a sequence, a transpose of a non-square matrix, a doubling until a size is
reached): `symbolic-shapes` gives each changing dim a late symbol, bound as each
iteration starts, and the compiled program must give what the interpreter gives for
every trip count, from the pipeline and from the compile cache."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_ops_slices import PRESETS, levels

import dvm
from dvm.errors import ShapeError
from dvm.pipeline import run

GROWING = """
func.func @main(%x: tensor<?x4xf32>, %row: tensor<1x4xf32>, %n: index) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<?x4xf32>) {
    %t = tensor.tanh %acc : tensor<?x4xf32>
    %g = tensor.concat dim(0) %t, %row : (tensor<?x4xf32>, tensor<1x4xf32>) -> tensor<?x4xf32>
    scf.yield %g : tensor<?x4xf32>
  }
  func.return %r : tensor<?x4xf32>
}
"""

TRANSPOSING = """
func.func @main(%x: tensor<?x?xf32>, %n: index) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<?x?xf32>) {
    %t = tensor.transpose %acc {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
    %e = tensor.exp %t : tensor<?x?xf32>
    scf.yield %e : tensor<?x?xf32>
  }
  func.return %r : tensor<?x?xf32>
}
"""

DOUBLING = """
func.func @main(%x: tensor<?xf32>, %limit: index) -> (tensor<?xf32>, tensor<f32>) {
  %c0 = arith.constant 0 : index
  %half = arith.constant dense<5.000000e-01> : tensor<f32>
  %r = scf.while (%a = %x) : (tensor<?xf32>) -> tensor<?xf32> {
    %size = tensor.dim %a, %c0 : tensor<?xf32>
    %short = arith.cmpi slt, %size, %limit : index
    scf.condition(%short) %a : tensor<?xf32>
  } do {
  ^bb0(%b: tensor<?xf32>):
    %h = tensor.mul %b, %half : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
    %d = tensor.concat dim(0) %b, %h : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    scf.yield %d : tensor<?xf32>
  }
  %s = tensor.reduce_sum %r {axes = [0]} : tensor<?xf32> -> tensor<f32>
  func.return %r, %s : tensor<?xf32>, tensor<f32>
}
"""

CHAINED_MATMULS = """
func.func @main(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>, %n: index) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<?x?xf32>) {
    %m = tensor.matmul %acc, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    scf.yield %m : tensor<?x?xf32>
  }
  func.return %r : tensor<?x?xf32>
}
"""


def floats(rng: np.random.Generator, *shape: int) -> np.ndarray[Any, Any]:
    return rng.uniform(-1, 1, shape).astype(np.float32)


def check(text: str, calls: list[tuple[Any, ...]], cache: bool = False) -> None:
    program = dvm.compile(text, cache=cache)
    for args in calls:
        expected = dvm.interpret(text, *args)
        got = program(*args)
        for e, g in zip(
            expected if isinstance(expected, tuple) else (expected,),
            got if isinstance(got, tuple) else (got,),
            strict=True,
        ):
            assert g.shape == e.shape and g.dtype == e.dtype
            np.testing.assert_allclose(g, e, rtol=2e-6, atol=1e-6)


def test_a_loop_that_grows_its_carried_value_runs_for_every_trip_count() -> None:
    rng = np.random.default_rng(0)
    row = floats(rng, 1, 4)
    check(GROWING, [(floats(rng, rows, 4), row, n) for rows, n in [(2, 0), (2, 1), (3, 5), (1, 9)]])


def test_a_loop_that_transposes_a_non_square_value_runs() -> None:
    rng = np.random.default_rng(1)
    check(TRANSPOSING, [(floats(rng, 3, 5), n) for n in (0, 1, 2, 3)] + [(floats(rng, 4, 4), 3)])


def test_a_while_loop_that_doubles_until_a_size_runs() -> None:
    rng = np.random.default_rng(2)
    check(DOUBLING, [(floats(rng, size), limit) for size, limit in [(3, 2), (3, 20), (1, 64)]])


@pytest.mark.parametrize("device", PRESETS)
def test_a_changing_loop_runs_at_every_level(device: str) -> None:
    """The interpreters of the lowered modules (tile IR, bytecode) bind the carried dims
    as each iteration starts, as the compiled program does; a matmul by another
    argument's matrix changes the next one's contraction."""
    rng = np.random.default_rng(5)
    x, square, wide = floats(rng, 2, 3), floats(rng, 3, 3), floats(rng, 3, 5)
    row = floats(rng, 1, 4)
    for text, calls in [
        (GROWING, [(floats(rng, 2, 4), row, 3)]),
        (CHAINED_MATMULS, [(x, square, 3), (x, wide, 1)]),
    ]:
        runs = levels(text, device)
        for args in calls:
            expected = dvm.interpret(text, *args)
            for name, level in runs:
                np.testing.assert_allclose(
                    level(*args), expected, rtol=2e-6, atol=1e-6, err_msg=name
                )


@pytest.mark.parametrize("text", [GROWING, DOUBLING])
def test_a_changing_loop_runs_from_the_compile_cache(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The binds of the carried dims survive the plain form (`dvm.host_export`) and
    pass the host validator."""
    monkeypatch.setenv("DVM_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("DVM_CACHE", raising=False)
    rng = np.random.default_rng(3)
    calls: list[tuple[Any, ...]] = (
        [(floats(rng, 2, 4), floats(rng, 1, 4), 3)] if text is GROWING else [(floats(rng, 3), 40)]
    )
    check(text, calls, cache=True)  # the pipeline, then the entry it wrote
    assert len(list(tmp_path.glob("*.dvmc"))) == 1
    check(text, calls, cache=True)


def test_a_changing_dim_is_a_symbol_of_the_block_and_another_of_the_results() -> None:
    printed = str(run(GROWING, "symbolic-shapes"))
    assert "dvm.arg_shapes = [[unit, #dvm.shape<c0_1, 4>]]" in printed
    assert "%g = tensor.concat dim(0) %t, %row {dvm.shape = #dvm.shape<c0_1 + 1, 4>}" in printed
    assert "{dvm.shape = #dvm.shape<r0_2, 4>, dvm.arg_shapes" in printed
    assert "dvm.guards = []" in printed  # no guard ties the carried dim to x_0


def test_a_guard_on_a_changing_dim_is_checked_at_every_iteration() -> None:
    """`acc @ w` needs acc's columns to be w's rows at each iteration: a square `w`
    runs any number of times, a non-square one once, then the guard fails naming the
    matmul, as the interpreter fails."""
    rng = np.random.default_rng(4)
    x, square, wide = floats(rng, 2, 3), floats(rng, 3, 3), floats(rng, 3, 5)
    check(CHAINED_MATMULS, [(x, square, 4), (x, wide, 0), (x, wide, 1)])
    needs = r"%m = tensor.matmul needs c0_\d+ == w_0 .* c0_\d+ is 5 and axis 0 of %w \(w_0\) is 3"
    with pytest.raises(ShapeError, match=needs):
        dvm.compile(CHAINED_MATMULS, cache=False)(x, wide, 2)
    with pytest.raises(ShapeError, match="contraction dims differ"):
        dvm.interpret(CHAINED_MATMULS, x, wide, 2)
