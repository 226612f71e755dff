"""Data movement ops (`tensor.extract_slice`) at every level.

Each program runs in the reference interpreter, after `fuse`, as tile IR, as
bytecode and compiled, on both device presets, on shapes with 0, 1, primes
and large dims, and must match numpy; out-of-bounds slices are errors naming
the op and the values at every level that can see them.
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
from dvm.errors import ExecutionError

PRESETS = ("host", "ascend910b")
LEVELS = (
    "symbolic-shapes,fuse",
    "symbolic-shapes,fuse,stack,convert-tensor-to-tile{device=%s}",
    "dvm-pipeline{device=%s}",
)


@cache
def lowered(src: str, spec: str) -> Any:
    return pipeline.run(dvm.parse(src), spec)


def levels(src: str, device: str, tiles: bool = True) -> list[tuple[str, Callable[..., Any]]]:
    """(name, run) for each level: interpreted after each pass level, and compiled.
    Without `tiles`, the levels whose interpreter cannot bind values a kernel
    takes from the host (a loop counter as an offset) are left out."""
    runs: list[tuple[str, Callable[..., Any]]] = [("interpret", lambda *a: dvm.interpret(src, *a))]
    for spec in LEVELS if tiles else LEVELS[:1]:
        module = lowered(src, spec.replace("%s", device))
        runs.append((spec, lambda *a, m=module: dvm.interpret(m, *a)))
    runs.append(("compiled", dvm.compile(src, device=device)))
    return runs


def check(
    src: str,
    device: str,
    cases: Sequence[tuple[Any, ...]],
    want: Callable[..., Any],
    tiles: bool = True,
) -> None:
    runs = levels(src, device, tiles)
    for args in cases:
        expected = want(*args)
        for name, run in runs:
            got = run(*args)
            np.testing.assert_array_equal(got, expected, err_msg=f"{name} on {args}")


SLICE = """
func.func @f(%t: tensor<?x?xf32>, %o: index, %n: index) -> tensor<?x?xf32> {
  %c1 = arith.constant 1 : index
  %w = tensor.dim %t, %c1 : tensor<?x?xf32>
  %s = tensor.extract_slice %t[%o, 0] [%n, %w] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  func.return %s : tensor<?x?xf32>
}
"""


def grid(rows: int, cols: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)


SHAPES = [(0, 3), (1, 1), (7, 13), (97, 301), (2, 3001)]


@pytest.mark.parametrize("device", PRESETS)
def test_a_slice_at_an_index_argument(device: str) -> None:
    """Offsets and sizes given by the caller: the kernel takes them as parameters
    (the tile-level interpreters bind only argument dims, so they are left out)."""
    cases = []
    for i, (r, c) in enumerate(SHAPES):
        x = grid(r, c, i)
        cases += [(x, 0, r), (x, r // 2, r - r // 2), (x, r, 0), (x, r // 3, min(1, r))]
    check(SLICE, device, cases, lambda x, o, n: x[o : o + n], tiles=False)


HALVES = """
func.func @f(%t: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = tensor.dim %t, %c0 : tensor<?x?xf32>
  %w = tensor.dim %t, %c1 : tensor<?x?xf32>
  %h = arith.floordivsi %w, %c2 : index
  %r1 = arith.subi %r, %c1 : index
  %a = tensor.extract_slice %t[0, 0] [%r1, %h] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %b = tensor.extract_slice %t[1, %h] [%r1, %h] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %s = tensor.sub %b, %a : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %s : tensor<?x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_slices_sized_by_dims_fuse_and_run_at_every_level(device: str) -> None:
    """Both halves of rows shifted by one: one kernel, two views of one input."""
    assert str(lowered(HALVES, "symbolic-shapes,fuse")).count("tensor.fusion") == 1
    cases = [(grid(r, c, i),) for i, (r, c) in enumerate([(1, 0), (1, 1), (2, 2), *SHAPES[2:]])]

    def want(x: np.ndarray) -> np.ndarray:
        h = x.shape[1] // 2
        return x[1:, h : 2 * h] - x[:-1, :h]

    check(HALVES, device, cases, want)


FUSED = """
func.func @f(%x: tensor<?x16xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %b = tensor.extract_slice %x[0, 1] [%n, 8] [1, 2] : tensor<?x16xf32> to tensor<?x8xf32>
  %e = tensor.exp %b : tensor<?x8xf32>
  %r = tensor.add %e, %y : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  func.return %r : tensor<?x8xf32>
}
""".replace("%n", "%n0").replace("%x: tensor<?x16xf32>", "%x: tensor<?x16xf32>, %n0: index")


@pytest.mark.parametrize("device", PRESETS)
def test_a_strided_slice_fuses_into_the_elementwise_kernel(device: str) -> None:
    module = lowered(FUSED, "symbolic-shapes,fuse")
    assert str(module).count("tensor.fusion") == 1
    cases = []
    for i, rows in enumerate((0, 1, 7, 97, 1031)):
        x, y = grid(rows + 2, 16, i), grid(rows, 8, i + 10)
        cases.append((x, rows, y))
    check(FUSED, device, cases, lambda x, n, y: np.exp(x[:n, 1::2]) + y, tiles=False)


LAYERS = """
func.func @f(%w: tensor<?x?x?xf32>, %x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %layers = tensor.dim %w, %c0 : tensor<?x?x?xf32>
  %d = tensor.dim %w, %c1 : tensor<?x?x?xf32>
  %e = tensor.dim %w, %c2 : tensor<?x?x?xf32>
  %r = scf.for %i = %c0 to %layers step %c1 iter_args(%h = %x) -> (tensor<?x?xf32>) {
    %wi = tensor.extract_slice %w[%i, 0, 0] [1, %d, %e] [1, 1, 1]
        : tensor<?x?x?xf32> to tensor<1x?x?xf32>
    %w2 = tensor.collapse_shape %wi [[0, 1], [2]] : tensor<1x?x?xf32> into tensor<?x?xf32>
    %m = tensor.matmul %h, %w2 : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    %t = tensor.tanh %m : tensor<?x?xf32>
    scf.yield %t : tensor<?x?xf32>
  }
  func.return %r : tensor<?x?xf32>
}
"""


def layers_numpy(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    for layer in w:
        x = np.tanh(x @ layer)
    return x


@pytest.mark.parametrize("device", PRESETS)
def test_a_loop_counter_slices_layer_weights(device: str) -> None:
    """Layer i's weights, sliced from a stacked tensor by the loop counter."""
    runs = levels(LAYERS, device, tiles=False)
    for i, (layers, rows, d) in enumerate([(0, 3, 4), (1, 1, 1), (3, 7, 13), (2, 97, 61)]):
        rng = np.random.default_rng(i)
        w = (rng.standard_normal((layers, d, d)) / np.sqrt(d)).astype(np.float32)
        x = rng.standard_normal((rows, d)).astype(np.float32)
        want = layers_numpy(w, x)
        for name, run in runs:
            np.testing.assert_allclose(run(w, x), want, rtol=1e-4, atol=1e-5, err_msg=name)


OUT_OF_BOUNDS = [(8, 3), (10, 1), (11, 0), (-1, 2), (0, 11)]


@pytest.mark.parametrize(("offset", "size"), OUT_OF_BOUNDS)
def test_an_out_of_bounds_slice_is_an_error_naming_op_and_values(offset: int, size: int) -> None:
    x = grid(10, 4, 0)
    compiled = dvm.compile(SLICE)
    for run in (lambda *a: dvm.interpret(SLICE, *a), compiled):
        with pytest.raises(ExecutionError, match=r"tensor.extract_slice.*out of bounds") as e:
            run(x, offset, size)
        assert f"offset {offset}, size {size}" in str(e.value)


def test_a_slice_inside_a_loop_checks_its_bounds_each_iteration() -> None:
    """The counter runs past the stacked weights' end only in a wider loop."""
    src = LAYERS.replace("to %layers", "to %n").replace(
        "%x: tensor<?x?xf32>)", "%x: tensor<?x?xf32>, %n: index)"
    )
    w, x = np.ones((2, 3, 3), np.float32), np.ones((1, 3), np.float32)
    for run in (lambda *a: dvm.interpret(src, *a), dvm.compile(src)):
        run(w, x, 2)
        with pytest.raises(ExecutionError, match=r"offset 2, size 1, stride 1.*axis 0"):
            run(w, x, 3)


STACKED = """
func.func @f(%x: tensor<?x8xf32>, %y: tensor<?x?xf32>, %o: index, %n: index)
    -> (tensor<?x8xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %a = tensor.extract_slice %x[%c0, 0] [%n, 8] [1, 1] : tensor<?x8xf32> to tensor<?x8xf32>
  %e = tensor.exp %a : tensor<?x8xf32>
  %b = tensor.extract_slice %y[0, %o] [%n, 3] [1, 1] : tensor<?x?xf32> to tensor<?x3xf32>
  %s = tensor.reduce_sum %b {axes = [1]} : tensor<?x3xf32> -> tensor<?xf32>
  func.return %e, %s : tensor<?x8xf32>, tensor<?xf32>
}
"""


def test_stacked_launches_check_their_slices_too() -> None:
    """Two independent kernels with slices are one `tensor.stack`, launched as one: a
    slice past its dim's end but inside the buffer is an error there too."""
    assert "tensor.stack" in str(pipeline.run(STACKED, "symbolic-shapes,fuse,stack"))
    compiled = dvm.compile(STACKED)
    x, y = np.ones((5, 8), np.float32), np.arange(20, dtype=np.float32).reshape(5, 4)
    np.testing.assert_array_equal(compiled(x, y, 1, 3)[1], y[:3, 1:4].sum(1))
    with pytest.raises(
        ExecutionError, match=r"%b = tensor\.extract_slice: slice \[offset 2, size 3"
    ):
        compiled(x, y, 2, 3)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("[0] [4] [1] : tensor<4x8xf32> to tensor<4xf32>", "has 1 offsets for rank-2"),
        ("[0, 6] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>", "does not fit in dim 8"),
        ("[0, -1] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>", "offset -1 is negative"),
        ("[0, 0] [4, 4] [1, 0] : tensor<4x8xf32> to tensor<4x4xf32>", "stride 0 is not positive"),
        ("[0, 0] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x5xf32>", "has dim 5 at axis 1"),
        ("[0, 0] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf16>", "changes the element"),
    ],
)
def test_the_verifier_names_the_op_and_types(body: str, message: str) -> None:
    src = f"""
func.func @f(%t: tensor<4x8xf32>) -> tensor<4x4xf32> {{
  %s = tensor.extract_slice %t{body}
  func.return %t : tensor<4x8xf32>
}}"""
    with pytest.raises(VerifyException, match=f"'tensor.extract_slice' .*{message}"):
        dvm.parse(src)
