"""What a repeat call of the torch backend does beyond its programs: the hand-written
programs' kernels, no copy of an input or an output, one program call and no
recording per replay, and no guard that dynamo's own guards already prove."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from conftest import EXAMPLES_DIR  # noqa: E402

import dvm  # noqa: E402
import dvm.torch  # noqa: E402
from dvm import lazy  # noqa: E402
from dvm.runtime import CompiledProgram  # noqa: E402
from dvm.torch.graph import GraphRunner  # noqa: E402


def layernorm(x: Any, w: Any, b: Any) -> Any:
    mean = x.mean(dim=-1, keepdim=True)
    d = x - mean
    var = (d * d).mean(dim=-1, keepdim=True)
    return d * (1.0 / torch.sqrt(var + 1e-5)) * w + b


def softmax(x: Any) -> Any:
    e = torch.exp(x - x.amax(dim=2, keepdim=True))
    return e / e.sum(dim=2, keepdim=True)


def gelu(x: Any) -> Any:
    return 0.5 * x * (1 + torch.tanh(0.797884583 * (x + 0.044715 * x**3)))


WORKLOADS: dict[str, tuple[Callable[..., Any], Callable[[int, int], list[Any]]]] = {
    "layernorm": (layernorm, lambda r, c: [torch.randn(r, c), torch.randn(c), torch.randn(c)]),
    "softmax": (softmax, lambda r, c: [torch.randn(r, c, 128)]),
    "gelu": (gelu, lambda r, c: [torch.randn(r, c)]),
}
"""Per example program, the torch function it is written from, and its inputs."""


def launches(program: CompiledProgram, args: Any) -> int:
    """The kernels a call of `program` launches."""
    return len(program.profile(*args)[1])


@pytest.mark.parametrize("name", WORKLOADS)
def test_the_backend_launches_the_hand_written_programs_kernels(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call through the backend launches as many kernels as the hand-written program
    does on the same arrays (the importer's program fuses as the hand-written one)."""
    function, inputs = WORKLOADS[name]
    torch.manual_seed(6)
    compiled = torch.compile(function, backend="dvm", dynamic=True)
    hand_written = dvm.compile((EXAMPLES_DIR / f"{name}.mlir").read_text())
    calls: list[tuple[CompiledProgram, tuple[Any, ...]]] = []
    original = CompiledProgram.__call__

    def call(program: CompiledProgram, *args: Any) -> Any:
        calls.append((program, args))
        return original(program, *args)

    with torch.no_grad():
        for rows, cols in [(6, 37), (9, 130), (64, 1024)]:
            args = inputs(rows, cols)
            compiled(*args)  # (a new shape's first call)
            monkeypatch.setattr(CompiledProgram, "__call__", call)
            compiled(*args)
            monkeypatch.undo()
            ours = sum(launches(program, given) for program, given in calls)
            calls.clear()
            assert ours == launches(hand_written, [a.numpy() for a in args])


class Calls:
    """Each compiled program's call: the addresses of its arrays, and of its results."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.given: list[set[int]] = []
        self.made: list[set[int]] = []
        original = CompiledProgram.__call__

        def call(program: CompiledProgram, *args: Any) -> Any:
            self.given.append({a.ctypes.data for a in args if isinstance(a, np.ndarray)})
            results = original(program, *args)
            many = results if isinstance(results, tuple) else (results,)
            self.made.append({r.ctypes.data for r in many if isinstance(r, np.ndarray)})
            return results

        monkeypatch.setattr(CompiledProgram, "__call__", call)


def test_a_replay_copies_no_input_and_no_output(monkeypatch: pytest.MonkeyPatch) -> None:
    torch.manual_seed(0)
    compiled = torch.compile(layernorm, backend="dvm", dynamic=True)
    calls = Calls(monkeypatch)
    with torch.no_grad():
        for rows, cols in [(4, 9), (6, 13), (6, 13), (11, 5)]:
            x, w, b = torch.randn(rows, cols), torch.randn(cols), torch.randn(cols)
            calls.given.clear()
            calls.made.clear()
            y = compiled(x, w, b)
            torch.testing.assert_close(y, layernorm(x, w, b))
            assert len(calls.given) == 1
            assert {x.data_ptr(), w.data_ptr(), b.data_ptr()} <= calls.given[0]
            assert calls.made == [{y.data_ptr()}]


def test_a_replay_records_nothing_and_calls_each_program_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    torch.manual_seed(1)
    torch._dynamo.reset()
    compiled = torch.compile(softmax, backend="dvm", dynamic=True)
    with torch.no_grad():
        compiled(torch.randn(3, 5, 128))  # the graph's compile and its plan
        calls = Calls(monkeypatch)
        recorded = lazy.stats()["ops_recorded"]
        for rows, cols in [(3, 5), (4, 7), (2, 11), (4, 7)]:
            x = torch.randn(rows, cols, 128)
            torch.testing.assert_close(compiled(x), torch.softmax(x, dim=2))
    assert lazy.stats()["ops_recorded"] == recorded
    assert len(calls.given) == 4
    report = dvm.torch.reports()[-1]
    assert (report["plans"], report["replayed"]) == (1, 4)


class Runners:
    """The graph runners the backend makes."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.made: list[GraphRunner] = []
        original = GraphRunner.__init__

        def init(runner: GraphRunner, *args: Any) -> None:
            original(runner, *args)
            self.made.append(runner)

        monkeypatch.setattr(GraphRunner, "__init__", init)

    def guards(self) -> list[list[str]]:
        return [plan.guards for r in self.made for plans in r.plans.values() for plan in plans]


def test_a_plan_checks_no_guard_that_dynamo_proves(monkeypatch: pytest.MonkeyPatch) -> None:
    """dynamo's graph declares the sizes as symbols it guards (not 0 or 1, the weight's
    size the same as the input's last dim): the plan checks none of them again."""
    torch.manual_seed(2)
    torch._dynamo.reset()
    runners = Runners(monkeypatch)
    compiled = torch.compile(layernorm, backend="dvm", dynamic=True)
    with torch.no_grad():
        for rows, cols in [(4, 9), (7, 13)]:
            x, w, b = torch.randn(rows, cols), torch.randn(cols), torch.randn(cols)
            torch.testing.assert_close(compiled(x, w, b), layernorm(x, w, b))
    assert runners.guards() == [[]]


def test_a_graph_run_by_itself_keeps_its_guards() -> None:
    """Without dynamo (a graph with no declared sizes), the plan checks what the
    recording assumed: a 1 where it broadcast nothing records again."""

    def add(x: Any, y: Any) -> Any:
        return (torch.ops.aten.add.Tensor(x, y),)

    runner = GraphRunner(torch.fx.symbolic_trace(add), "add")
    for rows in (3, 5, 1, 7):
        x, y = torch.randn(rows, 4), torch.randn(3 if rows == 1 else rows, 4)
        (z,) = runner(x, y)
        torch.testing.assert_close(z, x + y)
    assert runner.plans and all(plan.guards for plans in runner.plans.values() for plan in plans)
    assert runner.report.plans == 2


def test_a_size_of_one_in_a_size_oblivious_graph_replays_correctly() -> None:
    """With torch's `backed_size_oblivious`, a size of 1 runs the graph made for other
    sizes: dynamo proves nothing about 1s there, so the plan keeps the guards the
    recording took on them."""
    torch.manual_seed(3)
    torch._dynamo.reset()
    with torch.fx.experimental._config.patch(backed_size_oblivious=True):
        compiled = torch.compile(layernorm, backend="dvm", dynamic=True)
        with torch.no_grad():
            for rows, cols in [(3, 5), (1, 5), (4, 1), (6, 7), (1, 1), (2, 9)]:
                x, w, b = torch.randn(rows, cols), torch.randn(cols), torch.randn(cols)
                torch.testing.assert_close(compiled(x, w, b), layernorm(x, w, b))


PRIMES_AND_ONES = [(1, 7), (13, 1), (2, 3), (17, 31), (1, 1), (5, 11), (29, 2), (17, 31)]


@pytest.mark.parametrize("name", WORKLOADS)
def test_a_stream_of_shapes_equals_eager(name: str) -> None:
    function, inputs = WORKLOADS[name]
    torch.manual_seed(4)
    compiled = torch.compile(function, backend="dvm", dynamic=True)
    with torch.no_grad():
        for rows, cols in PRIMES_AND_ONES:
            args = inputs(rows, cols)
            torch.testing.assert_close(compiled(*args), function(*args), rtol=1e-4, atol=1e-5)


def test_a_stream_of_training_calls_equals_eager() -> None:
    """The forward and backward graphs replay too: the gradients are eager's."""
    torch.manual_seed(5)
    compiled = torch.compile(layernorm, backend="dvm", dynamic=True)
    for rows, cols in PRIMES_AND_ONES:
        ours = [t.requires_grad_() for t in WORKLOADS["layernorm"][1](rows, cols)]
        theirs = [t.detach().clone().requires_grad_() for t in ours]
        compiled(*ours).square().sum().backward()
        layernorm(*theirs).square().sum().backward()
        for a, b in zip(ours, theirs, strict=True):
            torch.testing.assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-4)
