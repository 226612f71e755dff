"""`tensor.scatter_add` as a kernel of its own on the VM, at every level.

Each program runs in the reference interpreter, after `fuse`, as tile IR, as
bytecode and compiled, on both device presets, on shapes with 0, 1, primes
and large dims, and must match numpy bit for bit: the kernel adds the updates
in numpy's `add.at` order.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_ops_index import NUMPY, check_outputs, numpy_scatter_add, values
from test_ops_slices import LEVELS, PRESETS, check, levels, lowered

from dvm.errors import CallError, ExecutionError, ShapeError

MIDDLE = """
func.func @f(%base: tensor<?x?x?xT>, %idx: tensor<?x?xi64>, %upd: tensor<?x?x?x?xT>)
    -> tensor<?x?x?xT> {
  %a = tensor.scatter_add %base, %idx, %upd dim(1)
      : (tensor<?x?x?xT>, tensor<?x?xi64>, tensor<?x?x?x?xT>) -> tensor<?x?x?xT>
  func.return %a : tensor<?x?x?xT>
}
"""

ROWS = """
func.func @f(%base: tensor<?x?xT>, %idx: tensor<?xi32>, %upd: tensor<?x?xT>) -> tensor<?x?xT> {
  %a = tensor.scatter_add %base, %idx, %upd dim(0)
      : (tensor<?x?xT>, tensor<?xi32>, tensor<?x?xT>) -> tensor<?x?xT>
  func.return %a : tensor<?x?xT>
}
"""


def middle_case(shape: tuple[int, int, int], n: int, m: int, element: str, seed: int) -> tuple:  # type: ignore[type-arg]
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, max(shape[1], 1), (n, m)).astype(np.int64)
    upd = values((shape[0], n, m, shape[2]), element, seed + 1)
    return values(shape, element, seed), idx, upd


@pytest.mark.parametrize("device", PRESETS)
@pytest.mark.parametrize("element", ["f32", "f16", "bf16", "i8", "ui32", "f64"])
def test_scatter_add_along_a_middle_axis_matches_numpy(device: str, element: str) -> None:
    """Dims before and after the axis are split by the grid; the axis and the updates
    are walked in chunks; indices repeat."""
    src = MIDDLE.replace("xT>", f"x{element}>")
    assert "bytecode.scatter_add" in str(lowered(src, LEVELS[-1].replace("%s", device)))
    cases = [
        middle_case((1, 1, 1), 1, 1, element, 1),
        middle_case((2, 0, 3), 0, 4, element, 2),
        middle_case((0, 5, 3), 2, 3, element, 3),
        middle_case((3, 7, 0), 2, 3, element, 4),
        middle_case((5, 13, 7), 11, 3, element, 5),
        middle_case((2, 3001, 3), 7, 5, element, 6),
        middle_case((3, 2, 5), 61, 50, element, 7),
    ]
    check(src, device, cases, lambda b, i, u: numpy_scatter_add(b, 1, i, u))


@pytest.mark.parametrize("device", PRESETS)
@pytest.mark.parametrize("element", ["f32", "f16"])
def test_a_long_list_of_updates_to_few_rows_adds_in_order(device: str, element: str) -> None:
    """40009 updates into 3 rows: many chunks, each adding into the same rows; the sums
    have the bits of numpy's sequential `add.at`."""
    src = ROWS.replace("xT>", f"x{element}>")
    rng = np.random.default_rng(11)
    cases = []
    for rows, cols, n in [(3, 5, 40009), (3001, 2, 3001), (1, 1, 0), (0, 3, 0)]:
        idx = rng.integers(0, max(rows, 1), n).astype(np.int32)
        upd = rng.standard_normal((n, cols)).astype(NUMPY[element])
        cases.append((values((rows, cols), element, n), idx, upd))
    check(src, device, cases, lambda b, i, u: numpy_scatter_add(b, 0, i, u))


@pytest.mark.parametrize("bad", [-1, 7])
def test_an_index_out_of_range_is_an_error_naming_the_op_at_every_level(bad: int) -> None:
    src = ROWS.replace("xT>", "xf32>")
    base, upd = np.zeros((7, 3), np.float32), np.ones((3, 3), np.float32)
    idx = np.array([0, bad, 1], np.int32)
    for name, run in levels(src, "host"):
        with pytest.raises(ExecutionError, match=rf"%a = tensor\.scatter_add: index {bad} is out"):
            run(base, idx, upd)
        assert name


TOP = """
func.func @f(%x: tensor<?x?xT>) -> (tensor<KxPxT>, tensor<KxPxi32>) {
  %v, %i = tensor.top_k %x {k = K0, axis = A} : tensor<?x?xT> -> tensor<KxPxT>, tensor<KxPxi32>
  func.return %v, %i : tensor<KxPxT>, tensor<KxPxi32>
}
"""


def top_program(element: str, k: int, axis: int) -> str:
    """`TOP` with `k` along `axis` (its result types say where k goes)."""
    dims = ("K", "?") if axis == 0 else ("?", "K")
    src = TOP.replace("KxPx", f"{dims[0]}x{dims[1]}x").replace("K0", str(k))
    return (
        src.replace("Kx", f"{k}x")
        .replace("xK", f"x{k}")
        .replace("A", str(axis))
        .replace("xT>", f"x{element}>")
    )


def numpy_top_k(x: np.ndarray, k: int, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """By ranks: NaN first, then larger first, equal ones by the lower index."""
    rows = np.moveaxis(x, axis, -1).astype(np.float64)
    number = ~np.isnan(rows)  # False (NaN) sorts first
    position = np.broadcast_to(np.arange(rows.shape[-1]), rows.shape)
    order = np.lexsort((position, np.where(number, -rows, 0), number), axis=-1)[..., :k]
    indices = np.moveaxis(order, -1, axis).astype(np.int32)
    return np.take_along_axis(x, indices, axis=axis), indices


def top_case(shape: tuple[int, int], element: str, seed: int) -> np.ndarray:
    """Few distinct values (ties), with NaN and infinities in floats, extremes in ints."""
    rng = np.random.default_rng(seed)
    if element == "i1":
        return rng.integers(0, 2, shape).astype(bool)
    dtype = np.dtype(NUMPY[element])
    x = rng.integers(-3, 4, shape).astype(np.float64)
    if element.startswith(("f", "bf")):
        x[rng.random(shape) < 0.05] = np.nan
        x[rng.random(shape) < 0.05] = -np.inf
        x[rng.random(shape) < 0.02] = np.inf
        return x.astype(dtype)
    info = np.iinfo(dtype)
    x = np.clip(x, info.min, info.max).astype(dtype)
    x[rng.random(shape) < 0.1] = info.min
    return x


@pytest.mark.parametrize("device", PRESETS)
@pytest.mark.parametrize(("element", "k", "axis"), [
    ("f32", 1, 1), ("f32", 2, 1), ("f32", 8, 0), ("f16", 3, 1), ("bf16", 2, 0),
    ("i8", 4, 1), ("ui8", 2, 1), ("i64", 3, 0), ("i1", 2, 1), ("f64", 9, 1),
])  # fmt: skip
def test_top_k_in_kernels_matches_numpy(device: str, element: str, k: int, axis: int) -> None:
    """A kernel of its own (no host step): largest first, ties by the lower index,
    NaN first."""
    src = top_program(element, k, axis)
    fused = str(lowered(src, "symbolic-shapes,fuse"))
    assert "tensor.fusion" in fused and "tensor.top_k %x" in fused
    long = (10007, 3) if axis == 0 else (3, 10007)
    shapes = [(k, k), (k + 1, k + 2), (13, 11), (3001, 17) if axis == 0 else (17, 3001), long]
    empty = (k, 0) if axis == 0 else (0, k)
    cases = [(top_case(s, element, i),) for i, s in enumerate([*shapes, empty])]
    check(src, device, cases, lambda x: numpy_top_k(x, k, axis))


INDEX_TYPED = """
func.func @f(%x: tensor<?x?xf32>, %rows: tensor<?xindex>, %cols: tensor<?x?xindex>,
             %upd: tensor<?x?xf32>, %sizes: tensor<?xindex>, %w: tensor<?x?x?xf32>)
    -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) {
  %a = tensor.take %x, %rows dim(0) : (tensor<?x?xf32>, tensor<?xindex>) -> tensor<?x?xf32>
  %b = tensor.take_along_axis %x, %cols dim(1)
      : (tensor<?x?xf32>, tensor<?x?xindex>) -> tensor<?x?xf32>
  %c = tensor.scatter_add %x, %rows, %upd dim(0)
      : (tensor<?x?xf32>, tensor<?xindex>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %d = tensor.grouped_matmul %x, %sizes, %w
      : (tensor<?x?xf32>, tensor<?xindex>, tensor<?x?x?xf32>) -> tensor<?x?xf32>
  func.return %a, %b, %c, %d : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>
}
"""


def grouped(x: np.ndarray, sizes: np.ndarray, w: np.ndarray) -> np.ndarray:
    out = np.zeros((x.shape[0], w.shape[2]), np.float32)
    start = 0
    for g, n in enumerate(sizes):
        out[start : start + n] = x[start : start + n] @ w[g]
        start += int(n)
    return out


@pytest.mark.parametrize("device", PRESETS)
def test_index_typed_indices_and_group_sizes(device: str) -> None:
    """Upstream's `tensor<?xindex>` index tensors (int64 arrays) as take's,
    take_along_axis's and scatter_add's indices and grouped_matmul's sizes."""
    cases = []
    for i, (m, k, n, groups) in enumerate([(1, 1, 1, 1), (7, 3, 5, 2), (3001, 2, 13, 3)]):
        rng = np.random.default_rng(i)
        x = (rng.integers(-8, 9, (m, k)) / 4).astype(np.float32)
        rows = rng.integers(0, m, n).astype(np.int64)
        cols = rng.integers(0, k, (m, 4)).astype(np.int64)
        upd = (rng.integers(-8, 9, (n, k)) / 4).astype(np.float32)
        sizes = np.diff(np.sort(rng.integers(0, m + 1, groups + 1))).astype(np.int64)
        w = (rng.integers(-8, 9, (groups, k, 3)) / 4).astype(np.float32)
        cases.append((x, rows, cols, upd, sizes, w))

    def want(x, rows, cols, upd, sizes, w):  # type: ignore[no-untyped-def]
        taken = np.take_along_axis(x, cols, axis=1)
        return x[rows], taken, numpy_scatter_add(x, 0, rows, upd), grouped(x, sizes, w)

    check_outputs(INDEX_TYPED, device, cases, want)


ARGMAX = """
func.func @f(%x: tensor<?x?xf32>) -> tensor<?xi64> {
  %i = tensor.argmax %x {axis = 1} : tensor<?x?xf32> -> tensor<?xi64>
  func.return %i : tensor<?xi64>
}
"""


def test_a_lowered_module_checks_the_guards_the_compiled_program_checks() -> None:
    """An argmax over an empty axis, rewritten as reductions by `fuse`, would give the
    fill value: each lowered level fails as the compiled program does."""
    empty = np.zeros((3, 0), np.float32)
    for name, run in levels(ARGMAX, "host")[1:]:
        with pytest.raises(CallError, match=r"tensor.argmax .*\(from axis 1 of %x\) is 0"):
            run(empty)
        assert name
    ones = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(levels(ARGMAX, "host")[1][1](ones), [0, 0])


HALVES = """
func.func @f(%x: tensor<?xf32>) -> tensor<?x2xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %d = tensor.dim %x, %c0 : tensor<?xf32>
  %h = arith.divui %d, %c2 : index
  %r = tensor.expand_shape %x [[0, 1]] output_shape [%h, 2] : tensor<?xf32> into tensor<?x2xf32>
  func.return %r : tensor<?x2xf32>
}
"""


def test_a_guard_on_a_value_the_host_makes_is_checked_at_every_level() -> None:
    """The guard `x_0 == 2*i1` reads `%h`, which exists only once the call has made it:
    a lowered module checks it then, as the compiled program does, where the kernel
    would copy the first 4 of 5 elements."""
    five = np.arange(5, dtype=np.float32)
    for name, run in levels(HALVES, "host"):
        with pytest.raises(ExecutionError, match="expand_shape"):
            run(five)
        np.testing.assert_array_equal(run(five[:4]), five[:4].reshape(2, 2), err_msg=name)


BROADCAST_ROWS = """
func.func @f(%x: tensor<?xf32>, %n: index) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?xf32>
  %r = tensor.broadcast_to %x to [%n, %d] : tensor<?xf32> -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_a_negative_size_from_an_index_is_the_same_error_at_every_level(device: str) -> None:
    """A lowered launch checks the shapes it takes from index values (`dvm.index_dims`)
    as the compiled program does, rather than numpy's own error allocating the output."""
    x = np.arange(3, dtype=np.float32)
    for name, run in levels(BROADCAST_ROWS, device):
        with pytest.raises(ShapeError, match=r"%r = tensor.broadcast_to: got a negative dim"):
            run(x, -1)
        assert run(x, 2).shape == (2, 3), name
