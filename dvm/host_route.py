"""A call signature's route through a variant's host steps: the steps with what the
signature decides decided once.

A variant whose calls bind no symbol on the way (`Variant.late` false) runs, for one
signature (argument types, shapes and dtypes), the same launches at the same shapes
each time but for the branches of its `scf.if`s and the passes of its loops: every
`tensor.choice` takes the same region, and every launch finds the same plan. A route
(`RouteBuilder.route`) is the variant's steps for those symbol values: each choice
replaced by the region it takes, each plain launch by a step that, once the VM has
bound its launch on the calling thread, runs it as `launches.known_launch` runs a
lone one (its outputs allocated as planned, the launch's closure under the device's
lock): no plan key, no `Kernel.run` or `bind` frames; and each stack of plain
launches likewise, once the VM runs its members on the calling thread
(`vm.stack_runner`). `if`s and loops stay Python control flow around their routed
regions; every other step (scalar ops, launches checking index dims) is the
variant's own. A routed launch whose inputs come in at other shapes than it learned
runs as any launch does, so what the route assumes is checked, not trusted.

The templates (`Template`: symbol values to a step) are built from the variant's
plain steps once, at its first route; a route per signature, at its second call
(`variant.Route`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dvm import vm
from dvm.call_errors import not_allocated
from dvm.host_steps import (
    Launch,
    Step,
    StepBuilder,
    conditions_hold,
    for_step,
    if_step,
    region_step,
    store,
    while_step,
)
from dvm.launches import Call, Env, allocated, contiguous, launch_inputs
from dvm.vm.program import ARRAY_SHAPE, C_CONTIGUOUS

Template = Callable[[dict[str, int]], Step]
"""A step of a route, made for the symbol values of a signature."""


class RouteBuilder:
    """Templates of routes from the plain steps of one host function, with the
    variant's `StepBuilder` (whose checks and compiled conditions they share)."""

    def __init__(self, builder: StepBuilder) -> None:
        self.builder = builder

    def templates(self, entries: Any) -> list[Template]:
        return [self.template(e) for e in entries]

    def route(self, templates: list[Template], symbols: dict[str, int]) -> list[Step]:
        """The steps of `templates` for the symbol values `symbols`."""
        return [t(symbols) for t in templates]

    def template(self, entry: Any) -> Template:
        kind, *fields = entry
        if plain_launch(entry):
            return self.launch(self.builder.launch_parts(*fields[:4]))
        if kind == "choice":
            return self.choice(*fields)
        if kind == "if":
            return self.branch(*fields)
        if kind in ("for", "while"):
            return self.loop(kind, fields)
        if kind == "stack" and all(plain_launch(e) for e in fields[1]) and len(fields[1]) > 1:
            return self.stack(entry)
        step = self.builder.step(entry)  # the variant's own step, for every signature
        return lambda symbols: step

    def launch(self, parts: Launch) -> Template:
        return lambda symbols: known_launch_step(parts)

    def stack(self, entry: Any) -> Template:
        """A stack of plain launches (`vm.launch_stack`), as `known_stack_step` runs it."""
        _, _, entries, yielded, results = entry
        general = self.builder.step(entry)
        members = [self.builder.launch_parts(*e[1:5]) for e in entries]
        moves = (self.builder.slot_list(yielded), self.builder.slot_list(results))
        return lambda symbols: known_stack_step(members, general, moves)

    def region(self, data: Any, results: list[int]) -> Template:
        """A region's steps, then its yielded values copied to `results`; a region that
        is one plain launch of what it yields launches into `results` directly."""
        entries, yielded = data
        if len(entries) == 1 and plain_launch(entries[0]):
            _, name, inputs, outputs, kept, *_ = entries[0]
            if self.builder.slot_list(yielded) == self.builder.slot_list(outputs):
                return self.launch(self.builder.launch_parts(name, inputs, results, kept))
        templates, yielded = self.templates(entries), self.builder.slot_list(yielded)
        return lambda symbols: region_step(self.route(templates, symbols), yielded, results)

    def choice(
        self, names: Any, code: Any, relations: Any, then: Any, other: Any, results: Any
    ) -> Template:
        """The region a `tensor.choice` takes at a signature's symbol values."""
        names, sides, relations = self.builder.conditions(names, code, relations)
        results = self.builder.slot_list(results)
        take_then, take_else = self.region(then, results), self.region(other, results)

        def decided(symbols: dict[str, int]) -> Step:
            key = tuple(map(symbols.__getitem__, names))
            taken = take_then if conditions_hold(sides, relations, key) else take_else
            return taken(symbols)

        return decided

    def branch(self, cond: Any, then: Any, other: Any, results: Any) -> Template:
        results = self.builder.slot_list(results)
        take_then, take_else = self.region(then, results), self.region(other, results)
        cond = self.builder.slot(cond)
        return lambda symbols: if_step(cond, take_then(symbols), take_else(symbols))

    def loop(self, kind: str, fields: list[Any]) -> Template:
        """An `scf.for` or `scf.while` around its routed blocks."""
        b = self.builder
        if kind == "for":
            label, lb, ub, stride, induction, carried, inits, results, body = fields
            bounds = (b.slot(lb), b.slot(ub), b.slot(stride))
            induction, carried, inits = b.slot(induction), b.slot_list(carried), b.slot_list(inits)
            results, (steps, yielded) = b.slot_list(results), body
            templates, yielded = self.templates(steps), b.slot_list(yielded)

            def for_route(symbols: dict[str, int]) -> Step:
                body = (self.route(templates, symbols), yielded)
                return for_step(str(label), bounds, induction, carried, inits, results, body)

            return for_route
        before_args, after_args, inits, results, before, after = fields
        args = (b.slot_list(before_args), b.slot_list(after_args))
        inits, results = b.slot_list(inits), b.slot_list(results)
        blocks = [(self.templates(steps), b.slot_list(out)) for steps, out in (before, after)]

        def while_route(symbols: dict[str, int]) -> Step:
            (check, condition), (body, yielded) = blocks
            before = (self.route(check, symbols), condition)
            return while_step(args, inits, results, before, (self.route(body, symbols), yielded))

        return while_route


def plain_launch(entry: Any) -> bool:
    """Whether a plain step is a launch with no dims to check (which a route runs as a
    known launch)."""
    return entry[0] == "launch" and (len(entry) == 5 or (len(entry) == 6 and entry[5] is None))


def known_launch_step(parts: Launch) -> Step:
    """A launch of a route: as the variant's launch step until the VM has bound the
    launch on the calling thread at these inputs' shapes, then that launch's closure
    called directly (see the module's doc), after the same allocation; inputs at other
    shapes take the variant's way again."""
    kernel, inputs, outputs, kept = parts
    single = outputs[0] if len(outputs) == 1 else None
    place = None if kept is None else kept[0]  # (the single output's place in the arena)
    # once learned: the inputs' shapes, the plan's outputs (the first's shape and
    # dtype), the launch's closure and the device's lock
    shapes: tuple[Any, ...] | None = None
    outs: list[Any] = []
    shape: tuple[int, ...] = ()
    dtype: Any = None
    ready: Any = None
    lock: Any = None
    learning = True  # (False once the launch is known to run otherwise for good)

    def step(call: Call, env: Env) -> None:
        arrays = list(map(env.__getitem__, inputs))  # `launch_inputs`, without its frame
        if not all(map(C_CONTIGUOUS, arrays)):
            arrays = [contiguous(a) for a in arrays]
        if shapes is None or tuple(map(ARRAY_SHAPE, arrays)) != shapes:
            if shapes is None and learning:
                call.launched = None  # (`Kernel.run` sets it to the launch it runs)
                made = kernel.run(arrays, call, kept)
                learn(arrays, call)
            else:
                made = kernel.run(arrays, call, kept)
        elif single is not None:  # the common case, without `allocated`'s frame
            arena = call.arena
            try:
                if place is None or arena is None:
                    output = np.empty(shape, dtype)
                else:
                    output = arena.array(place, shape, dtype)
            except MemoryError:
                raise not_allocated(outs) from None
            arrays.append(output)
            with lock:  # as `Kernel.run`: one launch at a time per device
                ready(arrays)
            env[single] = output
            return
        else:
            made = allocated(outs, kept, call.arena)
            with lock:
                ready([*arrays, *made])
        for slot, value in zip(outputs, made, strict=True):
            env[slot] = value

    def learn(arrays: list[Any], call: Call) -> None:
        """Keep what a known shape's launch needs, once the VM has bound it on the
        calling thread (`Kernel.run` calls that closure then too); give up on a launch
        with nothing to run or planned for the cores."""
        nonlocal shapes, outs, shape, dtype, ready, lock, learning
        spec = call.launched
        if spec is None:  # nothing to run (no output element), at every call
            learning = False
            return
        launch = spec.ready[bool(spec.alias_args)]
        if launch is None:
            learning = not spec.planned  # (planned for the cores: never on this thread)
            return
        plan = kernel.known_plan(arrays, call.symbols)
        if plan is not None and plan[1] is spec:
            outs, ready, lock = plan[0], launch, spec.memory.lock
            shape, dtype = outs[0]
            shapes = tuple(map(ARRAY_SHAPE, arrays))  # last: the others are set

    return step


def known_stack_step(
    members: list[Launch], general: Step, moves: tuple[list[int], list[int]]
) -> Step:
    """A stack of launches of a route: as the variant's stack step (`general`) until the VM
    can run its members at these shapes as one closure (`vm.stack_runner`), then that
    closure after the members' allocations; inputs at other shapes take the variant's
    way again. `moves`: the slots the stack yields and those of its results."""
    yielded, results = moves
    known: list[tuple[list[tuple[Any, ...]], list[Any], Any]] = []
    """Once learned: each member's inputs' shapes and plan's outputs, the closure."""
    hopeless: list[bool] = []
    """Not empty once the stack is known to run otherwise at these shapes for good."""

    def step(call: Call, env: Env) -> None:
        if not known:
            general(call, env)
            if not hopeless:
                learn(call, env)
            return
        shapes, outs, run = known[0]
        launches = []
        for (_, inputs, outputs, kept), want, planned in zip(members, shapes, outs, strict=True):
            arrays = launch_inputs(env, inputs)
            if tuple(map(ARRAY_SHAPE, arrays)) != want:
                general(call, env)
                return
            made = allocated(planned, kept, call.arena)
            store(env, outputs, made)
            arrays += made
            launches.append(arrays)
        run(launches)
        store(env, results, [env[y] for y in yielded])

    def learn(call: Call, env: Env) -> None:
        """Keep the members' shapes and plans and the stack's closure, once the VM has
        planned every member and runs them on the calling thread."""
        first = members[0][0].known_plan(launch_inputs(env, members[0][1]), call.symbols)
        if first is not None and first[1] is not None and not first[1].planned:
            return  # (not planned yet: the members plan together)
        inputs = [launch_inputs(env, parts[1]) for parts in members]
        plans = [
            kernel.known_plan(arrays, call.symbols)
            for (kernel, *_), arrays in zip(members, inputs, strict=True)
        ]
        specs = [None if plan is None else plan[1] for plan in plans]
        if any(spec is None for spec in specs):  # (a member with no output element)
            hopeless.append(True)
            return
        members_known = [(plan[0], plan[1]) for plan in plans if plan is not None]
        run = vm.stack_runner([(spec, bool(spec.alias_args)) for _, spec in members_known])
        if run is None:
            if all(spec.planned for _, spec in members_known):  # (the cores share it)
                hopeless.append(True)
        elif not known:
            shapes = [tuple(map(ARRAY_SHAPE, arrays)) for arrays in inputs]
            known.append((shapes, [outs for outs, _ in members_known], run))

    return step
