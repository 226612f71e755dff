"""erf, which numpy lacks, rounded once to the VM's float types.

f64: `math.erf` per element (correctly rounded but for rare last-bit cases).
f32: a piecewise polynomial evaluated in f64, rounded once to f32. On
[0, 4), cut into pieces of width 0.25, each piece is the Chebyshev
interpolant (of degree 9, in its own variable t in [-1, 1]) of `math.erf`
-- of erf(a)/a on the first piece, so that tiny arguments keep their
relative accuracy. Its relative error is about 1.3e-14, a 4-millionth of
an f32 ulp: the rounding to f32 agrees with the correctly rounded value
everywhere but within that distance of a rounding boundary (no point of a
dense grid of 2,000,001 on [-4.5, 4.5] differs). From 4 on, erf rounds to
1 in f32 (1 - erf(3.92) is below half an ulp of 1).
f16 and bf16: a table of all 65,536 values of the type, made with the f32 rule.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from dvm.numerics import is_bfloat16

WIDTH = 0.25
"""Each piece's width on |x|."""
PIECES = 16
"""Pieces on [0, 4); a last piece is the constant 1."""
DEGREE = 9


@cache
def _pieces() -> tuple[np.ndarray, np.ndarray]:
    """(coefficients, centres): per piece (one row each), its polynomial's coefficients
    in t = (|x| - centre) / (WIDTH / 2), constant term first; the rows are
    transposed (a column per degree), as the evaluation gathers one degree at a time."""
    from numpy.polynomial import chebyshev  # (here: importing it costs a process 6 ms)

    nodes = np.cos(np.pi * (np.arange(4 * DEGREE) + 0.5) / (4 * DEGREE))
    rows, centres = [], []
    for piece in range(PIECES):
        centre = (piece + 0.5) * WIDTH
        a = centre + nodes * (WIDTH / 2)
        values = np.array([math.erf(v) for v in a])
        if piece == 0:
            values /= a  # (no node is 0)
        rows.append(chebyshev.cheb2poly(chebyshev.chebfit(nodes, values, DEGREE)))
        centres.append(centre)
    rows.append(np.eye(1, DEGREE + 1)[0])  # from 4 on: 1
    centres.append(PIECES * WIDTH)
    return np.ascontiguousarray(np.array(rows).T), np.array(centres)


def erf_f64(x: np.ndarray) -> np.ndarray:
    """erf of an f16 or f32 array, in f64 (to about 1.3e-14, relative)."""
    coefficients, centres = _pieces()
    flat = x.reshape(-1)  # (a 0-d array's arithmetic would give numpy scalars)
    a = np.abs(flat, dtype=np.float64)
    np.minimum(a, PIECES * WIDTH, out=a)  # NaN stays NaN
    piece = np.fmin(a * (1 / WIDTH), PIECES).astype(np.intp)  # NaN: the last piece
    t = a - centres[piece]
    t *= 2 / WIDTH
    acc = coefficients[DEGREE][piece]
    for row in coefficients[DEGREE - 1 :: -1]:
        acc *= t
        acc += row[piece]
    np.multiply(acc, a, out=acc, where=piece == 0)  # the first piece holds erf(a)/a
    return np.copysign(acc, flat, out=acc).reshape(x.shape)


def sixteen_bits(dtype: np.dtype) -> bool:
    """Whether `dtype` is a float type whose every value a table holds."""
    return dtype == np.float16 or is_bfloat16(dtype)


@cache
def _table(dtype: np.dtype) -> np.ndarray:
    """erf of every value of a 16-bit float type, indexed by its bits."""
    every = np.arange(1 << 16, dtype=np.uint16).view(dtype)
    with np.errstate(invalid="ignore"):  # (signalling NaNs)
        table = erf_f64(every).astype(dtype)
    table.flags.writeable = False
    return table


def erf(x: np.ndarray, out: np.ndarray) -> None:
    """out = erf(x), rounded once to their dtype (the same one)."""
    if sixteen_bits(x.dtype):
        np.take(_table(x.dtype), x.view(np.uint16), out=out, mode="wrap")
    elif x.dtype == np.float32:
        np.copyto(out, erf_f64(x), casting="unsafe")
    else:
        np.copyto(out, np.vectorize(math.erf, otypes=[np.float64])(x), casting="unsafe")
