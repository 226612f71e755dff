"""The host function's steps from plain data: what `dvm.compile` runs around the kernels.

`dvm.host_export` describes a lowered host function as plain data (lists, numbers,
text, and expressions as generated code, `dvm.expr_code`): one entry per op, with the
slots of the call's environment it reads and writes. `StepBuilder` turns each entry
into a closure over the environment, as `dvm.host.HostCompiler` does from the xDSL ops;
the compile cache keeps the data, so that a cache hit builds the steps without xDSL or
sympy. The data is untrusted (it may come from a file): every entry is checked as it
is built, and anything malformed is a ValueError.

The closures themselves are made by the `*_step` functions below, from slots and steps
already built: `HostCompiler` calls them too, so that both paths run the same code.

The kinds of entries (each a list whose first element is the kind):

- `["constant", out, value]`, `["dim", label, source, index, out]`,
  `["extract", label, source, [indices], out]`;
- `["launch", kernel, [inputs], [outputs], kept, dims]`: `kept` the outputs' places in
  the call's arena (or null), `dims` the check that no dim taken from an index is
  negative (or null);
- `["stack", parallel, [steps], [yielded], [results]]`,
  `["choice", names, code, [relations], then, else, [results]]` (a region:
  `[[steps], [yielded]]`), `["if", cond, then, else, [results]]`,
  `["for", label, lb, ub, step, induction, [carried], [inits], [results], body]`,
  `["while", [before args], [after args], [inits], [results], before, after]`;
- `["bind", step, [[slot, axis or null, symbol]], guards]`, `["bind_args",
  [[slot, axis or null, symbol]], guards]`: a step that binds symbols (a value, or a
  tensor's dim), then checks the guards that became decidable
  (`dvm.guard_notes.GuardSet`).
"""

from __future__ import annotations

import binascii
import operator
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

from dvm import vm
from dvm.declared import dtype_named
from dvm.errors import ExecutionError, ShapeError
from dvm.expr_code import checked_code, function_of_code
from dvm.guard_notes import GuardCheck, GuardNote, GuardSet
from dvm.launches import MAX_KERNEL_PLANS, Call, Env, Kernel, launch_inputs

Step = Callable[[Call, Env], None]
"""One op of the host function, compiled: it reads and writes the call's environment."""
Launch = tuple[Kernel, list[int], list[int], list[int | None] | None]
"""A launch's kernel, the slots of its inputs and outputs, and its outputs' arena places."""
Body = tuple[list[Step], list[int]]
"""A block's steps and the slots of what its terminator yields."""
SymbolBind = tuple[int, int | None, str]
"""A symbol a step's result makes: its slot, the axis whose dim it is (None: the value)."""

RELATIONS: dict[str, Callable[[int, int], bool]] = {
    "<=": operator.le,
    "<": operator.lt,
    ">=": operator.ge,
    ">": operator.gt,
    "==": operator.eq,
    "!=": operator.ne,
}
"""The relations of a choice's conditions."""

APPLY = cast(Callable[[Callable[[int, int], bool], int, int], bool], operator.call)
"""`APPLY(relation, left, right)`: a condition's relation applied in C (`choice_step`)."""


def checked_indices(label: str, indices: Sequence[int], shape: tuple[int, ...]) -> tuple[int, ...]:
    """`tensor.extract`'s indices, or an ExecutionError naming the op (`label`, see
    `located`), the index out of range and its axis' size. The compiled program checks
    with this too, so both say the same."""
    for axis, (index, size) in enumerate(zip(indices, shape, strict=True)):
        if not 0 <= index < size:
            raise ExecutionError(
                f"{label}: index {index} is out of range for axis {axis} of size {size} "
                f"(shape {shape})"
            )
    return tuple(indices)


def checked_axis(label: str, index: int, shape: tuple[int, ...]) -> int:
    """`tensor.dim`'s index, or an ExecutionError naming the op, the index and the rank."""
    if not 0 <= index < len(shape):
        raise ExecutionError(
            f"{label}: index {index} is out of range for rank {len(shape)} (shape {shape})"
        )
    return index


def check_step(label: str, step: int) -> None:
    """`scf.for`'s step is positive, or an ExecutionError naming the loop."""
    if step <= 0:
        raise ExecutionError(f"{label}: step must be positive, got {step}")


def run_steps(steps: list[Step], call: Call, env: Env) -> None:
    for s in steps:
        s(call, env)


def store(env: Env, slots: list[int], values: Sequence[Any]) -> None:
    """`values` into the slots `slots` (read them all first where they may overlap)."""
    for slot, value in zip(slots, values, strict=True):
        env[slot] = value


def region_step(steps: list[Step], yielded: list[int], results: list[int]) -> Step:
    """The steps of a region, then its yielded values copied to the op's results."""

    def step(call: Call, env: Env) -> None:
        run_steps(steps, call, env)
        store(env, results, [env[y] for y in yielded])

    return step


def constant_step(out: int, value: Any) -> Step:
    def step(call: Call, env: Env) -> None:
        env[out] = value

    return step


def dim_step(label: str, src: int, index: int, out: int) -> Step:
    def step(call: Call, env: Env) -> None:
        shape = env[src].shape
        env[out] = shape[checked_axis(label, env[index], shape)]

    return step


def extract_step(label: str, src: int, indices: list[int], out: int) -> Step:
    def step(call: Call, env: Env) -> None:
        array = env[src]
        env[out] = array[checked_indices(label, [env[i] for i in indices], array.shape)]

    return step


def launch_step(parts: Launch) -> Step:
    kernel, inputs, outputs, kept = parts
    if len(outputs) == 1:  # the common case, without a zip
        (output,) = outputs

        def step_one(call: Call, env: Env) -> None:
            (env[output],) = kernel.run(launch_inputs(env, inputs), call, kept)

        return step_one

    def step(call: Call, env: Env) -> None:
        arrays = launch_inputs(env, inputs)
        for i, value in zip(outputs, kernel.run(arrays, call, kept), strict=True):
            env[i] = value

    return step


def negative_dims_step(
    dims: Callable[..., tuple[int, ...]],
    names: list[str],
    shapes: list[tuple[str, int]],
    step: Step,
) -> Step:
    """`step`, after checking that no shape its kernel takes from index values has a
    negative dim: `dims` gives them all from the symbols `names`, `shapes` says each
    shape's label and rank."""

    def checked(call: Call, env: Env) -> None:
        values = dims(*[call.symbols[n] for n in names])
        if min(values) < 0:
            start = 0
            for label, rank in shapes:
                got = list(values[start : start + rank])
                if min(got) < 0:
                    raise ShapeError(f"{label}: got a negative dim in shape {got}")
                start += rank
        step(call, env)

    return checked


def stack_step(
    members: list[Launch],
    parallel: bool,
    one_by_one: Step,
    body: Body,
    results: list[int],
    checks: Sequence[Step] = (),
) -> Step:
    """The launches `members` as one (`vm.launch_stack`), their kernels on the cores at
    once when `parallel`, after `checks` of the data they read; `one_by_one` (the
    stack's region) when profiling, for each kernel's statistics."""
    yielded = body[1]

    def stacked(call: Call, env: Env) -> None:
        if call.stats is not None:
            one_by_one(call, env)
            return
        for check in checks:
            check(call, env)
        bound = []
        for kernel, inputs, outputs, kept in members:
            arrays = launch_inputs(env, inputs)
            spec, made, unplanned = kernel.bind(arrays, call, kept)
            if spec is not None:
                bound.append((spec, [*arrays, *made], unplanned))
            for i, value in zip(outputs, made, strict=True):
                env[i] = value
        vm.launch_stack(bound, fresh=True, in_turn=parallel, checked=True)  # as `Kernel.run`
        store(env, results, [env[y] for y in yielded])

    return stacked


def choice_step(
    names: list[str],
    sides: Callable[..., tuple[int, ...]],
    relations: list[Callable[[int, int], bool]],
    take_then: Step,
    take_else: Step,
) -> Step:
    """`take_then` where every condition holds (`sides` gives both sides of each from
    the symbols `names`, left and right in turn), else `take_else`; decided once per
    value of the symbols, in C-level maps (each new shape decides: a generator's frame
    cost it more than the relations)."""
    decided: dict[tuple[int, ...], bool] = {}

    def step(call: Call, env: Env) -> None:
        key = tuple(map(call.symbols.__getitem__, names))
        holds = decided.get(key)
        if holds is None:
            holds = conditions_hold(sides, relations, key)
            if len(decided) >= MAX_KERNEL_PLANS:
                decided.clear()
            decided[key] = holds
        (take_then if holds else take_else)(call, env)

    return step


def conditions_hold(
    sides: Callable[..., tuple[int, ...]],
    relations: list[Callable[[int, int], bool]],
    key: tuple[int, ...],
) -> bool:
    """Whether a choice's every condition holds for the values `key` of its symbols."""
    values = sides(*key)
    return all(map(APPLY, relations, values[::2], values[1::2]))


def if_step(cond: int, take_then: Step, take_else: Step) -> Step:
    def step(call: Call, env: Env) -> None:
        (take_then if bool(env[cond]) else take_else)(call, env)

    return step


def for_step(
    label: str,
    bounds: tuple[int, int, int],
    induction: int,
    carried: list[int],
    inits: list[int],
    results: list[int],
    body: Body,
) -> Step:
    """`scf.for`: `bounds` are the slots of its lower bound, upper bound and step."""
    lb, ub, stride = bounds
    steps, yielded = body

    def step(call: Call, env: Env) -> None:
        check_step(label, env[stride])
        store(env, carried, [env[i] for i in inits])
        for i in range(env[lb], env[ub], env[stride]):
            env[induction] = i
            run_steps(steps, call, env)
            # all read first: a yielded value may be another carried value (a swap)
            store(env, carried, [env[y] for y in yielded])
        store(env, results, [env[c] for c in carried])

    return step


def while_step(
    args: tuple[list[int], list[int]],
    inits: list[int],
    results: list[int],
    before: Body,
    after: Body,
) -> Step:
    """`scf.while`: `args` are the slots of its `before` and `after` blocks' arguments;
    `before` yields the condition and the values forwarded to `after`."""
    before_args, after_args = args
    check_steps, condition = before
    body_steps, yielded = after

    def step(call: Call, env: Env) -> None:
        values = [env[i] for i in inits]
        while True:
            store(env, before_args, values)
            run_steps(check_steps, call, env)
            go, *forwarded = (env[i] for i in condition)
            if not bool(go):
                break
            store(env, after_args, forwarded)
            run_steps(body_steps, call, env)
            values = [env[i] for i in yielded]
        store(env, results, forwarded)

    return step


def bind_step(step: Step, binds: list[SymbolBind], check: GuardCheck) -> Step:
    """`step`, then binding the symbols its results' dims or values are, then checking
    the guards that became decidable."""

    def binding(call: Call, env: Env) -> None:
        step(call, env)
        for slot, axis, name in binds:
            call.symbols[name] = env[slot] if axis is None else env[slot].shape[axis]
        check(call.symbols)

    return binding


def bind_args_step(binds: list[SymbolBind], check: GuardCheck) -> Step:
    """Binding the symbols a block's arguments are (an induction variable, an index a
    loop carries, a carried tensor's dim the loop changes), then checking the guards
    that became decidable."""

    def binding(call: Call, env: Env) -> None:
        for slot, axis, name in binds:
            call.symbols[name] = env[slot] if axis is None else env[slot].shape[axis]
        check(call.symbols)

    return binding


def blas_launches(steps: Any, kernels: dict[str, Kernel]) -> int:
    """How many launches that call BLAS one run of the plain `steps` may make, at most
    (2 for any in a loop: "several")."""
    count = 0
    for entry in steps:
        kind = entry[0]
        if kind == "launch":
            count += kernels[entry[1]].uses_blas
        elif kind == "bind":
            count += blas_launches([entry[1]], kernels)
        elif kind == "stack":
            count += blas_launches(entry[2], kernels)
        elif kind in ("choice", "if"):  # one branch runs
            then, other = entry[-3], entry[-2]
            count += max(blas_launches(then[0], kernels), blas_launches(other[0], kernels))
        elif kind == "for":
            count += 2 * blas_launches(entry[-1][0], kernels)
        elif kind == "while":
            count += 2 * (
                blas_launches(entry[-2][0], kernels) + blas_launches(entry[-1][0], kernels)
            )
    return count


def constant_of(data: Any) -> Any:
    """A constant's value: `["index", n]`, `["scalar", dtype, base64]` or
    `["array", dtype, shape, base64]` (a read-only array: every call shares it)."""
    kind = data[0]
    if kind == "index":
        if type(data[1]) is not int:
            raise ValueError("an index constant is no int")
        return data[1]
    dtype = dtype_named(data[1])
    shape = () if kind == "scalar" else tuple(int(d) for d in data[2])
    raw = binascii.a2b_base64(data[-1], strict_mode=True)  # (`base64`'s C function)
    array = np.frombuffer(raw, dtype).reshape(shape)  # read-only: its buffer is bytes
    return array[()] if kind == "scalar" else array


def constant_data(value: Any) -> list[Any]:
    """How `constant_of` reads `value` back (an int for `index`, a numpy scalar or array)."""
    if isinstance(value, int):
        return ["index", value]
    array = np.asarray(value)  # (bytes in C order; `ascontiguousarray` makes 0-d 1-d)
    data = binascii.b2a_base64(array.tobytes(), newline=False).decode()
    if isinstance(value, np.generic):
        return ["scalar", array.dtype.name, data]
    return ["array", array.dtype.name, list(array.shape), data]


class StepBuilder:
    """Closures from the plain steps of one host function."""

    def __init__(
        self,
        kernels: dict[str, Kernel],
        slots: int,
        guard_failed: Callable[[GuardNote, int, int], Exception],
        function: str,
    ):
        self.kernels = kernels
        self.slots = slots
        self.guard_failed = guard_failed
        self.function = function
        self.compiled: dict[str, Callable[..., tuple[int, ...]]] = {}
        """The functions of choices' conditions, by their symbols and code."""

    def slot(self, value: Any) -> int:
        if type(value) is not int or not 0 <= value < self.slots:
            raise ValueError(f"{value!r} is no slot")
        return value

    def slot_list(self, values: Any) -> list[int]:
        return [self.slot(v) for v in values]

    def steps(self, entries: Any) -> list[Step]:
        return [self.step(e) for e in entries]

    def body(self, data: Any) -> Body:
        steps, yielded = data
        return self.steps(steps), self.slot_list(yielded)

    def region(self, data: Any, results: list[int]) -> Step:
        return region_step(*self.body(data), results)

    def step(self, entry: Any) -> Step:
        kind, *fields = entry
        handler = getattr(self, f"make_{kind}", None) if isinstance(kind, str) else None
        if handler is None:
            raise ValueError(f"no host step {kind!r}")
        return handler(*fields)

    def guards(self, data: Any) -> GuardCheck:
        if data is None:
            return lambda symbols: None
        return GuardSet.from_json(data).checker(self.guard_failed, f"guards: {self.function}")

    # -- values -------------------------------------------------------------------------

    def make_constant(self, out: Any, value: Any) -> Step:
        return constant_step(self.slot(out), constant_of(value))

    def make_dim(self, label: Any, src: Any, index: Any, out: Any) -> Step:
        return dim_step(str(label), self.slot(src), self.slot(index), self.slot(out))

    def make_extract(self, label: Any, src: Any, indices: Any, out: Any) -> Step:
        return extract_step(str(label), self.slot(src), self.slot_list(indices), self.slot(out))

    # -- kernels ------------------------------------------------------------------------

    def launch_parts(self, name: Any, inputs: Any, outputs: Any, kept: Any) -> Launch:
        kernel = self.kernels[name]
        ins, outs = self.slot_list(inputs), self.slot_list(outputs)
        if (len(ins), len(outs)) != (kernel.inputs, len(kernel.program.args) - kernel.inputs):
            raise ValueError(f"a launch of {name} with other arguments than it takes")
        if kept is not None:
            kept = [None if k is None else int(k) for k in kept]
            if len(kept) != len(outs):
                raise ValueError("not one place per output")
        return kernel, ins, outs, kept

    def make_launch(
        self, name: Any, inputs: Any, outputs: Any, kept: Any, dims: Any = None
    ) -> Step:
        step = launch_step(self.launch_parts(name, inputs, outputs, kept))
        return step if dims is None else self.checked_dims(name, dims, step)

    def checked_dims(self, name: Any, data: Any, step: Step) -> Step:
        """`step`, after checking the dims its kernel takes from index values: `data`
        holds the symbols, the dims as code and each shape's label and rank."""
        names = list(data["names"])
        shapes = [(str(label), int(rank)) for label, rank in data["shapes"]]
        code = checked_code(data["code"], names)
        if len(code[1]) != sum(rank for _, rank in shapes):
            raise ValueError("not one dim per rank")
        dims = function_of_code(code, names, f"launch dims: {name}")
        return negative_dims_step(dims, names, shapes, step)

    def make_stack(self, parallel: Any, steps: Any, yielded: Any, results: Any) -> Step:
        """Its launches as one (`vm.launch_stack`), or one by one when it holds anything
        but plain launches (checks, bindings)."""
        results, body = self.slot_list(results), self.body([steps, yielded])
        one_by_one = region_step(*body, results)
        plain = [e for e in steps if e[0] == "launch" and len(e) == 6 and e[5] is None]
        if len(plain) != len(steps) or len(plain) < 2:
            return one_by_one
        members = [self.launch_parts(*e[1:5]) for e in plain]
        return stack_step(members, bool(parallel), one_by_one, body, results)

    def make_choice(
        self, names: Any, code: Any, relations: Any, then: Any, other: Any, results: Any
    ) -> Step:
        names, sides, relations = self.conditions(names, code, relations)
        results = self.slot_list(results)
        take_then, take_else = self.region(then, results), self.region(other, results)
        return choice_step(names, sides, relations, take_then, take_else)

    def conditions(
        self, names: Any, code: Any, relations: Any
    ) -> tuple[list[str], Callable[..., tuple[int, ...]], list[Callable[[int, int], bool]]]:
        """A choice's symbols, the function giving its conditions' sides and their
        relations; the function compiled once per choice (a route of a signature,
        `dvm.host_route`, asks again)."""
        names = list(names)
        key = repr((names, code))
        sides = self.compiled.get(key)
        if sides is None:
            origin = f"choice conditions: {self.function}"
            sides = self.compiled[key] = function_of_code(checked_code(code, names), names, origin)
        return names, sides, [RELATIONS[r] for r in relations]

    # -- control flow -------------------------------------------------------------------

    def make_if(self, cond: Any, then: Any, other: Any, results: Any) -> Step:
        results = self.slot_list(results)
        return if_step(self.slot(cond), self.region(then, results), self.region(other, results))

    def make_for(
        self,
        label: Any,
        lb: Any,
        ub: Any,
        stride: Any,
        induction: Any,
        carried: Any,
        inits: Any,
        results: Any,
        body: Any,
    ) -> Step:
        bounds = (self.slot(lb), self.slot(ub), self.slot(stride))
        return for_step(
            str(label),
            bounds,
            self.slot(induction),
            self.slot_list(carried),
            self.slot_list(inits),
            self.slot_list(results),
            self.body(body),
        )

    def make_while(
        self,
        before_args: Any,
        after_args: Any,
        inits: Any,
        results: Any,
        before: Any,
        after: Any,
    ) -> Step:
        args = (self.slot_list(before_args), self.slot_list(after_args))
        inits, results = self.slot_list(inits), self.slot_list(results)
        return while_step(args, inits, results, self.body(before), self.body(after))

    # -- symbols ------------------------------------------------------------------------

    def make_bind(self, inner: Any, binds: Any, guards: Any) -> Step:
        """`inner`, then binding the symbols its results' dims or values are, then
        checking the guards that became decidable."""
        return bind_step(self.step(inner), self.symbol_binds(binds), self.guards(guards))

    def make_bind_args(self, binds: Any, guards: Any) -> Step:
        """Binding the symbols a block's arguments are, then checking the guards that
        became decidable."""
        return bind_args_step(self.symbol_binds(binds), self.guards(guards))

    def symbol_binds(self, binds: Any) -> list[SymbolBind]:
        return [
            (self.slot(slot), None if axis is None else int(axis), str(name))
            for slot, axis, name in binds
        ]
