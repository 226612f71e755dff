"""Floats narrower than f32 (f16, bf16): sums, products and matmuls computed in f32.

numpy has no f16 BLAS (its f16 matmul is a loop in C, about 175 times
slower than f32's), and its f16 arithmetic converts every operand in
software. The VM's f16 `mma` therefore widens its operands to f32, multiplies
by BLAS and rounds the product once; `reduce` sums and multiplies f16 in f32
and rounds once (numpy's own f16 sum over an outer axis rounds every partial
sum to f16). Both are the reference's f16 semantics (`dvm.numerics`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dvm.numerics import is_bfloat16

F32 = np.dtype(np.float32)
F16 = np.dtype(np.float16)

_F16_TO_F32 = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32)
"""Every f16 value, by its bits, in f32 (exact): a gather from this 256 KiB table, which
stays in cache, widens an f16 array faster than numpy's conversion, which computes
each value."""
_F16_TO_F32.flags.writeable = False


def widened(dtype: np.dtype) -> np.dtype | None:
    """The type a float narrower than f32 accumulates sums and products and computes
    matmuls in (f32), rounding once at the end; None for the others."""
    return F32 if dtype == F16 or is_bfloat16(dtype) else None


def widen_into(out: np.ndarray, x: np.ndarray) -> None:
    """out (f32) = x (f16 or bf16, any layout), exactly."""
    if x.dtype == F16:
        np.take(_F16_TO_F32, x.view(np.uint16), out=out, mode="wrap")
    else:
        np.copyto(out, x)


def mma_widened(
    a: np.ndarray, b: np.ndarray, out: np.ndarray, acc: bool, scratch: np.ndarray
) -> None:
    """out (+)= a @ b for a float narrower than f32: the operands widened into the flat f32
    `scratch` (a.size + b.size + out.size elements, or more), multiplied by BLAS, the
    accumulator added in f32, and the result rounded once into out."""
    n_a, n_b = a.size, b.size
    wide_a = scratch[:n_a].reshape(a.shape)
    wide_b = scratch[n_a : n_a + n_b].reshape(b.shape)
    product = scratch[n_a + n_b : n_a + n_b + out.size].reshape(out.shape)
    widen_into(wide_a, a)
    widen_into(wide_b, b)
    np.matmul(wide_a, wide_b, out=product)
    if acc:
        np.add(product, out, out=product)
    np.copyto(out, product, casting="same_kind")


def reduce_widened(
    uf: Any,
    src: np.ndarray,
    axis: tuple[int, ...],
    keep: bool,
    initial: Any,
    out: np.ndarray,
    acc: np.ndarray,
) -> None:
    """out = the sum (or product) of src over `axis`, accumulated in `acc` (f32, of out's
    shape) and rounded once into out."""
    uf.reduce(src, axis=axis, dtype=acc.dtype, out=acc, keepdims=keep, initial=initial)
    np.copyto(out, acc, casting="same_kind")
