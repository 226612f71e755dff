"""Symbolic integer expressions, and the `dvm` attributes that hold them in the IR.

Shapes, guards, tile sizes, grids and parameter slots are integer expressions
of the shape symbols (`x_0` is axis 0 of argument `%x`). They are sympy
expressions in which every symbol is a non-negative integer (`symbol`) and
`Min`, `Max`, `floor` and `ceiling` stay unevaluated (`smin`, `smax`, `sfloor`,
`sceiling`): sympy's simplification of them costs milliseconds, and tile sizes
nest many of them.

The IR holds them in typed attributes, each expression written as sympy
prints it:

    #dvm.expr<Max(1, floor(x_0/cores))>    ExprAttr: one expression
    #dvm.shape<x_0, 64>                    ShapeAttr: a list of them (a shape, a grid)
    #dvm.cond<x_1 <= 4096>                 ConditionAttr: `==` or `<=` between two

Ops of the `tile` and `bytecode` dialects write them bare in their own syntax
(`grid [ceiling(x_0/t0)]`). The parser reads exactly what sympy prints:
integers, names, `+ - * / **`, parentheses and the calls `Max`, `Min`,
`floor`, `ceiling` and `Mod`. Anything else is a ParseError at its place in
the text; nothing is evaluated but this arithmetic.
"""

from __future__ import annotations

import math
import operator
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache, cmp_to_key, lru_cache
from typing import Any, TypeVar, cast

import sympy
from sympy.printing.str import StrPrinter
from xdsl.context import Context
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Data, Dialect, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser, Parser
from xdsl.parser.base_parser import BaseParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

# --------------------------------------------------------------------------
# The expressions
# --------------------------------------------------------------------------


@cache
def symbol(name: str) -> sympy.Symbol:
    """The symbol called `name`: a dim or an index, so a non-negative integer."""
    return sympy.Symbol(name, integer=True, nonnegative=True)


def as_expr(value: sympy.Expr | int) -> sympy.Expr:
    return sympy.Integer(value) if isinstance(value, int) else value


def smin(*args: sympy.Expr | int) -> sympy.Expr:
    """min, left unevaluated: sympy's Min simplifies by assumption queries,
    which costs milliseconds; tile sizes nest many of them."""
    return _fold(sympy.Min, min, args)


def smax(*args: sympy.Expr | int) -> sympy.Expr:
    return _fold(sympy.Max, max, args)


def _fold(
    cls: type[sympy.Min] | type[sympy.Max], fn: Callable[..., int], args: Sequence[sympy.Expr | int]
) -> sympy.Expr:
    exprs = [as_expr(a) for a in args]
    numbers = [int(a) for a in exprs if a.is_Integer]
    rest = [a for a in exprs if not a.is_Integer]
    if numbers:
        rest.append(sympy.Integer(fn(numbers)))
    return unevaluated(cls, rest)


def unevaluated(cls: type[sympy.Min] | type[sympy.Max], args: Sequence[sympy.Expr]) -> sympy.Expr:
    """What `cls(*args, evaluate=False)` makes (the first argument, when they are all
    alike), its arguments in sympy's `ordered` order, without sorting by sort keys
    the arguments that their node counts already order (`_ordered`). Made once per set
    of arguments (`_unevaluated`)."""
    argset = frozenset(args)
    if len(argset) == 1:
        return args[0]
    return _unevaluated(cls, argset)


@lru_cache(maxsize=1 << 14)
def _unevaluated(
    cls: type[sympy.Min] | type[sympy.Max], argset: frozenset[sympy.Expr]
) -> sympy.Expr:
    """The Min or Max of `argset`, remembered (sympy's expressions are immutable, as its
    own cache of made expressions assumes): equal tile sizes are then one object, which
    the caches keyed by expressions (`_node_count`, `expr_text`, `symbols_in`...) find by
    identity, where an equal copy is compared with the cached one node by node."""
    made = cast(sympy.Expr, sympy.Expr.__new__(cls, *_ordered(argset)))
    made._argset = argset  # type: ignore[attr-defined]
    return made


def _ordered(args: frozenset[sympy.Expr]) -> list[sympy.Expr]:
    """`args` as sympy's `ordered` sorts them: by node count, then those of equal counts
    by sort key. With the node counts remembered (`ordered` counts each argument's
    whole tree again, at every level of a nested tile size), and the sort keys made
    only for ties, as `ordered` does: a sort key walks its whole tree the first time."""
    counts = {a: _node_count(a) for a in args}
    if len(set(counts.values())) == len(counts):  # no ties (most Min and Max of tile sizes)
        return sorted(args, key=counts.__getitem__)
    alike = Counter(counts.values())
    return sorted(args, key=lambda a: (counts[a], a.sort_key() if alike[counts[a]] > 1 else ()))


@lru_cache(maxsize=1 << 16)
def _node_count(expr: sympy.Basic) -> float:
    """sympy's `_node_count` (a Float counts a half), remembered."""
    if expr.is_Float:
        return 0.5
    return 1 + sum(map(_node_count, expr.args))


def sfloor(x: sympy.Expr) -> sympy.Expr:
    """floor, folded for numbers and otherwise left unevaluated (cheap)."""
    if x.is_number:
        return sympy.Integer(math.floor(x))
    return unevaluated_call(sympy.floor, (x,), _ONE_ARGUMENT)


def sceiling(x: sympy.Expr) -> sympy.Expr:
    if x.is_number:
        return sympy.Integer(math.ceil(x))
    return unevaluated_call(sympy.ceiling, (x,), _ONE_ARGUMENT)


_ONE_ARGUMENT = sympy.FiniteSet(1)


def unevaluated_call(cls: type[sympy.Function], args: Sequence[Any], nargs: sympy.Set) -> Any:
    """What `cls(*args, evaluate=False)` makes (its arguments, and `nargs`, the argument
    counts sympy gives `cls`), without sympy's set-up of a call, which makes a new set
    of its argument counts each time: a tenth of a millisecond per floor or ceiling
    it has not made. Made once per call (remembered, as `_unevaluated` says why)."""
    return _unevaluated_call(cls, tuple(args), nargs)


@lru_cache(maxsize=1 << 14)
def _unevaluated_call(cls: type[sympy.Function], args: tuple[Any, ...], nargs: sympy.Set) -> Any:
    made: Any = sympy.Expr.__new__(cls, *args)
    made.nargs = nargs
    return made


def smod(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    return cast(sympy.Expr, sympy.Mod(a, b))


def replace(expr: sympy.Expr, table: Mapping[Any, sympy.Expr]) -> sympy.Expr:
    """`expr` with every subexpression that is a key of `table` replaced, as sympy's
    `xreplace` does, but the Min, Max, floor and ceiling it rebuilds stay unevaluated
    (`smin`, `smax`, `sfloor`, `sceiling`), as they were made: `xreplace` evaluates
    them again, and sympy's search for redundant arguments by assumption queries
    costs tens of milliseconds for a nested tile size (hundreds in a process that has
    not asked them yet). A rebuilt Min or Max drops only the arguments whose structure
    shows they cannot decide it (`_absorbed`). A product or sum with nothing to combine
    is put together in sympy's order (`_canonical`)."""
    return _replace(expr, table) if table else expr


def _replace(expr: Any, table: Mapping[Any, sympy.Expr]) -> Any:
    got = table.get(expr)
    if got is not None:
        return got
    if not expr.args:
        return expr
    args = [_replace(a, table) for a in expr.args]
    if all(new is old for new, old in zip(args, expr.args, strict=True)):
        return expr
    if isinstance(expr, sympy.Min | sympy.Max):
        kind = type(expr)
        # flattened as sympy would: Min(a, Min(b, c)) is Min(a, b, c)
        flat = [b for a in args for b in (a.args if isinstance(a, kind) else (a,))]
        return _fold(kind, min if kind is sympy.Min else max, _absorbed(kind, flat))
    if isinstance(expr, sympy.floor):
        return sfloor(args[0])
    if isinstance(expr, sympy.ceiling):
        return sceiling(args[0])
    if expr.is_Mul or expr.is_Add:
        made = _canonical(type(expr), tuple(args))
        if made is not None:
            return made
    return expr.func(*args)


_SORT_KEY = cmp_to_key(sympy.Basic.compare)
"""The order of a product's factors and a sum's terms that sympy gives them."""


@lru_cache(maxsize=1 << 14)
def _canonical(kind: type[sympy.Mul] | type[sympy.Add], args: tuple[Any, ...]) -> Any:
    """The product or sum of `args` as sympy makes it, when it has nothing to combine:
    a number (not 0 or 1) first, then the other arguments in sympy's order, which are
    no numbers, products or sums of its kind, share no base (a product) or no term
    but its coefficient (a sum), and are not one sum a number multiplies (sympy
    distributes it). Else None. A tile size renamed is such: sympy would flatten each
    product and sum it has not met, asking its arguments' assumptions, though nothing
    in them combines. Remembered, as sympy remembers what it makes."""
    numbers = [a for a in args if a.is_Number]
    rest = [a for a in args if not a.is_Number]
    if len(numbers) > 1 or not all(a.is_commutative for a in rest):
        return None
    if numbers and not (numbers[0].is_Rational and numbers[0] not in (0, 1)):
        return None
    if kind is sympy.Mul:
        if numbers and len(rest) == 1 and rest[0].is_Add:
            return None
        powers = [a.as_base_exp() for a in rest]
        if any(a.is_Mul for a in rest) or any(b.is_Number or not e.is_Integer for b, e in powers):
            return None
        parts = [base for base, _ in powers]
    else:
        if any(a.is_Add or (a.is_Pow and a.base.is_Number) for a in rest):
            return None
        parts = [a.as_coeff_Mul()[1] for a in rest]
    if len(set(parts)) < len(parts):
        return None
    # what `kind(*args, evaluate=False)` makes, without its steps for what may not yet be
    # sympy's (each argument sympified, type-checked, and post-processed for matrices)
    return kind._from_args((*numbers, *sorted(rest, key=_SORT_KEY)), is_commutative=True)


def product(*factors: sympy.Expr) -> sympy.Expr:
    """`sympy.Mul(*factors)`, put together in sympy's order when nothing in it combines
    but its numbers, which are multiplied first (a coefficient 1 dropped), as sympy
    does (`_canonical`): sympy flattens each product it has not met, by assumption
    queries."""
    if len(factors) < 2:
        return factors[0] if factors else sympy.S.One
    numbers = [f for f in factors if f.is_Rational]
    if (len(numbers) > 1 or numbers == [sympy.S.One]) and 0 not in numbers:
        coefficient = math.prod(numbers, start=sympy.S.One)
        rest = [f for f in factors if not f.is_Rational]
        if not rest:
            return coefficient
        factors = (*([] if coefficient == 1 else [coefficient]), *rest)
        if len(factors) == 1:
            return factors[0]
    made = _canonical(sympy.Mul, factors)
    return cast(sympy.Expr, sympy.Mul(*factors)) if made is None else made


def total(*terms: sympy.Expr) -> sympy.Expr:
    """`sympy.Add(*terms)`, put together in sympy's order when nothing in it combines
    (`_canonical`), as `product` does a product; terms that differ only in their
    number coefficient are added up first, as sympy does (`_collected`)."""
    made = _canonical(sympy.Add, terms) if len(terms) > 1 else None
    if made is None and len(terms) > 1:
        made = _collected(terms)
    return cast(sympy.Expr, sympy.Add(*terms)) if made is None else made


def _collected(terms: Sequence[sympy.Expr]) -> sympy.Expr | None:
    """The sum of `terms`, each a number, or a part times a number coefficient (sympy's
    `as_coeff_Mul`) that is a name, a call or a product of them: the coefficients of
    equal parts added up (a matmul's tiles per matrix, `64*M + 4096 + 128*M`, are
    `192*M + 4096`), as sympy's `Add` collects them, then put together by `linear_sum`.
    None for any other term (a sum, a power of a number, a float), which sympy adds."""
    coefficients: dict[sympy.Expr, sympy.Expr] = {}
    for term in terms:
        coefficient, part = term.as_coeff_Mul()
        if not (coefficient.is_Rational and _plain_part(part)):
            return None
        coefficients[part] = coefficients.get(part, sympy.S.Zero) + coefficient
    return linear_sum(coefficients)  # (the number's part is 1)


def _plain_part(part: sympy.Expr) -> bool:
    """Whether `part` is 1, a name, a call or a product of names and calls (their
    powers too), commutative: what sympy's `Add` collects by its coefficient alone."""
    if part is sympy.S.One or part.is_Symbol or part.is_Function:
        return True
    factors = sympy.Mul.make_args(part) if part.is_Mul else (part,)
    return all(
        (f.is_Symbol or f.is_Function or (f.is_Pow and not f.as_base_exp()[0].is_Number))
        and f.is_commutative
        for f in factors
    )


def _absorbed(kind: type[sympy.Min] | type[sympy.Max], args: list[Any]) -> list[sympy.Expr]:
    """`args` of a Min without the Max that cannot decide it, as sympy's evaluation drops
    them, but by their structure alone (no assumption queries): a Max that holds
    another argument, or a number at least the Min's least number, is at least that
    (Min(16, Max(16, x)) is 16). And the mirror image for a Max (Max(a, Min(a, b)) is a)."""
    is_min = kind is sympy.Min
    other = sympy.Max if is_min else sympy.Min
    numbers = [int(a) for a in args if a.is_Integer]
    bound = (min if is_min else max)(numbers) if numbers else None
    kept = set(args)

    def decides(inner: Any) -> bool:
        if inner in kept:
            return True
        if bound is None or not inner.is_Integer:
            return False
        return int(inner) >= bound if is_min else int(inner) <= bound

    return [a for a in args if not (isinstance(a, other) and any(map(decides, a.args)))]


def linear_sum(terms: Mapping[sympy.Expr, sympy.Expr]) -> sympy.Expr:
    """The sum of each part of `terms` times its coefficient, as sympy's arithmetic makes
    it: the parts are distinct and have no number coefficient of their own (the second
    of sympy's `as_coeff_Mul`), so sympy would find nothing to combine, yet it flattens
    each product and sum it has not met (`_canonical` says why that costs)."""
    made = [_times(c, part) for part, c in terms.items() if c != 0]
    summed = _canonical(sympy.Add, tuple(made))
    return summed if summed is not None else sympy.Add(*made)


def _times(coefficient: sympy.Expr, part: sympy.Expr) -> sympy.Expr:
    if coefficient == 1:
        return part
    made = _canonical(sympy.Mul, (coefficient, *sympy.Mul.make_args(part)))
    return made if made is not None else coefficient * part


@lru_cache(maxsize=1 << 14)
def symbols_in(expr: sympy.Basic) -> frozenset[sympy.Symbol]:
    """The symbols of `expr` (sympy's `free_symbols`), remembered for it and each of its
    subexpressions: sympy walks the whole tree at every ask, and a kernel's slot
    expressions share their nested parts."""
    if isinstance(expr, sympy.Symbol):
        return frozenset((expr,))
    return frozenset().union(*map(symbols_in, expr.args))


def symbol_name(symbol: sympy.Symbol) -> str:
    """A symbol's name (`str` of it, without sympy's printer): a sort key."""
    return symbol.name


def symbol_names(exprs: Iterable[sympy.Basic]) -> set[str]:
    """The names of the symbols in `exprs`: what `str` prints of each, without sympy's
    printer (about 12 µs a symbol)."""
    return {s.name for e in exprs for s in symbols_in(e)}


@lru_cache(maxsize=4096)
def integer_fraction(expr: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
    """(numerator, denominator) of `expr` over one denominator, both integer
    arithmetic (sums and products of integers, symbols and calls), as integer
    division wants them: a floor or ceiling's argument. A product of such is split
    as it stands; anything else is put over one denominator by sympy's `together`,
    which factors the sums it meets by assumption queries (a millisecond a nested
    tile size, in a process that has not asked them yet). Remembered: kernels and
    programs repeat the same few."""
    if expr.is_Mul or expr.is_Symbol:
        numerator, denominator = _split_product(expr) or sympy.fraction(expr)
        if _integral(numerator) and _integral(denominator):
            return numerator, denominator
    return cast(tuple[sympy.Expr, sympy.Expr], sympy.fraction(sympy.together(expr)))


def _split_product(expr: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr] | None:
    """`sympy.fraction(expr)` of a product of a number, names, sums, calls and their
    reciprocals (`x**-1`), each side put together by `product`: sympy's `fraction`
    multiplies each side's factors again, and a product it has not met costs it a
    flatten (`_canonical`). None for any other factor (another power), which
    `sympy.fraction` splits."""
    numerator: list[sympy.Expr] = []
    denominator: list[sympy.Expr] = []
    for factor in sympy.Mul.make_args(expr):
        side = numerator
        if isinstance(factor, sympy.Pow) and factor.exp is sympy.S.NegativeOne:
            factor, side = factor.base, denominator
        elif isinstance(factor, sympy.Rational) and not factor.is_Integer:
            if factor.p != 1:
                numerator.append(sympy.Integer(factor.p))
            denominator.append(sympy.Integer(factor.q))
            continue
        if not (factor.is_Integer or factor.is_Symbol or isinstance(factor, _SPLIT_FACTORS)):
            return None
        side.append(factor)
    return product(*numerator), product(*denominator)


_SPLIT_FACTORS = (sympy.Add, sympy.Min, sympy.Max, sympy.floor, sympy.ceiling, sympy.Mod)
"""The calls and sums `_split_product` takes as factors (or, under -1, their reciprocals)."""


def _integral(expr: sympy.Basic) -> bool:
    """Whether `expr` is integer arithmetic outside its calls (whose arguments the
    VM and the host evaluate on their own)."""
    if expr.is_Integer or expr.is_Symbol or expr.is_Function:
        return True
    if expr.is_Add or expr.is_Mul:
        return all(map(_integral, expr.args))
    if expr.is_Pow:
        exponent = cast(sympy.Expr, expr.args[1])
        return bool(exponent.is_Integer and exponent > 0 and _integral(expr.args[0]))
    return False


FUNCTIONS: dict[str, tuple[Callable[..., sympy.Expr], range]] = {
    "Max": (smax, range(1, 1 << 16)),
    "Min": (smin, range(1, 1 << 16)),
    "floor": (sfloor, range(1, 2)),
    "ceiling": (sceiling, range(1, 2)),
    "Mod": (smod, range(2, 3)),
}
"""The calls an expression may make, and how many arguments each takes."""

NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
"""What a symbol may be called (the lexer's identifiers also allow `$` and `.`)."""


@lru_cache(maxsize=1 << 14)
def expr_text(expr: sympy.Expr) -> str:
    """An expression as the IR writes it: as sympy prints it (`str`). Remembered, and
    so is each subexpression's text: printing costs sympy tens of microseconds a node,
    kernels repeat their sizes, and a nested tile size repeats its parts."""
    return _SharingPrinter(expr).doprint(expr)


class _SharingPrinter(StrPrinter):
    """sympy's printer for `top`, its subexpressions' texts taken from `expr_text`:
    the printer writes a node from its children's texts alone (parenthesized by
    their kind), so the texts are those `str` gives."""

    def __init__(self, top: sympy.Basic) -> None:
        super().__init__()
        self.top = top

    def _print(self, expr: Any, **kwargs: Any) -> str:
        if expr is self.top or kwargs or not isinstance(expr, sympy.Basic) or not expr.args:
            return super()._print(expr, **kwargs)
        return expr_text(expr)


# --------------------------------------------------------------------------
# Reading expressions
# --------------------------------------------------------------------------


def parse_expression(parser: BaseParser) -> sympy.Expr:
    """An expression as `expr_text` writes it: sums of products of powers of
    (possibly negated) numbers, names, calls and parenthesized expressions.

    A sum is made of all its terms at once, and a product of all its factors, as
    sympy holds them: pairwise, `83*(1 - x)*y` would become `(83 - 83*x)*y`
    (sympy spreads a number over a sum it multiplies alone), which prints apart."""
    terms = [_product(parser)]
    while True:
        if parser.parse_optional_punctuation("+"):
            terms.append(_product(parser))
        elif parser.parse_optional_punctuation("-"):
            terms.append(-_product(parser))
        else:
            return terms[0] if len(terms) == 1 else cast(sympy.Expr, sympy.Add(*terms))


def _product(parser: BaseParser) -> sympy.Expr:
    factors = [_signed(parser)]
    while True:
        if parser.parse_optional_punctuation("*"):
            factors.append(_signed(parser))
        elif parser.parse_optional_punctuation("/"):
            start = parser.pos
            divisor = _signed(parser)
            if divisor == 0:
                parser.raise_error("division by zero", start, parser.pos)
            factors.append(cast(sympy.Expr, sympy.Pow(divisor, -1)))
        else:
            return factors[0] if len(factors) == 1 else cast(sympy.Expr, sympy.Mul(*factors))


def _signed(parser: BaseParser) -> sympy.Expr:
    if parser.parse_optional_punctuation("-"):
        return -_signed(parser)
    return _power(parser)


MAX_EXPONENT = 64
"""The largest exponent an expression may write: any base but -1, 0 and 1 to a greater
power overflows the 64-bit integers a program computes with."""


def _power(parser: BaseParser) -> sympy.Expr:
    """`base**exponent`, the exponent an integer (sympy writes `x**2`, `x**(-2)`)."""
    base = _atom(parser)
    if not parse_optional_spelling(parser, "**"):
        return base
    start = parser.pos
    exponent = _signed(parser)
    if not exponent.is_Integer or (base == 0 and exponent < 0):
        parser.raise_error("expected a non-zero base and an integer exponent", start, parser.pos)
    if abs(exponent) > MAX_EXPONENT:  # (`2**10**10` would take minutes and gigabytes)
        parser.raise_error(
            f"an exponent beyond {MAX_EXPONENT} overflows 64 bits", start, parser.pos
        )
    return cast(sympy.Expr, base**exponent)


def _atom(parser: BaseParser) -> sympy.Expr:
    if parser.parse_optional_punctuation("("):
        value = parse_expression(parser)
        parser.parse_punctuation(")", " to close the parenthesized expression")
        return value
    number = parser.parse_optional_integer(allow_boolean=False, allow_negative=False)
    if number is not None:
        return sympy.Integer(number)
    start = parser.pos
    name = parser.parse_optional_identifier()
    if name is None:
        parser.raise_error("expected an integer expression (a number, a name, a call or '(')")
    end = start + len(name)
    if not NAME.fullmatch(name):
        parser.raise_error(f"{name!r} is not a symbol name (letters, digits and _)", start, end)
    if name not in FUNCTIONS:
        if parser.lexer.input.content.startswith("(", end):  # (`to x_1 (...)` is no call)
            known = ", ".join(FUNCTIONS)
            parser.raise_error(f"unknown function {name!r}; use one of {known}", start, end)
        return symbol(name)
    function, arities = FUNCTIONS[name]
    args = parser.parse_comma_separated_list(
        parser.Delimiter.PAREN, lambda: parse_expression(parser), f" as the arguments of {name}"
    )
    if len(args) not in arities:
        parser.raise_error(f"{name} takes {_arity_text(arities)}, not {len(args)}", start, end)
    if function is smod and args[1] == 0:
        parser.raise_error("Mod by zero", start, parser.pos)
    return function(*args)


def _arity_text(arities: range) -> str:
    if len(arities) == 1:
        n = arities.start
        return f"{n} argument{'s' if n > 1 else ''}"
    return f"at least {arities.start} argument"


def parse_optional_spelling(parser: BaseParser, spelling: str) -> bool:
    """Two punctuation tokens side by side (`**`, `==`, `<=`), consumed if present:
    the lexer reads each character as a token of its own."""
    if not parser.lexer.input.content.startswith(spelling, parser.pos):
        return False
    for character in spelling:
        parser.parse_punctuation(character)  # type: ignore[arg-type]
    return True


def parse_expressions(parser: BaseParser, delimiter: BaseParser.Delimiter) -> list[sympy.Expr]:
    """A delimited, comma-separated list of expressions (`[x_0, 64]`)."""
    return parser.parse_comma_separated_list(delimiter, lambda: parse_expression(parser))


def print_expressions(printer: Printer, exprs: Iterable[sympy.Expr], brackets: str = "[]") -> None:
    """`[x_0, 64]` (or in other `brackets`), as `parse_expressions` reads it."""
    printer.print_string(brackets[0] + ", ".join(expr_text(e) for e in exprs) + brackets[1])


# --------------------------------------------------------------------------
# Conditions
# --------------------------------------------------------------------------

RELATIONS: dict[str, Callable[[Any, Any], bool]] = {"==": operator.eq, "<=": operator.le}
"""The relations a condition (a guard, a guarded choice) may state."""


def parse_relation(parser: BaseParser) -> str:
    for spelling in RELATIONS:
        if parse_optional_spelling(parser, spelling):
            return spelling
    parser.raise_error(f"expected a relation ({' or '.join(RELATIONS)})")


# --------------------------------------------------------------------------
# The attributes
# --------------------------------------------------------------------------


@irdl_attr_definition
class ExprAttr(Data[sympy.Expr]):
    """`#dvm.expr<x_0*x_1>`: one integer expression of the shape symbols."""

    name = "dvm.expr"

    def __init__(self, value: sympy.Expr | int):
        super().__init__(as_expr(value))

    def verify(self) -> None:
        if not isinstance(self.data, sympy.Expr):
            raise VerifyException(f"{self.name} holds a sympy expression, not {self.data!r}")

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> sympy.Expr:
        with parser.in_angle_brackets():
            return parse_expression(parser)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{expr_text(self.data)}>")


@irdl_attr_definition
class ShapeAttr(Data[tuple[sympy.Expr, ...]]):
    """`#dvm.shape<x_0, 64>`: a list of integer expressions, e.g. a shape or a grid."""

    name = "dvm.shape"

    def __init__(self, values: Iterable[sympy.Expr | int]):
        super().__init__(tuple(as_expr(v) for v in values))

    def verify(self) -> None:
        if not all(isinstance(e, sympy.Expr) for e in self.data):
            raise VerifyException(f"{self.name} holds sympy expressions, not {self.data!r}")

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> tuple[sympy.Expr, ...]:
        return tuple(parse_expressions(parser, parser.Delimiter.ANGLE))

    def print_parameter(self, printer: Printer) -> None:
        print_expressions(printer, self.data, "<>")


@irdl_attr_definition
class ConditionAttr(ParametrizedAttribute):
    """`#dvm.cond<x_1 <= 4096>`: `lhs == rhs` or `lhs <= rhs` over the shape symbols."""

    name = "dvm.cond"
    lhs: ExprAttr
    relation: StringAttr
    rhs: ExprAttr

    def __init__(self, lhs: sympy.Expr | int, relation: str, rhs: sympy.Expr | int):
        super().__init__(ExprAttr(lhs), StringAttr(relation), ExprAttr(rhs))

    def verify(self) -> None:
        if self.relation.data not in RELATIONS:
            relations = tuple(RELATIONS)
            raise VerifyException(f"{self.name} relation must be one of {relations}")

    @property
    def text(self) -> str:
        return f"{expr_text(self.lhs.data)} {self.relation.data} {expr_text(self.rhs.data)}"

    def split(self) -> tuple[sympy.Expr, Callable[[Any, Any], bool], sympy.Expr]:
        """(lhs, the relation as a function, rhs)."""
        return self.lhs.data, RELATIONS[self.relation.data], self.rhs.data

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[ExprAttr, StringAttr, ExprAttr]:
        with parser.in_angle_brackets():
            return parse_condition_parameters(parser)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.text}>")


AttributeT = TypeVar("AttributeT", bound=Data[Any])
MAX_ATTRIBUTES = 4096
"""The most attributes `shape_attr` and `expr_attr` keep each (they start again when full)."""
_shapes: dict[Any, ShapeAttr] = {}
_exprs: dict[Any, ExprAttr] = {}


def shape_attr(shape: Sequence[sympy.Expr | int]) -> ShapeAttr:
    """`ShapeAttr(shape)`, made once per shape (up to a bound): the passes write the
    same shapes on op after op, and xDSL verifies each attribute it makes."""
    return _made_once(_shapes, tuple(shape), ShapeAttr)


def expr_attr(expr: sympy.Expr | int) -> ExprAttr:
    """`ExprAttr(expr)`, made once per expression, as `shape_attr` makes shapes (a
    kernel's views, its slots)."""
    return _made_once(_exprs, expr, ExprAttr)


def _made_once(
    made: dict[Any, AttributeT], key: Any, make: Callable[[Any], AttributeT]
) -> AttributeT:
    found = made.get(key)
    if found is None:
        if len(made) >= MAX_ATTRIBUTES:
            made.clear()
        found = made[key] = make(key)
    return found


def parse_condition_parameters(parser: BaseParser) -> tuple[ExprAttr, StringAttr, ExprAttr]:
    lhs = parse_expression(parser)
    relation = parse_relation(parser)
    return ExprAttr(lhs), StringAttr(relation), ExprAttr(parse_expression(parser))


def parse_condition(parser: BaseParser) -> ConditionAttr:
    """`lhs == rhs` or `lhs <= rhs`, bare (as an op writes it)."""
    return ConditionAttr.new(parse_condition_parameters(parser))


# --------------------------------------------------------------------------
# Text written by Python code
# --------------------------------------------------------------------------


@cache
def parse_expr(text: str) -> sympy.Expr:
    """An expression from its text (`str(expr)`), by the same parser as the IR's."""
    parser = Parser(Context(), text, "<expression>")
    value = parse_expression(parser)
    _expect_end(parser)
    return value


@cache
def parse_condition_text(text: str) -> ConditionAttr:
    """A condition from its text (`lhs == rhs`, `lhs <= rhs`)."""
    parser = Parser(Context(), text, "<condition>")
    condition = parse_condition(parser)
    _expect_end(parser)
    return condition


def _expect_end(parser: BaseParser) -> None:
    if parser.lexer.input.content[parser.pos :].strip():
        parser.raise_error("unexpected text after the expression")


Dvm = Dialect("dvm", [], [ExprAttr, ShapeAttr, ConditionAttr])
