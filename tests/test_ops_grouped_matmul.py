"""`tensor.grouped_matmul` at every level.

Each program runs in the reference interpreter, after `fuse`, as tile IR, as
bytecode and compiled, on both device presets, in f32, f16, bf16 and f64, on
row counts 0, 1, 7 and 3001, and must match numpy. The group sizes are data:
one compiled program runs every split (empty groups, one group, every row in
the last group, rows past the last group). Bad sizes are an ExecutionError
naming the op at every level.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import ml_dtypes
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
DTYPES = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16, "f64": np.float64}


def program(element: str, sizes: str = "i32", bias: bool = False) -> str:
    x, w, b = (f"tensor<?x?x{element}>", f"tensor<?x?x?x{element}>", f"tensor<?x?x{element}>")
    g = f"tensor<?x{sizes}>"
    args = f"%x: {x}, %g: {g}, %w: {w}" + (f", %b: {b}" if bias else "")
    operands = "%x, %g, %w" + (", %b" if bias else "")
    types = f"{x}, {g}, {w}" + (f", {b}" if bias else "")
    return f"""
func.func @f({args}) -> {x} {{
  %y = tensor.grouped_matmul {operands} : ({types}) -> {x}
  func.return %y : {x}
}}
"""


@cache
def lowered(src: str, spec: str) -> Any:
    return pipeline.run(dvm.parse(src), spec)


def levels(src: str, device: str) -> list[tuple[str, Callable[..., Any]]]:
    """(name, run) for each level: interpreted after each pass level, and compiled."""
    parsed = dvm.parse(src)
    runs: list[tuple[str, Callable[..., Any]]] = [
        ("interpret", lambda *a: dvm.interpret(parsed, *a))
    ]
    for spec in LEVELS:
        module = lowered(src, spec.replace("%s", device))
        runs.append((spec, lambda *a, m=module: dvm.interpret(m, *a)))
    runs.append(("compiled", dvm.compile(src, device=device)))
    return runs


def reference(x: np.ndarray, g: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """numpy's grouped matmul in float64: rows past the last group are zero."""
    out = np.zeros((x.shape[0], w.shape[2]))
    ends = np.cumsum(g)
    for i, (end, size) in enumerate(zip(ends, g, strict=True)):
        rows = slice(end - size, end)
        out[rows] = x[rows].astype(np.float64) @ w[i].astype(np.float64)
        if b is not None:
            out[rows] += b[i].astype(np.float64)
    return out


def tolerance(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, dtype: Any) -> float:
    """K products summed, a bias added and the result rounded, each off by at most an
    epsilon of the largest magnitude (as `tolerances.matmul_atol` bounds a matmul)."""
    eps = float(ml_dtypes.finfo(dtype).eps)
    if x.size == 0 or w.size == 0:
        return eps
    magnitude = float((np.abs(x.astype(np.float64)) @ np.abs(w.astype(np.float64))).max())
    if b is not None and b.size:
        magnitude += float(np.abs(b.astype(np.float64)).max())
    return (x.shape[1] + 3) * eps * max(magnitude, 1.0)


def split(rows: int, groups: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Group sizes for `rows` rows: random cuts (some groups empty), all rows in the
    first group, all in the last, and a split that leaves the last rows out."""
    cuts = np.sort(rng.integers(0, rows + 1, groups - 1))
    random = np.diff(np.concatenate([[0], cuts, [rows]]))
    first, last = np.zeros(groups, np.int64), np.zeros(groups, np.int64)
    first[0], last[-1] = rows, rows
    short = random.copy()
    short[-1] -= min(short[-1], 2)
    return [random, first, last, short]


def operands(
    rows: int, k: int, n: int, groups: int, dtype: Any, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, k)).astype(dtype)
    w = (rng.standard_normal((groups, k, n)) / np.sqrt(max(k, 1))).astype(dtype)
    b = rng.standard_normal((groups, n)).astype(dtype)
    return x, w, b


SHAPES = [(0, 5, 3, 2), (1, 1, 1, 1), (7, 13, 5, 3), (3001, 16, 8, 4)]
"""(M, K, N, G)."""


def check_levels(src: str, device: str, dtype: Any, sizes: Any, bias: bool) -> None:
    runs = levels(src, device)
    for seed, (m, k, n, groups) in enumerate(SHAPES):
        x, w, b = operands(m, k, n, groups, dtype, seed)
        splits = split(m, groups, np.random.default_rng(seed))
        for g in splits if m < 1000 else splits[::2]:  # (the tile levels are slow)
            args = (x, g.astype(sizes), w, *([b] if bias else []))
            want = reference(x, g, w, b if bias else None)
            atol = tolerance(x, w, b if bias else None, dtype)
            for name, run in runs:
                got = run(*args)
                assert got.dtype == np.dtype(dtype), name
                np.testing.assert_allclose(
                    got.astype(np.float64), want, rtol=0, atol=atol, err_msg=f"{name} {g}"
                )


@pytest.mark.parametrize("device", PRESETS)
@pytest.mark.parametrize("element", DTYPES)
def test_every_level_matches_numpy_on_every_split(device: str, element: str) -> None:
    check_levels(program(element), device, DTYPES[element], np.int32, bias=False)


@pytest.mark.parametrize("device", PRESETS)
@pytest.mark.parametrize(("element", "sizes"), [("f32", "i64"), ("bf16", "i32")])
def test_a_bias_per_group_at_every_level(device: str, element: str, sizes: str) -> None:
    src = program(element, sizes, bias=True)
    check_levels(src, device, DTYPES[element], np.int64 if sizes == "i64" else np.int32, True)


@pytest.mark.parametrize("device", PRESETS)
def test_one_compiled_program_serves_a_stream_of_splits(device: str) -> None:
    """Sizes are data: a hundred random splits of one shape reuse one specialization,
    whose kernels run each split (unplanned first, then planned)."""
    compiled = dvm.compile(program("f32", bias=True), device=device)
    rng = np.random.default_rng(7)
    x, w, b = operands(257, 40, 24, 6, np.float32, 7)
    for _ in range(100):
        g = rng.multinomial(int(rng.integers(0, 258)), np.ones(6) / 6)
        got = compiled(x, g.astype(np.int32), w, b)
        np.testing.assert_allclose(got, reference(x, g, w, b), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("device", PRESETS)
def test_long_rows_and_many_groups_are_chunked_to_fit(device: str) -> None:
    """K too long for one chunk (a loop over K accumulates) and 64 groups, whose
    weight chunks must fit the cube memory beside the rows."""
    compiled = dvm.compile(program("f32", bias=True), device=device)
    for m, k, n, groups in [(300, 3001, 40, 5), (129, 96, 200, 64)]:
        x, w, b = operands(m, k, n, groups, np.float32, k)
        g = np.random.default_rng(k).multinomial(m, np.ones(groups) / groups).astype(np.int32)
        want = reference(x, g, w, b)
        np.testing.assert_allclose(compiled(x, g, w, b), want, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("device", PRESETS)
def test_empty_dims_and_chunks_of_k_at_every_level(device: str) -> None:
    """No columns in x (a view of no element), no columns in w, no groups, and a K
    walked in chunks (the tile interpreter runs the loop too)."""
    runs = levels(program("f32", bias=True), device)
    for m, k, n, groups in [
        (7, 0, 3, 2),
        (7, 3, 0, 2),
        (0, 0, 0, 0),
        (5, 3, 4, 0),
        (300, 3001, 8, 3),
    ]:
        x, w, b = operands(m, k, n, groups, np.float32, 1)
        g = np.zeros(groups, np.int32)
        if groups:
            g[-1] = max(m - 1, 0)
        want = reference(x, g, w, b)
        for name, run in runs:
            np.testing.assert_allclose(run(x, g, w, b), want, rtol=1e-4, atol=1e-3, err_msg=name)


VIEWED = """
func.func @f(%xt: tensor<?x?xf32>, %g: tensor<?xi32>, %w: tensor<?x?x?xf32>) -> tensor<?x?xf32> {
  %x = tensor.transpose %xt {perm = [1, 0]} : tensor<?x?xf32> -> tensor<?x?xf32>
  %y = tensor.grouped_matmul %x, %g, %w : (tensor<?x?xf32>, tensor<?xi32>, tensor<?x?x?xf32>)
      -> tensor<?x?xf32>
  %m = tensor.reduce_max %y {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %d = tensor.sub %y, %m : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  func.return %d : tensor<?x?xf32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_x_read_through_a_transpose_and_an_epilogue_reducing_the_columns(device: str) -> None:
    """x is a transposed view of the input, and the epilogue subtracts each row's
    maximum (one mix kernel when the columns are few, a guarded choice)."""
    runs = levels(VIEWED, device)
    for m, k, n, groups in [(7, 5, 3, 2), (300, 40, 12, 3), (0, 4, 3, 2)]:
        x, w, _ = operands(m, k, n, groups, np.float32, 2)
        g = np.array([m // 2] + [0] * (groups - 2) + [m - m // 2], np.int32)
        y = reference(x, g, w, None)
        want = y - y.max(axis=1, keepdims=True) if m else y
        for name, run in runs:
            got = run(np.ascontiguousarray(x.T), g, w)
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=name)


SLICED = """
func.func @f(%t: tensor<?x?xf32>, %o: index, %n: index, %g: tensor<?xi32>,
             %w: tensor<?x?x?xf32>) -> tensor<?x?xf32> {
  %c1 = arith.constant 1 : index
  %k = tensor.dim %t, %c1 : tensor<?x?xf32>
  %x = tensor.extract_slice %t[%o, 0] [%n, %k] [1, 1] : tensor<?x?xf32> to tensor<?x?xf32>
  %y = tensor.grouped_matmul %x, %g, %w : (tensor<?x?xf32>, tensor<?xi32>, tensor<?x?x?xf32>)
      -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
"""


def test_x_a_slice_of_rows_given_at_run_time() -> None:
    """The rows the sizes split come from index values (a slice's size): the slice is
    a view of the kernel, and the sizes are checked against the slice's rows."""
    assert str(lowered(SLICED, "symbolic-shapes,fuse")).count("tensor.fusion") == 1
    runs = [dvm.compile(SLICED), lambda *a: dvm.interpret(SLICED, *a)]
    t, w, _ = operands(20, 5, 3, 2, np.float32, 3)
    for offset, rows, sizes in [(3, 10, [4, 6]), (0, 20, [0, 19]), (5, 0, [0, 0])]:
        g = np.array(sizes, np.int32)
        want = reference(t[offset : offset + rows], g, w, None)
        for run in runs:
            np.testing.assert_allclose(run(t, offset, rows, g, w), want, rtol=1e-5, atol=1e-5)
    for run in runs:
        with pytest.raises(ExecutionError, match="add up to 11 rows, but the operand has 10"):
            run(t, 3, 10, np.array([4, 7], np.int32), w)


BAD_SIZES = [
    ([3, 5], "the group sizes add up to 8 rows, but the operand has 7 rows"),
    ([-1, 2], "group 0 has a negative size -1"),
    ([0, 8], "add up to 8 rows"),
    ([2**62, 2**62], "add up to 9223372036854775808 rows"),
]


@pytest.mark.parametrize("device", PRESETS)
@pytest.mark.parametrize(("sizes", "message"), BAD_SIZES)
def test_bad_sizes_are_an_error_naming_the_op_at_every_level(
    device: str, sizes: Sequence[int], message: str
) -> None:
    x, w, b = operands(7, 3, 4, 2, np.float32, 0)
    for name, run in levels(program("f32", "i64", bias=True), device):
        with pytest.raises(ExecutionError, match=r"tensor\.grouped_matmul") as e:
            run(x, np.array(sizes, np.int64), w, b)
        assert message in str(e.value), name


TWO_EXPERT_SETS = """
func.func @f(%x: tensor<?x?xf32>, %g: tensor<?xi32>, %w: tensor<?x?x?xf32>,
             %v: tensor<?x?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %a = tensor.grouped_matmul %x, %g, %w : (tensor<?x?xf32>, tensor<?xi32>, tensor<?x?x?xf32>)
      -> tensor<?x?xf32>
  %b = tensor.grouped_matmul %x, %g, %v : (tensor<?x?xf32>, tensor<?xi32>, tensor<?x?x?xf32>)
      -> tensor<?x?xf32>
  func.return %a, %b : tensor<?x?xf32>, tensor<?x?xf32>
}
"""


def test_stacked_launches_check_their_sizes_too() -> None:
    """Two independent grouped matmuls are one `tensor.stack`, launched as one: the
    sizes of each are checked before it, as for a launch of its own."""
    assert "tensor.stack" in str(lowered(TWO_EXPERT_SETS, "dvm-pipeline"))
    compiled = dvm.compile(TWO_EXPERT_SETS)
    x, w, _ = operands(7, 3, 4, 2, np.float32, 0)
    a, b = compiled(x, np.array([3, 4], np.int32), w, 2 * w)
    np.testing.assert_allclose(2 * a, b, rtol=1e-6)
    with pytest.raises(ExecutionError, match=r"%a = tensor\.grouped_matmul: .* add up to 8"):
        compiled(x, np.array([3, 5], np.int32), w, w)


def test_shapes_that_disagree_at_run_time_are_guarded() -> None:
    x, w, _ = operands(7, 3, 4, 2, np.float32, 0)
    for run in (lambda *a: dvm.interpret(program("f32"), *a), dvm.compile(program("f32"))):
        with pytest.raises(ValueError, match="grouped_matmul"):
            run(x, np.array([7, 0, 0], np.int32), w)


@pytest.mark.parametrize(
    ("types", "message"),
    [
        ("tensor<4x3xi32>, tensor<2xi32>, tensor<2x3x5xi32>", "x has element type i32"),
        ("tensor<4x3xf32>, tensor<2xf32>, tensor<2x3x5xf32>", "sizes has element type f32"),
        ("tensor<4x3xf32>, tensor<2xi32>, tensor<2x3x5xf16>", "differ in type"),
        ("tensor<4x3xf32>, tensor<2xi32>, tensor<2x4x5xf32>", "contraction dims differ"),
        ("tensor<4x3xf32>, tensor<3xi32>, tensor<2x3x5xf32>", "group counts differ"),
        ("tensor<4x3xf32>, tensor<2x1xi32>, tensor<2x3x5xf32>", "sizes must have rank 1"),
        ("tensor<4x3xf32>, tensor<2xi32>, tensor<3x5xf32>", "w must have rank 3"),
    ],
)
def test_the_verifier_names_the_op_and_types(types: str, message: str) -> None:
    result = "tensor<4x5xi32>" if types.startswith("tensor<4x3xi32>") else "tensor<4x5xf32>"
    x, g, w = types.split(", ")
    src = f"""
func.func @f(%x: {x}, %g: {g}, %w: {w}) {{
  %y = tensor.grouped_matmul %x, %g, %w : ({types}) -> {result}
  func.return
}}"""
    with pytest.raises(VerifyException, match=f"'tensor.grouped_matmul' .*{message}"):
        dvm.parse(src)


def test_the_result_shape_is_checked_by_the_verifier() -> None:
    src = """
func.func @f(%x: tensor<4x3xf32>, %g: tensor<2xi32>, %w: tensor<2x3x5xf32>) {
  %y = tensor.grouped_matmul %x, %g, %w
      : (tensor<4x3xf32>, tensor<2xi32>, tensor<2x3x5xf32>) -> tensor<4x6xf32>
  func.return
}"""
    with pytest.raises(VerifyException, match=r"'tensor\.grouped_matmul' result type"):
        dvm.parse(src)


MOE = (Path(__file__).parent / "filecheck" / "ops_grouped_matmul" / "moe.mlir").read_text()
"""A mixture of experts' feed-forward layer (up-projection, bias and SiLU; down-projection
and residual), whose kernels the filecheck test beside it checks."""


def moe_numpy(
    x: np.ndarray, sizes: np.ndarray, w_up: np.ndarray, b_up: np.ndarray, w_down: np.ndarray
) -> np.ndarray:
    h = reference(x, sizes, w_up, b_up)
    a = h / (1 + np.exp(-h))
    return x + reference(a, sizes, w_down, None)


@pytest.mark.parametrize("device", PRESETS)
def test_a_mixture_of_experts_layer_runs_a_stream_of_token_counts(device: str) -> None:
    """Compiled once; each batch has its own token count and its own split of the
    tokens among 4 experts (routing, which sorts the tokens, is the caller's)."""
    compiled = dvm.compile(MOE, device=device)
    rng = np.random.default_rng(5)
    d, hidden, experts = 24, 48, 4
    w_up = (rng.standard_normal((experts, d, hidden)) / np.sqrt(d)).astype(np.float32)
    b_up = rng.standard_normal((experts, hidden)).astype(np.float32)
    w_down = (rng.standard_normal((experts, hidden, d)) / np.sqrt(hidden)).astype(np.float32)
    for tokens in (0, 1, 7, 64, 3001, 5, 64, 1000):
        x = rng.standard_normal((tokens, d)).astype(np.float32)
        sizes = rng.multinomial(tokens, rng.dirichlet(np.ones(experts))).astype(np.int32)
        want = moe_numpy(x, sizes, w_up, b_up, w_down)
        got = compiled(x, sizes, w_up, b_up, w_down)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=f"{sizes}")
        if tokens < 100:
            interpreted = dvm.interpret(MOE, x, sizes, w_up, b_up, w_down)
            np.testing.assert_allclose(interpreted, want, rtol=1e-4, atol=1e-4)
