"""Index ops (`tensor.iota`, ...) at every level.

Each program runs in the reference interpreter, after `fuse`, as tile IR, as
bytecode and compiled, on both device presets, on shapes with 0, 1, primes
and large dims, and must match numpy.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from test_ops_slices import PRESETS, check, levels, lowered
from xdsl.utils.exceptions import VerifyException

import dvm
from dvm.errors import DvmError

NUMERIC = ("i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64", "f16", "bf16", "f32", "f64")
NUMPY = {
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "ui8": np.uint8,
    "ui16": np.uint16,
    "ui32": np.uint32,
    "ui64": np.uint64,
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "f32": np.float32,
    "f64": np.float64,
}
SHAPES = [(0, 3), (3, 0), (1, 1), (7, 13), (97, 301), (2, 3001), (3001, 2)]


def numpy_iota(shape: tuple[int, ...], dim: int, dtype: type) -> np.ndarray:
    along = [n if d == dim else 1 for d, n in enumerate(shape)]
    index = np.arange(shape[dim], dtype=np.int64).reshape(along)
    with np.errstate(over="ignore"):
        return np.broadcast_to(index.astype(dtype), shape)


PLUS_IOTA = """
func.func @f(%x: tensor<?x?xT>) -> (tensor<?x?xT>, tensor<?x?xT>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xT>
  %m = tensor.dim %x, %c1 : tensor<?x?xT>
  %r = tensor.iota dim(0) %n, %m : tensor<?x?xT>
  %c = tensor.iota dim(1) %n, %m : tensor<?x?xT>
  %y = tensor.add %x, %r : (tensor<?x?xT>, tensor<?x?xT>) -> tensor<?x?xT>
  %z = tensor.sub %c, %x : (tensor<?x?xT>, tensor<?x?xT>) -> tensor<?x?xT>
  func.return %y, %z : tensor<?x?xT>, tensor<?x?xT>
}
"""


@pytest.mark.parametrize("device", PRESETS)
@pytest.mark.parametrize("element", NUMERIC)
def test_iota_along_each_dim_matches_numpy_for_every_numeric_type(
    device: str, element: str
) -> None:
    """Rows and columns of every width, wrapping in a narrow integer type and rounding
    in a narrow float one as `tensor.convert` does; one kernel with the add."""
    src = PLUS_IOTA.replace("T", element)
    assert str(lowered(src, "symbolic-shapes,fuse")).count("tensor.fusion") == 1
    dtype = NUMPY[element]
    cases = [(np.ones(shape, dtype),) for shape in SHAPES]

    def want(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows, cols = numpy_iota(x.shape, 0, dtype), numpy_iota(x.shape, 1, dtype)
        with np.errstate(over="ignore"):
            return (x + rows).astype(dtype), (cols - x).astype(dtype)

    check(src, device, cases, want)


SUM_OF_INDICES = """
func.func @f(%x: tensor<?x?xf64>) -> tensor<?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf64>
  %m = tensor.dim %x, %c1 : tensor<?x?xf64>
  %c = tensor.iota dim(1) %n, %m : tensor<?x?xf64>
  %y = tensor.mul %x, %c : (tensor<?x?xf64>, tensor<?x?xf64>) -> tensor<?x?xf64>
  %s = tensor.reduce_sum %y {axes = [1]} : tensor<?x?xf64> -> tensor<?xf64>
  func.return %s : tensor<?xf64>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_iota_along_a_reduced_axis_follows_the_chunk_loops(device: str) -> None:
    """Long rows are reduced in chunks: each chunk's indices start where it starts."""
    assert str(lowered(SUM_OF_INDICES, "symbolic-shapes,fuse")).count("tensor.fusion") == 1
    cases = [(np.ones(shape),) for shape in [(1, 1), (3, 0), (5, 7), (2, 3001), (3, 70001)]]
    check(SUM_OF_INDICES, device, cases, lambda x: (x * np.arange(x.shape[1])).sum(axis=1))


ARANGE = """
func.func @f(%n: index) -> tensor<?x4xi32> {
  %r = tensor.iota dim(0) %n : tensor<?x4xi32>
  func.return %r : tensor<?x4xi32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_iota_sized_by_an_index_argument(device: str) -> None:
    """A kernel with no tensor input: its length is the caller's value."""
    cases = [(n,) for n in (0, 1, 2, 13, 3001)]
    check(ARANGE, device, cases, lambda n: numpy_iota((n, 4), 0, np.int32), tiles=False)


def test_iota_of_a_negative_size_is_an_error() -> None:
    for run in (lambda n: dvm.interpret(ARANGE, n), dvm.compile(ARANGE)):
        with pytest.raises(DvmError, match="negative"):
            run(-1)


@pytest.mark.parametrize(
    ("decl", "message"),
    [
        ("dim(2) %n : tensor<?x4xi32>", "dim 2 is out of range for tensor<\\?x4xi32>"),
        ("dim(0) : tensor<?x4xi32>", "has 1 dynamic dims but 0 size operands"),
        ("dim(0) %n, %n : tensor<?x4xi32>", "has 1 dynamic dims but 2 size operands"),
        ("dim(0) %n : tensor<?x4xi1>", "result has element type i1, expected a numeric"),
    ],
)
def test_the_iota_verifier_names_the_op_and_types(decl: str, message: str) -> None:
    src = f"""
func.func @f(%n: index) -> index {{
  %r = tensor.iota {decl}
  func.return %n : index
}}"""
    with pytest.raises(VerifyException, match=f"'tensor.iota' .*{message}"):
        dvm.parse(src)


def test_iota_prints_and_parses_back() -> None:
    module = dvm.parse(ARANGE)
    assert "tensor.iota dim(0) %n : tensor<?x4xi32>" in str(module)
    assert str(dvm.parse(str(module))) == str(module)


CAUSAL_SOFTMAX = """
func.func @f(%s: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %s, %c0 : tensor<?x?x?xf32>
  %q = tensor.dim %s, %c1 : tensor<?x?x?xf32>
  %k = tensor.dim %s, %c2 : tensor<?x?x?xf32>
  %row = tensor.iota dim(1) %b, %q, %k : tensor<?x?x?xi64>
  %col = tensor.iota dim(2) %b, %q, %k : tensor<?x?x?xi64>
  %keep = tensor.ge %row, %col : (tensor<?x?x?xi64>, tensor<?x?x?xi64>) -> tensor<?x?x?xi1>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %masked = tensor.select %keep, %s, %ninf
      : (tensor<?x?x?xi1>, tensor<?x?x?xf32>, tensor<f32>) -> tensor<?x?x?xf32>
  %max = tensor.reduce_max %masked {axes = [2], keepdims = true}
      : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %shifted = tensor.sub %masked, %max
      : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %e = tensor.exp %shifted : tensor<?x?x?xf32>
  %sum = tensor.reduce_sum %e {axes = [2], keepdims = true}
      : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %p = tensor.div %e, %sum : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  func.return %p : tensor<?x?x?xf32>
}
"""


def causal_softmax(s: np.ndarray) -> np.ndarray:
    q, k = s.shape[1:]
    keep = np.arange(q)[:, None] >= np.arange(k)[None, :]
    masked = np.where(keep, s, np.float32(-np.inf))
    e = np.exp(masked - masked.max(axis=2, keepdims=True))
    return (e / e.sum(axis=2, keepdims=True)).astype(np.float32)


@pytest.mark.parametrize("device", PRESETS)
def test_a_causal_softmax_from_iota_is_one_kernel_at_every_level(device: str) -> None:
    """Scores masked with -inf above the diagonal, then softmax: compiled once, run on
    a stream of shapes (queries as many as keys, as in a prompt, or one, as in decoding;
    every row keeps at least its first key)."""
    assert str(lowered(CAUSAL_SOFTMAX, "symbolic-shapes,fuse")).count("tensor.fusion") == 1
    shapes = [(1, 1, 1), (2, 7, 7), (3, 13, 13), (1, 1, 5), (2, 97, 97), (1, 5, 3001)]
    runs = levels(CAUSAL_SOFTMAX, device)
    for i, shape in enumerate(shapes):
        s = np.random.default_rng(i).standard_normal(shape).astype(np.float32)
        want = causal_softmax(s)
        for name, run in runs:
            np.testing.assert_allclose(run(s), want, rtol=2e-6, atol=1e-7, err_msg=name)
