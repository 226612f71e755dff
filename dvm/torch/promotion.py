"""torch's type promotion for the operands of a binary op, where numpy's differs.

numpy computes an int32 tensor divided by a float16 one in float64 and an int16
times a bfloat16 in float32; torch casts the integer tensor to the float's dtype
first, then computes (a half's op in float32, rounded once). The result, cast to
torch's dtype at the end, then differs: `int32(2**31 - 1) / float16(65504)` is inf in
torch (the int is inf as a float16) and 32800 by numpy's promotion; `int16(257) *
bfloat16(3)` is 768 in torch (257 is 256 as a bfloat16) and 772 by numpy's. So the
tensors are cast to the dtype torch computes in before numpy's function.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from dvm.lazy import LazyArray
from dvm.numerics import is_float_dtype, working_dtype
from dvm.torch.convert import DTYPES, to_torch


def torch_promoted(a: Any, b: Any, scalar_in_opmath: bool = False) -> tuple[Any, Any]:
    """`a` and `b` with each tensor in the dtype torch computes their op in, from its
    `result_type` (a 0-d tensor or a Python number counts only where its category is
    higher: an int tensor with a Python float makes float32, an int8 tensor with a 0-d
    int64 one int8). An integer result: every tensor in it (`int8(44) == tensor(300)`
    is true, 300 being 44 as an int8). A float one: integer and bool tensors in it,
    and a 0-d float tensor of another dtype too (a 0-d float32 beside a half tensor is
    rounded to a half first, as eager's `add` and `fmod` do), or with
    `scalar_in_opmath`, as the second operand, in the dtype the op computes in (float32
    for a half: eager's `mul` and `div` read such a 0-d tensor as a float32 there, and
    round it to the half as the first). Operands that are neither tensors nor Python
    numbers stay as they are."""
    if not any(isinstance(x, LazyArray) for x in (a, b)):
        return a, b
    stand_ins = [stand_in(x) for x in (a, b)]
    if stand_ins[0] is None or stand_ins[1] is None:
        return a, b
    result = DTYPES[torch.result_type(stand_ins[0], stand_ins[1])]

    def cast(x: Any, in_opmath: bool) -> Any:
        if not isinstance(x, LazyArray) or x.dtype == result:
            return x
        opmath = in_opmath and is_float_dtype(result) and is_float_dtype(x.dtype)
        return x.astype(working_dtype(result) if opmath else result)

    return cast(a, False), cast(b, scalar_in_opmath)


def stand_in(x: Any) -> Any:
    """What `torch.result_type` takes for `x`: an empty tensor of its dtype (0-d for a
    0-d one) or the Python number; None for anything else."""
    if isinstance(x, LazyArray):
        try:
            return to_torch(np.empty((0,) if x.ndim else (), x.dtype))
        except TypeError:  # (a dtype torch has not)
            return None
    if type(x) in (bool, int, float) or isinstance(x, np.bool_):
        return bool(x) if isinstance(x, np.bool_) else x
    return None
