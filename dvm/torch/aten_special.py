"""Special functions of ATen that the dialect has no instruction for, written with its
elementwise ops (see `aten`), in float64 and rounded once to the result's dtype.

`erfc` is not `1 - erf(x)`, which loses every digit as erf(x) nears 1 (erfc(5) is
1.5e-12, and 1 - erf(5) is 0 in float32): for |x| >= 1 it is `exp(-x^2)` times a
smooth function of |x|, whose polynomial approximations are fitted here, the first
time they are needed, as `vm/erf.py` fits erf's: Chebyshev interpolants of degree
16 on pieces of |x|, of values computed by mpmath (which sympy depends on) to 40
digits. Their relative error is below 4e-15. `special_erfcx`, `exp(x^2) erfc(x)`, is
the same polynomials without the exponential.

`erfinv` is `x p(x^2)` below 1/2, and beyond `t + q(t)` for t = sqrt(-ln w), w = 1 - |x|
(exact there), interpolants fitted likewise; `special_ndtri(p)` is
`sqrt(2) erfinv(2p - 1)` computed from w = 2p or 2 (1 - p), so that a tiny p keeps
its digits.

`lgamma` and `digamma` (lgamma's derivative, `polygamma` of order 0) are Stirling's
series from 8 (digamma's from 10) on, their argument shifted up by the recurrence
`Γ(z + 1) = z Γ(z)` below it; for x < 0, the reflection `Γ(x) Γ(1 - x) = π / sin(πx)`,
whose sine and tangent are taken of x less its nearest integer (exact), so that they
keep their digits far from 0. `polygamma` of order 1 is torch's trigamma, step by
step (its asymptotic series, and its reflection's sine, which gives its values at the
poles); orders 2 to 5 are Hurwitz's zeta, summed while the argument is below 16 and then
by Euler-Maclaurin, with the reflection below 0.

The modified Bessel functions `i0` and `i1`, and `i0e` and `i1e` (scaled by
`exp(-|x|)`), are their power series up to |x| = 8 (positive terms: no digit lost),
and beyond, `exp(|x|) / sqrt(|x|)` times an interpolant of 1/|x| fitted as erfc's are.
The Bessel functions `special_bessel_j0` and `special_bessel_j1` are, up to 8, an
interpolant of x^2 times the factors of their zeros, and beyond, their asymptotic form
with amplitudes fitted likewise; `special_bessel_y0` and `special_bessel_y1` are, up to
8, `(2/pi) ln(x/2) J_n(x)` (less `2/(pi x)` for Y1) and an interpolant, and beyond, the
same asymptotic form. `special_modified_bessel_k0` and `_k1` (and their scaled forms) are,
up to 1, `(-1)^(n+1) ln(x/2) I_n(x)` (plus 1/x for K1) and an interpolant, and beyond,
`sqrt(pi / (2x)) exp(-x)` times an interpolant of 1/x.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from functools import cache
from typing import Any, NamedTuple

import numpy as np

from dvm.lazy import LazyArray, asarray
from dvm.numerics import working_dtype
from dvm.torch.aten import Handler, Unsupported, needs
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
    context = precise()

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


def precise() -> Any:
    """An mpmath context of 40 digits, which the fits' values are computed in (mpmath
    comes with sympy; imported when a fit is first made)."""
    import mpmath

    context = mpmath.mp.clone()
    context.dps = 40
    return context


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


def piecewise(pieces: Sequence[Piece], masks: Sequence[LazyArray], arguments: Sequence[Any]) -> Any:
    """Per element, the polynomial of the piece its first holding mask picks (the last
    piece where none holds), of that piece's argument, by Horner's rule on the
    coefficients chosen per element."""
    variables = [piece.variable(v) for piece, v in zip(pieces, arguments, strict=True)]
    s = chosen(masks, variables)
    polynomial: Any = None
    for k in reversed(range(DEGREE + 1)):
        term = chosen(masks, [constant(piece.coefficients[k]) for piece in pieces])
        polynomial = term if polynomial is None else polynomial * s + term
    return polynomial


def scaled_erfc(a: LazyArray) -> tuple[LazyArray, Any]:
    """For a = |x| >= 0, by `erfc_pieces` (one polynomial per element, whose
    coefficients are chosen by its piece): where a < 1, the mask, and erf(a) / a;
    elsewhere `exp(a^2) erfc(a)` (erfcx)."""
    pieces = erfc_pieces()
    masks = [a < pieces[1].low, a < pieces[2].low, a < pieces[2].high]
    arguments = (a * a, a, a, 1 / (a * a))  # (each piece's function's argument)
    polynomial = piecewise(pieces, masks, arguments)
    return masks[0], needs(np.where(masks[2], polynomial, polynomial / a))


def gaussian(a: Any, sign: float) -> Any:
    """`exp(sign a^2)` as `exp(sign hi^2) exp(sign lo (a + hi))` for `a = hi + lo`, hi
    of 12 fractional bits (hi^2 is exact, so the exponent is exact to an ulp)."""
    hi = np.rint(a * 4096.0) * (1 / 4096.0)
    return np.exp(sign * (hi * hi)) * np.exp(sign * ((a - hi) * (a + hi)))


def erfc(x: Any) -> Any:
    """`1 - a erf(a)/a` below 1, `exp(-a^2) erfcx(a)` from 1 on, for a = |x|
    (`scaled_erfc`); 2 less that for x < 0; 0 at inf, 2 at -inf, NaN at NaN."""
    (x,), result = floats(x)
    x = narrowed(x, FLOAT64)
    a = needs(np.minimum(np.absolute(x), 30.0))  # (erfc underflows from 27 on; NaN stays)
    small, polynomial = scaled_erfc(a)
    positive = needs(np.where(small, 1 - a * polynomial, gaussian(a, -1.0) * polynomial))
    return narrowed(needs(np.where(x < 0, 2 - positive, positive)), result)


def erfcx(x: Any) -> Any:
    """`exp(x^2) erfc(x)`: `exp(a^2) (1 - a erf(a)/a)` below 1, the polynomial itself
    from 1 on (`scaled_erfc`: no exponential, to any size); for x < 0,
    `2 exp(x^2) - erfcx(|x|)`, inf from -26.7 on, with x^2 rounded to the result's
    dtype, as torch's (in float32, 4e-6 off at -8: eager's answer). torch has no
    erfcx of halves."""
    (x,), result = floats(x)
    if working_dtype(result) != result:
        raise Unsupported("erfcx of a half-precision float")  # (torch raises)
    x = narrowed(x, FLOAT64)
    a = needs(np.absolute(x))
    small, polynomial = scaled_erfc(a)
    square = narrowed(narrowed(needs(a * a), result), FLOAT64)
    growth = np.exp(np.minimum(square, 900.0))  # (inf from 26.7 on; NaN stays)
    positive = needs(np.where(small, growth * (1 - a * polynomial), polynomial))
    return narrowed(needs(np.where(x < 0, 2 * growth - positive, positive)), result)


ERFINV_CUTS = (math.sqrt(math.log(2)), 1.5, 2.5, 4.0, 7.0, 14.0, 28.0)
"""The pieces of t = sqrt(-ln w) over which `erfcinv(w) - t` is interpolated, for w in
(0, 1/2]: to t = 27.3 at the smallest positive float64 (5e-324)."""


@cache
def erfinv_pieces() -> tuple[Piece, ...]:
    """Below 1/2, `erfinv(a) / a` as a function of a^2; then `erfcinv(w) - t`, w = 1 - a,
    as a function of t = sqrt(-ln w) (erfcinv(w) grows as t: the difference, between
    -0.36 and -0.07, keeps the sum's rounding errors small), on the pieces of
    `ERFINV_CUTS`. By mpmath to 40 digits."""
    context = precise()

    def erfinv_over_a(u: Any) -> Any:
        a = context.sqrt(u)
        return context.sqrt(context.pi) / 2 if u == 0 else context.erfinv(a) / a

    def tail_less_t(t: Any) -> Any:
        """The y of `ln erfc(y) = -t^2`, less t: Newton's steps from y = t, which
        approach the root from above (ln erfc is concave), to 35 digits."""
        t = context.mpf(t)
        y = t
        while True:
            complement = context.erfc(y)
            slope = -2 / context.sqrt(context.pi) * context.exp(-y * y) / complement
            step = (context.log(complement) + t * t) / slope
            y -= step
            if abs(step) < y * context.mpf(10) ** -35:
                return y - t

    central = fitted(erfinv_over_a, 0.0, 0.25)
    tails = [fitted(tail_less_t, low, high) for low, high in itertools.pairwise(ERFINV_CUTS)]
    return (central, *tails)


def inverse_erf(a: LazyArray, w: LazyArray) -> Any:
    """erfinv(a) for a in [0, 1] (NaN above), given w = 1 - a exact where a >= 1/2
    (as it is for a float a, and as `ndtri` makes it for p): `a p(a^2)` below 1/2,
    beyond `t + q(t)` of t = sqrt(-ln w) (`erfinv_pieces`); inf at w = 0."""
    pieces = erfinv_pieces()
    t = np.sqrt(-np.log(np.maximum(w, 0.0)))
    masks = [a < 0.5, *(t < piece.high for piece in pieces[1:-1])]
    polynomial = piecewise(pieces, masks, [a * a] + [t] * (len(pieces) - 1))
    value = np.where(masks[0], a * polynomial, t + polynomial)
    value = np.where(w == 0, math.inf, value)
    return needs(np.where(a <= 1, value, math.nan))  # (NaN above 1 and at NaN)


def erfinv(x: Any) -> Any:
    """The inverse of erf: `inverse_erf` of |x| and 1 - |x|, of x's sign; -inf at -1,
    inf at 1, NaN beyond and at NaN."""
    (x,), result = floats(x)
    x = narrowed(x, FLOAT64)
    a = needs(np.absolute(x))
    value = needs(np.copysign(inverse_erf(a, needs(1 - a)), x))
    return narrowed(value, result)


def ndtri(p: Any) -> Any:
    """The inverse of the standard normal distribution, `sqrt(2) erfinv(2p - 1)`, as
    `-sqrt(2) erfcinv(2p)` below 1/2 and `sqrt(2) erfcinv(2 (1 - p))` above (1 - p is
    exact there), so that a small p keeps its digits (ndtri(1e-300) is -37.0); -inf at 0,
    inf at 1, NaN outside [0, 1]."""
    (p,), result = floats(p)
    p = narrowed(p, FLOAT64)
    lower = p < 0.5
    w = needs(np.where(lower, 2 * p, 2 - 2 * p))
    a = needs(np.where(w < 0, math.inf, 1 - w))  # (|2p - 1|: exact where w >= 1/2)
    value = math.sqrt(2) * inverse_erf(a, w)
    return narrowed(needs(np.where(lower, -value, value)), result)


STIRLING_LGAMMA = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)
"""lgamma(z) - ((z - 1/2) ln z - z + ln(2π) / 2), in powers 1/z, 1/z^3, ... (the
Bernoulli numbers' B_2k / (2k (2k - 1))): below 1e-15 of it from 8 on."""

STIRLING_DIGAMMA = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)
"""ln z - 1/(2z) - digamma(z), in powers 1/z^2, 1/z^4, ... (B_2k / 2k): below 5e-17
from 10 on."""


def odd_series(coefficients: Sequence[float], inverse: Any, first: Any) -> Any:
    """`first * (c0 + c1 w + c2 w^2 + ...)` for `w = inverse^2`, by Horner's rule."""
    w = inverse * inverse
    total: Any = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        total = total * w + c
    return total * first


def shifted(z: LazyArray, bound: float, steps: int) -> tuple[Any, Any, Any]:
    """`z` moved up by 1 while below `bound` (at most `steps` times): the moved `z`,
    the product of the values it moved from (for lgamma) and the sum of their
    reciprocals (for digamma)."""
    product: Any = constant(1.0)
    reciprocals: Any = constant(0.0)
    for _ in range(steps):
        below = z < bound
        product = np.where(below, product * z, product)
        reciprocals = np.where(below, reciprocals + 1 / z, reciprocals)
        z = needs(np.where(below, z + 1, z))
    return z, product, reciprocals


def reduced(x: LazyArray) -> LazyArray:
    """x less its nearest integer, in [-1/2, 1/2] (exact): sin(π x) and tan(π x) of it
    have x's digits, where π x would lose them as |x| grows."""
    return needs(x - np.rint(x))


def lgamma(x: Any) -> Any:
    """ln |Γ(x)|: +inf at 0, at the negative integers and at ±inf; NaN at NaN."""
    (x,), result = floats(x)
    x = narrowed(x, FLOAT64)
    negative = x < 0
    z = needs(np.where(negative, 1 - x, x))  # (lgamma(1 - x) for the reflection)
    z, product, _ = shifted(z, 8.0, 8)
    stirling = (z - 0.5) * np.log(z) - z + 0.5 * math.log(2 * math.pi)
    positive = stirling + odd_series(STIRLING_LGAMMA, 1 / z, 1 / z) - np.log(product)
    sine = np.absolute(np.sin(math.pi * reduced(x)))
    reflected = math.log(math.pi) - np.log(sine) - positive
    value = np.where(negative, reflected, positive)
    return narrowed(needs(np.where(np.isinf(x), math.inf, value)), result)


def digamma(x: Any) -> Any:
    """Γ'(x) / Γ(x): -inf at 0, +inf at -0 and +inf, NaN at the negative integers, at
    -inf and at NaN (torch's values)."""
    (x,), result = floats(x)
    x = narrowed(x, FLOAT64)
    negative = x < 0
    z = needs(np.where(negative, 1 - x, x))
    z, _, reciprocals = shifted(z, 10.0, 10)
    inverse = 1 / z
    series = odd_series(STIRLING_DIGAMMA, inverse, inverse * inverse)
    positive = np.log(z) - 0.5 * inverse - series - reciprocals
    r = reduced(x)
    reflected = positive - math.pi / np.tan(math.pi * r)
    value = np.where(negative, np.where(r == 0, math.nan, reflected), positive)
    zero = np.copysign(math.inf, -x)  # (-inf at +0, +inf at -0)
    return narrowed(needs(np.where(x == 0, zero, value)), result)


def polygamma(order: int, x: Any) -> Any:
    """`polygamma`: of order 0 digamma, of order 1 torch's trigamma, of orders 2 to 5
    `(-1)^(n+1) n! zeta(n + 1, x)` (`polygamma_series`); higher orders run in torch
    (from order 6 on, the reflection's terms cancel to 1e-10 of the result)."""
    if order == 0:
        return digamma(x)
    if not 1 <= order <= HIGHEST_POLYGAMMA:
        raise Unsupported(f"polygamma of order {order}")
    (x,), result = floats(x)
    x = narrowed(x, FLOAT64)
    value = trigamma(x, working_dtype(result)) if order == 1 else polygamma_series(order, x)
    return narrowed(value, result)


HIGHEST_POLYGAMMA = 5
"""The highest order of `polygamma` recorded (see `polygamma`)."""

BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510)
"""The Bernoulli numbers B_2, B_4, ..., B_16."""


def trigamma(x: LazyArray, computed: np.dtype[Any]) -> LazyArray:
    """torch's trigamma, step by step: below 1/2 the reflection `pi^2 / sin^2(pi x)`,
    whose sine torch takes in the `computed` dtype (float32 for float32 and halves, so
    that a pole gives eager's large finite number), then six steps of the recurrence
    and its asymptotic series (which eager's values carry, to about 1e-9)."""
    reflect = x < 0.5
    angle = narrowed(needs(x * computed.type(math.pi)), computed)
    sine = narrowed(needs(np.sin(angle)), FLOAT64)
    result: Any = np.where(reflect, -(math.pi * math.pi) / (sine * sine), 0.0)
    z: Any = np.where(reflect, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (z * z)
        z = z + 1
    w = 1 / (z * z)
    result = result + (1 + 1 / (2 * z) + w * (1 / 6 - w * (1 / 30 - w * (1 / 42)))) / z
    return needs(np.where(reflect, -result, result))


def zeta_tail(s: int, w: Any) -> Any:
    """Hurwitz's zeta(s, w) for w >= 16 by Euler-Maclaurin: `w^(1-s) / (s-1) + w^-s / 2`
    and the Bernoulli terms `B_2j / (2j)! s (s+1) ... (s+2j-2) w^(-s-2j+1)`."""
    total = w ** (1 - s) / (s - 1) + 0.5 * w**-s
    rising = float(s)
    for j, bernoulli in enumerate(BERNOULLI, start=1):
        total = total + (bernoulli / math.factorial(2 * j) * rising) * w ** (-s - 2 * j + 1)
        rising *= (s + 2 * j - 1) * (s + 2 * j)
    return total


def polygamma_series(order: int, x: LazyArray) -> LazyArray:
    """`(-1)^(n+1) n! zeta(n + 1, z)`, zeta's first terms summed while z < 16 and then
    its tail (`zeta_tail`); for x < 0, the reflection `psi_n(x) = (-1)^n psi_n(1 - x) -
    pi d^n/dx^n cot(pi x)`, the derivative a polynomial in the cotangent of x less its
    nearest integer. As eager's: infinite at 0, at the negative integers and at -inf
    (+inf of odd orders, -inf of even ones), NaN at +inf."""
    s, factor = order + 1, (-1) ** (order + 1) * math.factorial(order)
    negative = x < 0
    z: Any = needs(np.where(negative, 1 - x, x))
    partial: Any = constant(0.0)
    for _ in range(16):
        below = z < 16
        partial = np.where(below, partial + z**-s, partial)
        z = needs(np.where(below, z + 1, z))
    positive = factor * (partial + zeta_tail(s, z))
    cotangent = 1 / np.tan(math.pi * reduced(x))
    derivative = np.polynomial.Polynomial([0.0, 1.0])  # (d^k/dx^k cot(pi x), in the cotangent)
    for _ in range(order):
        derivative = -math.pi * np.polynomial.Polynomial([1.0, 0.0, 1.0]) * derivative.deriv()
    slope: Any = constant(0.0)
    for coefficient in reversed(derivative.coef):
        slope = slope * cotangent + coefficient
    reflected = (-1) ** order * positive - math.pi * slope
    pole = (x == np.floor(x)) & (x <= 0)  # (-inf among them)
    value = np.where(negative, reflected, positive)
    value = np.where(pole, math.inf if order % 2 else -math.inf, value)
    return needs(np.where(x == math.inf, math.nan, value))


SERIES_TERMS = 25
"""Terms of the power series of I0 and I1 up to 8, where (x^2/4)^k / (k!)^2 falls
below 1e-20 of the sum."""

BESSEL_CUTS = (0.0, 1 / 32, 1 / 16, 1 / 8)
"""The pieces of 1/x over which `sqrt(x) exp(-x) I_n(x)` is interpolated, from x = 8."""

FLOAT32_EXP_LIMIT = math.log(float(np.finfo(np.float32).max))
"""The x above which float32's exp overflows."""


@cache
def bessel_tails(order: int) -> tuple[Piece, ...]:
    """`sqrt(x) exp(-x) I_order(x)` for x >= 8 as a function of t = 1/x (1/sqrt(2 pi) at
    t = 0), by mpmath to 40 digits."""
    context = precise()

    def scaled(t: Any) -> Any:
        if t == 0:
            return 1 / context.sqrt(2 * context.pi)
        x = 1 / context.mpf(t)
        return context.sqrt(x) * context.besseli(order, x) * context.exp(-x)

    return tuple(fitted(scaled, low, high) for low, high in itertools.pairwise(BESSEL_CUTS))


def bessel_series(a: LazyArray, order: int) -> Any:
    """I_order(a) by its power series, `(a/2)^order sum (a^2/4)^k / (k! (k + order)!)`,
    by Horner's rule (for a <= 8)."""
    u = a * a * 0.25
    last = SERIES_TERMS
    series: Any = constant(1 / (math.factorial(last) * math.factorial(last + order)))
    for k in reversed(range(last)):
        series = series * u + 1 / (math.factorial(k) * math.factorial(k + order))
    return series * (a * 0.5) if order else series


def bessel_tail(a: LazyArray, order: int) -> Any:
    """`sqrt(a) exp(-a) I_order(a)` by `bessel_tails` (for a >= 8)."""
    pieces = bessel_tails(order)
    t = 1 / a
    masks = [t < piece.high for piece in pieces[:-1]]
    return piecewise(pieces, masks, [t] * len(pieces))


def bessel(order: int, scaled: bool) -> Handler:
    """`i0`, `special_i1` (`order` 1) or their `scaled` forms `special_i0e` and
    `special_i1e`, `exp(-|x|) I_n(x)`. Up to |x| = 8 the power series, whose terms are
    all positive (a few ulps of I_n, in float64); beyond, `exp(|x|) / sqrt(|x|)` times an
    interpolant of 1/|x| (`bessel_tails`), multiplied in torch's order, so that
    `i0(inf)` is NaN as eager's. I1 is odd (`i1(-0)` is 0, as torch's). Where torch's
    float32 exp overflows (`|x|` above 88.72), its float32, bfloat16 and float16 `i0`
    and `i1` are infinite, and so are these."""

    def handler(x: Any) -> Any:
        (x,), result = floats(x)
        x = narrowed(x, FLOAT64)
        a = needs(np.absolute(x))
        series, tail = bessel_series(a, order), bessel_tail(a, order)
        if scaled:
            value = np.where(a <= 8, series * np.exp(-a), tail / np.sqrt(a))
        else:
            large = np.exp(a) * tail / np.sqrt(a)  # (NaN at inf, as torch's)
            if result != FLOAT64:
                large = np.where((a > FLOAT32_EXP_LIMIT) & ~np.isinf(a), math.inf, large)
            value = np.where(a <= 8, series, large)
        if order:
            value = np.where(x < 0, -value, value)
        return narrowed(needs(value), result)

    return handler


class BesselJ(NamedTuple):
    """The fits of `bessel_j_fits`: J's zeros below 8, each as a float64 and the rest of
    its value; the piece below 8; and the pieces of P and Q beyond."""

    zeros: tuple[tuple[float, float], ...]
    small: tuple[Piece, Piece]
    cosine: tuple[Piece, ...]
    sine: tuple[Piece, ...]


@cache
def bessel_j_fits(order: int) -> BesselJ:
    """Up to 8, `J_order(x) / (x^order (x^2 - z1^2) (x^2 - z2^2))` for J's zeros z1 and z2
    below 8, as a function of x^2 on two pieces (entire, so that J keeps its relative
    precision near its zeros); beyond, the amplitudes P and Q of the asymptotic form `J_n(x) =
    sqrt(2 / (pi x)) (P cos(chi) - Q sin(chi))`, chi = x - (2n + 1) pi / 4, as functions
    of 1/x on `BESSEL_CUTS` (P tends to 1, Q to 0). By mpmath to 40 digits."""
    context = precise()
    first, second = (context.besseljzero(order, k) for k in (1, 2))

    def reduced(u: Any) -> Any:
        if u == 0:  # (the series' first term, (x/2)^n / n!)
            return context.mpf(0.5) ** order / (first**2 * second**2)
        x = context.sqrt(u)
        return context.besselj(order, x) / (x**order * (u - first**2) * (u - second**2))

    @cache
    def amplitudes(t: float) -> tuple[Any, Any]:
        """P and Q at x = 1/t (both fits read the same nodes)."""
        if t == 0:
            return context.mpf(1), context.mpf(0)
        x = 1 / context.mpf(t)
        chi = x - (2 * order + 1) * context.pi / 4
        j, y = context.besselj(order, x), context.bessely(order, x)
        c, s, scale = context.cos(chi), context.sin(chi), context.sqrt(context.pi * x / 2)
        return scale * (j * c + y * s), scale * (y * c - j * s)

    pairs = list(itertools.pairwise(BESSEL_CUTS))
    return BesselJ(
        zeros=tuple((float(z), float(z - float(z))) for z in (first, second)),
        small=(fitted(reduced, 0.0, 30.0), fitted(reduced, 30.0, 64.0)),
        cosine=tuple(fitted(lambda t: amplitudes(t)[0], low, high) for low, high in pairs),
        sine=tuple(fitted(lambda t: amplitudes(t)[1], low, high) for low, high in pairs),
    )


def bessel_j_small(a: LazyArray, fits: BesselJ) -> Any:
    """`J_n(a) / a^n` for 0 <= a <= 8: the polynomial of a^2 times `(a - z) (a + z)` for
    each zero z (z in two floats, so that J keeps its digits near it)."""
    square = a * a
    small: Any = piecewise(fits.small, [square < fits.small[0].high], [square] * 2)
    for high, low in fits.zeros:
        small = small * ((a - high - low) * (a + high))
    return small


def bessel_waves(a: LazyArray, order: int, fits: BesselJ) -> tuple[Any, Any]:
    """J_n(a) and Y_n(a) for a >= 8 by their asymptotic form, `sqrt(2 / (pi a))` times
    `P cos(chi) - Q sin(chi)` and `P sin(chi) + Q cos(chi)`, whose `cos(chi)` and
    `sin(chi)` are sums of `cos a` and `sin a` (no rounding of `a - pi/4`)."""
    sign = -1.0 if order else 1.0  # (cos(3 pi / 4) against cos(pi / 4))
    t = 1 / a
    masks = [t < piece.high for piece in fits.cosine[:-1]]
    p = piecewise(fits.cosine, masks, [t] * len(fits.cosine))
    q = piecewise(fits.sine, masks, [t] * len(fits.sine))
    cosine, sine = np.cos(a), np.sin(a)
    # (sqrt 2 cos(chi) = sign cos a + sin a, sqrt 2 sin(chi) = sign sin a - cos a)
    wave_cosine, wave_sine = sign * cosine + sine, sign * sine - cosine
    scale = 1 / np.sqrt(math.pi * a)
    return (p * wave_cosine - q * wave_sine) * scale, (p * wave_sine + q * wave_cosine) * scale


def bessel_j(order: int) -> Handler:
    """`special_bessel_j0` or `special_bessel_j1` (`bessel_j_fits`): up to |x| = 8
    `bessel_j_small`, beyond `bessel_waves`. NaN at the infinities and NaN, as eager's;
    J1 odd, of -0 too."""

    def handler(x: Any) -> Any:
        (x,), result = floats(x)
        x = narrowed(x, FLOAT64)
        a = needs(np.absolute(x))
        fits = bessel_j_fits(order)
        small, (large, _) = bessel_j_small(a, fits), bessel_waves(a, order, fits)
        if order:
            small, large = small * x, np.where(x < 0, -large, large)
        return narrowed(needs(np.where(a <= 8, small, large)), result)

    return handler


@cache
def bessel_y_fits(order: int) -> tuple[Piece, Piece]:
    """Up to 8, the entire part of Y_order, `(Y_n(x) - (2/pi) ln(x/2) J_n(x) + n 2/(pi x))
    / x^n`, as a function of x^2 on J's two pieces. By mpmath to 40 digits."""
    context = precise()

    def entire(u: Any) -> Any:
        x = context.sqrt(u)
        logarithmic = 2 / context.pi * context.log(x / 2) * context.besselj(order, x)
        pole = 2 / (context.pi * x) if order else 0
        return (context.bessely(order, x) - logarithmic + pole) / x**order

    return fitted(entire, 0.0, 30.0), fitted(entire, 30.0, 64.0)


def bessel_y(order: int) -> Handler:
    """`special_bessel_y0` or `special_bessel_y1`: up to 8, `(2/pi) ln(x/2) J_n(x)` (by
    `bessel_j_small`), less `2/(pi x)` for Y1, plus x^n times the entire part
    (`bessel_y_fits`); beyond, `bessel_waves`. Near Y's zeros below 8 its terms cancel,
    so it keeps an absolute precision there (a few 1e-16), as torch's. -inf at 0, NaN
    below 0, at inf and at NaN, as eager's."""

    def handler(x: Any) -> Any:
        (x,), result = floats(x)
        x = narrowed(x, FLOAT64)
        fits, entire = bessel_j_fits(order), bessel_y_fits(order)
        square = x * x
        rest = piecewise(entire, [square < entire[0].high], [square] * 2)
        j = bessel_j_small(x, fits)
        logarithm = (2 / math.pi) * (np.log(x) - math.log(2))
        if order:
            j, rest = j * x, rest * x - (2 / math.pi) / x
        small = logarithm * j + rest
        _, large = bessel_waves(x, order, fits)
        value = np.where(x <= 8, small, large)
        value = np.where(x == 0, -math.inf, value)
        return narrowed(needs(np.where((x < 0) | np.isinf(x), math.nan, value)), result)

    return handler


K_CUTS = (0.0, 1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0)
"""The pieces of 1/x over which `sqrt(2x / pi) exp(x) K_n(x)` is interpolated, from x = 1."""


class BesselK(NamedTuple):
    """The fits of `bessel_k_fits`: the entire part up to 1, and the scaled K beyond."""

    small: Piece
    large: tuple[Piece, ...]


def k_series(order: int, x: Any, context: Any) -> Any:
    """K_order(x), order 0 or 1, by its power series in u = x^2/4: with `i` the sum of
    `u^k / (k! (k+n)!)` (I_n's, over (x/2)^n) and `h` that of the same terms times
    `H_k + H_(k+n)` (harmonic numbers). Its terms cancel to e^(-2x) of them, so it is
    evaluated at 90 digits (ten times faster than mpmath's `besselk` of an integer
    order)."""
    x = context.mpf(x)
    u, log = x * x / 4, context.log(x / 2)
    term = (x / 2) ** order
    i, h, harmonic, shifted = 0, 0, context.mpf(0), context.mpf(order)
    k = 0
    while term > context.eps * i:
        i, h = i + term, h + term * (harmonic + shifted)
        k += 1
        term = term * u / (k * (k + order))
        harmonic, shifted = harmonic + context.mpf(1) / k, shifted + context.mpf(1) / (k + order)
    if order == 0:
        return h / 2 - (log + context.euler) * i
    return 1 / x + log * i - h / 2 + context.euler * i


def k_asymptotic(order: int, t: Any, context: Any) -> Any:
    """`sqrt(2x / pi) exp(x) K_order(x)` for x = 1/t >= 32 by its asymptotic series
    `sum prod_j (4n^2 - (2j-1)^2) t^k / (k! 8^k)`, summed while its terms fall (to below
    e^(-2x) of the sum: 2e-28 at 32)."""
    total, term, k = context.mpf(1), context.mpf(1), 0
    while True:
        k += 1
        next_term = term * (4 * order**2 - (2 * k - 1) ** 2) * t / (8 * k)
        if abs(next_term) >= abs(term) or abs(next_term) < context.eps:
            return total
        total, term = total + next_term, next_term


@cache
def bessel_k_fits(order: int) -> BesselK:
    """Up to 1, K's entire part `(K_n(x) - (-1)^(n+1) ln(x/2) I_n(x) - n/x) / x^n` as a
    function of x^2; beyond, `sqrt(2x / pi) exp(x) K_n(x)` as a function of 1/x on
    `K_CUTS` (1 at 1/x = 0): `k_asymptotic` from 32, `k_series` below."""
    context = precise()
    series = context.clone()
    series.dps = 90

    def entire(u: Any) -> Any:
        x = context.sqrt(u)
        logarithmic = (-1) ** (order + 1) * context.log(x / 2) * context.besseli(order, x)
        pole = 1 / x if order else 0
        return (k_series(order, x, series) - logarithmic - pole) / x**order

    def scaled(t: Any) -> Any:
        if t <= K_CUTS[1]:
            return k_asymptotic(order, context.mpf(t), context)
        x = 1 / context.mpf(t)
        return context.sqrt(2 * x / context.pi) * context.exp(x) * k_series(order, x, series)

    large = tuple(fitted(scaled, low, high) for low, high in itertools.pairwise(K_CUTS))
    return BesselK(small=fitted(entire, 0.0, 1.0), large=large)


def bessel_k(order: int, scaled: bool) -> Handler:
    """`special_modified_bessel_k0` or `_k1` (`order` 1), or their `scaled` forms
    `exp(x) K_n(x)` (`bessel_k_fits`): up to 1, `(-1)^(n+1) ln(x/2) I_n(x)` (I by its
    series), plus 1/x for K1, plus x^n times the entire part; beyond, `sqrt(pi / (2x))
    exp(-x)` times the scaled fit. inf at 0, 0 at inf, NaN below 0 and at NaN, as
    eager's."""

    def handler(x: Any) -> Any:
        (x,), result = floats(x)
        x = narrowed(x, FLOAT64)
        fits = bessel_k_fits(order)
        square = x * x
        rest = piecewise((fits.small,), [], [square])
        logarithm = np.log(x) - math.log(2)
        if order:
            small = logarithm * bessel_series(x, 1) + 1 / x + rest * x
        else:
            small = rest - logarithm * bessel_series(x, 0)
        t = 1 / x
        masks = [t < piece.high for piece in fits.large[:-1]]
        amplitude = piecewise(fits.large, masks, [t] * len(fits.large))
        large = amplitude * np.sqrt((math.pi / 2) * t)
        if scaled:
            small = small * np.exp(x)
        else:
            large = large * np.exp(-x)
        value = np.where(x <= 1, small, large)
        value = np.where(x == 0, math.inf, value)
        return narrowed(needs(np.where(x < 0, math.nan, value)), result)

    return handler


def without_halves(name: str, handler: Handler) -> Handler:
    """`handler` for float32 and float64 only: torch has no `name` of halves (raises)."""

    def checked(x: Any) -> Any:
        result = floats(x)[1]
        if working_dtype(result) != result:
            raise Unsupported(f"{name} of a half-precision float")
        return handler(x)

    return checked


HANDLERS: dict[str, Handler] = {
    "erfc": erfc, "special_erfcx": erfcx,
    "erfinv": erfinv, "special_ndtri": ndtri,
    "lgamma": lgamma, "digamma": digamma, "polygamma": polygamma,
    "i0": bessel(0, scaled=False), "special_i0e": bessel(0, scaled=True),
    "special_i1": bessel(1, scaled=False), "special_i1e": bessel(1, scaled=True),
    "special_bessel_j0": bessel_j(0), "special_bessel_j1": bessel_j(1),
}  # fmt: skip
"""The ATen ops of this module, by name."""

FLOAT32_AND_FLOAT64_ONLY: dict[str, Handler] = {
    "special_bessel_y0": bessel_y(0), "special_bessel_y1": bessel_y(1),
    "special_modified_bessel_i0": bessel(0, False), "special_modified_bessel_i1": bessel(1, False),
    "special_modified_bessel_k0": bessel_k(0, False),
    "special_modified_bessel_k1": bessel_k(1, False),
    "special_scaled_modified_bessel_k0": bessel_k(0, True),
    "special_scaled_modified_bessel_k1": bessel_k(1, True),
}  # fmt: skip
"""The ops of this module torch has no half-precision kernel of (`without_halves`)."""
HANDLERS.update({name: without_halves(name, h) for name, h in FLOAT32_AND_FLOAT64_ONLY.items()})
