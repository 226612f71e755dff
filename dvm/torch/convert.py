"""Tensors between torch and numpy without copies (CPU tensors; bf16 through a view
of its bits, since numpy has no bf16 of its own)."""

from __future__ import annotations

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


def to_numpy(tensor: torch.Tensor) -> np.ndarray[Any, Any]:
    """The tensor's memory as an array (detached: numpy sees no autograd)."""
    if tensor.requires_grad:  # (`detach` costs a new tensor object: only where needed)
        tensor = tensor.detach()
    if tensor.dtype == torch.bfloat16:
        return tensor.view(torch.int16).numpy().view(BF16)
    return tensor.numpy()


def to_torch(array: np.ndarray[Any, Any]) -> torch.Tensor:
    """The array's memory as a tensor."""
    if array.dtype == BF16:
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)
