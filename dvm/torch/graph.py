"""Running an ATen FX graph: each op recorded on lazy arrays, or run in torch.

`GraphRunner` walks the graph AOTAutograd gives (forward or backward) the first
time it meets an input signature: placeholders become lazy arrays over the
tensors' memory (sizes, `SymInt`s at compile time, are ints now), each op goes to
its handler (`aten.HANDLERS`), which records it, and the outputs are read back as
tensors, a sync point that runs everything recorded as one program, compiled once
per structure and only specialized per shape (`dvm.lazy`). An op without a handler,
or that its handler refuses, runs in torch on the values so far (a flush): the graph
is split there and stays correct. `reports()` says, per graph, how many ops ran on
dvm. What the call became is kept as a plan (`plan`): later calls of the signature
replay it, recording nothing."""

from __future__ import annotations

import logging
import operator
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import fx

from dvm import lazy
from dvm.lazy import LazyArray
from dvm.lazy.record import TRACE
from dvm.lazy.segment import RUNS
from dvm.lazy.stats import STATS
from dvm.torch import (
    aten,
    aten_attention,
    aten_bag,
    aten_bessel,
    aten_collectives,
    aten_complex,
    aten_conv,
    aten_index,
    aten_layers,
    aten_math,
    aten_nn,
    aten_select,
    aten_special,
)
from dvm.torch.aliases import output_layouts, output_views
from dvm.torch.aten import Unsupported
from dvm.torch.convert import (
    COMPLEX_PARTS,
    DTYPES,
    Complex,
    from_pairs,
    to_numpy,
    to_pairs,
    to_torch,
)
from dvm.torch.plan import BUILDING, Builder, Done, Plan, run_torch_op, shape_environment
from dvm.torch.sizes import SIZES, Quotient, Size, operate, plain

log = logging.getLogger("dvm.torch")


def copying(view_op: Callable[..., Any]) -> Callable[..., Any]:
    """The handler of a `<view>_copy` op (`view_copy`, `permute_copy`): the view's
    result, a tensor of its own (a view may be its input's node)."""

    def handler(*args: Any, **kwargs: Any) -> Any:
        result = view_op(*args, **kwargs)
        if isinstance(result, list | tuple):
            return [aten.lazy(part).copy() for part in result]
        return aten.lazy(result).copy()

    return handler


def narrow(x: Any, dim: int, start: Any, length: Any) -> Any:
    """`length` elements of `x` along `dim` from `start` (from the end if negative)."""
    x = aten.lazy(x)
    start = start + x.shape[dim] if start < 0 else start
    return aten.slice_(x, dim, start, start + length)


VIEWS = aten.HANDLERS | aten_math.HANDLERS
COPIES = {
    f"{name}_copy": copying(VIEWS[name])
    for name in ("alias", "detach", "diagonal", "expand", "permute", "select", "slice",
                 "split_with_sizes", "squeeze", "t", "transpose", "unsqueeze", "view")
} | {"narrow_copy": copying(narrow), "copy_strided": copying(lambda x, strides: x)}  # fmt: skip
"""`<view>_copy` ops, by name: `torch.view_copy(x, shape)` is `x.view(shape).clone()`.
`prims.copy_strided(x, strides)`, a copy in the layout eager gives an op's result (strides
AOTAutograd's graph reads with `sym_stride` from tensors whose layout here may differ,
mixed with the trace's), is a copy: its values are `x`'s, and an output's layout is the
trace's (`aliases.OutputLayouts`)."""

HANDLERS = (
    aten.HANDLERS | aten_index.HANDLERS | aten_nn.HANDLERS | aten_conv.HANDLERS
    | aten_attention.HANDLERS | aten_complex.HANDLERS | aten_layers.HANDLERS | aten_bag.HANDLERS
    | aten_math.HANDLERS | aten_special.HANDLERS | aten_bessel.HANDLERS | aten_select.HANDLERS
    | aten_collectives.HANDLERS | COPIES
)  # fmt: skip
"""The ATen ops that record, by name: `aten`'s, the writes at indices and sorts of
`aten_index`, the poolings of `aten_nn`, the convolutions of `aten_conv`, the
fused transformer kernels of `aten_attention`, the layers' ops of `aten_layers`
(`nn.Bilinear`, `torch.cdist`), `nn.EmbeddingBag`'s of `aten_bag`, the elementwise
composites of `aten_math` (`atan2`, `hypot`, ...), the special functions of
`aten_special` (`erfc`) and `aten_bessel` (`i0`), the running extremes and selections
by rank of `aten_select` (`cummax`, `median`), the functional collectives of
`aten_collectives`, and the ops making complex tensors of
`aten_complex` (an op of complex operands or results has `aten_complex.OF_COMPLEX`'s
handler, or runs in torch)."""


@dataclass
class Report:
    """What one compiled graph ran where (counted at its first call)."""

    graph: str
    ops_total: int = 0
    ops_on_dvm: int = 0
    fallbacks: Counter[str] = field(default_factory=Counter)
    """ATen ops that ran in torch, by name."""
    reasons: dict[str, str] = field(default_factory=dict)
    """Why each op of `fallbacks` ran in torch (the first reason met)."""
    plans: int = 0
    """Plans made (one per input signature and branch taken on sizes)."""
    replayed: int = 0
    """Calls that replayed a plan (nothing recorded)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "graph": self.graph,
            "ops_total": self.ops_total,
            "ops_on_dvm": self.ops_on_dvm,
            "fallbacks": dict(self.fallbacks),
            "reasons": dict(self.reasons),
            "plans": self.plans,
            "replayed": self.replayed,
        }


REPORTS: list[Report] = []


def to_lazy(value: Any) -> Any:
    """A torch value as the runner holds it: a tensor as a lazy array over its memory."""
    if isinstance(value, torch.Tensor):
        if value.device.type != "cpu":
            return value
        if value.dtype in COMPLEX_PARTS:  # (as its float pairs: `aten_complex`)
            return Complex(lazy.asarray(to_pairs(value)))
        return lazy.asarray(to_numpy(value)) if value.dtype in DTYPES else value
    if isinstance(value, list | tuple):
        return type(value)(to_lazy(v) for v in value)
    return value


def to_tensor(value: Any) -> Any:
    """A runner's value as torch's (a lazy array read: a sync point; a size plain)."""
    if isinstance(value, LazyArray):
        return to_torch(np.asarray(value))
    if isinstance(value, Complex):
        return from_pairs(np.asarray(value.pairs))
    if isinstance(value, Size | Quotient):
        return plain(value)
    if isinstance(value, list | tuple):
        return type(value)(to_tensor(v) for v in value)
    if isinstance(value, dict):  # (an op's keyword arguments)
        return {k: to_tensor(v) for k, v in value.items()}
    return value


def op_name(target: Any) -> str:
    packet = getattr(target, "overloadpacket", None)
    return packet.__name__ if packet is not None else getattr(target, "__name__", str(target))


HANDLER_FAILURES = (
    ArithmeticError, AssertionError, AttributeError, KeyError, NotImplementedError,
    TypeError, ValueError,
)  # fmt: skip
"""What a handler raises only by a bug of its own (never torch's errors for the
user's values: an `IndexError` of an index out of range, a `RuntimeError` of a false
assertion, which are the model's). The op then runs in torch, which gives its result
or its own error, and a warning says why: a model never fails inside the backend for
what torch runs."""

MAX_PLANS = 8
"""Plans kept per graph and input signature (least recently made go)."""

PLAN_ATTEMPTS = 4
"""Recording calls of a graph that made no plan after which it stops trying."""


REFUSED_FOR_BOOLS = frozenset((
    "sub", "rsub", "neg", "relu", "silu", "gelu", "elu", "leaky_relu", "hardtanh", "mish",
    "hardswish", "hardsigmoid", "softplus", "threshold", "glu", "log_sigmoid_forward",
    "_prelu_kernel", "softshrink", "_softmax", "_log_softmax", "var", "std", "var_mean",
    "std_mean",
))  # fmt: skip
"""Ops torch raises for on a bool tensor (`y - mask`, `mask.relu()`, `mask.var()`), which
numpy, and so a handler, computes: such a call runs in torch, which raises its error.
(Tracing with fake tensors does not check dtypes, so the graph holds the op.)"""


def is_bool_tensor(value: Any) -> bool:
    if isinstance(value, LazyArray):
        return value.dtype == np.bool_
    return isinstance(value, torch.Tensor) and value.dtype == torch.bool


class Recording(threading.local):
    """The call a thread is recording: its plan's builder (None: it makes none) and the
    torch ops' results it reads rather than runs (they ran in a replay that failed)."""

    def __init__(self) -> None:
        self.builder: Builder | None = None
        self.done: Done = {}


class GraphRunner:
    """Runs one FX graph (see the module docstring); call it with the graph's inputs."""

    def __init__(self, module: fx.GraphModule, name: str) -> None:
        self.module = module
        self.nodes = list(module.graph.nodes)
        self.last_reads = last_reads(self.nodes)
        self.views = output_views(self.nodes)
        """Outputs that are views of other outputs (`aliases`): made views of them again."""
        self.layouts = output_layouts(self.nodes, self.views)
        """Outputs given eager's strides where they are not contiguous (`aliases`)."""
        self.declared = [n.meta.get("val") for n in self.nodes if n.op == "placeholder"]
        """The inputs as the graph declares them (symbolic: `plan.unproved`)."""
        self.symbolic = self.declared if shape_environment(self.declared) is not None else []
        """`declared`, if dynamo traced the graph with symbolic sizes (the sizes'
        identities: `sizes.Size.identity`)."""
        self.report = Report(name)
        self.first = True
        self.plans: dict[tuple[Any, ...], list[Plan]] = {}
        self.attempts = PLAN_ATTEMPTS
        self.recording = Recording()
        """What the call this thread records holds (threads may record at once)."""

    @property
    def builder(self) -> Builder | None:
        return self.recording.builder

    @property
    def done(self) -> Done:
        return self.recording.done

    def __call__(self, *args: Any) -> Any:
        outputs = self.run(args)
        if self.layouts is not None:
            self.layouts.restride(outputs)
        if self.views is not None:
            self.views.restore(outputs, args)
        return outputs

    def run(self, args: tuple[Any, ...]) -> Any:
        key = input_signature(args)
        done: Done = {}
        for plan in self.plans.get(key, ()):
            outputs = plan.replay(args, done)
            if outputs is not None:
                self.report.replayed += 1
                return outputs
        return self.record(args, key, done)

    def record(self, args: tuple[Any, ...], key: tuple[Any, ...], done: Done) -> Any:
        """A call recorded op by op (the torch ops in `done` ran already: their results
        are read there); it leaves a plan for its signature if it can."""
        builder = Builder(key) if self.attempts > 0 else None
        self.recording.builder, self.recording.done = builder, done
        if builder is not None:
            SIZES.start(self.symbolic)
            RUNS.append(builder.segment)
            BUILDING.append(builder)
            TRACE.constants = builder.fixed_numbers
        TRACE.views = False
        try:
            outputs, returned, originals = self.walk(args)
        finally:
            TRACE.views, TRACE.constants = True, None
            if builder is not None:
                SIZES.stop()
                RUNS.remove(builder.segment)
                BUILDING.remove(builder)
            self.recording.builder, self.recording.done = None, {}
        if builder is not None:
            plan = builder.plan(returned, originals, self.declared)
            if plan is None:
                self.attempts -= 1
            else:
                plans = self.plans.setdefault(key, [])
                plans.insert(0, plan)
                del plans[MAX_PLANS:]
                self.report.plans += 1
        return outputs

    def walk(self, args: tuple[Any, ...]) -> tuple[list[Any], list[Any], dict[int, int]]:
        """The graph's ops on the call's values: the outputs, the values they were
        made from, and which outputs are inputs (output -> input position)."""
        env: dict[fx.Node, Any] = {}
        inputs = iter(enumerate(args))
        places: dict[fx.Node, int] = {}
        for position, node in enumerate(self.nodes):
            for done in self.last_reads.get(position, ()):
                del env[done]  # a value nothing reads any more is not a segment's output
            if node.op == "placeholder":
                place, value = next(inputs)
                places[node] = place
                held = self.builder.input(value) if self.builder else to_lazy(value)
                env[node] = with_static_dims(held, node.meta.get("val"))
            elif node.op == "get_attr":
                held = to_lazy(getattr(self.module, str(node.target)))
                env[node] = with_static_dims(held, held)
            elif node.op == "call_function":
                env[node] = self.call(node, env, position)
            elif node.op == "output":
                return self.finish(node, env, places, args)
        raise ValueError(f"{self.report.graph}: the graph has no output")

    def call(self, node: fx.Node, env: dict[fx.Node, Any], position: int) -> Any:
        mapped: Any = fx.map_arg((node.args, node.kwargs), lambda n: env[n])
        args, kwargs = mapped
        target = node.target
        if target is operator.getitem:
            return args[0][args[1]]
        if isinstance(target, torch._ops.HigherOrderOperator):  # (`with_effects`: in torch)
            self.count(target.name(), False, "a higher-order op")
            return self.run_in_torch(target, args, kwargs, position)
        if not isinstance(target, torch._ops.OpOverload):  # sizes: ints and SymInt ops
            return operate(target, *args, **kwargs)  # type: ignore[arg-type]
        name = op_name(target)
        handler = (aten_complex.OF_COMPLEX if of_complex(args, node) else HANDLERS).get(name)
        fell_back = STATS.fallbacks.total()  # (not `lazy.stats()`: a copy per op)
        reason = "no handler"
        if name in REFUSED_FOR_BOOLS and any(is_bool_tensor(a) for a in args):
            handler, reason = None, "a bool tensor, which torch refuses for this op"
        if handler is not None:
            try:
                value = as_declared(node, handler(*args, **kwargs))
                if STATS.fallbacks.total() == fell_back:
                    self.count(name, True)
                    return value
                reason = "not recorded by dvm.lazy"
            except Unsupported as refusal:
                reason = str(refusal)
            except HANDLER_FAILURES as failure:  # (a bug of the handler: torch runs the op)
                reason = f"the handler failed: {type(failure).__name__}: {failure}"
                log.warning(
                    "dvm.torch: %s: %s ran in torch, as %s", self.report.graph, name, reason
                )
        self.count(name, False, reason)
        held = self.run_in_torch(target, args, kwargs, position)
        return with_static_dims(held, node.meta.get("val"))

    def run_in_torch(self, target: Callable[..., Any], args: Any, kwargs: Any, node: int) -> Any:
        """The op at position `node` in torch eager on the values (a flush), its tensors
        lazy again; its result as `done` holds it, if it ran already in this call."""
        tensors, named = to_tensor(args), to_tensor(kwargs)
        result = self.done.get(node, self.done)
        if result is self.done:
            result = run_torch_op(target, tensors, named)
        if self.builder is None:
            return to_lazy(result)
        held = self.builder.result(result)
        self.builder.torch_op(target, args, kwargs, held, node)
        return held

    def count(self, name: str, on_dvm: bool, reason: str = "") -> None:
        if self.first:
            self.report.ops_total += 1
            self.report.ops_on_dvm += on_dvm
            if not on_dvm:
                self.report.fallbacks[name] += 1
                self.report.reasons.setdefault(name, reason)

    def finish(
        self, node: fx.Node, env: dict[fx.Node, Any], places: dict[fx.Node, int], args: Any
    ) -> tuple[list[Any], list[Any], dict[int, int]]:
        results: Any = node.args[0]
        values = [env[r] if isinstance(r, fx.Node) else r for r in results]
        originals = {k: places[r] for k, r in enumerate(results) if r in places}
        kept = self.builder.constants(values) if self.builder is not None else []
        outputs = [
            args[originals[k]] if k in originals else to_tensor(v) for k, v in enumerate(values)
        ]
        for k in kept:  # (the plan keeps these: the caller gets its own copy)
            outputs[k] = outputs[k].clone()
        if self.first:
            self.first = False
            REPORTS.append(self.report)
            log.info("%s", summary(self.report))
        return outputs, values, originals


def last_reads(nodes: list[fx.Node]) -> dict[int, list[fx.Node]]:
    """Per position in the graph, the values no node from there on reads (a value
    read by no node at all: from the next position)."""
    last = {node: position + 1 for position, node in enumerate(nodes)}
    for position, node in enumerate(nodes):
        for read in node.all_input_nodes:
            last[read] = position + 1
    reads: dict[int, list[fx.Node]] = {}
    for node, position in last.items():
        reads.setdefault(position, []).append(node)
    return reads


def of_complex(args: Any, node: fx.Node) -> bool:
    """Whether an op reads or makes a complex tensor (recorded on float pairs)."""
    declared = node.meta.get("val")
    if isinstance(declared, torch.Tensor) and declared.dtype.is_complex:
        return declared.dtype in COMPLEX_PARTS  # (complex32: the real handlers say why not)
    values = args if isinstance(args, list | tuple) else (args,)
    return any(
        isinstance(a, Complex) or (isinstance(a, list | tuple) and of_complex(a, node))
        for a in values
    )


def with_static_dims(held: Any, declared: Any) -> Any:
    """`held` (a value known now) typed with the sizes torch's graph declares as fixed
    ints (`declared`: the node's tensor, or tensors): a weight's `64 x 256`, the static
    1s of a `keepdim` mean or a mask buffer. The program that reads it is compiled for
    those sizes (its shapes fuse and tile as a hand-written program's do) rather than
    for `?`s that take the same value at every call; dynamo guards the sizes."""
    if isinstance(held, list | tuple) and isinstance(declared, list | tuple):
        for h, d in zip(held, declared, strict=False):
            with_static_dims(h, d)
    elif isinstance(held, Complex) and isinstance(declared, torch.Tensor):
        with_static_dims(held.pairs, PairsOf(declared))
    elif isinstance(held, LazyArray) and isinstance(declared, torch.Tensor | LazyArray | PairsOf):
        node = held._node
        fixed = {a: d for a, d in enumerate(declared.shape) if type(d) is int}
        known = fixed and node.value is not None and len(declared.shape) == node.ndim
        if known and all(node.shape[a] == d for a, d in fixed.items()):  # (noted as guards)
            node.static = tuple(fixed.get(a, s) for a, s in enumerate(node.static))
    return held


class PairsOf:
    """The shape of a complex tensor's float pairs (`with_static_dims`)."""

    def __init__(self, declared: torch.Tensor) -> None:
        self.shape = (*declared.shape, 2)


def input_signature(args: Sequence[Any]) -> tuple[Any, ...]:
    """What a plan is kept under: tensors by dtype, rank and device, ints by type (a
    plan's guards say which sizes it serves), any other input by value."""
    return tuple(
        (a.dtype, a.dim(), a.is_cpu or a.device.type)  # (`is_cpu` is the cheaper read)
        if isinstance(a, torch.Tensor)
        else int
        if type(a) is int
        else (type(a), a)
        for a in args
    )


def as_declared(node: fx.Node, value: Any) -> Any:
    """`value` in the dtype torch gives the node (numpy promotes otherwise: an int64
    tensor times 0.5 is float32 in torch, float64 in numpy)."""
    declared = node.meta.get("val")
    if isinstance(declared, torch.Tensor) and declared.dtype.is_complex:
        return as_declared_complex(declared, value)
    if isinstance(value, Complex) and isinstance(declared, torch.Tensor):
        raise Unsupported("a complex value where torch has a real one")
    if isinstance(value, LazyArray) and isinstance(declared, torch.Tensor):
        dtype = DTYPES.get(declared.dtype)
        if dtype is None:
            raise Unsupported(f"dtype {declared.dtype}")
        if all(isinstance(d, int) for d in declared.shape) and tuple(value.shape) != tuple(
            declared.shape
        ):
            raise Unsupported("a shape that differs from torch's")
        return value if value.dtype == dtype else value.astype(dtype)
    return value


def as_declared_complex(declared: torch.Tensor, value: Any) -> Any:
    """A complex result as `as_declared`: its pairs of torch's float dtype and shape."""
    part = COMPLEX_PARTS.get(declared.dtype)
    if part is None:
        raise Unsupported(f"dtype {declared.dtype}")
    if not isinstance(value, Complex):
        raise Unsupported("a real value where torch has a complex one")
    pairs, shape = value.pairs, (*declared.shape, 2)
    if all(isinstance(d, int) for d in shape) and tuple(pairs.shape) != shape:
        raise Unsupported("a shape that differs from torch's")
    return value if pairs.dtype == DTYPES[part] else Complex(pairs.astype(DTYPES[part]))


def summary(report: Report) -> str:
    fell = ", ".join(
        f"{name} x{n} ({report.reasons[name]})" for name, n in report.fallbacks.most_common()
    )
    return f"dvm.torch: {report.graph}: {report.ops_on_dvm} of {report.ops_total} ops on dvm" + (
        f"; in torch: {fell}" if fell else ""
    )
