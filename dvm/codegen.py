"""Python generated from sympy: the integer expressions a compiled program evaluates.

At compile time shapes, guards, tile sizes and choices are sympy expressions of the
shape symbols; evaluating them with sympy at every call would cost far more than the
call. So each set of expressions becomes one plain Python function, generated once:
`python_function` (any expressions); `expression_code` is the text of it and of a
kernel's output sizes, which `dvm.expr_code` turns into functions (the compile cache
keeps it).
A floor or ceiling of a quotient is printed as integer division (`python_text`, and
`IntegerPrinter` for what it leaves to sympy), exact at any size.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, cast

import sympy
from sympy.printing.pycode import PythonCodePrinter

from dvm.dialects.expr import integer_fraction, unevaluated, unevaluated_call
from dvm.expr_code import Code, function_of_code, generated


def python_function(
    exprs: Sequence[sympy.Expr], names: Sequence[str], origin: str = "expressions"
) -> Callable[..., tuple[int, ...]]:
    """A plain Python function of the named ints that computes integer
    expressions (generated once from sympy; calling it costs a microsecond).
    Subexpressions the expressions share are computed once (a tile size
    appears many times in a choice's condition). `origin` names it in tracebacks
    (`vm.generated.define`)."""
    return function_of_code(expression_code(exprs), names, origin)


class FloorDiv(sympy.Function):
    """floor(p / q) of integers p and q, kept whole (`cse` would pull out p/q)."""


class CeilDiv(sympy.Function):
    """ceiling(p / q) of integers p and q."""


@lru_cache(maxsize=1 << 14)
def integer_division(expr: sympy.Basic) -> sympy.Basic:
    """`expr` with each floor and ceiling of a quotient as FloorDiv or CeilDiv.

    The tree is rebuilt without evaluating its nodes again: `expr.replace` would
    re-evaluate every Max and Min above a replaced node (sympy compares their
    arguments pairwise each time): on the nested Max and Min of tile sizes, far more
    work than the rewrite itself. Remembered for each subtree: a program's choices,
    guards and output sizes repeat its tile sizes, and a compile again repeats them all."""
    if not expr.args:
        return expr
    args = tuple(map(integer_division, expr.args))
    if isinstance(expr, sympy.floor | sympy.ceiling):
        num, den = integer_fraction(args[0])
        if den == 1:
            return expr.func(args[0])
        kind = FloorDiv if isinstance(expr, sympy.floor) else CeilDiv
        # (sympy gives a function that declares no argument count the naturals)
        return unevaluated_call(kind, (num, den), sympy.Naturals0)
    return expr if args == expr.args else rebuilt(expr, args)


def rebuilt(expr: sympy.Basic, args: tuple[sympy.Basic, ...]) -> sympy.Basic:
    """`expr.func(*args, evaluate=False)`; a Min or Max without sympy's sort keys for
    arguments their node counts order (`expr.unevaluated`): sympy's `ordered` counts
    each argument's whole tree again, at every level of a nested tile size."""
    if isinstance(expr, sympy.Min | sympy.Max):
        return unevaluated(type(expr), cast(tuple[sympy.Expr, ...], args))
    if expr.is_Add or expr.is_Mul:  # (as `evaluate=False` makes them, without its checks)
        # (integer arithmetic: the arguments are commutative, as `expr`'s were)
        return cast(Any, type(expr))._from_args(args, is_commutative=expr.is_commutative)
    return expr.func(*args, evaluate=False)  # type: ignore[call-arg]


class IntegerPrinter(PythonCodePrinter):
    """Python for integer expressions: a floor or ceiling of a quotient is integer
    division, exact at any size (sympy's own printer divides in floats, where
    floor(49 / 49) came out 0, and calls math besides)."""

    def _print_FloorDiv(self, expr: FloorDiv | CeilDiv) -> str:
        return quotient_text(expr, *map(self._print, expr.args))

    _print_CeilDiv = _print_FloorDiv


def quotient_text(expr: FloorDiv | CeilDiv | sympy.Mod, num: str, den: str) -> str:
    """Python for `expr` given its operands' texts. A quotient or remainder by 0 is 0,
    as the VM and the reference interpreter define it (`numerics.floor_divide`): a
    divisor read from a size may be 0 at run time, where Python's `//` would raise."""
    if isinstance(expr, FloorDiv):
        text = f"(({num}) // ({den}))"
    elif isinstance(expr, CeilDiv):
        text = f"(-(-({num}) // ({den})))"
    else:
        text = f"(({num}) % ({den}))"
    return text if never_zero(expr.args[1]) else f"({text} if ({den}) else 0)"


def never_zero(expr: sympy.Basic) -> bool:
    """Whether `expr` is nonzero by its form: a nonzero literal, or a Max of a positive
    one (a tile count's divisor, `max(1, ...)`)."""
    if isinstance(expr, sympy.Integer):
        return expr != 0
    return isinstance(expr, sympy.Max) and any(
        isinstance(a, sympy.Integer) and a > 0 for a in expr.args
    )


def expression_code(exprs: Sequence[sympy.Expr]) -> Code:
    """`exprs` as Python text: the subexpressions they share as temporaries, then each
    expression (plain data, which `dvm.expr_code` turns into functions)."""
    exact = [integer_division(e) for e in exprs]
    shared, reduced = common_subexpressions(exact)
    temps = [(t.name, python_text(e)) for t, e in shared]
    values = [f"int({python_text(e)})" for e in reduced]
    generated([*(text for _, text in temps), *values])
    return temps, values


def python_text(expr: sympy.Basic) -> str:
    """Python for an integer expression (after `integer_division`), its terms and
    factors in the order sympy holds them. Written here for the integer arithmetic
    shapes and tile sizes are made of: sympy's printer orders a sum's terms by sort
    keys and weighs each node's precedence, tens of microseconds a node the first
    time it meets one. Anything else (a rational coefficient, a negative power) is
    left to sympy's printer (`IntegerPrinter`), in parentheses."""
    if isinstance(expr, sympy.Integer):
        return str(int(expr))  # (what sympy prints, without its printer)
    if type(expr) is sympy.Symbol:
        return expr.name
    if expr.is_Symbol:  # (a dummy prints with its mark)
        return str(expr)
    if expr.is_Add:
        return _sum_text(expr.args)
    if expr.is_Mul:
        coefficient, factors = _signed_term(expr)
        if coefficient is not None:
            return _product_text(coefficient, factors)
    elif expr.is_Pow:
        if _plain_factor(expr):
            return f"{_operand(expr.args[0])}**{expr.args[1]}"
    elif isinstance(expr, sympy.Min | sympy.Max):
        name = "min" if isinstance(expr, sympy.Min) else "max"
        return f"{name}({', '.join(map(python_text, expr.args))})"
    elif isinstance(expr, FloorDiv | CeilDiv | sympy.Mod):
        return quotient_text(expr, *map(python_text, expr.args))
    elif isinstance(expr, sympy.floor | sympy.ceiling):
        name = "math.floor" if isinstance(expr, sympy.floor) else "math.ceil"
        return f"{name}({python_text(expr.args[0])})"
    return f"({IntegerPrinter().doprint(expr)})"


def _plain_factor(expr: sympy.Basic) -> bool:
    """Whether a factor of a product is no power, or a power with a positive integer
    exponent (a quotient's 1/y is left to sympy's printer)."""
    if not expr.is_Pow:
        return True
    exponent = expr.args[1]
    return isinstance(exponent, sympy.Integer) and int(exponent) > 0


def _sum_text(terms: Sequence[sympy.Basic]) -> str:
    """`a + b - 2*c`: a term with a negative coefficient is subtracted."""
    text = python_text(terms[0])
    for term in terms[1:]:
        coefficient, factors = _signed_term(term)
        if coefficient is not None and coefficient < 0:
            text += f" - {_product_text(-coefficient, factors)}"
        else:
            text += f" + {python_text(term)}"
    return text


def _signed_term(term: sympy.Basic) -> tuple[int | None, list[sympy.Basic]]:
    """(the integer coefficient, the other factors) of a product of plain factors or a
    number; (None, []) for any other term."""
    if isinstance(term, sympy.Integer):
        return int(term), []
    if term.is_Mul:
        first, *factors = term.args
        if not first.is_Number:
            first, factors = sympy.Integer(1), list(term.args)
        if isinstance(first, sympy.Integer) and all(map(_plain_factor, factors)):
            return int(first), factors
    return None, []


def _product_text(coefficient: int, factors: Sequence[sympy.Basic]) -> str:
    parts = [_operand(f) for f in factors]
    if not parts:
        return str(coefficient)
    if coefficient == 1:
        return "*".join(parts)
    if coefficient == -1:
        return "-" + "*".join(parts)
    return "*".join([str(coefficient), *parts])


def _operand(expr: sympy.Basic) -> str:
    """`python_text` of `expr` as an operand of `*`, `%` or `**`."""
    text = python_text(expr)
    if expr.is_Symbol or (isinstance(expr, sympy.Integer) and int(expr) >= 0):
        return text
    if isinstance(expr, sympy.Min | sympy.Max | sympy.floor | sympy.ceiling | FloorDiv | CeilDiv):
        return text  # a call, or parenthesized
    return f"({text})"


def common_subexpressions(
    exprs: Sequence[sympy.Basic],
) -> tuple[list[tuple[sympy.Symbol, sympy.Basic]], list[sympy.Basic]]:
    """(temporaries `_t0`, `_t1`, ... each with the subtree it names, in the order they
    are computed; `exprs` with every subtree met more than once replaced by its
    temporary). sympy's `cse` does this too, but it rebuilds each Max and Min with
    evaluation, which compares their arguments pairwise: on tile sizes, most of a
    compile's code generation. Here nothing is evaluated again."""
    counts: dict[sympy.Basic, int] = {}
    for e in exprs:
        _count_subtrees(e, counts)
    shared: list[tuple[sympy.Symbol, sympy.Basic]] = []
    done: dict[sympy.Basic, sympy.Basic] = {}
    return shared, [_named_subtrees(e, counts, done, shared) for e in exprs]


def _count_subtrees(e: sympy.Basic, counts: dict[sympy.Basic, int]) -> None:
    """How often each subtree that is no atom occurs (those inside a repeated one once)."""
    if e.is_Atom:
        return
    seen = counts.get(e, 0)
    counts[e] = seen + 1
    if not seen:
        for a in e.args:
            _count_subtrees(a, counts)


def _named_subtrees(
    e: sympy.Basic,
    counts: dict[sympy.Basic, int],
    done: dict[sympy.Basic, sympy.Basic],
    shared: list[tuple[sympy.Symbol, sympy.Basic]],
) -> sympy.Basic:
    """`e` rebuilt unevaluated, each repeated subtree a temporary defined in `shared`."""
    if e.is_Atom:
        return e
    got = done.get(e)
    if got is not None:
        return got
    args = tuple(_named_subtrees(a, counts, done, shared) for a in e.args)
    made: Any = e if args == e.args else rebuilt(e, args)
    if counts[e] > 1:
        temporary = sympy.Symbol(f"_t{len(shared)}", integer=True)
        shared.append((temporary, made))
        made = temporary
    done[e] = made
    return made
