"""Special functions of ATen that the dialect has no instruction for, written with its
elementwise ops (see `aten`), in float64 and rounded once to the result's dtype.

`erfc` is not `1 - erf(x)`, which loses every digit as erf(x) nears 1 (erfc(5) is
1.5e-12, and 1 - erf(5) is 0 in float32): for |x| >= 1 it is `exp(-x^2)` times a
smooth function of |x|, whose polynomial approximations are fitted here, the first
time they are needed, as `vm/erf.py` fits erf's: Chebyshev interpolants of degree
16 on pieces of |x|, of values computed by mpmath (which sympy depends on) to 40
digits. Their relative error is below 4e-15.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any, NamedTuple

import numpy as np

from dvm.lazy import LazyArray, asarray
from dvm.torch.aten import Handler, needs
from dvm.torch.aten_math import floats, narrowed

FLOAT64 = np.dtype(np.float64)
DEGREE = 16


class Piece(NamedTuple):
    """A polynomial of degree `DEGREE` in `s`, the piece's variable mapped from
    [low, high] onto [-1, 1]; its coefficients in `s`, constant term first."""

    low: float
    high: float
    coefficients: tuple[float, ...]

    def variable(self, argument: Any) -> Any:
        """`s` of the piece's function's argument."""
        return (argument - self.low) * (2 / (self.high - self.low)) - 1


@cache
def erfc_pieces() -> tuple[Piece, ...]:
    """Over a = |x|: on [0, 1), erf(a) / a as a function of a^2 (erfc is then
    `1 - a p`, at least 0.157); on [1, 2.5) and [2.5, 4), `exp(a^2) erfc(a)` (erfcx);
    from 4 on, `a exp(a^2) erfc(a)` as a function of 1 / a^2 in (0, 1/16], which
    tends to 1 / sqrt(pi)."""
    import mpmath

    context = mpmath.mp.clone()
    context.dps = 40

    def erf_over_a(u: Any) -> Any:
        a = context.sqrt(u)
        return 2 / context.sqrt(context.pi) if u == 0 else context.erf(a) / a

    def scaled(a: Any) -> Any:
        return context.exp(a * a) * context.erfc(a)

    def tail(t: Any) -> Any:
        a = 1 / context.sqrt(t)
        return a * scaled(a)

    return (
        fitted(erf_over_a, 0.0, 1.0),
        fitted(scaled, 1.0, 2.5),
        fitted(scaled, 2.5, 4.0),
        fitted(tail, 0.0, 1 / 16),
    )


def fitted(function: Any, low: float, high: float) -> Piece:
    """The Chebyshev interpolant of `function` on [low, high], as a `Piece`."""
    from numpy.polynomial import chebyshev

    count = 2 * DEGREE + 8
    nodes = np.cos(np.pi * (np.arange(count) + 0.5) / count)
    values = [float(function(low + (node + 1) * (high - low) / 2)) for node in nodes]
    series = chebyshev.chebfit(nodes, np.array(values), DEGREE)
    return Piece(low, high, tuple(float(c) for c in chebyshev.cheb2poly(series)))


def constant(value: float) -> LazyArray:
    return asarray(np.asarray(value, FLOAT64))


def chosen(masks: Sequence[LazyArray], values: Sequence[Any]) -> Any:
    """Per element, the value of the first mask that holds (the last value where none
    does)."""
    result = values[-1]
    for mask, value in zip(reversed(masks), reversed(values[:-1]), strict=True):
        result = np.where(mask, value, result)
    return needs(result)


def erfc(x: Any) -> Any:
    """erfc by `erfc_pieces`, one polynomial per element, whose coefficients are chosen
    by its piece; `exp(-a^2)` as `exp(-hi^2) exp(-lo (a + hi))` for `a = hi + lo`, hi
    of 12 fractional bits (so hi^2 is exact, and the exponent is exact to an ulp); 2
    less that for x < 0; 0 at inf, 2 at -inf, NaN at NaN."""
    (x,), result = floats(x)
    x = narrowed(x, FLOAT64)
    a = np.minimum(np.absolute(x), 30.0)  # (erfc underflows from 27 on; NaN stays)
    pieces = erfc_pieces()
    masks = [a < pieces[1].low, a < pieces[2].low, a < pieces[2].high]
    arguments = (a * a, a, a, 1 / (a * a))  # (each piece's function's argument)
    s = chosen(masks, [p.variable(v) for p, v in zip(pieces, arguments, strict=True)])
    polynomial: Any = None
    for k in reversed(range(DEGREE + 1)):
        term = chosen(masks, [constant(p.coefficients[k]) for p in pieces])
        polynomial = term if polynomial is None else polynomial * s + term
    hi = np.rint(a * 4096.0) * (1 / 4096.0)
    gaussian = np.exp(-(hi * hi)) * np.exp(-((a - hi) * (a + hi)))
    scaled = gaussian * needs(np.where(masks[2], polynomial, polynomial / a))
    positive = needs(np.where(masks[0], 1 - a * polynomial, scaled))
    return narrowed(needs(np.where(x < 0, 2 - positive, positive)), result)


HANDLERS: dict[str, Handler] = {"erfc": erfc}
"""The ATen ops of this module, by name."""
