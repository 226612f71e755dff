"""Reductions and scans beyond `tensor.reduce_<kind>` at every level.

Each program runs in the reference interpreter, after `fuse`, as tile IR, as
bytecode and compiled, on both device presets, on shapes with 0, 1, primes
and large dims, and must match numpy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

import dvm
import dvm.pipeline as pipeline
from dvm.errors import CallError, ExecutionError

PRESETS = ("host", "ascend910b")
LEVELS = (
    "symbolic-shapes,fuse",
    "symbolic-shapes,fuse,stack,convert-tensor-to-tile{device=%s}",
    "dvm-pipeline{device=%s}",
)
SHAPES = [(0, 3), (3, 0), (1, 1), (7, 13), (3, 3001), (2, 40009)]


@cache
def lowered(src: str, spec: str) -> Any:
    return pipeline.run(dvm.parse(src), spec)


def levels(src: str, device: str) -> list[tuple[str, Callable[..., Any]]]:
    """(name, run) for each level: interpreted after each pass level, and compiled."""
    runs: list[tuple[str, Callable[..., Any]]] = [("interpret", lambda *a: dvm.interpret(src, *a))]
    for spec in LEVELS:
        module = lowered(src, spec.replace("%s", device))
        runs.append((spec, lambda *a, m=module: dvm.interpret(m, *a)))
    runs.append(("compiled", dvm.compile(src, device=device)))
    return runs


def check(
    src: str,
    device: str,
    cases: Sequence[tuple[Any, ...]],
    want: Callable[..., Any],
    compare: Callable[[Any, Any, str], None] | None = None,
) -> None:
    """Every level on every case matches `want` (exactly, unless `compare` says)."""
    runs = levels(src, device)
    for args in cases:
        expected = want(*args)
        expected = expected if isinstance(expected, tuple) else (expected,)
        for name, run in runs:
            got = run(*args)
            got = got if isinstance(got, tuple) else (got,)
            assert len(got) == len(expected), name
            for g, e in zip(got, expected, strict=True):
                message = f"{name} on shapes {[np.shape(a) for a in args]}"
                if compare is None:
                    assert g.dtype == e.dtype, message
                    np.testing.assert_array_equal(g, e, err_msg=message)
                else:
                    compare(g, e, message)


def rows_of(shape: tuple[int, int], seed: int, dtype: Any = np.float32) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# -- any and all ----------------------------------------------------------------------

ANY_ALL = """
func.func @f(%x: tensor<?x?xf32>, %b: tensor<?x?xi1>)
    -> (tensor<?xi1>, tensor<?x1xi1>, tensor<?xi1>, tensor<i1>) {
  %z = arith.constant dense<0.5> : tensor<f32>
  %big = tensor.gt %x, %z : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xi1>
  %a = tensor.reduce_any %big {axes = [1]} : tensor<?x?xi1> -> tensor<?xi1>
  %l = tensor.reduce_all %big {axes = [1], keepdims = true} : tensor<?x?xi1> -> tensor<?x1xi1>
  %c = tensor.reduce_all %b {axes = [0]} : tensor<?x?xi1> -> tensor<?xi1>
  %e = tensor.reduce_any %b {axes = [0, 1]} : tensor<?x?xi1> -> tensor<i1>
  func.return %a, %l, %c, %e : tensor<?xi1>, tensor<?x1xi1>, tensor<?xi1>, tensor<i1>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_any_and_all_over_booleans_at_every_level(device: str) -> None:
    cases = []
    for i, shape in enumerate(SHAPES):
        x = rows_of(shape, i)
        rng = np.random.default_rng(100 + i)
        # mostly true, so that `all` is true along some short rows
        cases.append((x, rng.random(shape) < 0.9995))
        cases.append((np.full(shape, 0.7, np.float32), np.zeros(shape, np.bool_)))

    def want(x: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
        big = x > 0.5
        return tuple(
            np.asarray(r) for r in (big.any(1), big.all(1, keepdims=True), b.all(0), b.any())
        )

    check(ANY_ALL, device, cases, want)


@pytest.mark.parametrize("op", ["reduce_any", "reduce_all"])
def test_any_and_all_take_only_booleans(op: str) -> None:
    src = f"""
func.func @f(%x: tensor<4xf32>) -> tensor<f32> {{
  %r = tensor.{op} %x {{axes = [0]}} : tensor<4xf32> -> tensor<f32>
  func.return %r : tensor<f32>
}}"""
    with pytest.raises(VerifyException, match=f"'tensor.{op}' operand has element type f32"):
        dvm.parse(src)


# -- argmax, argmin, cumsum, cumprod, top_k ---------------------------------------------

DTYPES = ["i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64", "f16", "bf16", "f32", "f64"]


def numpy_dtype(name: str) -> Any:
    if name == "bf16":
        return ml_dtypes.bfloat16
    kind = {"ui": "uint", "i": "int", "f": "float"}[name.rstrip("0123456789")]
    return np.dtype(kind + name.lstrip("uif"))


def sample(shape: tuple[int, ...], name: str, seed: int) -> np.ndarray:
    """Small values with many ties (integers), NaNs in some float rows."""
    rng = np.random.default_rng(seed)
    if name.startswith("f") or name == "bf16":
        x = rng.standard_normal(shape).astype(np.float32)
        if x.size:
            x.flat[rng.integers(0, x.size, max(1, x.size // 50))] = np.nan
        return x.astype(numpy_dtype(name))
    return rng.integers(0, 5, shape).astype(numpy_dtype(name))


ARG = """
func.func @f(%x: tensor<?x?xT>) -> (tensor<?xi64>, tensor<1x?xi32>, tensor<?x?xT>, tensor<?x?xT>) {
  %a = tensor.argmax %x {axis = 1} : tensor<?x?xT> -> tensor<?xi64>
  %b = tensor.argmin %x {axis = 0, keepdims = true} : tensor<?x?xT> -> tensor<1x?xi32>
  %c = tensor.cumsum %x {axis = 1} : tensor<?x?xT> -> tensor<?x?xT>
  %d = tensor.cumprod %x {axis = 0, exclusive = true, reverse = true}
      : tensor<?x?xT> -> tensor<?x?xT>
  func.return %a, %b, %c, %d : tensor<?xi64>, tensor<1x?xi32>, tensor<?x?xT>, tensor<?x?xT>
}
"""


def cumulative(x: np.ndarray, axis: int, add: bool, exclusive: bool, reverse: bool) -> np.ndarray:
    """numpy's cumsum/cumprod (f16/bf16 in f32), shifted for `exclusive`."""
    wide = x.astype(np.float32) if x.dtype.itemsize == 2 and x.dtype.kind not in "iu" else x
    if reverse:
        wide = np.flip(wide, axis)
    out = (np.cumsum if add else np.cumprod)(wide, axis=axis, dtype=wide.dtype)
    if exclusive:
        out = np.moveaxis(out, axis, 0)
        out = np.concatenate([np.full_like(out[:1], 0 if add else 1), out[:-1]])
        out = np.moveaxis(out, 0, axis)
    return (np.flip(out, axis) if reverse else out).astype(x.dtype)


def close(got: np.ndarray, want: np.ndarray, message: str) -> None:
    assert got.dtype == want.dtype, message
    if got.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want, err_msg=message)
    else:
        g, w = got.astype(np.float64), want.astype(np.float64)
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=0, equal_nan=True, err_msg=message)


@pytest.mark.parametrize("device", PRESETS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_arg_reductions_and_scans_at_every_level(device: str, dtype: str) -> None:
    src = ARG.replace("xT>", f"x{dtype}>")
    cases = [(sample(shape, dtype, i),) for i, shape in enumerate([(1, 1), (7, 13), (3, 3001)])]
    cases.append((sample((2, 40009), dtype, 9),) if dtype in ("f32", "i32") else cases[0])

    def want(x: np.ndarray) -> tuple[np.ndarray, ...]:
        wide = x.astype(np.float32) if x.dtype.itemsize == 2 and x.dtype.kind not in "iu" else x
        return (
            np.argmax(wide, axis=1).astype(np.int64),
            np.argmin(wide, axis=0, keepdims=True).astype(np.int32),
            cumulative(x, 1, True, False, False),
            cumulative(x, 0, False, True, True),
        )

    check(src, device, cases, want, close)


EMPTY = """
func.func @f(%x: tensor<?x?xf32>)
    -> (tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xi64>, tensor<2x?xf32>) {
  %a = tensor.cumsum %x {axis = 0, exclusive = true} : tensor<?x?xf32> -> tensor<?x?xf32>
  %b = tensor.cumprod %x {axis = 1, reverse = true} : tensor<?x?xf32> -> tensor<?x?xf32>
  %c = tensor.argmax %x {axis = 0} : tensor<?x?xf32> -> tensor<?xi64>
  %v, %i = tensor.top_k %x {k = 2, axis = 0} : tensor<?x?xf32> -> tensor<2x?xf32>, tensor<2x?xi64>
  func.return %a, %b, %c, %v : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xi64>, tensor<2x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_scans_of_empty_dims_and_top_k_along_the_first_axis(device: str) -> None:
    cases = [(rows_of(shape, i),) for i, shape in enumerate([(2, 0), (3, 1), (5, 13), (2, 3001)])]

    def want(x: np.ndarray) -> tuple[np.ndarray, ...]:
        ahead = np.concatenate([np.zeros_like(x[:1]), np.cumsum(x, axis=0)[:-1]])
        behind = np.flip(np.cumprod(np.flip(x, 1), axis=1), 1)
        return ahead, behind, x.argmax(axis=0), top_k_numpy(x.T, 2)[0].T

    check(EMPTY, device, cases, want, close)


def test_argmax_takes_the_first_nan_and_the_first_of_ties() -> None:
    src = ARG.replace("xT>", "xf32>")
    x = np.array([[1, 3, 3, np.nan, np.nan], [2, 2, 1, 1, 2]], np.float32)
    for run in (lambda a: dvm.interpret(src, a), dvm.compile(src)):
        a, b, *_ = run(x)
        np.testing.assert_array_equal(a, [3, 0])
        np.testing.assert_array_equal(b, [[0, 1, 1, 0, 0]])


BOOLEANS = """
func.func @f(%b: tensor<?x?xi1>)
    -> (tensor<?xi32>, tensor<?xi64>, tensor<?x2xi1>, tensor<?x2xi64>) {
  %a = tensor.argmax %b {axis = 1} : tensor<?x?xi1> -> tensor<?xi32>
  %z = tensor.argmin %b {axis = 1} : tensor<?x?xi1> -> tensor<?xi64>
  %v, %i = tensor.top_k %b {k = 2} : tensor<?x?xi1> -> tensor<?x2xi1>, tensor<?x2xi64>
  func.return %a, %z, %v, %i : tensor<?xi32>, tensor<?xi64>, tensor<?x2xi1>, tensor<?x2xi64>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_argmax_argmin_and_top_k_of_booleans(device: str) -> None:
    """The first true (false) of each row, as numpy's argmax (argmin) of booleans."""
    shapes = [(0, 2), (1, 2), (7, 13), (3, 3001)]
    cases = [(np.random.default_rng(i).random(s) < 0.3,) for i, s in enumerate(shapes)]

    def want(b: np.ndarray) -> tuple[np.ndarray, ...]:
        values, indices = top_k_numpy(b.astype(np.int8), 2)
        return (
            b.argmax(axis=1).astype(np.int32),
            b.argmin(axis=1).astype(np.int64),
            values.astype(np.bool_),
            indices,
        )

    check(BOOLEANS, device, cases, want)


def test_argmax_over_an_empty_axis_is_an_error_naming_the_op() -> None:
    """Interpreted, when it runs; compiled, as the call binds the argument's sizes."""
    src = ARG.replace("xT>", "xf32>")
    empty = np.zeros((3, 0), np.float32)
    with pytest.raises(ExecutionError, match=r"tensor.argmax.*empty axis 1"):
        dvm.interpret(src, empty)
    with pytest.raises(CallError, match=r"tensor.argmax .*\(from axis 1 of %x\) is 0"):
        dvm.compile(src)(empty)


TOP_K = """
func.func @f(%x: tensor<?x?xT>) -> (tensor<?x3xT>, tensor<?x3xi64>) {
  %v, %i = tensor.top_k %x {k = 3} : tensor<?x?xT> -> tensor<?x3xT>, tensor<?x3xi64>
  func.return %v, %i : tensor<?x3xT>, tensor<?x3xi64>
}
"""


def top_k_numpy(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """A stable argsort of -x (NaN first), computed differently from the op: by ranks."""
    wide = x.astype(np.float64)
    key = np.where(np.isnan(wide), -np.inf, -wide)
    order = np.lexsort((np.broadcast_to(np.arange(x.shape[1]), x.shape), key), axis=1)
    # lexsort sorts by the last key first: by key, then by index
    indices = order[:, :k].astype(np.int64)
    return np.take_along_axis(x, indices, axis=1), indices


@pytest.mark.parametrize("device", PRESETS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_top_k_at_every_level(device: str, dtype: str) -> None:
    src = TOP_K.replace("xT>", f"x{dtype}>")
    shapes = [(0, 3), (1, 3), (7, 13), (3, 3001)]
    cases = [(sample(shape, dtype, i),) for i, shape in enumerate(shapes)]
    if not dtype.startswith("ui"):  # ties of negative values
        cases.append((np.array([[-1, -1, -1, -1]], numpy_dtype(dtype)),))
    check(src, device, cases, lambda x: top_k_numpy(x, 3), close)


def test_top_k_beyond_a_dynamic_dim_is_an_error_naming_the_op() -> None:
    """Interpreted, when it runs; compiled, as the call binds the argument's sizes."""
    src = TOP_K.replace("xT>", "xf32>")
    with pytest.raises(ExecutionError, match=r"tensor.top_k.*k = 3 exceeds dim 2"):
        dvm.interpret(src, np.zeros((4, 2), np.float32))
    with pytest.raises(
        CallError, match=r"tensor.top_k .*\(from axis 1 of %x\) is 2 and it must be 3"
    ):
        dvm.compile(src)(np.zeros((4, 2), np.float32))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("%r = tensor.argmax %x {axis = 2} : tensor<4x8xf32> -> tensor<4xi64>", "axis 2 is out"),
        ("%r = tensor.argmax %x {axis = 1} : tensor<4x8xf32> -> tensor<4xf32>", "expected i32"),
        ("%r = tensor.argmin %x {axis = 1} : tensor<4x8xf32> -> tensor<8xi64>", "has dim 8"),
        ("%r = tensor.cumsum %x {axis = 0} : tensor<4x8xf32> -> tensor<4x8xf16>", "changes the"),
        (
            "%r, %s = tensor.top_k %x {k = 9} : tensor<4x8xf32> -> "
            "tensor<4x9xf32>, tensor<4x9xi64>",
            "k = 9 exceeds dim 8",
        ),
    ],
)
def test_scan_verifiers_name_the_op_and_types(line: str, message: str) -> None:
    op = line.split(" = ")[1].split(" ")[0]
    src = f"""
func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {{
  {line}
  func.return %x : tensor<4x8xf32>
}}"""
    with pytest.raises(VerifyException, match=f"'{op}' .*{message}"):
        dvm.parse(src)
