"""Bessel functions of ATen, written as `aten_special`'s special functions are: in
float64, rounded once to the result's dtype, with Chebyshev interpolants fitted to
mpmath at first use.

The modified Bessel functions `i0` and `i1`, and `i0e` and `i1e` (scaled by
`exp(-|x|)`), are their power series up to |x| = 8 (positive terms: no digit lost),
and beyond, `exp(|x|) / sqrt(|x|)` times an interpolant of 1/|x| fitted as erfc's are.
The Bessel functions `special_bessel_j0` and `special_bessel_j1` are, up to 8, an
interpolant of x^2 times the factors of their zeros, and beyond, their asymptotic form
with amplitudes fitted likewise; `special_bessel_y0` and `special_bessel_y1` are, up to
8, `(2/pi) ln(x/2) J_n(x)` (less `2/(pi x)` for Y1) and an interpolant, and beyond, the
same asymptotic form. `special_modified_bessel_k0` and `_k1` (and their scaled forms) are,
up to 1, `(-1)^(n+1) ln(x/2) I_n(x)` (plus 1/x for K1) and an interpolant, and beyond,
`sqrt(pi / (2x)) exp(-x)` times an interpolant of 1/x. `special_spherical_bessel_j0`,
sin(x)/x, is its series below 1/2 and the quotient beyond. `special_airy_ai` is, near 0,
an interpolant times the factors of its zeros, and beyond, its oscillating and decaying
asymptotic forms in zeta = (2/3) |x|^(3/2), taken in two floats so that a large phase
keeps its digits.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from functools import cache
from typing import Any, NamedTuple

import numpy as np

from dvm.lazy import LazyArray
from dvm.torch.aten import Handler, needs
from dvm.torch.aten_math import floats, narrowed
from dvm.torch.aten_special import (
    FLOAT64,
    Piece,
    constant,
    fitted,
    piecewise,
    precise,
    without_halves,
)

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
    def amplitudes(t: Any) -> tuple[Any, Any]:
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


SPHERICAL_TERMS = 9
"""Terms of sin(x)/x's series used below 1/2, `sum (-x^2)^k / (2k + 1)!`: the next is
below 5e-19."""


def spherical_bessel_j0(x: Any) -> Any:
    """`special_spherical_bessel_j0`, sin(x)/x: below |x| = 1/2 its series in x^2 (1 at
    0 and -0), beyond the quotient; 0 at the infinities and NaN at NaN, as eager's."""
    (x,), result = floats(x)
    x = narrowed(x, FLOAT64)
    square = x * x
    series: Any = constant((-1) ** (SPHERICAL_TERMS - 1) / math.factorial(2 * SPHERICAL_TERMS - 1))
    for k in reversed(range(SPHERICAL_TERMS - 1)):
        series = series * square + (-1) ** k / math.factorial(2 * k + 1)
    value = np.where(np.absolute(x) < 0.5, series, np.sin(x) / x)
    return narrowed(needs(np.where(np.isinf(x), 0.0, value)), result)


AIRY_NEGATIVE_CUT = 12 ** (2 / 3)
"""The |x| below 0 from which Ai takes its oscillating asymptotic form (zeta = 8)."""

AIRY_POSITIVE_CUT = 1.5 ** (2 / 3)
"""The x from which Ai takes its decaying asymptotic form (zeta = 1)."""

AIRY_MIDDLE = (-AIRY_NEGATIVE_CUT, -4.1, -2.9, -1.7, -0.5, 0.5, AIRY_POSITIVE_CUT)
"""The pieces of x over which Ai divided by the factors of its two zeros there is
interpolated."""

TWO_THIRDS_REST = float(Fraction(2, 3) - Fraction(2 / 3))
"""2/3 less its float64."""

SPLITTER = 2.0**27 + 1
"""Veltkamp's constant: `SPLITTER * v` splits a float64 v into two halves of 26 bits,
whose products are exact."""


class Airy(NamedTuple):
    """The fits of `airy_fits`: Ai's zeros in the middle, each as a float64 and the rest
    of its value; the middle's pieces; the amplitudes f and g of the oscillating form
    and F of the decaying one, as functions of 1/zeta."""

    zeros: tuple[tuple[float, float], ...]
    middle: tuple[Piece, ...]
    sine: tuple[Piece, ...]
    cosine: tuple[Piece, ...]
    decay: tuple[Piece, ...]


@cache
def airy_fits() -> Airy:
    """For x in `AIRY_MIDDLE`, `Ai(x) / ((x - z1) (x - z2))` for its zeros z1, z2 there
    (entire, so that Ai keeps its relative precision near them). With zeta = (2/3)
    |x|^(3/2) and theta = zeta + pi/4: below the middle, f and g of `Ai(x) = (f sin(theta) -
    g cos(theta)) / (sqrt(pi) |x|^(1/4))` (as Bi's `f cos(theta) + g sin(theta)`), f
    tending to 1 and g to 0, as functions of 1/zeta on `BESSEL_CUTS`; above it, F of
    `Ai(x) = F exp(-zeta) / (2 sqrt(pi) x^(1/4))`, tending to 1, on `K_CUTS`. By mpmath
    to 40 digits."""
    context = precise()
    first, second = (context.airyaizero(k) for k in (1, 2))

    def reduced(x: Any) -> Any:
        return context.airyai(x) / ((x - first) * (x - second))

    def magnitude(t: Any) -> Any:
        """|x| at zeta = 1/t."""
        return (1.5 / context.mpf(t)) ** (context.mpf(2) / 3)

    @cache
    def amplitudes(t: Any) -> tuple[Any, Any]:
        """f and g at zeta = 1/t (both fits read the same nodes)."""
        if t == 0:
            return context.mpf(1), context.mpf(0)
        a = magnitude(t)
        theta = 1 / context.mpf(t) + context.pi / 4
        ai, bi = context.airyai(-a), context.airybi(-a)
        sine, cosine = context.sin(theta), context.cos(theta)
        scale = context.sqrt(context.pi) * a**0.25
        return scale * (ai * sine + bi * cosine), scale * (bi * sine - ai * cosine)

    def decay(t: Any) -> Any:
        if t == 0:
            return context.mpf(1)
        a = magnitude(t)
        scale = 2 * context.sqrt(context.pi) * a**0.25
        return context.airyai(a) * scale * context.exp(1 / context.mpf(t))

    oscillating = list(itertools.pairwise(BESSEL_CUTS))
    return Airy(
        zeros=tuple((float(z), float(z - float(z))) for z in (first, second)),
        middle=tuple(fitted(reduced, low, high) for low, high in itertools.pairwise(AIRY_MIDDLE)),
        sine=tuple(fitted(lambda t: amplitudes(t)[0], low, high) for low, high in oscillating),
        cosine=tuple(fitted(lambda t: amplitudes(t)[1], low, high) for low, high in oscillating),
        decay=tuple(fitted(decay, low, high) for low, high in itertools.pairwise(K_CUTS)),
    )


def split(v: Any) -> tuple[Any, Any]:
    """v as the sum of two floats of 26 bits each (Veltkamp's split)."""
    scaled = SPLITTER * v
    high = scaled - (scaled - v)
    return high, v - high


def exact_product(u: Any, v: Any) -> tuple[Any, Any]:
    """u v as a float64 and its rounding error (Dekker's product: exact)."""
    product = u * v
    (u_high, u_low), (v_high, v_low) = split(u), split(v)
    error = ((u_high * v_high - product) + u_high * v_low + u_low * v_high) + u_low * v_low
    return product, error


def airy_zeta(a: Any) -> tuple[Any, Any]:
    """zeta = (2/3) a^(3/2) as a float64 and a correction of it (twice float64's
    precision, so that the phase and the exponential of a large zeta keep their digits):
    `sqrt(a)` corrected by its residual, times a and two thirds, each product exact."""
    root = np.sqrt(a)
    square, square_error = exact_product(root, root)
    root_error = ((a - square) - square_error) / (2 * root)
    power, power_error = exact_product(a, root)
    power_error = power_error + a * root_error
    two_thirds = 2 / 3
    zeta, zeta_error = exact_product(power, two_thirds)
    zeta_error = zeta_error + two_thirds * power_error + power * TWO_THIRDS_REST
    high = zeta + zeta_error
    return high, zeta_error - (high - zeta)


def airy_ai(x: Any) -> Any:
    """`special_airy_ai` (`airy_fits`): on `AIRY_MIDDLE`, the interpolant times the factors
    of the two zeros (each in two floats); below, `airy_oscillating`; above,
    `airy_decaying`. NaN at the infinities and NaN, as eager's."""
    (x,), result = floats(x)
    x = narrowed(x, FLOAT64)
    fits = airy_fits()
    middle = piecewise(fits.middle, [x < cut for cut in AIRY_MIDDLE[1:-1]], [x] * len(fits.middle))
    for high, low in fits.zeros:
        middle = middle * (x - high - low)
    magnitude = needs(np.absolute(x))
    a = needs(np.minimum(magnitude, 1e100))  # (beyond, zeta's phase keeps no digit)
    zeta, zeta_error = airy_zeta(a)
    t = 1 / zeta
    oscillating = airy_oscillating(magnitude, zeta, zeta_error, t)
    value = np.where(x < 0, oscillating, airy_decaying(a, zeta, zeta_error, t))
    value = np.where((x > AIRY_MIDDLE[0]) & (x < AIRY_MIDDLE[-1]), middle, value)
    return narrowed(needs(np.where(np.isinf(x), math.nan, value)), result)


def airy_oscillating(a: Any, zeta: Any, zeta_error: Any, t: Any) -> Any:
    """Ai(-a) for a from `AIRY_NEGATIVE_CUT` on, `(f sin(theta) - g cos(theta)) /
    (sqrt(pi) a^(1/4))`: `sqrt(2) sin(theta)` is `sin(zeta) + cos(zeta)` and `sqrt(2)
    cos(theta)` is `cos(zeta) - sin(zeta)`, of zeta in two floats (`airy_zeta`; of a
    capped at 1e100, where the amplitude is still a's)."""
    fits = airy_fits()
    masks = [t < piece.high for piece in fits.sine[:-1]]
    f = piecewise(fits.sine, masks, [t] * len(fits.sine))
    g = piecewise(fits.cosine, masks, [t] * len(fits.cosine))
    sine = np.sin(zeta) * np.cos(zeta_error) + np.cos(zeta) * np.sin(zeta_error)
    cosine = np.cos(zeta) * np.cos(zeta_error) - np.sin(zeta) * np.sin(zeta_error)
    amplitude = math.sqrt(2 * math.pi) * np.sqrt(np.sqrt(a))
    return (f * (sine + cosine) - g * (cosine - sine)) / amplitude


def airy_decaying(a: Any, zeta: Any, zeta_error: Any, t: Any) -> Any:
    """Ai(a) for a from `AIRY_POSITIVE_CUT` on, `F exp(-zeta) / (2 sqrt(pi) a^(1/4))`.
    exp(-zeta) is subnormal from zeta = 708 on, so beyond 512 it is `exp(64 - zeta)`
    (exact in its argument there) and the product is scaled by exp(-64) last: Ai rounds
    once into the subnormals, as mpmath's value."""
    fits = airy_fits()
    masks = [t < piece.high for piece in fits.decay[:-1]]
    decay = piecewise(fits.decay, masks, [t] * len(fits.decay))
    shift = np.where(zeta >= 512, 64.0, 0.0)
    scaled = decay * np.exp(shift - zeta) * np.exp(-zeta_error)
    value = scaled / (2 * math.sqrt(math.pi) * np.sqrt(np.sqrt(a))) * np.exp(-shift)
    return np.where(zeta > 800, 0.0, value)  # (0 from x = 107 on; NaN stays)


HANDLERS: dict[str, Handler] = {
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
    "special_spherical_bessel_j0": spherical_bessel_j0, "special_airy_ai": airy_ai,
}  # fmt: skip
"""The ops of this module torch has no half-precision kernel of (`without_halves`)."""
HANDLERS.update({name: without_halves(name, h) for name, h in FLOAT32_AND_FLOAT64_ONLY.items()})
