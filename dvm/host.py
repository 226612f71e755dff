"""The host function as closures: what `dvm.compile` makes of all but the kernels.

After lowering, the entry function holds control flow (`scf.if`, `scf.for`,
`scf.while`, `tensor.choice`), arithmetic on scalars, and kernel launches
(`tile.launch`, grouped in `tensor.stack`s). `HostCompiler` turns each op once into a
step: a closure over the call's environment, a list with one slot per SSA value. A
call runs the steps in order; a step that makes a new shape symbol binds it and checks
the guards over it. The closures come from `dvm.host_steps`, and the walk over the ops
(`HostWalker`) is the one `dvm.host_export` makes plain data with: both paths run the
same code.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, TypeVar

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

from dvm.arguments import is_float, numpy_dtype, to_value
from dvm.arith_ops import (
    ARITH_OPS,
    arith_function,
    dense_array,
)
from dvm.codegen import python_function
from dvm.collectives import SINGLE_PROCESS, World, run_collective
from dvm.dialects import tensor as t
from dvm.dialects import tile
from dvm.dialects.collectives import COLLECTIVE_OPS
from dvm.dialects.expr import symbol_names
from dvm.dialects.index_ops import ScatterAddOp
from dvm.errors import CompileError, ShapeError
from dvm.grouped_matmul_checks import checked_group_sizes
from dvm.guard_notes import GuardCheck
from dvm.guards import guard_check, guard_names
from dvm.host_steps import (
    Launch,
    Step,
    SymbolBind,
    bind_args_step,
    bind_step,
    choice_step,
    constant_step,
    dim_step,
    extract_step,
    for_step,
    if_step,
    launch_step,
    negative_dims_step,
    region_step,
    stack_step,
    while_step,
)
from dvm.index_checks import checked_takes
from dvm.interpret_index_ops import scatter_add
from dvm.interpret_scans import SCAN_FUNCTIONS
from dvm.interpret_shape_ops import SHAPE_FUNCTIONS
from dvm.launches import Call, Env, Kernel
from dvm.lowering.tensor_to_tile import INDEX_DIMS
from dvm.passes.errors import located
from dvm.passes.symbolic import (
    ARG_SHAPES,
    ARG_VALUES,
    SHAPE,
    SHAPES,
    WORLD,
    Guard,
    Shape,
    optional_exprs,
    shape_from_attr,
    shape_of,
    value_exprs,
)
from dvm.slice_checks import checked_slices

HOST_FUNCTIONS = {**SCAN_FUNCTIONS, **SHAPE_FUNCTIONS}
"""The tensor ops the host runs in numpy (no kernel holds them)."""


S = TypeVar("S")
"""What a host function's ops become: closures (`Step`) or plain data."""

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


class HostWalker(Generic[S]):
    """What turning a host function's ops into steps `S` takes, whatever they are
    (closures here, plain data in `dvm.host_export`): one slot per SSA value, the blocks
    in order, the symbols the steps make, and the places of launch results.

    Symbols that no argument dim gives are bound during the call, by the step that
    makes their value: an `scf.if` result whose dims the branches disagree on
    (`r0_1`), an index nobody knows before (`i3`). Guards over such symbols (`late`)
    are checked by that step, as soon as all their symbols are bound.
    """

    def __init__(self, known: set[str], late: Sequence[Guard], argument_dims: set[str]):
        self.slot: dict[SSAValue, int] = {}
        self.known = set(known)
        """Symbols bound when the steps made so far have run."""
        self.late = list(late)
        """Guards not yet checked: some symbol of theirs is not known yet."""
        self.argument_dims = set(argument_dims)
        """The symbols of the arguments' dims (never negative)."""
        self.places = 0
        """Launch results that never leave a call: each has a place in its arena."""

    def op(self, op: Operation) -> S:
        """`op`'s step, binding the new symbols its results are (`result_binds`)."""
        raise NotImplementedError

    def argument_binding(self, op: Operation, region: int) -> S | None:
        """The step binding the new symbols the arguments of `op`'s block `region` are
        (`argument_binds`), run each time the block starts; None: there are none."""
        raise NotImplementedError

    def index(self, value: SSAValue) -> int:
        if value not in self.slot:
            self.slot[value] = len(self.slot)
        return self.slot[value]

    def indices(self, values: Iterable[SSAValue]) -> list[int]:
        return [self.index(v) for v in values]

    def block(self, block: Block) -> tuple[list[S], list[int]]:
        """The steps of a block, and the slots of what its terminator yields."""
        steps: list[S] = []
        yielded: list[int] = []
        for op in block.ops:
            if isinstance(op, scf.YieldOp | t.YieldOp | ReturnOp | scf.ConditionOp):
                yielded = self.indices(op.operands)
            else:
                steps.append(self.op(op))
        return steps, yielded

    def region_block(self, op: Operation, region: int) -> tuple[list[S], list[int]]:
        """`block` of `op`'s region `region`, first binding the symbols its arguments are."""
        bind_args = self.argument_binding(op, region)  # before the block: they are known there
        steps, yielded = self.block(op.regions[region].block)
        return ([bind_args, *steps] if bind_args is not None else steps), yielded

    def result_binds(self, op: Operation) -> list[SymbolBind]:
        """The new symbols `op`'s results' dims or values are; from now on they are known."""
        binds: list[SymbolBind] = []
        for k, result in enumerate(op.results):
            binds += self.new_dim_symbols(result, result_symbols(op, k))
        for value, name in self.new_value_symbols(op.results, value_exprs(op)):
            binds.append((self.index(value), None, name))
        return binds

    def argument_binds(self, op: Operation, region: int) -> list[SymbolBind]:
        """The new symbols the arguments of `op`'s block `region` are (an induction
        variable, an index a loop carries, a carried dim the loop changes); from now on
        they are known."""
        args = op.regions[region].block.args
        binds: list[SymbolBind] = []
        shapes = op.attributes.get(ARG_SHAPES)
        if isinstance(shapes, ArrayAttr):
            for arg in args:
                if isinstance(arg.type, TensorType):
                    binds += self.new_dim_symbols(arg, dim_symbols(shape_of(arg)))
        texts = op.attributes.get(ARG_VALUES)
        if isinstance(texts, ArrayAttr):
            entries = texts.data[region]
            assert isinstance(entries, ArrayAttr)
            found = self.new_value_symbols(args, optional_exprs(entries))
            binds += [(self.index(a), None, name) for a, name in found]
        return binds

    def new_dim_symbols(self, value: SSAValue, names: Sequence[str | None]) -> list[SymbolBind]:
        """The binds of `value`'s dims that are symbols not known yet (`names`: per dim,
        the symbol it is, or None); from now on they are known."""
        binds: list[SymbolBind] = []
        for axis, name in enumerate(names):
            if name is not None and name not in self.known:
                binds.append((self.index(value), axis, name))
                self.known.add(name)
        return binds

    def new_value_symbols(
        self, values: Sequence[SSAValue], exprs: Sequence[sympy.Expr | None]
    ) -> list[tuple[SSAValue, str]]:
        """The index values whose expression (`VALUE`) is a symbol not known yet, with
        it; from now on it is known."""
        found = []
        for value, expr in zip(values, exprs, strict=True):
            if isinstance(expr, sympy.Symbol) and expr.name not in self.known:
                found.append((value, expr.name))
                self.known.add(expr.name)
        return found

    def ready_guards(self) -> list[Guard]:
        """The late guards whose symbols are all known now (no longer late)."""
        ready = [g for g in self.late if guard_names(g) <= self.known]
        self.late = [g for g in self.late if g not in ready]
        return ready

    def output_places(self, op: tile.LaunchOp) -> list[int | None] | None:
        """The places of a launch's outputs in the call's arena (None: all in new memory)."""
        places: list[int | None] = []  # per output (None: new memory)
        for v in op.outputs:
            keep = KEEP_INTERMEDIATES and read_by_launches_only(v)
            places.append(self.places if keep else None)
            self.places += keep
        return places if any(j is not None for j in places) else None

    def index_dim_shapes(self, op: tile.LaunchOp) -> list[tuple[str, Shape]]:
        """The shapes a launch's kernel takes from index values (`INDEX_DIMS`), with the
        ops' labels, but those whose dims are never negative (made of argument dims)."""
        entries = op.attributes.get(INDEX_DIMS)
        shapes: list[tuple[str, Shape]] = []
        for entry in entries.data if isinstance(entries, ArrayAttr) else ():
            assert isinstance(entry, DictionaryAttr)
            label, shape = entry.data["op"], shape_from_attr(entry.data["shape"])
            assert isinstance(label, StringAttr)
            if not all(self.never_negative(d) for d in shape):
                shapes.append((label.data, shape))
        return shapes

    def never_negative(self, dim: sympy.Expr) -> bool:
        """Whether a dim is at least 0 however the program runs: made of argument dims."""
        symbols = symbol_names([dim])
        return symbols <= self.argument_dims and bool(dim.is_nonnegative)


class HostCompiler(HostWalker[Step]):
    """Turns the host function (after lowering) into a list of closures over
    an environment: one slot per SSA value (`HostWalker`)."""

    def __init__(
        self,
        module: ModuleOp,
        kernels: dict[str, Kernel],
        known: set[str] | None = None,
        late: Sequence[Guard] = (),
    ):
        super().__init__(set(known or ()), late, set())
        self.module = module
        self.kernels = kernels
        self.guard_failed: Callable[[Guard, int, int], Exception] = lambda g, a, b: ShapeError(
            f"{g.origin} needs {g}, but {g.lhs} is {a} and {g.rhs} is {b}"
        )
        """The error of a late guard that fails: the call made a value that breaks it."""
        self.function = ""
        """The host function's name (`@main`), which names its generated code."""
        self.world: World = SINGLE_PROCESS
        """The processes the collectives span (`dvm.collectives`)."""

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
        binds = self.result_binds(op)
        return bind_step(step, binds, self.decidable_guards()) if binds else step

    def argument_binding(self, op: Operation, region: int) -> Step | None:
        """Binding the new symbols that the arguments of `op`'s block `region` are, then
        checking the guards that became decidable: a step for each time the block starts
        (None: nothing to bind)."""
        binds = self.argument_binds(op, region)
        return bind_args_step(binds, self.decidable_guards()) if binds else None

    def decidable_guards(self) -> GuardCheck:
        """A check of the late guards whose symbols are all known now."""
        return guard_check(self.ready_guards(), self.guard_failed, f"guards: {self.function}")

    # -- values ---------------------------------------------------------------------

    def op_ConstantOp(self, op: arith.ConstantOp) -> Step:
        value = constant_value(op)
        if isinstance(value, np.ndarray):  # every call shares it: nobody may write to it
            value.flags.writeable = False
        return constant_step(self.index(op.result), value)

    def op_DimOp(self, op: t.DimOp) -> Step:
        src, index, out = self.indices([op.source, op.index, op.result])
        return dim_step(located(op), src, index, out)

    def op_ExtractOp(self, op: t.ExtractOp) -> Step:
        src, indices = self.index(op.tensor), self.indices(op.indices)
        return extract_step(located(op), src, indices, self.index(op.result))

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
        return self.checked_dims(op, self.launch_checks(op, parts, launch_step(parts)))

    @staticmethod
    def launch_checks(op: tile.LaunchOp, parts: Launch, step: Step) -> Step:
        """`step`, after the checks of the data its kernel reads through views that
        cannot check it: its indices, its slices' bounds, its grouped matmuls' sizes."""
        step = checked_takes(op.attributes, parts[1], step)
        return checked_slices(op.attributes, checked_group_sizes(op.attributes, parts[1], step))

    def checked_dims(self, op: tile.LaunchOp, step: Step) -> Step:
        """`step`, after checking that no shape its kernel takes from index values has a
        negative dim (those of argument dims alone never do)."""
        shapes = self.index_dim_shapes(op)
        if not shapes:
            return step
        names = sorted(symbol_names(d for _, shape in shapes for d in shape))
        origin = f"launch dims: {op.callee.root_reference.data}"
        dims = python_function([d for _, shape in shapes for d in shape], names, origin)
        ranks = [(label, len(shape)) for label, shape in shapes]
        return negative_dims_step(dims, names, ranks, step)

    def launch_parts(self, op: tile.LaunchOp) -> Launch:
        """A launch's kernel, the slots of its inputs and outputs, and the places of its
        outputs in the call's arena."""
        name = op.callee.root_reference.data
        kernel = self.kernels[name]
        unbound = set(kernel.key_symbols) - self.known
        if unbound:  # (an edited lowered module: a call would find no value for them)
            raise CompileError(f"{located(op)}: @{name} reads {sorted(unbound)}, unbound here")
        return kernel, self.indices(op.inputs), self.indices(op.outputs), self.output_places(op)

    def op_StackOp(self, op: t.StackOp) -> Step:
        """Its launches as one (`vm.launch_stack`); one by one when profiling (for each
        kernel's statistics), or when the stack holds anything but launches whose
        results bind no new symbol."""
        results = self.indices(op.results)
        steps: list[Step] = []
        members: list[Launch] = []
        checks: list[Step] = []
        """The members' checks of slices and group sizes, made before the stack launches."""
        yielded: list[int] = []
        for inner in op.body.block.ops:
            if isinstance(inner, t.YieldOp):
                yielded = self.indices(inner.operands)
                continue
            if isinstance(inner, tile.LaunchOp):
                parts = self.launch_parts(inner)
                plain = launch_step(parts)
                checked = self.launch_checks(inner, parts, plain)
                step = self.binding(inner, self.checked_dims(inner, checked))
                if step is checked:
                    members.append(parts)
                    if checked is not plain:
                        checks.append(self.launch_checks(inner, parts, no_step))
            else:
                step = self.op(inner)
            steps.append(step)
        one_by_one = region_step(steps, yielded, results)
        if len(members) != len(steps) or len(members) < 2:
            return one_by_one
        parallel = op.mode.data == "parallel"
        return stack_step(members, parallel, one_by_one, (steps, yielded), results, checks)

    def op_ChoiceOp(self, op: t.ChoiceOp) -> Step:
        conditions = [c.split() for c in op.conditions.data]
        names = sorted(symbol_names(e for c in conditions for e in (c[0], c[2])))
        sides = python_function(
            [e for lhs, _, rhs in conditions for e in (lhs, rhs)],
            names,
            f"choice conditions: {self.function}",
        )
        relations = [relation for _, relation, _ in conditions]
        results = self.indices(op.results)
        take_then = region_step(*self.block(op.then_body.block), results)
        take_else = region_step(*self.block(op.else_body.block), results)
        return choice_step(names, sides, relations, take_then, take_else)

    # -- control flow -------------------------------------------------------------------

    def op_IfOp(self, op: scf.IfOp) -> Step:
        cond, results = self.index(op.cond), self.indices(op.results)
        branches = (self.block(r.block) if r.blocks else ([], []) for r in op.regions)
        then, other = (region_step(steps, yielded, results) for steps, yielded in branches)
        return if_step(cond, then, other)

    def op_ForOp(self, op: scf.ForOp) -> Step:
        lb, ub, stride = self.indices([op.lb, op.ub, op.step])
        args = op.body.block.args
        induction, carried = self.index(args[0]), self.indices(args[1:])
        inits, results = self.indices(op.iter_args), self.indices(op.results)
        body = self.region_block(op, 0)
        return for_step(located(op), (lb, ub, stride), induction, carried, inits, results, body)

    def op_WhileOp(self, op: scf.WhileOp) -> Step:
        before, after = op.before_region.block, op.after_region.block
        args = (self.indices(before.args), self.indices(after.args))
        inits, results = self.indices(op.arguments), self.indices(op.results)
        check, body = self.region_block(op, 0), self.region_block(op, 1)
        return while_step(args, inits, results, check, body)


def result_symbols(op: Operation, k: int) -> list[str | None]:
    """Per dim of result `k`, the symbol it is (None for other expressions)."""
    attr = op.attributes.get(SHAPE) if len(op.results) == 1 else None
    shapes = op.attributes.get(SHAPES)
    if attr is None and isinstance(shapes, ArrayAttr) and k < len(shapes.data):
        attr = shapes.data[k]
    if attr is None or not isinstance(op.results[k].type, TensorType):
        return []
    return dim_symbols(shape_from_attr(attr))


def dim_symbols(shape: Shape) -> list[str | None]:
    """Per dim of `shape`, the symbol it is (None for other expressions)."""
    return [d.name if isinstance(d, sympy.Symbol) else None for d in shape]


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
