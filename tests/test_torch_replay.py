"""What a replayed call of the torch backend does: the same program as a hand-written
one, the inputs' memory given to it without a copy, each size comparison one guard."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from conftest import EXAMPLES_DIR  # noqa: E402

import dvm  # noqa: E402
import dvm.torch  # noqa: E402
from dvm.runtime import CompiledProgram  # noqa: E402
from dvm.torch.graph import GraphRunner  # noqa: E402
from dvm.torch.sizes import SIZES, Size  # noqa: E402


class LayerNorm(torch.nn.Module):
    """LayerNorm written out as mean, sub, mul, sqrt and div (as the benchmark's)."""

    def forward(self, x: Any, w: Any, b: Any) -> Any:
        mean = x.mean(dim=-1, keepdim=True)
        d = x - mean
        var = (d * d).mean(dim=-1, keepdim=True)
        return d * (1.0 / torch.sqrt(var + 1e-5)) * w + b


def launches(text: str) -> int:
    return dvm.compile(text).variants[frozenset()].launches


def test_a_layernorm_module_runs_as_many_kernels_as_the_hand_written_program() -> None:
    x, w, b = torch.randn(36, 307), torch.randn(307), torch.randn(307)
    recorded = dvm.torch.export_mlir(LayerNorm(), x, w, b)
    hand_written = (EXAMPLES_DIR / "layernorm.mlir").read_text()
    assert launches(recorded) == launches(hand_written)


class Arguments:
    """The addresses of the arrays each compiled program's call is given."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: list[set[int]] = []
        original = CompiledProgram.__call__

        def call(program: CompiledProgram, *args: Any) -> Any:
            self.seen.append({a.ctypes.data for a in args if isinstance(a, np.ndarray)})
            return original(program, *args)

        monkeypatch.setattr(CompiledProgram, "__call__", call)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_replay_gives_the_program_its_inputs_memory(
    monkeypatch: pytest.MonkeyPatch, dtype: Any
) -> None:
    compiled = torch.compile(LayerNorm(), backend="dvm", dynamic=True)
    arguments = Arguments(monkeypatch)
    torch.manual_seed(0)
    with torch.no_grad():
        for rows, cols in [(3, 7), (5, 11), (13, 2)]:
            x, w, b = (torch.randn(rows, cols), torch.randn(cols), torch.randn(cols))
            x, w, b = x.to(dtype), w.to(dtype), b.to(dtype)
            arguments.seen.clear()
            y = compiled(x, w, b)
            tolerance = 1e-4 if dtype == torch.float32 else 5e-2
            torch.testing.assert_close(y, LayerNorm()(x, w, b), rtol=tolerance, atol=tolerance)
            assert {x.data_ptr(), w.data_ptr(), b.data_ptr()} <= arguments.seen[-1]


def test_an_input_that_requires_grad_crosses_without_a_copy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A training call's inputs require grad: the replay detaches them (a new tensor
    object over the same memory) and the program reads that memory."""
    torch.manual_seed(1)
    model = torch.nn.LayerNorm(16)
    compiled = torch.compile(model, backend="dvm", dynamic=True)
    arguments = Arguments(monkeypatch)
    for rows in (3, 5, 7):
        x = torch.randn(rows, 16, requires_grad=True)
        arguments.seen.clear()
        compiled(x).sum().backward()
        assert x.data_ptr() in set().union(*arguments.seen)
        assert model.weight.data_ptr() in set().union(*arguments.seen)


def test_a_replay_returns_an_input_as_given_and_converts_the_rest() -> None:
    """A graph whose outputs are an input, a program's result and a size: each comes
    back as eager gives it, at the recording call and at the replays."""

    def f(x: Any, n: int) -> Any:
        return (x, torch.ops.aten.mul.Tensor(x, 2), n + 1)

    runner = GraphRunner(torch.fx.symbolic_trace(f), "outputs")
    for rows in (3, 5, 4):
        x = torch.randn(rows, 2)
        given, doubled, size = runner(x, rows)
        assert given is x and size == rows + 1 and type(size) is int
        assert isinstance(doubled, torch.Tensor)
        torch.testing.assert_close(doubled, x * 2)
    assert (runner.report.plans, runner.report.replayed) == (1, 2)


def test_a_comparison_is_noted_as_the_guard_that_holds() -> None:
    """`a == b` that fails is the guard `a != b` (one guard however a handler spells
    it); a size compared with itself is no guard at all."""
    rows, cols = Size(3, "v[0].shape[0]", 0), Size(4, "v[0].shape[1]", 0)
    SIZES.start()
    try:
        assert not rows == cols  # noqa: SIM201 (the comparison is what is tested)
        assert rows != cols
        assert rows < cols and not rows >= cols
        assert rows == rows
    finally:
        SIZES.stop()
    assert list(SIZES.guards) == [
        "(v[0].shape[0] != v[0].shape[1])",
        "(v[0].shape[0] < v[0].shape[1])",
    ]


def test_a_float_computed_from_a_size_keeps_its_formula() -> None:
    """`t ** -0.5`, `t * 0.5`, and dynamo's `torch.sym_float` and `torch._sym_sqrt`
    (`math.sqrt(t)`) of a size are `Quotient`s whose formula a replay computes for its
    own sizes; none loses the origin (which would leave the call without a plan)."""
    import math

    from dvm.torch.plan import compiled_function
    from dvm.torch.sizes import Quotient

    t = Size(5, "v[0].shape[1]", 0)
    SIZES.start()
    try:
        made = [t**-0.5, t * 0.5, 2 * t * 1.0, torch.sym_float(t) * -1.0,
                torch._sym_sqrt(torch.sym_float(t)), t**2]  # fmt: skip
    finally:
        SIZES.stop()
    assert not SIZES.lost
    assert all(isinstance(q, Quotient) for q in made[:-1]) and isinstance(made[-1], Size)
    later = [torch.empty(2, 11)]
    expected = [11**-0.5, 11 * 0.5, 22.0, -11.0, math.sqrt(11), 121]
    assert [compiled_function(q.expr)(later) for q in made] == expected


def test_a_float_times_a_size_is_computed_anew_at_each_replay() -> None:
    """`2.0 * n` with the float on the left: `float.__mul__` takes the size as a plain
    int, which would bake this call's number into the plan; the runner gives the
    operation to the size's reflected method, a formula each replay computes."""
    import operator

    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    rows = graph.call_function(torch.ops.aten.sym_size.int, (x, 0))
    scale = graph.call_function(operator.mul, (2.0, rows))
    graph.output([graph.call_function(torch.ops.aten.mul.Tensor, (x, scale))])
    runner = GraphRunner(torch.fx.GraphModule({}, graph), "a float times a size")
    for n in (3, 5, 4):
        x = torch.randn(n, 2)
        (scaled,) = runner(x)
        torch.testing.assert_close(scaled, x * (2.0 * n))
    assert (runner.report.plans, runner.report.replayed) == (1, 2)


def test_an_int_a_torch_op_returns_is_read_anew_at_each_replay() -> None:
    """`sym_stride` has no handler: it runs in torch at each call, and its int (a row's
    stride, the width) reaches `as_strided`, in torch too. The plan reads it from that
    call's result, not the number the recorded call got (which gave the first call's
    width to every later one)."""
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    rows = graph.call_function(torch.ops.aten.sym_size.int, (x, 0))
    stride = graph.call_function(torch.ops.aten.sym_stride.int, (x, 0))
    column = graph.call_function(torch.ops.aten.as_strided.default, (x, [rows], [stride]))
    graph.output([graph.call_function(torch.ops.aten.mul.Tensor, (column, 2.0))])
    runner = GraphRunner(torch.fx.GraphModule({}, graph), "a stride")
    for width in (4, 6, 3, 9):
        x = torch.arange(5.0 * width).reshape(5, width)
        (doubled,) = runner(x)
        torch.testing.assert_close(doubled, x[:, 0] * 2)
    assert (runner.report.plans, runner.report.replayed) == (1, 3)


def test_a_square_input_replays_the_plan_of_an_oblong_one() -> None:
    """Shapes of different ranks are not compared size by size (Python compares a
    tuple's items before its length): a LayerNorm's (rows, cols) against its weight's
    (cols,) would tie the plan to rows != cols, and a square input would record again."""
    torch.manual_seed(2)
    torch._dynamo.reset()  # a graph of its own (dynamo reuses one across instances)
    compiled = torch.compile(LayerNorm(), backend="dvm", dynamic=True)
    with torch.no_grad():
        for rows, cols in [(8, 64), (9, 65), (64, 64), (10, 70), (70, 70)]:
            x, w, b = torch.randn(rows, cols), torch.randn(cols), torch.randn(cols)
            torch.testing.assert_close(compiled(x, w, b), LayerNorm()(x, w, b))
    report = dvm.torch.reports()[-1]
    assert (report["plans"], report["replayed"]) == (1, 4)


class Heads(torch.nn.Module):
    """Attention scores over 2 heads, computed as torch's `bmm` path computes them: the
    batch and the heads merged, then split again."""

    def forward(self, x: Any) -> Any:
        b, s, h = x.shape
        q = x.view(b, s, 2, h // 2).transpose(1, 2).reshape(b * 2, s, h // 2)
        scores = torch.bmm(q, q.transpose(1, 2))
        return scores.view(b, 2, s, s).softmax(-1)


def test_a_batch_equal_to_the_head_count_replays_the_plan() -> None:
    """A plain number in a reshape is a constant of the module (here the head count):
    a batch that equals it by chance is not tied to it, so the plan recorded at batch 2
    serves the other batches (the view of `b * 2` into `(b, 2)` names neither)."""
    torch.manual_seed(3)
    torch._dynamo.reset()
    compiled = torch.compile(Heads(), backend="dvm", dynamic=True)
    with torch.no_grad():
        for b, s in [(2, 5), (3, 5), (4, 7), (2, 6)]:
            x = torch.randn(b, s, 8)
            torch.testing.assert_close(compiled(x), Heads()(x))
    report = dvm.torch.reports()[-1]
    assert (report["plans"], report["replayed"]) == (1, 3)


class PaddedConv(torch.nn.Module):
    """A 3x3 convolution padded by 1, then a group norm."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.norm = torch.nn.GroupNorm(2, 4)

    def forward(self, x: Any) -> Any:
        return self.norm(self.conv(x))


def plans_over(model: Any, sizes: list[tuple[int, int, int]]) -> tuple[int, int]:
    """The plans made and replayed by `model`'s graph over inputs of (batch, 3, h, w)
    of `sizes` in no_grad, each call's result checked against eager."""
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="dvm", dynamic=True)
    with torch.no_grad():
        for b, h, w in sizes:
            x = torch.randn(b, 3, h, w)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
    report = dvm.torch.reports()[-1]
    return report["plans"], report["replayed"]


def test_sizes_equal_by_chance_are_not_tied_by_the_plan() -> None:
    """The first call's padded height (9 + 2) equals its width: a program names a size
    by another only where they are the same expression of the inputs' sizes, so the
    plan holds no guard that they are equal and serves the calls where they differ."""
    torch.manual_seed(4)
    sizes = [(2, 9, 11), (2, 8, 13), (4, 11, 6), (5, 7, 7)]
    assert plans_over(PaddedConv(), sizes) == (1, 3)


def test_a_strided_convolution_replays_one_plan_at_odd_and_even_lengths() -> None:
    """A stride of 2 leaves the right padding unread at an even length and reads it at
    an odd one: the input is padded alike at every length, so one plan serves both."""
    torch.manual_seed(5)
    model = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1)
    assert plans_over(model, [(2, 9, 11), (2, 8, 10), (3, 7, 12), (4, 10, 9)]) == (1, 3)


def test_a_batch_norms_training_backward_replays_its_plan() -> None:
    """The backward of a batch norm in training mode scales by `1.0 / (n * c / c)`, a
    float divided from sizes: a `Quotient` that the plan computes anew at each call,
    where a plain float would have left the call with no plan."""
    torch.manual_seed(6)
    torch._dynamo.reset()
    model = torch.nn.Sequential(torch.nn.Linear(8, 6), torch.nn.BatchNorm1d(6))
    reference = copy.deepcopy(model)
    compiled = torch.compile(model, backend="dvm", dynamic=True)
    first = len(dvm.torch.reports())
    for batch in (5, 7, 9):
        x = torch.randn(batch, 8)
        given, expected = x.clone().requires_grad_(), x.clone().requires_grad_()
        compiled(given).square().mean().backward()
        reference(expected).square().mean().backward()
        torch.testing.assert_close(given.grad, expected.grad, rtol=1e-4, atol=1e-5)
    for mine, theirs in zip(model.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(mine.grad, theirs.grad, rtol=1e-4, atol=1e-5)
    reports = dvm.torch.reports()[first:]
    assert [(r["plans"], r["replayed"]) for r in reports] == [(1, 2), (1, 2)], reports


class Positions(torch.nn.Module):
    def forward(self, x: Any) -> Any:
        past = x.shape[1]  # (a KV cache's length: the new token's positions follow it)
        return x.sum(1) + torch.arange(past, past + 3) * torch.arange(0, 2 * past, past)[1]


def test_an_arange_from_a_size_starts_there_at_every_call() -> None:
    """A start (and a step) that is a size of the call is an argument of the replayed
    program, not the first call's number."""
    compiled = torch.compile(Positions(), backend="dvm", dynamic=True)
    torch._dynamo.reset()
    first = len(dvm.torch.reports())
    with torch.no_grad():
        for past in (5, 7, 12):
            x = torch.randn(3, past, 3)
            torch.testing.assert_close(compiled(x), Positions()(x))
    (report,) = dvm.torch.reports()[first:]
    assert (report["plans"], report["replayed"]) == (1, 2), report
