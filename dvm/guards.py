"""Guards at run time: the shape assumptions `symbolic-shapes` made, checked per call.

A guard says two expressions of the shape symbols are equal (`passes/symbolic.py`).
`guard_check` makes a function that checks guards on symbol values, `describe_guard`
the message of a failed one (the op, the rule, and the argument axes each side comes
from), and `stretchable_symbols` finds the argument symbols a broadcast guard assumed
equal to the other side: where one is 1, the program takes a variant with that dim
fixed to 1 (and with a side of 1 of any other expression, a variant with what it reads fixed).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sympy
from xdsl.dialects.builtin import TensorType
from xdsl.dialects.func import FuncOp

from dvm.codegen import expression_code, python_function
from dvm.dialects.expr import symbol_names
from dvm.errors import CallError, ShapeError
from dvm.guard_notes import GuardCheck, GuardNote, GuardSet, sides_checker
from dvm.passes.symbolic import (
    Guard,
    GuardKind,
    arg_symbol_name,
    function_guards,
    substitute,
)


def describe_guard(
    func: FuncOp, symbols: Sequence[tuple[int, int, str]], guard: Guard, lhs: int, rhs: int
) -> str:
    """A failed guard's message: the op, the guard, each side's value and
    which argument axes (or values made on the way) it comes from."""
    return guard_note(func, symbols, guard).message(lhs, rhs)


def guard_note(func: FuncOp, symbols: Sequence[tuple[int, int, str]], guard: Guard) -> GuardNote:
    """What a call needs of `guard` (`symbols`: the argument axes each symbol names)."""

    def where(expr: sympy.Expr) -> str | None:
        if expr.is_number:
            return None
        names = symbol_names([expr])
        axes = []
        for i, a, n in symbols:
            if n in names:
                hint = func.body.block.args[i].name_hint
                axes.append(f"axis {a} of {f'%{hint}' if hint else f'argument {i}'}")
        if not axes:  # (a symbol the call makes: a branch's or a loop's dim, an index)
            return str(expr)
        if isinstance(expr, sympy.Symbol):
            return f"{' / '.join(axes)} ({expr})"
        return f"{expr} (from {' / '.join(axes)})"

    rule = "broadcast" if guard.kind is GuardKind.BROADCAST else "equal sizes"
    sides = [e.name if isinstance(e, sympy.Symbol) else None for e in (guard.lhs, guard.rhs)]
    reads = [tuple(sorted(symbol_names([e]))) for e in (guard.lhs, guard.rhs)]
    return GuardNote(
        guard.kind is GuardKind.BROADCAST,
        (sides[0], sides[1]),
        f"@{func.sym_name.data}: {guard.origin} needs {guard} ({rule}), but ",
        (where(guard.lhs), where(guard.rhs)),
        (reads[0], reads[1]),
    )


def guard_set(
    func: FuncOp, symbols: Sequence[tuple[int, int, str]], guards: Sequence[Guard]
) -> GuardSet:
    """`guards` as plain data: their symbols, their sides as code, their notes."""
    names = names_read(guards)
    code = expression_code([e for g in guards for e in (g.lhs, g.rhs)])
    return GuardSet(names, code, [guard_note(func, symbols, g) for g in guards])


def guard_names(guard: Guard) -> set[str]:
    """The names of the symbols `guard` reads."""
    return symbol_names((guard.lhs, guard.rhs))


def names_read(guards: Sequence[Guard]) -> list[str]:
    """The names of the symbols any of `guards` reads, sorted: their code's arguments."""
    return sorted(set().union(*map(guard_names, guards)))


def guard_check(
    guards: Sequence[Guard], failed: Callable[[Guard, int, int], Exception], origin: str
) -> GuardCheck:
    """A function that checks `guards` on symbol values, raising `failed(...)`; `origin`
    names its generated code."""
    if not guards:
        return lambda symbols: None
    names = names_read(guards)
    sides = python_function([e for g in guards for e in (g.lhs, g.rhs)], names, origin)
    return sides_checker(sides, names, guards, failed)


def stretchable_symbols(
    guards: Sequence[Guard], symbols: Sequence[tuple[int, int, str]]
) -> list[tuple[str, frozenset[tuple[int, int]]]]:
    """The argument symbols that are one side of a broadcast guard among `guards`, with
    the (argument, axis) each names (see `Variant.stretchable`)."""
    names = sorted(
        {
            side.name
            for g in guards
            if g.kind is GuardKind.BROADCAST
            for side in (g.lhs, g.rhs)
            if isinstance(side, sympy.Symbol)
        }
        & {name for _, _, name in symbols}
    )
    return [(n, frozenset((i, a) for i, a, name in symbols if name == n)) for n in names]


def check_call_guards(func: FuncOp, symbols: dict[sympy.Symbol, int]) -> None:
    """Check `func`'s guards (`dvm.guards`, present once `symbolic-shapes` ran) on the
    call's symbol values, as a compiled program checks them: a `CallError` naming the
    op, except for a broadcast guard with a side of 1, where the compiled program
    takes a variant with what that side reads fixed. How the reference interpreter runs a
    lowered module, so that it fails where the compiled program does (an argmax over
    an empty axis, once rewritten as reductions, would return the fill value). A
    guard on symbols the call does not bind yet (values a kernel computes) is left
    to the program (`late_guard_check`)."""
    axes = argument_axes(func)
    for guard in function_guards(func):
        lhs, rhs = (substitute(side, symbols) for side in (guard.lhs, guard.rhs))
        if not (lhs.is_number and rhs.is_number) or lhs == rhs:
            continue
        if guard.kind is GuardKind.BROADCAST and 1 in (lhs, rhs):
            continue
        raise CallError(describe_guard(func, axes, guard, int(lhs), int(rhs)))


def argument_axes(func: FuncOp) -> list[tuple[int, int, str]]:
    """(argument, axis, symbol name) of each axis of `func`'s tensor arguments."""
    return [
        (i, a, arg_symbol_name(arg, a))
        for i, arg in enumerate(func.body.block.args)
        if isinstance(arg.type, TensorType)
        for a in range(len(arg.type.get_shape()))
    ]


def late_guard_check(func: FuncOp, symbols: dict[sympy.Symbol, int]) -> Callable[[set[str]], None]:
    """A check of `func`'s *late* guards, those that read a symbol the call has not
    bound yet (`symbols`: what it binds at the start), for the reference interpreter
    to run each time it binds some of them (their names given): a `ShapeError` naming
    the op, as the compiled program raises once it has made the value. No variant can
    fix a value made on the way, so a broadcast guard with a side of 1 fails too."""
    known = {s.name for s in symbols}
    late = [g for g in function_guards(func) if not guard_names(g) <= known]
    if not late:
        return lambda bound: None
    axes = argument_axes(func)

    def check(bound: set[str]) -> None:
        for guard in late:
            if not guard_names(guard) & bound:
                continue
            lhs, rhs = (substitute(side, symbols) for side in (guard.lhs, guard.rhs))
            if lhs.is_number and rhs.is_number and lhs != rhs:
                raise ShapeError(describe_guard(func, axes, guard, int(lhs), int(rhs)))

    return check
