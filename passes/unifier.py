"""Guards and the substitution they imply (`Unifier`), for `symbolic-shapes`.

Where a shape rule needs two dims equal that are not provably so, the pass records
a guard and unifies the two: the younger symbol is replaced by the other expression
everywhere, so later passes see one symbol where the program has one size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

import sympy
from xdsl.ir import Operation

from dvm.dialects.expr import symbol
from dvm.passes.errors import ProgramError, describe
from dvm.passes.symbolic import Guard, GuardKind

ONE = sympy.Integer(1)


def same(a: sympy.Expr, b: sympy.Expr) -> bool:
    """Provably equal. Shapes are polynomials in the symbols, so expanding
    the difference decides it exactly; two symbols or numbers are equal only when
    they are the same (most dims are: no difference to build and expand)."""
    if a == b:
        return True
    if (a.is_Symbol or a.is_Integer) and (b.is_Symbol or b.is_Integer):
        return False
    return sympy.expand(a - b) == 0


@dataclass
class Unifier:
    """Guards and the substitution they imply, for one function."""

    guards: list[Guard] = field(default_factory=list)
    replaced: dict[sympy.Symbol, sympy.Expr] = field(default_factory=dict)
    order: dict[sympy.Symbol, int] = field(default_factory=dict)
    stretched: dict[sympy.Symbol, sympy.Expr] = field(default_factory=dict)
    """Symbols a broadcast assumed equal to another dim (they may be 1 instead)."""
    stretchers: dict[sympy.Symbol, Operation] = field(default_factory=dict)  # their broadcasts
    origins: list[Operation] = field(default_factory=list)
    """The op that required each guard, in the order of `guards`."""
    unit_claims: list[Guard] = field(default_factory=list)
    """Guards `contradiction` knowingly added that fail in this variant."""
    late: set[sympy.Symbol] = field(default_factory=set)
    """Symbols of values made while the program runs (an index computed on the host,
    the dims an `scf.if` result takes from either branch): never substituted, so that
    they keep their names where the runtime binds them, and checks their guards."""

    users: dict[sympy.Symbol, set[sympy.Symbol]] = field(default_factory=dict)
    """For each symbol, the replaced symbols whose replacement names it."""
    unexpanded: set[sympy.Symbol] = field(default_factory=set)
    """The replacement made last, which `replace` expands next time (as it is kept
    as given until then)."""
    canonical: dict[sympy.Expr, sympy.Expr] = field(default_factory=dict)
    """What `canon` made of each expression since the last replacement (the ops of a
    program ask about the same few sizes)."""

    def new_symbol(self, name: str, late: bool = False) -> sympy.Symbol:
        s = symbol(name)
        self.order.setdefault(s, len(self.order))
        if late:
            self.late.add(s)
        return s

    def canon(self, e: sympy.Expr) -> sympy.Expr:
        if not self.replaced:
            return e
        found = self.canonical.get(e)
        if found is None:
            found = self.canonical[e] = sympy.expand(e.xreplace(self.replaced))
        return found

    def require_equal(
        self, a: sympy.Expr, b: sympy.Expr, kind: GuardKind, op: Operation
    ) -> sympy.Expr:
        """Record that `a == b` must hold for `op`; return the unified dim."""
        a, b = self.canon(a), self.canon(b)
        if same(a, b):
            return a
        if a.is_number and b.is_number:
            return self.contradiction(a, b, kind, op)
        return self.hold(Guard(a, b, kind, describe(op)), op)

    def assume(self, guard: Guard, op: Operation) -> None:
        """Hold `guard`, which an earlier run found, from the start: after a rewrite
        the ops that made it may be gone (`concat(a, b) * s` split into slices of `s`),
        but what it unified still names the same sizes. Only a guard over the symbols
        known so far (the arguments') is taken."""
        a, b = self.canon(guard.lhs), self.canon(guard.rhs)
        known = (a.free_symbols | b.free_symbols) <= self.order.keys()
        if known and not same(a, b) and not (a.is_number and b.is_number):
            self.hold(Guard(a, b, guard.kind, guard.origin), op)

    def hold(self, guard: Guard, op: Operation) -> sympy.Expr:
        """Add `guard` (its sides canonical and different) and unify its sides."""
        self.add_guard(guard, op)
        target, source = self.pick_replacement(guard.lhs, guard.rhs)
        if source is None:
            return guard.lhs
        self.replace(source, target)
        if guard.kind is GuardKind.BROADCAST:
            self.stretched[source] = target
            self.stretchers[source] = op
        return self.canon(guard.lhs)  # (`2*h == 2*w` replaced `h` by `w`: `2*w`)

    def contradiction(
        self, a: sympy.Expr, b: sympy.Expr, kind: GuardKind, op: Operation
    ) -> sympy.Expr:
        """Two different sizes. If one is 1 and the other came from assuming
        a dim equal to it for a broadcast, the program is still defined when
        that dim is 1: require it (the broadcast guard, checked first, then
        re-specializes for 1). Otherwise no input can satisfy the program."""
        for dim, size in self.stretched.items():
            if {self.canon(size), ONE} == {a, b}:
                claim = Guard(dim, ONE, GuardKind.EQUAL, describe(op))
                self.add_guard(claim, op)
                self.unit_claims.append(claim)
                return a
        raise ProgramError(op, f"dims {a} and {b} can never be equal ({kind.value} rule)")

    def add_guard(self, guard: Guard, op: Operation) -> None:
        self.guards.append(guard)
        self.origins.append(op)

    def require_unit(self, symbols: Sequence[sympy.Symbol], op: Operation) -> None:
        """Fix `symbols` to 1, as a guard for `op` that the runtime checks."""
        for s in symbols:
            self.add_guard(Guard(s, ONE, GuardKind.EQUAL, describe(op)), op)
            self.replace(s, ONE)

    def broken_guard(self) -> tuple[Guard, Operation] | None:
        """The first guard that later unifications made two different numbers
        (other than the unit claims `contradiction` made on purpose)."""
        for guard, op in zip(self.guards, self.origins, strict=True):
            lhs, rhs = self.canon(guard.lhs), self.canon(guard.rhs)
            if lhs.is_number and rhs.is_number and lhs != rhs and guard not in self.unit_claims:
                return guard, op
        return None

    def pick_replacement(
        self, a: sympy.Expr, b: sympy.Expr
    ) -> tuple[sympy.Expr, sympy.Symbol | None]:
        """Which side to substitute: a plain symbol, the younger one if both are;
        never a symbol by an expression that contains it (`x_0 == x_0*x_1`
        stays a guard: substituting would loop), and no late symbol (`i3 == x_0` stays a
        guard, checked when the program makes i3)."""
        if (a.free_symbols | b.free_symbols) & self.late:
            return a, None
        a, b = without_common_factor(a, b)
        candidates = [
            (x, y)
            for x, y in ((a, b), (b, a))
            if isinstance(y, sympy.Symbol) and y not in x.free_symbols
        ]
        if not candidates:
            return a, None
        target, source = max(candidates, key=lambda c: self.order.get(c[1], -1))
        assert isinstance(source, sympy.Symbol)
        return target, source

    def replace(self, source: sympy.Symbol, target: sympy.Expr) -> None:
        """Replace `source` by `target` everywhere: in the replacements that name it
        (found through `users`, so that a unification costs what it changes, not the
        size of the table) and from now on. Every replacement is kept expanded, the
        one made last excepted (as `canon` made it)."""
        for s in {*self.users.pop(source, ()), *self.unexpanded}:
            self.replaced[s] = sympy.expand(self.replaced[s].xreplace({source: target}))
            for used in self.replaced[s].free_symbols:
                self.users.setdefault(cast(sympy.Symbol, used), set()).add(s)
        self.replaced[source] = target
        for used in target.free_symbols:
            self.users.setdefault(cast(sympy.Symbol, used), set()).add(source)
        self.unexpanded = {source}
        self.canonical.clear()


def without_common_factor(a: sympy.Expr, b: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
    """`a == b` with both sides divided by the numbers they share (`2*h == 2*w` is
    `h == w`: sizes are integers), so that a side may become a plain symbol."""
    content_a, content_b = a.as_content_primitive()[0], b.as_content_primitive()[0]
    if content_a.is_Integer and content_b.is_Integer:  # (sympy's gcd goes through polys)
        factor = sympy.Integer(math.gcd(int(content_a), int(content_b)))
    else:
        factor = sympy.gcd(content_a, content_b)
    if factor in (0, 1):
        return a, b
    return sympy.expand(a / factor), sympy.expand(b / factor)
