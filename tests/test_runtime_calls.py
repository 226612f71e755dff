"""What one call of a compiled program gives back, refuses and leaves behind.

What is promised and checked here:

- results are arrays of their own: a returned constant (directly, through
  `scf.if` or a loop that runs no pass), an argument, or a value returned twice
  shares memory with nothing else, so writing into a result changes no later call
  (`dvm.interpret` promises the same);
- a call on empty tensors costs the same whatever the size of their other dims:
  a launch with no output element does not run, and a reduction's loop over the
  chunks of an empty axis makes no pass (counted in Python lines, which are
  deterministic where a time is not);
- a call whose sizes are more than an array can address, than the memory holds or
  than the VM runs raises a `CallError` naming the arguments, the sizes and the
  bytes needed (a negative dim made from an `index` argument, a `ShapeError`), and
  the program runs the next call as before;
- a numpy matrix or masked array is a `CallError` (a plain array's kernels would
  index the one wrongly and run past the other's mask), a memory map is an array;
- scalar arguments are checked and converted at every call, cached signature or not:
  an `index` beyond int64, an i8 beyond i8 is a `CallError`, a scalar result has
  its declared type; an out-of-range `tensor.dim` index and a loop step below 1
  are `ExecutionError`s, as in `dvm.interpret`;
- a kernel's launches at a small shape run unplanned until they have run the plan
  patience's worth of instructions, and only then plan (a shape met at a few calls
  never pays for planning); a plan's inputs are checked once, as it is made;
- a broadcast's side that is 1 at a call broadcasts, as in numpy and `dvm.interpret`,
  whatever expression of argument dims and `index` arguments it is (a slice's
  `i + 1`, a concat's `x_0 + y_0`): the call takes a variant with those fixed;
- arguments may be given by their names (`program(x, n=3)`), as to a Python function;
  an unknown, repeated or missing one is a `CallError` naming it;
- a program that is one launch of its arguments runs a known signature's calls as
  one closure (`BoundVariant.direct`), with the results and errors of the general
  path: a new array at each call, an input in another layout copied, not changed;
- calls leave no garbage for the cyclic collector, even when a kernel's cache of
  launch plans drops its specializations, and the process's first compile froze
  what was alive then (the collector's full collections skip the libraries).
"""

from __future__ import annotations

import gc
import linecache
import re
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_conformance import as_tuple

import dvm
import dvm.vm as vm
from dvm import launches, runtime
from dvm.errors import CallError, DvmError, ExecutionError, ShapeError
from dvm.variant import Route

CONSTANT_AND_SUM = """
func.func @main(%a: tensor<?x3xf32>) -> (tensor<3xf32>, tensor<?x3xf32>) {
  %k = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %e = tensor.add %a, %k : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  func.return %k, %e : tensor<3xf32>, tensor<?x3xf32>
}
"""

CONSTANT_THROUGH_IF = """
func.func @main(%a: tensor<?x3xf32>, %c: i1) -> (tensor<3xf32>, tensor<?x3xf32>) {
  %k = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %r = scf.if %c -> (tensor<3xf32>) {
    scf.yield %k : tensor<3xf32>
  } else {
    %m = tensor.mul %k, %k : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    scf.yield %m : tensor<3xf32>
  }
  %e = tensor.add %a, %k : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  func.return %r, %e : tensor<3xf32>, tensor<?x3xf32>
}
"""

CONSTANT_THROUGH_A_LOOP = """
func.func @main(%a: tensor<?x3xf32>, %n: index) -> (tensor<3xf32>, tensor<3xf32>, tensor<?x3xf32>) {
  %k = arith.constant dense<2.5> : tensor<3xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %k) -> (tensor<3xf32>) {
    %y = tensor.add %x, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    scf.yield %y : tensor<3xf32>
  }
  %e = tensor.add %a, %k : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  func.return %r, %k, %e : tensor<3xf32>, tensor<3xf32>, tensor<?x3xf32>
}
"""

ONE_VALUE_TWICE = """
func.func @main(%a: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>) {
  %e = tensor.exp %a : tensor<?x3xf32>
  func.return %e, %e, %a : tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>
}
"""

ALIASING = [
    pytest.param(CONSTANT_AND_SUM, lambda a: (a,), id="constant"),
    pytest.param(CONSTANT_THROUGH_IF, lambda a: (a, np.bool_(True)), id="constant-through-if"),
    pytest.param(CONSTANT_THROUGH_A_LOOP, lambda a: (a, 0), id="constant-through-a-loop"),
    pytest.param(ONE_VALUE_TWICE, lambda a: (a,), id="one-value-twice-and-an-argument"),
]


@pytest.mark.parametrize("run", ["compile", "interpret"])
@pytest.mark.parametrize(("text", "make_args"), ALIASING)
def test_results_share_memory_with_nothing(
    text: str, make_args: Callable[[np.ndarray], tuple[Any, ...]], run: str
) -> None:
    """Writing into every result of a call changes neither the arguments nor the
    results of the next call, and no result shares memory with another."""
    call = dvm.compile(text) if run == "compile" else partial(dvm.interpret, text)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    args = make_args(a)
    first = call(*args)
    want = [r.copy() for r in first]
    for i, r in enumerate(first):
        assert r.flags.writeable, f"result {i} is read-only"
        others = [*first[:i], *first[i + 1 :], a]
        assert not any(np.shares_memory(r, o) for o in others), f"result {i} is shared"
        r[...] = 100
    np.testing.assert_array_equal(a, np.arange(6, dtype=np.float32).reshape(2, 3))
    for i, (got, expected) in enumerate(zip(call(*args), want, strict=True)):
        np.testing.assert_array_equal(got, expected, err_msg=f"result {i} of the next call")


EMPTY_ROWS = [
    pytest.param(
        "%t = tensor.tanh %x : tensor<?x?xf32>",
        "%t : tensor<?x?xf32>",
        1 << 16,
        id="elementwise",
    ),
    pytest.param(
        "%t = tensor.reduce_sum %x {axes = [0, 1]} : tensor<?x?xf32> -> tensor<f32>",
        "%t : tensor<f32>",
        1 << 30,  # row chunks of about 200,000: 5,000 of them
        id="sum-of-all",
    ),
    pytest.param(
        """%zero = arith.constant dense<0.0> : tensor<f32>
  %pos = tensor.gt %x, %zero : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xi1>
  %p = tensor.select %pos, %x, %zero
      : (tensor<?x?xi1>, tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %c = tensor.reduce_sum %p {axes = [0]} : tensor<?x?xf32> -> tensor<?xf32>
  %m = tensor.reduce_max %x {axes = [0]} : tensor<?x?xf32> -> tensor<?xf32>""",
        "%c, %m : tensor<?xf32>, tensor<?xf32>",
        1 << 20,
        id="column-stats",
    ),
]
"""Programs of %x run on (rows, 0): their body, what they return and many rows."""


@pytest.mark.parametrize(("body", "returned", "many"), EMPTY_ROWS)
def test_calls_on_empty_tensors_cost_the_same_at_any_size(
    body: str,
    returned: str,
    many: int,
    traced_lines: Callable[..., int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first and second calls at `many` rows run as many Python lines as at 64, once
    the one-time costs are paid (at twice as many: a choice may take another kernel,
    which makes its fast path at once here rather than walk the VM's tables for its
    first shapes)."""
    monkeypatch.setattr(launches, "FAST_PATH_WALKS", 0)
    types = returned.split(" : ")[1]
    text = f"""func.func @main(%x: tensor<?x?xf32>) -> ({types}) {{
  {body}
  func.return {returned}
}}"""
    program = dvm.compile(text)
    counts = []
    for rows in (128, 2 * many, 64, many):
        x = np.empty((rows, 0), np.float32)
        counts.append([traced_lines(partial(program, x)) for _ in range(2)])
        got, want = program(x), dvm.interpret(text, x)
        for i, (r, w) in enumerate(zip(as_tuple(got), as_tuple(want), strict=True)):
            np.testing.assert_array_equal(r, w, err_msg=f"result {i} at {rows} rows")
    # (planning may meet one more tile class: a tail of row chunks)
    assert all(big <= 1.2 * few for few, big in zip(counts[2], counts[3], strict=True)), counts


MATMUL = """func.func @mm(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = tensor.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %c : tensor<?x?xf32>
}"""

SUM_OF_A_BROADCAST = """func.func @s(%x: tensor<f32>, %n: index) -> tensor<f32> {
  %b = tensor.broadcast_to %x to [%n, %n] : tensor<f32> -> tensor<?x?xf32>
  %s = tensor.reduce_sum %b {axes = [0, 1]} : tensor<?x?xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}"""


def _empty_rows(m: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.empty((m, 0), np.float32), np.empty((0, n), np.float32)


RETURNED_ARGUMENT = """func.func @id(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  func.return %x : tensor<?x?xf32>
}
"""
HUGE_BROADCAST = np.broadcast_to(np.float32(0), (1 << 24, 1 << 22))
"""A 256 TiB array of one element: its copy is beyond the address space of any process here."""

TOO_LARGE = [
    pytest.param(  # a returned argument is copied
        RETURNED_ARGUMENT,
        (HUGE_BROADCAST,),
        CallError,
        ["@id(%x: (16777216, 4194304) float32)", "out of memory"],
        id="uncopyable-argument",
    ),
    pytest.param(
        MATMUL,
        _empty_rows(1 << 32, 1 << 32),
        CallError,
        ["%a: (4294967296, 0) float32", "(4294967296, 4294967296)", "73786976294838206464 bytes"],
        id="unaddressable-result",
    ),
    pytest.param(  # 256 TiB: beyond the address space of any process here
        MATMUL,
        _empty_rows(1 << 24, 1 << 22),
        CallError,
        ["%b: (0, 4194304) float32", "(16777216, 4194304)", "281474976710656 bytes (256 TiB)"],
        id="unallocatable-result",
    ),
    pytest.param(
        SUM_OF_A_BROADCAST,
        (np.asarray(np.float32(1)), 1 << 28),
        CallError,
        ["%n = 268435456", "too many steps"],
        id="beyond-the-work-bound",
    ),
    pytest.param(
        SUM_OF_A_BROADCAST,
        (np.asarray(np.float32(1)), 1 << 32),
        CallError,
        ["%n = 4294967296", "view too large", "(4294967296, 4294967296)"],
        id="unaddressable-view",
    ),
    pytest.param(
        SUM_OF_A_BROADCAST,
        (np.asarray(np.float32(1)), -3),
        ShapeError,
        ["negative", "-3"],
        id="negative-dim",
    ),
]


@pytest.mark.parametrize(("text", "args", "kind", "names"), TOO_LARGE)
def test_sizes_beyond_the_machine_are_a_clear_error(
    text: str, args: tuple[Any, ...], kind: type[DvmError], names: list[str]
) -> None:
    program = dvm.compile(text)
    with pytest.raises(kind) as raised:
        program(*args)
    message = str(raised.value)
    assert "\n" not in message and "byte " not in message, message
    for name in names:
        assert name in message, f"{name!r} not in {message!r}"
    small = [a[:2, :2] if isinstance(a, np.ndarray) and a.ndim else a for a in args]
    small = [2 if isinstance(a, int) else a for a in small]
    got, want = program(*small), dvm.interpret(text, *small)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_the_interpreter_says_a_result_is_beyond_the_memory() -> None:
    with pytest.raises(CallError, match=r"@id\(%x: \(16777216, 4194304\) float32\): out of memory"):
        dvm.interpret(RETURNED_ARGUMENT, HUGE_BROADCAST)


SCALARS = """func.func @f(%x: tensor<?xf32>, %lo: index, %k: i8, %d: index, %step: index)
    -> (tensor<?xf32>, i8, index) {
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %lo to %c3 step %step iter_args(%a = %x) -> (tensor<?xf32>) {
    %b = tensor.add %a, %a : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    scf.yield %b : tensor<?xf32>
  }
  %n = tensor.dim %x, %d : tensor<?xf32>
  func.return %r, %k, %n : tensor<?xf32>, i8, index
}"""
"""Scalars as a loop's lower bound and step, a returned i8 and a dim's index."""

BAD_SCALARS = [
    pytest.param({"lo": 2**63 + 2}, CallError, "%lo): 9223372036854775810 is outside index"),
    pytest.param({"lo": 2**100}, CallError, "1267650600228229401496703205376 is outside index"),
    pytest.param({"lo": -(2**63) - 1}, CallError, "-9223372036854775809 is outside index"),
    pytest.param({"lo": np.uint64(2**64 - 1)}, CallError, "18446744073709551615 is outside"),
    pytest.param({"lo": 1.0}, CallError, "expected an int for index, got float"),
    pytest.param({"lo": np.bool_(True)}, CallError, "expected an int for index, got bool"),
    pytest.param({"k": 128}, CallError, "%k): 128 is outside i8 (-128 .. 127)"),
    pytest.param({"k": np.int64(-129)}, CallError, "-129 is outside i8"),
    pytest.param({"d": 1}, ExecutionError, "tensor.dim: index 1 is out of range for rank 1"),
    pytest.param({"d": -1}, ExecutionError, "tensor.dim: index -1 is out of range"),
    pytest.param({"step": 0}, ExecutionError, "scf.for: step must be positive, got 0"),
]


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")  # np.matrix
def test_array_subclasses_that_mean_otherwise_are_refused(tmp_path: Path) -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.ones((4, 2), np.float32)
    mapped = np.memmap(tmp_path / "a.bin", np.float32, "w+", shape=(3, 4))
    mapped[...] = a
    for run in (dvm.compile(MATMUL), partial(dvm.interpret, MATMUL)):
        for given in (np.asmatrix(a), np.ma.masked_array(a, mask=a > 5)):
            with pytest.raises(CallError, match=r"@mm argument 0 \(%a\): expected a plain numpy"):
                run(given, b)
        np.testing.assert_allclose(run(mapped, b), a @ b)


@pytest.mark.parametrize("run", ["compile", "interpret"])
@pytest.mark.parametrize(("bad", "kind", "message"), BAD_SCALARS)
def test_scalar_arguments_are_checked_at_every_call(
    bad: dict[str, Any], kind: type[DvmError], message: str, run: str
) -> None:
    """A bad value is refused on the first call at its signature and on a cached one
    (a good call with scalars of the same types came first)."""
    call = dvm.compile(SCALARS) if run == "compile" else partial(dvm.interpret, SCALARS)
    x = np.arange(4, dtype=np.float32)
    good: dict[str, Any] = {"lo": 0, "k": np.int8(-7), "d": 0, "step": 1}
    r, k, n = call(x, *good.values())
    np.testing.assert_array_equal(r, 8 * x)
    assert (type(k), k, type(n), n) == (np.int8, -7, int, 4)
    values = {**good, **bad}
    with pytest.raises(kind, match=re.escape(message)):
        call(x, *values.values())
    if any(isinstance(v, float | np.bool_) for v in bad.values()):
        return  # no good value of that type
    call(x, *[type(v)(good[name]) for name, v in values.items()])  # the signature, cached
    with pytest.raises(kind, match=re.escape(message)):
        call(x, *values.values())


ROW_STATS = """func.func @f(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>) {
  %e = tensor.exp %x : tensor<?x?xf32>
  %s = tensor.reduce_sum %e {axes = [1]} : tensor<?x?xf32> -> tensor<?xf32>
  func.return %e, %s : tensor<?x?xf32>, tensor<?xf32>
}"""


@pytest.mark.usefixtures("young_heap")
def test_calls_leave_no_cyclic_garbage(monkeypatch: pytest.MonkeyPatch) -> None:
    """New shapes, each called twice (the second call plans the launch and binds it to
    the cores), while the kernel keeps only four plans: every dropped specialization is
    freed at once, by reference counting."""
    monkeypatch.setattr(launches, "MAX_KERNEL_PLANS", 4)
    program = dvm.compile(ROW_STATS)
    assert gc.get_freeze_count() > 0  # the process's first compile froze what was alive
    rng = np.random.default_rng(5)
    program(rng.standard_normal((3, 4), dtype=np.float32))  # one-time costs
    gc.collect()
    gc.disable()
    try:
        for rows in range(40, 52):
            x = rng.standard_normal((rows, 300), dtype=np.float32)
            for _ in range(2):
                _, s = program(x)
            np.testing.assert_allclose(s, np.exp(x).sum(axis=1), rtol=1e-5)
            assert gc.collect() == 0, f"{rows} rows"
    finally:
        gc.enable()


def generated_sources() -> list[str]:
    """The filenames of the generated code whose source `linecache` holds."""
    return [name for name in linecache.cache if name.startswith("<dvm ")]


@pytest.mark.usefixtures("young_heap")
def test_a_dropped_program_takes_its_generated_sources_along() -> None:
    """What a compile generates (guards, output sizes, the argument binder; the VM's
    fast path and unplanned launch) is named after its function or kernel, and
    its source, kept for tracebacks, goes when the program is dropped: compiling many
    programs does not grow `linecache`."""
    x = np.random.default_rng(6).standard_normal((6, 5), dtype=np.float32)
    # (compiles, not compile cache hits, whatever DVM_CACHE says: a hit makes its
    # kernels' fast paths later)
    first = dvm.compile(ROW_STATS, cache=False)  # (the first compile freezes its program)
    for _ in range(2):  # (and the first planned launch makes the VM's call template)
        first(x)
    del first
    gc.collect()
    before = set(generated_sources())
    for _ in range(3):
        program = dvm.compile(ROW_STATS, cache=False)
        for _ in range(2):  # the second call plans the launch and binds it
            program(x)
        made = {name.rsplit(" #", 1)[0] for name in set(generated_sources()) - before}
        assert {"<dvm argument binder: @f", "<dvm fast path: f_k0_rows"} <= made, made
        del program
        gc.collect()  # (generated functions and their namespaces hold each other)
        assert set(generated_sources()) <= before


def test_a_shape_called_a_few_times_is_never_planned(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runtime's plan patience: a kernel's launches at a small shape run unplanned
    until they have run PLAN_PATIENCE times its program's instructions, then the next
    call plans them (a shape met at a few calls never pays for planning); the results
    are right at every call. (The suite otherwise plans at the second call: conftest.)"""
    monkeypatch.setattr(launches, "PLAN_PATIENCE", 4)
    program = dvm.compile(ROW_STATS)
    x = np.random.default_rng(8).standard_normal((5, 7), dtype=np.float32)
    planned = []
    for _ in range(8):
        e, s = program(x)
        np.testing.assert_allclose(e, np.exp(x), rtol=1e-6)
        np.testing.assert_allclose(s, np.exp(x).sum(axis=1), rtol=1e-5)
        kernels = program.variants[frozenset()].kernels.values()
        specs = [spec for k in kernels for _, spec, _ in k.plans.values()]
        assert specs and all(spec.plan_after == 4 * len(spec.program.code) for spec in specs)
        planned.append([spec.planned for spec in specs])
        # planned only once its unplanned launches have run the price
        assert all(spec.walked >= spec.plan_after for spec in specs if spec.planned)
    assert not any(planned[1]) and all(planned[-1]), planned


def test_a_kernel_checks_its_inputs_once_per_plan() -> None:
    """A kernel's plans are keyed by its inputs' shapes and dtypes, and a new plan's
    inputs are checked against its program (`vm.check_inputs`, the launch's own
    messages): an input of another dtype, or not in C order at a new shape, is a
    LaunchError naming it and leaves no plan, so a plan's launches, which check no
    array, only ever meet the arrays it was made for."""
    program = dvm.compile(EXP)
    x = np.random.default_rng(9).standard_normal((4, 6), dtype=np.float32)
    program(x)
    (kernel,) = program.variants[frozenset()].kernels.values()
    plans = dict(kernel.plans)
    for wrong, message in [
        (x.astype(np.float64), r"a0: expected f32\[4, 6\], got float64\[4, 6\]"),
        (x.astype(x.dtype.newbyteorder()), r"a0: expected f32\[4, 6\], got >f4\[4, 6\]"),
    ]:
        with pytest.raises(vm.LaunchError, match=message):
            kernel.run([wrong], launches.Call({}))
        assert kernel.plans == plans
    fortran = np.asfortranarray(np.ones((5, 7), np.float32))
    with pytest.raises(vm.LaunchError, match="a0: array must be C-contiguous"):
        kernel.run([fortran], launches.Call({}))
    assert kernel.plans == plans
    (e,) = kernel.run([x], launches.Call({}))
    np.testing.assert_allclose(e, np.exp(x), rtol=1e-6)


EXP = """func.func @f(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %e = tensor.exp %x : tensor<?x?xf32>
  func.return %e : tensor<?x?xf32>
}"""


SIDES_OF_ONE = """
func.func @main(%x: tensor<?xf32>, %y: tensor<?xf32>, %z: tensor<?xf32>, %i: index)
    -> (tensor<?xf32>, tensor<?xf32>) {
  %c1 = arith.constant 1 : index
  %n = arith.addi %i, %c1 : index
  %head = tensor.extract_slice %x[0] [%n] [1] : tensor<?xf32> to tensor<?xf32>
  %a = tensor.add %head, %z : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %both = tensor.concat dim(0) %x, %y : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  %b = tensor.mul %both, %z : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %a, %b : tensor<?xf32>, tensor<?xf32>
}
"""


def test_a_side_of_1_of_any_expression_broadcasts() -> None:
    """`i + 1` (an index argument's) and `x_0 + y_0` (a concat's) are 1 at some calls:
    there they broadcast against z, as in numpy and `dvm.interpret`; where they are
    neither 1 nor z's length, both raise (the program its guard's CallError)."""
    program = dvm.compile(SIDES_OF_ONE, cache=False)
    rng = np.random.default_rng(5)
    calls = [(5, 0, 5, 4), (1, 0, 5, 0), (5, 0, 5, 0), (2, 3, 5, 0), (3, 2, 1, 0), (6, 0, 6, 5)]
    for nx, ny, nz, i in calls * 2:
        x, y, z = (rng.standard_normal(n).astype(np.float32) for n in (nx, ny, nz))
        want = (x[: i + 1] + z, np.concatenate([x, y]) * z)
        for run in (program, partial(dvm.interpret, SIDES_OF_ONE)):
            for got, expected in zip(as_tuple(run(x, y, z, i)), want, strict=True):
                np.testing.assert_array_equal(got, expected, err_msg=f"{(nx, ny, nz, i)}")
    x, y, z = np.ones(3, np.float32), np.ones(2, np.float32), np.ones(5, np.float32)
    with pytest.raises(CallError, match=r"i \+ 1 is 2 and axis 0 of %z \(z_0\) is 5"):
        program(x, y, z, 1)
    with pytest.raises(DvmError, match="broadcast"):
        dvm.interpret(SIDES_OF_ONE, x, y, z, 1)


TAIL_PLUS_Z = """
func.func @main(%x: tensor<?xf32>, %z: tensor<?xf32>, %i: index) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %length = arith.subi %n, %i : index
  %tail = tensor.extract_slice %x[%i] [%length] [1] : tensor<?xf32> to tensor<?xf32>
  %r = tensor.add %tail, %z : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}
"""


def test_variants_with_fixed_values_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tail `x[i:]` of length 1 at every call, with x's length changing: each call
    takes a variant with x_0 and i fixed; the program keeps the last
    `MAX_FIXED_VARIANTS` of them (and the generic one), and a call whose variant was
    dropped builds it again."""
    monkeypatch.setattr(runtime, "MAX_FIXED_VARIANTS", 2)
    program = dvm.compile(TAIL_PLUS_Z, cache=False)
    rng = np.random.default_rng(8)
    z = rng.standard_normal(3).astype(np.float32)
    for n in (4, 5, 6, 7, 4, 7, 3):
        x = rng.standard_normal(n).astype(np.float32)
        np.testing.assert_array_equal(program(x, z, n - 1), x[n - 1 :] + z, err_msg=f"n={n}")
        np.testing.assert_array_equal(program(x, z, n - 3), x[n - 3 :] + z, err_msg=f"n={n}")
        assert len(program.variants) <= 3 and frozenset() in program.variants
    assert {v for _, _, v in next(reversed(program.variants))} == {3, 2}  # (n, i) of the last


NAMED = """
func.func @main(%x: tensor<?xf32>, %n: index, %y: tensor<?xf32>) -> tensor<?xf32> {
  %r = tensor.add %x, %y : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}
"""


def test_arguments_given_by_name() -> None:
    program = dvm.compile(NAMED, cache=False)
    x, y = np.arange(3, dtype=np.float32), np.ones(3, np.float32)
    for got in (program(x, 1, y=y), program(y=y, n=2, x=x), program.profile(x, n=0, y=y)[0]):
        np.testing.assert_array_equal(got, x + y)
    for args, named, error in [
        ((x,), {"n": 1}, r"@main is missing argument 2 \(%y\)"),
        ((x, 1, y), {"y": y}, r"@main argument 2 \(%y\) is given twice"),
        ((x, 1), {"z": y}, r"@main has no argument %z \(named arguments: %x, %n, %y\)"),
        ((x, 1, y, y), {"y": y}, r"@main takes 3 arguments, got 4 by position"),
    ]:
        with pytest.raises(CallError, match=error):
            program(*args, **named)


ADD = """func.func @add(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = tensor.add %x, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}"""


def test_a_lone_launch_runs_directly_as_the_general_path_would(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A program that is one launch of its arguments (`Variant.lone`) runs a known
    signature's calls as one closure once its plan binds the launch: each call's result
    is a new array equal to the general path's, an input in Fortran order (the same
    signature) is read in C order and left as it was, a new signature is checked as
    before (a guard's CallError, a side of 1 broadcast), and an output that cannot be
    allocated is the general path's CallError. Programs that are more (a returned
    argument, two outputs, an index argument) take the general path."""
    program = dvm.compile(ADD, cache=False)
    rng = np.random.default_rng(11)
    x, y = (rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2))

    def without_direct(args: tuple[Any, ...]) -> runtime.BoundVariant:
        """The signature's bound variant, which had its closure, now without it."""
        key = runtime.signature(args)
        bound = program.cache[key]
        assert bound.direct is not None
        program.cache[key] = bound._replace(direct=None)
        return bound

    def direct_and_general(*args: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        direct = program(*args)
        without_direct(args)
        return direct, program(*args)  # (which makes the closure again)

    for args in [(x, y), (x, np.asfortranarray(y)), (x, y[:1]), (np.asfortranarray(x), y[:1])]:
        copies = [a.copy(order="A") for a in args]
        for _ in range(2):  # (planned at the second: conftest)
            program(*args)
        direct, general = direct_and_general(*args)
        np.testing.assert_array_equal(direct, general)
        np.testing.assert_array_equal(direct, args[0] + args[1])
        assert direct.flags.writeable and direct.flags.c_contiguous
        assert not any(np.shares_memory(direct, o) for o in [*args, general, program(*args)])
        for a, copy in zip(args, copies, strict=True):
            np.testing.assert_array_equal(a, copy)
            assert a.flags.f_contiguous == copy.flags.f_contiguous
    with pytest.raises(CallError, match=r"axis 1 of %x \(x_1\) is 4 and axis 1 of %y .* is 3"):
        program(x, y[:, :3])

    def out_of_memory(*args: Any, **named: Any) -> Any:
        raise MemoryError

    errors = []
    for direct in (True, False):  # the closure's error, then the general path's
        with monkeypatch.context() as patched:
            patched.setattr(np, "empty", out_of_memory)
            with pytest.raises(CallError, match="could not be allocated") as raised:
                program(x, y)
        errors.append(str(raised.value))
        if direct:
            without_direct((x, y))
    assert errors[0] == errors[1] and "@add(%x: (3, 4) float32" in errors[0], errors

    for text, args in [
        (RETURNED_ARGUMENT, (x,)),
        (ROW_STATS, (x,)),
        (SUM_OF_A_BROADCAST, (np.asarray(np.float32(1)), 3)),
    ]:
        other = dvm.compile(text, cache=False)
        for _ in range(3):
            other(*args)
        assert other.generic.lone is None  # (a route, or the general path: no lone closure)
        assert all(isinstance(bound.direct, Route | None) for bound in other.cache.values())
