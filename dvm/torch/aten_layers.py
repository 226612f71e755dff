"""ATen ops of `torch.nn` layers that torch's decompositions leave whole (see `aten`).

`_trilinear` (`nn.Bilinear`, and its own backward) is a product of its three
operands broadcast along the dims each is expanded at, summed over `sumdim`.
`_cdist_forward` (`torch.cdist`) is the p-norm of every pair of rows' differences,
or, where torch's kernel takes it (p = 2 past 25 rows, or when asked), the matrix
product form `|a|^2 - 2 a.b + |b|^2` with torch's own rounding; `_cdist_backward`
its gradient (every p). `triu_indices` and `tril_indices` are constants. `addmm`
computes halves in float32 and rounds once, as torch's kernel; `addmv` is one of a
vector, and `addbmm` one of the batches side by side: the sum of the products of
`a[i]` by `b[i]` is the product of the `a[i]` along the columns by the `b[i]` along
the rows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from dvm.lazy import LazyArray, asarray
from dvm.numerics import is_float_dtype
from dvm.torch.aten import (
    Handler,
    Unsupported,
    filled,
    lazy,
    narrowed,
    needs,
    reshaped,
    widened,
)
from dvm.torch.sizes import specialized


def trilinear(i1: Any, i2: Any, i3: Any, expand1: Sequence[int], expand2: Sequence[int],
              expand3: Sequence[int], sumdim: Sequence[int], unroll: int = 1) -> Any:  # fmt: skip
    """`_trilinear`: each operand with unit dims inserted at its `expand` dims, the
    three multiplied (broadcast) and summed over `sumdim` (half precision in float32,
    rounded once, as torch's matrix products)."""
    operands = [lazy(i) for i in (i1, i2, i3)]
    if any(not is_float_dtype(x.dtype) for x in operands):
        raise Unsupported("a trilinear product of integers")
    product: Any = None
    for x, expanded in zip(operands, (expand1, expand2, expand3), strict=True):
        spread = np.expand_dims(widened(x), tuple(sorted(specialized(d) for d in expanded)))
        product = spread if product is None else product * spread
    if sumdim:
        product = product.sum(axis=tuple(specialized(d) for d in sumdim))
    return narrowed(needs(product), operands[0].dtype)


def uses_matrix_product(p: float, mode: Any, rows: Sequence[Any]) -> bool:
    """Whether torch's kernel computes Euclidean distances as a matrix product: mode 1
    always, mode 0 (or None) past 25 rows of either operand (a size noted as a guard)."""
    if p != 2 or mode == 2:
        return False
    return mode == 1 or any(r > 25 for r in rows)


def cdist(x1: Any, x2: Any, p: float, compute_mode: Any = None) -> Any:
    """`_cdist_forward` of (..., P, M) and (..., R, M) rows: (..., P, R) distances."""
    x1, x2 = lazy(x1), lazy(x2)
    if not is_float_dtype(x1.dtype) or x1.dtype != x2.dtype or x1.ndim < 2 or p < 0:
        raise Unsupported("a cdist of integers, mixed dtypes or p < 0")
    if uses_matrix_product(p, compute_mode, (x1.shape[-2], x2.shape[-2])):
        return euclidean_by_product(x1, x2)
    differences = np.absolute(pairwise_differences(x1, x2))
    if p == 0:
        return needs((differences != 0).astype(x1.dtype).sum(axis=-1))
    if p == 1:
        return needs(differences.sum(axis=-1))
    if p == 2:
        return needs(np.sqrt((differences * differences).sum(axis=-1)))
    if math.isinf(p):
        return needs(differences.max(axis=-1))
    return needs(np.power(np.power(differences, p).sum(axis=-1), 1 / p))


def pairwise_differences(x1: LazyArray, x2: LazyArray) -> Any:
    """(..., P, R, M): each row of `x1` minus each row of `x2`."""
    return np.expand_dims(x1, -2) - np.expand_dims(x2, -3)


def euclidean_by_product(x1: LazyArray, x2: LazyArray) -> Any:
    """torch's `_euclidean_dist`: the rows extended by their squared norms and ones, so
    that one matrix product gives `|a|^2 - 2 a.b + |b|^2`, clamped at 0, its root."""
    norms1 = (x1 * x1).sum(axis=-1, keepdims=True)
    norms2 = (x2 * x2).sum(axis=-1, keepdims=True)
    ones1, ones2 = (filled(n.shape, 1, n.dtype) for n in (norms1, norms2))
    left = np.concatenate([x1 * -2, norms1, ones1], axis=-1)
    right = np.concatenate([x2, ones2, norms2], axis=-1)
    return needs(np.sqrt(np.maximum(left @ np.swapaxes(right, -1, -2), 0)))


def cdist_backward(grad: Any, x1: Any, x2: Any, p: float, distances: Any) -> Any:
    """`_cdist_backward`: the gradient of `x1` (the one of `x2` is this op with the
    operands swapped): each pair's gradient times the distance's derivative along
    their difference, summed over `x2`'s rows. p = 1, 2 and inf."""
    grad, x1, x2, distances = lazy(grad), lazy(x1), lazy(x2), lazy(distances)
    difference = pairwise_differences(x1, x2)
    pair_grad, distance = np.expand_dims(grad, -1), np.expand_dims(distances, -1)
    if p == 1:
        terms = np.sign(difference) * pair_grad
    elif p == 2:
        safe = np.where(distance == 0, 1, distance)
        terms = np.where(distance == 0, 0, difference * pair_grad / safe)
    elif math.isinf(p):
        largest = np.absolute(difference) == distance
        terms = np.sign(difference) * largest.astype(x1.dtype) * pair_grad
    elif p == 0:  # (a count of differing features: flat)
        return filled(x1.shape, 0, x1.dtype)
    else:
        terms = p_norm_terms(difference, pair_grad, distance, p)
    return needs(terms.sum(axis=-2))


def p_norm_terms(difference: Any, pair_grad: Any, distance: Any, p: float) -> Any:
    """Each pair's gradient along the difference for another p, torch's:
    `sign(d) |d|^(p-1) / dist^(p-1)` times the pair's gradient, 0 where the distance
    is 0 (and, for p < 1, where a feature's difference is)."""
    magnitude = np.absolute(difference)
    safe = np.where(distance == 0, 1, distance)
    terms = np.sign(difference) * np.power(magnitude, p - 1) / np.power(safe, p - 1) * pair_grad
    vanishing = distance == 0
    if p < 1:
        vanishing = vanishing | (magnitude == 0)
    return np.where(vanishing, 0, terms)


def triangle_indices(upper: bool) -> Handler:
    """`triu_indices` and `tril_indices` (DLRM's pairs of features): a constant of the
    module, whose sizes are fixed (a size of the call is specialized, noted as a guard)."""

    def handler(row: Any, col: Any, offset: int = 0, dtype: Any = None, **kwargs: Any) -> Any:
        if dtype not in (None, torch.int64, torch.int32):
            raise Unsupported(f"triangle indices of {dtype}")
        made = np.triu_indices if upper else np.tril_indices
        rows, cols = made(specialized(row), specialized(offset), specialized(col))
        kind = np.int32 if dtype == torch.int32 else np.int64
        return asarray(np.stack([rows, cols]).astype(kind))

    return handler


def addmm(bias: Any, a: Any, b: Any, beta: Any = 1, alpha: Any = 1) -> Any:
    """Halves in float32, rounded once, as torch's CPU kernel adds the bias to the
    product before it rounds; a `beta` of 0 ignores the bias (its NaNs too), and
    integers take `alpha` and `beta` as integers (0.6 as 0), as torch."""
    a = lazy(a)
    if not is_float_dtype(a.dtype):
        alpha, beta = int(alpha), int(beta)
    product = widened(a) @ widened(lazy(b))
    if alpha != 1:
        product = product * alpha
    if beta != 0:
        bias = widened(lazy(bias))
        product = product + (bias if beta == 1 else bias * beta)
    return narrowed(product, a.dtype)


def addbmm(bias: Any, a: Any, b: Any, beta: Any = 1, alpha: Any = 1) -> Any:
    """`bias * beta + alpha * sum_i a[i] @ b[i]` as one `addmm` (see the module doc)."""
    a, b = lazy(a), lazy(b)
    (batch, rows, inner), columns = a.shape, b.shape[2]
    side_by_side = reshaped(a.transpose(1, 0, 2), (rows, batch * inner))
    return addmm(bias, side_by_side, reshaped(b, (batch * inner, columns)), beta, alpha)


HANDLERS: dict[str, Handler] = {
    "addmm": addmm, "addmv": addmm, "addbmm": addbmm,
    "_trilinear": trilinear, "_cdist_forward": cdist, "_cdist_backward": cdist_backward,
    "triu_indices": triangle_indices(True), "tril_indices": triangle_indices(False),
}  # fmt: skip
"""The ATen ops of this module, by name."""
