"""The numpy meaning of the tensor dialect's elementwise ops, one function per op class.

The reference interpreter computes the tensor ops with these functions, and the tile
interpreter the tile ops that mirror them, so both levels mean the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.ir import Operation

from dvm import numerics
from dvm.dialects import tensor
from dvm.numerics import Array

UNARY: dict[type[Operation], Callable[[Array], Any]] = {
    tensor.NegOp: np.negative,
    tensor.AbsOp: np.abs,
    tensor.ExpOp: np.exp,
    tensor.LogOp: np.log,
    tensor.SqrtOp: np.sqrt,
    tensor.RsqrtOp: numerics.rsqrt,
    tensor.ReciprocalOp: np.reciprocal,
    tensor.TanhOp: np.tanh,
    tensor.SigmoidOp: numerics.sigmoid,
    tensor.ErfOp: numerics.erf,
    tensor.FloorOp: np.floor,
    tensor.CeilOp: np.ceil,
    tensor.RoundOp: np.rint,  # ties to even
    tensor.TruncOp: np.trunc,
    tensor.LogicalNotOp: np.logical_not,
    tensor.IsFiniteOp: np.isfinite,
}

BINARY: dict[type[Operation], Callable[[Array, Array], Any]] = {
    tensor.AddOp: np.add,
    tensor.SubOp: np.subtract,
    tensor.MulOp: np.multiply,
    tensor.DivOp: numerics.divide,  # integers: toward zero, x / 0 == 0
    tensor.PowOp: np.power,
    tensor.MaxOp: np.maximum,  # NaN propagates
    tensor.MinOp: np.minimum,
    tensor.EqOp: np.equal,
    tensor.NeOp: np.not_equal,
    tensor.LtOp: np.less,
    tensor.LeOp: np.less_equal,
    tensor.GtOp: np.greater,
    tensor.GeOp: np.greater_equal,
    tensor.LogicalAndOp: np.logical_and,
    tensor.LogicalOrOp: np.logical_or,
}
