"""numpy implementations of the tensor ops whose meaning needs more than one numpy call.

Plain numpy in, plain numpy out, no xDSL: the reference interpreter uses these,
and every lower level (tile interpreter, VM) must agree with them. Each
function keeps its input's dtype and prints no numpy warnings.

Semantics chosen here, and why:

- integer `divide` rounds toward zero (as `arith.divsi` and C do, not numpy's
  floor), and a zero divisor gives 0 instead of undefined behaviour, so every
  level can produce the same bits; `remainder` takes the dividend's sign and is
  0 for a zero divisor;
- float -> integer `convert` truncates toward zero and saturates at the
  integer type's range, NaN giving 0 (numpy's own cast is platform-defined);
- conversions to a float type round to nearest, ties to even, once (bf16 by
  `ml_dtypes`, whose casts from every type round once); integer narrowing
  wraps around (keeps the low bits), as numpy and C do;
- f16 and bf16 sums, products, means and matmuls accumulate in f32 and round
  once;
- a reduction over an empty axis gives its identity (`reduction_identity`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, Literal

import numpy as np

Array = np.ndarray[Any, np.dtype[Any]]
"""What `numpy.typing.NDArray[Any]` names, without importing `numpy.typing` (a compile
cache hit imports this module, and no other of numpy's typing)."""
ReduceKind = Literal["sum", "mean", "max", "min", "prod"]

# --------------------------------------------------------------------------
# Precision helpers
# --------------------------------------------------------------------------


@cache
def bfloat16() -> np.dtype[Any]:
    """bf16, which numpy lacks: `ml_dtypes`' bfloat16 (its numpy kind is 'V', not 'f').
    Imported at the first use: importing `ml_dtypes` takes most of a second, and only
    programs on bf16 need it."""
    import ml_dtypes

    return np.dtype(ml_dtypes.bfloat16)


def is_bfloat16(dtype: np.dtype[Any] | type[Any]) -> bool:
    """Whether `dtype` is bf16, without importing `ml_dtypes` when it is not loaded (then
    no array can be bf16)."""
    return "ml_dtypes" in sys.modules and dtype == bfloat16()


def is_float_dtype(dtype: np.dtype[Any]) -> bool:
    """Whether `dtype` is a float type: numpy's, or bf16."""
    return dtype.kind == "f" or is_bfloat16(dtype)


def working_dtype(dtype: np.dtype[Any]) -> np.dtype[Any]:
    """The dtype to compute in: f16 and bf16 go through f32 so that they are rounded
    only once."""
    return np.dtype(np.float32) if dtype == np.float16 or is_bfloat16(dtype) else dtype


# --------------------------------------------------------------------------
# Elementwise functions numpy lacks
# --------------------------------------------------------------------------

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_ERF_TAYLOR = [(-1) ** k / (math.factorial(k) * (2 * k + 1)) for k in range(22)]
"""erf(a) = 2/sqrt(pi) * a * sum_k c_k a^(2k); alternating, but tame for a < 1."""
_ERFC_BANDS = ((1.0, 2.0, 200), (2.0, 6.0, 60))
"""(low, high, depth): the continued fraction for erfc converges slower near 1."""


def erf(x: Array) -> Array:
    """The error function, elementwise, to about 1.5 ulp in float64.

    |x| < 1: Taylor series (Horner form). 1 <= |x| < 6: erf = 1 - erfc, with erfc
    from its continued fraction. |x| >= 6: +-1, since erfc(6) < 2**-55.
    Computed in float64 and rounded once to x's dtype.
    """
    x64 = np.asarray(x, dtype=np.float64)
    a = np.abs(x64)
    out = np.ones_like(a)
    small = a < 1.0
    out[small] = _erf_taylor(a[small])
    for low, high, depth in _ERFC_BANDS:
        band = (a >= low) & (a < high)
        out[band] = 1.0 - _erfc_continued_fraction(a[band], depth)
    out[np.isnan(a)] = np.nan
    return np.copysign(out, x64).astype(np.asarray(x).dtype)


def _erf_taylor(a: Array) -> Array:
    a2 = a * a
    poly = np.full_like(a, _ERF_TAYLOR[-1])
    for c in reversed(_ERF_TAYLOR[:-1]):
        poly = poly * a2 + c
    return _TWO_OVER_SQRT_PI * (a * poly)


def _erfc_continued_fraction(a: Array, depth: int) -> Array:
    """erfc(a) = exp(-a^2)/sqrt(pi) / (a + (1/2)/(a + 1/(a + (3/2)/(a + ...)))), a > 0."""
    tail = np.zeros_like(a)
    for k in range(depth, 0, -1):
        tail = (0.5 * k) / (a + tail)
    return _exp_minus_square(a) / (math.sqrt(math.pi) * (a + tail))


def _exp_minus_square(a: Array) -> Array:
    """exp(-a*a) without the error of rounding a*a: split a = hi + lo with hi*hi exact."""
    mask = np.uint64(0xFFFF_FFFF_F800_0000)  # keep 26 significant bits
    hi = (a.view(np.uint64) & mask).view(np.float64)
    lo = a - hi
    return np.exp(-hi * hi) * np.exp(-lo * (a + hi))


def sigmoid(x: Array) -> Array:
    """1 / (1 + exp(-x)), written so that exp never overflows and small results keep precision."""
    w = x.astype(working_dtype(x.dtype))
    e = np.exp(-np.abs(w))
    out = np.where(w >= 0, 1 / (1 + e), e / (1 + e))
    return out.astype(x.dtype)


def rsqrt(x: Array) -> Array:
    """1 / sqrt(x), rounded once for f16."""
    w = x.astype(working_dtype(x.dtype))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.reciprocal(np.sqrt(w)).astype(x.dtype)


def power(a: Array, b: Array) -> Array:
    """`tensor.pow`: numpy's `a ** b` for floats; for integers, numpy's exact repeated
    squaring (wrapping around as multiplication does), and for a negative exponent
    `1 / a ** -b` rounded toward zero: 1 for a == 1, 1 or -1 (by b's parity) for
    a == -1, else 0 (0 ** -n too, as a zero divisor gives 0)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind != "i":  # floats, and unsigned integers (no negative exponent)
        return np.power(a, b)
    negative = b < 0
    powered = np.power(a, np.where(negative, 0, b).astype(b.dtype))
    one_over = np.where(a == 1, 1, np.where(a == -1, 1 - 2 * (b & 1), 0)).astype(a.dtype)
    return np.where(negative, one_over, powered)


def clamp(x: Array, low: Array, high: Array) -> Array:
    """`tensor.clamp`: numpy's `clip`, `min(max(x, low), high)`, NaN propagating."""
    return np.minimum(np.maximum(x, low), high)


# --------------------------------------------------------------------------
# Integer division family (a zero divisor gives 0)
# --------------------------------------------------------------------------


def divide(a: Array, b: Array) -> Array:
    """`tensor.div`: true division for floats; for integers, rounds toward zero
    and a zero divisor gives 0 (the minimum integer divided by -1 wraps)."""
    if is_float_dtype(np.asarray(a).dtype):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.true_divide(a, b)
    return _where_divisor(b, lambda safe: _trunc_div(a, safe))


def remainder(a: Array, b: Array) -> Array:
    """Integer remainder with the dividend's sign (C's `%`, `arith.remsi`); 0 for b == 0."""
    return _where_divisor(b, lambda safe: np.fmod(a, safe))


def floor_divide(a: Array, b: Array) -> Array:
    """Integer division rounding toward -inf (`arith.floordivsi`); 0 for b == 0."""
    return _where_divisor(b, lambda safe: np.floor_divide(a, safe))


def ceil_divide(a: Array, b: Array) -> Array:
    """Integer division rounding toward +inf (`arith.ceildivsi`); 0 for b == 0."""

    def ceil(safe: Array) -> Array:
        q = _trunc_div(a, safe)
        inexact = np.fmod(a, safe) != 0
        return q + (inexact & ((np.asarray(a) < 0) == (safe < 0))).astype(q.dtype)

    return _where_divisor(b, ceil)


def _trunc_div(a: Array, b: Array) -> Array:
    # a - fmod(a, b) is an exact multiple of b, so floor division is exact there;
    # it moves a toward zero, so it cannot overflow.
    return np.floor_divide(a - np.fmod(a, b), b)


def _where_divisor(b: Array, divide_by: Callable[[Array], Array]) -> Array:
    """`divide_by(b)` where b != 0, else 0; the zero lanes divide by 1 instead."""
    b = np.asarray(b)
    zero = b == 0
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        result = np.asarray(divide_by(np.where(zero, np.ones_like(b), b)))
    return np.where(zero, np.zeros_like(result), result)


# --------------------------------------------------------------------------
# Integers as `arith` reads them: two's complement bits of a fixed width
# --------------------------------------------------------------------------


def on_integers(fn: Callable[..., Any], unsigned: bool = False) -> Callable[..., Any]:
    """`fn` applied as an `arith` integer op applies: to the operands' bits read as
    signed integers of their width (as unsigned ones with `unsigned`), each result
    wrapping around to that width. `i1` (numpy bool) is a one-bit integer: true is
    -1 signed and 1 unsigned, and a result keeps its lowest bit."""

    def run(*args: Any) -> Array | tuple[Array, ...]:
        xs = [np.asarray(a) for a in args]
        dtype = xs[0].dtype
        if dtype == np.bool_:
            xs = [x.astype(np.uint8) if unsigned else -x.astype(np.int8) for x in xs]
        elif unsigned:
            xs = [as_unsigned(x) for x in xs]
        out = fn(*xs)
        if isinstance(out, tuple):
            return tuple(wrap_integer(np.asarray(o), dtype) for o in out)
        return wrap_integer(np.asarray(out), dtype)

    return run


def as_unsigned(x: Array) -> Array:
    """The bits of integer `x` read as an unsigned integer of the same width."""
    return x.view(f"u{x.dtype.itemsize}") if x.dtype.kind == "i" else x


def wrap_integer(x: Array, dtype: np.dtype[Any]) -> Array:
    """Integer `x` as integer type `dtype`: its low bits (modulo 2**width)."""
    if dtype == np.bool_:
        return (x & 1).astype(np.bool_)
    return x.astype(dtype, copy=False)


def shift_left(a: Array, b: Array) -> Array:
    """`a << b`, 0 when b (read as unsigned) is at least a's width."""
    amount = as_unsigned(b)
    beyond = amount >= 8 * a.dtype.itemsize
    return np.where(beyond, 0, np.left_shift(a, np.where(beyond, 0, amount).astype(a.dtype)))


def shift_right(a: Array, b: Array) -> Array:
    """`a >> b`, arithmetic for a signed `a`, logical for an unsigned one; b (read as
    unsigned) at least a's width shifts every bit out (leaving 0, or -1 for a
    negative signed `a`)."""
    amount = as_unsigned(b)
    width = 8 * a.dtype.itemsize
    shifted = np.right_shift(a, np.minimum(amount, width - 1).astype(a.dtype))
    return np.where((amount >= width) & (a.dtype.kind == "u"), 0, shifted)


def add_unsigned_extended(a: Any, b: Any) -> tuple[Array, Array]:
    """`arith.addui_extended`: the sum wrapped around, and whether it overflowed
    (read as unsigned)."""
    total = on_integers(np.add)(a, b)
    return total, as_unsigned(total) < as_unsigned(np.asarray(a))


def multiply_extended(a: Array, b: Array) -> tuple[Array, Array]:
    """The low and the high half of the full product of two integers of one width
    (`arith.mulsi_extended`; `mului_extended` through `on_integers(unsigned=True)`)."""
    width = 8 * a.dtype.itemsize
    product = a.astype(object) * b.astype(object)  # Python ints: exact
    mask = (1 << width) - 1
    unsigned = np.dtype(f"u{a.dtype.itemsize}")
    halves = [np.asarray(product & mask), np.asarray((product >> width) & mask)]
    return halves[0].astype(unsigned), halves[1].astype(unsigned)


# --------------------------------------------------------------------------
# `index` arithmetic on Python ints: what the ops above give on int64, quicker
# --------------------------------------------------------------------------


def wrap_index(value: int) -> int:
    """A Python int wrapped around as an int64 wraps it (`index` is 64 bits)."""
    return (value + 2**63) % 2**64 - 2**63


def _quotient_toward_zero(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


INDEX_ARITHMETIC: dict[str, Callable[[int, int], int]] = {
    "add": lambda a, b: wrap_index(a + b),
    "subtract": lambda a, b: wrap_index(a - b),
    "multiply": lambda a, b: wrap_index(a * b),
    "divide": lambda a, b: wrap_index(_quotient_toward_zero(a, b)) if b else 0,
    "remainder": lambda a, b: a - b * _quotient_toward_zero(a, b) if b else 0,
    "floor_divide": lambda a, b: wrap_index(a // b) if b else 0,
    "ceil_divide": lambda a, b: wrap_index(-(-a // b)) if b else 0,
    "maximum": max,
    "minimum": min,
}
"""The integer ops most frequent on `index` (sizes on the host), as Python int functions:
the same results as `on_integers` of `np.add`, `divide`, ... on int64, in a tenth of
the time (`tests/test_host_scalars.py` checks that they agree)."""


# --------------------------------------------------------------------------
# Element type conversion
# --------------------------------------------------------------------------


def convert(x: Array, dtype: np.dtype[Any] | type[Any]) -> Array:
    """`tensor.convert`: numpy `astype` (floats round to nearest even, integers wrap,
    nonzero is true), except that float -> integer truncates toward zero, saturates at
    the integer range and maps NaN to 0."""
    dtype = np.dtype(dtype)
    if is_float_dtype(x.dtype) and dtype.kind in "iu":
        return _float_to_int(x, dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        return x.astype(dtype)


def _float_to_int(x: Array, dtype: np.dtype[Any]) -> Array:
    info = np.iinfo(dtype)
    t = np.trunc(x.astype(np.float64))  # every f16/f32 value is exact in f64
    # compare with powers of two: info.max itself may not be exact in f64
    too_big = t >= 2.0 ** (info.bits - (1 if info.min < 0 else 0))
    too_small = t < float(info.min)
    inside = ~(too_big | too_small | np.isnan(t))
    out = np.where(inside, t, 0).astype(dtype)
    out[too_big] = info.max
    out[too_small] = info.min
    return out


# --------------------------------------------------------------------------
# Reductions
# --------------------------------------------------------------------------


def reduction_identity(kind: ReduceKind, dtype: np.dtype[Any]) -> Any:
    """What a reduction gives over an empty axis: its identity element
    (NaN for mean, which has none)."""
    dtype = np.dtype(dtype)
    if kind == "sum":
        return dtype.type(0)
    if kind == "prod":
        return dtype.type(1)
    if kind == "mean":
        return dtype.type(np.nan)
    if is_float_dtype(dtype):
        return dtype.type(-np.inf if kind == "max" else np.inf)
    info = np.iinfo(dtype)
    return dtype.type(info.min if kind == "max" else info.max)


def reduce(kind: ReduceKind, x: Array, axes: Sequence[int], keepdims: bool) -> Array:
    """`tensor.reduce_<kind>` over `axes`; result has x's dtype.

    Integer sums and products wrap around (they accumulate in x's own dtype).
    max/min propagate NaN, like `np.max`.
    """
    axis = tuple(axes)
    acc = working_dtype(x.dtype)
    if kind == "sum":
        out = np.sum(x, axis=axis, dtype=acc, keepdims=keepdims)
    elif kind == "prod":
        out = np.prod(x, axis=axis, dtype=acc, keepdims=keepdims)
    elif kind == "mean":
        out = _mean(x, axis, acc, keepdims)
    else:
        ufunc = np.maximum if kind == "max" else np.minimum
        initial = reduction_identity(kind, x.dtype)
        out = ufunc.reduce(x, axis=axis, keepdims=keepdims, initial=initial)
    return np.asarray(out).astype(x.dtype, copy=False)


def _mean(x: Array, axis: tuple[int, ...], acc: np.dtype[Any], keepdims: bool) -> Array:
    count = math.prod(x.shape[a] for a in axis)
    total = np.sum(x, axis=axis, dtype=acc, keepdims=keepdims)
    if count == 0:  # np.mean would warn "Mean of empty slice"
        return np.full_like(total, np.nan)
    return np.asarray(np.true_divide(total, count, dtype=acc))


# --------------------------------------------------------------------------
# Matmul
# --------------------------------------------------------------------------


def matmul(a: Array, b: Array, transpose_a: bool = False, transpose_b: bool = False) -> Array:
    """numpy `a @ b` (batch dims broadcast); a transpose flag swaps an operand's last two dims."""
    if transpose_a:
        a = np.swapaxes(a, -1, -2)
    if transpose_b:
        b = np.swapaxes(b, -1, -2)
    acc = working_dtype(a.dtype)
    return np.matmul(a.astype(acc, copy=False), b.astype(acc, copy=False)).astype(a.dtype)
