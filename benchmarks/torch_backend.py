"""What `torch.compile(backend="dvm")` adds per new shape over its bare programs.

Run: .venv/bin/python benchmarks/torch_backend.py [--shapes 10 --repeats 5]

Each module (LayerNorm, a GELU chain, a BERT layer, MMoE, a GPT-2 block) is compiled with
`dynamic=True` and called on a stream of new shapes (sizes of 2 and more: dynamo
makes a graph of its own for 0 and 1), each --repeats times in a row. Per module:

- `new`: a first call at a new shape minus a repeat at it (median, p90): what a
  new shape costs (the programs' specializations, plus the backend's own work);
- `bare`: the same for the `dvm.compile` programs the plan calls (their calls
  alone, timed inside the backend's): their specializations;
- `extra`: new minus bare, the backend's own cost per new shape (goal: at most
  0.1 ms);
- `rep` and `eager`: a repeat call through the backend and in torch eager
  (median), and `recorded`: the calls that recorded (the rest replayed a plan).

Torch eager runs the same stream after the backend's, not in between: work done
between two calls evicts the caches the second one then refills, a cost of any
first call after other work, not of a new shape. The machine's load average is
printed: on a shared machine, compare within a run.

With --bytecodes, it counts instead what the load does not swing: the Python
bytecodes (`sys.settrace` opcode events, torch's frames included) a first call at a
new shape and a repeat interpret, medians over the shapes.

With --per-call (needs the bench extra: `make bench-install`), it times a repeat call
of the benchmark suite's workloads (benchmarks/suite) at a few shapes each, in six
ways: through the backend (`dvm`); the backend's graph runners alone, called on the
arguments dynamo gave them (`runner`: `dvm` less dynamo's and AOTAutograd's part);
the `dvm.compile` programs those runners call, alone, on the arrays they were given
(`plan`: `runner` less the replay's own work); the workload's hand-written program
through `dvm.compile` (`bare`: `plan` less what the importer's programs cost more);
torch eager (`eager`); and `torch.compile` with a backend that runs the graph as it is
(`ident`: dynamo's own cost per call over eager, the floor a backend cannot go below).
Each runs --calls calls in a row, round after round, the first of each row left out
(the caches other work evicted); medians and p90 in us.

With --entry, it times what dynamo and AOTAutograd cost before a backend's function
runs (a function that returns a tensor made once), right after different work on
the calling thread: nothing, a `dvm.compile` LayerNorm launch at a small shape (run
on the calling thread) and at 1024 x 1024 (run on the cores, the calling thread
waiting for the others), numpy streaming as much memory, and a 0.5 ms sleep.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from dvm import lazy
from dvm.runtime import CompiledProgram

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # (`suite`, for --per-call)
from test_torch import Block  # the GPT-2 block the tests run


class GeluChain(nn.Module):
    def forward(self, x: Any) -> Any:
        return 0.5 * x * (1 + torch.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


class BertLayer(nn.Module):
    """A BERT encoder layer: attention, residual LayerNorms, a GELU FFN."""

    def __init__(self, d: int = 128, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x: Any) -> Any:
        b, t, c = x.shape

        def heads(y: Any) -> Any:
            return y.view(b, t, self.heads, c // self.heads).transpose(1, 2)

        scores = heads(self.q(x)) @ heads(self.k(x)).transpose(-1, -2) / math.sqrt(c // self.heads)
        context = (torch.softmax(scores, dim=-1) @ heads(self.v(x))).transpose(1, 2)
        x = self.ln1(x + self.o(context.reshape(b, t, c)))
        return self.ln2(x + self.ffn(x))


class MMoE(nn.Module):
    def __init__(self, d: int = 64, experts: int = 4, tasks: int = 2) -> None:
        super().__init__()
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(d, 64), nn.ReLU()) for _ in range(experts)
        )
        self.gates = nn.ModuleList(nn.Linear(d, experts) for _ in range(tasks))
        self.towers = nn.ModuleList(nn.Linear(64, 1) for _ in range(tasks))

    def forward(self, x: Any) -> Any:
        e = torch.stack([expert(x) for expert in self.experts], dim=1)
        outs = []
        for gate, tower in zip(self.gates, self.towers, strict=True):
            w = torch.softmax(gate(x), dim=-1).unsqueeze(-1)
            outs.append(torch.sigmoid(tower((w * e).sum(1))))
        return torch.cat(outs, dim=-1)


Shapes = Callable[[np.random.Generator], tuple[int, ...]]
MODULES: dict[str, tuple[Callable[[], nn.Module], Shapes]] = {
    "layernorm": (lambda: nn.LayerNorm(1024), lambda r: (int(r.integers(16, 256)), 1024)),
    "gelu": (GeluChain, lambda r: (int(r.integers(16, 256)), 1024)),
    "bert": (BertLayer, lambda r: (int(r.integers(2, 8)), int(r.integers(8, 64)), 128)),
    "mmoe": (MMoE, lambda r: (int(r.integers(64, 1024)), 64)),
    "gpt2_block": (Block, lambda r: (int(r.integers(2, 8)), int(r.integers(8, 64)), 32)),
}
"""Per module: how to build it, and a random input shape of the stream (small enough
that a call's fixed costs, not its memory traffic, are what differ at a new shape)."""


class Programs:
    """The time spent in the programs' calls (a call's share of it: `seconds` before and
    after)."""

    seconds = 0.0


def time_programs() -> None:
    """From now on, time every call of a compiled program (into `Programs.seconds`)."""
    original = CompiledProgram.__call__

    def call(program: CompiledProgram, *args: Any) -> Any:
        start = time.perf_counter()
        try:
            return original(program, *args)
        finally:
            Programs.seconds += time.perf_counter() - start

    CompiledProgram.__call__ = call  # type: ignore[method-assign]


def timed(function: Callable[[], Any]) -> tuple[float, float]:
    """The call's time, and its programs' share of it."""
    programs = Programs.seconds
    start = time.perf_counter()
    function()
    return time.perf_counter() - start, Programs.seconds - programs


def ms(values: list[float], q: float) -> str:
    return f"{np.quantile(values, q) * 1e3:7.3f}"


def measure(name: str, shapes: int, repeats: int) -> str:
    make, shape_of = MODULES[name]
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    model = make().eval()
    compiled = torch.compile(model, backend="dvm", dynamic=True)
    inputs = [torch.randn(*shape_of(rng)) for _ in range(shapes + 1)]
    new, bare, repeat = [], [], []
    recorded = 0
    with torch.no_grad():
        compiled(inputs[0])  # the graph's compile and first plan
        for x in inputs[1:]:
            ops = lazy.stats()["ops_recorded"]
            first = timed(lambda x=x: compiled(x))
            recorded += lazy.stats()["ops_recorded"] != ops
            again = [timed(lambda x=x: compiled(x)) for _ in range(repeats)]
            new.append(first[0] - statistics.median(t for t, _ in again))
            bare.append(first[1] - statistics.median(p for _, p in again))
            repeat.extend(t for t, _ in again)
        eager = [timed(lambda x=x: model(x))[0] for x in inputs[1:] for _ in range(repeats)]
    extra = [n - b for n, b in zip(new, bare, strict=True)]
    return (
        f"{name:10} {ms(new, 0.5)} {ms(new, 0.9)} {ms(bare, 0.5)} {ms(extra, 0.5)} "
        f"{ms(extra, 0.9)} {ms(repeat, 0.5)} {ms(eager, 0.5)} {recorded:8d}"
    )


def interpreted(function: Callable[[], Any]) -> int:
    """The Python bytecodes `function()` interprets."""
    count = 0

    def opcodes(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        count += event == "opcode"
        return opcodes

    def calls(frame: Any, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        return opcodes

    sys.settrace(calls)
    try:
        function()
    finally:
        sys.settrace(None)
    return count


def count_bytecodes(name: str, shapes: int) -> str:
    """A first call's bytecodes beyond a repeat's, and a repeat's, on a stream of new
    shapes (medians)."""
    make, shape_of = MODULES[name]
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    compiled = torch.compile(make().eval(), backend="dvm", dynamic=True)
    inputs = {shape_of(rng): None for _ in range(4 * shapes)}  # distinct shapes, in order
    first, repeat = [], []
    with torch.no_grad():
        for shape in list(inputs)[: shapes + 1]:
            x = torch.randn(*shape)
            first.append(interpreted(lambda x=x: compiled(x)))
            for _ in range(3):  # planned, bound, and bound for the cores
                compiled(x)
            # the fewest of three: a launch on the cores, whose tiles this thread takes
            # its share of as the workers allow, counts a varying number
            repeat.append(min(interpreted(lambda x=x: compiled(x)) for _ in range(3)))
    first, repeat = first[1:], repeat[1:]  # the first shape compiles the graph
    new = [f - r for f, r in zip(first, repeat, strict=True)]
    return f"{name:10} {statistics.median(new):9.0f} {statistics.median(repeat):9.0f}"


PER_CALL_SHAPES = {
    "layernorm": [(8, 64), (36, 3081), (256, 1024), (1024, 1024)],
    "softmax": [(2, 16), (4, 500), (8, 1024)],
    "gelu": [(8, 64), (36, 3081), (256, 1024), (1024, 1024)],
    "if_else_add": [(8, 64), (36, 3081), (256, 1024), (1024, 1024)],
    "bert_layer": [(2, 16), (4, 64), (8, 128)],
    "mmoe": [(16, 4), (1024, 8), (8192, 16)],
}
"""Per workload of the suite, the shapes --per-call times (in its shape names)."""


def per_call(name: str, rounds: int, calls: int) -> list[str]:
    """A line per shape: each way's median and p90 per call (see the docstring)."""
    from suite.systems import fresh_function
    from suite.workloads import make_workloads

    import dvm

    workload = make_workloads()[name]
    bare = dvm.compile(workload.program.read_text())
    backend = torch.compile(fresh_function(workload.torch), backend="dvm", dynamic=True)
    ident = torch.compile(
        fresh_function(workload.torch), backend=lambda gm, _: gm.forward, dynamic=True
    )
    lines = []
    for shape in PER_CALL_SHAPES[name]:
        arrays = workload.make_inputs(shape, np.random.default_rng(0))
        tensors = [torch.from_numpy(a) for a in arrays]
        with torch.no_grad():
            backend(*tensors)  # (the shape's first call: it may record)
            runners, programs = calls_inside(lambda t=tensors: backend(*t))
        ways: dict[str, Callable[[], Any]] = {
            "dvm": lambda t=tensors: backend(*t),
            "runner": lambda r=runners: [runner(*a) for runner, a in r],
            "plan": lambda p=programs: [program(*a) for program, a in p],
            "bare": lambda a=arrays: bare(*a),
            "eager": lambda t=tensors: workload.torch(*t),
            "ident": lambda t=tensors: ident(*t),
        }
        times: dict[str, list[float]] = {way: [] for way in ways}
        with torch.no_grad():
            for _ in range(rounds):
                for way, call in ways.items():
                    row = [timed(call)[0] for _ in range(calls)]
                    times[way].extend(row[1:])
        cells = " ".join(f"{us(t, 0.5)} {us(t, 0.9)}" for t in times.values())
        lines.append(f"{name:11} {shape!s:13} {cells}")
    return lines


WAYS = ("dvm", "runner", "plan", "bare", "eager", "ident")
"""The ways --per-call times each workload (see the docstring), in its columns' order."""

Calls = list[tuple[Callable[..., Any], tuple[Any, ...]]]


def calls_inside(call: Callable[[], Any]) -> tuple[Calls, Calls]:
    """The graph runners `call()` calls, and the compiled programs, each with the
    arguments it was given (the backend's layers, to time alone)."""
    from dvm.torch.graph import GraphRunner

    runners: Calls = []
    programs: Calls = []
    run_graph, run_program = GraphRunner.__call__, CompiledProgram.__call__

    def graph(runner: GraphRunner, *args: Any) -> Any:
        runners.append((runner, args))
        return run_graph(runner, *args)

    def program(compiled: CompiledProgram, *args: Any) -> Any:
        programs.append((compiled, args))
        return run_program(compiled, *args)

    GraphRunner.__call__, CompiledProgram.__call__ = graph, program  # type: ignore[method-assign]
    try:
        call()
    finally:
        GraphRunner.__call__, CompiledProgram.__call__ = run_graph, run_program  # type: ignore[method-assign]
    return runners, programs


def entry_after_work() -> list[str]:
    """Per kind of work before the call, the median time from the call to the backend's
    function (see the docstring)."""
    from functorch.compile import make_boxed_func  # pyright: ignore[reportPrivateImportUsage]
    from suite.workloads import make_workloads
    from torch._dynamo.backends.common import aot_autograd

    import dvm

    workload = make_workloads()["layernorm"]
    program = dvm.compile(workload.program.read_text())
    reached = [0.0]

    def returning(made: torch.Tensor) -> Any:
        def run(*_: Any) -> list[torch.Tensor]:
            reached[0] = time.perf_counter()
            return [made]

        return aot_autograd(fw_compiler=lambda gm, _: make_boxed_func(run))

    small = workload.make_inputs((8, 64), np.random.default_rng(0))
    large = workload.make_inputs((1024, 1024), np.random.default_rng(0))
    scratch = np.empty_like(large[0])
    works: dict[str, Callable[[], Any]] = {
        "nothing": lambda: None,
        "launch 8x64": lambda: program(*small),
        "launch 1024x1024": lambda: program(*large),
        "numpy 1024x1024": lambda: np.add(np.multiply(large[0], 2, out=scratch), 1, out=scratch),
        "sleep 0.5 ms": lambda: time.sleep(0.0005),
    }
    x = [torch.from_numpy(a) for a in small]
    compiled = torch.compile(workload.torch, backend=returning(torch.zeros(8, 64)), dynamic=True)
    times: dict[str, list[float]] = {work: [] for work in works}
    with torch.no_grad():
        compiled(*x)
        for _ in range(200):
            for work, run in works.items():
                run()
                start = time.perf_counter()
                compiled(*x)
                times[work].append(reached[0] - start)
    return [f"{work:18} {us(t, 0.5)} {us(t, 0.9)}" for work, t in times.items()]


def us(values: list[float], q: float) -> str:
    return f"{np.quantile(values, q) * 1e6:7.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=str(__doc__).splitlines()[0])
    parser.add_argument("--shapes", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--modules", default=",".join(MODULES))
    parser.add_argument("--bytecodes", action="store_true", help="count bytecodes instead")
    parser.add_argument("--per-call", action="store_true", help="time repeat calls instead")
    parser.add_argument("--workloads", default=",".join(PER_CALL_SHAPES))
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--entry", action="store_true", help="time dynamo's entry instead")
    options = parser.parse_args()
    if options.entry:
        print(f"load average {os.getloadavg()[0]:.2f}; dynamo and AOTAutograd before the "
              "backend's function, after: median and p90 in us")  # fmt: skip
        print("\n".join(entry_after_work()))
        return
    if options.per_call:
        print(f"load average {os.getloadavg()[0]:.2f}; {options.rounds} rounds of "
              f"{options.calls} calls; median and p90 per call in us")  # fmt: skip
        print(f"{'workload':11} {'shape':13} " + " ".join(
            f"{w:>7} {'p90':>7}" for w in WAYS))  # fmt: skip
        for name in options.workloads.split(","):
            for line in per_call(name, options.rounds, options.calls):
                print(line, flush=True)
        print(f"load average {os.getloadavg()[0]:.2f}")
        return
    if options.bytecodes:
        print(f"{'module':10} {'new':>9} {'repeat':>9}  (bytecodes, medians of {options.shapes})")
        for name in options.modules.split(","):
            print(count_bytecodes(name, options.shapes), flush=True)
        return
    print(f"load average {os.getloadavg()[0]:.2f}; {options.shapes} new shapes x "
          f"{options.repeats} repeats; times in ms")  # fmt: skip
    time_programs()
    columns = ["new", "new p90", "bare", "extra", "ext p90", "rep", "eager", "recorded"]
    print(f"{'module':10} " + " ".join(f"{c:>7}" for c in columns))
    for name in options.modules.split(","):
        print(measure(name, options.shapes, options.repeats), flush=True)


if __name__ == "__main__":
    main()
