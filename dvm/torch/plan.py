"""A graph's call, kept as a plan and replayed on new shapes without recording.

The first call of a graph for an input signature records its ops on lazy arrays
(`graph.GraphRunner`); a `Builder` watches it: every value the call makes gets a
*slot* (the inputs, then each program's and each torch op's results), the sizes are
`sizes.Size`s that say how they are computed from the slots, and the branches taken
on sizes are guards. What the call became is a `Plan`: the compiled programs
(`dvm.compile`'s, which specialize per shape), the torch ops between them, where each
argument comes from (a slot, a constant, a size's formula) and where the outputs are.
A later call with the same signature checks the guards and replays the steps: no
recording, no segment key. A guard that fails (the same code would have taken another
branch) sends the call back to recording, which makes a plan for that case.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from dvm.lazy import LazyArray
from dvm.lazy.graph import Node
from dvm.lazy.record import PerThread
from dvm.lazy.segment import Compiled, Segment, contiguous
from dvm.lazy.stats import STATS
from dvm.torch.convert import (
    COMPLEX_PARTS,
    DTYPES,
    Complex,
    from_pairs,
    to_numpy,
    to_pairs,
    to_torch,
)
from dvm.torch.sizes import SIZES, Quotient, Size, plain, sized

Values = list[Any]
"""A call's values by slot."""


def distinct(ids: np.ndarray[Any, Any], axis: int) -> bool:
    """Whether no two of `ids` in a row along `axis` are equal (a scatter's index)."""
    ordered = np.sort(ids, axis=axis)
    return bool(np.all(np.diff(ordered, axis=axis) != 0))


SOURCE_NAMES = {
    "asarray": np.asarray, "contiguous": contiguous, "distinct": distinct, "math": math,
}  # fmt: skip
"""What the plans' generated sources may call, besides the names each adds."""


def compiled_function(body: str) -> Callable[..., Any]:
    """`lambda v: body` (over the slots `v`)."""
    return eval(f"lambda v: {body}", dict(SOURCE_NAMES))  # (the source is made here, from sizes)


def all_true(guards: Sequence[str]) -> Callable[[Values], bool] | None:
    return compiled_function(" and ".join(guards)) if guards else None


@dataclass
class Step:
    """A program or a torch op of the plan, with what it reads and where its results go."""

    program: Any = None
    """The compiled segment (`dvm.compile`'s program), or None for a torch op."""
    kernels: int = 0
    arguments: str = ""
    """The program's arguments (arrays, then index values) from the slots `v` and the
    step's `constants` `c`, as a tuple expression."""
    constants: Sequence[Any] = ()
    target: Any = None
    """The torch op."""
    template: Any = None
    """The torch op's (args, kwargs), with `Slot`s and `Formula`s in place of values."""
    results: Any = None
    """The slots of the results: a list (a program's), or the torch op's structure."""
    checks: list[str] = field(default_factory=list)
    """Guards that read this step's results (checked after it), or data checks (before)."""
    node: int = -1
    """The torch op's position in the graph (where its result is kept, `Done`)."""
    after: Callable[[Values], bool] | None = None
    """A torch op's `checks`, as one function (made with the plan)."""

    def run_torch(self, v: Values, done: Done) -> bool:
        result = done.get(self.node, done)
        if result is done:
            args, kwargs = fill(self.template, v, as_tensor=True)
            result = done[self.node] = run_torch_op(self.target, args, kwargs)
        place(self.results, result, v)
        return self.after is None or self.after(v)


Done = dict[int, Any]
"""The results of the torch ops a call has run, by their position in the graph: a
call that a guard sends to another plan, or back to recording, after some ran reads
their results here rather than running them again (an op may have effects: a random
draw, a collective)."""


def run_torch_op(target: Any, args: Any, kwargs: Any) -> Any:
    """The op in torch eager. A functional collective is waited for at once: its result
    leaves torch here, so the graph's `wait_tensor` no longer reaches it."""
    result = target(*args, **kwargs)
    if getattr(target, "namespace", None) == "_c10d_functional":
        result = torch.ops._c10d_functional.wait_tensor(result)
    return result


@dataclass(frozen=True)
class Slot:
    index: int


@dataclass(frozen=True)
class PairsSlot:
    """A slot of a complex tensor's float pairs (a complex tensor to torch)."""

    index: int


@dataclass(frozen=True)
class Formula:
    function: Callable[[Values], Any]


@dataclass(frozen=True)
class Input:
    """An output that is an input of the call, as it was given."""

    index: int


def fill(template: Any, v: Values, as_tensor: bool) -> Any:
    """The values a template stands for (arrays as tensors when `as_tensor`)."""
    if isinstance(template, Slot):
        value = v[template.index]
        return to_torch(value) if as_tensor and isinstance(value, np.ndarray) else value
    if isinstance(template, PairsSlot):
        value = v[template.index]
        return from_pairs(value) if as_tensor else Complex(value)
    if isinstance(template, Formula):
        return template.function(v)
    if isinstance(template, list | tuple):
        return type(template)(fill(t, v, as_tensor) for t in template)
    if isinstance(template, dict):
        return {k: fill(t, v, as_tensor) for k, t in template.items()}
    return template


def place(slots: Any, result: Any, v: Values) -> None:
    """A torch op's results into their slots (arrays for the dtypes dvm computes on)."""
    if isinstance(slots, int):
        v[slots] = as_value(result)
    elif isinstance(slots, list | tuple):
        for s, r in zip(slots, result, strict=True):
            place(s, r, v)


def as_value(x: Any) -> Any:
    """A torch value as a slot holds it: an array over a tensor's memory (a complex
    tensor's float pairs) for the dtypes dvm computes on."""
    if isinstance(x, torch.Tensor) and x.is_cpu:
        if x.dtype in DTYPES:
            return to_numpy(x)
        if x.dtype in COMPLEX_PARTS:
            return to_pairs(x)
    return x


@dataclass
class Plan:
    """What one call became (see the module docstring)."""

    slots: int
    guards: list[str]
    """The guards that read only the inputs."""
    steps: list[Step]
    outputs: Any
    """The outputs' template (`Slot`s read as tensors, `Input`s, `Formula`s)."""
    signature: Sequence[Any]
    """The input signature the plan serves (`graph.input_signature`)."""
    kinds: Sequence[str]
    """Per slot, what the recording call held there (`slot_kind`)."""
    replay: Callable[[Sequence[Any], Done], list[Any] | None] = field(init=False)
    """The outputs of a call with these arguments, or None where a guard fails (the
    call must be recorded; `done` then holds the torch ops that ran)."""

    def __post_init__(self) -> None:
        # The whole replay is one function made for this plan: the conversions its
        # signature implies, its guards and each step's arguments written out, with
        # no test per value and no call per step (what a call costs beyond its
        # programs is the backend's own cost).
        names: dict[str, Any] = {
            **SOURCE_NAMES, "STATS": STATS, "outputs": self.outputs, "fill": fill,
            "to_numpy": to_numpy, "to_torch": to_torch, "to_pairs": to_pairs,
        }  # fmt: skip
        lines = [f"v = {inputs_source(self.signature, self.slots)}"]
        lines += returning_none_unless(self.guards)
        for k, step in enumerate(self.steps):
            names[f"step{k}"] = step
            lines += step_source(step, f"step{k}")
        lines.append(f"return {outputs_source(self.outputs, self.kinds)}")
        body = "".join(f"\n    {line}" for line in lines)
        exec(f"def replay(args, done):{body}", names)  # (the source is made here, from sizes)
        self.replay = names["replay"]


def step_source(step: Step, name: str) -> list[str]:
    """The lines of a replay that run `step` (named `name` in it)."""
    if step.program is None:
        step.after = all_true(step.checks)
        return [f"if not {name}.run_torch(v, done): return None"]
    results = ", ".join(f"v[{slot}]" for slot in step.results)
    if len(step.results) > 1:
        results += ","  # (a program of several results returns a tuple)
    return [
        *returning_none_unless(step.checks),
        f"c = {name}.constants",
        f"{results} = {name}.program(*{step.arguments})",
        f"STATS.segments += 1; STATS.reused += 1; STATS.kernels_launched += {step.kernels}",
    ]


def returning_none_unless(guards: Sequence[str]) -> list[str]:
    return [f"if not ({' and '.join(guards)}): return None"] if guards else []


def inputs_source(signature: Sequence[Any], slots: int) -> str:
    """The slots' list from the call's arguments `args`: a CPU tensor of a dtype dvm
    computes on as an array over its memory (as `as_value`), anything else as it is,
    then a free slot for each value the call makes."""
    reads = []
    for position, kind in enumerate(signature):
        argument = f"args[{position}]"
        if type(kind) is tuple and kind[0] in COMPLEX_PARTS and kind[2] is True:
            reads.append(f"to_pairs({argument})")
        elif type(kind) is tuple and kind[0] in DTYPES and kind[2] is True:
            if kind[0] == torch.bfloat16:
                reads.append(f"to_numpy({argument})")
            else:  # (`detach` costs a new tensor object: only where needed)
                reads.append(f"({argument}.detach() if {argument}.requires_grad "
                             f"else {argument}).numpy()")  # fmt: skip
        else:
            reads.append(argument)
    return f"[{', '.join(reads + ['None'] * (slots - len(signature)))}]"


def outputs_source(outputs: Sequence[Any], kinds: Sequence[str]) -> str:
    """The outputs from the slots `v` and the arguments `args`: an array slot as a
    tensor over its memory, an input as given, the rest filled in from the template."""
    parts = []
    for k, output in enumerate(outputs):
        if isinstance(output, Input):
            parts.append(f"args[{output.index}]")
        elif isinstance(output, Slot) and kinds[output.index] == "array":
            parts.append(f"to_torch(v[{output.index}])")
        else:
            parts.append(f"fill(outputs[{k}], v, True)")
    return f"[{', '.join(parts)}]"


def slot_kind(value: Any) -> str:
    """What a slot holds at every replay: an "array" (a program's result, or a tensor
    input or torch result `as_value` converts), or a "value" of any other kind."""
    if isinstance(value, Node):
        return "array"
    return "value"


@dataclass
class Builder:
    """Watches a recording call and makes its `Plan` (see the module docstring)."""

    signature: tuple[Any, ...]
    """The call's input signature (`graph.input_signature`)."""
    kept: list[Any] = field(default_factory=list)
    """Everything given a slot, alive while building (slots are found by `id`)."""
    slot_of: dict[int, int] = field(default_factory=dict)
    scalars: dict[int, tuple[str, np.dtype[Any]]] = field(default_factory=dict)
    """Scalar nodes made from sizes: their formula and dtype."""
    steps: list[Step] = field(default_factory=list)
    stage_of: list[int] = field(default_factory=list)
    """Per step, the first slot it makes (guards that read it wait for it)."""
    checks: list[str] = field(default_factory=list)
    """Data checks for the next program."""
    refusal: str | None = None
    """Why this call makes no plan."""
    numbers_in: bool = False
    """Whether the call took in a number that is not a size (a float input, a torch
    op's float: `fixed_numbers`)."""

    def new_slot(self, value: Any) -> int:
        self.numbers_in = self.numbers_in or isinstance(value, float | bool | complex)
        self.kept.append(value)
        self.slot_of[id(value)] = len(self.kept) - 1
        return len(self.kept) - 1

    def input(self, value: Any) -> Any:
        """A placeholder's value as the graph runner holds it."""
        slot = len(self.kept)
        array = as_value(value)
        if isinstance(array, np.ndarray):
            node = Node.of(array)
            node.shape = sized(array.shape, slot)
            self.new_slot(node)
            return Complex(LazyArray(node)) if value.dtype in COMPLEX_PARTS else LazyArray(node)
        self.new_slot(value)
        if type(value) is int:
            return Size(value, f"v[{slot}]", slot)
        if isinstance(value, torch.SymInt | torch.SymFloat | torch.SymBool):
            self.refusal = "a symbolic input"
        return value

    def result(self, value: Any) -> Any:
        """A torch op's result as the runner holds it: tensors lazy, their dims sized."""
        if isinstance(value, list | tuple):
            return type(value)(self.result(x) for x in value)
        slot = len(self.kept)
        converted = as_value(value)
        if isinstance(converted, np.ndarray):
            node = Node.of(converted)
            node.shape = sized(converted.shape, slot)
            self.new_slot(node)
            return Complex(LazyArray(node)) if value.dtype in COMPLEX_PARTS else LazyArray(node)
        if type(value) is int:  # (a size, such as a stride: replay reads the op's anew)
            size = Size(value, f"v[{slot}]", slot)
            self.new_slot(size)
            return size
        self.new_slot(value)
        return value

    def fixed_numbers(self) -> bool:
        """Whether a Python number a handler gives an op now is fixed for the graph, so
        that its program holds it as a constant (`dvm.lazy`'s `Trace.constants`): the
        graph's constants and the handlers' own (GELU's 0.5), which dynamo traces again
        for when the code changes them. Not once the call took in a number that is not
        a size (a float argument of the graph, a torch op's float: they change from
        call to call), nor once a size was read as a plain number (`SIZES.lost`): a
        number may then be computed from it. Such numbers are arguments, as in numpy,
        and one program serves every value."""
        return not (self.numbers_in or SIZES.lost)

    def result_slots(self, held: Any) -> Any:
        if isinstance(held, list | tuple):
            return type(held)(self.result_slots(x) for x in held)
        if isinstance(held, Complex):
            held = held.pairs
        return self.slot_of[id(held._node if isinstance(held, LazyArray) else held)]

    def scalar(self, size: Size | Quotient, like: np.dtype[Any]) -> LazyArray:
        """A size used as a number in an op: a 0-d array that replay computes anew."""
        dtype = np.dtype(np.int64) if like == np.dtype(np.bool_) else like
        node = Node.of(np.asarray(plain(size), dtype))
        self.kept.append(node)
        self.scalars[id(node)] = (size.expr, dtype)
        return LazyArray(node)

    def slot_to_check(self, value: LazyArray, refusal: str) -> int | None:
        """The slot of a value that replay checks; None (and no plan: `refusal`) for
        one that is not a value of the call."""
        slot = self.slot_of.get(id(value._node))
        if slot is None:
            self.refusal = refusal
        return slot

    def check_indices(self, indices: LazyArray, bound: Any) -> None:
        """Replay takes with indices in range only (recording checks them)."""
        slot = self.slot_to_check(indices, "indices that are not a value of the call")
        if slot is not None:
            upper = bound.expr if isinstance(bound, Size) else repr(bound)
            self.checks.append(f"(v[{slot}].size == 0 or (v[{slot}].min() >= 0 and "
                               f"v[{slot}].max() < {upper}))")  # fmt: skip

    def check_condition(self, condition: LazyArray) -> None:
        """Replay runs on while an assertion's condition (read by recording) holds."""
        slot = self.slot_to_check(condition, "an assertion on a constant")
        if slot is not None:
            self.checks.append(f"bool(v[{slot}])")

    def check_nonzero(self, divisors: LazyArray) -> None:
        """Replay divides integers by divisors of the call that hold no zero only
        (recording leaves a zero to torch, which raises)."""
        slot = self.slot_to_check(divisors, "divisors that are not a value of the call")
        if slot is not None:
            self.checks.append(f"bool(v[{slot}].all())")

    def check_distinct(self, indices: LazyArray, axis: int) -> None:
        """Replay scatters by indices that repeat in no row along `axis` only
        (recording refuses the others)."""
        slot = self.slot_to_check(indices, "indices that are not a value of the call")
        if slot is not None:
            self.checks.append(f"distinct(v[{slot}], {axis})")

    def template(self, x: Any) -> Any:
        if isinstance(x, Complex):  # (a constant one: a complex tensor over its memory)
            pairs = self.template(x.pairs)
            return PairsSlot(pairs.index) if isinstance(pairs, Slot) else from_pairs(pairs.numpy())
        if isinstance(x, LazyArray):  # (a constant one: a tensor over its memory)
            slot = self.slot_of.get(id(x._node))
            return Slot(slot) if slot is not None else to_torch(x.numpy())
        if isinstance(x, Size | Quotient):
            return Formula(compiled_function(x.expr))
        if isinstance(x, list | tuple):
            return type(x)(self.template(y) for y in x)
        if isinstance(x, dict):
            return {k: self.template(y) for k, y in x.items()}
        slot = self.slot_of.get(id(x)) if isinstance(x, torch.Tensor) else None
        return Slot(slot) if slot is not None else x

    def segment(self, segment: Segment, entry: Compiled) -> None:
        """A flush ran `segment` (hooked into `dvm.lazy.segment.run`)."""
        if entry.program is None:
            self.refusal = "a segment that did not compile"
            return
        constants: list[Any] = []
        parts = []
        for node in segment.args:
            slot = self.slot_of.get(id(node))
            if slot is not None:
                parts.append(f"contiguous(v[{slot}])")
            elif id(node) in self.scalars:
                expr, dtype = self.scalars[id(node)]
                constants.append(dtype)
                parts.append(f"asarray({expr}, c[{len(constants) - 1}])")
            else:  # a constant: a Python scalar, or a module's tensor
                constants.append(contiguous(node.value))  # type: ignore[arg-type]
                parts.append(f"c[{len(constants) - 1}]")
        for index in segment.indices():
            parts.append(index.expr if isinstance(index, Size) else repr(plain(index)))
        first = len(self.kept)
        results = [self.new_slot(node) for node in segment.outputs]
        checks, self.checks = self.checks, []
        self.steps.append(
            Step(
                program=entry.program,
                kernels=entry.kernels,
                arguments=f"({''.join(f'{part}, ' for part in parts)})",  # (a tuple, even of none)
                constants=constants,
                results=results,
                checks=checks,
            )
        )
        self.stage_of.append(first)

    def torch_op(self, target: Any, args: Any, kwargs: Any, held: Any, node: int) -> None:
        """The torch op at position `node` of the graph ran on `args` (its results, as
        held, in `held`)."""
        first = len(self.kept) - count_leaves(held)
        template = (self.template(args), self.template(kwargs))
        results = self.result_slots(held)
        self.steps.append(Step(target=target, template=template, results=results, node=node))
        self.stage_of.append(first)

    def plan(
        self, outputs: Sequence[Any], originals: dict[int, int], declared: Sequence[Any] = ()
    ) -> Plan | None:
        """The plan (None if the call made none); `originals`: the outputs that are
        inputs, by position; `declared`: the inputs as the graph declares them (fake
        tensors and `SymInt`s: see `unproved`)."""
        if self.refusal is not None or SIZES.lost or self.checks:
            return None  # (data checks with no program after them: none to run them)
        stages: dict[int, list[str]] = {}
        for guard, newest in SIZES.guards.items():
            step = -1 if newest < len(self.signature) else self.step_making(newest)
            stages.setdefault(step, []).append(guard)
        for k, step in enumerate(self.steps):
            if k in stages and step.program is None:
                step.checks = stages[k]
        template = [
            Input(originals[k]) if k in originals else self.output(o) for k, o in enumerate(outputs)
        ]
        kinds = [slot_kind(value) for value in self.kept]
        guards = unproved(stages.get(-1, []), declared)
        return Plan(len(self.kept), guards, self.steps, template, self.signature, kinds)

    def output(self, value: Any) -> Any:
        """An output's template: a constant is copied at each call, as eager makes it
        anew (see `constants`)."""
        made = self.template(value)
        if isinstance(made, torch.Tensor):
            return Formula(lambda v, constant=made: constant.clone())
        return made

    def constants(self, outputs: Sequence[Any]) -> list[int]:
        """The outputs that are constants of the plan (lazy arrays known before the
        call computed them: a `scalar_tensor`, a module's tensor). The plan keeps
        their memory, so the caller gets a copy, at this call and at each replay: a
        write to one call's output must not change what later calls read."""
        arrays = [o.pairs if isinstance(o, Complex) else o for o in outputs]
        return [
            k
            for k, o in enumerate(arrays)
            if isinstance(o, LazyArray) and not o._node.pending and id(o._node) not in self.slot_of
        ]

    def step_making(self, slot: int) -> int:
        return max(k for k, first in enumerate(self.stage_of) if first <= slot)


def unproved(guards: list[str], declared: Sequence[Any]) -> list[str]:
    """The guards on the inputs that their sizes as the graph declares them do not
    prove. dynamo's graph is traced with symbolic sizes (`declared`: its placeholders'
    fake tensors and `SymInt`s), and dynamo checks before every call what its shape
    environment assumed of them (a size is not 0 or 1, two sizes are equal, one
    size's range): a guard that follows from that is true at every call that reaches
    the plan, and checking it again would cost each call (a BERT layer's plan: 150
    guards, 11 us). A guard is dropped only where `statically_known_true` proves it,
    which adds no fact to the environment (should evaluating one add a fact, nothing
    from there on is dropped)."""
    environment = shape_environment(declared)
    if environment is None:
        return guards
    from torch.fx.experimental.symbolic_shapes import statically_known_true

    facts = len(environment.guards)
    kept = []
    for k, guard in enumerate(guards):
        try:  # (the guard's source over `v`, on the declared values)
            proved = statically_known_true(eval(guard, {}, {"v": declared}))
        except Exception:  # an input with no declared value, a size it cannot express
            proved = False
        if len(environment.guards) != facts:
            return kept + guards[k:]
        if not proved:
            kept.append(guard)
    return kept


def shape_environment(declared: Sequence[Any]) -> Any:
    """The shape environment of dynamo's trace that the declared inputs' sizes are
    symbols of; None if any is a real tensor, or none has a symbol (a graph that
    dynamo did not trace: its guards check nothing the plan could leave out)."""
    from torch._subclasses.fake_tensor import FakeTensor

    environment = None
    for value in declared:
        if isinstance(value, torch.Tensor) and not isinstance(value, FakeTensor):
            return None
        sizes = value.shape if isinstance(value, FakeTensor) else (value,)
        for size in sizes:
            if isinstance(size, torch.SymInt):
                environment = size.node.shape_env
    return environment


BUILDING: PerThread[Builder] = PerThread()
"""The builder of the call this thread is recording, if any (the handlers tell it of
sizes used as numbers and of indices a take reads)."""


def count_leaves(x: Any) -> int:
    return sum(count_leaves(y) for y in x) if isinstance(x, list | tuple) else 1
