"""Exercise: a reduction, `tensor.reduce_sumsq`: the sum of squares over axes.

The squared L2 norm (RMSNorm's `sum(x * x)`) as one op: numpy's `np.sum(x * x, axis)`, with the
syntax of the other reductions (`{axes = [...], keepdims = false}`), on any
numeric type (integers wrap around, as `reduce_sum` does). Skipped until the
tensor dialect has it (docs/tutorial/02-tensor-dialect.md: a reduction is a
`ReduceOp` subclass in `REDUCE_OPS`, a kind for `numerics.reduce` and the
reference interpreter, and, in the kernel lowering, a sum of the squared
input's tiles).
"""

from __future__ import annotations

import numpy as np
import pytest

import dvm
import dvm.pipeline
from dvm.dialects import tensor

pytestmark = pytest.mark.skipif(
    "tensor.reduce_sumsq" not in {op.name for op in tensor.REDUCE_OPS},
    reason="exercise: add tensor.reduce_sumsq",
)

ROWS = """
func.func @f(%x: tensor<?x?x{t}>) -> tensor<?x{t}> {{
  %s = tensor.reduce_sumsq %x {{axes = [1]}} : tensor<?x?x{t}> -> tensor<?x{t}>
  func.return %s : tensor<?x{t}>
}}
"""

L2_NORMALIZE = """
func.func @l2_normalize(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %s = tensor.reduce_sumsq %x {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %e = arith.constant dense<1.0e-6> : tensor<f32>
  %v = tensor.add %s, %e : (tensor<?x1xf32>, tensor<f32>) -> tensor<?x1xf32>
  %r = tensor.rsqrt %v : tensor<?x1xf32>
  %y = tensor.mul %x, %r : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
"""

SHAPES = [(3, 5), (1, 1), (2, 0), (0, 4), (7, 3001)]


def test_it_verifies_its_types() -> None:
    dvm.parse(ROWS.format(t="i32"))
    with pytest.raises(Exception, match="reduce_sumsq"):
        dvm.parse(ROWS.format(t="f32").replace("tensor<?xf32>", "tensor<?xf16>"))


@pytest.mark.parametrize("device", ["host", "ascend910b"])
@pytest.mark.parametrize("dtype", ["f32", "f64", "i32"])
def test_every_level_gives_the_sum_of_squares(dtype: str, device: str) -> None:
    np_dtype = {"f32": np.float32, "f64": np.float64, "i32": np.int32}[dtype]
    source = ROWS.format(t=dtype)
    compiled = dvm.compile(source, device=device)
    rng = np.random.default_rng(0)
    for shape in SHAPES:
        x = (rng.standard_normal(shape) * 10).astype(np_dtype)
        want = np.sum(x * x, axis=1, dtype=np_dtype)
        rtol = {"f32": 1e-5, "f64": 1e-12, "i32": 0}[dtype]
        np.testing.assert_allclose(dvm.interpret(source, x), want, rtol=rtol)
        np.testing.assert_allclose(compiled(x), want, rtol=rtol)


def test_l2_normalize_is_one_kernel_and_right() -> None:
    module = dvm.parse(L2_NORMALIZE)
    dvm.pipeline.run(module, "symbolic-shapes,fuse")
    assert sum(isinstance(op, tensor.FusionOp) for op in module.walk()) == 1
    x = np.random.default_rng(1).standard_normal((4, 300)).astype(np.float32)
    want = x / np.sqrt(np.sum(x * x, axis=1, keepdims=True) + 1e-6)
    np.testing.assert_allclose(dvm.compile(L2_NORMALIZE)(x), want, rtol=1e-5, atol=1e-6)
