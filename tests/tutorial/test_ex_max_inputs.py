"""Exercise: a fusion rule, `fuse{max-inputs=N}`: a kernel reads at most N tensors.

A real device feeds a kernel through a few input buffers, so a kernel that
reads many tensors must be split. Skipped until the `fuse` pass has a
`max_inputs` option (docs/tutorial/04-fusion.md: a pass's options are its
dataclass fields, `Fuser.allowed` says whether a group may be one kernel and
`Fuser.inputs` lists what a group reads).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import dvm
import dvm.pipeline
from dvm.dialects import tensor
from dvm.passes.fuse import FusePass

pytestmark = pytest.mark.skipif(
    "max_inputs" not in {f.name for f in dataclasses.fields(FusePass)},
    reason="exercise: add the max-inputs option of fuse",
)

SOURCE = """
func.func @f(%a: tensor<?xf32>, %b: tensor<?xf32>, %c: tensor<?xf32>, %d: tensor<?xf32>,
             %e: tensor<?xf32>) -> tensor<?xf32> {
  %0 = tensor.add %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %1 = tensor.mul %0, %c : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %2 = tensor.sub %1, %d : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %3 = tensor.exp %2 : tensor<?xf32>
  %4 = tensor.add %3, %e : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %5 = tensor.mul %4, %a : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %5 : tensor<?xf32>
}
"""


def kernel_inputs(pipeline: str) -> list[int]:
    """How many tensors each kernel of the fused program reads."""
    module = dvm.parse(SOURCE)
    dvm.pipeline.run(module, pipeline)
    return [len(op.operands) for op in module.walk() if isinstance(op, tensor.FusionOp)]


def test_without_a_limit_the_chain_is_one_kernel() -> None:
    assert kernel_inputs("symbolic-shapes,fuse") == [5]


@pytest.mark.parametrize("limit", [2, 3, 4])
def test_every_kernel_reads_at_most_the_limit(limit: int) -> None:
    counts = kernel_inputs(f"symbolic-shapes,fuse{{max-inputs={limit}}}")
    assert max(counts) <= limit
    assert len(counts) > 1  # and the chain was split, not left unfused op by op
    assert len(counts) < 6


def test_a_lone_op_is_a_kernel_whatever_it_reads() -> None:
    source = """
func.func @f(%c: tensor<?xi1>, %x: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %r = tensor.select %c, %x, %y : (tensor<?xi1>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}
"""
    module = dvm.parse(source)
    dvm.pipeline.run(module, "symbolic-shapes,fuse{max-inputs=1}")
    assert sum(isinstance(op, tensor.FusionOp) for op in module.walk()) == 1


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="max-inputs"):
        dvm.pipeline.run(dvm.parse(SOURCE), "fuse{max-inputs=0}")


def test_the_split_program_computes_the_same() -> None:
    rng = np.random.default_rng(0)
    a, b, c, d, e = (rng.standard_normal(37).astype(np.float32) for _ in range(5))
    module = dvm.parse(SOURCE)
    dvm.pipeline.run(module, "symbolic-shapes,fuse{max-inputs=2}")
    got = dvm.compile(module)(a, b, c, d, e)
    want = (np.exp((a + b) * c - d) + e) * a
    np.testing.assert_allclose(got, want, rtol=1e-5)
