"""A program variant made from its lowered IR: `dvm-pipeline` on a copy of the program
(`lower`), then the variant's plain form (`dvm.host_export`) and the `Variant` built
from it; a host function that has no plain form gets its steps from the IR
(`host.HostCompiler`). The compile cache keeps the plain form, so that its hits need
none of this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import sympy
from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    ModuleOp,
    TensorType,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation
from xdsl.rewriter import Rewriter

from dvm import vm
from dvm.arguments import declared, find_entry
from dvm.codegen import python_function
from dvm.collectives import SINGLE_PROCESS, World
from dvm.dialects import bytecode as bc
from dvm.dialects import tensor as t
from dvm.dialects import tile
from dvm.dialects.collectives import CollectiveOp
from dvm.dialects.expr import ConditionAttr, symbol
from dvm.dialects.walk import ops_within
from dvm.errors import ShapeError
from dvm.guard_notes import GuardFailed
from dvm.guards import describe_guard, guard_check, guard_note, stretchable_symbols
from dvm.host import HostCompiler
from dvm.host_export import NotPlain, entry_symbols, export_variant
from dvm.launches import Kernel
from dvm.lowering.bytecode_to_vm import to_program
from dvm.lowering.pipeline import DvmPipelinePass
from dvm.passes.symbolic import arg_symbol_name, index_symbol_name, substitute
from dvm.variant import Fixed, Variant


def lower(source: ModuleOp, device: str, copy: bool = True) -> ModuleOp:
    """`source` after `dvm-pipeline` for `device`: a copy of it, or itself, rewritten,
    when not `copy`."""
    module = source.clone() if copy else source
    DvmPipelinePass(device=device).apply(Context(), module)
    return module


def build_variant(
    source: ModuleOp, entry: str | None, device: str, world: World = SINGLE_PROCESS
) -> Variant:
    return variant_from_lowered(lower(source, device), entry, world=world)[0]


def variant_from_lowered(
    module: ModuleOp,
    entry: str | None,
    binaries: dict[str, vm.Program] | None = None,
    world: World = SINGLE_PROCESS,
) -> tuple[Variant, dict[str, Any] | None]:
    """The variant of a module `lower` made, its kernels validated by the VM, and its
    plain form (None when it has none); `binaries` are its kernels' programs decoded
    from binaries (the module's programs then need to declare their arguments only);
    `world` is what its collectives span."""
    func = find_entry(module, entry)
    calls = [op for op in ops_within(func) if isinstance(op, tile.LaunchOp)]
    fallbacks = fallback_kernels(calls)
    try:
        plain = export_variant(module, entry, fallbacks)
    except NotPlain:
        return variant_from_ir(module, entry, fallbacks, binaries, world), None
    if binaries is None:
        programs = [p for p in module.ops if isinstance(p, bc.ProgramOp)]
        binaries = {p.sym_name.data: to_program(p) for p in programs}
    return Variant.from_plain(plain, binaries), plain


def variant_from_ir(
    module: ModuleOp,
    entry: str | None,
    fallbacks: set[str],
    binaries: dict[str, vm.Program] | None,
    world: World,
) -> Variant:
    """The variant of a lowered module whose host steps are built from the IR."""
    func = find_entry(module, entry)
    calls = [op for op in ops_within(func) if isinstance(op, tile.LaunchOp)]
    programs = {p.sym_name.data: p for p in module.ops if isinstance(p, bc.ProgramOp)}
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
    facts = entry_symbols(func)
    symbols, names, guards = facts.symbols, facts.names, facts.guards
    compiler = HostCompiler(module, kernels, facts.known, facts.late)
    compiler.argument_dims = set(names)
    compiler.function = function = f"@{func.sym_name.data}"
    # (a guard over values the call made fails with what it made: an ExecutionError)
    compiler.guard_failed = lambda g, a, b: ShapeError(describe_guard(func, symbols, g, a, b))
    arg_slots = compiler.indices(func.body.block.args)
    assert arg_slots == list(range(len(arg_slots)))  # the first slots (see `run`)
    compiler.world = world
    first = [compiler.world_binding()] if any(map(is_collective, ops_within(func))) else []
    steps, results = compiler.block(func.body.block)
    steps = first + steps
    sides = [e for g in guards for e in (g.lhs, g.rhs)]
    origin = f"guards: {function}"
    check = python_function(sides, names, origin) if sides else (lambda *_: ())
    others = (None,) * (len(compiler.slot) - len(arg_slots))
    notes = [guard_note(func, symbols, g) for g in guards]
    variant = Variant(declared(func), steps, results, others, symbols, notes, check, names)
    variant.indices = facts.indices
    variant.kernels = kernels
    variant.places = compiler.places
    variant.launches = len(calls)
    variant.late = bool(facts.indices) or compiler.known != facts.known
    variant.check_indices = guard_check(
        facts.per_call,
        lambda g, a, b: GuardFailed(guard_note(func, symbols, g), a, b),
        f"index guards: {function}",
    )
    variant.stretchable = stretchable_symbols([*facts.per_call, *facts.late], symbols)
    if blas_launches(func.body.block, kernels) > 1:
        device = next(k.device for k in kernels.values() if k.uses_blas)
        variant.runs = partial(vm.with_blas_held, device, variant.run)
    return variant


def is_collective(op: Operation) -> bool:
    return isinstance(op, CollectiveOp)


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


def fix_choice_conditions(func: FuncOp, values: dict[sympy.Symbol, int]) -> None:
    """Put these values for argument symbols in the conditions of the choices written in
    `func`: the variant has no such symbols (those dims are static)."""
    if not values:
        return
    for op in ops_within(func):
        if isinstance(op, t.ChoiceOp):
            op.conditions = ArrayAttr(
                ConditionAttr(
                    substitute(c.lhs.data, values), c.relation.data, substitute(c.rhs.data, values)
                )
                for c in op.conditions.data
            )


def with_fixed_values(source: ModuleOp, entry: str | None, fixed: Fixed) -> ModuleOp:
    """A copy of the program whose entry has the given argument dims and index arguments
    fixed to the given values (`Fixed`).

    Such a tensor argument gets the narrower type, and its uses see it through a
    `tensor.convert` back to the declared type (the same element type, so
    no conversion; it fuses into the kernels that use it). Every op thus
    keeps the types it was written with, which ops whose result type must
    be their operand's (unary ops), `scf.yield` and `func.return` require.
    Such an index argument stays, unread: its uses read a constant instead.
    """
    module = source.clone()
    func = find_entry(module, entry)
    block = func.body.block
    dims = {(i, a): v for i, a, v in fixed if a >= 0}
    indices = {i: v for i, a, v in fixed if a < 0}
    values = {symbol(arg_symbol_name(block.args[i], a)): v for (i, a), v in dims.items()}
    values |= {symbol(index_symbol_name(block.args[i])): v for i, v in indices.items()}
    fix_choice_conditions(func, values)
    first = block.first_op
    assert first is not None
    for i, value in sorted(indices.items()):
        constant = arith.ConstantOp(IntegerAttr(value, IndexType()))
        block.insert_op_before(constant, first)
        block.args[i].replace_all_uses_with(constant.result)
    types = list(func.function_type.inputs.data)
    for i in sorted({i for i, _ in dims}):
        old = types[i]
        assert isinstance(old, TensorType)
        shape = [dims.get((i, axis), d) for axis, d in enumerate(old.get_shape())]
        types[i] = TensorType(old.element_type, shape)
        arg = Rewriter.replace_value_with_new_type(block.args[i], types[i])
        view = t.ConvertOp.create(operands=[arg], result_types=[old])
        block.insert_op_before(view, first)
        arg.replace_uses_with_if(view.result, lambda use, view=view: use.operation is not view)
    func.function_type = FunctionType.from_lists(types, func.function_type.outputs.data)
    module.verify()
    return module
