"""A signature's route (`dvm.host_route`, `variant.Route`): from its second call a
program of several steps runs its steps with choices decided and launches bound at the
signature's shapes. Every call a route runs must give what the general path gives: the
same results bit for bit, new arrays each call, the inputs untouched, the same errors."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import dvm
from dvm import launches, runtime, vm
from dvm.errors import CallError
from dvm.variant import Route

IF_ELSE = """
func.func @f(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %zero = arith.constant dense<0.000000e+00> : tensor<f32>
  %one = arith.constant dense<1.000000e+00> : tensor<f32>
  %a = tensor.add %x, %y : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = tensor.reduce_sum %a {axes = [0, 1]} : tensor<?x?xf32> -> tensor<f32>
  %p = tensor.gt %s, %zero : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %c = tensor.extract %p[] : tensor<i1>
  %r = scf.if %c -> (tensor<?x?xf32>) {
    %t = tensor.add %a, %one : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
    scf.yield %t : tensor<?x?xf32>
  } else {
    %t = tensor.sub %a, %one : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
    scf.yield %t : tensor<?x?xf32>
  }
  %o = tensor.mul %r, %x : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %o : tensor<?x?xf32>
}
"""

A_LOOP = """
func.func @g(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %x) -> (tensor<?x?xf32>) {
    %t = tensor.tanh %a : tensor<?x?xf32>
    %b = tensor.add %t, %x : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    scf.yield %b : tensor<?x?xf32>
  }
  %m = tensor.reduce_max %r {axes = [1]} : tensor<?x?xf32> -> tensor<?xf32>
  func.return %r, %m : tensor<?x?xf32>, tensor<?xf32>
}
"""


def results(value: Any) -> tuple[Any, ...]:
    return value if isinstance(value, tuple) else (value,)


def routed(program: runtime.CompiledProgram, args: Sequence[Any]) -> Route:
    """The route of the signature of `args`, made (after the calls that make it)."""
    for _ in range(3):  # the general path, the route made, the route's launches bound
        program(*args)
    route = program.cache[runtime.signature(args)].direct
    assert isinstance(route, Route) and isinstance(route.steps, list) and route.steps
    return route


def general(program: runtime.CompiledProgram, args: Sequence[Any]) -> Any:
    """A call of `args` by the general path (the signature's route set aside for it)."""
    key = runtime.signature(args)
    bound = program.cache[key]
    program.cache[key] = bound._replace(direct=None)
    try:
        return program(*args)
    finally:
        program.cache[key] = bound


def kernel_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The kernels `Kernel.run` launches from now on (a route's known launch runs none)."""
    ran: list[str] = []
    run = launches.Kernel.run

    def counted(self: launches.Kernel, *args: Any, **named: Any) -> Any:
        ran.append(self.name)
        return run(self, *args, **named)

    monkeypatch.setattr(launches.Kernel, "run", counted)
    return ran


def check_route(program: runtime.CompiledProgram, args: Sequence[Any]) -> None:
    """The route's results are the general path's, new arrays each call, the inputs
    untouched."""
    copies = [np.array(a, order="K") for a in args]
    routed(program, args)
    first, second = results(program(*args)), results(program(*args))
    want = results(general(program, args))
    calls = [*first, *second, *want]
    for got in (first, second):
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)
            assert g.flags.writeable and g.flags.owndata
    for i, a in enumerate(calls):
        assert not any(np.shares_memory(a, b) for b in [*args, *calls[i + 1 :]])
    for a, copy in zip(args, copies, strict=True):
        np.testing.assert_array_equal(a, copy)
        assert a.flags.f_contiguous == copy.flags.f_contiguous


def test_a_route_runs_known_launches_and_agrees_with_the_general_path(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = dvm.compile(IF_ELSE, cache=False)
    x = rng.standard_normal((5, 7)).astype(np.float32)
    for y in [x + 1, -x - 1]:  # both branches of the `if`
        args = (x, y)
        check_route(program, args)
        ran = kernel_runs(monkeypatch)
        program(*args)
        assert ran == []  # every launch known: none through `Kernel.run`
        monkeypatch.undo()
    # a branch not taken before: its launch is learned on the way, as any launch runs
    z = rng.standard_normal((5, 7)).astype(np.float32)
    branches = [np.abs(z), -np.abs(z) - 1]
    for y in branches:
        check_route(program, (z, y))


@pytest.mark.parametrize(
    "layout",
    [
        pytest.param(lambda x, y: (np.asfortranarray(x), y), id="fortran-order"),
        pytest.param(lambda x, y: (x, y[:1]), id="a-broadcast-side-of-1"),
        pytest.param(lambda x, y: (x[::2], np.asfortranarray(y[:1])), id="strided-and-1"),
    ],
)
def test_a_route_of_other_layouts_agrees(
    rng: np.random.Generator, layout: Callable[[np.ndarray, np.ndarray], tuple[Any, ...]]
) -> None:
    program = dvm.compile(IF_ELSE, cache=False)
    x, y = (rng.standard_normal((6, 9)).astype(np.float32) for _ in range(2))
    args = layout(x, y)
    check_route(program, args)
    np.testing.assert_allclose(
        program(*args),
        ((args[0] + args[1]) + np.where((args[0] + args[1]).sum() > 0, 1, -1)) * args[0],
        rtol=1e-5,
        atol=1e-5,
    )


def test_a_route_of_a_loop_agrees(rng: np.random.Generator) -> None:
    program = dvm.compile(A_LOOP, cache=False)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    check_route(program, (x,))
    check_route(program, (np.asfortranarray(x),))
    want = x
    for _ in range(3):
        want = np.tanh(want) + x
    np.testing.assert_allclose(program(x)[0], want, rtol=1e-5)


def test_a_route_fails_as_the_general_path_does(
    rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = dvm.compile(IF_ELSE, cache=False)
    x, y = (rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2))
    routed(program, (x, y))
    with pytest.raises(CallError, match=r"axis 1 of %x \(x_1\) is 4 and axis 1 of %y .* is 3"):
        program(x, y[:, :3])  # a guard fails: no route

    def out_of_memory(*args: Any, **named: Any) -> Any:
        raise MemoryError

    errors = []
    for call in (program, lambda *args: general(program, args)):
        with monkeypatch.context() as patched:
            patched.setattr(np, "empty", out_of_memory)
            with pytest.raises(CallError, match="could not be allocated") as raised:
                call(x, y)
        errors.append(str(raised.value))
    assert errors[0] == errors[1] and "@f(%x: (3, 4) float32" in errors[0], errors
    np.testing.assert_array_equal(program(x, y), general(program, (x, y)))  # still runs


@pytest.mark.parametrize("name", ["if_else_add", "layernorm", "mmoe", "bert_layer"])
def test_the_examples_routes_agree(name: str, examples_dir: Path, reference: ModuleType) -> None:
    """Programs with choices, stacks and arenas: a route at two shapes each."""
    program = dvm.compile(examples_dir / f"{name}.mlir", cache=False)
    _, spec, _ = reference.EXAMPLES[f"{name}.mlir"]
    rng = np.random.default_rng(5)
    for size in (3, 40):
        dims = dict.fromkeys(spec_symbols(spec), size)
        args = tuple(reference.make_inputs(spec, dims, rng))
        check_route(program, args)


def spec_symbols(spec: Any) -> set[str]:
    """The symbols an example's argument spec names."""
    return {d for shape, _ in spec for d in shape if isinstance(d, str)}


def test_a_signature_called_once_makes_no_route(rng: np.random.Generator) -> None:
    program = dvm.compile(IF_ELSE, cache=False)
    x, y = (rng.standard_normal((2, 3)).astype(np.float32) for _ in range(2))
    program(x, y)
    route = program.cache[runtime.signature((x, y))].direct
    assert isinstance(route, Route) and route.steps == [] and program.generic.templates is None


def test_a_route_of_launches_on_the_cores_agrees(
    share_from_inline_bytes: None,
    pool_rounds: list[int],
    reference: ModuleType,
    examples_dir: Path,
) -> None:
    """Launches and stacks the cores share are never bound on the calling thread: the
    route runs them as the general path does."""
    program = dvm.compile(IF_ELSE, cache=False)
    rng = np.random.default_rng(8)
    x, y = (rng.standard_normal((600, 500)).astype(np.float32) for _ in range(2))
    check_route(program, (x, y))
    mmoe = dvm.compile(examples_dir / "mmoe.mlir", cache=False)
    _, spec, _ = reference.EXAMPLES["mmoe.mlir"]
    args = tuple(reference.make_inputs(spec, {"B": 3000, "E": 6}, rng))
    check_route(mmoe, args)
    pool_rounds.clear()
    mmoe(*args)
    assert pool_rounds  # (on the cores)


def test_a_routed_stack_runs_as_one_closure(
    monkeypatch: pytest.MonkeyPatch, reference: ModuleType, examples_dir: Path
) -> None:
    """MMoE's stack of three launches and its choice's launch, at a shape run on the
    calling thread: a routed call launches none through `Kernel.run` or
    `vm.launch_stack`."""
    program = dvm.compile(examples_dir / "mmoe.mlir", cache=False)
    _, spec, _ = reference.EXAMPLES["mmoe.mlir"]
    args = tuple(reference.make_inputs(spec, {"B": 23, "E": 4}, np.random.default_rng(2)))
    check_route(program, args)
    ran = kernel_runs(monkeypatch)
    stacks: list[int] = []
    monkeypatch.setattr(vm, "launch_stack", lambda members, **_: stacks.append(len(members)))
    program(*args)
    assert ran == [] and stacks == []
