"""One compiled variant of a program: the pipeline's result for one pattern of
argument dims and `index` arguments fixed to values (`Fixed`).

`Variant.from_plain` builds a variant from its plain form (`dvm.host_export`, made by
`dvm.variant_ir` from the lowered program, or read from the compile cache): its kernels
(`launches.Kernel`), its host steps (`host_steps.StepBuilder`) and its guards, sorted:
those over argument dims are checked once per signature, those over index arguments
at every call, those over values made on the way when they are made. A call runs the
variant's steps (`Variant.run_in`), in an `Arena` of its own. Nothing here needs xDSL
or sympy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from dvm import vm
from dvm.declared import Declared, owned
from dvm.errors import ShapeError
from dvm.guard_notes import GuardFailed, GuardNote, GuardSet, failed_guard
from dvm.host_route import RouteBuilder, Template
from dvm.host_steps import Step, StepBuilder, blas_launches
from dvm.host_validate import validate_steps
from dvm.launches import Arena, Call, Env, Kernel

Fixed = frozenset[tuple[int, int, int]]
"""What a variant fixes: (argument, axis, value) for an argument's dim fixed to a value,
(argument, -1, value) for an `index` argument. A broadcast's side that is 1 at a call
is a static 1 in the variant with the symbols it reads fixed to their values there."""


class Variant:
    """The program compiled for one pattern of fixed values. (A plain class: see
    `Kernel`.) Made from its declaration, steps and guards; the rest is filled in as it
    is built."""

    def __init__(
        self,
        declared: Declared,
        steps: list[Step],
        results: list[int],
        others: tuple[None, ...],
        symbols: list[tuple[int, int, str]],
        guards: list[GuardNote],
        check_guards: Callable[..., tuple[int, ...]],
        guard_names: list[str] | None = None,
    ) -> None:
        self.declared = declared
        """Its entry function's name and arguments (their types with the fixed dims static)."""
        self.steps = steps
        self.results = results
        self.others = others
        """The empty slots after the arguments' (which are the first ones)."""
        self.symbols = symbols
        """(argument, axis, symbol) for every symbol an argument's dim names."""
        self.guards = guards
        """The guards over argument dims, checked once per signature."""
        self.check_guards = check_guards
        self.guard_names = guard_names or []
        self.indices: list[tuple[int, str]] = []
        """(argument, symbol) of each `index` argument: bound per call."""
        self.check_indices: Callable[[dict[str, int]], None] = lambda symbols: None
        """The guards over index arguments' values (checked per call)."""
        self.stretchable: list[tuple[str, frozenset[tuple[int, int]]]] = []
        """Argument symbols that a broadcast checked during the call (against an index
        argument or a value made on the way) assumed equal to the other side, with their
        (argument, axis): a call where one is 1 takes the variant with those dims fixed to
        1, which broadcasts them (the call cannot re-specialize once running)."""
        self.places = 0
        """Its launch results that never leave a call (places in an `Arena`)."""
        self.arenas: list[Arena] = []
        """Arenas free for its calls (as many as ever ran at once)."""
        self.kernels: dict[str, Kernel] = {}
        """Its kernels by name."""
        self.launches = 0
        """The launches its host function holds."""
        self.fixed: Fixed = frozenset()
        """What it fixes (its key among its program's variants)."""
        self.late = False
        """Whether a call binds symbols (index arguments, values made on the way),
        so that it needs its own copy of the signature's symbols (`runtime.BoundVariant`)."""
        self.runs: Callable[..., list[Any]] = self.run
        """How a call runs the steps: `run`, or `run` with BLAS held at one thread from
        start to end when it may make several launches that call BLAS (each would
        otherwise set and restore the count)."""
        self.blas_device: vm.DeviceSpec | None = None
        """The device whose BLAS its calls hold, if they do (see `runs`)."""
        self.lone: list[int] | None = None
        """The argument slots the launch reads when a call is that one launch, its output
        the one result (no arena, no symbol bound during the call): a signature met
        before then runs it as one closure (`launches.known_launch`)."""
        self.routes: tuple[RouteBuilder, Any] | None = None
        """For a variant whose calls bind no symbol and are not one launch: its
        builder and plain steps, from which each signature gets its route (`Route`)."""
        self.templates: list[Template] | None = None
        """The templates of its routes, made at its first route."""

    def run_in(self, args: Sequence[Any], call: Call, steps: list[Step] | None = None) -> list[Any]:
        """`runs` for `call` (of `steps`: a route, or the variant's own) with an arena
        of its own, if it has intermediates to keep: a free one (taken atomically: two
        calls never take one), or a new one; given back as the call ends, when its
        intermediates are dead."""
        if not self.places:
            return self.runs(args, call, steps)
        try:
            call.arena = self.arenas.pop()
        except IndexError:
            call.arena = Arena(self.places)
        try:
            return self.runs(args, call, steps)
        finally:
            self.arenas.append(call.arena)

    def route(self, symbols: dict[str, int]) -> list[Step]:
        """Its steps for a signature's symbol values (see `dvm.host_route`)."""
        assert self.routes is not None
        builder, plain_steps = self.routes
        if self.templates is None:
            self.templates = builder.templates(plain_steps)
        return builder.route(self.templates, symbols)

    def direct(self, symbols: dict[str, int]) -> Route | None:
        """What a signature of these symbol values runs its calls by (`runtime.BoundVariant`'s
        `direct`): a `Route`, for a variant that has them."""
        return None if self.routes is None else Route(self, symbols)

    @staticmethod
    def from_plain(
        data: dict[str, Any], binaries: dict[str, vm.Program], ahead: bool = True
    ) -> Variant:
        """The variant `host_export.export_variant` describes, running `binaries` (each
        validated by the VM's loader, and checked against the kernel's declarations; the steps
        checked as a whole by `host_validate`).
        `ahead` prepares the kernels the compile would (their generated Python, see
        `vm.prepare`) now; otherwise each is prepared at its first launch, as a variant
        read from the compile cache is: generating and compiling that Python is most of
        what a hit would otherwise cost, and a kernel never launched never pays it."""
        declared = Declared.from_json(data["declared"])
        function = f"@{declared.function}"
        symbols = [(*checked_axis(declared, i, a), checked_name(n)) for i, a, n in data["symbols"]]
        guards, index_guards = (GuardSet.from_json(data[k]) for k in ("guards", "index_guards"))
        kernels: dict[str, Kernel] = {}
        for name, plain in data["kernels"].items():
            if plain["name"] != name:
                raise ValueError(f"the kernel {name!r} is declared as {plain['name']!r}")
            kernels[name] = Kernel.from_plain(plain, binaries[name], ahead)
        slots = int(data["slots"])
        if slots < len(declared.types):
            raise ValueError("fewer slots than arguments")
        builder = StepBuilder(kernels, slots, lambda n, a, b: ShapeError(n.message(a, b)), function)
        steps = builder.steps(data["steps"])
        results = builder.slot_list(data["results"])
        validate_steps(data, declared.types, kernels)  # the program as a whole
        check = guards.sides(f"guards: {function}") if guards.notes else (lambda *_: ())
        others = (None,) * (slots - len(declared.types))
        variant = Variant(declared, steps, results, others, symbols, guards.notes, check)
        variant.guard_names = guards.names
        variant.indices = [
            (checked_index(declared, i), checked_name(n)) for i, n in data["indices"]
        ]
        variant.kernels = kernels
        variant.places = int(data["places"])
        variant.launches = int(data["launches"])
        variant.late = bool(data["late"])
        variant.check_indices = index_guards.checker(GuardFailed, f"index guards: {function}")
        variant.stretchable = [
            (checked_name(name), frozenset(checked_axis(declared, i, a) for i, a in where))
            for name, where in data["stretchable"]
        ]
        variant.lone = lone_launch(data, builder, len(declared.types))
        if variant.lone is None and not variant.late:
            variant.routes = (RouteBuilder(builder), data["steps"])
        if blas_launches(data["steps"], kernels) > 1:
            variant.blas_device = next(k.device for k in kernels.values() if k.uses_blas)
            variant.runs = variant.hold_blas_from_now_on
        return variant

    def hold_blas_from_now_on(
        self, args: Sequence[Any], call: Call, steps: list[Step] | None = None
    ) -> list[Any]:
        """The first call of a variant whose calls hold BLAS (see `runs`): it makes `runs`
        hold it, which imports the VM's launcher (a compile cache hit imports none of it,
        the first call does), then runs."""
        self.runs = partial(vm.with_blas_held, self.blas_device, self.run)
        return self.runs(args, call, steps)

    def call_symbols(self, symbols: dict[str, int], args: Sequence[Any]) -> dict[str, int]:
        """The symbols of one call: the signature's, and those the call binds."""
        if not self.late:
            return symbols
        symbols = dict(symbols)
        symbols.update([(name, args[i]) for i, name in self.indices])  # ints: `scalar_values`
        self.check_indices(symbols)
        return symbols

    def bind(self, args: Sequence[Any]) -> dict[str, int]:
        return {name: args[i].shape[a] for i, a, name in self.symbols}

    def units_to_stretch(self, symbols: dict[str, int]) -> Fixed:
        """The argument dims to fix to 1 for these symbols (see `stretchable`)."""
        return frozenset(
            (i, a, 1) for name, where in self.stretchable if symbols[name] == 1 for i, a in where
        )

    def failed_guard(self, symbols: dict[str, int]) -> tuple[GuardNote, int, int] | None:
        return failed_guard(self.guards, self.check_guards(*(symbols[n] for n in self.guard_names)))

    def run(self, args: Sequence[Any], call: Call, steps: list[Step] | None = None) -> list[Any]:
        env: Env = [*args, *self.others]
        for step in self.steps if steps is None else steps:
            step(call, env)
        return list(map(env.__getitem__, self.results))


_SEEN: list[Step] = []
"""`Route.steps` after a signature's first call (its route is made at the second)."""


class Route:
    """The calls of one signature of a variant that has routes (`Variant.routes`): the
    first runs the variant's steps, the next make the signature's route (`dvm.host_route`)
    and run it. Returns the results as a call does (new arrays; one value or a tuple)."""

    __slots__ = ("steps", "symbols", "variant")

    def __init__(self, variant: Variant, symbols: dict[str, int]) -> None:
        self.variant = variant
        self.symbols = symbols
        self.steps: list[Step] | None = None
        """The route, once made (`_SEEN` after the first call: a signature met once
        never makes one)."""

    def __call__(self, args: Sequence[Any]) -> Any:
        steps = self.steps
        if steps is None:
            self.steps = _SEEN
        elif steps is _SEEN:
            steps = self.steps = self.variant.route(self.symbols)
        outputs = owned(self.variant.run_in(args, Call(self.symbols), steps), args)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


def lone_launch(data: dict[str, Any], builder: StepBuilder, arity: int) -> list[int] | None:
    """`Variant.lone` of the variant `data` describes, whose first `arity` slots are
    its arguments."""
    steps = data["steps"]
    if len(steps) != 1 or data["places"] or data["late"]:
        return None
    kind, *fields = steps[0]
    if kind != "launch" or len(fields) != 5 or fields[4] is not None:  # (no dims to check)
        return None
    _, inputs, outputs, _ = builder.launch_parts(*fields[:4])
    if len(outputs) != 1 or outputs != data["results"] or any(i >= arity for i in inputs):
        return None
    return inputs


def checked_name(name: Any) -> str:
    """`name`, once it is a symbol's name (a ValueError otherwise)."""
    if not (isinstance(name, str) and name.isidentifier()):
        raise ValueError(f"{name!r} is no symbol's name")
    return name


def checked_axis(declared: Declared, argument: Any, axis: Any) -> tuple[int, int]:
    """(argument, axis), once it names an axis of a tensor argument."""
    if type(argument) is not int or not 0 <= argument < len(declared.types):
        raise ValueError(f"{argument!r} is no argument")
    shape = declared.types[argument].shape
    if shape is None or type(axis) is not int or not 0 <= axis < len(shape):
        raise ValueError(f"{axis!r} is no axis of argument {argument}")
    return argument, axis


def checked_index(declared: Declared, argument: Any) -> int:
    """`argument`, once it is an `index` argument's position."""
    if type(argument) is not int or not 0 <= argument < len(declared.types):
        raise ValueError(f"{argument!r} is no argument")
    if not declared.types[argument].index:
        raise ValueError(f"argument {argument} is no index")
    return argument
