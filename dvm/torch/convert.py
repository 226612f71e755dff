"""Tensors between torch and numpy without copies (CPU tensors; bf16 through a view
of its bits, since numpy has no bf16 of its own; a complex tensor as its float pairs,
`torch.view_as_real`'s layout, since the dialect has no complex type)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
import torch

DTYPES: dict[torch.dtype, np.dtype[Any]] = {
    torch.bool: np.dtype(np.bool_),
    torch.int8: np.dtype(np.int8),
    torch.int16: np.dtype(np.int16),
    torch.int32: np.dtype(np.int32),
    torch.int64: np.dtype(np.int64),
    torch.uint8: np.dtype(np.uint8),
    torch.float16: np.dtype(np.float16),
    torch.bfloat16: np.dtype(ml_dtypes.bfloat16),
    torch.float32: np.dtype(np.float32),
    torch.float64: np.dtype(np.float64),
}
"""The torch dtypes the compiler computes on, as numpy dtypes."""

BF16 = np.dtype(ml_dtypes.bfloat16)

COMPLEX_PARTS: dict[torch.dtype, torch.dtype] = {
    torch.complex64: torch.float32,
    torch.complex128: torch.float64,
}
"""The complex dtypes computed on as pairs of floats, and the floats' dtype (complex32
has no pairs numpy computes on: it stays in torch)."""


@dataclass(frozen=True)
class Complex:
    """A complex tensor as the graph runner holds it: `pairs`, a float array (lazy, or
    a plan's numpy array) of the tensor's shape and a trailing dim of 2, (real, imag),
    as `torch.view_as_real` lays it out."""

    pairs: Any

    @property
    def ndim(self) -> int:
        return self.pairs.ndim - 1

    @property
    def shape(self) -> tuple[Any, ...]:
        return tuple(self.pairs.shape[:-1])


def to_numpy(tensor: torch.Tensor) -> np.ndarray[Any, Any]:
    """The tensor's memory as an array (detached: numpy sees no autograd)."""
    if tensor.requires_grad:  # (`detach` costs a new tensor object: only where needed)
        tensor = tensor.detach()
    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.int16).numpy().view(BF16)
    return tensor.numpy()


def to_pairs(tensor: torch.Tensor) -> np.ndarray[Any, Any]:
    """A complex tensor's memory as float pairs (a copy only where its conjugate bit
    is set: `view_as_real` reads resolved memory)."""
    if tensor.requires_grad:
        tensor = tensor.detach()
    return torch.view_as_real(tensor.resolve_conj()).numpy()


def from_pairs(array: np.ndarray[Any, Any]) -> torch.Tensor:
    """Float pairs as a complex tensor over their memory (a copy where the pairs are
    not laid out as `view_as_complex` reads them)."""
    pairs = torch.from_numpy(array)
    if pairs.stride(-1) != 1 or any(s % 2 for s in (*pairs.stride()[:-1], pairs.storage_offset())):
        pairs = pairs.contiguous()
    return torch.view_as_complex(pairs)


def to_torch(array: np.ndarray[Any, Any]) -> torch.Tensor:
    """The array's memory as a tensor."""
    if array.dtype == BF16:
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)
