"""Index ops (`tensor.iota`, ...) at every level.

Each program runs in the reference interpreter, after `fuse`, as tile IR, as
bytecode and compiled, on both device presets, on shapes with 0, 1, primes
and large dims, and must match numpy.
"""

from __future__ import annotations

from collections.abc import Callable

import ml_dtypes
import numpy as np
import pytest
from test_ops_slices import PRESETS, check, levels, lowered
from xdsl.utils.exceptions import VerifyException

import dvm
from dvm.errors import DvmError, ExecutionError, IndexOutOfRangeError

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


def check_outputs(src: str, device: str, cases: list, want: Callable[..., tuple]) -> None:  # type: ignore[type-arg]
    """As `check`, for programs with several results of different shapes."""
    runs = levels(src, device)
    for args in cases:
        expected = want(*args)
        for name, run in runs:
            for got, wanted in zip(run(*args), expected, strict=True):
                np.testing.assert_array_equal(got, wanted, err_msg=f"{name} on {args}")


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


MASKED_BATCH = """
func.func @f(%x: tensor<?x?x?xf32>) -> (tensor<?x?x?xf32>, tensor<?x?xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %m = tensor.dim %x, %c1 : tensor<?x?x?xf32>
  %n = tensor.dim %x, %c2 : tensor<?x?x?xf32>
  %r = tensor.iota dim(0) %m, %n : tensor<?x?xi64>
  %c = tensor.iota dim(1) %m, %n : tensor<?x?xi64>
  %keep = tensor.ge %r, %c : (tensor<?x?xi64>, tensor<?x?xi64>) -> tensor<?x?xi1>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %y = tensor.select %keep, %x, %zero
      : (tensor<?x?xi1>, tensor<?x?x?xf32>, tensor<f32>) -> tensor<?x?x?xf32>
  %s = tensor.reduce_sum %y {axes = [0], keepdims = false} : tensor<?x?x?xf32> -> tensor<?x?xf32>
  func.return %y, %s : tensor<?x?x?xf32>, tensor<?x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_iota_beside_results_that_are_empty_where_it_is_not(device: str) -> None:
    """`tril` of a batch and its sum over the batch: with 0 in the batch the masked
    batch is empty, the mask's iotas and the sum are not. An iota's tile is measured by
    a view of an argument, which it never reads: that argument may be empty."""
    rng = np.random.default_rng(5)
    shapes = [(2, 4, 4), (0, 4, 4), (0, 3, 5), (2, 0, 3), (2, 3, 0), (0, 1, 1), (3, 7, 2)]
    cases = [(rng.integers(-4, 5, shape).astype(np.float32),) for shape in shapes]
    check_outputs(
        MASKED_BATCH, device, cases, lambda x: (np.tril(x), np.tril(x).sum(0, dtype=np.float32))
    )


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


ALL_TYPES = ("i1", *NUMERIC)
NUMPY["i1"] = np.bool_


def values(shape: tuple[int, ...], element: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 50).astype(NUMPY[element])


TAKE = """
func.func @f(%x: tensor<?x?xT>, %rows: tensor<?x?xI>, %cols: tensor<?xI>)
    -> (tensor<?x?x?xT>, tensor<?x?xT>) {
  %a = tensor.take %x, %rows dim(0) : (tensor<?x?xT>, tensor<?x?xI>) -> tensor<?x?x?xT>
  %b = tensor.take %x, %cols dim(1) : (tensor<?x?xT>, tensor<?xI>) -> tensor<?x?xT>
  func.return %a, %b : tensor<?x?x?xT>, tensor<?x?xT>
}
"""


@pytest.mark.parametrize("device", PRESETS)
@pytest.mark.parametrize("index", ["i32", "i64"])
@pytest.mark.parametrize("element", ALL_TYPES)
def test_take_matches_numpy_for_every_type(device: str, index: str, element: str) -> None:
    """Rows by a 2-D index tensor (an embedding lookup) and columns by a 1-D one, with
    repeated indices, the first and the last."""
    src = TAKE.replace("xT>", f"x{element}>").replace("xI>", f"x{index}>")
    cases = []
    for i, (r, c, n, m) in enumerate([(1, 1, 1, 1), (5, 3, 2, 0), (7, 13, 3, 5), (97, 3001, 2, 3)]):
        rng = np.random.default_rng(i)
        rows = rng.integers(0, r, (n, m)).astype(NUMPY[index])
        cols = rng.integers(0, c, (m,)).astype(NUMPY[index])
        if rows.size:
            rows.flat[0], rows.flat[-1] = 0, r - 1
        cases.append((values((r, c), element, i), rows, cols))
    want = lambda x, rows, cols: (np.take(x, rows, 0), np.take(x, cols, 1))  # noqa: E731
    check_outputs(src, device, cases, want)


EMBEDDING = """
func.func @embed(%table: tensor<?x?xf32>, %positions: tensor<?x?xf32>, %ids: tensor<?x?xi32>,
                 %gamma: tensor<?xf32>, %beta: tensor<?xf32>) -> tensor<?x?x?xf32> {
  %c1 = arith.constant 1 : index
  %s = tensor.dim %ids, %c1 : tensor<?x?xi32>
  %tok = tensor.take %table, %ids dim(0) : (tensor<?x?xf32>, tensor<?x?xi32>) -> tensor<?x?x?xf32>
  %at = tensor.iota dim(0) %s : tensor<?xi64>
  %pos = tensor.take %positions, %at dim(0) : (tensor<?x?xf32>, tensor<?xi64>) -> tensor<?x?xf32>
  %h = tensor.add %tok, %pos : (tensor<?x?x?xf32>, tensor<?x?xf32>) -> tensor<?x?x?xf32>
  %mean = tensor.reduce_mean %h {axes = [2], keepdims = true}
      : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %d = tensor.sub %h, %mean : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %d2 = tensor.mul %d, %d : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  %var = tensor.reduce_mean %d2 {axes = [2], keepdims = true}
      : tensor<?x?x?xf32> -> tensor<?x?x1xf32>
  %eps = arith.constant dense<1.0e-05> : tensor<f32>
  %ve = tensor.add %var, %eps : (tensor<?x?x1xf32>, tensor<f32>) -> tensor<?x?x1xf32>
  %r = tensor.rsqrt %ve : tensor<?x?x1xf32>
  %n = tensor.mul %d, %r : (tensor<?x?x?xf32>, tensor<?x?x1xf32>) -> tensor<?x?x?xf32>
  %g = tensor.mul %n, %gamma : (tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  %y = tensor.add %g, %beta : (tensor<?x?x?xf32>, tensor<?xf32>) -> tensor<?x?x?xf32>
  func.return %y : tensor<?x?x?xf32>
}
"""


def embedding_numpy(table, positions, ids, gamma, beta):  # type: ignore[no-untyped-def]
    h = table[ids] + positions[np.arange(ids.shape[1])]
    d = h - h.mean(axis=-1, keepdims=True)
    return d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + 1e-5) * gamma + beta


@pytest.mark.parametrize("device", PRESETS)
def test_embedding_plus_positions_plus_layernorm_is_one_kernel_at_every_level(
    device: str,
) -> None:
    """Token embeddings looked up by id, position embeddings by an iota over the
    sequence, their sum normalized: one kernel, compiled once, run on a stream of
    (vocabulary, width, batch, sequence, positions) shapes."""
    assert str(lowered(EMBEDDING, "symbolic-shapes,fuse")).count("tensor.fusion") == 1
    runs = levels(EMBEDDING, device)
    shapes = [(7, 8, 2, 3, 5), (1, 1, 1, 1, 1), (97, 13, 3, 7, 11), (50, 3001, 1, 5, 5)]
    shapes += [(5, 4, 0, 3, 3), (11, 64, 2, 0, 3), (2, 31, 5, 17, 17)]
    for i, (v, d, b, s, p) in enumerate(shapes):
        rng = np.random.default_rng(i)
        table, positions = (rng.standard_normal((n, d)).astype(np.float32) for n in (v, p))
        ids = rng.integers(0, v, (b, s)).astype(np.int32)
        gamma, beta = (rng.standard_normal(d).astype(np.float32) for _ in range(2))
        args = (table, positions, ids, gamma, beta)
        want = embedding_numpy(*args)
        for name, run in runs:
            np.testing.assert_allclose(run(*args), want, rtol=1e-4, atol=1e-4, err_msg=name)


@pytest.mark.parametrize(
    ("ids", "positions", "message"),
    [
        ([[0, 9]], 5, "%tok = tensor.take: index 9 is out of range for axis 0 of size 7"),
        ([[-1, 2]], 5, "%tok = tensor.take: index -1 is out of range for axis 0 of size 7"),
        ([[7]], 5, "%tok = tensor.take: index 7 is out of range"),
        ([[0, 1, 2]], 2, "%pos = tensor.take: index 2 is out of range for axis 0 of size 2"),
    ],
)
def test_an_index_out_of_range_is_an_error_naming_the_op_and_the_index(
    ids: list[list[int]], positions: int, message: str
) -> None:
    """Never numpy's wrap-around: a negative index does not count from the end. The
    error is an `IndexError` too, as numpy's and torch's are."""
    args = (
        np.ones((7, 4), np.float32),
        np.ones((positions, 4), np.float32),
        np.array(ids, np.int32),
        np.ones(4, np.float32),
        np.zeros(4, np.float32),
    )
    for run in (lambda *a: dvm.interpret(EMBEDDING, *a), dvm.compile(EMBEDDING)):
        with pytest.raises(IndexOutOfRangeError, match=message) as raised:
            run(*args)
        assert isinstance(raised.value, ExecutionError) and isinstance(raised.value, IndexError)


ALONG = """
func.func @f(%x: tensor<?x?xf32>, %idx: tensor<?x?xi64>) -> tensor<?x?xf32> {
  %y = tensor.take_along_axis %x, %idx dim(1)
      : (tensor<?x?xf32>, tensor<?x?xi64>) -> tensor<?x?xf32>
  %e = tensor.exp %y : tensor<?x?xf32>
  func.return %e : tensor<?x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
@pytest.mark.parametrize("shared", [False, True])
def test_take_along_axis_matches_numpy_with_broadcasting(device: str, shared: bool) -> None:
    """Per-row picks (as after a top-k), or one row of picks (`tensor<1x?xi64>`)
    broadcast to every row; one kernel with the exp."""
    src = ALONG.replace("tensor<?x?xi64>", "tensor<1x?xi64>") if shared else ALONG
    assert str(lowered(src, "symbolic-shapes,fuse")).count("tensor.fusion") == 1
    cases = []
    for i, (r, c, k) in enumerate([(1, 1, 1), (3, 5, 2), (7, 13, 13), (4, 3001, 3), (0, 3, 2)]):
        idx = np.random.default_rng(i).integers(0, c, (1 if shared else r, k))
        cases.append((values((r, c), "f32", i) / 50, idx))
    check(src, device, cases, lambda x, idx: np.exp(np.take_along_axis(x, idx, axis=1)))


def test_take_along_axis_out_of_range_is_an_error() -> None:
    x, idx = np.ones((2, 3), np.float32), np.array([[0, 1], [3, 0]])
    for run in (lambda *a: dvm.interpret(ALONG, *a), dvm.compile(ALONG)):
        with pytest.raises(IndexError, match="take_along_axis: index 3 is out of range"):
            run(x, idx)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("tensor.take %x, %i dim(2) : (tensor<4x8xf32>, tensor<3xi32>) -> tensor<3x8xf32>",
         "dim 2 is out of range"),
        ("tensor.take %x, %f dim(0) : (tensor<4x8xf32>, tensor<3xf32>) -> tensor<3x8xf32>",
         "indices have element type f32, expected i32, i64 or index"),
        ("tensor.take %x, %i dim(0) : (tensor<4x8xf32>, tensor<3xi32>) -> tensor<3x9xf32>",
         "has dim 9 at axis 1"),
        ("tensor.take %x, %i dim(0) : (tensor<4x8xf32>, tensor<3xi32>) -> tensor<3x8xf16>",
         "changes the element type"),
        ("tensor.take_along_axis %x, %i dim(0) : (tensor<4x8xf32>, tensor<3xi32>) "
         "-> tensor<3x8xf32>", "must have the same rank"),
    ],
)  # fmt: skip
def test_the_take_verifier_names_the_op_and_types(line: str, message: str) -> None:
    src = f"""
func.func @f(%x: tensor<4x8xf32>, %i: tensor<3xi32>, %f: tensor<3xf32>) -> tensor<4x8xf32> {{
  %y = {line}
  func.return %x : tensor<4x8xf32>
}}"""
    op = line.split()[0]
    with pytest.raises(VerifyException, match=f"'{op}' .*{message}"):
        dvm.parse(src)


SCATTER = """
func.func @f(%base: tensor<?x?xT>, %rows: tensor<?x?xI>, %upd: tensor<?x?x?xT>,
             %cols: tensor<?xI>, %cupd: tensor<?x?xT>) -> (tensor<?x?xT>, tensor<?x?xT>) {
  %a = tensor.scatter_add %base, %rows, %upd dim(0)
      : (tensor<?x?xT>, tensor<?x?xI>, tensor<?x?x?xT>) -> tensor<?x?xT>
  %b = tensor.scatter_add %base, %cols, %cupd dim(1)
      : (tensor<?x?xT>, tensor<?xI>, tensor<?x?xT>) -> tensor<?x?xT>
  func.return %a, %b : tensor<?x?xT>, tensor<?x?xT>
}
"""


def numpy_scatter_add(base: np.ndarray, axis: int, idx: np.ndarray, upd: np.ndarray) -> np.ndarray:
    out = base.copy()
    with np.errstate(over="ignore"):
        np.add.at(out, (slice(None),) * axis + (idx,), upd)
    return out


@pytest.mark.parametrize("device", PRESETS)
@pytest.mark.parametrize("index", ["i32", "i64"])
@pytest.mark.parametrize("element", NUMERIC)
def test_scatter_add_accumulates_duplicates_for_every_numeric_type(
    device: str, index: str, element: str
) -> None:
    """Rows by a 2-D index tensor (an embedding's gradient) and columns by a 1-D one,
    with repeated indices, which accumulate."""
    src = SCATTER.replace("xT>", f"x{element}>").replace("xI>", f"x{index}>")
    cases = []
    for i, (r, c, n, m) in enumerate([(1, 1, 1, 1), (5, 3, 2, 0), (7, 13, 3, 5), (97, 3001, 2, 3)]):
        rng = np.random.default_rng(i)
        rows = rng.integers(0, r, (n, m)).astype(NUMPY[index])
        cols = rng.integers(0, c, (m,)).astype(NUMPY[index])
        base = values((r, c), element, i)
        upd, cupd = values((n, m, c), element, i + 1), values((r, m), element, i + 2)
        cases.append((base, rows, upd, cols, cupd))

    def want(base, rows, upd, cols, cupd):  # type: ignore[no-untyped-def]
        return numpy_scatter_add(base, 0, rows, upd), numpy_scatter_add(base, 1, cols, cupd)

    check_outputs(src, device, cases, want)


def test_scatter_add_out_of_range_is_an_error_naming_the_op() -> None:
    src = SCATTER.replace("xT>", "xf32>").replace("xI>", "xi32>")
    base = np.zeros((5, 3), np.float32)
    args = (base, np.array([[0, -1]], np.int32), np.ones((1, 2, 3), np.float32))
    args += (np.array([0], np.int32), np.ones((5, 1), np.float32))
    for run in (lambda *a: dvm.interpret(src, *a), dvm.compile(src)):
        with pytest.raises(ExecutionError, match=r"%a = tensor\.scatter_add: index -1 is out"):
            run(*args)


@pytest.mark.parametrize(
    ("types", "message"),
    [
        ("(tensor<4x8xf32>, tensor<3xi32>, tensor<3x9xf32>) -> tensor<4x8xf32>",
         "updates tensor<3x9xf32> do not have the shape 3x8"),
        ("(tensor<4x8xf32>, tensor<3xi16>, tensor<3x8xf32>) -> tensor<4x8xf32>",
         "indices have element type i16, expected i32, i64 or index"),
        ("(tensor<4x8xf32>, tensor<3xi32>, tensor<3x8xf16>) -> tensor<4x8xf32>",
         "must have one element type"),
        ("(tensor<4x8xi1>, tensor<3xi32>, tensor<3x8xi1>) -> tensor<4x8xi1>",
         "base has element type i1, expected a numeric type"),
    ],
)  # fmt: skip
def test_the_scatter_add_verifier_names_the_op_and_types(types: str, message: str) -> None:
    base, idx, upd = types.strip("(").split(") -> ")[0].split(", ")
    src = f"""
func.func @f(%b: {base}, %i: {idx}, %u: {upd}) -> index {{
  %y = tensor.scatter_add %b, %i, %u dim(0) : {types}
  %c = arith.constant 0 : index
  func.return %c : index
}}"""
    with pytest.raises(VerifyException, match=f"'tensor.scatter_add' .*{message}"):
        dvm.parse(src)
