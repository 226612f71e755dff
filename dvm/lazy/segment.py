"""Flushing: the pending ops become one program, compiled once per structure and run.

A flush takes every pending node that a live lazy array still shows, and what those
need; the rest is dead and dropped. A node that numpy would make a view of a known
array is not computed: it becomes that view (`Node.view`). The segment's key is its
structure (ops, attributes, dtypes, ranks and static 1s, which operand is which, which
sizes equal which dims: `emit.name_sizes`), never its shapes or sizes: those are
arguments, so the same code on new shapes reuses the compiled program, which only
specializes (`dvm.compile`'s per-shape cache). Unit dims and equal dims of the arrays
read need no place in the key either: the compiled program checks them per call, and
compiles a variant of itself the first time a dim is 1.
"""

from __future__ import annotations

import contextlib
import logging
import operator
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dvm.lazy.emit import Emitter, SizeName, name_sizes
from dvm.lazy.graph import Node
from dvm.lazy.record import MAX_SEGMENT, TRACE, PerThread
from dvm.lazy.stats import STATS

log = logging.getLogger("dvm.lazy")

MAX_PROGRAMS = 256
"""Compiled segments kept (least recently used go)."""


@dataclass
class Compiled:
    program: Any
    """The `dvm.compile` of the segment's text (None: the compiler refused it)."""
    text: str
    kernels: int


PROGRAMS: OrderedDict[tuple[Any, ...], Compiled] = OrderedDict()

WATCHERS: PerThread[Callable[[str], None]] = PerThread()
"""Called with each segment's text as this thread runs it (`dvm.torch.export_mlir`
collects them)."""

RUNS: PerThread[Callable[[Segment, Compiled], None]] = PerThread()
"""Called with each segment this thread runs and its compiled program (`dvm.torch`'s
plans)."""


@dataclass
class Segment:
    """The part of the trace a flush runs."""

    args: list[Node]
    nodes: list[Node]
    outputs: list[Node]
    key: tuple[Any, ...]
    sizes: tuple[SizeName, ...]
    """How the program names each of the nodes' indices (`emit.name_sizes`)."""
    constants: list[Node] = field(default_factory=list)
    """The numbers the program holds as constants (`Node.constant`), in order of use."""

    def indices(self) -> list[int]:
        """The run-time sizes and offsets the program takes, as the ops recorded them
        (those it reads as a dim of an argument or an earlier size left out)."""
        recorded = [i for n in self.nodes for i in n.indices]
        return [i for i, how in zip(recorded, self.sizes, strict=True) if how is None]

    def index_values(self) -> list[int]:
        """The same as plain ints (a size may be an `int` subclass that tracks its origin)."""
        if not self.sizes:  # (the common case: no op took a size or an offset)
            return []
        return [
            int.__index__(i) if isinstance(i, int) else operator.index(i) for i in self.indices()
        ]

    def text(self) -> str:
        return Emitter(self.args, self.nodes, self.sizes, self.constants).text(self.outputs)


def select(pending: Sequence[Node], wanted: Sequence[Node] = ()) -> Segment | None:
    """The segment that computes the pending nodes shown (and `wanted`): None if none.
    (It runs at every flush: nodes are kept in sets and dicts by identity, `Node`'s
    hash.)"""
    will_know: set[Node] = set()
    outputs: list[Node] = []
    wanted_set = set(wanted)
    for node in pending:
        view = node.view
        if view is not None and (view[0].value is not None or view[0] in will_know):
            will_know.add(node)
            continue
        if node in wanted_set or node.shown():
            outputs.append(node)
            will_know.add(node)
    outputs += [n for n in wanted if n.pending and n not in will_know]  # (left: `flush`)
    needed = live_nodes(outputs)
    if not needed:
        return None
    nodes = [n for n in pending if n in needed]
    if len(nodes) < len(needed):  # nodes an earlier flush left pending, needed again
        nodes = operands_first(outputs, needed)
    # One pass: a node is its position, a known array its argument's number as -1, -2...
    # (in order of first use), so the key is the structure whatever the arrays are; a
    # constant is its dtype and bits (-0.0 is no 0.0, a NaN's payload counts).
    places: dict[Node, Any] = {n: k for k, n in enumerate(nodes)}
    args: list[Node] = []
    constants: list[Node] = []
    structure = []
    for node in nodes:
        operands = []
        for o in node.operands:
            place = places.get(o)
            if place is None and o.constant and o.value is not None:
                constants.append(o)
                place = places[o] = ("constant", o.dtype, o.value.tobytes())
            elif place is None:
                args.append(o)
                place = places[o] = -len(args)
            operands.append(place)
        structure.append((node.op, node.params, node.dtype, node.static, tuple(operands)))
    sizes = name_sizes(args, nodes)
    key = (
        tuple([(a.dtype, a.static) for a in args]),
        tuple(structure),
        tuple([places[o] for o in outputs]),
        sizes,
    )
    return Segment(args, nodes, outputs, key, sizes, constants)


def live_nodes(outputs: Sequence[Node]) -> set[Node]:
    """The pending nodes the outputs need, outputs included."""
    needed: set[Node] = set()
    stack = list(outputs)
    while stack:
        node = stack.pop()
        if node in needed or node.value is not None:
            continue
        needed.add(node)
        stack.extend(node.operands)
    return needed


def operands_first(outputs: Sequence[Node], needed: set[Node]) -> list[Node]:
    """The `needed` nodes, each after its operands: the order of a segment some of whose
    nodes were recorded before an earlier flush (`flush`)."""
    order: list[Node] = []
    placed: set[Node] = set()
    stack = [(node, False) for node in reversed(outputs)]
    while stack:
        node, operands_placed = stack.pop()
        if node in placed:
            continue
        if operands_placed:
            placed.add(node)
            order.append(node)
            continue
        stack.append((node, True))
        stack += [(o, False) for o in reversed(node.operands) if o in needed]
    return order


def settle() -> None:
    """With many ops pending: forget the dead ones, or flush when the live ones are
    still too many (a loop that never syncs still runs programs of a bounded size)."""
    shown = [n for n in TRACE.nodes if n.shown()]
    needed = live_nodes(shown)
    if len(needed) > MAX_SEGMENT:
        flush()
    else:
        TRACE.nodes = [n for n in TRACE.nodes if n in needed]


def flush(wanted: Iterable[Node] = ()) -> None:
    """Run every pending op that matters (see the module docstring), then forget the
    trace. Nodes that become views are views afterwards.

    A node no lazy array shows is left pending, but keeps its operands: a caller may
    hold it (a handler between the ops it records, when recording flushes on its own:
    `settle`), and a later segment that needs it computes it then (`select`). One
    nothing holds is freed with the trace."""
    pending, wanted = TRACE.nodes, list(wanted)
    if not pending and not any(n.pending for n in wanted):
        return
    TRACE.nodes = []
    segment = select(pending, wanted)
    if segment is not None:
        run(segment)
    for node in pending:  # in recording order: a view of a view finds its base known
        if node.value is None:
            view = node.view
            if view is None or view[0].value is None:
                continue
            node.value = view_of(view[0].value, view[1])  # a view of what is now known
        node.operands, node.view = (), None  # known: hold on to no other node (a loop's history)


def view_of(array: np.ndarray[Any, Any], index: Any) -> np.ndarray[Any, Any]:
    """numpy's view of `array` (`index`: a key for `[]`, or a callable)."""
    return np.asarray(index(array) if callable(index) else array[index])


def compiled(segment: Segment) -> Compiled:
    found = PROGRAMS.get(segment.key)
    if found is not None:
        with contextlib.suppress(KeyError):  # (evicted by another thread since: still good)
            PROGRAMS.move_to_end(segment.key)
        STATS.reused += 1
        return found
    import dvm

    text = segment.text()
    start = time.perf_counter()
    try:
        program = dvm.compile(text)
        variant = program.variants[frozenset()]
        kernels = variant.launches
    except Exception as e:  # any refusal (a parse, verifier or pass error): numpy runs it
        log.warning("dvm.lazy: a segment did not compile, running it in numpy: %s", e)
        program, kernels = None, 0
        STATS.failed += 1
    STATS.compile_seconds += time.perf_counter() - start
    STATS.compiled += 1
    found = PROGRAMS[segment.key] = Compiled(program, text, kernels)
    if len(PROGRAMS) > MAX_PROGRAMS:
        PROGRAMS.popitem(last=False)
    return found


def contiguous(array: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """`array`, copied if its elements are not in C order (a view of a view, say)."""
    return array if array.flags.c_contiguous else np.ascontiguousarray(array)


def run(segment: Segment) -> None:
    STATS.segments += 1
    entry = compiled(segment)
    for watch in WATCHERS:
        watch(entry.text)
    for seen in RUNS:
        seen(segment, entry)
    if entry.program is None:
        from dvm.lazy.eager import evaluate

        evaluate(segment.nodes)
        return
    arrays = [contiguous(a.value) for a in segment.args if a.value is not None]
    results = entry.program(*arrays, *segment.index_values())
    if len(segment.outputs) == 1:
        results = (results,)
    for node, value in zip(segment.outputs, results, strict=True):
        node.value = value
    STATS.kernels_launched += entry.kernels
