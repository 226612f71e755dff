"""Sizes that remember where they came from, so that a graph's first call can say how
every size it used is computed from the inputs (`plan`).

A `Size` is an `int` (code that reads sizes runs unchanged) with `expr`, Python
source over the call's values `v` (`v[3].shape[1]`, `(v[0] * 4)`): arithmetic on
sizes keeps it, and every comparison or truth test of a size is noted as a guard
(the expression and its outcome), since the code that branched on it took that
branch for these sizes only. A conversion to a plain number (`int()`, numpy reading
it, `float()`) loses the origin: it is noted too, and a call that lost one is not
replayed (`Sizes.lost`).

A size's `identity` is what it is at every call that reaches the graph: its expression
over the symbols dynamo's trace declares for the inputs' sizes (sizes dynamo keeps
equal are one symbol there). Two sizes of one identity are equal at every such call,
so code may treat them as one without a guard (`dvm.lazy.emit` names a size by
another so), where two sizes merely equal now would tie the plan to these sizes.
"""

from __future__ import annotations

import math
import operator
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any


class Sizes(threading.local):
    """What the sizes of the call being recorded on this thread have noted."""

    def __init__(self) -> None:
        self.guards: dict[str, int] = {}
        """Each guard's source (true for these sizes) -> the newest value it reads."""
        self.lost = False
        self.active = False
        self.declared: Sequence[Any] = ()
        """The inputs as dynamo's trace declares them (see `identity_of`)."""
        self.identities: dict[str, Any] = {}
        """Each size's expression -> its identity, for this call."""

    def start(self, declared: Sequence[Any] = ()) -> None:
        self.guards, self.lost, self.active = {}, False, True
        self.declared, self.identities = declared, {}

    def stop(self) -> None:
        self.active = False


SIZES = Sizes()


class Size(int):
    """An int and the expression it was computed by (see the module docstring)."""

    expr: str
    newest: int
    """The newest value of the call it reads (guards that read it wait for it)."""

    def __new__(cls, value: int, expr: str, newest: int) -> Size:
        made = super().__new__(cls, value)
        made.expr, made.newest = expr, newest
        return made

    def __reduce__(self) -> Any:  # (pickled, copied: a plain int)
        return (int, (int.__index__(self),))

    def _lost(self) -> int:
        SIZES.lost = True
        return int.__index__(self)

    def __int__(self) -> int:
        return self._lost()

    def __index__(self) -> int:
        return self._lost()

    def __float__(self) -> float:
        return float(self._lost())

    def __bool__(self) -> bool:
        outcome = int.__index__(self) != 0
        note(f"({self.expr} != 0)" if outcome else f"({self.expr} == 0)", self.newest)
        return outcome

    __hash__ = int.__hash__

    def identity(self) -> Any:
        """What this size is at every call (see the module docstring)."""
        found = SIZES.identities.get(self.expr)
        if found is None:
            found = SIZES.identities[self.expr] = identity_of(self.expr, SIZES.declared)
        return found


def identity_of(expr: str, declared: Sequence[Any]) -> Any:
    """`expr` as a sympy expression: an input's size as `declared` says (a `SymInt`'s
    expression, a fixed size's number), any other size a symbol of its own, and so is
    one computed through floats (named by its expression: equal only to itself)."""
    import sympy

    def size(known: Any, name: str) -> Any:
        if type(known) is int:
            return sympy.Integer(known)
        node = getattr(known, "node", None)  # (a `torch.SymInt`: its symbolic expression)
        if node is not None and isinstance(node.expr, sympy.Expr):
            return node.expr
        return sympy.Symbol(name, integer=True, nonnegative=True)

    def dim(slot: int, axis: int) -> Any:
        shape = getattr(declared[slot], "shape", None) if slot < len(declared) else None
        return size(shape[axis] if shape is not None else None, f"v{slot}_{axis}")

    def value(slot: int) -> Any:
        return size(declared[slot] if slot < len(declared) else None, f"v{slot}")

    source = VALUE.sub(r"value(\1)", DIM.sub(r"dim(\1, \2)", expr))
    try:
        return eval(source, {}, {"dim": dim, "value": value})  # (made here, from sizes)
    except (NameError, TypeError):  # (a float's steps, `math.trunc(float(n) * 1.5)`)
        return sympy.Symbol(expr, integer=True, nonnegative=True)


DIM = re.compile(r"v\[(\d+)\]\.shape\[(\d+)\]")
VALUE = re.compile(r"v\[(\d+)\]")


class Quotient:
    """A float computed from sizes by a true division (a count's reciprocal, `1.0 /
    (n / 24)`): its value and its expression, as a `Size`'s. Not a `float`, which
    numpy would read as a plain number, the origin lost unnoticed: the handlers take
    it as a number that a replay computes anew (`aten.number`), and anything else
    converts it (`float()`), which loses the origin."""

    __slots__ = ("expr", "newest", "value")

    def __init__(self, value: float, expr: str, newest: int) -> None:
        self.value, self.expr, self.newest = value, expr, newest

    def __float__(self) -> float:
        SIZES.lost = True
        return self.value

    def __neg__(self) -> Quotient:
        return Quotient(-self.value, f"(-{self.expr})", self.newest)

    def __trunc__(self) -> Size:  # (an output size from a scale: `interpolate`'s)
        return Size(math.trunc(self.value), f"math.trunc({self.expr})", self.newest)

    def __floor__(self) -> Size:
        return Size(math.floor(self.value), f"math.floor({self.expr})", self.newest)

    def __ceil__(self) -> Size:
        return Size(math.ceil(self.value), f"math.ceil({self.expr})", self.newest)

    def __sym_float__(self) -> Quotient:  # (`torch.sym_float`, as dynamo's graphs call it)
        return self


def quotient_arithmetic(symbol: str, function: Callable[[Any, Any], Any], reflected: bool) -> Any:
    """An operation of a `Quotient` (or a `Size`'s true division): a `Quotient` of
    sizes, quotients and Python numbers, a plain float (the origin lost) of any other."""

    def method(self: Size | Quotient, other: Any) -> Any:
        mine, theirs = plain(self), plain(other)
        if not (isinstance(other, Size | Quotient) or type(other) in (int, float)):
            SIZES.lost = True
            return function(theirs, float(mine)) if reflected else function(float(mine), theirs)
        value = function(theirs, mine) if reflected else function(mine, theirs)
        other_expr = other.expr if isinstance(other, Size | Quotient) else repr(other)
        left, right = (other_expr, self.expr) if reflected else (self.expr, other_expr)
        newest = max(self.newest, getattr(other, "newest", -1))
        return Quotient(value, f"({left} {symbol} {right})", newest)

    return method


for _name, _symbol, _function in [
    ("add", "+", operator.add), ("sub", "-", operator.sub), ("mul", "*", operator.mul),
    ("truediv", "/", operator.truediv), ("pow", "**", operator.pow),
]:  # fmt: skip
    setattr(Quotient, f"__{_name}__", quotient_arithmetic(_symbol, _function, False))
    setattr(Quotient, f"__r{_name}__", quotient_arithmetic(_symbol, _function, True))


def plain(x: Any) -> Any:
    """`x` as a plain number if it is a `Size` or a `Quotient` (no guard, nothing lost)."""
    if isinstance(x, Size):
        return int.__index__(x)
    return x.value if isinstance(x, Quotient) else x


def expr_of(x: Any) -> tuple[str, int] | None:
    if isinstance(x, Size):
        return x.expr, x.newest
    if type(x) is int:
        return repr(x), -1
    return None


def note(guard: str, newest: int) -> None:
    if SIZES.active:
        SIZES.guards[guard] = max(newest, SIZES.guards.get(guard, -1))


def arithmetic(symbol: str, function: Callable[[int, int], int], reflected: bool) -> Any:
    def method(self: Size, other: Any) -> Any:
        if isinstance(other, Quotient):
            return NotImplemented  # (the quotient's reflected operation)
        if type(other) is float:  # (a scale from a size, `t * 0.5`: kept as a quotient)
            return quotient_arithmetic(symbol, function, reflected)(self, other)
        theirs = expr_of(other)
        mine = int.__index__(self)
        if theirs is None:  # a numpy number...: a plain result
            SIZES.lost = True
            return function(other, mine) if reflected else function(mine, other)
        value = function(plain(other), mine) if reflected else function(mine, plain(other))
        left, right = (theirs[0], self.expr) if reflected else (self.expr, theirs[0])
        return Size(value, f"({left} {symbol} {right})", max(self.newest, theirs[1]))

    return method


def comparison(symbol: str, function: Callable[[int, int], bool], negated: str) -> Any:
    """The comparison `symbol`; a guard notes the one that holds (`negated` where it
    fails: `a != b` rather than `not (a == b)`, so that both spellings are one guard)."""

    def method(self: Size, other: Any) -> Any:
        theirs = expr_of(other)
        if theirs is None:
            if isinstance(other, float):
                SIZES.lost = True
                return function(int.__index__(self), other)  # type: ignore[arg-type]
            return NotImplemented
        outcome = function(int.__index__(self), plain(other))
        if theirs[0] != self.expr:  # (a size against itself: the same at every call)
            held = symbol if outcome else negated
            note(f"({self.expr} {held} {theirs[0]})", max(self.newest, theirs[1]))
        return outcome

    return method


for _name, _symbol, _function in [
    ("add", "+", operator.add), ("sub", "-", operator.sub), ("mul", "*", operator.mul),
    ("floordiv", "//", operator.floordiv), ("mod", "%", operator.mod),
]:  # fmt: skip
    setattr(Size, f"__{_name}__", arithmetic(_symbol, _function, False))
    setattr(Size, f"__r{_name}__", arithmetic(_symbol, _function, True))
for _name, _symbol, _function, _negated in [
    ("eq", "==", operator.eq, "!="), ("ne", "!=", operator.ne, "=="),
    ("lt", "<", operator.lt, ">="), ("le", "<=", operator.le, ">"),
    ("gt", ">", operator.gt, "<="), ("ge", ">=", operator.ge, "<"),
]:  # fmt: skip
    setattr(Size, f"__{_name}__", comparison(_symbol, _function, _negated))
# Any other operation on ints gives a plain int: the origin is lost.
for _name in ("rpow", "and", "rand", "or", "ror", "xor", "rxor", "lshift", "rlshift",
              "rshift", "rrshift", "divmod", "rdivmod", "abs", "invert", "round", "trunc",
              "floor", "ceil"):  # fmt: skip
    setattr(
        Size,
        f"__{_name}__",
        lambda self, *rest, _n=_name: getattr(int, f"__{_n}__")(self._lost(), *rest),
    )
Size.__neg__ = lambda self: Size(-int.__index__(self), f"(-{self.expr})", self.newest)  # type: ignore[method-assign]
Size.__pos__ = lambda self: self  # type: ignore[method-assign]
Size.__truediv__ = quotient_arithmetic("/", operator.truediv, False)  # type: ignore[method-assign]
Size.__rtruediv__ = quotient_arithmetic("/", operator.truediv, True)  # type: ignore[method-assign]


def size_power(self: Size, exponent: Any, modulo: Any = None) -> Any:
    """`self ** exponent`: a size for a natural exponent, a `Quotient` for a float one
    (`t ** -0.5`), a plain number (the origin lost) for any other."""
    if modulo is None and type(exponent) is int and exponent >= 0:
        return Size(int.__index__(self) ** exponent, f"({self.expr} ** {exponent})", self.newest)
    if modulo is None and isinstance(exponent, float | Quotient):
        return quotient_arithmetic("**", operator.pow, False)(self, exponent)
    return int.__pow__(self._lost(), plain(exponent), modulo)


Size.__pow__ = size_power  # type: ignore[method-assign, assignment]


def to_float(self: Size | Quotient) -> Quotient:
    """`torch.sym_float` of a size (dynamo's graph converts a size so before any float
    arithmetic on it): a `Quotient`, which replay computes anew."""
    return Quotient(float(plain(self)), f"float({self.expr})", self.newest)


Size.__sym_float__ = to_float  # type: ignore[attr-defined]

MATH_FUNCTIONS = ("sqrt", "log2", "cos", "sin", "tanh")
"""The `math` functions on sizes that dynamo's graphs call as `torch._sym_<name>`
(`math.sqrt(t)`, a `Quotient`'s `__sym_sqrt__`), kept as quotients."""


def math_function(name: str) -> Callable[[Size | Quotient], Quotient]:
    function = getattr(math, name)

    def method(self: Size | Quotient) -> Quotient:
        value = function(float(plain(self)))
        return Quotient(value, f"math.{name}(float({self.expr}))", self.newest)

    return method


for _name in MATH_FUNCTIONS:
    setattr(Size, f"__sym_{_name}__", math_function(_name))
    setattr(Quotient, f"__sym_{_name}__", math_function(_name))


REFLECTED = {
    operator.add: "__radd__", operator.sub: "__rsub__", operator.mul: "__rmul__",
    operator.truediv: "__rtruediv__", operator.floordiv: "__rfloordiv__",
    operator.mod: "__rmod__", operator.pow: "__rpow__",
}  # fmt: skip
"""The reflected method of each binary operation a graph calls on sizes."""


def operate(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`function(*args, **kwargs)` (an operation of a graph on sizes), with a float on
    the left of a `Size` given to the size's reflected method: Python would call the
    float's own (`float.__mul__` takes an int subclass as a plain int), whose plain
    float result (`2.0 * n`) loses the origin unnoticed."""
    reflected = REFLECTED.get(function)
    if reflected and len(args) == 2 and isinstance(args[0], float) and isinstance(args[1], Size):
        result = getattr(args[1], reflected)(args[0])
        if result is not NotImplemented:
            return result
        SIZES.lost = True  # (an operation sizes do not keep: `2.0 ** n`)
        return function(args[0], plain(args[1]))
    return function(*args, **kwargs)


def sized(shape: tuple[int, ...], slot: int) -> tuple[int, ...]:
    """A shape whose dims are read from value `slot` of the call."""
    return tuple(Size(d, f"v[{slot}].shape[{axis}]", slot) for axis, d in enumerate(shape))


def specialized(x: Any) -> int:
    """`x` as a plain int that the call's structure depends on (noted as a guard)."""
    if isinstance(x, Size):
        _ = x == int.__index__(x)
    return plain(x)
