"""Tensors between torch and numpy without copies (CPU tensors; bf16 through a view
of its bits, since numpy has no bf16 of its own; a complex tensor as its float pairs,
`torch.view_as_real`'s layout, since the dialect has no complex type)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from dvm.numerics import bfloat16, is_bfloat16


class NumpyDtypes(Mapping[torch.dtype, np.dtype[Any]]):
    """torch dtypes to numpy's, bf16's looked up at its first use: importing
    `ml_dtypes`, where numpy's bf16 lives, takes most of a second, and most models
    never meet a bf16 tensor."""

    def __init__(self, plain: dict[torch.dtype, np.dtype[Any]]) -> None:
        self.plain = plain

    def __getitem__(self, dtype: torch.dtype) -> np.dtype[Any]:
        return bfloat16() if dtype == torch.bfloat16 else self.plain[dtype]

    def __contains__(self, dtype: object) -> bool:
        return dtype == torch.bfloat16 or dtype in self.plain

    def __iter__(self) -> Iterator[torch.dtype]:
        yield from self.plain
        yield torch.bfloat16

    def __len__(self) -> int:
        return len(self.plain) + 1


DTYPES = NumpyDtypes(
    {
        torch.bool: np.dtype(np.bool_),
        torch.int8: np.dtype(np.int8),
        torch.int16: np.dtype(np.int16),
        torch.int32: np.dtype(np.int32),
        torch.int64: np.dtype(np.int64),
        torch.uint8: np.dtype(np.uint8),
        torch.float16: np.dtype(np.float16),
        torch.float32: np.dtype(np.float32),
        torch.float64: np.dtype(np.float64),
    }
)
"""The torch dtypes the compiler computes on (these and bf16), as numpy dtypes."""

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
    try:
        if tensor.dtype == torch.bfloat16:
            return tensor.view(torch.int16).numpy().view(bfloat16())
        return tensor.numpy()
    except RuntimeError:  # (a zero tensor, as the backward of `sgn` makes, has no memory)
        return to_numpy(torch.zeros(tensor.shape, dtype=tensor.dtype))


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
    if pairs.numel() == 0:  # (numpy's strides of no elements may be any)
        pairs = torch.empty(pairs.shape, dtype=pairs.dtype)
    elif pairs.stride(-1) != 1 or any(
        s % 2 for s in (*pairs.stride()[:-1], pairs.storage_offset())
    ):
        pairs = pairs.contiguous()
    return torch.view_as_complex(pairs)


def to_torch(array: np.ndarray[Any, Any]) -> torch.Tensor:
    """The array's memory as a tensor."""
    if is_bfloat16(array.dtype):
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)
