"""`tensor.insert_slice` (the functional slice update) at every level.

Each program runs in the reference interpreter, after `fuse`, as tile IR, as
bytecode and compiled, on both device presets, on shapes with 0, 1, primes
and large dims, and must match numpy's `d = d.copy(); d[slice] = s`; a slice
out of bounds is an error naming the op and the values at every level.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_ops_concat import DTYPES, values
from test_ops_slices import LEVELS, PRESETS, check, lowered
from xdsl.utils.exceptions import VerifyException

import dvm
from dvm.errors import CallError, ExecutionError

ROWS = """
func.func @f(%s: tensor<?x?xf32>, %d: tensor<?x?xf32>, %o: index) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %s, %c0 : tensor<?x?xf32>
  %w = tensor.dim %s, %c1 : tensor<?x?xf32>
  %r = tensor.insert_slice %s into %d[%o, 0] [%n, %w] [1, 1] : tensor<?x?xf32> into tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}
"""


def inserted(s: np.ndarray, d: np.ndarray, *index: slice) -> np.ndarray:
    out = d.copy()
    out[index] = s
    return out


@pytest.mark.parametrize("device", PRESETS)
def test_rows_at_an_index_argument(device: str) -> None:
    """A KV-cache write: new rows at a run-time offset."""
    rng = np.random.default_rng(0)
    cases = []
    for rows, cols, new, at in [
        (0, 3, 0, 0),
        (1, 1, 1, 0),
        (7, 13, 2, 5),
        (97, 5, 0, 97),
        (3001, 3, 2, 1499),
    ]:
        d = rng.standard_normal((rows, cols)).astype(np.float32)
        s = rng.standard_normal((new, cols)).astype(np.float32)
        cases.append((s, d, at))
    check(ROWS, device, cases, lambda s, d, o: inserted(s, d, slice(o, o + s.shape[0])))


STRIDED = """
func.func @f(%s: tensor<?x4xT>, %d: tensor<?x9xT>) -> tensor<?x9xT> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %s, %c0 : tensor<?x4xT>
  %r = tensor.insert_slice %s into %d[1, 1] [%n, 4] [2, 2] : tensor<?x4xT> into tensor<?x9xT>
  func.return %r : tensor<?x9xT>
}
"""


@pytest.mark.parametrize("element", DTYPES)
def test_strided_into_every_element_type(element: str) -> None:
    src = STRIDED.replace("T>", f"{element}>")
    cases = [
        (values((n, 4), element, n), values((2 * n + 1, 9), element, n + 7)) for n in (0, 1, 3)
    ]
    want = lambda s, d: inserted(s, d, slice(1, 1 + 2 * s.shape[0], 2), slice(1, 9, 2))  # noqa: E731
    check(src, "host", cases, want)


RANK3 = """
func.func @f(%s: tensor<?x?x?xf64>, %d: tensor<?x?x?xf64>, %a: index, %b: index)
    -> tensor<?x?x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n0 = tensor.dim %s, %c0 : tensor<?x?x?xf64>
  %n1 = tensor.dim %s, %c1 : tensor<?x?x?xf64>
  %n2 = tensor.dim %s, %c2 : tensor<?x?x?xf64>
  %r = tensor.insert_slice %s into %d[%a, 0, %b] [%n0, %n1, %n2] [1, 1, 1]
      : tensor<?x?x?xf64> into tensor<?x?x?xf64>
  func.return %r : tensor<?x?x?xf64>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_rank_three_at_offsets_from_arguments(device: str) -> None:
    rng = np.random.default_rng(3)
    cases = []
    for dest, source, a, b in [
        ((2, 3, 5), (1, 3, 2), 1, 3),
        ((3, 1, 1), (3, 1, 1), 0, 0),
        ((4, 2, 3001), (2, 2, 1000), 2, 2001),
        ((2, 0, 3), (1, 0, 3), 1, 0),
    ]:
        cases.append((rng.standard_normal(source), rng.standard_normal(dest), a, b))

    def want(s: np.ndarray, d: np.ndarray, a: int, b: int) -> np.ndarray:
        n0, n1, n2 = s.shape
        return inserted(s, d, slice(a, a + n0), slice(0, n1), slice(b, b + n2))

    check(RANK3, device, cases, want)


@pytest.mark.parametrize("level", ["interpret", *LEVELS, "compiled"])
def test_out_of_bounds_is_an_error_naming_op_and_values(level: str) -> None:
    s, d = np.ones((2, 3), np.float32), np.zeros((5, 3), np.float32)
    if level == "compiled":
        run = dvm.compile(ROWS)
    elif level == "interpret":
        run = lambda *a: dvm.interpret(ROWS, *a)  # noqa: E731
    else:
        module = lowered(ROWS, level.replace("%s", "host"))
        run = lambda *a: dvm.interpret(module, *a)  # noqa: E731
    with pytest.raises(ExecutionError, match=r"tensor\.insert_slice: slice \[offset 4, size 2"):
        run(s, d, 4)
    with pytest.raises(ExecutionError, match=r"of a destination of shape 5x3"):
        run(s, d, 4)


def test_a_source_without_the_sizes_is_an_error() -> None:
    src = ROWS.replace("[%n, %w]", "[%n, 3]")
    s, d = np.ones((2, 4), np.float32), np.zeros((5, 4), np.float32)
    with pytest.raises(ExecutionError, match=r"tensor\.insert_slice: a source of shape 2x4"):
        dvm.interpret(src, s, d, 0)
    with pytest.raises(CallError, match=r"tensor\.insert_slice needs"):
        dvm.compile(src)(s, d, 0)


def test_an_insert_slice_is_a_kernel_of_its_own() -> None:
    text = str(lowered(ROWS, "symbolic-shapes,fuse"))
    assert text.count("tensor.fusion") == 1 and "dvm.slice = [#dvm.shape<o, 0>" in text


INTO = "tensor.insert_slice %s into %d"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            INTO + "[0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<4x2xf32>",
            r"'tensor.insert_slice' slice \[offset 0, size 3, stride 1\] does not fit in dim 2",
        ),
        (
            INTO + "[0, 0] [2, 2] [1, 1] : tensor<2x3xf32> into tensor<4x3xf32>",
            r"'tensor.insert_slice' source tensor<2x3xf32> does not have the sizes \[2, 2\]",
        ),
        (
            INTO + "[0] [2] [1] : tensor<2x3xf32> into tensor<4x3xf32>",
            r"'tensor.insert_slice' has 1 offsets for rank-2 tensor<4x3xf32>",
        ),
        (
            INTO + "[0, 0] [2, 3] [1, 1] : tensor<2x3xi32> into tensor<4x3xf32>",
            r"'tensor.insert_slice' changes the element type",
        ),
    ],
)
def test_verifier_names_the_op_and_types(body: str, message: str) -> None:
    source, dest = body.split(" : ")[1].split(" into ")
    src = f"""
func.func @f(%s: {source}, %d: {dest}) -> {dest} {{
  %r = {body}
  func.return %r : {dest}
}}
"""
    with pytest.raises(VerifyException, match=message):
        dvm.parse(src)


def test_into_a_splat_constant() -> None:
    """A constant destination (zeros) is loaded like any other input."""
    src = """
func.func @f(%s: tensor<?x3xf32>) -> tensor<4x3xf32> {
  %z = arith.constant dense<0.0> : tensor<4x3xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %s, %c0 : tensor<?x3xf32>
  %r = tensor.insert_slice %s into %z[1, 0] [%n, 3] [1, 1] : tensor<?x3xf32> into tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}
"""
    cases = [(values((n, 3), "f32", n),) for n in (0, 1, 3)]
    check(
        src,
        "host",
        cases,
        lambda s: inserted(s, np.zeros((4, 3), np.float32), slice(1, 1 + len(s))),
    )
