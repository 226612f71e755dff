"""The validation of a host function's plain steps: what a call trusts of them, checked
once before they run, as the VM's validator checks a kernel before it is specialized.

`dvm.host_steps.StepBuilder` checks each entry alone (its kind, its fields, its slots in
range). A plain form read from the compile cache may still be wrong as a whole: edited
and signed again (a forged or foreign entry, a bug in its writer), it could read a slot
nothing wrote, a symbol nothing bound, or give a kernel arguments it does not take, and
a call would then fail with a Python error, not as the program does. `validate_steps`
refuses such a program (a ValueError) by walking its steps once, as a type checker:

- each slot is written by one step (the arguments' at the start), and read only where
  that write is sure to have run: after the step, in the same region or one inside it
  (a region's own values stay inside it, as in SSA);
- each slot has a type (a tensor's element type and rank, an index, a scalar's type),
  and each step reads the types it takes: a launch its kernel's arguments' element
  types and ranks, a `dim` or `extract` a tensor (of as many dims as indices), a loop
  integer bounds; what both branches of an `if` yield agrees, as what a loop carries;
- each symbol a step reads (a kernel's params, a choice's conditions, a guard's sides)
  is bound on every path to it: by the arguments' dims and index arguments, or by a
  step before it (a symbol bound in one branch only is unknown after the branch);
- each launch result kept in the call's arena has a place of its own, in range;
- the guards checked at a call's start read the argument dims' symbols only (the
  index guards, the index arguments' too).

What it cannot tell is a wrong number: a constant, a guard's or a size's expression
rewritten (still integer arithmetic, `dvm.expr_code`) makes a program compute another
result, or fail with the errors a call can always fail with (a guard, a shape the VM
refuses), but never runs other code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dvm.declared import ArgumentType, dtype_named
from dvm.launches import Kernel

Type = tuple[str, Any, int]
"""A slot's type: ("tensor", dtype, rank), ("scalar", dtype, 0) or ("index", None, 0)."""
INDEX: Type = ("index", None, 0)


def argument_type(declared: ArgumentType) -> Type:
    if declared.index:
        return INDEX
    if declared.shape is None:
        return ("scalar", declared.dtype, 0)
    return ("tensor", declared.dtype, len(declared.shape))


def constant_type(data: Sequence[Any]) -> Type:
    """The type of a constant's value (`host_steps.constant_of`)."""
    if data[0] == "index":
        return INDEX
    if data[0] == "scalar":
        return ("scalar", dtype_named(data[1]), 0)
    return ("tensor", dtype_named(data[1]), len(data[2]))


def is_integer(t: Type) -> bool:
    """Whether a value of type `t` is an integer (an index, or an integer scalar)."""
    return t == INDEX or (t[0] == "scalar" and t[1].kind in "iu")


class Scope:
    """What is sure to be defined at a point of the steps: slots and symbols."""

    def __init__(self, slots: set[int], symbols: set[str]):
        self.slots = slots
        self.symbols = symbols

    def inner(self) -> Scope:
        """The scope of a region inside: it sees this one's; its own stay inside."""
        return Scope(set(self.slots), set(self.symbols))


def need_symbols(known: set[str], names: Any, what: str) -> None:
    """Refuse `names` unless all are `known` (bound where `what` reads them)."""
    unknown = set(names) - known
    if unknown:
        raise ValueError(f"{what} reads {sorted(unknown)}, unbound there")


STEP_KINDS = {"constant", "dim", "extract", "launch", "stack", "choice", "if", "for", "while"}
STEP_KINDS |= {"bind", "bind_args"}
"""The kinds of steps (`dvm.host_steps`): each is checked by `HostValidator.check_<kind>`."""


class HostValidator:
    """Checks the plain steps of one host function (see the module's docstring)."""

    def __init__(self, kernels: dict[str, Kernel], slots: int, places: int):
        self.kernels = kernels
        self.types: list[Type | None] = [None] * slots
        """Each slot's type, once a step writes it."""
        self.places = places
        self.used_places: set[int] = set()
        self.binds = False
        """Whether a step binds a symbol (a call then needs its own symbols)."""

    # -- slots and symbols --------------------------------------------------------------

    def read(self, scope: Scope, slot: int) -> Type:
        """The type of `slot`, once it is sure to be written in `scope`."""
        t = self.types[slot]
        if slot not in scope.slots or t is None:
            raise ValueError(f"a step reads slot {slot}, which nothing wrote before it")
        return t

    def read_all(self, scope: Scope, slots: Sequence[int]) -> list[Type]:
        return [self.read(scope, s) for s in slots]

    def read_integer(self, scope: Scope, slot: int) -> None:
        if not is_integer(self.read(scope, slot)):
            raise ValueError(f"slot {slot} holds no integer")

    def write(self, scope: Scope, slot: int, t: Type) -> None:
        """`slot` written with a value of type `t` (by its one writer)."""
        if self.types[slot] is not None:
            raise ValueError(f"slot {slot} is written twice")
        self.types[slot] = t
        scope.slots.add(slot)

    def write_all(self, scope: Scope, slots: Sequence[int], types: Sequence[Type]) -> None:
        if len(slots) != len(types):
            raise ValueError(f"{len(types)} values for {len(slots)} slots")
        for slot, t in zip(slots, types, strict=True):
            self.write(scope, slot, t)

    # -- steps --------------------------------------------------------------------------

    def steps(self, scope: Scope, entries: Sequence[Any]) -> None:
        for entry in entries:
            kind, *fields = entry
            if kind not in STEP_KINDS:
                raise ValueError(f"no host step {kind!r}")
            getattr(self, f"check_{kind}")(scope, *fields)

    def region(self, scope: Scope, data: Sequence[Any]) -> tuple[Scope, list[Type]]:
        """The scope a region `[[steps], [yielded]]` ends in, and the types it yields."""
        steps, yielded = data
        inner = scope.inner()
        self.steps(inner, steps)
        return inner, self.read_all(inner, yielded)

    def check_constant(self, scope: Scope, out: int, value: Any) -> None:
        self.write(scope, out, constant_type(value))

    def check_dim(self, scope: Scope, label: Any, src: int, index: int, out: int) -> None:
        if self.read(scope, src)[0] != "tensor":
            raise ValueError(f"{label}: the dim of no tensor")
        self.read_integer(scope, index)
        self.write(scope, out, INDEX)

    def check_extract(self, scope: Scope, label: Any, src: int, indices: Any, out: int) -> None:
        kind, dtype, rank = self.read(scope, src)
        if kind != "tensor" or rank != len(indices):
            raise ValueError(f"{label}: {len(indices)} indices of no tensor of that rank")
        for i in indices:
            self.read_integer(scope, i)
        self.write(scope, out, ("scalar", dtype, 0))

    def check_launch(
        self, scope: Scope, name: str, inputs: Any, outputs: Any, kept: Any, dims: Any = None
    ) -> None:
        kernel = self.kernels[name]
        args = [("tensor", a.dtype.np, a.rank) for a in kernel.program.args]
        if self.read_all(scope, inputs) != args[: kernel.inputs]:
            raise ValueError(f"a launch of {name} with inputs of other types than it takes")
        need_symbols(scope.symbols, kernel.key_symbols, f"a launch of {name}")
        if dims is not None:
            need_symbols(scope.symbols, dims["names"], f"the dims of a launch of {name}")
        for place in kept or ():
            if place is not None and (type(place) is not int or not 0 <= place < self.places):
                raise ValueError(f"{place!r} is no place of the arena")
            if place in self.used_places:
                raise ValueError(f"two launch results kept at place {place}")
            if place is not None:
                self.used_places.add(place)
        self.write_all(scope, outputs, args[kernel.inputs :])

    def check_stack(
        self, scope: Scope, parallel: Any, steps: Any, yielded: Any, results: Any
    ) -> None:
        """(Its region always runs whole: what it binds is bound after it.)"""
        inner, types = self.region(scope, [steps, yielded])
        scope.symbols |= inner.symbols
        self.write_all(scope, results, types)

    def branches(self, scope: Scope, then: Any, other: Any, results: Any) -> None:
        """Two regions one of which runs: they yield the same types, and only what both
        bind is bound after them."""
        then_scope, then_types = self.region(scope, then)
        else_scope, else_types = self.region(scope, other)
        if then_types != else_types:
            raise ValueError("branches that yield values of other types")
        scope.symbols |= then_scope.symbols & else_scope.symbols
        self.write_all(scope, results, then_types)

    def check_choice(
        self,
        scope: Scope,
        names: Any,
        code: Any,
        relations: Any,
        then: Any,
        other: Any,
        results: Any,
    ) -> None:
        need_symbols(scope.symbols, names, "a choice")
        self.branches(scope, then, other, results)

    def check_if(self, scope: Scope, cond: int, then: Any, other: Any, results: Any) -> None:
        if self.read(scope, cond)[0] == "tensor":
            raise ValueError("an `if` on a tensor")
        self.branches(scope, then, other, results)

    def check_for(
        self,
        scope: Scope,
        label: Any,
        lb: int,
        ub: int,
        stride: int,
        induction: int,
        carried: Any,
        inits: Any,
        results: Any,
        body: Any,
    ) -> None:
        """(Its body may not run: nothing of it is known after the loop.)"""
        for bound in (lb, ub, stride):
            self.read_integer(scope, bound)
        types = self.read_all(scope, inits)
        inner = scope.inner()
        self.write(inner, induction, INDEX)
        self.write_all(inner, carried, types)
        if self.region(inner, body)[1] != types:
            raise ValueError(f"{label}: a loop that yields other types than it carries")
        self.write_all(scope, results, types)

    def check_while(
        self,
        scope: Scope,
        before_args: Any,
        after_args: Any,
        inits: Any,
        results: Any,
        before: Any,
        after: Any,
    ) -> None:
        """(Its `before` region runs at least once: what it binds is bound after.)"""
        types = self.read_all(scope, inits)
        inner = scope.inner()
        self.write_all(inner, before_args, types)
        checked, condition = self.region(inner, before)
        if not condition or condition[0][0] == "tensor":
            raise ValueError("a `while` whose condition is no scalar")
        forwarded = condition[1:]
        body = checked.inner()
        self.write_all(body, after_args, forwarded)
        if self.region(body, after)[1] != types:
            raise ValueError("a `while` that yields other types than it takes")
        scope.symbols |= checked.symbols
        self.write_all(scope, results, forwarded)

    def check_bind(self, scope: Scope, inner: Any, binds: Any, guards: Any) -> None:
        self.steps(scope, [inner])
        self.check_bind_args(scope, binds, guards)

    def check_bind_args(self, scope: Scope, binds: Any, guards: Any) -> None:
        for slot, axis, name in binds:
            t = self.read(scope, slot)
            if axis is None and not is_integer(t):
                raise ValueError(f"{name} bound to a value that is no integer")
            if axis is not None and not (t[0] == "tensor" and 0 <= axis < t[2]):
                raise ValueError(f"{name} bound to axis {axis} of no tensor of that rank")
            self.bind(scope, name)
        self.guards_bound(scope, guards)

    def bind(self, scope: Scope, name: str) -> None:
        if name in scope.symbols:
            raise ValueError(f"{name} bound again")
        scope.symbols.add(name)
        self.binds = True

    @staticmethod
    def guards_bound(scope: Scope, guards: Any) -> None:
        if guards is not None:
            need_symbols(scope.symbols, guards["names"], "a guard")


def validate_steps(
    data: dict[str, Any], arguments: Sequence[ArgumentType], kernels: dict[str, Kernel]
) -> None:
    """Check the plain form `data` (`host_export.export_variant`, its entries each
    well-formed: `StepBuilder` built them) of a function taking `arguments` and
    launching `kernels`; a ValueError says what is wrong."""
    argument_symbols = {name for _, _, name in data["symbols"]}
    index_symbols = {name for _, name in data["indices"]}
    known = argument_symbols | index_symbols
    need_symbols(argument_symbols, data["guards"]["names"], "a guard")
    need_symbols(argument_symbols, [name for name, _ in data["stretchable"]], "a broadcast")
    need_symbols(known, data["index_guards"]["names"], "an index guard")
    validator = HostValidator(kernels, int(data["slots"]), int(data["places"]))
    scope = Scope(set(), set(known))
    validator.write_all(scope, range(len(arguments)), [argument_type(a) for a in arguments])
    validator.steps(scope, data["steps"])
    validator.read_all(scope, data["results"])
    if (index_symbols or validator.binds) and not data["late"]:
        raise ValueError("a function that binds symbols in a call, not marked so")
