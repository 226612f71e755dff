"""What one call of a compiled program gives back, refuses and leaves behind.

What is promised and checked here:

- results are arrays of their own: a returned constant (directly, through
  `scf.if` or a loop that runs no pass), an argument, or a value returned twice
  shares memory with nothing else, so writing into a result changes no later call
  (`dvm.interpret` promises the same);
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pytest

import dvm

CONSTANT_AND_SUM = """
func.func @main(%a: tensor<?x3xf32>) -> (tensor<3xf32>, tensor<?x3xf32>) {
  %k = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %e = tensor.add %a, %k : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  func.return %k, %e : tensor<3xf32>, tensor<?x3xf32>
}
"""

CONSTANT_THROUGH_IF = """
func.func @main(%a: tensor<?x3xf32>, %c: i1) -> (tensor<3xf32>, tensor<?x3xf32>) {
  %k = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %r = scf.if %c -> (tensor<3xf32>) {
    scf.yield %k : tensor<3xf32>
  } else {
    %m = tensor.mul %k, %k : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    scf.yield %m : tensor<3xf32>
  }
  %e = tensor.add %a, %k : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  func.return %r, %e : tensor<3xf32>, tensor<?x3xf32>
}
"""

CONSTANT_THROUGH_A_LOOP = """
func.func @main(%a: tensor<?x3xf32>, %n: index) -> (tensor<3xf32>, tensor<3xf32>, tensor<?x3xf32>) {
  %k = arith.constant dense<2.5> : tensor<3xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %k) -> (tensor<3xf32>) {
    %y = tensor.add %x, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    scf.yield %y : tensor<3xf32>
  }
  %e = tensor.add %a, %k : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  func.return %r, %k, %e : tensor<3xf32>, tensor<3xf32>, tensor<?x3xf32>
}
"""

ONE_VALUE_TWICE = """
func.func @main(%a: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>) {
  %e = tensor.exp %a : tensor<?x3xf32>
  func.return %e, %e, %a : tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>
}
"""

ALIASING = [
    pytest.param(CONSTANT_AND_SUM, lambda a: (a,), id="constant"),
    pytest.param(CONSTANT_THROUGH_IF, lambda a: (a, np.bool_(True)), id="constant-through-if"),
    pytest.param(CONSTANT_THROUGH_A_LOOP, lambda a: (a, 0), id="constant-through-a-loop"),
    pytest.param(ONE_VALUE_TWICE, lambda a: (a,), id="one-value-twice-and-an-argument"),
]


@pytest.mark.parametrize("run", ["compile", "interpret"])
@pytest.mark.parametrize(("text", "make_args"), ALIASING)
def test_results_share_memory_with_nothing(
    text: str, make_args: Callable[[np.ndarray], tuple[Any, ...]], run: str
) -> None:
    """Writing into every result of a call changes neither the arguments nor the
    results of the next call, and no result shares memory with another."""
    call = dvm.compile(text) if run == "compile" else partial(dvm.interpret, text)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    args = make_args(a)
    first = call(*args)
    want = [r.copy() for r in first]
    for i, r in enumerate(first):
        assert r.flags.writeable, f"result {i} is read-only"
        others = [*first[:i], *first[i + 1 :], a]
        assert not any(np.shares_memory(r, o) for o in others), f"result {i} is shared"
        r[...] = 100
    np.testing.assert_array_equal(a, np.arange(6, dtype=np.float32).reshape(2, 3))
    for i, (got, expected) in enumerate(zip(call(*args), want, strict=True)):
        np.testing.assert_array_equal(got, expected, err_msg=f"result {i} of the next call")
