"""The numbers of a torch graph as constants of its program: written in the text (the
VM runs them as immediates, and sees the patterns they make: `1 + tanh(u)`), part of
the segment's key, and a program per graph and structure still, whatever the shapes.
A number that changes from call to call (a float argument) stays an argument."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")

import dvm.torch  # noqa: E402
from dvm import lazy  # noqa: E402
from dvm.torch.graph import GraphRunner  # noqa: E402

F = torch.nn.functional


class TanhGelu(torch.nn.Module):
    def forward(self, x: Any) -> Any:
        return F.gelu(x, approximate="tanh")


def test_the_tanh_gelus_numbers_are_constants_of_its_program() -> None:
    """No 0-d argument per number: the program takes the input only, and `1 + tanh`
    adds the constant 1.0 (which the VM runs as one logistic)."""
    text = dvm.torch.export_mlir(TanhGelu(), torch.randn(5, 7))
    heading = text.split("{")[0]
    assert heading.count("%a") == 1 and "tensor<f32>" not in heading
    assert "arith.constant dense<1.0> : tensor<f32>" in text
    assert "arith.constant dense<0.5> : tensor<f32>" in text


def test_graphs_that_differ_in_a_number_compute_each_their_own() -> None:
    """The number is part of the segment's key: two graphs of one structure and
    different numbers do not share a program, and a stream of shapes through each
    compiles one program per graph."""

    def shifted(x: Any) -> Any:
        return x * 0.3125 + 1.5

    def scaled(x: Any) -> Any:
        return x * 0.4375 + 1.5

    torch._dynamo.reset()
    before = lazy.stats()["compiled"]
    for function in (shifted, scaled):
        compiled = torch.compile(function, backend="dvm", dynamic=True)
        for shape in ((3, 5), (4, 7), (6, 9), (2, 11)):
            x = torch.randn(*shape)
            torch.testing.assert_close(compiled(x), function(x), rtol=0, atol=0)
    assert lazy.stats()["compiled"] - before == 2


def test_a_float_argument_of_the_graph_stays_an_argument() -> None:
    """A graph whose input is a Python float (each value a plan of its own) records
    every new value, but with one program: the numbers of such a call are arguments."""
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    scale = graph.placeholder("scale")
    scaled = graph.call_function(torch.ops.aten.mul.Tensor, (x, scale))
    graph.output([graph.call_function(torch.ops.aten.add.Tensor, (scaled, 0.8125))])
    runner = GraphRunner(torch.fx.GraphModule({}, graph), "a float argument")
    before = lazy.stats()["compiled"]
    for value in (0.5, 1.5, 2.5, -3.0):
        x = torch.randn(4, 3)
        (got,) = runner(x, value)
        torch.testing.assert_close(got, x * value + 0.8125, rtol=0, atol=0)
    assert lazy.stats()["compiled"] - before == 1
    assert runner.report.plans == 4
