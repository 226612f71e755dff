"""The host function as closures: what `dvm.compile` makes of all but the kernels.

After lowering, the entry function holds control flow (`scf.if`, `scf.for`,
`scf.while`, `tensor.choice`), arithmetic on scalars, and kernel launches
(`tile.launch`, grouped in `tensor.stack`s). `HostCompiler` turns each op once into a
step: a closure over the call's environment, a list with one slot per SSA value. A
call runs the steps in order; a step that makes a new shape symbol binds it and checks
the guards over it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import sympy
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.dialects.func import ReturnOp
from xdsl.ir import Attribute, Block, Operation, SSAValue

from dvm import vm
from dvm.arguments import is_float, numpy_dtype, to_value
from dvm.arith_ops import (
    ARITH_OPS,
    arith_function,
    check_step,
    checked_axis,
    checked_indices,
    dense_array,
)
from dvm.codegen import python_function
from dvm.collectives import SINGLE_PROCESS, World, run_collective
from dvm.dialects import tensor as t
from dvm.dialects import tile
from dvm.dialects.collectives import COLLECTIVE_OPS
from dvm.dialects.index_ops import ScatterAddOp
from dvm.errors import CompileError, ShapeError
from dvm.grouped_matmul_checks import checked_group_sizes
from dvm.guards import guard_check, guard_symbols
from dvm.index_checks import checked_takes
from dvm.interpret_index_ops import scatter_add
from dvm.interpret_scans import SCAN_FUNCTIONS
from dvm.interpret_shape_ops import SHAPE_FUNCTIONS
from dvm.launches import MAX_KERNEL_PLANS, Call, Env, Kernel, launch_inputs
from dvm.lowering.tensor_to_tile import INDEX_DIMS
from dvm.passes.errors import located
from dvm.passes.symbolic import (
    ARG_VALUES,
    SHAPE,
    SHAPES,
    WORLD,
    Guard,
    Shape,
    optional_exprs,
    shape_from_attr,
    value_exprs,
)
from dvm.slice_checks import checked_slices

HOST_FUNCTIONS = {**SCAN_FUNCTIONS, **SHAPE_FUNCTIONS}
"""The tensor ops the host runs in numpy (no kernel holds them)."""

Step = Callable[[Call, Env], None]
"""One op of the host function, compiled: it reads and writes the call's environment."""
Launch = tuple[Kernel, list[int], list[int], list[int | None] | None]
"""A launch's kernel, the slots of its inputs and outputs, and its outputs' arena places."""

KEEP_INTERMEDIATES = True
"""Whether programs compiled from now on keep their intermediates' memory (`Arena`): a
switch for measuring what that saves (`benchmarks/specialization.py`)."""


def read_by_launches_only(value: SSAValue) -> bool:
    """Whether only kernel launches read `value`, directly or as what a `tensor.stack`,
    a `tensor.choice` or an `scf.if` yields: it never leaves the call."""
    for use in value.uses:
        op, parent = use.operation, use.operation.parent_op()
        if isinstance(op, tile.LaunchOp):
            continue
        if not isinstance(op, t.YieldOp | scf.YieldOp) or not isinstance(
            parent, t.StackOp | t.ChoiceOp | scf.IfOp
        ):
            return False
        if not read_by_launches_only(parent.results[use.index]):
            return False
    return True


def no_step(call: Call, env: Env) -> None:
    """A step that does nothing (what a check alone runs before)."""


class HostCompiler:
    """Turns the host function (after lowering) into a list of closures over
    an environment: one slot per SSA value.

    Symbols that no argument dim gives are bound during the call, by the
    step that makes their value: an `scf.if` result whose dims the branches
    disagree on (`r0_1`), an index nobody knows before (`i3`). Guards over
    such symbols (`late`) are checked by that step, as soon as all their
    symbols are bound.
    """

    def __init__(
        self,
        module: ModuleOp,
        kernels: dict[str, Kernel],
        known: set[str] | None = None,
        late: Sequence[Guard] = (),
    ):
        self.module = module
        self.kernels = kernels
        self.slot: dict[SSAValue, int] = {}
        self.known = set(known or ())
        """Symbols bound when the steps compiled so far have run."""
        self.late = list(late)
        """Guards not yet checked: some symbol of theirs is not known yet."""
        self.guard_failed: Callable[[Guard, int, int], Exception] = lambda g, a, b: ShapeError(
            f"{g.origin} needs {g}, but {g.lhs} is {a} and {g.rhs} is {b}"
        )
        """The error of a late guard that fails: the call made a value that breaks it."""
        self.places = 0
        """Launch results that never leave a call: each has a place in its arena."""
        self.argument_dims: set[str] = set()
        """The symbols of the arguments' dims (never negative)."""
        self.function = ""
        """The host function's name (`@main`), which names its generated code."""
        self.world: World = SINGLE_PROCESS
        """The processes the collectives span (`dvm.collectives`)."""

    def index(self, value: SSAValue) -> int:
        if value not in self.slot:
            self.slot[value] = len(self.slot)
        return self.slot[value]

    def block(self, block: Block) -> tuple[list[Step], list[int]]:
        """The steps of a block, and the slots of what its terminator yields."""
        steps: list[Step] = []
        yielded: list[int] = []
        for op in block.ops:
            if isinstance(op, scf.YieldOp | t.YieldOp | ReturnOp | scf.ConditionOp):
                yielded = [self.index(v) for v in op.operands]
            else:
                steps.append(self.op(op))
        return steps, yielded

    def op(self, op: Operation) -> Step:
        handler = getattr(self, "op_" + type(op).__name__, None)
        if handler is not None:
            step = handler(op)
        elif type(op) in ARITH_OPS:
            step = self.scalar_arith(op)
        elif type(op) in HOST_FUNCTIONS:
            step = self.on_host(op)
        elif type(op) in COLLECTIVE_OPS:
            step = self.collective(op)
        else:
            raise CompileError(f"{located(op)}: dvm.compile does not support {op.name}")
        return self.binding(op, step)

    def binding(self, op: Operation, step: Step) -> Step:
        """`step`, then binding the new symbols its results' dims or value
        are, then checking the guards that became decidable."""
        binds: list[tuple[int, int | None, str]] = []
        for k, result in enumerate(op.results):
            for axis, name in enumerate(result_symbols(op, k)):
                if name is not None and name not in self.known:
                    binds.append((self.index(result), axis, name))
                    self.known.add(name)
        for value, name in self.new_value_symbols(op.results, value_exprs(op)):
            binds.append((self.index(value), None, name))
        if not binds:
            return step
        check = self.decidable_guards()

        def bound(call: Call, env: Env) -> None:
            step(call, env)
            for slot, axis, name in binds:
                call.symbols[name] = env[slot] if axis is None else env[slot].shape[axis]
            check(call.symbols)

        return bound

    def argument_binding(self, op: Operation, region: int) -> Step | None:
        """Binding the new symbols that the arguments of `op`'s block `region` are (an
        induction variable, an index a loop carries), then checking the guards that became
        decidable: a step for each time the block starts (None: nothing to bind)."""
        texts = op.attributes.get(ARG_VALUES)
        if not isinstance(texts, ArrayAttr):
            return None
        args = op.regions[region].block.args
        entries = texts.data[region]
        assert isinstance(entries, ArrayAttr)
        binds = [
            (self.index(a), name)
            for a, name in self.new_value_symbols(args, optional_exprs(entries))
        ]
        if not binds:
            return None
        check = self.decidable_guards()

        def bound(call: Call, env: Env) -> None:
            for slot, name in binds:
                call.symbols[name] = env[slot]
            check(call.symbols)

        return bound

    def new_value_symbols(
        self, values: Sequence[SSAValue], exprs: Sequence[sympy.Expr | None]
    ) -> list[tuple[SSAValue, str]]:
        """The index values whose expression (`VALUE`) is a symbol not known yet, with
        it; from now on it is known."""
        found = []
        for value, expr in zip(values, exprs, strict=True):
            if isinstance(expr, sympy.Symbol) and str(expr) not in self.known:
                found.append((value, str(expr)))
                self.known.add(str(expr))
        return found

    def decidable_guards(self) -> Callable[[dict[str, int]], None]:
        """A check of the late guards whose symbols are all known now."""
        ready = [g for g in self.late if {str(s) for s in guard_symbols(g)} <= self.known]
        self.late = [g for g in self.late if g not in ready]
        return guard_check(ready, self.guard_failed, f"guards: {self.function}")

    # -- values ---------------------------------------------------------------------

    def op_ConstantOp(self, op: arith.ConstantOp) -> Step:
        value = constant_value(op)
        if isinstance(value, np.ndarray):  # every call shares it: nobody may write to it
            value.flags.writeable = False
        out = self.index(op.result)

        def step(call: Call, env: Env) -> None:
            env[out] = value

        return step

    def op_DimOp(self, op: t.DimOp) -> Step:
        src, index, out = self.index(op.source), self.index(op.index), self.index(op.result)
        label = located(op)

        def step(call: Call, env: Env) -> None:
            shape = env[src].shape
            env[out] = shape[checked_axis(label, env[index], shape)]

        return step

    def op_ExtractOp(self, op: t.ExtractOp) -> Step:
        src, out = self.index(op.tensor), self.index(op.result)
        indices = [self.index(v) for v in op.indices]
        label = located(op)

        def step(call: Call, env: Env) -> None:
            array = env[src]
            env[out] = array[checked_indices(label, [env[i] for i in indices], array.shape)]

        return step

    def on_host(self, op: Operation) -> Step:
        """A tensor op no kernel holds (top_k, from_elements, cast),
        computed in numpy as `dvm.interpret` computes it."""
        args = [self.index(v) for v in op.operands]
        outs = [(self.index(r), r.type) for r in op.results]
        fn = HOST_FUNCTIONS[type(op)]

        def step(call: Call, env: Env) -> None:
            raw = fn(op, [env[i] for i in args])
            for (out, type_), value in zip(outs, raw, strict=True):
                env[out] = to_value(op, value, type_)

        return step

    def collective(self, op: Operation) -> Step:
        """A communication step: the world's collective on this process's operand."""
        src, out, world = self.index(op.operands[0]), self.index(op.results[0]), self.world

        def step(call: Call, env: Env) -> None:
            env[out] = run_collective(world, op, env[src])

        return step

    def world_binding(self) -> Step:
        """The first step of a program with collectives: binding the world size (`WORLD`)
        and checking the guards that become decidable (a reduce-scatter's axis divides by
        it)."""
        self.known.add(WORLD.name)
        check, world = self.decidable_guards(), self.world

        def step(call: Call, env: Env) -> None:
            call.symbols[WORLD.name] = world.size()
            check(call.symbols)

        return step

    def op_ScatterAddOp(self, op: ScatterAddOp) -> Step:
        """On the host, as the reference interpreter runs it: only for a program lowered
        without `fuse`, which makes every scatter_add a kernel of its own."""
        args, out = [self.index(v) for v in op.operands], self.index(op.result)
        label, axis = located(op), op.dim

        def step(call: Call, env: Env) -> None:
            env[out] = scatter_add(label, axis, *(env[a] for a in args))

        return step

    def scalar_arith(self, op: Operation) -> Step:
        """An arith op on `index`, integer or float scalars, computed as `dvm.interpret`
        computes it (`arith_function`), with numpy's warnings off as they are there."""
        fn = arith_function(op)
        args = [self.index(v) for v in op.operands]
        outs = [(self.index(r), value_maker(r.type)) for r in op.results]
        (out, make), *_ = outs
        # float arithmetic on numpy scalars warns of overflow; integers never do
        floats = any(not isinstance(r.type, IndexType) and is_float(r.type) for r in op.results)

        def step(call: Call, env: Env) -> None:
            if floats:
                with np.errstate(all="ignore"):
                    value = fn(*[env[i] for i in args])
            else:
                value = fn(*[env[i] for i in args])
            if len(outs) == 1:
                env[out] = make(value)
            else:
                for (slot, make_one), one in zip(outs, value, strict=True):
                    env[slot] = make_one(one)

        return step

    # -- kernels ----------------------------------------------------------------------

    def op_LaunchOp(self, op: tile.LaunchOp) -> Step:
        parts = self.launch_parts(op)
        return self.checked_dims(op, self.launch_checks(op, parts, self.launch_step(parts)))

    @staticmethod
    def launch_checks(op: tile.LaunchOp, parts: Launch, step: Step) -> Step:
        """`step`, after the checks of the data its kernel reads through views that
        cannot check it: its indices, its slices' bounds, its grouped matmuls' sizes."""
        step = checked_takes(op.attributes, parts[1], step)
        return checked_slices(op.attributes, checked_group_sizes(op.attributes, parts[1], step))

    def checked_dims(self, op: tile.LaunchOp, step: Step) -> Step:
        """`step`, after checking that no shape its kernel takes from index values has a
        negative dim (`INDEX_DIMS`; those of argument dims alone never do)."""
        entries = op.attributes.get(INDEX_DIMS)
        shapes: list[tuple[str, Shape]] = []
        for entry in entries.data if isinstance(entries, ArrayAttr) else ():
            assert isinstance(entry, DictionaryAttr)
            label, shape = entry.data["op"], shape_from_attr(entry.data["shape"])
            assert isinstance(label, StringAttr)
            if not all(self.never_negative(d) for d in shape):
                shapes.append((label.data, shape))
        if not shapes:
            return step
        names = sorted({str(s) for _, shape in shapes for d in shape for s in d.free_symbols})
        origin = f"launch dims: {op.callee.root_reference.data}"
        dims = python_function([d for _, shape in shapes for d in shape], names, origin)

        def checked(call: Call, env: Env) -> None:
            values = dims(*[call.symbols[n] for n in names])
            if min(values) < 0:
                start = 0
                for label, shape in shapes:
                    got = list(values[start : start + len(shape)])
                    if min(got) < 0:
                        raise ShapeError(f"{label}: got a negative dim in shape {got}")
                    start += len(shape)
            step(call, env)

        return checked

    def never_negative(self, dim: sympy.Expr) -> bool:
        """Whether a dim is at least 0 however the program runs: made of argument dims."""
        symbols = {str(s) for s in dim.free_symbols}
        return symbols <= self.argument_dims and bool(dim.is_nonnegative)

    @staticmethod
    def launch_step(parts: Launch) -> Step:
        kernel, inputs, outputs, kept = parts

        def step(call: Call, env: Env) -> None:
            arrays = launch_inputs(env, inputs)
            for i, value in zip(outputs, kernel.run(arrays, call, kept), strict=True):
                env[i] = value

        return step

    def launch_parts(self, op: tile.LaunchOp) -> Launch:
        """A launch's kernel, the slots of its inputs and outputs, and the places of its
        outputs in the call's arena (None: all in new memory)."""
        kernel = self.kernels[op.callee.root_reference.data]
        inputs = [self.index(v) for v in op.inputs]
        outputs = [self.index(v) for v in op.outputs]
        places: list[int | None] = []  # in the call's arena, per output (None: new memory)
        for v in op.outputs:
            keep = KEEP_INTERMEDIATES and read_by_launches_only(v)
            places.append(self.places if keep else None)
            self.places += keep
        kept = places if any(j is not None for j in places) else None
        return kernel, inputs, outputs, kept

    def op_StackOp(self, op: t.StackOp) -> Step:
        """Its launches as one (`vm.launch_stack`); one by one when profiling (for each
        kernel's statistics), or when the stack holds anything but launches whose
        results bind no new symbol."""
        results = [self.index(r) for r in op.results]
        steps: list[Step] = []
        members: list[Launch] = []
        checks: list[Step] = []
        """The members' checks of slices and group sizes, made before the stack launches."""
        yielded: list[int] = []
        for inner in op.body.block.ops:
            if isinstance(inner, t.YieldOp):
                yielded = [self.index(v) for v in inner.operands]
                continue
            if isinstance(inner, tile.LaunchOp):
                parts = self.launch_parts(inner)
                plain = self.launch_step(parts)
                checked = self.launch_checks(inner, parts, plain)
                step = self.binding(inner, self.checked_dims(inner, checked))
                if step is checked:
                    members.append(parts)
                    if checked is not plain:
                        checks.append(self.launch_checks(inner, parts, no_step))
            else:
                step = self.op(inner)
            steps.append(step)
        one_by_one = self.region_step(steps, yielded, results)
        if len(members) != len(steps) or len(members) < 2:
            return one_by_one
        in_turn = op.mode.data == "parallel"

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
            vm.launch_stack(bound, fresh=True, in_turn=in_turn)
            for r, y in zip(results, yielded, strict=True):
                env[r] = env[y]

        return stacked

    def op_ChoiceOp(self, op: t.ChoiceOp) -> Step:
        conditions = [c.split() for c in op.conditions.data]
        names = sorted({str(s) for lhs, _, rhs in conditions for s in (lhs - rhs).free_symbols})
        sides = python_function(
            [e for lhs, _, rhs in conditions for e in (lhs, rhs)],
            names,
            f"choice conditions: {self.function}",
        )
        relations = [relation for _, relation, _ in conditions]
        then_steps, then_yield = self.block(op.then_body.block)
        else_steps, else_yield = self.block(op.else_body.block)
        results = [self.index(r) for r in op.results]
        take_then = self.region_step(then_steps, then_yield, results)
        take_else = self.region_step(else_steps, else_yield, results)

        decided: dict[tuple[int, ...], bool] = {}

        def step(call: Call, env: Env) -> None:
            key = tuple([call.symbols[n] for n in names])
            holds = decided.get(key)
            if holds is None:
                values = sides(*key)
                holds = all(r(values[2 * i], values[2 * i + 1]) for i, r in enumerate(relations))
                if len(decided) >= MAX_KERNEL_PLANS:
                    decided.clear()
                decided[key] = holds
            (take_then if holds else take_else)(call, env)

        return step

    # -- control flow -------------------------------------------------------------------

    @staticmethod
    def region_step(steps: list[Step], yielded: list[int], results: list[int]) -> Step:
        def step(call: Call, env: Env) -> None:
            for s in steps:
                s(call, env)
            for r, y in zip(results, yielded, strict=True):
                env[r] = env[y]

        return step

    def op_IfOp(self, op: scf.IfOp) -> Step:
        cond = self.index(op.cond)
        results = [self.index(r) for r in op.results]
        branches = [self.block(r.block) if r.blocks else ([], []) for r in op.regions]
        take = [self.region_step(s, y, results) for s, y in branches]

        def step(call: Call, env: Env) -> None:
            take[0 if bool(env[cond]) else 1](call, env)

        return step

    def op_ForOp(self, op: scf.ForOp) -> Step:
        lb, ub, stride = (self.index(v) for v in (op.lb, op.ub, op.step))
        body = op.body.block
        induction = self.index(body.args[0])
        carried = [self.index(a) for a in body.args[1:]]
        inits = [self.index(v) for v in op.iter_args]
        results = [self.index(r) for r in op.results]
        label = located(op)
        bind_args = self.argument_binding(op, 0)
        steps, yielded = self.block(body)
        if bind_args is not None:
            steps = [bind_args, *steps]

        def step(call: Call, env: Env) -> None:
            check_step(label, env[stride])
            for c, i in zip(carried, inits, strict=True):
                env[c] = env[i]
            for i in range(env[lb], env[ub], env[stride]):
                env[induction] = i
                for s in steps:
                    s(call, env)
                # all at once: a yielded value may be another carried value (a swap)
                values = [env[y] for y in yielded]
                for c, v in zip(carried, values, strict=True):
                    env[c] = v
            for r, c in zip(results, carried, strict=True):
                env[r] = env[c]

        return step

    def op_WhileOp(self, op: scf.WhileOp) -> Step:
        before, after = op.before_region.block, op.after_region.block
        before_args = [self.index(a) for a in before.args]
        after_args = [self.index(a) for a in after.args]
        inits = [self.index(v) for v in op.arguments]
        results = [self.index(r) for r in op.results]
        bind_before = self.argument_binding(op, 0)
        check_steps, condition = self.block(before)
        bind_after = self.argument_binding(op, 1)
        body_steps, yielded = self.block(after)
        if bind_before is not None:
            check_steps = [bind_before, *check_steps]
        if bind_after is not None:
            body_steps = [bind_after, *body_steps]

        def step(call: Call, env: Env) -> None:
            values = [env[i] for i in inits]
            while True:
                for a, v in zip(before_args, values, strict=True):
                    env[a] = v
                for s in check_steps:
                    s(call, env)
                go, *forwarded = (env[i] for i in condition)
                if not bool(go):
                    break
                for a, v in zip(after_args, forwarded, strict=True):
                    env[a] = v
                for s in body_steps:
                    s(call, env)
                values = [env[i] for i in yielded]
            for r, v in zip(results, forwarded, strict=True):
                env[r] = v

        return step


def result_symbols(op: Operation, k: int) -> list[str | None]:
    """Per dim of result `k`, the symbol it is (None for other expressions)."""
    attr = op.attributes.get(SHAPE) if len(op.results) == 1 else None
    shapes = op.attributes.get(SHAPES)
    if attr is None and isinstance(shapes, ArrayAttr) and k < len(shapes.data):
        attr = shapes.data[k]
    if attr is None or not isinstance(op.results[k].type, TensorType):
        return []
    return [str(d) if isinstance(d, sympy.Symbol) else None for d in shape_from_attr(attr)]


def value_maker(type_: Attribute) -> Callable[[Any], Any]:
    """What makes numpy's result the run-time value of a scalar of `type_`, as the
    interpreter's `to_value` does: an int for `index`, else a numpy scalar."""
    if isinstance(type_, IndexType):
        return int
    dtype = numpy_dtype(type_)
    return lambda raw: np.asarray(raw, dtype)[()]


def constant_value(op: arith.ConstantOp) -> Any:
    value, type_ = op.value, op.result.type
    if isinstance(value, DenseIntOrFPElementsAttr) and isinstance(type_, TensorType):
        return dense_array(value, type_)
    if isinstance(type_, IndexType) and isinstance(value, IntegerAttr):
        return int(value.value.data)
    assert isinstance(value, IntegerAttr | FloatAttr)
    raw = value.value.data
    return np.asarray(raw != 0 if numpy_dtype(type_) == np.bool_ else raw, numpy_dtype(type_))[()]
