"""`dvm.compile`: compile once, specialize each new shape, run on the VM.

What is promised and checked here:

- every shared example, compiled once, matches `reference.py` on many shape
  draws (0, 1, primes, ~100 and a few large dims up to ~300), dtype-exact;
- a call with bad arguments raises a `CallError` that names the argument,
  the axis or symbol, what was expected and what was given;
- a dim of 1 where a broadcast guard assumed otherwise re-specializes (a
  second variant of the program) and still matches the reference;
- specializations are cached by shape, least recently used first out;
- intermediates go into memory kept from the calls before (an arena per call
  at a time), loops included, and results are new arrays;
- a call keeps none of its arguments and results alive once it returns;
- calls from several threads at once are correct;
- a call of several launches that call BLAS holds it at one thread once, and
  gives the count back only under the device's launch lock;
- `CompiledProgram.profile` returns the VM's statistics of every launch;
- the `ascend910b` device preset runs the same programs correctly.
"""

from __future__ import annotations

import importlib
import math
import weakref
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import EXAMPLES_DIR, load_reference
from test_conformance import CAPS, DEFAULT_CAP, as_tuple, run_reference, shape_draws, symbols_of
from xdsl.utils.exceptions import ParseError, VerifyException

import dvm
from dvm import pipeline
from dvm.errors import CallError, DvmError
from dvm.launches import Kernel
from dvm.passes.errors import ProgramError
from dvm.runtime import CompiledProgram

TOLERANCES = {  # dtype -> (rtol, atol); the VM sums in another order than numpy
    np.dtype(np.float16): (2e-3, 2e-3),
    np.dtype(np.float32): (1e-4, 1e-4),
    np.dtype(np.float64): (1e-10, 1e-10),
}
LARGE = (101, 127, 211, 257, 293)
"""Large dims (primes but one), given to one symbol at a time."""
LARGE_CAPS = {"bert_layer.mlir": 1_000}
"""Bound on the product of a large draw's dims; attention is quadratic in S."""
DEFAULT_LARGE_CAP = 30_000_000
INDEX_VALUES = (0, 1, 3, 2, 5, 0, 4)
"""Trip counts for `index` arguments (residual_loop), cycled over the draws."""


def assert_matches(actual: Any, expected: tuple[Any, ...], what: str = "") -> None:
    """Same number of results, same shapes and dtypes, values within the dtype's tolerance."""
    got_all = as_tuple(actual)
    assert len(got_all) == len(expected), f"{what}: {len(got_all)} results, not {len(expected)}"
    for i, (got, want) in enumerate(zip(got_all, expected, strict=True)):
        want = np.asarray(want)
        assert isinstance(got, np.ndarray), f"{what} result {i}: {type(got).__name__}"
        assert got.shape == want.shape, f"{what} result {i}: shape {got.shape} != {want.shape}"
        assert got.dtype == want.dtype, f"{what} result {i}: dtype {got.dtype} != {want.dtype}"
        rtol, atol = TOLERANCES.get(want.dtype, (0, 0))
        np.testing.assert_allclose(
            got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=f"{what} result {i}"
        )


# --------------------------------------------------------------------------
# Every example on many shapes
# --------------------------------------------------------------------------


def _cost(dims: dict[str, int]) -> int:
    return math.prod(max(v, 1) for v in dims.values())


def runtime_draws(file: str, symbols: list[str], seed: int) -> list[dict[str, int]]:
    """The conformance draws (0, 1, primes, ~100, random), then large dims:
    each symbol large in turn with the others small, and all large when cheap."""
    draws = shape_draws(symbols, CAPS.get(file, DEFAULT_CAP), seed)
    cap = LARGE_CAPS.get(file, DEFAULT_LARGE_CAP)
    large = [
        {**dict.fromkeys(symbols, 3), s: LARGE[(seed + i) % len(LARGE)]}
        for i, s in enumerate(symbols)
    ]
    large.append({s: LARGE[(seed + i + 2) % len(LARGE)] for i, s in enumerate(symbols)})
    return draws + [d for d in large if _cost(d) <= cap]


def _cases() -> list[Any]:
    if not EXAMPLES_DIR.is_dir():  # the test itself skips, through the fixture
        return [pytest.param("missing", {}, 0, id="examples-missing")]
    cases = []
    for seed, (file, (_, spec, _)) in enumerate(sorted(load_reference().EXAMPLES.items())):
        for i, dims in enumerate(runtime_draws(file, symbols_of(spec), seed)):
            dim_id = "-".join(f"{k}{v}" for k, v in dims.items())
            cases.append(pytest.param(file, dims, i, id=f"{Path(file).stem}-{dim_id}"))
    return cases


@cache
def compiled(path: Path, entry: str | None = None, device: str | None = None) -> CompiledProgram:
    """One CompiledProgram per example (per test process): compiled once, called on every draw."""
    return dvm.compile(path, entry=entry, device=device)


@pytest.mark.parametrize(("file", "dims", "draw"), _cases())
def test_example_matches_reference(
    file: str, dims: dict[str, int], draw: int, examples_dir: Path, reference: Any
) -> None:
    name, spec, fn = reference.EXAMPLES[file]
    rng = np.random.default_rng(draw)
    args = reference.make_inputs(spec, dims, rng, index_value=INDEX_VALUES[draw % 7])
    expected = run_reference(file, fn, args)
    program = compiled(examples_dir / file, name)
    # the first call at a shape runs unplanned (tiles sized for one core), later
    # ones planned and bound (tiles sized for the device's cores): the tiles
    # differ, so a BLAS row sum may round differently
    first = program(*args)
    assert_matches(first, expected, f"{file} {dims}, first call")
    assert_matches(program(*args), expected, f"{file} {dims}, second call")


def test_draws_include_corner_and_large_dims(examples_dir: Path, reference: Any) -> None:
    for seed, (file, (_, spec, _)) in enumerate(sorted(reference.EXAMPLES.items())):
        draws = runtime_draws(file, symbols_of(spec), seed)
        assert len(draws) >= 20, file
        values = {v for d in draws for v in d.values()}
        assert {0, 1, 7, 13, 31} <= values, file
        assert any(v >= 200 for v in values), file


def test_residual_loop_trip_counts(examples_dir: Path, reference: Any) -> None:
    """One shape, several trip counts (0 returns the input): the index is no part of the key."""
    name, spec, fn = reference.EXAMPLES["residual_loop.mlir"]
    program = dvm.compile(examples_dir / "residual_loop.mlir", entry=name)
    for n in (0, 1, 2, 5, 0, 3):
        x, w, _ = reference.make_inputs(spec, {"M": 13, "K": 7}, np.random.default_rng(n))
        out = program(x, w, n)
        assert_matches(out, (fn(x, w, n),), f"n={n}")
        if n == 0:
            np.testing.assert_array_equal(out, x)
            assert out is not x, "a result must not alias an argument"
    assert len(program.cache) == 1


def test_numpy_scalars_for_rank_0_tensors() -> None:
    """A numpy scalar given for a `tensor<f32>` runs as its 0-d array, on the first call
    and on cached ones, sharing the specialization of a 0-d array."""
    program = dvm.compile("""func.func @f(%s: tensor<f32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %z = tensor.mul %s, %y : (tensor<f32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %z : tensor<?xf32>
}""")
    y = _x(4)
    for scale in (np.float32(2), np.float32(3), np.asarray(np.float32(4))):
        np.testing.assert_array_equal(program(scale, y), scale * y)
    assert len(program.cache) == 1
    with pytest.raises(CallError, match="float64"):
        program(np.float64(2), y)


def test_index_argument_as_a_dim() -> None:
    """A dim given by an `index` argument changes per call without a new
    specialization, and the guards over it are checked per call."""
    text = """func.func @f(%x: tensor<?xf32>, %n: index) -> tensor<?x?xf32> {
  %b = tensor.broadcast_to %x to [%n, %n] : tensor<?xf32> -> tensor<?x?xf32>
  func.return %b : tensor<?x?xf32>
}"""
    program = dvm.compile(text)
    for n in (3, 0, 5, 3):
        x = _x(n)
        assert_matches(program(x, n), (np.broadcast_to(x, (n, n)),), f"n={n}")
    assert len(program.cache) == 3  # by the shape of x, not by n
    with pytest.raises(CallError, match=r"%b = tensor\.broadcast_to"):
        program(_x(5), 4)
    assert_matches(program(_x(5), 5), (np.broadcast_to(_x(5), (5, 5)),))


def test_an_index_argument_named_cores_is_not_the_cores() -> None:
    """`cores` is the symbol of the cores a launch's tiles share work among; an index
    argument of that name gets another symbol, so tile sizes do not read it."""
    text = """func.func @f(%x: tensor<?xf32>, %cores: index) -> tensor<?x300xf32> {
  %b = tensor.broadcast_to %x to [%cores, 300] : tensor<?xf32> -> tensor<?x300xf32>
  %y = tensor.exp %b : tensor<?x300xf32>
  func.return %y : tensor<?x300xf32>
}"""
    program = dvm.compile(text)
    for rows in (1, 700):  # 700 x 300 floats: enough work to share among cores
        x = _x(300)
        want = (np.exp(np.broadcast_to(x, (rows, 300))),)
        for call in ("first", "second"):
            assert_matches(program(x, rows), want, f"{rows} rows, {call} call")
    # a core's share of the rows is the argument's rows over the VM's cores
    lowered = str(pipeline.run(text, "symbolic-shapes,fuse,stack,convert-tensor-to-tile"))
    assert "floor(300*cores_/cores)" in lowered


QKV = """func.func @qkv(%x: tensor<?x64xf32>, %wq: tensor<64x64xf32>, %wk: tensor<64x64xf32>,
    %wv: tensor<64x64xf32>) -> (tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) {
  %q = tensor.matmul %x, %wq : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %k = tensor.matmul %x, %wk : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  %v = tensor.matmul %x, %wv : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  func.return %q, %k, %v : tensor<?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>
}"""


def test_identical_kernels_share_one_specialization(monkeypatch: pytest.MonkeyPatch) -> None:
    """`dedupe-kernels` makes q, k and v one kernel, and `stack` one stacked launch: its
    three members at a shape share one VM specialization. The call that meets the shape
    runs all three unplanned; planning waits for a later call at that shape,
    as with one launch per call."""
    program = dvm.compile(QKV)
    seen: list[tuple[set[int], list[bool], bool]] = []  # specializations, planned before, after
    launch_stack = dvm.vm.launch_stack

    def recording(members: Any, **options: Any) -> Any:
        before = [spec.planned for spec, _, _ in members]
        result = launch_stack(members, **options)
        seen.append(({id(spec) for spec, _, _ in members}, before, members[0][0].planned))
        return result

    monkeypatch.setattr(dvm.vm, "launch_stack", recording)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((37, 64), dtype=np.float32)
    weights = [rng.standard_normal((64, 64), dtype=np.float32) for _ in range(3)]
    for call in ("first", "second"):
        assert_matches(program(x, *weights), tuple(x @ w for w in weights), f"{call} call")
    assert [len(specs) for specs, _, _ in seen] == [1, 1] and seen[0][0] == seen[1][0]
    assert [(before, after) for _, before, after in seen] == [
        ([False] * 3, False),  # the first call: unplanned at each member
        ([False] * 3, True),  # the second call plans them
    ]


def test_a_stacked_launch_checks_no_array_the_runtime_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The runtime's stacked launches pass `checked`, as its single launches do: their
    inputs were checked when their plan was made and their outputs allocated as
    planned, so the VM checks none of their arrays again."""
    launch = importlib.import_module("dvm.vm.launch")
    checks: list[int] = []
    check_args = launch._check_args
    monkeypatch.setattr(launch, "_check_args", lambda *a: checks.append(1) or check_args(*a))
    program = dvm.compile(QKV)
    rng = np.random.default_rng(4)
    weights = [rng.standard_normal((64, 64), dtype=np.float32) for _ in range(3)]
    for call in range(3):  # unplanned, planned, a repeat
        x = rng.standard_normal((37, 64), dtype=np.float32)
        assert_matches(program(x, *weights), tuple(x @ w for w in weights), f"call {call}")
    assert checks == []


def test_a_stack_is_one_launch_once_planned(pool_rounds: list[int]) -> None:
    """q, k and v, stacked: once the shape is planned, one pool round trip runs all three
    members' tiles (here each member alone is too small to share the cores), and every
    call's results are its own (new inputs at the same shape each call)."""
    rounds = pool_rounds
    cores = min(2, len(importlib.import_module("dvm.vm.memory").pool().queues) + 1)
    program = dvm.compile(QKV)
    rng = np.random.default_rng(6)
    weights = [rng.standard_normal((64, 64), dtype=np.float32) for _ in range(3)]
    for call in range(4):  # unplanned; planned and bound, inline; then shared
        rounds.clear()
        x = rng.standard_normal((400, 64), dtype=np.float32)
        assert_matches(program(x, *weights), tuple(x @ w for w in weights), f"call {call}")
        assert rounds == ([cores] if call >= 2 and cores == 2 else []), call


def test_a_call_of_several_blas_launches_holds_blas_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """q, k and v are three matmul launches (one stack): the call sets OpenBLAS to one
    thread once, before them, and gives its count back once, after them, under the device's
    launch lock (so never inside another thread's launch). A program of one launch
    leaves it alone in its first launch, unplanned: its gemm runs on the calling thread
    alone (OpenBLAS keeps so small a gemm on one thread itself)."""
    blas = importlib.import_module("dvm.vm.blas")
    memory = importlib.import_module("dvm.vm.memory")
    count = [2]  # OpenBLAS's threads, as on a machine with several CPUs
    puts: list[int] = []
    at_launch: list[int] = []
    unlocked_restores: list[int] = []
    launch, launch_stack = dvm.vm.launch, dvm.vm.launch_stack
    lock = memory.device_memory(dvm.vm.DeviceSpec.host()).lock

    def put(n: int) -> None:
        puts.append(n)
        count[0] = n
        if n != 1 and not lock.locked():
            unlocked_restores.append(n)

    def recording(spec: Any, args: Any, **options: Any) -> Any:
        at_launch.append(count[0])
        return launch(spec, args, **options)

    def recording_stack(members: Any, **options: Any) -> Any:
        at_launch.append(count[0])
        return launch_stack(members, **options)

    monkeypatch.setattr(blas, "_THREADS", [(lambda: count[0], put)])
    monkeypatch.setattr(dvm.vm, "launch", recording)
    monkeypatch.setattr(dvm.vm, "launch_stack", recording_stack)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((37, 64), dtype=np.float32)
    w = [rng.standard_normal((64, 64), dtype=np.float32) for _ in range(3)]
    qkv, one = dvm.compile(QKV), dvm.compile(ONE_MATMUL)
    for call in ("unplanned", "planned"):
        puts.clear()
        at_launch.clear()
        assert_matches(qkv(x, *w), tuple(x @ m for m in w), call)
        assert (puts, at_launch, count) == ([1, 2], [1], [2]), call  # one stacked launch
    puts.clear()
    at_launch.clear()
    assert_matches(one(x, w[0]), (x @ w[0],), "one launch")
    assert (puts, at_launch, count) == ([], [2], [2])
    assert not unlocked_restores


TWO_MATMULS = """func.func @two(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>, %v: tensor<?x?xf32>)
    -> tensor<?x?xf32> {
  %y = tensor.matmul %x, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %z = tensor.matmul %y, %v : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %z : tensor<?x?xf32>
}"""


@pytest.fixture
def blas_threads(monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], list[int]]:
    """OpenBLAS's thread count, faked at 2 (as on a machine with several CPUs): the count
    (a one-item list) and each count set, in order."""
    blas = importlib.import_module("dvm.vm.blas")
    count = [2]
    puts: list[int] = []

    def put(n: int) -> None:
        puts.append(n)
        count[0] = n

    monkeypatch.setattr(blas, "_THREADS", [(lambda: count[0], put)])
    return count, puts


def test_large_gemms_run_on_blas_threads_even_inside_a_held_call(
    blas_threads: tuple[list[int], list[int]],
) -> None:
    """Each launch's gemms are large (BLAS_THREADS_GEMM): it runs its tiles on the calling
    thread (one core) with OpenBLAS at the count it had before the call held it at one,
    and the call's hold comes back after each launch. (Held at one thread, the VM's
    single-threaded sgemm per core ran at half numpy's speed next to its threads.)"""
    count, puts = blas_threads
    rng = np.random.default_rng(6)
    x, w, v = (rng.standard_normal((400, 400), dtype=np.float32) / 20 for _ in range(3))
    two = dvm.compile(TWO_MATMULS)
    for call in ("first", "again"):  # 1.9 MB of arguments: planned at once
        puts.clear()
        assert_matches(two(x, w, v), ((x @ w) @ v,), call)
        assert (puts, count) == ([1, 2, 1, 2, 1, 2], [2]), call
    _, stats = two.profile(x, w, v)
    assert [s.cores for _, s in stats] == [1, 1]


def test_a_host_matmul_is_one_tile_on_blas_threads(
    blas_threads: tuple[list[int], list[int]], examples_dir: Path
) -> None:
    """The host's BLAS shares a gemm among its threads, so a matmul's rows are not cut
    into a tile per core: at 613x362x37 a planned launch is one tile on the calling
    thread, whose gemm (above BLAS_SHARED_GEMM) runs with OpenBLAS at its own count,
    untouched, and so does a first, unplanned launch of any gemm (OpenBLAS keeps a
    small one on one thread); a planned launch of a smaller gemm holds it at one."""
    count, puts = blas_threads
    matmul = dvm.compile(examples_dir / "matmul.mlir")
    rng = np.random.default_rng(7)
    for m, k, n, shared in [(613, 362, 37, True), (40, 30, 20, False)]:
        a = rng.standard_normal((m, k), dtype=np.float32)
        b = rng.standard_normal((k, n), dtype=np.float32)
        held = []
        for call in ("first", "planned", "known shape"):
            puts.clear()
            assert_matches(matmul(a, b), (a @ b,), f"{m}x{k}x{n} {call}")
            held.append(puts == [1, 2] and count == [2])
        assert held == [False, not shared, not shared], (m, k, n)
        _, stats = matmul.profile(a, b)
        assert [(s.tiles, s.cores) for _, s in stats] == [(1, 1)], (m, k, n)


ONE_MATMUL = """func.func @q(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>) -> tensor<?x64xf32> {
  %q = tensor.matmul %x, %w : (tensor<?x64xf32>, tensor<64x64xf32>) -> tensor<?x64xf32>
  func.return %q : tensor<?x64xf32>
}"""


# --------------------------------------------------------------------------
# Call-time errors
# --------------------------------------------------------------------------

F32 = np.float32


def _x(*shape: int, dtype: Any = F32) -> np.ndarray[Any, Any]:
    return np.random.default_rng(0).standard_normal(shape).astype(dtype)


@pytest.fixture(scope="module")
def layernorm(examples_dir: Path) -> CompiledProgram:
    return dvm.compile(examples_dir / "layernorm.mlir")


class ArrayLike:
    shape = [8]
    dtype = np.dtype(np.float32)


BAD_CALLS: list[tuple[str, str, Callable[[], tuple[Any, ...]], list[str]]] = [
    # (id, example, arguments, what the message must name)
    ("count", "layernorm", lambda: (_x(4, 8), _x(8)), ["@layernorm", "3 arguments", "got 2"]),
    (
        "dtype",
        "layernorm",
        lambda: (_x(4, 8, dtype=np.float64), _x(8), _x(8)),
        ["%x", "argument 0", "f32", "float64"],
    ),
    (
        "int-dtype",
        "mixed_precision",
        lambda: (_x(3, 64, dtype=np.float16), np.ones((3, 1), np.int64)),
        ["%n", "i32", "int64"],
    ),
    ("rank", "layernorm", lambda: (_x(4, 8), _x(1, 8), _x(8)), ["%w", "rank 1", "rank 2"]),
    ("rank-0", "layernorm", lambda: (_x(4, 8), _x(8), np.float32(1)), ["%b", "rank 1", "rank 0"]),
    (
        "static-dim",
        "mixed_precision",
        lambda: (_x(3, 63, dtype=np.float16), np.ones((3, 1), np.int32)),
        ["%x", "axis 1", "64", "63"],
    ),
    (
        "static-unit-dim",
        "mixed_precision",
        lambda: (_x(3, 64, dtype=np.float16), np.ones((3, 2), np.int32)),
        ["%n", "axis 1", "must be 1", "got 2"],
    ),
    ("list", "layernorm", lambda: (_x(4, 8), [1.0] * 8, _x(8)), ["%w", "numpy array", "list"]),
    ("none", "layernorm", lambda: (_x(4, 8), _x(8), None), ["%b", "numpy array", "NoneType"]),
    (
        "array-like",  # a shape and a dtype, but no array (and a shape no key can hold)
        "layernorm",
        lambda: (_x(4, 8), _x(8), ArrayLike()),
        ["%b", "numpy array", "ArrayLike"],
    ),
    (
        "index-float",
        "residual_loop",
        lambda: (_x(2, 3), _x(3, 3), 2.0),
        ["%n", "int", "float"],
    ),
    (
        "index-bool",
        "residual_loop",
        lambda: (_x(2, 3), _x(3, 3), True),
        ["%n", "int", "bool"],
    ),
    (
        "index-beyond-int64",
        "residual_loop",
        lambda: (_x(2, 3), _x(3, 3), 1 << 63),
        ["%n", "outside index"],
    ),
    (
        "index-below-int64",
        "residual_loop",
        lambda: (_x(2, 3), _x(3, 3), -(1 << 63) - 1),
        ["%n", "outside index"],
    ),
    (
        "index-array",
        "residual_loop",
        lambda: (_x(2, 3), _x(3, 3), np.array([2])),
        ["%n", "int", "ndarray"],
    ),
    (
        "guard-broadcast",
        "layernorm",
        lambda: (_x(4, 8), _x(5), _x(8)),
        ["%x", "%w", "axis 1", "axis 0", "8", "5", "tensor.mul"],
    ),
    (
        "guard-second-operand",
        "layernorm",
        lambda: (_x(4, 8), _x(8), _x(3)),
        ["%x", "%b", "axis 1", "axis 0", "8", "3", "tensor.add"],
    ),
    (
        "guard-contraction",
        "matmul",
        lambda: (_x(3, 4), _x(5, 2)),
        ["%a", "%b", "axis 1", "axis 0", "4", "5", "tensor.matmul"],
    ),
    (
        # a contraction dim of 1 is no broadcast: still an error, not a new variant
        "guard-contraction-unit",
        "matmul",
        lambda: (_x(3, 1), _x(5, 2)),
        ["%a", "%b", "1", "5", "tensor.matmul"],
    ),
]


@pytest.mark.parametrize(
    ("example", "make_args", "names"),
    [pytest.param(e, a, n, id=i) for i, e, a, n in BAD_CALLS],
)
def test_bad_call_is_a_clear_call_error(
    example: str,
    make_args: Callable[[], tuple[Any, ...]],
    names: list[str],
    examples_dir: Path,
) -> None:
    program = compiled(examples_dir / f"{example}.mlir")
    args = make_args()
    cached = len(program.cache)
    with pytest.raises(CallError) as raised:
        program(*args)
    message = str(raised.value)
    assert "\n" not in message, message
    for name in names:
        assert name in message, f"{name!r} not in {message!r}"
    assert len(program.cache) == cached, "a failed call must cache nothing"
    with pytest.raises(CallError):  # and fails again: not remembered as good
        program(*args)
    assert isinstance(raised.value, ValueError)  # `except ValueError` keeps working


def test_guard_failure_names_both_symbols(layernorm: CompiledProgram) -> None:
    with pytest.raises(CallError) as raised:
        layernorm(_x(4, 8), _x(5), _x(8))
    message = str(raised.value)
    assert "x_1" in message and "w_0" in message, message
    assert "broadcast" in message, message


def test_index_arguments_are_checked_at_every_call(examples_dir: Path) -> None:
    """A cached signature knows only an index argument's type: its value is checked at
    every call (beyond int64: a clear error), and numpy ints and int64's bounds pass."""
    program = compiled(examples_dir / "residual_loop.mlir")
    x, w = _x(2, 3), _x(3, 3)
    expected = program(x, w, 2)
    np.testing.assert_array_equal(program(x, w, np.int64(2)), expected)
    for bad in (1 << 63, -(1 << 63) - 1):
        with pytest.raises(CallError, match=r"%n.*outside index"):
            program(x, w, bad)
    with pytest.raises(CallError, match=r"%n.*int.*bool"):
        program(x, w, True)
    np.testing.assert_array_equal(program(x, w, 2), expected)
    assert program.fast_bind((x, w, (1 << 63) - 1)) is not None
    assert program.fast_bind((x, w, 1 << 63)) is None  # for the full checks to name it


def test_generated_binder_agrees_with_the_full_checks(layernorm: CompiledProgram) -> None:
    """A new signature first tries the generated binder; it must give the symbols the
    full checks give, and leave to them (None) whatever they must reject or re-specialize."""
    generic = layernorm.variants[frozenset()]
    for rows, cols in [(6, 9), (0, 3), (1, 1), (7, 0)]:
        args = (_x(rows, cols), _x(cols), _x(cols))
        assert layernorm.fast_bind(args) == generic.bind(layernorm.check(args))
    x, b = _x(6, 9), _x(9)
    assert layernorm.fast_bind((x, np.ones(1, F32), b)) is None  # a guard assumed 9
    assert layernorm.fast_bind((x, _x(9, dtype=np.float64), b)) is None
    assert layernorm.fast_bind((x, _x(9)[::2], b)) is None  # 5 columns of weights
    assert layernorm.fast_bind((x, b)) is None
    with pytest.raises(CallError, match="argument 1"):
        layernorm(x, _x(9, dtype=np.float64), b)


SWAP = """
func.func @swap(%x: tensor<?xf32>, %y: tensor<?xf32>, %n: index) -> (tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a, %b = scf.for %i = %c0 to %n step %c1 iter_args(%p = %x, %q = %y)
      -> (tensor<?xf32>, tensor<?xf32>) {
    scf.yield %q, %p : tensor<?xf32>, tensor<?xf32>
  }
  func.return %a, %b : tensor<?xf32>, tensor<?xf32>
}
"""


@pytest.mark.parametrize("trips", [0, 1, 2, 3])
def test_loop_swaps_carried_values(trips: int) -> None:
    """The values a loop yields become its carried values all at once."""
    x, y = _x(4), _x(4) + 10
    a, b = dvm.compile(SWAP)(x, y, trips)
    want = (y, x) if trips % 2 else (x, y)
    np.testing.assert_array_equal(a, want[0])
    np.testing.assert_array_equal(b, want[1])


def test_unit_dim_respecializes(layernorm: CompiledProgram, reference: Any) -> None:
    """w of shape (1,) broadcasts along x's columns, which the first variant
    assumed equal to w's length: a second variant runs it."""
    program = dvm.compile(EXAMPLES_DIR / "layernorm.mlir")
    x, b = _x(6, 9), _x(9)
    assert_matches(program(x, _x(9), b), (reference.layernorm(x, _x(9), b),))
    assert len(program.variants) == 1
    w1 = np.array([1.5], F32)
    assert_matches(program(x, w1, b), (reference.layernorm(x, w1, b),), "w of shape (1,)")
    assert len(program.variants) == 2
    # other shapes with the same unit dim reuse that variant
    x2, b2 = _x(11, 4), _x(4)
    assert_matches(program(x2, w1, b2), (reference.layernorm(x2, w1, b2),))
    assert len(program.variants) == 2
    # and the general variant still serves general shapes
    assert_matches(program(x2, b2, b2), (reference.layernorm(x2, b2, b2),))
    assert len(program.variants) == 2


def test_unit_dims_on_several_arguments(reference: Any) -> None:
    """x with one column broadcasts against w and b (all unit-dim patterns run)."""
    program = dvm.compile(EXAMPLES_DIR / "layernorm.mlir")
    cases = [
        (_x(5, 1), _x(7), _x(7)),  # x's columns are 1: the result has w's length
        (_x(5, 7), _x(1), _x(1)),
        (_x(5, 1), _x(1), _x(1)),
        (_x(1, 7), _x(7), _x(1)),
    ]
    for args in cases:
        want = reference.layernorm(*args)
        assert_matches(program(*args), (want,), str([a.shape for a in args]))
    assert len(program.variants) >= 3


def test_unit_dim_variant_of_a_file_compiles_the_text_read(tmp_path: Path, reference: Any) -> None:
    """The generic variant is lowered from the parsed program itself; a variant with a
    unit dim parses the program again, from the text `compile` read, not from the file
    (which may have changed since), and under the file's name."""
    path = tmp_path / "layernorm.mlir"
    path.write_text((EXAMPLES_DIR / "layernorm.mlir").read_text())
    program = dvm.compile(path, cache=False)
    path.write_text("this is no program")
    x, w1, b = _x(5, 7), np.array([1.5], F32), _x(7)
    assert_matches(program(x, w1, b), (reference.layernorm(x, w1, b),), "w of shape (1,)")
    assert len(program.variants) == 2
    assert str(path) in str(program.module.body.block.first_op.location)  # type: ignore[union-attr]


MERGED_THEN_ADDED = """
func.func @main(%x: tensor<?x?x?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %c = tensor.collapse_shape %x [[0, 1, 2]] : tensor<?x?x?xf32> into tensor<?xf32>
  %r = tensor.add %c, %y : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}
"""


def test_a_merged_dim_of_1_broadcasts_as_numpys() -> None:
    """A dim that is a product of argument dims (a reshape's merge) broadcasts when it
    is 1, as a plain 1 does: the variant fixes each factor to 1. Where it is not 1 and
    not the other side's, the guard names both."""
    program = dvm.compile(MERGED_THEN_ADDED, cache=False)
    for shape, length in [((2, 3, 2), 12), ((1, 1, 1), 5), ((2, 3, 2), 1), ((1, 1, 1), 7)]:
        x = _x(*shape)
        y = _x(length) + 1
        want = x.reshape(-1) + y
        assert_matches(program(x, y), (want,), f"{shape} and ({length},)")
        assert_matches(dvm.interpret(MERGED_THEN_ADDED, x, y), (want,))
    assert len(program.variants) == 3  # the general one, x's dims of 1, y's dim of 1
    with pytest.raises(CallError, match=r"x_0\*x_1\*x_2 .* is 2 and .* is 5"):
        program(_x(1, 2, 1), _x(5))


def test_addmm_bias_of_length_one(examples_dir: Path, reference: Any) -> None:
    program = dvm.compile(examples_dir / "addmm_relu.mlir")
    x, w, bias = _x(5, 4), _x(4, 6), np.array([0.25], F32)
    assert_matches(program(x, w, bias), (reference.addmm_relu(x, w, bias),))
    assert len(program.variants) == 2


# --------------------------------------------------------------------------
# The specialization cache
# --------------------------------------------------------------------------


@pytest.fixture
def count_specializations(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many times CompiledProgram.specialize ran (a cache miss), as a one-item list."""
    counter = [0]
    original = CompiledProgram.specialize

    def counting(self: CompiledProgram, args: Any) -> Any:
        counter[0] += 1
        return original(self, args)

    monkeypatch.setattr(CompiledProgram, "specialize", counting)
    yield counter


def test_repeated_calls_hit_the_cache(
    examples_dir: Path, reference: Any, count_specializations: list[int]
) -> None:
    program = dvm.compile(examples_dir / "softmax.mlir")
    rng = np.random.default_rng(1)
    shapes = [(2, 5, 128), (3, 1, 128), (0, 4, 128)]
    for rounds in range(4):
        for shape in shapes:
            x = rng.standard_normal(shape).astype(F32)  # new values, same shapes
            assert_matches(program(x), (reference.softmax(x),), str(shape))
        assert len(program.cache) == len(shapes)
        assert count_specializations[0] == len(shapes), f"round {rounds}"
    assert len(program.variants) == 1


def test_dtype_is_part_of_the_key(examples_dir: Path) -> None:
    """A wrong dtype on a shape already cached is still an error."""
    program = dvm.compile(examples_dir / "gelu.mlir")
    program(_x(3, 4))
    with pytest.raises(CallError, match="float64"):
        program(_x(3, 4, dtype=np.float64))
    with pytest.raises(CallError, match=r"argument 0 \(%x\).* got >f4"):
        program(_x(3, 4).astype(">f4"))  # the same kind and size, byte-swapped
    assert len(program.cache) == 1


def _first_shapes(program: CompiledProgram) -> list[tuple[int, ...]]:
    """The shape of the first argument of each cached signature, oldest first."""
    return [key[len(key) // 3] for key in program.cache]  # (types, shapes, dtypes)


def test_lru_eviction(examples_dir: Path, reference: Any, count_specializations: list[int]) -> None:
    program = dvm.compile(examples_dir / "gelu.mlir", cache_size=3)
    shapes = [(1, 1), (2, 3), (5, 7), (0, 4), (13, 2)]
    inputs = {s: _x(*s) for s in [*shapes, (31, 3)]}
    for s in shapes:
        assert_matches(program(inputs[s]), (reference.gelu(inputs[s]),), str(s))
    assert len(program.cache) == 3
    assert _first_shapes(program) == shapes[2:]  # the most recent three
    assert count_specializations[0] == 5

    # a hit makes (5, 7) the most recent, so (0, 4) goes next
    program(inputs[(5, 7)])
    assert count_specializations[0] == 5
    program(inputs[(31, 3)])
    assert _first_shapes(program) == [(13, 2), (5, 7), (31, 3)]

    # an evicted shape is specialized again, and is right
    for s in shapes[:2]:
        assert_matches(program(inputs[s]), (reference.gelu(inputs[s]),), f"{s} after eviction")
    assert count_specializations[0] == 8
    assert _first_shapes(program) == [(31, 3), (1, 1), (2, 3)]
    assert len(program.cache) == 3


def test_default_cache_keeps_many_shapes(examples_dir: Path) -> None:
    program = dvm.compile(examples_dir / "gelu.mlir")
    for n in range(40):
        program(_x(n, 2))
    assert len(program.cache) == 40 <= program.cache_size


# --------------------------------------------------------------------------
# Intermediates in kept memory
# --------------------------------------------------------------------------


def _bert_args(reference: Any, b: int, s: int) -> tuple[Any, ...]:
    _, spec, _ = reference.EXAMPLES["bert_layer.mlir"]
    return tuple(reference.make_inputs(spec, {"B": b, "S": s}, np.random.default_rng(b * s)))


def test_intermediates_reuse_kept_memory(examples_dir: Path, reference: Any) -> None:
    """Launch results that only later launches read (BERT's q, k, v, scores, ...) are
    written into memory kept from the calls before (an arena, taken back as a call
    ends), so a new shape meets pages already mapped; results are new arrays."""
    program = dvm.compile(examples_dir / "bert_layer.mlir")
    variant = program.variants[frozenset()]
    assert variant.places >= 8  # one per such launch (both sides of a choice included)
    kept: list[Any] = []
    for b, s in ((2, 40), (1, 23), (2, 37)):
        args = _bert_args(reference, b, s)
        got = program(*args)
        assert_matches(got, (reference.bert_layer(*args),), f"B={b} S={s}")
        assert len(variant.arenas) == 1  # given back as the call ended
        buffers = variant.arenas[0].buffers
        assert not any(np.shares_memory(got, base) for base in buffers if base is not None)
        if not kept:
            kept = list(buffers)
            assert sum(base is not None for base in kept) >= 6
        else:  # the smaller shapes fit what the first kept
            assert all(base is old for base, old in zip(buffers, kept, strict=True))
    args = _bert_args(reference, 4, 90)  # larger: the memories grow
    assert_matches(program(*args), (reference.bert_layer(*args),), "B=4 S=90")
    grown = variant.arenas[0].buffers
    assert any(base is not old for base, old in zip(grown, kept, strict=True))


def test_a_failed_call_gives_its_arena_back(
    examples_dir: Path, reference: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call that raises between launches still gives its arena back: the next call
    takes it again and is right."""
    program = dvm.compile(examples_dir / "bert_layer.mlir")
    variant = program.variants[frozenset()]
    args = _bert_args(reference, 2, 9)
    program(*args)
    arena = variant.arenas[0]
    run, launches = Kernel.run, [0]

    def failing(self: Kernel, *a: Any) -> list[Any]:
        launches[0] += 1
        if launches[0] == 5:
            raise RuntimeError("a launch failed")
        return run(self, *a)

    monkeypatch.setattr(Kernel, "run", failing)
    with pytest.raises(RuntimeError, match="a launch failed"):
        program(*args)
    monkeypatch.setattr(Kernel, "run", run)
    assert variant.arenas == [arena]
    assert_matches(program(*args), (reference.bert_layer(*args),))
    assert variant.arenas == [arena]


LOOP_OF_TWO_KERNELS = """
func.func @f(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>, %n: index) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<?x?xf32>) {
    %m = tensor.matmul %acc, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    %s = tensor.reduce_max %m {axes = [0], keepdims = true} : tensor<?x?xf32> -> tensor<1x?xf32>
    %next = tensor.sub %m, %s : (tensor<?x?xf32>, tensor<1x?xf32>) -> tensor<?x?xf32>
    scf.yield %next : tensor<?x?xf32>
  }
  func.return %r : tensor<?x?xf32>
}
"""


def test_a_launch_in_a_loop_writes_its_kept_memory_at_every_pass() -> None:
    """In a loop, the matmul's result (read only by the next launch of its pass) is in
    the same kept memory at every pass: the last pass's is dead by then."""
    program = dvm.compile(LOOP_OF_TWO_KERNELS)
    variant = program.variants[frozenset()]
    assert variant.places == 2  # the matmul's two variants (a choice on its K)
    rng = np.random.default_rng(3)
    w = rng.standard_normal((4, 4)).astype(F32) / 2

    def check(x: np.ndarray[Any, Any], n: int) -> None:
        want = x
        for _ in range(n):
            m = want @ w
            want = m - m.max(axis=0, keepdims=True)  # (over the rows: a kernel of its own)
        np.testing.assert_allclose(program(x, w, n), want, rtol=1e-5, atol=1e-5)
        assert len(variant.arenas) == 1  # taken for the call, given back

    for n, rows in enumerate([1, 9, 3, 7], start=1):
        check(rng.standard_normal((rows, 4)).astype(F32), n)
    buffers = list(variant.arenas[0].buffers)
    assert any(base is not None for base in buffers)
    check(rng.standard_normal((6, 4)).astype(F32), 5)  # a new shape, smaller than the largest
    assert all(a is b for a, b in zip(variant.arenas[0].buffers, buffers, strict=True))


def test_a_call_keeps_none_of_its_arrays() -> None:
    """Once a call returns and its caller drops the arguments and results, nothing the
    program keeps for the shape (plans, executables, arenas) holds them: the first call
    (unplanned), the second (planned, inline) and later ones (on the cores), stacked
    launches and a loop's."""
    rng = np.random.default_rng(8)
    weights = [rng.standard_normal((64, 64), dtype=np.float32) for _ in range(3)]
    qkv, loop = dvm.compile(QKV), dvm.compile(LOOP_OF_TWO_KERNELS)
    w = rng.standard_normal((64, 64)).astype(F32) / 8
    for call in range(4):
        x = rng.standard_normal((400, 64), dtype=np.float32)
        results = [*qkv(x, *weights), loop(x, w, 3)]
        alive = [weakref.ref(a) for a in (x, *results)]
        del x, results
        assert [r() is None for r in alive] == [True] * 5, f"call {call}"


# --------------------------------------------------------------------------
# Threads
# --------------------------------------------------------------------------


def test_concurrent_calls(examples_dir: Path, reference: Any) -> None:
    """8 threads, 96 calls over four programs and new shapes: specializing
    a shape while another thread runs or specializes one must be safe."""
    programs = {
        name: dvm.compile(examples_dir / f"{name}.mlir")
        for name in ("layernorm", "softmax", "matmul", "bert_layer")
    }
    rng = np.random.default_rng(7)
    jobs: list[tuple[str, tuple[Any, ...]]] = []
    for i in range(96):
        r, c = (0, 1, 2, 7, 13, 31, 64)[i % 7], (1, 3, 8, 17, 33)[i % 5]
        if i % 8 == 7:  # its intermediates are in kept memory, one arena per call at a time
            jobs.append(("bert_layer", _bert_args(reference, 1 + i % 3, c + r)))
        elif i % 3 == 0:
            w = np.ones(1, F32) if i % 4 == 0 else rng.standard_normal(c).astype(F32)
            jobs.append(("layernorm", (rng.standard_normal((r, c)).astype(F32), w, w)))
        elif i % 3 == 1:
            jobs.append(("softmax", (rng.standard_normal((r % 5, c, 128)).astype(F32),)))
        else:
            a = rng.standard_normal((r, c)).astype(F32)
            jobs.append(("matmul", (a, rng.standard_normal((c, r + 1)).astype(F32))))

    def run(job: tuple[str, tuple[Any, ...]]) -> Any:
        name, args = job
        return programs[name](*args)

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(run, jobs))
    for (name, args), got in zip(jobs, results, strict=True):
        assert_matches(got, (getattr(reference, name)(*args),), f"{name} {args[0].shape}")
    assert len(programs["layernorm"].variants) >= 2  # w of shape (1,), x with one column


# --------------------------------------------------------------------------
# Profiling
# --------------------------------------------------------------------------


def test_profile_reports_each_launch(examples_dir: Path, reference: Any) -> None:
    program = dvm.compile(examples_dir / "gelu.mlir")
    x = _x(37, 53)
    out, stats = program.profile(x)
    assert_matches(out, (reference.gelu(x),))
    assert len(stats) == 1  # one fused kernel
    name, s = stats[0]
    assert name.startswith("gelu")
    assert s.total_instructions > 0
    assert s.instructions.get("tanh", 0) > 0 and s.instructions.get("store", 0) > 0
    # every element is read and written at least once, and not much more
    assert x.nbytes <= s.bytes_read <= 4 * x.nbytes
    assert x.nbytes <= s.bytes_written <= 2 * x.nbytes
    assert s.tiles >= 1 and s.cores >= 1
    assert s.peak_local_memory > 0
    assert s.wall_s >= 0 and s.events is None


def test_profile_follows_the_taken_branch(examples_dir: Path, reference: Any) -> None:
    program = dvm.compile(examples_dir / "if_else_add.mlir")
    for x in (np.abs(_x(6, 5)), -np.abs(_x(6, 5))):
        out, stats = program.profile(x, trace=True)
        assert_matches(out, (reference.if_else_add(x),))
        assert len(stats) >= 2  # the predicate's reduction, then the branch
        ops = set().union(*(s.instructions for _, s in stats))
        assert ("add.rs" if x.sum() > 0 else "sub.rs") in ops
        assert ("sub.rs" if x.sum() > 0 else "add.rs") not in ops
        for _, s in stats:
            assert s.total_instructions > 0
            assert s.events is not None
    # profiling and plain calls share the cache
    assert len(program.cache) == 1


def test_profile_of_an_empty_input(examples_dir: Path) -> None:
    program = dvm.compile(examples_dir / "gelu.mlir")
    out, stats = program.profile(_x(0, 9))
    assert out.shape == (0, 9)
    assert all(s.bytes_read == 0 and s.bytes_written == 0 for _, s in stats)


def test_profile_of_a_matmul(examples_dir: Path) -> None:
    program = dvm.compile(examples_dir / "matmul.mlir")
    a, b = _x(64, 32), _x(32, 48)
    out, stats = program.profile(a, b)
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)
    assert sum(s.total_instructions for _, s in stats) > 0
    read = sum(s.bytes_read for _, s in stats)
    written = sum(s.bytes_written for _, s in stats)
    assert read >= a.nbytes + b.nbytes
    assert written >= out.nbytes


def projection_layernorm(k: int, n: int) -> str:
    """`layernorm(x @ w + b) * g + c` over n static columns."""
    row, col = f"tensor<?x{n}xf32>", "tensor<?x1xf32>"
    return f"""
func.func @proj_ln(%x: tensor<?x{k}xf32>, %w: tensor<{k}x{n}xf32>, %b: tensor<{n}xf32>,
                   %g: tensor<{n}xf32>, %c: tensor<{n}xf32>) -> {row} {{
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %y0 = tensor.matmul %x, %w : (tensor<?x{k}xf32>, tensor<{k}x{n}xf32>) -> {row}
  %y = tensor.add %y0, %b : ({row}, tensor<{n}xf32>) -> {row}
  %mu = tensor.reduce_mean %y {{axes = [1], keepdims = true}} : {row} -> {col}
  %d = tensor.sub %y, %mu : ({row}, {col}) -> {row}
  %sq = tensor.mul %d, %d : ({row}, {row}) -> {row}
  %var = tensor.reduce_mean %sq {{axes = [1], keepdims = true}} : {row} -> {col}
  %ve = tensor.add %var, %eps : ({col}, tensor<f32>) -> {col}
  %rs = tensor.rsqrt %ve : {col}
  %nm = tensor.mul %d, %rs : ({row}, {col}) -> {row}
  %s = tensor.mul %nm, %g : ({row}, tensor<{n}xf32>) -> {row}
  %o = tensor.add %s, %c : ({row}, tensor<{n}xf32>) -> {row}
  func.return %o : {row}
}}"""


@pytest.mark.parametrize("device", ["host", "ascend910b"])
@pytest.mark.parametrize(("k", "n"), [(48, 64), (1000, 512)])
def test_a_projection_and_its_layernorm_are_one_launch(device: str, k: int, n: int) -> None:
    """A matmul whose epilogue reduces its static columns is one mix kernel: its tiles
    hold whole rows (on the small ascend910b preset with K chunked too); it matches
    numpy at any number of rows, unplanned and planned."""
    program = dvm.compile(projection_layernorm(k, n), device=device)
    rng = np.random.default_rng(n)
    for m in (0, 1, 7, 97, 300):
        x = rng.standard_normal((m, k)).astype(np.float32)
        w = (rng.standard_normal((k, n)) / math.sqrt(k)).astype(np.float32)
        b, g, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
        y = x @ w + b
        d = y - y.mean(axis=1, keepdims=True)
        want = d / np.sqrt((d * d).mean(axis=1, keepdims=True) + np.float32(1e-5)) * g + c
        for _ in range(2):  # unplanned, then planned
            np.testing.assert_allclose(program(x, w, b, g, c), want, rtol=1e-4, atol=1e-4)
        _, stats = program.profile(x, w, b, g, c)
        assert [s.instructions.get("mma", 0) > 0 for _, s in stats] == [m > 0]


@pytest.mark.parametrize("n", [1, 3, 64])
def test_reductions_straight_off_a_matmul_in_its_kernel(n: int) -> None:
    """Sums, means and maxima of a matmul's own columns, with nothing between: the
    result varies along the columns (summing it as if it did not counted it n times)."""
    row = f"tensor<?x{n}xf32>"
    program = dvm.compile(f"""
func.func @f(%x: tensor<?x5xf32>, %w: tensor<5x{n}xf32>)
    -> (tensor<?xf32>, tensor<?x1xf32>, {row}) {{
  %y = tensor.matmul %x, %w : (tensor<?x5xf32>, tensor<5x{n}xf32>) -> {row}
  %s = tensor.reduce_sum %y {{axes = [1]}} : {row} -> tensor<?xf32>
  %m = tensor.reduce_mean %y {{axes = [1], keepdims = true}} : {row} -> tensor<?x1xf32>
  %d = tensor.sub %y, %m : ({row}, tensor<?x1xf32>) -> {row}
  func.return %s, %m, %d : tensor<?xf32>, tensor<?x1xf32>, {row}
}}""")
    rng = np.random.default_rng(n)
    for m in (0, 1, 4, 37):
        x, w = _x(m, 5), rng.standard_normal((5, n)).astype(np.float32)
        y = x @ w
        mean = y.mean(axis=1, keepdims=True) if m else np.empty((0, 1), np.float32)
        assert_matches(program(x, w), (y.sum(axis=1), mean, y - mean), f"n={n} m={m}")
        _, stats = program.profile(x, w)
        assert len(stats) == 1


SCORES_SOFTMAX = """
func.func @f(%q: tensor<?x16xf32>, %k: tensor<16x?xf32>) -> tensor<?x?xf32> {
  %s = tensor.matmul %q, %k : (tensor<?x16xf32>, tensor<16x?xf32>) -> tensor<?x?xf32>
  %m = tensor.reduce_max %s {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %d = tensor.sub %s, %m : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %e = tensor.exp %d : tensor<?x?xf32>
  %z = tensor.reduce_sum %e {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %p = tensor.div %e, %z : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  func.return %p : tensor<?x?xf32>
}"""


@pytest.mark.parametrize("device", ["host", "ascend910b"])
def test_scores_and_their_softmax_are_one_launch_when_the_rows_are_short(device: str) -> None:
    """A dynamic number of columns reduced after a matmul: one mix kernel while there
    are at most 512 (a guarded choice), the matmul and the softmax apart beyond."""
    program = dvm.compile(SCORES_SOFTMAX, device=device)
    rng = np.random.default_rng(11)
    for m, n in [(1, 1), (7, 97), (300, 512), (5, 513), (40, 900), (0, 3), (3, 0)]:
        q = rng.standard_normal((m, 16)).astype(np.float32)
        k = rng.standard_normal((16, n)).astype(np.float32)
        s = q @ k
        e = np.exp(s - (s.max(axis=1, keepdims=True) if n else 0))
        want = e / e.sum(axis=1, keepdims=True) if n else e
        for _ in range(2):  # unplanned, then planned
            np.testing.assert_allclose(program(q, k), want, rtol=1e-4, atol=1e-5)
        assert len(program.profile(q, k)[1]) == (1 if n <= 512 else 2), (m, n)


EPILOGUE_LAYOUTS = {
    "transposed result": (
        """
func.func @f(%x: tensor<?x8xf32>, %w: tensor<8x16xf32>) -> tensor<16x?xf32> {
  %y = tensor.matmul %x, %w : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  %t = tensor.transpose %y {perm = [1, 0]} : tensor<?x16xf32> -> tensor<16x?xf32>
  %m = tensor.reduce_max %t {axes = [0], keepdims = true} : tensor<16x?xf32> -> tensor<1x?xf32>
  %d = tensor.sub %t, %m : (tensor<16x?xf32>, tensor<1x?xf32>) -> tensor<16x?xf32>
  func.return %d : tensor<16x?xf32>
}""",
        lambda x, w: (x @ w).T - (x @ w).T.max(axis=0, keepdims=True),
        lambda m: [(m, 8), (8, 16)],
    ),
    "batched": (
        """
func.func @f(%x: tensor<?x?x8xf32>, %w: tensor<8x16xf32>) -> tensor<?x?x16xf32> {
  %y = tensor.matmul %x, %w : (tensor<?x?x8xf32>, tensor<8x16xf32>) -> tensor<?x?x16xf32>
  %s = tensor.reduce_sum %y {axes = [2], keepdims = true} : tensor<?x?x16xf32> -> tensor<?x?x1xf32>
  %d = tensor.div %y, %s : (tensor<?x?x16xf32>, tensor<?x?x1xf32>) -> tensor<?x?x16xf32>
  func.return %d : tensor<?x?x16xf32>
}""",
        lambda x, w: (x @ w) / (x @ w).sum(axis=2, keepdims=True),
        lambda m: [(3, m, 8), (8, 16)],
    ),
    "transpose_b": (
        """
func.func @f(%x: tensor<?x8xf32>, %w: tensor<16x8xf32>) -> tensor<?xf32> {
  %y = tensor.matmul %x, %w {transpose_b = true}
      : (tensor<?x8xf32>, tensor<16x8xf32>) -> tensor<?x16xf32>
  %s = tensor.reduce_mean %y {axes = [1]} : tensor<?x16xf32> -> tensor<?xf32>
  func.return %s : tensor<?xf32>
}""",
        lambda x, w: (x @ w.T).mean(axis=1),
        lambda m: [(m, 8), (16, 8)],
    ),
}


@pytest.mark.parametrize("layout", sorted(EPILOGUE_LAYOUTS))
def test_an_epilogue_reducing_columns_through_layouts(layout: str) -> None:
    """The columns an epilogue reduces, reached through a transpose of the result, a
    batch of matrices, or a transposed operand: one kernel, numpy's answer."""
    source, reference, shapes = EPILOGUE_LAYOUTS[layout]
    program = dvm.compile(source)
    rng = np.random.default_rng(5)
    for m in (1, 5, 200):
        args = [rng.uniform(0.5, 1.5, s).astype(np.float32) for s in shapes(m)]
        for _ in range(2):  # unplanned, then planned
            np.testing.assert_allclose(program(*args), reference(*args), rtol=1e-4, atol=1e-4)
        assert len(program.profile(*args)[1]) == 1


def test_a_static_dim_of_zero_in_the_signature() -> None:
    """An argument declared with a static 0 dim binds like any other."""
    program = dvm.compile("""
func.func @f(%x: tensor<?x5xf32>, %w: tensor<5x0xf32>) -> tensor<?x0xf32> {
  %y = tensor.matmul %x, %w : (tensor<?x5xf32>, tensor<5x0xf32>) -> tensor<?x0xf32>
  func.return %y : tensor<?x0xf32>
}""")
    for m in (0, 3):
        out = program(_x(m, 5), np.ones((5, 0), np.float32))
        assert out.shape == (m, 0) and out.dtype == np.float32
    with pytest.raises(CallError, match="w"):
        program(_x(3, 5), np.ones((5, 1), np.float32))


# --------------------------------------------------------------------------
# Devices
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "file",
    ["layernorm.mlir", "softmax.mlir", "addmm_relu.mlir", "column_stats.mlir", "mmoe.mlir"],
)
def test_ascend910b_device(file: str, examples_dir: Path, reference: Any) -> None:
    name, spec, fn = reference.EXAMPLES[file]
    program = compiled(examples_dir / file, name, "ascend910b")
    assert program.device == "ascend910b"
    symbols = symbols_of(spec)
    for i, draw in enumerate([1, 0, 7, 97, 13]):
        dims = {s: draw if k == i % len(symbols) else 5 for k, s in enumerate(symbols)}
        args = reference.make_inputs(spec, dims, np.random.default_rng(i))
        assert_matches(program(*args), run_reference(file, fn, args), f"{file} {dims}")


def test_ascend910b_tiles_differently(examples_dir: Path) -> None:
    """The preset is really used: its small local memory gives more tiles."""
    x = _x(256, 1000)
    host = dvm.compile(examples_dir / "gelu.mlir").profile(x)[1]
    ascend = dvm.compile(examples_dir / "gelu.mlir", device="ascend910b").profile(x)[1]
    assert sum(s.tiles for _, s in ascend) > sum(s.tiles for _, s in host)


def test_unknown_device_is_a_clear_error(examples_dir: Path) -> None:
    with pytest.raises(DvmError) as raised:
        dvm.compile(examples_dir / "gelu.mlir", device="tpu-v9")
    message = str(raised.value)
    assert "tpu-v9" in message and "host" in message and "ascend910b" in message


def test_a_fallback_kernel_is_prepared_at_its_first_launch(
    examples_dir: Path, reference: Any
) -> None:
    """LayerNorm is a choice: whole rows in local memory, or else rows in chunks. The
    chunked kernel, for rows too long, is not prepared by the compile (no fast path
    or unplanned launch code yet), and its first launch prepares it and is right."""
    built: dict[str, Kernel] = {}
    real = Kernel.from_plain

    def spy(*args: Any, **kwargs: Any) -> Kernel:
        kernel = real(*args, **kwargs)
        built[kernel.name] = kernel
        return kernel

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Kernel, "from_plain", spy)
        program = dvm.compile(examples_dir / "layernorm.mlir", cache=False)  # (a compile)

    def ready(kernel: Kernel) -> bool:
        static = kernel.specializer.static
        return bool(static.fast_paths) or bool(static.unplanned)

    prepared = {name: ready(kernel) for name, kernel in built.items()}
    assert prepared == {"layernorm_k0_rows": True, "layernorm_k0": False}
    cols = dvm.vm.DeviceSpec.host().local_memory_bytes // 4 + 1  # no row fits on any host
    x, w, b = _x(2, cols), _x(cols), _x(cols)
    assert_matches(program(x, w, b), (reference.layernorm(x, w, b),), f"rows of {cols}")
    assert ready(built["layernorm_k0"])


def test_a_compile_leaves_each_launcher_to_its_first_launch(
    examples_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A compile makes each kernel's fast path, not its unplanned launcher: a kernel's
    first launch makes that, once (a new shape makes none), and the kernel of the
    branch not taken never does. What the launches compute is unchanged."""
    program = dvm.compile(examples_dir / "if_else_add.mlir", cache=False)
    kernels = program.variants[frozenset()].kernels

    def with_launcher() -> set[str]:
        return {n for n, k in kernels.items() if k.specializer.static.unplanned}

    assert with_launcher() == set()
    x = np.ones((3, 4), np.float32)
    np.testing.assert_array_equal(program(x), 3 * x)  # x + 1 + x: the `then` branch
    taken = with_launcher()
    branches = {n for n in kernels if not n.endswith("_rows") and n != "if_else_add_k0"}
    assert len(taken & branches) == 1 and len(taken) == 2
    made: list[object] = []
    unplanned = importlib.import_module("dvm.vm.unplanned")
    launcher = unplanned.Launcher
    monkeypatch.setattr(unplanned, "Launcher", lambda *a: made.append(a) or launcher(*a))
    np.testing.assert_array_equal(program(np.ones((5, 2), np.float32)), np.full((5, 2), 3.0))
    assert made == []  # a new shape of the same branch: no code made
    np.testing.assert_array_equal(program(-x), -3 * x)  # x - 1 + x: the other branch
    assert len(made) == 1 and with_launcher() == taken | branches


RANK_9 = """\
func.func @f(%x: tensor<?x?x?x?x?x?x?x?x?xf32>) -> tensor<?x?x?x?x?x?x?x?x?xf32> {
  %y = tensor.exp %x : tensor<?x?x?x?x?x?x?x?x?xf32>
  func.return %y : tensor<?x?x?x?x?x?x?x?x?xf32>
}
"""


def test_rank_above_the_vm_maximum_is_a_compile_error() -> None:
    """A kernel over the VM's maximum rank is refused when compiled, naming the op,
    not when the runtime loads its bytecode; the reference interpreter runs it."""
    with pytest.raises(
        ProgramError, match=r"%y = tensor\.exp: rank 9 exceeds the VM's maximum rank 8"
    ):
        dvm.compile(RANK_9)
    x = np.full((1, 2, 1, 2, 1, 2, 1, 2, 1), 0.5, np.float32)
    np.testing.assert_array_equal(dvm.interpret(RANK_9, x), np.exp(x))


BAD_PROGRAMS = {
    "undefined value": (
        "  %y = tensor.exp %q : tensor<?xf32>",
        "tensor<?xf32>",
        ParseError,
        "bad.mlir:3:19: error: use of undefined value %q",
    ),
    "a verifier's error": (
        "  %y = tensor.reduce_sum %x {axes = [1]} : tensor<?xf32> -> tensor<?xf32>",
        "tensor<?xf32>",
        VerifyException,
        "bad.mlir:3:3: error: 'tensor.reduce_sum' axis 1 is out of range",
    ),
    "a pass's error": (
        "  %y = tensor.broadcast_to %x to [1, 1, 1, 1, 1, 1, 1, 1, %n]"
        " : tensor<?xf32> -> tensor<1x1x1x1x1x1x1x1x?xf32>",
        "tensor<1x1x1x1x1x1x1x1x?xf32>",
        ProgramError,
        "bad.mlir:3:3: %y = tensor.broadcast_to: rank 9 exceeds",
    ),
}


@pytest.mark.parametrize("kind", list(BAD_PROGRAMS))
def test_compile_errors_name_the_place_in_the_file(kind: str, tmp_path: Path) -> None:
    """Whatever finds a program bad (the parser, a verifier, a pass), `dvm.compile`
    of a file says where: `file:line:col`, as `dvm-opt` does."""
    line, result, error, message = BAD_PROGRAMS[kind]
    path = tmp_path / "bad.mlir"
    path.write_text(
        f"func.func @f(%x: tensor<?xf32>, %n: index) -> {result} {{\n"
        "  %c = arith.constant 0 : index\n"
        f"{line}\n"
        f"  func.return %y : {result}\n"
        "}\n"
    )
    with pytest.raises(error) as raised:
        dvm.compile(path)
    assert str(raised.value).startswith(str(tmp_path / message)), raised.value


AT_RANK_8 = """\
func.func @f(%a: tensor<2x3x2x1x2x3x?x4xf32>, %b: tensor<2x3x2x1x2x3x4x5xf32>)
    -> (tensor<2x3x2x1x2x3x?x5xf32>, tensor<2x3x2x1x2x3x?x4xf32>) {
  %m = tensor.matmul %a, %b : (tensor<2x3x2x1x2x3x?x4xf32>, tensor<2x3x2x1x2x3x4x5xf32>)
      -> tensor<2x3x2x1x2x3x?x5xf32>
  %y = tensor.exp %m : tensor<2x3x2x1x2x3x?x5xf32>
  %c6 = arith.constant 6 : index
  %n = tensor.dim %a, %c6 : tensor<2x3x2x1x2x3x?x4xf32>
  %e = tensor.expand_shape %a [[0], [1], [2], [3], [4], [5], [6], [7, 8]]
      output_shape [2, 3, 2, 1, 2, 3, %n, 4, 1]
      : tensor<2x3x2x1x2x3x?x4xf32> into tensor<2x3x2x1x2x3x?x4x1xf32>
  %g = tensor.neg %e : tensor<2x3x2x1x2x3x?x4x1xf32>
  %z = tensor.collapse_shape %g [[0], [1], [2], [3], [4], [5], [6], [7, 8]]
      : tensor<2x3x2x1x2x3x?x4x1xf32> into tensor<2x3x2x1x2x3x?x4xf32>
  func.return %y, %z : tensor<2x3x2x1x2x3x?x5xf32>, tensor<2x3x2x1x2x3x?x4xf32>
}
"""


def test_kernels_at_the_vm_maximum_rank_run() -> None:
    """At the limit: a rank-8 batched matmul with an epilogue (its ninth domain axis,
    K, is no tile dim) and a rank-9 value whose unit dim spans no kernel axis."""
    program = dvm.compile(AT_RANK_8)
    rng = np.random.default_rng(0)
    a = rng.random((2, 3, 2, 1, 2, 3, 7, 4), np.float32)
    b = rng.random((2, 3, 2, 1, 2, 3, 4, 5), np.float32)
    y, z = program(a, b)
    np.testing.assert_allclose(y, np.exp(a @ b), rtol=1e-5)
    np.testing.assert_array_equal(z, -a)


@pytest.mark.parametrize("divisor", [3, 7, 16, 49, 97, 944, 3776])
def test_host_expressions_divide_exactly(divisor: int) -> None:
    """The runtime's generated host expressions (output sizes, guards, fusion choices)
    take a floor or ceiling of a quotient by integer division: in floats, 49 * (1/49)
    is below 1, and large dims lose digits."""
    import sympy

    from dvm.codegen import python_function

    x, y = sympy.symbols("x y", integer=True, nonnegative=True)
    exprs = [
        sympy.floor(x / divisor),
        sympy.ceiling(x / divisor),
        sympy.Max(1, sympy.floor((x + y) / (2 * divisor))),
        sympy.ceiling(sympy.ceiling(x / divisor) / (sympy.Max(1, y) + 1)),
        # a quotient deep inside Max and Min, as tile sizes nest them
        sympy.Min(x + 1, sympy.Max(2, sympy.floor(divisor * 16 / sympy.Max(1, y + 16)))),
    ]
    f = python_function(exprs, ["x", "y"])

    def ceil(p: int, q: int) -> int:
        return -(-p // q)

    for a in [*range(0, 3 * divisor + 2), 2**60 + 1, 2**62 - 3]:
        for b in (0, 5):
            want = (
                a // divisor,
                ceil(a, divisor),
                max(1, (a + b) // (2 * divisor)),
                ceil(ceil(a, divisor), max(1, b) + 1),
                min(a + 1, max(2, divisor * 16 // max(1, b + 16))),
            )
            assert f(a, b) == want, (a, b)


def test_host_expressions_compute_a_shared_subexpression_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A tile size that several expressions use is one temporary, and naming it never
    evaluates a Max or Min again (sympy's own `cse` did, comparing their arguments)."""
    import sympy

    from dvm.codegen import common_subexpressions, python_function

    x, y = sympy.symbols("x y", integer=True, nonnegative=True)
    tile = sympy.Min(x, sympy.Max(16, y + 1))
    exprs = [2 * tile + 1, sympy.Max(tile, y) - 3, x]
    evaluated: list[Any] = []
    find = sympy.Max._find_localzeros  # type: ignore[attr-defined]
    monkeypatch.setattr(sympy.Max, "_find_localzeros", lambda *a: evaluated.append(a) or find(*a))
    shared, reduced = common_subexpressions(exprs)
    assert [e for _, e in shared] == [tile] and not evaluated
    assert reduced[2] == x
    f = python_function(exprs, ["x", "y"])
    for a, b in [(0, 0), (5, 40), (100, 3), (100, 200)]:
        t = min(a, max(16, b + 1))
        assert f(a, b) == (2 * t + 1, max(t, b) - 3, a)


def test_a_traceback_through_host_expressions_shows_their_line() -> None:
    """Generated host code is registered for tracebacks under what it is: an error
    raised inside it shows the generated line."""
    import traceback

    import sympy

    from dvm.codegen import python_function

    x, y = sympy.symbols("x y", integer=True, nonnegative=True)
    f = python_function([sympy.floor(x / y)], ["x", "y"], "ratio: @main")
    assert f(7, 2) == (3,) and f(1, 0) == (0,)  # (a quotient by 0 is 0, as in the VM)
    with pytest.raises(TypeError) as e:
        f(None, 2)
    shown = "".join(traceback.format_exception(e.value))
    assert "<dvm ratio: @main #" in shown
    assert "return (int((((x) // (y)) if (y) else 0)), )" in shown
