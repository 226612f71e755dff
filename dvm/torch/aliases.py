"""Outputs of a graph that are views of its inputs or other outputs, made views again.

In eager, `y = x * 2; return y, y.t()` returns two tensors over one memory: a write
to one shows in the other. AOTAutograd keeps that for outputs that require grad
(it rebuilds such a view from its base after the call), but in a graph without
gradients it leaves the view ops in the graph and counts on them making views. A
program's results never share memory, so the runner applies those view ops again,
in torch, to the base's result: the view is then a view of it, as in eager.

An output that is a view of an input is made a view of the call's input the same way.
AOTAutograd rebuilds such an output from the input after the call, and where the view
ops have sizes of the call as arguments (`chunk`, `expand` to an input's sizes) it
does so with `as_strided` at the returned tensor's strides and offset: a program's
result, contiguous from offset 0, would give the input's first elements (the first
chunk for the second), or strides past its end.

Only the user's outputs are rebuilt, never a tensor saved for the backward graph
(making it a view of an output would make the output's in-place writes clash with
autograd's saved tensor).

An output whose traced strides are not contiguous (a `channels_last` convolution's)
is given them after the call too (`output_layouts`), as Inductor restrides its
outputs to the strides of the graph's traced outputs."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import torch
from torch import fx
from torch.fx.experimental.symbolic_shapes import optimization_hint

USER_OUTPUT = "PlainAOTOutput"
"""The name of AOTAutograd's descriptor of an output the user receives (the output
node's `desc` metadata lists one per output)."""
MUTATED_INPUT = "InputMutationAOTOutput"
"""The name of its descriptor of an output that is the new value of an input the graph
writes in place."""


@dataclass(frozen=True)
class OutputView:
    """Output `position` is `steps` (view ops, in order) applied to output `base`, or to
    the call's argument `base` if `of_input`."""

    position: int
    base: int
    steps: tuple[fx.Node, ...]
    of_input: bool = False
    written_input: int | None = None
    """When output `base` is the new value of an input the graph writes in place: that
    argument, which the view is taken of (AOTAutograd writes the new value into it
    after the call, and rebuilds the view of it from the view's own base and view
    function: a view of a fresh tensor would make it `as_strided` of the input at the
    fresh tensor's strides, wrong for a strided input)."""


@dataclass(frozen=True)
class OutputViews:
    """A graph's outputs to make views again after each call (`restore`), and where its
    inputs are among a call's arguments (the view ops' sizes read them)."""

    views: list[OutputView]
    inputs: dict[fx.Node, int]

    def restore(self, outputs: list[Any], args: Any) -> None:
        """Each output of `views` made anew as its view ops of its base's result."""
        for view in self.views:
            if view.written_input is not None:
                try:
                    outputs[view.position] = self.viewed(args[view.written_input], view, args)
                    continue
                except RuntimeError:  # (a `view` the input's strides do not allow)
                    pass
            value = args[view.base] if view.of_input else outputs[view.base]
            outputs[view.position] = self.viewed(value, view, args)

    def viewed(self, value: Any, view: OutputView, args: Any) -> Any:
        for step in view.steps:
            arguments, keywords = fx.map_arg(
                (step.args[1:], step.kwargs), lambda n: size_of(n, self.inputs, args)
            )
            value = step.target(value, *arguments, **keywords)  # type: ignore[operator]
        return value


def output_views(nodes: list[fx.Node]) -> OutputViews | None:
    """The user's outputs that are chains of view ops of an input or of another of the
    user's outputs, whose other arguments are numbers or sizes computed from the inputs
    (None: none)."""
    returned = graph_results(nodes)
    if returned is None:
        return None
    output, results, users = returned
    # a base may be an input's new value too: `v = y[:, 2:]; y.add_(1); return v` returns
    # a view of it, which AOTAutograd makes a view of `y`
    written = written_inputs(output, nodes)
    bases = users | set(written)
    positions = {r: k for k, r in enumerate(results) if k in bases and isinstance(r, fx.Node)}
    inputs = {n: k for k, n in enumerate(n for n in nodes if n.op == "placeholder")}
    views = []
    for position, node in enumerate(results):
        if position not in users or not isinstance(node, fx.Node):
            continue
        steps: list[fx.Node] = []
        while is_view(node) and all(sizes_only(a) for a in view_arguments(node)):
            steps.insert(0, node)
            node = node.args[0]
            assert isinstance(node, fx.Node)
            if node in positions:
                base = positions[node]
                views.append(OutputView(position, base, tuple(steps), False, written.get(base)))
                break
            if node in inputs:
                views.append(OutputView(position, inputs[node], tuple(steps), of_input=True))
                break
    if not views:
        return None
    return OutputViews(bases_first(views), inputs)


def bases_first(views: list[OutputView]) -> list[OutputView]:
    """`views` ordered so that a view whose base is itself a view comes after it."""
    of = {view.position: view for view in views if not view.of_input}

    def depth(view: OutputView) -> int:
        base = of.get(view.base)
        return 0 if base is None else 1 + depth(base)

    return sorted(views, key=depth)


def graph_results(nodes: list[fx.Node]) -> tuple[fx.Node, Sequence[Any], set[int]] | None:
    """The graph's output node, its results and the positions among them the user
    receives (None: a graph without a list of results)."""
    output = next((n for n in nodes if n.op == "output"), None)
    if output is None or not isinstance(output.args[0], list | tuple):
        return None
    return output, output.args[0], described(output, USER_OUTPUT)


def described(output: fx.Node, kind: str) -> set[int]:
    """The positions of the outputs whose descriptor is of `kind` (none, if the graph
    does not say)."""
    descriptions, results = output.meta.get("desc"), cast(Sequence[Any], output.args[0])
    if not isinstance(descriptions, list | tuple) or len(descriptions) != len(results):
        return set()
    return {k for k, d in enumerate(descriptions) if type(d).__name__ == kind}


def written_inputs(output: fx.Node, nodes: list[fx.Node]) -> dict[int, int]:
    """The positions of the outputs that are inputs' new values, each with the position
    of its input among the graph's inputs (the placeholder whose descriptor the output's
    names)."""
    descriptions = output.meta.get("desc")
    placeholders = [n.meta.get("desc") for n in nodes if n.op == "placeholder"]
    inputs = {}
    for k in described(output, MUTATED_INPUT):
        written = getattr(descriptions[k], "mutated_input", None)  # type: ignore[index]
        matching = [i for i, d in enumerate(placeholders) if d is not None and d == written]
        if len(matching) == 1:
            inputs[k] = matching[0]
    return inputs


def is_view(node: Any) -> bool:
    """Whether a node is a view op, or one of the views a view op returns a list of
    (`split`'s pieces: `getitem` of it)."""
    if not isinstance(node, fx.Node) or node.op != "call_function":
        return False
    target = node.target
    if target is operator.getitem:
        return is_view(node.args[0])
    return isinstance(target, torch._ops.OpOverload) and target.is_view and bool(node.args)


def view_arguments(node: fx.Node) -> list[Any]:
    """A view op's arguments but the tensor it views."""
    return [*node.args[1:], *node.kwargs.values()]


def sizes_only(argument: Any) -> bool:
    """Whether an argument is numbers, or sizes computed from the inputs alone."""
    if isinstance(argument, list | tuple):
        return all(sizes_only(a) for a in argument)
    if not isinstance(argument, fx.Node):
        return True
    return not isinstance(argument.meta.get("val"), torch.Tensor) and from_inputs(argument)


def from_inputs(node: fx.Node) -> bool:
    """Whether a node is an input, or a size op of inputs (`sym_size`, arithmetic) or of
    views of inputs: `x[:, ::2].view_as(x[:, ::2])` views with the sizes of a slice of
    its own (`sym_size` of it), which `size_of` makes again in torch at no cost. (An
    output not made a view here is one AOTAutograd rebuilds with `as_strided` at the
    program's contiguous strides: the input's elements in another order.)"""
    if node.op == "placeholder":
        return True
    return (
        node.op == "call_function"
        and (is_view(node) or not isinstance(node.meta.get("val"), torch.Tensor))
        and all(from_inputs(a) for a in node.all_input_nodes)
    )


def size_of(node: fx.Node, places: dict[fx.Node, int], args: Any) -> Any:
    """A size node's value for this call (an input, arithmetic on inputs' sizes, a view)."""
    if node.op == "placeholder":
        return args[places[node]]
    arguments, keywords = fx.map_arg((node.args, node.kwargs), lambda n: size_of(n, places, args))
    return node.target(*arguments, **keywords)  # type: ignore[operator]


@dataclass(frozen=True)
class OutputLayouts:
    """The user's outputs whose strides in eager are not contiguous (a `channels_last`
    convolution's, a transposed result's), by position: the order of their dims from
    the outermost in memory to the innermost, as the graph's traced outputs have them.
    A program's results are contiguous; `restride` gives such an output eager's
    strides (a copy, which a contiguous output, the common case, never costs)."""

    layouts: dict[int, tuple[int, ...]]
    strides: dict[int, tuple[int, ...]]
    """The outputs whose traced strides leave gaps (`new_empty_strided((2, 3), (4, 1))`),
    when they are numbers: those exact strides."""

    def restride(self, outputs: list[Any]) -> None:
        for position, layout in self.layouts.items():
            value = outputs[position]
            if isinstance(value, torch.Tensor) and value.stride() != strides_of(value, layout):
                laid = torch.empty_permuted(value.shape, layout, dtype=value.dtype)
                outputs[position] = laid.copy_(value)
        for position, strides in self.strides.items():
            value = outputs[position]
            if isinstance(value, torch.Tensor) and value.stride() != strides:
                laid = torch.empty_strided(value.shape, strides, dtype=value.dtype)
                outputs[position] = laid.copy_(value)


def output_layouts(nodes: list[fx.Node], views: OutputViews | None) -> OutputLayouts | None:
    """The user's outputs, not inputs nor views of other outputs (`output_views` makes
    those), whose traced strides are not contiguous (None: none)."""
    returned = graph_results(nodes)
    if returned is None:
        return None
    _, results, users = returned
    rebuilt = {view.position for view in views.views} if views is not None else set()
    layouts, gaps = {}, {}
    for position in users - rebuilt:
        node = results[position]
        traced = node.meta.get("val") if isinstance(node, fx.Node) else None
        traced = traced if isinstance(traced, torch.Tensor) else None
        if not isinstance(node, fx.Node) or node.op == "placeholder" or traced is None:
            continue
        layout = memory_order(traced)
        strides = tuple(traced.stride())
        if all(type(s) is int for s in (*strides, *traced.shape)) and spaced(traced, layout):
            gaps[position] = strides
        elif layout != tuple(range(traced.dim())):
            layouts[position] = layout
    return OutputLayouts(layouts, gaps) if layouts or gaps else None


def spaced(traced: torch.Tensor, layout: tuple[int, ...]) -> bool:
    """Whether a traced tensor's elements are apart in memory with gaps between some:
    each dim's stride (from the innermost in `layout`) at least the span of those
    inside it, larger somewhere. (Overlapping strides, a 0 stride, are no layout a copy
    can take: such an output stays dense.)"""
    span, gap = 1, False
    for dim in reversed(layout):
        size, stride = traced.shape[dim], traced.stride()[dim]
        if size == 1:
            continue
        if stride < span:
            return False
        gap = gap or stride > span
        span = stride * size
    return gap


def memory_order(traced: torch.Tensor) -> tuple[int, ...]:
    """A traced tensor's dims from the outermost in memory to the innermost: by stride,
    larger first (equal strides, of unit dims, in the dims' order). The strides may be
    symbolic: read at their hints, which adds no guard (a layout is the same at every
    size the graph serves)."""
    strides = [optimization_hint(s, fallback=0) for s in traced.stride()]
    return tuple(sorted(range(traced.dim()), key=lambda d: (-strides[d], d)))


def strides_of(value: torch.Tensor, layout: tuple[int, ...]) -> tuple[int, ...]:
    """The strides of a dense tensor of `value`'s shape laid out in `layout`'s order."""
    strides = [0] * value.dim()
    step = 1
    for dim in reversed(layout):
        strides[dim] = step
        step *= value.shape[dim]
    return tuple(strides)
