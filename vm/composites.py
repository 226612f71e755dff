"""The kernels of elementwise instructions that are not one numpy ufunc.

The ISA table (`isa.py`) names each elementwise instruction's kernel: a numpy
ufunc where one computes it, else one of these (or `erf.erf`). A kernel is
called as `kernel(x, out=r)` or `kernel(a, b, out=r)` and writes its result,
of the operands' dtype, into `out`; a launch runs with numpy's float errors
off, so none raises.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np


@cache
def _one(dtype: np.dtype) -> np.ndarray:
    """1 as a 0-d array of a float dtype: a ufunc takes it faster than a Python number."""
    one = np.array(1, dtype)
    one.flags.writeable = False
    return one


def rsqrt(x: np.ndarray, out: np.ndarray) -> None:
    """1/sqrt(x) in two in-place passes (`reciprocal` is `1 / x`, without a scalar operand
    to convert)."""
    np.sqrt(x, out=out)
    np.reciprocal(out, out=out)


def sigmoid(x: np.ndarray, out: np.ndarray) -> None:
    """1/(1+exp(-x)) in four in-place passes (exp overflow gives 0, not an error)."""
    np.negative(x, out=out)
    np.exp(out, out=out)
    np.add(out, _one(out.dtype), out=out)
    np.reciprocal(out, out=out)


def int_div(a: Any, b: Any, out: np.ndarray) -> None:
    """Integer division rounding toward zero; x / 0 = 0."""
    a, b = np.asarray(a), np.asarray(b)
    q = np.floor_divide(a, b)
    fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
    np.copyto(out, q + fix, casting="unsafe")
    np.copyto(out, 0, where=b == 0)


def int_pow(a: Any, b: Any, out: np.ndarray) -> None:
    """Integer power, numpy's exact (wrapping) repeated squaring; a negative exponent
    gives 1/a**|b| rounded toward zero. Computed in out's type throughout: an unsigned
    64-bit power must not meet a signed value (numpy would promote both to f64)."""
    a, b = np.asarray(a), np.asarray(b)
    if b.dtype.kind == "u":
        np.power(a, b, out=out)
        return
    neg = b < 0
    inv = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0))
    inv = inv.astype(out.dtype)  # (before out is written: it may be a or b)
    np.power(a, np.where(neg, 0, b).astype(b.dtype), out=out)
    np.copyto(out, inv, where=neg)


def float_to_int(x: np.ndarray, out: np.ndarray) -> None:
    """out (an integer type) = x (a float type) truncated toward zero, saturated at the
    range of out's type, NaN giving 0 (numpy's own cast leaves these undefined): what
    `convert` from a float to an integer computes. The values are clipped in x's type
    and cast (a cast truncates); the values the clip cannot bring to out's range, NaN
    and, where out's maximum is not a float of x's type, the ones beyond it, are then
    set where they are, if any. A masked write costs tens of times a pass at half its
    elements set: none runs for values that need none."""
    if x.dtype.itemsize < 4:  # f16, bf16: the wider integer ranges overflow them
        x = x.astype(np.float32)
    low, high, beyond, largest = _saturation(x.dtype, out.dtype)
    np.copyto(out, np.clip(x, low, high), casting="unsafe")
    if beyond is not None:
        above = np.greater_equal(x, beyond)
        if above.any():
            np.copyto(out, largest, where=above)
    nan = np.isnan(x)
    if nan.any():
        np.copyto(out, 0, where=nan)


@cache
def _saturation(floats: np.dtype, integers: np.dtype) -> tuple[Any, Any, float | None, int]:
    """For `float_to_int` from `floats` to `integers`: the clip's bounds in `floats`
    (the minimum, 0 or -2**k, is exact), the value from which the integer maximum must
    be written over the cast (None where that maximum is itself a float of the type)
    and that maximum. Made once per pair (the VM converts tile by tile)."""
    info = np.iinfo(integers)
    ftype = floats.type
    top = 2.0 ** (info.bits - (1 if info.min < 0 else 0))  # just above the range, exact
    high = ftype(info.max)
    if float(high) == info.max:
        return ftype(info.min), high, None, info.max
    return ftype(info.min), np.nextafter(ftype(top), ftype(0)), top, info.max
