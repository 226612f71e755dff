"""Tolerances for float results that tests derive from the computation, not guess."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from dvm.dialects.elementwise import BY_OP_NAME


def sum_atol(x: np.ndarray, axis: int | Sequence[int], dtype: Any) -> float:
    """An absolute tolerance for the sums of `x` over `axis` computed in `dtype`: adding
    n terms in any order is off by at most (n - 1) * eps * sum(|x|) (the bound for
    recursive summation; a dot product's is the same over its products), here with the
    largest sum of magnitudes. A sum that cancels to near 0 has no relative accuracy,
    so a relative tolerance alone fails on it now and then."""
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    n = int(np.prod([x.shape[a] for a in axes]))
    if x.size == 0:
        return 0.0
    magnitude = float(np.abs(x.astype(np.float64)).sum(axis=axes).max(initial=0.0))
    return max(n - 1, 1) * float(np.finfo(dtype).eps) * magnitude


def matmul_atol(a: np.ndarray, b: np.ndarray, dtype: Any, extra_terms: int = 0) -> float:
    """An absolute tolerance for `a @ b` computed in `dtype` (batch dims broadcast), as
    `sum_atol` bounds a sum: each entry is a sum of K products, bounded by
    K * eps * (|a| @ |b|); `extra_terms` counts roundings after it (a bias added, an
    accumulation)."""
    k = a.shape[-1]
    if a.size == 0 or b.size == 0:
        return 0.0
    magnitude = float((np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))).max())
    return max(k + extra_terms, 1) * float(np.finfo(dtype).eps) * magnitude


def elementwise_tolerance(op: str, dtype: Any) -> float:
    """The rtol (and atol) for results of the elementwise op `op` in the float `dtype`
    against numpy's float64 result rounded to `dtype`: the op table's `ulps` epsilons
    of `dtype` (0, the same bits, for an op that rounds exactly)."""
    return BY_OP_NAME[op].ulps * float(ml_dtypes.finfo(dtype).eps)
