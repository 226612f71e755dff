"""Symbolic shapes as the IR carries them: symbols, shapes, guards.

The `symbolic-shapes` pass writes, and every later pass and the runtime
read, these attributes (typed: see `dvm.dialects.expr`):

- on each function argument, `dvm.shape = #dvm.shape<x_0, x_1>`: one symbol
  per dynamic dim (named after the argument and the axis), or the static size;
- on each op with one tensor result, `dvm.shape = #dvm.shape<x_0, 64>`: the
  result's shape as expressions of the *canonical* symbols (ops with several
  tensor results carry `dvm.shapes`, a list of such shapes);
- on index-valued ops, `dvm.value = #dvm.expr<x_0>`: the index as an expression;
- on the function, `dvm.guards`: the conditions the arguments' dims must
  meet at call time, each with the op that requires it, and `dvm.unified`:
  which argument symbols the guards made equal to which expression.

Every symbol is a non-negative integer (`symbol`), whether made here or read
back from the IR's text.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import cast

import sympy
from xdsl.dialects import scf
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, StringAttr, UnitAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue

from dvm.dialects.expr import (
    FUNCTIONS,
    ConditionAttr,
    ExprAttr,
    ShapeAttr,
    expr_text,
    symbol,
)
from dvm.dialects.tensor import ChoiceOp, FusionOp
from dvm.passes.errors import ProgramError

SHAPE = "dvm.shape"
SHAPES = "dvm.shapes"
VALUE = "dvm.value"
VALUES = "dvm.values"
"""On an op with several results: per result, what `VALUE` says of one (`unit`: no index)."""
ARG_VALUES = "dvm.arg_values"
"""On `scf.for` and `scf.while`: per block, per block argument, what `VALUE` says of an op's
result (`unit`: no index)."""
ARG_SHAPES = "dvm.arg_shapes"
"""On an `scf.for` or `scf.while` that changes a carried dim: per block, per block
argument, its shape (`unit`: no tensor), where each dim the loop changes is a late symbol
bound as each iteration starts (without it, a block argument has its loop's shape)."""
GUARDS = "dvm.guards"
UNIFIED = "dvm.unified"

Shape = tuple[sympy.Expr, ...]


CORES = symbol("cores")
"""The cores a launch shares its work among. Tile sizes may depend on it (each core
gets a share); the VM gives its value at specialization (one for a first launch it
runs unplanned, on one core: see `dvm.vm.specialize`)."""

WORLD = symbol("world")
"""The processes of the group a program runs in (`dvm.dialects.collectives`): the
runtime gives its value when a call starts, from the group; a world of one is 1."""


def substitute(expr: sympy.Expr, mapping: Mapping[sympy.Symbol, sympy.Expr | int]) -> sympy.Expr:
    """`expr` with symbols replaced (a typed `xreplace`)."""
    table = {s: sympy.Integer(v) if isinstance(v, int) else v for s, v in mapping.items()}
    return cast(sympy.Expr, expr.xreplace(table))


def shape_from_attr(attr: Attribute) -> Shape:
    assert isinstance(attr, ShapeAttr)
    return attr.data


class GuardKind(Enum):
    """What a failed guard means at call time."""

    BROADCAST = "broadcast"
    """Two dims broadcast together were assumed equal; if one is 1 at run
    time the program is still defined, and the runtime re-specializes."""
    EQUAL = "equal"
    """The dims must be equal (matmul contraction, reshape sizes): an error."""


@dataclass(frozen=True)
class Guard:
    """`lhs == rhs` over the argument symbols, required by `origin`."""

    lhs: sympy.Expr
    rhs: sympy.Expr
    kind: GuardKind
    origin: str
    """The op that needs it, as `%name = dialect.op`."""

    def __str__(self) -> str:
        return f"{self.lhs} == {self.rhs}"

    def to_attr(self) -> DictionaryAttr:
        return DictionaryAttr(
            {
                "check": ConditionAttr(self.lhs, "==", self.rhs),
                "kind": StringAttr(self.kind.value),
                "op": StringAttr(self.origin),
            }
        )

    @staticmethod
    def from_attr(attr: Attribute) -> Guard:
        assert isinstance(attr, DictionaryAttr)
        check, kind, op = (attr.data[k] for k in ("check", "kind", "op"))
        assert isinstance(check, ConditionAttr) and check.relation.data == "=="
        assert isinstance(kind, StringAttr) and isinstance(op, StringAttr)
        return Guard(check.lhs.data, check.rhs.data, GuardKind(kind.data), op.data)


def arg_symbol_name(arg: BlockArgument, axis: int) -> str:
    """`x_0` for axis 0 of argument `%x`; `arg2_0` when the argument has no name."""
    base = arg.name_hint or f"arg{arg.index}"
    return f"{re.sub(r'[^A-Za-z0-9_]', '_', base)}_{axis}"


def index_symbol_name(arg: BlockArgument) -> str:
    """`n` for an index argument `%n`; `cores_` for `%cores` and `world_` for `%world`,
    as CORES and WORLD are taken (and `floor_` for `%floor`, as expressions call
    `floor`)."""
    name = arg_symbol_name(arg, 0)[:-2]
    return f"{name}_" if name in (CORES.name, WORLD.name) or name in FUNCTIONS else name


# --------------------------------------------------------------------------
# Reading shapes back (for passes after `symbolic-shapes` and the runtime)
# --------------------------------------------------------------------------


def function_guards(func: FuncOp) -> list[Guard]:
    attr = func.attributes.get(GUARDS)
    return [Guard.from_attr(g) for g in attr.data] if isinstance(attr, ArrayAttr) else []


def guard_facts(func: FuncOp) -> list[tuple[sympy.Expr, sympy.Expr]]:
    """The size equalities the function's guards make true wherever it runs, in the
    symbols its shapes use: a guard names the arguments' own symbols, some of which
    other guards replaced (`unified`), e.g. `x_1 == x_0*x_1` with `x_1` -> `y_0`."""
    subst = unified(func)  # (one table for all: `substitute` would make one per call)
    return [
        (cast(sympy.Expr, g.lhs.xreplace(subst)), cast(sympy.Expr, g.rhs.xreplace(subst)))
        for g in function_guards(func)
    ]


def argument_shapes(func: FuncOp) -> list[Shape | None]:
    """Each argument's shape in its own symbols (None for non-tensors)."""
    return [argument_shape(func, i) for i in range(len(func.args))]


def argument_shape(func: FuncOp, index: int) -> Shape | None:
    """Argument `index`'s shape in its own symbols (None for a non-tensor): read from
    its own attributes only, so that asking about every argument stays linear."""
    attrs = func.arg_attrs.data[index] if func.arg_attrs else None
    entry = attrs.data.get(SHAPE) if isinstance(attrs, DictionaryAttr) else None
    return shape_from_attr(entry) if entry is not None else None


def unified(func: FuncOp) -> dict[sympy.Symbol, sympy.Expr]:
    """Argument symbols that guards replaced, and what replaced them."""
    attr = func.attributes.get(UNIFIED)
    if not isinstance(attr, DictionaryAttr):
        return {}
    return {symbol(k): v.data for k, v in attr.data.items() if isinstance(v, ExprAttr)}


def unified_dim(func: FuncOp, dim: sympy.Expr) -> sympy.Expr:
    """An argument's dim with the symbols guards replaced (`unified`) replaced: only its
    own symbols are looked up, not the whole table."""
    attr = func.attributes.get(UNIFIED)
    if not isinstance(attr, DictionaryAttr) or not attr.data or dim.is_Integer:
        return dim
    table: dict[sympy.Basic, sympy.Basic] = {}
    for s in dim.free_symbols:
        target = attr.data.get(expr_text(s))  # (remembered: sympy prints a name slowly)
        if isinstance(target, ExprAttr):
            table[s] = target.data
    return cast(sympy.Expr, dim.xreplace(table)) if table else dim


def shape_of(value: SSAValue) -> Shape:
    """The symbolic shape of a tensor value, as `symbolic-shapes` annotated it.

    Block arguments take the shape of what flows into them: function
    arguments (canonicalized) and loop-carried values.
    """
    if isinstance(value, BlockArgument):
        return block_argument_shape(value)
    op = value.owner
    assert isinstance(op, Operation)
    if SHAPE in op.attributes:
        return shape_from_attr(op.attributes[SHAPE])
    shapes = op.attributes.get(SHAPES)
    if isinstance(shapes, ArrayAttr) and isinstance(value, OpResult):
        return shape_from_attr(shapes.data[value.index])
    raise ProgramError(op, "no symbolic shape: run the symbolic-shapes pass first")


def block_argument_shape(arg: BlockArgument) -> Shape:
    block = arg.block
    assert isinstance(block, Block)
    parent = block.parent_op()
    if isinstance(parent, FuncOp):
        shape = argument_shape(parent, arg.index)
        if shape is None:
            raise ProgramError(parent, f"argument {arg.index} has no symbolic shape")
        return tuple(unified_dim(parent, d) for d in shape)
    if isinstance(parent, FusionOp):
        return shape_of(parent.inputs[arg.index])
    shapes = parent.attributes.get(ARG_SHAPES) if parent is not None else None
    if isinstance(shapes, ArrayAttr):
        assert parent is not None and block.parent is not None
        entry = shapes.data[parent.regions.index(block.parent)]
        assert isinstance(entry, ArrayAttr)
        return shape_from_attr(entry.data[arg.index])
    if isinstance(parent, scf.ForOp) and arg.index > 0:  # arg 0 is the induction variable
        return shape_of(parent.results[arg.index - 1])
    if isinstance(parent, scf.WhileOp):  # `before` takes the carried values, `do` what
        if block is parent.before_region.block:  # its `scf.condition` passes, as the results
            return shape_of(parent.arguments[arg.index])
        return shape_of(parent.results[arg.index])
    assert parent is not None
    raise ProgramError(parent, f"argument {arg.index} has no symbolic shape")


def bind_symbols(func: FuncOp, shapes: Sequence[tuple[int, ...] | None]) -> dict[sympy.Symbol, int]:
    """The value of every argument symbol, given the arguments' actual shapes."""
    bound: dict[sympy.Symbol, int] = {}
    for declared, actual in zip(argument_shapes(func), shapes, strict=True):
        if declared is None or actual is None:
            continue
        for d, n in zip(declared, actual, strict=True):
            if isinstance(d, sympy.Symbol):
                bound[d] = n
    return bound


def static_truth(condition: ConditionAttr) -> bool | None:
    """Whether a condition holds whatever the symbols' values, or fails whatever they
    are, when it names none (None: it depends on them)."""
    lhs, relation, rhs = condition.split()
    if lhs.free_symbols or rhs.free_symbols:
        return None
    return bool(relation(lhs, rhs))


def check_choice_symbols(op: Operation, known: Collection[sympy.Symbol]) -> None:
    """Refuse a choice (any other op passes) whose conditions name a symbol not `known`
    where it stands, no dim of an argument nor a symbol the program made before it: no
    call could decide the condition (sympy cannot tell `y_0 <= 3`, says `y_0 == x_0` is
    false)."""
    if not isinstance(op, ChoiceOp):
        return
    for condition in op.conditions.data:
        lhs, _, rhs = condition.split()
        if unknown := (lhs.free_symbols | rhs.free_symbols) - {*known, WORLD}:
            names = ", ".join(sorted(map(str, unknown)))
            raise ProgramError(
                op, f"condition `{condition.text}` names {names}, no dim of an argument"
            )


def conditions_hold(conditions: Iterable[ConditionAttr], bound: dict[sympy.Symbol, int]) -> bool:
    """Whether every condition (`lhs == rhs`, `lhs <= rhs`) holds for these symbol values."""
    for condition in conditions:
        lhs, relation, rhs = condition.split()
        if not relation(substitute(lhs, bound), substitute(rhs, bound)):
            return False
    return True


def value_exprs(op: Operation) -> list[sympy.Expr | None]:
    """Per result of `op`, its index expression as `symbolic-shapes` wrote it (None for none)."""
    value, values = op.attributes.get(VALUE), op.attributes.get(VALUES)
    if len(op.results) == 1 and isinstance(value, ExprAttr):
        return [value.data]
    if isinstance(values, ArrayAttr):
        return optional_exprs(values)
    return [None] * len(op.results)


def optional_exprs(attr: ArrayAttr[Attribute]) -> list[sympy.Expr | None]:
    """The expressions of a `VALUES` or `ARG_VALUES` list (None where `unit` says none)."""
    return [v.data if isinstance(v, ExprAttr) else None for v in attr.data]


def optional_exprs_attr(exprs: Sequence[sympy.Expr | None]) -> ArrayAttr[Attribute]:
    return ArrayAttr([UnitAttr() if e is None else ExprAttr(e) for e in exprs])


def free_symbols(shapes: Iterable[Shape]) -> set[sympy.Symbol]:
    found: set[sympy.Symbol] = set()
    for shape in shapes:
        for d in shape:
            found |= {s for s in d.free_symbols if isinstance(s, sympy.Symbol)}
    return found
