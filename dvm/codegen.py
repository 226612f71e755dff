"""Python generated from sympy: the integer expressions a compiled program evaluates.

At compile time shapes, guards, tile sizes and choices are sympy expressions of the
shape symbols; evaluating them with sympy at every call would cost far more than the
call. So each set of expressions becomes one plain Python function, generated once:
`python_function` (any expressions), `sizes_function` (a kernel's output shapes and
params); `expression_code` is their text, which `dvm.expr_code` turns into functions
(the compile cache keeps it).
A floor or ceiling of a quotient is printed as integer division (`IntegerPrinter`),
exact at any size.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import sympy
from sympy.printing.pycode import PythonCodePrinter

from dvm.dialects.expr import integer_fraction
from dvm.expr_code import Code, Sizes, function_of_code, sizes_of_code


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


def integer_division(expr: sympy.Expr) -> sympy.Basic:
    """`expr` with each floor and ceiling of a quotient as FloorDiv or CeilDiv.

    The tree is rebuilt without evaluating its nodes again: `expr.replace` would
    re-evaluate every Max and Min above a replaced node (sympy compares their
    arguments pairwise each time): on the nested Max and Min of tile sizes, far more
    work than the rewrite itself."""
    return _with_integer_division(expr, {})


def _with_integer_division(e: sympy.Basic, done: dict[sympy.Basic, sympy.Basic]) -> sympy.Basic:
    """`integer_division` of `e`, each subtree rebuilt once (`done`). (A function of its
    own, not a closure that calls itself: that would be a cycle, garbage for the
    collector after each compile.)"""
    got = done.get(e)
    if got is not None:
        return got
    args = tuple(_with_integer_division(a, done) for a in e.args)
    made: Any = e  # (sympy's constructors are untyped)
    if isinstance(e, sympy.floor | sympy.ceiling):
        num, den = integer_fraction(args[0])
        kind = FloorDiv if isinstance(e, sympy.floor) else CeilDiv
        made = e.func(args[0]) if den == 1 else kind(num, den)
    elif args != e.args:
        made = e.func(*args, evaluate=False)  # type: ignore[call-arg]
    done[e] = made
    return made


class IntegerPrinter(PythonCodePrinter):
    """Python for integer expressions: a floor or ceiling of a quotient is integer
    division, exact at any size (sympy's own printer divides in floats, where
    floor(49 / 49) came out 0, and calls math besides)."""

    def _print_FloorDiv(self, expr: FloorDiv) -> str:
        num, den = expr.args
        return f"(({self._print(num)}) // ({self._print(den)}))"

    def _print_CeilDiv(self, expr: CeilDiv) -> str:
        num, den = expr.args
        return f"(-(-({self._print(num)}) // ({self._print(den)})))"


def expression_code(exprs: Sequence[sympy.Expr]) -> Code:
    """`exprs` as Python text: the subexpressions they share as temporaries, then each
    expression (plain data, which `dvm.expr_code` turns into functions)."""
    printer = IntegerPrinter()
    exact = [integer_division(e) for e in exprs]
    shared, reduced = common_subexpressions(exact)
    temps = [(str(t), str(printer.doprint(e))) for t, e in shared]
    return temps, [f"int({printer.doprint(e)})" for e in reduced]


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
    made: Any = e if args == e.args else e.func(*args, evaluate=False)  # type: ignore[call-arg]
    if counts[e] > 1:
        temporary = sympy.Symbol(f"_t{len(shared)}", integer=True)
        shared.append((temporary, made))
        made = temporary
    done[e] = made
    return made


def sizes_function(
    ranks: Sequence[int],
    names: Sequence[str],
    outputs: Sequence[tuple[Sequence[sympy.Expr], np.dtype[Any]]],
    params: Sequence[str],
    origin: str = "sizes",
) -> Sizes:
    """A kernel's `Sizes`, generated once: the input dims as locals `di_a`, `names`
    (params and other symbols) read from the call, then the output dims."""
    code = expression_code([e for dims, _ in outputs for e in dims])
    ranked = [(len(dims), dtype) for dims, dtype in outputs]
    return sizes_of_code(ranks, names, code, ranked, params, origin)
