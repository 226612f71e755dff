"""What a domain analysis finds (`dvm.passes.domain`): a kernel's domain, where each
value is placed in it, and the strided views through which the kernel reads its
inputs and writes its outputs."""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy
from xdsl.ir import SSAValue

Axes = tuple[int, ...]
"""The domain axes one dim of a value spans, outermost first (empty: a unit dim)."""
Placement = tuple[Axes, ...]


@dataclass
class StridedView:
    """How a kernel reads or writes a buffer: element strides per domain axis."""

    value: SSAValue
    """The buffer: an input of the kernel, or a value the kernel outputs."""
    strides: tuple[sympy.Expr, ...]
    """One stride per domain axis; 0 where the buffer does not span the axis."""
    target: SSAValue
    """The value read or written: for an input read through layout ops, the
    last of them (for a store, the output itself)."""
    placement: Placement
    """The domain axes each dim of `target` spans."""
    matmul_operand: bool = False
    """Read in the matmul's own coordinates (batch..., rows, cols)."""
    offset: sympy.Expr = field(default_factory=lambda: sympy.Integer(0))
    """The element of the buffer where the view starts (moved by slices)."""


@dataclass
class TakeView:
    """How a kernel reads a take's source: `view` spans the result's axes (stride 0
    along those of the indices), and the indexed dim is read `stride` apart, `size`
    elements of it (an index must be below it)."""

    view: StridedView
    stride: sympy.Expr
    size: sympy.Expr


@dataclass
class Domain:
    """The result of a successful analysis."""

    sizes: list[sympy.Expr] = field(default_factory=list)
    reduced: frozenset[int] = frozenset()
    contraction: int | None = None
    """The matmul's K axis in a cube or mix kernel (not an output axis)."""
    placement: dict[SSAValue, Placement] = field(default_factory=dict)
    loads: list[StridedView] = field(default_factory=list)
    stores: list[StridedView] = field(default_factory=list)
    takes: dict[SSAValue, TakeView] = field(default_factory=dict)
    """Each take's result: the view its source is read through."""

    @property
    def parallel(self) -> list[int]:
        return [
            a for a in range(len(self.sizes)) if a not in self.reduced and a != self.contraction
        ]
