"""Python generated from sympy: the integer expressions a compiled program evaluates.

At compile time shapes, guards, tile sizes and choices are sympy expressions of the
shape symbols; evaluating them with sympy at every call would cost far more than the
call. So each set of expressions becomes one plain Python function, generated once:
`python_function` (any expressions), `sizes_function` (a kernel's output shapes and
params) and `binder_source` (a program's fast path from arguments to symbol values).
A floor or ceiling of a quotient is printed as integer division (`IntegerPrinter`),
exact at any size.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import sympy
from sympy.printing.pycode import PythonCodePrinter
from xdsl.dialects.builtin import DYNAMIC_INDEX
from xdsl.ir import Attribute

from dvm.vm.generated import define


def python_function(
    exprs: Sequence[sympy.Expr], names: Sequence[str], origin: str = "expressions"
) -> Callable[..., tuple[int, ...]]:
    """A plain Python function of the named ints that computes integer
    expressions (generated once from sympy; calling it costs a microsecond).
    Subexpressions the expressions share are computed once (a tile size
    appears many times in a choice's condition). `origin` names it in tracebacks
    (`vm.generated.define`)."""
    lines, values = python_lines(exprs)
    body = "".join(f"{v}, " for v in values)
    source = f"def f({', '.join(names)}):\n{''.join(lines)}    return ({body})\n"
    namespace: dict[str, Any] = {"math": math}
    return define(source, "f", namespace, origin)


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
        num, den = sympy.fraction(sympy.together(args[0]))
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


def python_lines(exprs: Sequence[sympy.Expr]) -> tuple[list[str], list[str]]:
    """Lines computing the subexpressions `exprs` share, and each expression's text."""
    printer = IntegerPrinter()
    exact = [integer_division(e) for e in exprs]
    shared, reduced = common_subexpressions(exact)
    lines = [f"    {t} = {printer.doprint(e)}\n" for t, e in shared]
    return lines, [f"int({printer.doprint(e)})" for e in reduced]


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


Sizes = Callable[
    [Sequence[np.ndarray[Any, Any]], dict[str, int]],
    tuple[list[tuple[tuple[int, ...], Any]], list[tuple[int, ...]], list[int]],
]
"""(inputs, the call's symbol values) -> the outputs' (shape, dtype), every argument's
shape (inputs, then outputs) and the params' values."""


def sizes_function(
    ranks: Sequence[int],
    names: Sequence[str],
    outputs: Sequence[tuple[Sequence[sympy.Expr], np.dtype[Any]]],
    params: Sequence[str],
    origin: str = "sizes",
) -> Sizes:
    """A kernel's `Sizes`, generated once: the input dims as locals `di_a`, `names`
    (params and other symbols) read from the call, then the output dims."""
    lines = ["def sizes(_I, _Y):\n"]
    for i, rank in enumerate(ranks):
        dims = "".join(f"d{i}_{a}, " for a in range(rank))
        lines.append(f"    ({dims}) = _S{i} = _I[{i}].shape\n")
    lines += [f"    {name} = _Y[{name!r}]\n" for name in names]
    computed, values = python_lines([e for dims, _ in outputs for e in dims])
    lines += computed
    shapes, k = [f"_S{i}" for i in range(len(ranks))], 0
    for j, (dims, _) in enumerate(outputs):
        lines.append(f"    _O{j} = ({''.join(f'{v}, ' for v in values[k : k + len(dims)])})\n")
        shapes.append(f"_O{j}")
        k += len(dims)
    outs = ", ".join(f"(_O{j}, _dt{j})" for j in range(len(outputs)))
    lines.append(f"    return [{outs}], [{', '.join(shapes)}], [{', '.join(params)}]\n")
    namespace: dict[str, Any] = {"math": math}
    namespace |= {f"_dt{j}": dtype for j, (_, dtype) in enumerate(outputs)}
    return define("".join(lines), "sizes", namespace, origin)


def binder_source(
    checks: Sequence[tuple[str, Attribute, np.dtype[Any] | None, tuple[int, ...]]],
    symbols: Sequence[tuple[int, int, str]],
    guard_names: Sequence[str],
    guards: int,
) -> str:
    """Python source of a program's binder: `bind(args)` returns the symbol values of the
    generic variant, or None when anything is not as the fast path expects (a wrong
    array, a guard that fails), for the full checks to say what and where, or to fix
    dims to 1. Made only from argument positions, axes and static dims."""
    lines = ["def bind(args):", f"    if len(args) != {len(checks)}: return None"]
    names = [f"a{i}" for i in range(len(checks))]
    lines.append(f"    [{', '.join(names)}] = args")
    for i, (_, _, dtype, declared) in enumerate(checks):
        if dtype is None:  # index or scalar: converted by the full check, which names a bad one
            lines.append(f"    _check({i}, a{i})")
            continue
        # numpy's built-in dtypes are singletons: any other equal one takes the full check
        wrong = f"type(a{i}) is not _ndarray or a{i}.dtype is not _dt{i}"
        if DYNAMIC_INDEX not in declared:  # a static shape: one tuple comparison
            lines.append(f"    if {wrong} or a{i}.shape != {declared!r}: return None")
            continue
        lines.append(f"    if {wrong}: return None")
        lines.append(f"    d{i} = a{i}.shape")
        tests = [f"len(d{i}) != {len(declared)}"]
        tests += [f"d{i}[{k}] != {n}" for k, n in enumerate(declared) if n != DYNAMIC_INDEX]
        lines.append(f"    if {' or '.join(tests)}: return None")
    values = {name: f"d{i}[{a}]" for i, a, name in symbols}  # the last occurrence, as `bind`
    if guards:  # each guard's two sides, from the symbols in `guard_names`' order
        lines.append(f"    g = _guards({', '.join(values[n] for n in guard_names)})")
        unequal = " or ".join(f"g[{2 * k}] != g[{2 * k + 1}]" for k in range(guards))
        lines.append(f"    if {unequal}: return None")
    found = ", ".join(f"{name!r}: {v}" for name, v in values.items())
    lines.append(f"    return {{{found}}}")
    return "\n".join(lines) + "\n"
