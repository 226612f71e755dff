"""The numpy meaning of the tensor dialect's elementwise ops, one function per op class.

Derived from the op table (`dialects/elementwise.py`). The reference interpreter computes
the tensor ops with these functions, and the tile interpreter the tile ops that mirror
them, so both levels mean the same.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdsl.ir import Operation

from dvm.dialects import tensor
from dvm.dialects.elementwise import ELEMENTWISE as ELEMENTWISE_SPECS

ELEMENTWISE: dict[type[Operation], Callable[..., Any]] = {
    tensor.ELEMENTWISE_OPS[spec.name]: spec.numpy_fn for spec in ELEMENTWISE_SPECS
}
"""Each elementwise op's numpy function, from the op table."""
