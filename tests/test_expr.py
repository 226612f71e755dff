"""Symbolic expressions in the IR (`dvm.dialects.expr`): text that round-trips.

An expression prints as sympy prints it and parses back, by the dialect's own
parser, to an expression that prints the same and has the same value. So a
program at any level prints, parses and prints again to the same text: checked
for every program in tests/regressions and tests/filecheck, lowered through the
pipeline.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest
import sympy
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import ParseError

import dvm
import dvm.pipeline as pipeline
from dvm.dialects.expr import (
    ConditionAttr,
    ExprAttr,
    ShapeAttr,
    expr_text,
    integer_fraction,
    parse_condition_text,
    parse_expr,
    replace,
    sceiling,
    sfloor,
    smax,
    smin,
    symbol,
    symbols_in,
)
from dvm.passes.symbolic import substitute

SYMBOLS = [symbol(name) for name in ("x_0", "x_1", "t0", "cores", "s3")]
TESTS = Path(__file__).resolve().parent


def random_expr(rng: random.Random, depth: int) -> sympy.Expr:
    """An expression of the kinds the pipeline makes: arithmetic, quotients,
    powers, Min, Max, floor, ceiling and Mod of symbols and integers."""
    if depth == 0 or rng.random() < 0.2:
        if rng.random() < 0.6:
            return rng.choice(SYMBOLS)
        return sympy.Integer(rng.randint(-3, 300))
    a, b = random_expr(rng, depth - 1), random_expr(rng, depth - 1)
    divisor = rng.choice([*SYMBOLS, sympy.Integer(rng.randint(1, 64))])  # (never 0: see below)
    kind = rng.choice(["+", "-", "*", "/", "**", "min", "max", "floor", "ceiling", "mod"])
    if kind == "+":
        return a + b
    if kind == "-":
        return a - b
    if kind == "*":
        return a * b
    if kind == "/":
        return a / divisor
    if kind == "**":
        return a ** rng.randint(-2, 3) if a.free_symbols else a
    if kind == "min":
        return smin(a, b, random_expr(rng, depth - 1))
    if kind == "max":
        return smax(a, b)
    if kind == "floor":
        return sfloor(a / divisor)
    if kind == "ceiling":
        return sceiling(a / divisor)
    return sympy.Mod(a, rng.randint(1, 9))  # type: ignore[return-value]


def random_exprs(seed: int, count: int) -> list[sympy.Expr]:
    rng = random.Random(seed)
    return [random_expr(rng, rng.randint(1, 5)) for _ in range(count)]


def test_random_expressions_print_parse_and_print_the_same() -> None:
    rng = random.Random(1)
    for expr in random_exprs(0, 400):
        text = expr_text(expr)
        parsed = parse_expr(text)
        assert expr_text(parsed) == text
        for _ in range(3):  # the same value (symbols are at least 1: no division by 0)
            values = {s: rng.randint(1, 40) for s in SYMBOLS}
            assert substitute(parsed, values) == substitute(expr, values), (text, values)


def test_generated_python_computes_integer_expressions_exactly() -> None:
    """`codegen.python_text` writes integer arithmetic itself (sums with negative terms,
    products, powers, Min, Max, quotients under floor and ceiling, Mod) and leaves the
    rest to sympy's printer: the generated function gives sympy's exact values."""
    from dvm.codegen import integer_division, python_function

    names = [s.name for s in SYMBOLS]
    rng = random.Random(2)
    exact = [e for e in random_exprs(3, 600) if is_integer_arithmetic(integer_division(e))]
    assert len(exact) > 200
    function = python_function(exact, names)
    for _ in range(20):  # (symbols at least 1: no division by 0)
        values = {s: rng.randint(1, 60) for s in SYMBOLS}
        got = function(*(values[s] for s in SYMBOLS))
        assert list(got) == [substitute(e, values) for e in exact], values


def test_integer_division_builds_what_sympy_builds_unevaluated() -> None:
    """`integer_division` rebuilds a tree without sympy's constructors (a Min or Max
    ordered by `unevaluated`, a FloorDiv or CeilDiv made bare) and remembers it: the
    same tree, argument order and argument counts as sympy's unevaluated rebuild."""
    from dvm.codegen import CeilDiv, FloorDiv, integer_division

    def by_sympy(e: sympy.Basic) -> Any:
        args = tuple(map(by_sympy, e.args))
        if isinstance(e, sympy.floor | sympy.ceiling):
            num, den = integer_fraction(args[0])
            kind = FloorDiv if isinstance(e, sympy.floor) else CeilDiv
            return e.func(args[0]) if den == 1 else kind(num, den)
        return e.func(*args, evaluate=False) if args != e.args else e  # type: ignore[call-arg]

    exprs = random_exprs(8, 300)
    for expr in exprs + exprs:  # (the second time, from what it remembers)
        made, expected = integer_division(expr), by_sympy(expr)
        assert sympy.srepr(made) == sympy.srepr(expected), expr
        pairs = zip(sympy.preorder_traversal(made), sympy.preorder_traversal(expected), strict=True)
        for a, b in pairs:
            assert getattr(a, "nargs", None) == getattr(b, "nargs", None), (a, b)


def is_integer_arithmetic(expr: sympy.Basic) -> bool:
    """No division but under floor and ceiling (which `integer_division` has taken)."""
    if expr.is_Rational and not expr.is_Integer:
        return False
    if expr.is_Pow and not (isinstance(expr.args[1], sympy.Integer) and int(expr.args[1]) > 0):
        return False
    return all(map(is_integer_arithmetic, expr.args))


def test_quotients_are_what_sympy_makes() -> None:
    """`tiling.quotient` puts a number, a name, a sum or a call over a sum, a call or a
    whole number times a call, a number or a name over a product of calls, and a whole
    number times a call over a sum, together itself: the product sympy's division makes,
    in sympy's order."""
    from dvm.lowering.tiling import OVER, quotient

    exprs = random_exprs(4, 400)
    denominators = [e for e in exprs if isinstance(e, OVER)]
    rng = random.Random(5)
    assert len(denominators) > 50
    # and a whole number times a call (the cores times a tile size's cap)
    calls = [e for e in denominators if isinstance(e, OVER[1:])]
    times_calls = [sympy.Integer(n) * e for n, e in zip((2, 3, 16) * 20, calls, strict=False)]
    assert sum(e.is_Mul for e in times_calls) > 20
    # and products of calls (a work budget over a row's tiles), a call twice among them
    products = [calls[i] * calls[i + 1] for i in range(20)] + [
        calls[i] * calls[i + 1] * calls[0] for i in range(10)
    ]
    assert sum(all(isinstance(f, OVER[1:]) for f in e.args) for e in products) > 20
    denominators += [*times_calls, *products, *map(sympy.Integer, (2, 16, 297088))]
    for b in denominators:
        numerators = [*rng.sample(exprs, 5), *rng.sample(times_calls, 1), *SYMBOLS]
        for a in [*numerators, sympy.Integer(-3), sympy.Integer(1), b]:
            made = quotient(a, b)
            assert made == a / b and sympy.srepr(made) == sympy.srepr(a / b), (a, b)


def test_texts_are_what_sympy_prints() -> None:
    """`expr_text` prints each subexpression once (it remembers their texts), and
    writes what `str` writes, at the top and inside sums, products, powers and calls."""
    exprs = random_exprs(9, 300)
    nested = [smax(1, smin(e, sfloor(e / 7) - 2) ** 2) * (e + 1) for e in exprs[:100]]
    for expr in [*exprs, *nested]:
        assert expr_text(expr) == str(expr)
        for sub in expr.args:
            assert expr_text(sub) == str(sub)


def test_equal_min_max_and_calls_are_made_once() -> None:
    """A Min or Max of the same arguments (in any order), and a floor or ceiling of the
    same argument, is the object made before: the caches keyed by expressions then
    find it by identity, without comparing its whole tree with an equal copy. It is
    the same expression, in the same order, as sympy's unevaluated constructor makes."""
    exprs = [e for e in random_exprs(6, 200) if not e.is_number]
    assert len(exprs) > 100
    for a in exprs:
        b = a + 1
        assert smin(a, b, 7) is smin(7, b, a)
        assert sympy.srepr(smin(a, b, 7)) == sympy.srepr(sympy.Min(a, b, 7, evaluate=False))
        assert smax(b, a) is smax(a, b)
        assert sympy.srepr(smax(b, a)) == sympy.srepr(sympy.Max(b, a, evaluate=False))
        assert sfloor(a / 3) is sfloor(a / 3)
        assert sceiling(a / 3) is sceiling(a / 3)
        assert sympy.srepr(sceiling(a / 3)) == sympy.srepr(sympy.ceiling(a / 3, evaluate=False))


def test_an_equality_loses_the_numbers_its_sides_share() -> None:
    """`without_common_factor` divides both sides by the gcd of their contents, an
    integer or a rational one, as sympy's gcd gives it."""
    from dvm.passes.unifier import without_common_factor

    x, y = symbol("x_0"), symbol("x_1")
    assert without_common_factor(2 * x, 4 * y) == (x, 2 * y)
    assert without_common_factor(6 * x + 12, 9 * y) == (2 * x + 4, 3 * y)
    assert without_common_factor(-4 * x, 6 * y) == (-2 * x, 3 * y)
    assert without_common_factor(x / 2, y / 3) == (3 * x, 2 * y)
    assert without_common_factor(x, 2 * y) == (x, 2 * y)
    assert without_common_factor(sympy.Integer(0), 0 * y) == (0, 0)


def test_replace_renames_without_evaluating_min_and_max() -> None:
    """A renaming rebuilds Min, Max, floor and ceiling unevaluated, as they were made
    (sympy's evaluation of a nested tile size took seconds); nested Min or Max are
    flattened as sympy flattens them, so the text is what sympy's `xreplace` prints
    whenever its evaluation finds nothing to simplify."""
    a, b, c, d = (symbol(n) for n in "abcd")
    assert expr_text(replace(smax(a, a + b), {b: c})) == "Max(a, a + c)"
    assert expr_text(replace(sfloor(a / b), {b: sympy.Integer(1)})) == "floor(a)"
    assert expr_text(replace(smin(a, smin(b, d)), {d: c})) == "Min(a, b, c)"
    assert replace(smax(a, 3, b), {a: sympy.Integer(5)}) == smax(5, b)
    renamed = {symbol("t0"): symbol("s9"), symbol("x_1"): symbol("s8")}
    rng = random.Random(3)
    for expr in random_exprs(4, 200):
        values = {s: rng.randint(1, 40) for s in [*SYMBOLS, symbol("s9"), symbol("s8")]}
        values[symbol("s9")], values[symbol("s8")] = values[symbol("t0")], values[symbol("x_1")]
        assert substitute(replace(expr, renamed), values) == substitute(expr, values)


def test_replace_drops_the_arguments_that_cannot_decide_a_min_or_max() -> None:
    """Rebuilt, a Min drops a Max that holds another of its arguments or a number at
    least its least number (and a Max the Min that is its mirror image), as sympy's
    evaluation would, by structure alone; the value stays."""
    a, b, c = (symbol(n) for n in "abc")
    assert replace(smin(16, smax(16, a + b)), {b: c}) == 16
    assert replace(smax(1, smin(16, smax(16, a + b))), {b: c}) == 16
    assert replace(smin(8, smax(16, b)), {b: c}) == 8
    assert expr_text(replace(smin(16, smax(8, b)), {b: c})) == "Min(16, Max(8, c))"
    assert replace(smax(a, smin(a, b)), {b: c}) == a
    assert replace(smin(a, smax(a, b)), {b: c}) == a
    assert expr_text(replace(smin(a, smax(b, 3)), {b: c})) == "Min(a, Max(3, c))"
    rng = random.Random(7)
    exprs = random_exprs(8, 60)
    renamed = {symbol("t0"): symbol("s9")}
    for _ in range(300):
        x, y, z = rng.sample(exprs, 3)
        n, m = sympy.Integer(rng.randint(0, 20)), sympy.Integer(rng.randint(0, 20))
        inner = rng.choice([smax(x, y), smax(m, y), smin(x, y), smin(m, y)])
        expr = rng.choice([smin, smax])(rng.choice([x, n]), inner, z)
        values = {s: rng.randint(1, 40) for s in SYMBOLS}
        values[symbol("s9")] = values[symbol("t0")]
        assert substitute(replace(expr, renamed), values) == substitute(expr, values), expr


def test_renamed_products_and_sums_are_what_sympy_makes() -> None:
    """`replace` puts a product or a sum that has nothing to combine together itself
    (`_canonical`): exactly what sympy makes of the same arguments, in sympy's order,
    for products and sums whose arguments are renamed, or replaced by names of whole
    subexpressions (tile sizes named `t0`), or by other expressions."""
    from dvm.dialects.expr import _canonical

    rng = random.Random(11)
    exprs = [e for e in random_exprs(12, 600) if e.is_Mul or e.is_Add]
    names = [symbol(n) for n in ("t0", "t1", "s0", "s_0", "x_0", "a", "z")]
    others = [*random_exprs(13, 60), *names, *map(sympy.Integer, (-2, 0, 1, 3))]
    others += [sympy.Rational(1, 16), *(n**-1 for n in names), symbol("x_0") + 1]
    taken = 0
    for expr in exprs:
        for _ in range(4):
            args = [rng.choice(others) if rng.random() < 0.4 else a for a in expr.args]
            made = _canonical(type(expr), tuple(args))
            expected = expr.func(*args)
            if made is not None:
                taken += 1
                assert made == expected and sympy.srepr(made) == sympy.srepr(expected), args
    assert taken > 300
    # a tile size's names, put in
    x_0, t0, t1 = symbol("x_0"), symbol("t0"), symbol("t1")
    size = smax(1, smin(x_0, 16 * sceiling(x_0 / 5168)))
    other = smax(16, sfloor(x_0 / 7))
    for expr in [-2 * size * other + 106954752, (size + other) ** -1, x_0 / size]:
        renamed = replace(expr, {size: t0, other: t1})
        assert sympy.srepr(renamed) == sympy.srepr(expr.xreplace({size: t0, other: t1}))


def test_linear_sums_are_what_sympy_makes() -> None:
    """`linear_sum` (a register's byte offset: bytes by unit of size) is exactly the sum
    sympy's arithmetic makes of the same terms, numbers, names, products and calls."""
    from dvm.dialects.expr import linear_sum

    s0, s1, x_0 = symbol("s0"), symbol("s1"), symbol("x_0")
    units = [sceiling(s0 / 16), sceiling(s0 * s1 / 16), s0 * s1, s0, sympy.Integer(1)]
    units += [sceiling(x_0 / s1), smax(1, x_0) * s1, s0**2, x_0 + s1]
    rng = random.Random(14)
    for _ in range(300):
        terms = {
            unit: sympy.Integer(rng.choice([0, 1, 3, 64, 128, -64]))
            for unit in rng.sample(units, rng.randint(0, 5))
        }
        expected = sympy.Add(*(c * unit for unit, c in terms.items()))
        made = linear_sum(terms)
        assert made == expected and sympy.srepr(made) == sympy.srepr(expected), terms


def test_products_and_sums_of_tile_sizes_are_what_sympy_makes() -> None:
    """`product` multiplies its numbers first and `total` adds up the terms that differ
    only in their number coefficient (a matmul's tiles per matrix, `64*M + 4096 +
    128*M`) before putting them together: exactly what sympy's `Mul` and `Add` make of
    the same arguments, names, calls, products, powers, sums and numbers among them."""
    from dvm.dialects.expr import product, total

    x_0, x_1, s0 = symbol("x_0"), symbol("x_1"), symbol("s0")
    size = smax(1, smin(x_1, smax(16, sceiling(x_1 / smax(1, sceiling(x_1 / 5312))))))
    parts = [size, smax(1, x_1), x_0, s0, sfloor(x_0 / 7), x_0 * s0, size**2, s0**-1]
    parts += [x_0 + 1, sympy.sqrt(x_0), sympy.Float(0.5) * x_0]
    numbers = [sympy.Integer(n) for n in (0, 1, 2, 16, 64, -3)] + [sympy.Rational(1, 16)]
    rng = random.Random(15)
    collected = 0
    for _ in range(600):
        factors = [rng.choice(parts + numbers) for _ in range(rng.randint(1, 4))]
        made, expected = product(*factors), sympy.Mul(*factors)
        assert sympy.srepr(made) == sympy.srepr(expected), factors
        terms = [
            product(rng.choice(numbers[1:]), *rng.sample(parts, rng.randint(0, 2)))
            for _ in range(rng.randint(2, 4))
        ]
        made, expected = total(*terms), sympy.Add(*terms)
        assert sympy.srepr(made) == sympy.srepr(expected), terms
        collected += len(made.args) < len(terms) and made.is_Add
    assert collected > 50


def test_integer_fractions_divide_integers_to_the_same_value() -> None:
    """A floor's or ceiling's argument over one denominator: a product of integer
    arithmetic as it stands (no `together`), anything else by `together`; both sides
    integers, the quotient the argument's value."""
    x, m = symbol("x"), smax(1, smin(symbol("y"), 16))
    assert integer_fraction(7130316 / (832 * m + 16384)) == (7130316, 832 * m + 16384)
    assert integer_fraction(x * (m - 3) / (2 * m)) == (x * (m - 3), 2 * m)
    assert integer_fraction(x / 2 + 1) == (x + 2, 2)
    assert integer_fraction(x / (m + x / 3)) == (3 * x, 3 * m + x)
    rng = random.Random(11)
    for expr in random_exprs(12, 300):
        numerator, denominator = integer_fraction(expr)
        values = {s: rng.randint(1, 40) for s in SYMBOLS}
        top, bottom = substitute(numerator, values), substitute(denominator, values)
        if top.is_Integer and bottom.is_Integer:  # (not when expr has x**-2 or a Mod's fraction)
            assert top / bottom == substitute(expr, values), expr


def test_products_split_as_sympys_fraction_splits_them() -> None:
    """`integer_fraction` splits a product of numbers, names, sums, calls and their
    reciprocals itself: exactly the numerator and denominator of `sympy.fraction`."""
    from dvm.dialects.expr import _split_product

    rng = random.Random(15)
    parts = [e for e in random_exprs(16, 200) if not e.is_Mul and not e.is_Pow]
    parts += [*SYMBOLS, sympy.Rational(3, 16), sympy.Rational(-1, 2), sympy.Integer(-2)]
    taken = 0
    for _ in range(400):
        factors = [rng.choice(parts) for _ in range(rng.randint(1, 4))]
        expr = sympy.Mul(*(f**-1 if rng.random() < 0.4 else f for f in factors))
        split = _split_product(expr)
        if split is not None:
            taken += 1
            expected = sympy.fraction(expr)
            assert [sympy.srepr(e) for e in split] == [sympy.srepr(e) for e in expected], expr
    assert taken > 200


def test_symbols_in_are_sympys_free_symbols() -> None:
    for expr in random_exprs(13, 300):
        assert symbols_in(expr) == expr.free_symbols
        assert symbols_in(smax(expr, symbol("y") + 1)) == {*expr.free_symbols, symbol("y")}


def test_smin_and_smax_build_what_sympy_builds_unevaluated() -> None:
    """`smin`/`smax` order their arguments as sympy's `ordered` does (with the node
    counts remembered): the same expression, arguments and text as
    `Min(..., evaluate=False)` after folding the numbers."""
    rng = random.Random(5)
    exprs = random_exprs(6, 300)
    for _ in range(300):
        args = rng.sample(exprs, rng.randint(2, 4))
        for kind, fold, build in ((sympy.Min, min, smin), (sympy.Max, max, smax)):
            rest = [a for a in args if not a.is_Integer]
            numbers = [int(a) for a in args if a.is_Integer]
            rest += [sympy.Integer(fold(numbers))] if numbers else []
            expected = rest[0] if len(set(rest)) == 1 else kind(*rest, evaluate=False)
            made = build(*args)
            assert made == expected and made.args == expected.args
            assert expr_text(made) == expr_text(expected)


def test_sfloor_and_sceiling_build_what_sympy_builds_unevaluated() -> None:
    """`sfloor`/`sceiling` make their call without sympy's constructor: the same
    expression (equal, same hash and srepr), with the same argument counts."""
    for expr in random_exprs(7, 200):
        for kind, build in ((sympy.floor, sfloor), (sympy.ceiling, sceiling)):
            if expr.is_number:
                continue
            made, expected = build(expr), kind(expr, evaluate=False)
            assert made == expected and hash(made) == hash(expected)
            assert sympy.srepr(made) == sympy.srepr(expected)
            assert made.nargs == expected.nargs and made.is_integer == expected.is_integer


def test_attributes_round_trip_in_a_module() -> None:
    exprs = random_exprs(2, 60)
    attrs = {f"dvm.e{i}": ExprAttr(e) for i, e in enumerate(exprs)}
    attrs["dvm.shape"] = ShapeAttr(exprs[:5])
    attrs["dvm.cond"] = ConditionAttr(exprs[0], "<=", exprs[1])
    listed = ", ".join(f"{name} = {attr}" for name, attr in attrs.items())
    text = f"func.func @f() attributes {{{listed}}} {{\n  func.return\n}}"
    printed = str(dvm.parse(text))
    assert str(dvm.parse(printed)) == printed
    assert f"dvm.e0 = #dvm.expr<{expr_text(exprs[0])}>" in printed


def test_condition_text() -> None:
    condition = parse_condition_text("x_1*x_0 <= Max(16, x_1)")
    assert condition.text == "x_0*x_1 <= Max(16, x_1)"
    lhs, holds, rhs = condition.split()
    values = {symbol("x_0"): 2, symbol("x_1"): 8}
    assert holds(substitute(lhs, values), substitute(rhs, values))
    with pytest.raises(ParseError, match="expected a relation"):
        parse_condition_text("x_0 < 4")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x +", "expected an integer expression"),
        ("__import__('os')", "unknown function '__import__'"),
        ("x.y", "'x.y' is not a symbol name"),
        ("floor(x, y)", "floor takes 1 argument, not 2"),
        ("Mod(x)", "Mod takes 2 arguments, not 1"),
        ("x/(2 - 2)", "division by zero"),
        ("x**y", "an integer exponent"),
        ("x y", "unexpected text after the expression"),
    ],
)
def test_malformed_expressions_are_located_parse_errors(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=re.escape(message)) as error:
        parse_expr(text)
    assert str(error.value).startswith("<expression>:1:")


# --------------------------------------------------------------------------
# Programs at every level
# --------------------------------------------------------------------------

STAGES = (
    "symbolic-shapes,fuse,stack",
    "convert-tensor-to-tile{device=ascend910b}",
    "dedupe-kernels,convert-tile-to-bytecode",
)
"""The pipeline in steps: each level is checked on the way to the next."""


def programs(path: Path) -> list[str]:
    """The tensor programs in a test file (split at `// -----`), those that parse."""
    found = []
    for chunk in path.read_text().split("// -----"):
        try:
            module = dvm.parse(chunk)
        except Exception:  # an invalid-IR case, or a level other than tensor
            continue
        if any(op.name.startswith(("tensor.", "func.")) for op in module.walk()):
            found.append(chunk)
    return found


FILES = sorted(TESTS.glob("regressions/*.mlir")) + sorted(TESTS.glob("filecheck/**/*.mlir"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(TESTS)))
def test_lowered_programs_print_parse_and_print_the_same(path: Path) -> None:
    for chunk in programs(path):
        module = dvm.parse(chunk)
        for stage in STAGES:
            try:
                pipeline.parse(stage).apply(pipeline.context(), module)
            except Exception:  # a program the pipeline rejects (e.g. above the VM's rank)
                break
            assert_round_trips(module)


def assert_round_trips(module: ModuleOp) -> None:
    printed = str(module)
    assert str(dvm.parse(printed)) == printed
