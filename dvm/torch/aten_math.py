"""Elementwise ATen ops of more than one numpy call (see `aten`), with torch's results
at the edges: zeros of either sign, infinities, NaN.

`atan2` and `copysign` are the dialect's instructions on torch's dtypes (integers as
float32), and `signbit` is read through `copysign`; `hypot` scales by the
larger magnitude, so that no square overflows; `fmin` and `fmax` ignore a NaN
operand (numpy's, as `dvm.lazy` records them); `ldexp` is torch's `x * 2 ** e`;
`round` to `decimals` digits is torch's `rint(x * 10^d) / 10^d` (`rint(x / 10^-d) *
10^-d` for negative `d`); `diagonal` is a strided slice of the two dims flattened,
and `diagonal_scatter` (its backward) an insert into that slice. `pow` of integers
refuses the negative exponents numpy raises for (torch gives 0, or 1 and -1 of the
bases 1 and -1); `div` with a rounding mode divides integers by a divisor holding
no zero only (torch raises for one, so such a call runs in torch); `isnan` and
`isinf` of integers and bools are false; `exp2` of float32 computes in float64 (see
`exp2`).
Half-precision floats compute in float32 and round once, as torch's CPU kernels do,
but for a rounded division of two half tensors, rounded at each step as torch's
vector loop (`half_divide`).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from dvm.lazy import LazyArray, asarray
from dvm.lazy.record import extract_slice, insert_slice
from dvm.numerics import is_float_dtype, working_dtype
from dvm.torch.aten import (
    Handler,
    Unsupported,
    binary,
    dims,
    float_unary,
    held,
    in_range,
    lazy,
    named,
    narrowed,
    needs,
    number,
    operand,
    view,
    widened,
)
from dvm.torch.plan import BUILDING
from dvm.torch.promotion import torch_promoted
from dvm.torch.sizes import Quotient, specialized

FLOAT32 = np.dtype(np.float32)


def scaled_in_float32(function: np.ufunc) -> Handler:
    """`mul` or `div` (by a tensor or a number). A half tensor times or divided by a
    Python float is computed in float32, rounded once: torch's kernel reads the number
    as a float32 (its `opmath`), where numpy's promotion would round it to the half
    first (`x * 0.1` of a float16 was an ulp off for a third of the elements). A
    number divided by a half is left as it was: eager rounds it either way, by size.
    So is a 0-d float tensor: read as a float32 beside a half as the second operand,
    rounded to the half as the first (`torch_promoted`)."""
    in_opmath = binary(function, scalar_in_opmath=True)
    commutes = function is np.multiply

    def handler(a: Any, b: Any) -> Any:
        if isinstance(a, LazyArray) and type(b) is float:
            a = widened(a)
        elif commutes and isinstance(b, LazyArray) and type(a) is float:
            b = widened(b)
        return in_opmath(a, b)

    return handler


TRUE_DIVIDE = scaled_in_float32(np.true_divide)
MULTIPLY = scaled_in_float32(np.multiply)


def leaky_relu(x: Any, slope: float = 0.01) -> Any:
    """`x` where it is above 0, else `x * slope` (a half's in float32, as torch's)."""
    x = lazy(x)
    return needs(np.where(x > 0, x, narrowed(needs(widened(x) * slope), x.dtype)))


def floats(*xs: Any) -> tuple[list[LazyArray], np.dtype[Any]]:
    """The tensors `xs` in the dtype a float function of them computes in (integers and
    bools as torch's float32; halves in float32), and the dtype of the result. Two
    operands of which one is a float are first promoted as torch does: an integer
    beside a half is a half before the function (int32's maximum is inf there, as in
    eager). Two integers are each read as a float32, as torch's kernels read them."""
    tensors = [lazy(x) for x in xs]
    if len(tensors) == 2 and any(is_float_dtype(t.dtype) for t in tensors):
        tensors = list(torch_promoted(tensors[0], tensors[1]))
    result = np.result_type(*(t.dtype for t in tensors))
    result = result if is_float_dtype(result) else FLOAT32
    work = working_dtype(result)
    return [narrowed(t, work) for t in tensors], result


def atan2(y: Any, x: Any) -> Any:
    """The dialect's `atan2` (integers as float32, halves in float32)."""
    (y, x), result = floats(y, x)
    return narrowed(needs(np.arctan2(y, x)), result)


def copysign(a: Any, b: Any) -> Any:
    """The dialect's `copysign`: `|a|` with `b`'s sign bit (of -0.0 and NaN too); `b`
    a tensor or a number."""
    if isinstance(b, int | float) and not isinstance(b, bool):
        (a,), result = floats(a)
        return narrowed(needs(np.copysign(a, float(b))), result)
    (a, b), result = floats(a, b)
    return narrowed(needs(np.copysign(a, b)), result)


def signbit(x: Any) -> Any:
    """Whether the sign bit is set: read through `copysign` for floats (-0.0 and a
    negative NaN have it), `x < 0` for integers."""
    x = lazy(x)
    if x.dtype == np.bool_:
        raise Unsupported("signbit of bools")
    if not is_float_dtype(x.dtype):
        return needs(x < 0)
    wide = widened(x)
    return needs(np.copysign(1.0, wide) < 0)


def sign(x: Any) -> Any:
    """torch's `sign` of floats, its kernel's `(0 < x) - (x < 0)`: 0 for NaN and +0 for
    -0.0 (numpy's `sign` gives NaN, and bfloat16's -0.0)."""
    x = lazy(x)
    if not is_float_dtype(x.dtype):
        return needs(np.sign(x))
    return needs((x > 0).astype(x.dtype) - (x < 0).astype(x.dtype))


def hypot(a: Any, b: Any) -> Any:
    """`sqrt(a^2 + b^2)` as `big * sqrt(1 + (small / big)^2)`: 0 where both are zero,
    inf where either is infinite (a NaN beside it too), NaN where one is NaN."""
    (a, b), result = floats(a, b)
    a, b = np.absolute(a), np.absolute(b)
    big, small = np.maximum(a, b), np.minimum(a, b)
    ratio = small / big
    length = big * np.sqrt(1 + ratio * ratio)
    length = narrowed(needs(np.where(big == 0, 0, length)), big.dtype)
    length = narrowed(needs(np.where(np.isinf(a) | np.isinf(b), math.inf, length)), big.dtype)
    return narrowed(needs(length), result)


def nan_ignoring(function: np.ufunc) -> Handler:
    """`fmin`/`fmax`: minimum/maximum, the other operand where one is NaN. The operands
    in torch's dtype first: a 0-d uint8 255 beside an int8 tensor is -1 there."""

    def handler(a: Any, b: Any) -> Any:
        return needs(function(*torch_promoted(lazy(a), lazy(b))))

    return handler


def ldexp(x: Any, exponent: Any) -> Any:
    """torch's `mul(x, 2.0 ** exponent)` (an integer exponent gives powers of float32,
    an integer `x` is of the power's dtype), the product by torch's `mul` (a 0-d `x`
    beside a half power is rounded to it). The power is of the exponent's dtype, except
    for a 0-d exponent of another float dtype than a tensor `x`'s (`power_dtype`)."""
    x, exponent = lazy(x), lazy(exponent)
    if not is_float_dtype(exponent.dtype):
        exponent = exponent.astype(FLOAT32)
    if not is_float_dtype(x.dtype):
        x = x.astype(exponent.dtype)  # (the result's dtype)
    dtype = power_dtype(x, exponent)
    power = np.power(np.asarray(2.0, dtype), exponent.astype(dtype, copy=False))
    return MULTIPLY(x, power)


def power_dtype(x: LazyArray, exponent: LazyArray) -> np.dtype[Any]:
    """The dtype eager's `ldexp` takes 2 ** exponent in, measured over every pair of
    float dtypes: the exponent's, but for a 0-d exponent beside a tensor `x` of another
    dtype, float64's for a float64 `x` and at least float32's for a half `x` (a 0-d
    bfloat16 exponent of a float16 `x` gives no bfloat16 power)."""
    if exponent.ndim or not x.ndim or x.dtype == exponent.dtype:
        return exponent.dtype
    if x.dtype == np.float64:
        return x.dtype
    if x.dtype.itemsize == 2:
        return max(np.dtype(FLOAT32), exponent.dtype, key=lambda dtype: dtype.itemsize)
    return exponent.dtype


def round_decimals(x: Any, decimals: int = 0) -> Any:
    """`round` to `decimals` digits, with torch's operations in its order."""
    x = lazy(x)
    if not is_float_dtype(x.dtype):
        raise Unsupported("round with decimals of integers")
    wide = widened(x)
    scale = float(10 ** abs(decimals))  # (torch's float of the double pow(10, d))
    up = decimals >= 0
    rounded = np.rint(wide * scale) / scale if up else np.rint(wide / scale) * scale
    return narrowed(needs(rounded), x.dtype)


def rounding(x: Any, decimals: int = 0) -> Any:
    """`round` (`aten.round.default` and `aten.round.decimals`); of integers, a copy
    (torch raises for integers with decimals: `round_decimals` leaves them to it)."""
    if lazy(x).dtype.kind == "b":
        raise Unsupported("a rounding of bools")
    if decimals == 0:
        return needs(np.rint(lazy(x))) if is_float_dtype(lazy(x).dtype) else lazy(x).copy()
    return round_decimals(x, decimals)


class Diagonal(NamedTuple):
    """Where a diagonal lies: the dims' order that moves its two dims last, the tensor
    so moved, flattened over those two, and the slice of that flat dim it is."""

    order: tuple[int, ...]
    moved: LazyArray
    flat: LazyArray
    specs: list[Any]


def diagonal_of(x: LazyArray, offset: int, dim1: int, dim2: int) -> Diagonal:
    """The diagonal of dims `dim1` and `dim2` at `offset`: every `columns + 1`th
    element of the two dims flattened, from the first."""
    if x.ndim < 2:
        raise Unsupported("a diagonal of fewer than two dims")
    first, second = dims([dim1, dim2], x.ndim)
    if first == second:
        raise Unsupported("a diagonal of one dim twice")
    offset = specialized(offset)
    order = (*(d for d in range(x.ndim) if d not in (first, second)), first, second)
    moved = x.transpose(order)
    rows, columns = moved.shape[-2], moved.shape[-1]
    length = min(rows - max(-offset, 0), columns - max(offset, 0))
    if not length > 0:
        raise Unsupported("an empty diagonal")
    start = offset if offset >= 0 else -offset * columns
    flat = view(moved, [*moved.shape[:-2], rows * columns])
    specs: list[Any] = [None] * flat.ndim
    specs[-1] = (start, length, specialized(columns + 1))  # (a step is static)
    return Diagonal(order, moved, flat, specs)


def diagonal(x: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    """The diagonal as a last dim (a view of `x` when returned, as eager's)."""
    where = diagonal_of(lazy(x), offset, dim1, dim2)
    return LazyArray(extract_slice(where.flat._node, where.specs))


def diagonal_scatter(x: Any, source: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
    """`x` with its diagonal replaced by `source` (the backward of `diagonal`)."""
    x, source = lazy(x), lazy(source)
    if source.dtype != x.dtype:
        raise Unsupported("a diagonal_scatter of another dtype")
    where = diagonal_of(x, offset, dim1, dim2)
    written = LazyArray(insert_slice(where.flat._node, source._node, where.specs))
    inverse = tuple(int(d) for d in np.argsort(where.order))
    return view(written, where.moved.shape).transpose(inverse)


def divide(a: Any, b: Any, rounding_mode: str | None = None) -> Any:
    """`div` (`true_divide`), with a `rounding_mode` of floor (numpy's `floor_divide`,
    whose floats round as torch's do) or trunc. A float operand makes the quotient a
    float: integer tensors are cast to the float tensor's dtype (or torch's float32)
    first, as torch promotes them, so that no quotient is rounded twice."""
    if rounding_mode is None:
        return TRUE_DIVIDE(a, b)
    if rounding_mode not in ("floor", "trunc"):
        raise Unsupported(f"rounding mode {rounding_mode}")
    kinds = [x.dtype if isinstance(x, LazyArray) else type(operand(x)) for x in (a, b)]
    if np.dtype(np.bool_) in kinds or not any(isinstance(x, LazyArray) for x in (a, b)):
        raise Unsupported("a rounded division of bools")  # (torch raises for bools)
    floats = [k for k in kinds if isinstance(k, np.dtype) and is_float_dtype(k)]
    of_floats = bool(floats) or float in kinds or Quotient in kinds
    if not of_floats:
        nonzero_divisor(b)
    a, b = number(a, b), number(b, a)
    if not of_floats:
        if rounding_mode == "floor":
            return needs(np.floor_divide(a, b))
        return needs(np.floor_divide(a - np.fmod(a, b), b))  # (a - fmod(a, b) is exact)
    dtype = np.result_type(*floats) if floats else FLOAT32
    work = working_dtype(dtype)
    if work != dtype and all(isinstance(x, LazyArray) for x in (a, b)):
        return half_divide(a, b, rounding_mode, dtype)
    # (halves by a number: in float32, rounded once, as torch's loop with a scalar)
    a, b = (x.astype(work) if isinstance(x, LazyArray) else x for x in (a, b))
    if rounding_mode == "floor":
        return narrowed(needs(np.floor_divide(a, b)), dtype)
    return narrowed(needs(np.trunc(np.true_divide(a, b))), dtype)


def half_divide(a: Any, b: Any, rounding_mode: str, dtype: np.dtype[Any]) -> Any:
    """A rounded division of float16 or bfloat16 tensors as torch's vector loop computes
    it: each step in float32, rounded to the dtype (its scalar loop, which runs for a
    single element, rounds once: they differ by an ulp or two)."""

    def rounded(value: Any) -> LazyArray:
        return narrowed(narrowed(needs(value), dtype), FLOAT32)

    a, b = (
        rounded(x if isinstance(x, LazyArray) else asarray(np.asarray(x, dtype))) for x in (a, b)
    )
    quotient = rounded(a / b)
    if rounding_mode == "trunc":
        return narrowed(needs(np.trunc(quotient)), dtype)
    mod = rounded(np.fmod(a, b))
    div = rounded(rounded(a - mod) / b)
    signs_differ = (mod != 0) & ((b < 0) != (mod < 0))
    div = needs(np.where(signs_differ, rounded(div - 1), div))
    floor = needs(np.floor(div))
    floor = np.where(rounded(div - floor) > 0.5, rounded(floor + 1), floor)
    floor = np.where(div != 0, floor, np.copysign(0.0, quotient))
    return narrowed(needs(np.where(b == 0, quotient, floor)), dtype)


def nonzero_divisor(b: Any) -> None:
    """Refuses an integer divisor holding a zero, for which torch raises (the op then
    runs in torch, and raises). One of the call's is checked now and on each replay; a
    computed one is read (a sync point), and again on each replay before the program
    after it runs."""
    if not isinstance(b, LazyArray):
        if b == 0:
            raise Unsupported("an integer division by zero")
        return
    divisors = b._node.value
    if divisors is not None:
        nonzero = bool(divisors.all())
        if BUILDING:
            BUILDING[-1].check_nonzero(b)
    else:
        nonzero = held(needs(np.all(b != 0)))
    if not nonzero:
        raise Unsupported("an integer division by zero")


def modulo(floored: bool) -> Handler:
    """`remainder` (`floored`: the divisor's sign) or `fmod` (the dividend's) as torch
    computes them. Of integers, a zero divisor is refused (torch raises, numpy gives 0).
    Of floats, `remainder` is `fmod` moved into the divisor's sign by adding the divisor,
    so a zero keeps the dividend's sign (numpy's `remainder` gives it the divisor's)."""

    def handler(a: Any, b: Any) -> Any:
        kinds = [x.dtype if isinstance(x, LazyArray) else type(operand(x)) for x in (a, b)]
        of_floats = float in kinds or any(
            isinstance(k, np.dtype) and is_float_dtype(k) for k in kinds
        )
        if not of_floats:
            nonzero_divisor(b)
        a, b = number(in_range(operand(a), b), b), number(in_range(operand(b), a), a)
        a, b = torch_promoted(a, b)
        if not floored or not of_floats:
            return needs((np.remainder if floored else np.fmod)(a, b))
        mod = needs(np.fmod(a, b))
        return needs(np.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod))

    return handler


def power(base: Any, exponent: Any) -> Any:
    """`pow`; of integers only to a number >= 0: torch gives 0, or 1 and -1 of the bases
    1 and -1, for a negative integer power, where numpy raises."""
    if integral(base) and integral(exponent) and not (type(exponent) is int and exponent >= 0):
        raise Unsupported("an integer power by a tensor or by a negative number")
    return binary(np.power)(base, exponent)


def integral(x: Any) -> bool:
    """Whether `x` is an integer tensor or an int (not a bool)."""
    return x.dtype.kind in "iu" if isinstance(x, LazyArray) else type(x) is int


def exp2(x: Any) -> Any:
    """`2 ** x`, which `dvm.lazy` records as `exp(x ln 2)`: the rounding of `x ln 2`
    grows with |x| (4e-6 relative at 120 in float32), so float32 computes in float64."""
    (wide,), result = floats(x)
    if wide.dtype == FLOAT32:
        wide = needs(wide.astype(np.float64))
    return narrowed(needs(np.exp2(wide)), result)


GOLDEN_RATIO = (1 + math.sqrt(5)) / 2


def euclid_steps(dtype: np.dtype[Any]) -> int:
    """The most remainder steps Euclid's algorithm takes on numbers of `dtype`'s width:
    by Lame's theorem, the operands of n steps are at least the Fibonacci numbers
    F(n + 1) and F(n + 2), and F(n + 2) > golden ratio ** n (14 for 8 bits, 95 for 64)."""
    return math.ceil(8 * dtype.itemsize * math.log(2) / math.log(GOLDEN_RATIO)) + 2


def gcd(a: Any, b: Any) -> Any:
    """torch's `gcd` of integers: `abs` of both (wrapping at the minimum, as torch's),
    then Euclid's loop `a, b = b % a, a` while `a != 0`, with C's remainder. The loop
    runs its bound of steps, unrolled, each one elementwise: a zero `a` stays zero
    (the dialect's `fmod` by 0 is 0) and leaves `b` as it is. Both in torch's result
    dtype first: an int8 -128 with a uint8 is 128 in int16, not int8's wrapped -128."""
    a, b = lazy(a), lazy(b)
    if not (integral(a) and integral(b)):
        raise Unsupported("a gcd of other than integers")
    a, b = torch_promoted(a, b)
    a, b = needs(np.absolute(a)), needs(np.absolute(b))
    for _ in range(euclid_steps(np.result_type(a.dtype, b.dtype))):
        a, b = needs(np.fmod(b, a)), needs(np.where(a != 0, a, b))
    return b


def lcm(a: Any, b: Any) -> Any:
    """torch's `lcm`: `abs(a / gcd * b)`, and 0 where the gcd is. C computes 8- and
    16-bit integers in `int` (32 bits) and wraps the result back, so the sign of a
    product that overflows is dropped before it wraps, as there; wider ones wrap."""
    divisor = gcd(a, b)
    dtype = divisor.dtype
    work = np.dtype(np.int32) if dtype.itemsize < 4 else dtype
    a, b, divisor = (needs(lazy(x).astype(work, copy=False)) for x in (a, b, divisor))
    whole = needs(np.where(divisor != 0, divisor, 1).astype(work, copy=False))
    product = needs(np.absolute(needs(named("div")(a, whole) * b)))  # (an exact quotient)
    result = needs(np.where(divisor != 0, product, 0).astype(work, copy=False))
    return needs(result.astype(dtype, copy=False))


def nextafter(x: Any, y: Any) -> Any:
    """C's `nextafter`: the float of `x`'s dtype next to `x` toward `y` (`y` where they
    are equal, NaN where either is), by arithmetic, as the dialect has no bitcast.

    For |x| in [2^e, 2^(e+1)) the gap to the next float away from zero is 2^(e-p+1)
    (p the significand's bits) and toward zero the same, or half of it at |x| = 2^e;
    `d = 1.25 * 2^-p * |x|` lies strictly between half of either gap and one and a half
    of it, so `x +- d`, rounded to nearest, is `x` moved by the gap. Below 2^(emin+3)
    (emin the least normal exponent) the subnormal grid would round `d` itself onto a
    tie, so there the gaps are the spacing of the binade, chosen by comparisons.
    Halves compute in float32, where `x +- d` is exact, and round once."""
    import ml_dtypes  # (its finfo knows bfloat16; imported where a model needs it only)

    if not all(is_float_dtype(lazy(t).dtype) for t in (x, y)):
        raise Unsupported("a nextafter of other than floats")  # (torch raises)
    (x, y), dtype = floats(x, y)
    info, work = ml_dtypes.finfo(dtype), x.dtype.type
    magnitude = needs(np.absolute(x))
    up = y > x
    away = up == (x > 0)  # (from 0 too: its one gap is the tiniest float either way)
    binade = [work(2.0 ** (info.minexp + k)) for k in (1, 2)]  # (the spacing doubles)
    above = [needs(np.where(away, magnitude >= b, magnitude > b)) for b in binade]
    tiniest = float(info.smallest_subnormal)
    spacing = np.where(above[0], work(2 * tiniest), work(tiniest))
    spacing = np.where(above[1], work(4 * tiniest), spacing)
    relative = magnitude * work(1.25 * 2.0 ** -(info.nmant + 1))
    step = np.where(magnitude < work(2.0 ** (info.minexp + 3)), spacing, relative)
    moved = np.where(up, x + step, x - step)
    moved = np.where(x == 0, moved, np.copysign(moved, x))  # (-tiniest to 0 is -0.0)
    moved = np.where(np.isinf(x), np.copysign(work(info.max), x), moved)
    moved = np.where(x == y, y, moved)
    return narrowed(needs(np.where(np.isnan(x) | np.isnan(y), x + y, moved)), dtype)


def float_test(function: np.ufunc) -> Handler:
    """`isnan`, `isinf`: of floats by `function`, false for every integer or bool (which
    `dvm.lazy` records of floats only)."""

    def handler(x: Any) -> Any:
        x = lazy(x)
        return needs(function(x) if is_float_dtype(x.dtype) else x != x)

    return handler


HANDLERS: dict[str, Handler] = {
    "div": divide, "true_divide": divide, "mul": MULTIPLY,
    "leaky_relu": leaky_relu,
    "isnan": float_test(np.isnan), "isinf": float_test(np.isinf), "pow": power,
    "exp2": exp2, "log10": float_unary(np.log10),
    "atan2": atan2, "copysign": copysign, "signbit": signbit, "sign": sign, "hypot": hypot,
    "fmin": nan_ignoring(np.fmin), "fmax": nan_ignoring(np.fmax), "ldexp": ldexp,
    "round": rounding, "diagonal": diagonal, "diagonal_scatter": diagonal_scatter,
    "remainder": modulo(floored=True), "fmod": modulo(floored=False), "gcd": gcd, "lcm": lcm,
    "nextafter": nextafter,
}  # fmt: skip
"""The ATen ops of this module, by name."""
