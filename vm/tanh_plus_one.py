"""A float `tanh` that the `add` of 1 after it updates in place, run as a logistic.

`tanh r, a` then `add.rs r, r, #1.0` or `add.sr r, #1.0, r` (the tanh approximation
of GELU, `0.5 * x * (1 + tanh(u))`) computes `1 + tanh(a)`, which is
`2 / (1 + exp(-2a))`.
numpy's float32 `exp` costs about half its `tanh` per element, and the three cheap
passes around it (a multiply, an add, a divide) less than the rest (a (100, 1267) tile,
timed with `time.thread_time`: 263 us against 432 us for `tanh` and the `add`). The
logistic is also the more accurate of the two: `1 + tanh(a)` cancels for negative `a`
(in float32, relative errors up to 8e-6 for a in (-3, 0), and 0 for any a below -9,
where the logistic keeps every digit); elsewhere both are within an ulp.

Both executors run the pair so (`planned.Core.bind`, `unplanned.Launcher`) when the
add's result is not stored directly (a fused store keeps the two instructions), for
float32 and float64 registers, on tiles of LEAST elements or more (below, its two
extra numpy calls cost more than they save); the instructions and bytecode are
unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dvm.vm.isa import Cat, ScalarTag
from dvm.vm.program import Instr, Register
from dvm.vm.static import Static

ENABLED = True
"""Whether executors bound or generated from now on recognize the pair (benchmarks turn
it off to measure the two instructions against the logistic)."""

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def program_pairs(static: Static) -> dict[int, int]:
    """`tanh_plus_one_pairs` of the program, found once for both executors (kept in its
    `body_facts`)."""
    key = ("tanh plus one", None)
    got = static.body_facts.get(key)
    if got is None:
        p = static.program
        got = static.body_facts[key] = tanh_plus_one_pairs(p.code, p.registers)
    return got


def tanh_plus_one_pairs(code: Sequence[Instr], registers: Sequence[Register]) -> dict[int, int]:
    """{k: k + 1} for each float `tanh r, a` (code[k]) that `add.rs r, r, #1.0` (or
    `add.sr r, #1.0, r`) follows: r then holds 1 + tanh(a) either way, so nothing else
    reads the tanh alone."""
    if not ENABLED:
        return {}
    found: dict[int, int] = {}
    for k in range(len(code) - 1):
        tanh, add = code[k], code[k + 1]
        if tanh.op.cat is not Cat.UNARY or tanh.op.name != "tanh":
            continue
        if add.op.name == "add.rs":
            d, src, one = add.operands
        elif add.op.name == "add.sr":  # (1 + tanh(a): the scalar written first)
            d, one, src = add.operands
        else:
            continue
        r = tanh.operands[0]
        if (d, src) != (r, r) or one.tag is not ScalarTag.IMM or one.value != 1.0:
            continue
        if registers[r].dtype.np in _FLOATS:
            found[k] = k + 1
    return found


LEAST = 4096
"""The fewest elements of a tile for which the pair runs as the logistic: its four numpy
calls cost about two calls more than `tanh` and the `add` (GELU at 46 x 25, one tile of
1150 elements: 33 against 30 us a call; at 49 x 69, 3381 elements: 40 against 41 us)."""


def tanh_plus_one_into(a: np.ndarray, out: np.ndarray) -> None:
    """out = 1 + tanh(a): as 2 / (1 + exp(-2a)) on LEAST elements or more (an overflow
    of the exp gives the limit, 0), else as the two instructions do (out may be a)."""
    one = out.dtype.type(1)
    if out.size < LEAST:
        np.tanh(a, out=out)
        np.add(out, one, out=out)
        return
    np.multiply(a, out.dtype.type(-2), out=out)
    np.exp(out, out=out)
    np.add(out, one, out=out)
    np.divide(out.dtype.type(2), out, out=out)
