"""A lowered program variant as plain data: what `dvm.host_steps` builds its steps from.

`export_variant` describes the entry function of a module `dvm-pipeline` lowered: its
declared arguments, the symbols its argument dims name, its guards (sorted as
`dvm.variant` sorts them), its kernels (`launches.kernel_plain`) and its host steps
(the entries `dvm.host_steps` documents). Everything is lists, numbers and text, and
expressions are generated Python (`dvm.codegen.expression_code`), so the compile cache
stores it as JSON and a cache hit needs neither xDSL nor sympy.

A host function with an op this form has no entry for (scalar arithmetic, ops the host
computes in numpy, collectives, launches whose kernels read through takes, slices or
grouped matmuls) is `NotPlain`: `dvm.host.HostCompiler` builds its steps from the IR.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sympy
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation

from dvm.arguments import declared, find_entry
from dvm.codegen import expression_code
from dvm.dialects import bytecode as bc
from dvm.dialects import tensor as t
from dvm.dialects import tile
from dvm.dialects.expr import symbol_names
from dvm.guards import guard_names, guard_set, stretchable_symbols
from dvm.host import HostWalker, constant_value
from dvm.host_steps import RELATIONS, constant_data
from dvm.launches import kernel_plain
from dvm.lowering.grouped_matmul import GROUP_SIZES
from dvm.lowering.index_ops import TAKE_CHECKS
from dvm.passes.data_movement import SLICE_BOUNDS
from dvm.passes.errors import located
from dvm.passes.symbolic import (
    Guard,
    argument_shapes,
    function_guards,
    index_symbol_name,
)

FORMAT = 1
"""The version of the form `export_variant` makes (the compile cache's entries hold it)."""


class NotPlain(Exception):
    """The host function holds an op that the plain form does not describe."""


def export_variant(module: ModuleOp, entry: str | None, fallbacks: set[str]) -> dict[str, Any]:
    """The plain form of the variant `module` lowers (`fallbacks`: the kernels prepared
    at their first launch, not in the compile), or NotPlain."""
    func = find_entry(module, entry)
    facts = entry_symbols(func)
    symbols, per_call = facts.symbols, facts.per_call
    exporter = HostExporter(func, facts)
    exporter.indices(func.body.block.args)
    steps, results = exporter.block(func.body.block)
    programs = {p.sym_name.data: p for p in module.ops if isinstance(p, bc.ProgramOp)}
    kernels = {
        name: kernel_plain(programs[name], inputs, name not in fallbacks)
        for name, inputs in exporter.launched.items()
    }
    return {
        "format": FORMAT,
        "declared": declared(func).to_json(),
        "symbols": [list(s) for s in symbols],
        "indices": [list(i) for i in facts.indices],
        "guards": guard_set(func, symbols, facts.guards).to_json(),
        "index_guards": guard_set(func, symbols, per_call).to_json(),
        "stretchable": [
            [name, sorted(list(w) for w in where)]
            for name, where in stretchable_symbols([*per_call, *facts.late], symbols)
        ],
        "late": bool(facts.indices) or exporter.known != facts.known,
        "places": exporter.places,
        "launches": exporter.launches,
        "kernels": kernels,
        "slots": len(exporter.slot),
        "results": results,
        "steps": steps,
    }


@dataclass(frozen=True)
class EntrySymbols:
    """The symbols an entry function's arguments are, and its guards split by when a
    call can check them (`split_guards`)."""

    symbols: list[tuple[int, int, str]]
    """The argument, axis and symbol of each argument dim that is a symbol."""
    names: list[str]
    """Those symbols, sorted."""
    indices: list[tuple[int, str]]
    """The index arguments and the symbol each is."""
    guards: list[Guard]
    per_call: list[Guard]
    late: list[Guard]

    @property
    def known(self) -> set[str]:
        """The symbols a call knows from its arguments."""
        return {*self.names, *(n for _, n in self.indices)}


def entry_symbols(func: FuncOp) -> EntrySymbols:
    symbols = [
        (i, a, d.name)
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
    guards, per_call, late = split_guards(function_guards(func), names, indices)
    return EntrySymbols(symbols, names, indices, guards, per_call, late)


def split_guards(
    guards: list[Guard], names: list[str], indices: list[tuple[int, str]]
) -> tuple[list[Guard], list[Guard], list[Guard]]:
    """Guards over argument dims (checked once per signature), over index arguments
    too (per call), and over symbols made on the way (when made)."""
    once, per_call, late = [], [], []
    for g in guards:
        used = guard_names(g)
        if used <= set(names):
            once.append(g)
        elif used <= {*names, *(n for _, n in indices)}:
            per_call.append(g)
        else:
            late.append(g)
    return once, per_call, late


class HostExporter(HostWalker[list[Any]]):
    """The plain steps of a host function: one slot per SSA value, the arguments first
    (`HostWalker`)."""

    def __init__(self, func: FuncOp, entry: EntrySymbols):
        super().__init__(entry.known, entry.late, set(entry.names))
        self.func = func
        self.symbols = entry.symbols
        self.launches = 0
        self.launched: dict[str, int] = {}
        """Each launched kernel's input count."""

    def op(self, op: Operation) -> list[Any]:
        handler = getattr(self, "op_" + type(op).__name__, None)
        if handler is None:
            raise NotPlain(op.name)
        step = handler(op)
        binds = self.result_binds(op)
        return ["bind", step, [list(b) for b in binds], self.decidable_guards()] if binds else step

    def argument_binding(self, op: Operation, region: int) -> list[Any] | None:
        binds = self.argument_binds(op, region)
        return ["bind_args", [list(b) for b in binds], self.decidable_guards()] if binds else None

    def decidable_guards(self) -> dict[str, Any] | None:
        ready = self.ready_guards()
        return guard_set(self.func, self.symbols, ready).to_json() if ready else None

    # -- values -------------------------------------------------------------------------

    def op_ConstantOp(self, op: arith.ConstantOp) -> list[Any]:
        return ["constant", self.index(op.result), constant_data(constant_value(op))]

    def op_DimOp(self, op: t.DimOp) -> list[Any]:
        slots = self.indices([op.source, op.index, op.result])
        return ["dim", located(op), *slots]

    def op_ExtractOp(self, op: t.ExtractOp) -> list[Any]:
        src, indices = self.index(op.tensor), self.indices(op.indices)
        return ["extract", located(op), src, indices, self.index(op.result)]

    # -- kernels ------------------------------------------------------------------------

    def op_LaunchOp(self, op: tile.LaunchOp) -> list[Any]:
        if any(k in op.attributes for k in (TAKE_CHECKS, SLICE_BOUNDS, GROUP_SIZES)):
            raise NotPlain("a launch with checks of the data it reads")
        name = op.callee.root_reference.data
        self.launched[name] = len(op.inputs)
        self.launches += 1
        inputs, outputs = self.indices(op.inputs), self.indices(op.outputs)
        return ["launch", name, inputs, outputs, self.output_places(op), self.index_dims(op)]

    def index_dims(self, op: tile.LaunchOp) -> dict[str, Any] | None:
        """The check that no shape the kernel takes from index values has a negative dim
        (those of argument dims alone never do), or None."""
        shapes = self.index_dim_shapes(op)
        if not shapes:
            return None
        names = sorted(symbol_names(d for _, shape in shapes for d in shape))
        return {
            "names": names,
            "code": expression_code([d for _, shape in shapes for d in shape]),
            "shapes": [[label, len(shape)] for label, shape in shapes],
        }

    def op_StackOp(self, op: t.StackOp) -> list[Any]:
        results = self.indices(op.results)
        steps, yielded = self.block(op.body.block)
        return ["stack", op.mode.data == "parallel", steps, yielded, results]

    def op_ChoiceOp(self, op: t.ChoiceOp) -> list[Any]:
        conditions = [c.split() for c in op.conditions.data]
        names = sorted(symbol_names(e for c in conditions for e in (c[0], c[2])))
        code = expression_code([e for lhs, _, rhs in conditions for e in (lhs, rhs)])
        names_of = {test: name for name, test in RELATIONS.items()}
        relations = [names_of[relation] for _, relation, _ in conditions]
        then, other = self.block(op.then_body.block), self.block(op.else_body.block)
        results = self.indices(op.results)
        return ["choice", names, code, relations, then, other, results]

    # -- control flow -------------------------------------------------------------------

    def op_IfOp(self, op: scf.IfOp) -> list[Any]:
        cond, results = self.index(op.cond), self.indices(op.results)
        then, other = (self.block(r.block) if r.blocks else ([], []) for r in op.regions)
        return ["if", cond, then, other, results]

    def op_ForOp(self, op: scf.ForOp) -> list[Any]:
        lb, ub, stride = self.indices([op.lb, op.ub, op.step])
        args = op.body.block.args
        induction, carried = self.index(args[0]), self.indices(args[1:])
        inits, results = self.indices(op.iter_args), self.indices(op.results)
        steps, yielded = self.region_block(op, 0)
        return [
            "for",
            located(op),
            lb,
            ub,
            stride,
            induction,
            carried,
            inits,
            results,
            [steps, yielded],
        ]

    def op_WhileOp(self, op: scf.WhileOp) -> list[Any]:
        before, after = op.before_region.block, op.after_region.block
        before_args, after_args = self.indices(before.args), self.indices(after.args)
        inits, results = self.indices(op.arguments), self.indices(op.results)
        check, body = self.region_block(op, 0), self.region_block(op, 1)
        return ["while", before_args, after_args, inits, results, list(check), list(body)]
