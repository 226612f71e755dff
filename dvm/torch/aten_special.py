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
keep their digits far from 0; lgamma is its Taylor series between 1/2 and 5/2, which
keeps the relative digits near its zeros 1 and 2. `polygamma` of order 1 is torch's
trigamma, step by step (its asymptotic series, and its reflection's sine, which gives
its values at the poles); orders 2 to 5 are Hurwitz's zeta, summed while the argument
is below 16 and then by Euler-Maclaurin, with the reflection below 0.
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


@cache
def chebyshev_powers() -> tuple[tuple[int, ...], ...]:
    """The coefficients of the Chebyshev polynomials T_0 ... T_DEGREE in powers of s
    (integers, by `T_(k+1) = 2 s T_k - T_(k-1)`)."""
    rows = [(1,), (0, 1)]
    for _ in range(2, DEGREE + 1):
        doubled, before = (0, *(2 * c for c in rows[-1])), rows[-2]
        rows.append(tuple(d - (before[i] if i < len(before) else 0) for i, d in enumerate(doubled)))
    return tuple(rows)


@cache
def chebyshev_nodes() -> tuple[tuple[Any, ...], tuple[tuple[Any, ...], ...]]:
    """The `2 DEGREE + 8` Chebyshev nodes `cos(theta_j)` on [-1, 1] at 40 digits, and
    `T_k` at each, `cos(k theta_j)`, for k up to `DEGREE` (the same for every fit)."""
    context = precise()
    count = 2 * DEGREE + 8
    angles = [context.pi * (j + context.mpf(0.5)) / count for j in range(count)]
    table = tuple(tuple(context.cos(k * angle) for angle in angles) for k in range(DEGREE + 1))
    return table[1], table


def fitted(function: Any, low: float, high: float) -> Piece:
    """The Chebyshev interpolant of `function` (of an mpmath number) on [low, high], as a
    `Piece`: its least-squares fit at `chebyshev_nodes`, whose coefficients the nodes'
    discrete orthogonality gives, and its coefficients in powers of s, each at 40 digits
    and rounded once. (numpy's float64 fit of the values left its highest coefficients
    at their rounding noise, 1e-15 of the function: 10 ulps on a piece.)"""
    nodes, table = chebyshev_nodes()
    values = [function(low + (node + 1) * (high - low) / 2) for node in nodes]
    series = [
        sum(v * t for v, t in zip(values, row, strict=True)) * (2 if k else 1) / len(nodes)
        for k, row in enumerate(table)
    ]
    powers = chebyshev_powers()
    coefficients = [
        float(sum(series[k] * powers[k][i] for k in range(i, DEGREE + 1)))
        for i in range(DEGREE + 1)
    ]
    return Piece(low, high, tuple(coefficients))


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
    """ln |Γ(x)|: +inf at 0, at the negative integers and at ±inf; NaN at NaN. Between
    1/2 and 5/2, around its zeros 1 and 2, the Taylor series of lgamma(2 + t)
    (`lgamma_taylor`), less ln(1 + t) for lgamma(1 + t): that keeps the digits of a small
    value, which the shifted Stirling series would lose to cancellation."""
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
    below = x < 1.5
    t = needs(np.where(below, x - 1, x - 2))  # (exact: |t| <= 1/2)
    series = power_series(lgamma_taylor(), t)
    taylor = np.where(below, series - np.log1p(t), series)
    value = np.where((x >= 0.5) & (x <= 2.5), taylor, value)
    return narrowed(needs(np.where(np.isinf(x), math.inf, value)), result)


@cache
def lgamma_taylor() -> tuple[float, ...]:
    """lgamma(2 + t) in powers t, t^2, ... (lgamma(1 + t) + ln(1 + t)):
    `(1 - euler) t + sum (-1)^k (zeta(k) - 1) t^k / k`. Its terms shrink as 4^-k / k for
    |t| <= 1/2: the 30th is below 1e-18 of the first."""
    context = precise()
    rest = [(-1) ** k * (context.zeta(k) - 1) / k for k in range(2, 31)]
    return tuple(float(c) for c in (1 - context.euler, *rest))


def power_series(coefficients: Sequence[float], t: Any) -> Any:
    """`c0 t + c1 t^2 + ...`, by Horner's rule."""
    total: Any = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        total = total * t + c
    return total * t


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
}  # fmt: skip
"""The ATen ops of this module, by name."""
