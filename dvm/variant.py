"""One compiled variant of a program: the pipeline's result for one pattern of
argument dims fixed to 1.

`Variant.build` runs `dvm-pipeline` on a copy of the program (`lower`; the compile
cache may hold its result instead, `dvm.compile_cache`), builds its kernels
(`launches.Kernel`) and its host steps (`host.HostCompiler`), and sorts its guards:
those over argument dims are checked once per signature, those over index arguments
at every call, those over values made on the way when they are made. A call runs the
variant's steps (`Variant.run_in`), in an `Arena` of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import sympy
from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation

from dvm import vm
from dvm.arguments import find_entry
from dvm.codegen import python_function
from dvm.collectives import SINGLE_PROCESS, World
from dvm.dialects import bytecode as bc
from dvm.dialects import tensor as t
from dvm.dialects import tile
from dvm.dialects.collectives import CollectiveOp
from dvm.errors import CallError, ShapeError
from dvm.guards import describe_guard, guard_check, guard_symbols, stretchable_symbols
from dvm.host import HostCompiler, Step
from dvm.launches import Arena, Call, Env, Kernel
from dvm.lowering.pipeline import DvmPipelinePass
from dvm.passes.symbolic import Guard, argument_shapes, function_guards, index_symbol_name


@dataclass
class Variant:
    """The program compiled for one pattern of dims fixed to 1."""

    func: FuncOp
    steps: list[Step]
    results: list[int]
    others: tuple[None, ...]
    """The empty slots after the arguments' (which are the first ones)."""
    symbols: list[tuple[int, int, str]]
    """(argument, axis, symbol) for every symbol an argument's dim names."""
    guards: list[Guard]
    check_guards: Callable[..., tuple[int, ...]]
    guard_names: list[str]
    indices: list[tuple[int, str]] = field(default_factory=list)
    """(argument, symbol) of each `index` argument: bound per call."""
    check_indices: Callable[[dict[str, int]], None] = lambda symbols: None
    """The guards over index arguments' values (checked per call)."""
    stretchable: list[tuple[str, frozenset[tuple[int, int]]]] = field(default_factory=list)
    """Argument symbols that a broadcast checked during the call (against an index
    argument or a value made on the way) assumed equal to the other side, with their
    (argument, axis): a call where one is 1 takes the variant with those dims fixed to
    1, which broadcasts them (the call cannot re-specialize once running)."""
    places: int = 0
    """Its launch results that never leave a call (places in an `Arena`)."""
    arenas: list[Arena] = field(default_factory=list)
    """Arenas free for its calls (as many as ever ran at once)."""
    kernels: dict[str, Kernel] = field(default_factory=dict)
    """Its kernels by name."""
    late: bool = False
    """Whether a call binds symbols (index arguments, values made on the way),
    so that it needs its own copy of the signature's symbols (`runtime.BoundVariant`)."""
    runs: Callable[[Sequence[Any], Call], list[Any]] = field(init=False, repr=False)
    """How a call runs the steps: `run`, or `run` with BLAS held at one thread from
    start to end when it may make several launches that call BLAS (each would
    otherwise set and restore the count)."""

    def __post_init__(self) -> None:
        self.runs = self.run

    def run_in(self, args: Sequence[Any], call: Call) -> list[Any]:
        """`runs` for `call` with an arena of its own, if it has intermediates to keep:
        a free one (taken atomically: two calls never take one), or a new one; given
        back as the call ends, when its intermediates are dead."""
        if not self.places:
            return self.runs(args, call)
        try:
            call.arena = self.arenas.pop()
        except IndexError:
            call.arena = Arena(self.places)
        try:
            return self.runs(args, call)
        finally:
            self.arenas.append(call.arena)

    @staticmethod
    def build(
        source: ModuleOp, entry: str | None, device: str, world: World = SINGLE_PROCESS
    ) -> Variant:
        return Variant.from_lowered(lower(source, device), entry, world=world)

    @staticmethod
    def from_lowered(
        module: ModuleOp,
        entry: str | None,
        binaries: dict[str, vm.Program] | None = None,
        world: World = SINGLE_PROCESS,
    ) -> Variant:
        """The variant of a module `lower` made, its kernels validated by the VM;
        `binaries` are their programs decoded from binaries (the module's programs then
        need to declare their arguments only); `world` is what its collectives span."""
        func = find_entry(module, entry)
        calls = [op for op in func.walk() if isinstance(op, tile.LaunchOp)]
        programs = {p.sym_name.data: p for p in module.ops if isinstance(p, bc.ProgramOp)}
        fallbacks = fallback_kernels(calls)
        kernels = {
            name: Kernel.build(
                programs[name],
                len(c.inputs),
                prepare=name not in fallbacks,
                binary=None if binaries is None else binaries[name],
            )
            for c in calls
            for name in [c.callee.root_reference.data]
        }
        symbols = [
            (i, a, str(d))
            for i, shape in enumerate(argument_shapes(func))
            if shape is not None
            for a, d in enumerate(shape)
            if isinstance(d, sympy.Symbol)
        ]
        names = sorted({name for _, _, name in symbols})
        indices = [
            (i, index_symbol_name(a))
            for i, a in enumerate(func.body.block.args)
            if isinstance(a.type, IndexType)
        ]
        # Guards over argument dims are checked once per signature; those over
        # index arguments per call; those over symbols made on the way when made.
        guards, per_call, late = [], [], []
        for g in function_guards(func):
            used = {str(s) for s in guard_symbols(g)}
            if used <= set(names):
                guards.append(g)
            elif used <= {*names, *(n for _, n in indices)}:
                per_call.append(g)
            else:
                late.append(g)
        known = {*names, *(n for _, n in indices)}
        compiler = HostCompiler(module, kernels, known, late)
        compiler.argument_dims = set(names)
        compiler.function = function = f"@{func.sym_name.data}"
        # (a guard over values the call made fails with what it made: an ExecutionError)
        compiler.guard_failed = lambda g, a, b: ShapeError(describe_guard(func, symbols, g, a, b))
        arg_slots = [compiler.index(a) for a in func.body.block.args]
        assert arg_slots == list(range(len(arg_slots)))  # the first slots (see `run`)
        compiler.world = world
        first = [compiler.world_binding()] if any(map(is_collective, func.walk())) else []
        steps, results = compiler.block(func.body.block)
        steps = first + steps
        sides = [e for g in guards for e in (g.lhs, g.rhs)]
        origin = f"guards: {function}"
        check = python_function(sides, names, origin) if sides else (lambda *_: ())
        others = (None,) * (len(compiler.slot) - len(arg_slots))
        variant = Variant(func, steps, results, others, symbols, guards, check, names)
        variant.indices = indices
        variant.kernels = kernels
        variant.places = compiler.places
        variant.late = bool(indices) or compiler.known != known
        variant.check_indices = guard_check(
            per_call,
            lambda g, a, b: CallError(describe_guard(func, symbols, g, a, b)),
            f"index guards: {function}",
        )
        variant.stretchable = stretchable_symbols([*per_call, *late], symbols)
        if blas_launches(func.body.block, kernels) > 1:
            device = next(k.device for k in kernels.values() if k.uses_blas)
            variant.runs = partial(vm.with_blas_held, device, variant.run)
        return variant

    def call_symbols(self, symbols: dict[str, int], args: Sequence[Any]) -> dict[str, int]:
        """The symbols of one call: the signature's, and those the call binds."""
        if not self.late:
            return symbols
        symbols = dict(symbols)
        for i, name in self.indices:
            symbols[name] = int(args[i])
        self.check_indices(symbols)
        return symbols

    def bind(self, args: Sequence[Any]) -> dict[str, int]:
        return {name: args[i].shape[a] for i, a, name in self.symbols}

    def units_to_stretch(self, symbols: dict[str, int]) -> frozenset[tuple[int, int]]:
        """The argument dims to fix to 1 for these symbols (see `stretchable`)."""
        ones: frozenset[tuple[int, int]] = frozenset()
        for name, where in self.stretchable:
            if symbols[name] == 1:
                ones |= where
        return ones

    def failed_guard(self, symbols: dict[str, int]) -> tuple[Guard, int, int] | None:
        values = self.check_guards(*(symbols[n] for n in self.guard_names))
        for k, guard in enumerate(self.guards):
            if values[2 * k] != values[2 * k + 1]:
                return guard, values[2 * k], values[2 * k + 1]
        return None

    def run(self, args: Sequence[Any], call: Call) -> list[Any]:
        env: Env = [*args, *self.others]
        for step in self.steps:
            step(call, env)
        return list(map(env.__getitem__, self.results))


def is_collective(op: Operation) -> bool:
    return isinstance(op, CollectiveOp)


def lower(source: ModuleOp, device: str) -> ModuleOp:
    """A copy of `source` after `dvm-pipeline` for `device`."""
    module = source.clone()
    DvmPipelinePass(device=device).apply(Context(), module)
    return module


def fallback_kernels(launches: Sequence[tile.LaunchOp]) -> set[str]:
    """The kernels launched only in `else` regions of `tensor.choice`s: those for the
    shapes beyond a guarded kernel's bound (rows too long for local memory, more
    columns than an epilogue reduces), which many programs never meet. They are
    prepared at their first launch, not in the compile."""
    guarded: set[str] = set()
    unguarded: set[str] = set()
    for launch in launches:
        name = launch.callee.root_reference.data
        (guarded if in_else_region(launch) else unguarded).add(name)
    return guarded - unguarded


def in_else_region(op: Operation) -> bool:
    """Whether `op` is inside the `else` region of some `tensor.choice`."""
    region = op.parent_region()
    while region is not None:
        parent = region.parent_op()
        if parent is None:
            return False
        if isinstance(parent, t.ChoiceOp) and region is parent.else_body:
            return True
        region = parent.parent_region()
    return False


def blas_launches(block: Block, kernels: dict[str, Kernel]) -> int:
    """How many launches that call BLAS one run of `block` may make, at most (2 for
    any in a loop: "several")."""
    count = 0
    for op in block.ops:
        if isinstance(op, tile.LaunchOp):
            count += kernels[op.callee.root_reference.data].uses_blas
            continue
        regions = [blas_launches(r.block, kernels) for r in op.regions if r.blocks]
        if isinstance(op, t.ChoiceOp | scf.IfOp):  # one branch runs
            count += max(regions, default=0)
        elif isinstance(op, scf.ForOp | scf.WhileOp):
            count += 2 * sum(regions)
        else:
            count += sum(regions)
    return count
