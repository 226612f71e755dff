"""Symbolic shapes as the IR carries them: symbols, shapes, guards.

The `symbolic-shapes` pass writes, and every later pass and the runtime
read, these attributes:

- on each function argument, `dvm.shape = ["x_0", "x_1"]`: one symbol per
  dynamic dim (named after the argument and the axis), or the static size;
- on each op with one tensor result, `dvm.shape = ["x_0", "64"]`: the result's
  shape as sympy expressions of the *canonical* symbols (ops with several
  tensor results carry `dvm.shapes`, a list of such lists);
- on index-valued ops, `dvm.value = "x_0"`: the index as an expression;
- on the function, `dvm.guards`: the conditions the arguments' dims must
  meet at call time, each with the op that requires it, and `dvm.unified`:
  which argument symbols the guards made equal to which expression.

Expressions are stored as text so that the IR stays readable and
round-trips through `dvm-opt`; `parse_expr` turns them back into sympy with
the same assumptions every time (dims are non-negative integers).
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Any, cast

import sympy
from xdsl.dialects import scf
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue

from dvm.dialects.tensor import FusionOp
from dvm.passes.errors import describe

SHAPE = "dvm.shape"
SHAPES = "dvm.shapes"
VALUE = "dvm.value"
VALUES = "dvm.values"
"""On an op with several results: per result, what `VALUE` says of one ("" for no index)."""
ARG_VALUES = "dvm.arg_values"
"""On `scf.for` and `scf.while`: per block, per block argument, what `VALUE` says of an op's
result ("" for no index)."""
GUARDS = "dvm.guards"
UNIFIED = "dvm.unified"

Shape = tuple[sympy.Expr, ...]


@cache
def symbol(name: str) -> sympy.Symbol:
    """The symbol called `name`: a dim or an index, so a non-negative integer."""
    return sympy.Symbol(name, integer=True, nonnegative=True)


CORES = symbol("cores")
"""The cores a launch shares its work among. Tile sizes may depend on it (each core
gets a share); the VM gives its value at specialization (one for a first launch it
runs unplanned, on one core: see `dvm.vm.specialize`)."""

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_EXPRESSION = re.compile(r"[\w\s+\-*/(),]*")
"""What an expression may contain: names, integers, arithmetic and calls —
no attribute access, indexing or strings, so evaluating it is safe."""


def smin(*args: sympy.Expr | int) -> sympy.Expr:
    """min, left unevaluated: sympy's Min simplifies by assumption queries,
    which costs milliseconds; tile sizes nest many of them."""
    return _fold(sympy.Min, min, args)


def smax(*args: sympy.Expr | int) -> sympy.Expr:
    return _fold(sympy.Max, max, args)


def _fold(
    cls: type[sympy.Min] | type[sympy.Max], fn: Callable[..., int], args: Sequence[sympy.Expr | int]
) -> sympy.Expr:
    exprs = [sympy.Integer(a) if isinstance(a, int) else a for a in args]
    numbers = [int(a) for a in exprs if a.is_Integer]
    rest = [a for a in exprs if not a.is_Integer]
    if numbers:
        rest.append(sympy.Integer(fn(numbers)))
    return rest[0] if len(rest) == 1 else cast(sympy.Expr, cls(*rest, evaluate=False))


def sfloor(x: sympy.Expr) -> sympy.Expr:
    """floor, folded for numbers and otherwise left unevaluated (cheap)."""
    if x.is_number:
        return sympy.Integer(math.floor(x))
    return cast(sympy.Expr, sympy.floor(x, evaluate=False))


def sceiling(x: sympy.Expr) -> sympy.Expr:
    if x.is_number:
        return sympy.Integer(math.ceil(x))
    return cast(sympy.Expr, sympy.ceiling(x, evaluate=False))


_FUNCTIONS: dict[str, Any] = {
    "Min": smin,
    "Max": smax,
    "floor": sfloor,
    "ceiling": sceiling,
    "Mod": sympy.Mod,
    "Integer": sympy.Integer,
}


@cache
def parse_expr(text: str) -> sympy.Expr:
    """Parse an expression printed by `str(expr)` back into sympy (cached).

    Integers become sympy Integers and names become dim symbols; the text is
    checked to hold only names, numbers, arithmetic and calls first.
    """
    if not _EXPRESSION.fullmatch(text) or not text.strip():
        raise ValueError(f"not a shape expression: {text!r}")
    code = re.sub(r"\b\d+\b", lambda m: f"Integer({m[0]})", text)
    names = {n: symbol(n) for n in _IDENTIFIER.findall(text) if n not in _FUNCTIONS}
    try:
        value = eval(code, {"__builtins__": {}}, {**_FUNCTIONS, **names})
    except (SyntaxError, TypeError, NameError) as e:
        raise ValueError(f"not a shape expression: {text!r} ({e})") from None
    return cast(sympy.Expr, sympy.sympify(value))


def substitute(expr: sympy.Expr, mapping: Mapping[sympy.Symbol, sympy.Expr | int]) -> sympy.Expr:
    """`expr` with symbols replaced (a typed `xreplace`)."""
    table = {s: sympy.Integer(v) if isinstance(v, int) else v for s, v in mapping.items()}
    return cast(sympy.Expr, expr.xreplace(table))


def shape_attr(shape: Sequence[sympy.Expr]) -> ArrayAttr[StringAttr]:
    return ArrayAttr([StringAttr(str(d)) for d in shape])


def shape_from_attr(attr: Attribute) -> Shape:
    assert isinstance(attr, ArrayAttr)
    dims: list[sympy.Expr] = []
    for d in attr.data:
        assert isinstance(d, StringAttr)
        dims.append(parse_expr(d.data))
    return tuple(dims)


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
                "check": StringAttr(str(self)),
                "kind": StringAttr(self.kind.value),
                "op": StringAttr(self.origin),
            }
        )

    @staticmethod
    def from_attr(attr: Attribute) -> Guard:
        assert isinstance(attr, DictionaryAttr)
        fields = {k: v.data for k, v in attr.data.items() if isinstance(v, StringAttr)}
        lhs, rhs = fields["check"].split(" == ")
        return Guard(parse_expr(lhs), parse_expr(rhs), GuardKind(fields["kind"]), fields["op"])


def arg_symbol_name(arg: BlockArgument, axis: int) -> str:
    """`x_0` for axis 0 of argument `%x`; `arg2_0` when the argument has no name."""
    base = arg.name_hint or f"arg{arg.index}"
    return f"{re.sub(r'[^A-Za-z0-9_]', '_', base)}_{axis}"


def index_symbol_name(arg: BlockArgument) -> str:
    """`n` for an index argument `%n`; `cores_` for `%cores`, as CORES is taken."""
    name = arg_symbol_name(arg, 0)[:-2]
    return f"{name}_" if name == CORES.name else name


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
    return {
        symbol(k): parse_expr(v.data) for k, v in attr.data.items() if isinstance(v, StringAttr)
    }


def unified_dim(func: FuncOp, dim: sympy.Expr) -> sympy.Expr:
    """An argument's dim with the symbols guards replaced (`unified`) replaced: only its
    own symbols are looked up, not the whole table."""
    attr = func.attributes.get(UNIFIED)
    if not isinstance(attr, DictionaryAttr) or dim.is_Integer:
        return dim
    table: dict[sympy.Basic, sympy.Basic] = {}
    for s in dim.free_symbols:
        target = attr.data.get(str(s))
        if isinstance(target, StringAttr):
            table[s] = parse_expr(target.data)
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
    raise KeyError(f"no symbolic shape on {describe(op)}: run the symbolic-shapes pass first")


def block_argument_shape(arg: BlockArgument) -> Shape:
    block = arg.block
    assert isinstance(block, Block)
    parent = block.parent_op()
    if isinstance(parent, FuncOp):
        shape = argument_shape(parent, arg.index)
        if shape is None:
            raise KeyError(f"argument {arg.index} of @{parent.sym_name.data} has no shape")
        return tuple(unified_dim(parent, d) for d in shape)
    if isinstance(parent, FusionOp):
        return shape_of(parent.inputs[arg.index])
    if isinstance(parent, scf.ForOp) and arg.index > 0:  # arg 0 is the induction variable
        return shape_of(parent.results[arg.index - 1])
    if isinstance(parent, scf.WhileOp):
        return shape_of(parent.results[arg.index])
    assert parent is not None
    raise KeyError(f"no symbolic shape for an argument of {describe(parent)}")


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


COMPARISONS = {" == ": operator.eq, " <= ": operator.le}
"""The relations a condition (of a guarded choice) may state."""


def split_condition(condition: str) -> tuple[sympy.Expr, Callable[[Any, Any], bool], sympy.Expr]:
    for text, relation in COMPARISONS.items():
        if text in condition:
            lhs, rhs = condition.split(text)
            return parse_expr(lhs), relation, parse_expr(rhs)
    raise ValueError(f"condition {condition!r} is not `a == b` or `a <= b`")


def static_truth(condition: str) -> bool | None:
    """Whether a condition holds whatever the symbols' values, or fails whatever they
    are, when it names none (None: it depends on them)."""
    lhs, relation, rhs = split_condition(condition)
    if lhs.free_symbols or rhs.free_symbols:
        return None
    return bool(relation(lhs, rhs))


def conditions_hold(conditions: Iterable[str], bound: dict[sympy.Symbol, int]) -> bool:
    """Whether every condition (`lhs == rhs`, `lhs <= rhs`) holds for these symbol values."""
    for condition in conditions:
        lhs, relation, rhs = split_condition(condition)
        if not relation(substitute(lhs, bound), substitute(rhs, bound)):
            return False
    return True


def free_symbols(shapes: Iterable[Shape]) -> set[sympy.Symbol]:
    found: set[sympy.Symbol] = set()
    for shape in shapes:
        for d in shape:
            found |= {s for s in d.free_symbols if isinstance(s, sympy.Symbol)}
    return found
