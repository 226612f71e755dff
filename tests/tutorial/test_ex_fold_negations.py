"""Exercise: a pass, `fold-negations`, that rewrites `neg(neg(x))` to `x`.

Skipped until `dvm.passes.PASSES` names it (docs/tutorial/04-fusion.md shows
the pattern; a pass is a `ModulePass` with a `name`, registered in
`passes/__init__.py`; a new module needs `make install`).
"""

from __future__ import annotations

import numpy as np
import pytest

import dvm
import dvm.pipeline
from dvm.passes import PASSES

pytestmark = pytest.mark.skipif(
    "fold-negations" not in PASSES, reason="exercise: add the fold-negations pass"
)

SOURCE = """
func.func @f(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %a = tensor.neg %x : tensor<?xf32>
  %b = tensor.neg %a : tensor<?xf32>
  %c = tensor.exp %b : tensor<?xf32>
  %d = tensor.neg %c : tensor<?xf32>
  func.return %d, %a : tensor<?xf32>, tensor<?xf32>
}
"""


def test_double_negations_fold_and_single_ones_stay() -> None:
    module = dvm.parse(SOURCE)
    dvm.pipeline.run(module, "fold-negations")
    text = str(module)
    assert "tensor.exp %x" in text
    assert text.count("tensor.neg") == 2  # %a is returned, %d negates once


def test_the_folded_program_computes_the_same() -> None:
    x = np.array([-1, 0, 2], np.float32)
    module = dvm.parse(SOURCE)
    dvm.pipeline.run(module, "fold-negations")
    d, a = dvm.compile(module)(x)
    np.testing.assert_allclose(d, -np.exp(x), rtol=1e-6)
    np.testing.assert_array_equal(a, -x)
