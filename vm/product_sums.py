"""A float `mul` whose product only the `reduce sum` after it reads, run as one matmul.

`mul p, a, b` then `reduce s, p, sum, {axis}` makes two passes over the product
(and for an operand broadcast along the later axes, numpy's slow inner loop of a
few elements), where one BLAS call computes sum_k a[..k..] * b[..k..] directly:

- a sum over the last axis is a batch of row-times-column products,
  `a[..., None, :] @ b[..., :, None]`, or one matrix-vector product when an operand
  is a single row (a weighted row sum, a vector's squared norm);
- a sum over an axis before the last, when one operand `w` has extent 1 on every later
  axis, is `w^T @ x` per batch: `w` as (..., 1, K) times `x` as (..., K, rest).

Both executors run the pair so (`planned.Core.bind`, `unplanned.Launcher`) where the
instructions allow it (`product_sums`: f32 or f64, the product dead after the
reduce, on every path) and each tile's shapes do (`plan_for`: the reduced extent
the same in both operands, which must be of the product's rank for a middle axis);
anything else stays two instructions. The instructions and bytecode are unchanged:
this is how they run, as fused stores are. Only the order of the additions
differs from the two instructions', as it does for any sum BLAS computes
(`kernels.blas_row_sum`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from dvm.vm.isa import Cat, ExtentKind
from dvm.vm.program import Extent, Instr, Register, summed_product
from dvm.vm.static import NO_DESTINATION, Static, read_registers
from dvm.vm.validate import LoopInfo

ENABLED = True
"""Whether executors bound or generated from now on recognize the pattern (benchmarks
turn it off to measure the two instructions against one matmul)."""


def program_products(static: Static) -> dict[int, int]:
    """`product_sums` of the program, found once for both executors (kept in its
    `body_facts`)."""
    key = ("product sums", None)
    got = static.body_facts.get(key)
    if got is None:
        p = static.program
        got = static.body_facts[key] = product_sums(p.code, static.loops, p.registers)
    return got


def product_sums(
    code: Sequence[Instr], loops: LoopInfo, registers: Sequence[Register]
) -> dict[int, int]:
    """{k: k + 1} for each `mul` instruction k of the program that may run with the
    reduce after it as one matmul (each tile's shapes decide whether they do:
    `plan_for`): the pair is a `summed_product` and the product is dead after it."""
    if not ENABLED:
        return {}
    starts = {end: start for start, end in loops.end_of.items()}
    found: dict[int, int] = {}
    for k in range(len(code) - 1):
        mul, reduce = code[k], code[k + 1]
        if not summed_product(mul, reduce, registers):
            continue
        p = mul.operands[0]
        if reduce.operands[0] == p or not _read_first(code, k + 2, len(code), p, loops, starts):
            found[k] = k + 1  # (the reduce itself overwrites the product, or it is dead)
    return found


def _reads(ins: Instr, r: int) -> bool:
    """Whether `ins` reads register r: as an operand, or a dim of it in a SHAPE operand
    (whose extents the unplanned executor takes from the register's current array)."""
    if r in read_registers(ins):
        return True
    return any(
        type(e) is Extent and e.kind is ExtentKind.REG_DIM and e.index == r
        for operand in ins.operands
        if type(operand) is tuple
        for e in operand
    )


def _read_first(
    code: Sequence[Instr], lo: int, hi: int, r: int, loops: LoopInfo, starts: dict[int, int]
) -> bool:
    """Whether code[lo:hi] may read register r before writing it, on some path: a loop
    on the way may run no iteration (a read inside it counts, a write does not), and
    at the end of an enclosing loop the next iteration runs its body from the start."""
    j = lo
    while j < hi:
        ins = code[j]
        cat = ins.op.cat
        if cat is Cat.LOOP:
            end = loops.end_of[j]
            if any(_reads(x, r) for x in code[j + 1 : end]):
                return True
            j = end + 1
            continue
        if cat is Cat.ENDLOOP:  # (only past the end of the body we started in)
            if _read_first(code, starts[j] + 1, j, r, loops, starts):
                return True
            j += 1
            continue
        if _reads(ins, r):
            return True
        if cat not in NO_DESTINATION and ins.operands[0] == r:
            return False
        j += 1
    return False


class Plan(NamedTuple):
    """`np.matmul(first.reshape(first_shape), second.reshape(second_shape),
    out=out.reshape(out_shape))`, `swap` telling whether `first` is the mul's second
    operand."""

    swap: bool
    first_shape: tuple[int, ...]
    second_shape: tuple[int, ...]
    out_shape: tuple[int, ...]

    def factors(self, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The matmul's two operands from the mul's (views of contiguous arrays, else
        copies)."""
        first, second = (b, a) if self.swap else (a, b)
        return first.reshape(self.first_shape), second.reshape(self.second_shape)


def plan_for(a: tuple[int, ...], b: tuple[int, ...], axis: int) -> Plan | None:
    """How one matmul computes sum over `axis` of the product of operands of shapes
    `a` and `b` (numpy broadcasting), or None when none does. Memoized: a launch asks
    per tile."""
    key = (a, b, axis)
    if key in _PLANS:
        return _PLANS[key]
    got = _last_axis(a, b) if axis == max(len(a), len(b)) - 1 else _middle_axis(a, b, axis)
    if len(_PLANS) < 4096:
        _PLANS[key] = got
    return got


_PLANS: dict[tuple[tuple[int, ...], tuple[int, ...], int], Plan | None] = {}


def _last_axis(a: tuple[int, ...], b: tuple[int, ...]) -> Plan | None:
    """A sum over the last axis: a matrix-vector product when one operand is one row
    (the other holding every row of the result), else a batch of row-times-column
    products."""
    k = a[-1]
    if b[-1] != k:
        return None  # an operand broadcast along the summed axis
    if a == b and math.prod(a) != k:  # a tile times itself (a variance's), not one row
        rows = a[:-1]
        return Plan(False, (*rows, 1, k), (*rows, k, 1), (*rows, 1, 1))
    batch = _broadcast(a[:-1], b[:-1])
    if batch is None:
        return None
    rows = tuple(batch)
    for swap, (x, w) in ((False, (a, b)), (True, (b, a))):
        if math.prod(w) == k and x[:-1] == rows:
            return Plan(swap, x, (k,), rows)
    return Plan(False, (*a[:-1], 1, k), (*b[:-1], k, 1), (*rows, 1, 1))


def _middle_axis(a: tuple[int, ...], b: tuple[int, ...], axis: int) -> Plan | None:
    """A sum over an axis before the last, where an operand has extent 1 on every
    later axis: that one, a row per batch, times the other."""
    if len(a) != len(b) or a[axis] != b[axis]:
        return None
    k = a[axis]
    batch = _broadcast(a[:axis], b[:axis])
    if batch is None:
        return None
    for swap, (x, w) in ((False, (a, b)), (True, (b, a))):
        if all(n == 1 for n in w[axis + 1 :]):
            rest = math.prod(x[axis + 1 :])
            first = (*w[:axis], 1, k)
            return Plan(not swap, first, (*x[:axis], k, rest), (*batch, 1, rest))
    return None


def _broadcast(x: tuple[int, ...], y: tuple[int, ...]) -> list[int] | None:
    """numpy's broadcast of two shapes, or None."""
    if x == y:  # (a product of two tiles of one shape: most new shapes' case)
        return list(x)
    n = max(len(x), len(y))
    x, y = (1,) * (n - len(x)) + x, (1,) * (n - len(y)) + y
    out = []
    for i, j in zip(x, y, strict=True):
        if i != j and i != 1 and j != 1:
            return None
        out.append(j if i == 1 else i)
    return out


def product_sum_into(plan: Plan, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """out = the sum of a * b the plan describes. The operands' reshapes copy where
    they are not contiguous; `out`, a register, is C-contiguous (its reshape a view),
    or else written through a temporary."""
    first, second = plan.factors(a, b)
    if out.flags.c_contiguous:
        np.matmul(first, second, out=out.reshape(plan.out_shape))
    else:
        out[...] = np.matmul(first, second).reshape(out.shape)
