"""Slot expressions -> one plain Python function, built once per program.

A binary stores each slot as a postfix token list (`ExprOp`). The loader
turns the whole table into the source of a single function

    def slots(D, P, C):       # D: argument shapes, P: caller params, C: cores
        t0 = D[0][0]
        s0 = t0
        ...
        return (s0, s1, ...)

and compiles it with an empty `__builtins__`. The source is generated only
from validated integers and a fixed set of operators, so nothing in a binary
can become code. Each slot that may leave int64 is range-checked as soon as
it is computed, so values never grow past it (a chain of squarings cannot
blow up memory); which may is decided by interval arithmetic over the
leaves' ranges (a dim is in 0..2**63-1), which also drops a minimum or
maximum that the ranges decide and a division's test for a zero divisor
that cannot be 0.

A program met at only a few shapes is not worth the function: its slots are
interpreted (`SlotSteps`), from steps made once without generating code.
"""

# No `from __future__ import annotations` here: `typing.NamedTuple` compiles each field's
# annotation given as text when its class is made (docs/performance.md).
import operator
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import NamedTuple

from dvm.vm.generated import define
from dvm.vm.isa import ExprOp
from dvm.vm.program import Slot

I64_MIN, I64_MAX = -(2**63), 2**63 - 1

SlotFn = Callable[[Sequence[Sequence[int]], Sequence[int], int], "tuple[int, ...] | int"]
"""(shapes, params, cores) -> all slot values, or the index of the first slot out of
int64 range."""


_INFIX = {ExprOp.ADD: "+", ExprOp.SUB: "-", ExprOp.MUL: "*"}
_BY_NONZERO = {
    ExprOp.FLOORDIV: "({a} // {b})",
    ExprOp.CEILDIV: "(-(-{a} // {b}))",
    ExprOp.MOD: "({a} % {b})",
}
"""The division operators by a divisor that cannot be 0 (tile sizes, alignments)."""
_INLINE = {
    ExprOp.FLOORDIV: "({a} // {b} if {b} else 0)",
    ExprOp.CEILDIV: "(-(-{a} // {b}) if {b} else 0)",
    ExprOp.MOD: "({a} % {b} if {b} else 0)",
    ExprOp.MIN: "({a} if {a} <= {b} else {b})",
    ExprOp.MAX: "({a} if {a} >= {b} else {b})",
}
"""The other operators inline (x / 0 and x % 0 are 0; operands are leaves or
temporaries, cheap to repeat): a Python call per operator would cost more than the
arithmetic."""


Range = tuple["int | None", "int | None"]
"""The values an operand may take, known before any shape: its lowest and highest
(None: no bound)."""
DIM_RANGE: Range = (0, I64_MAX)
"""A dim (`argument_lines` checks it; a numpy array's always is)."""
UNKNOWN: Range = (None, None)


def _add(x: int | None, y: int | None) -> int | None:
    return None if x is None or y is None else x + y


def _neg(x: int | None) -> int | None:
    return None if x is None else -x


def _range(op: ExprOp, a: Range, b: Range) -> Range:
    """The values `a op b` may take, by interval arithmetic."""
    (al, ah), (bl, bh) = a, b
    if op is ExprOp.ADD:
        return _add(al, bl), _add(ah, bh)
    if op is ExprOp.SUB:
        return _add(al, _neg(bh)), _add(ah, _neg(bl))
    if op is ExprOp.MUL:
        if al is not None and ah is not None and bl is not None and bh is not None:
            products = [al * bl, al * bh, ah * bl, ah * bh]
            return min(products), max(products)
        if al is not None and bl is not None and al >= 0 and bl >= 0:
            return al * bl, None
        return UNKNOWN
    if op is ExprOp.MIN:
        highs = [h for h in (ah, bh) if h is not None]
        return (None if al is None or bl is None else min(al, bl)), min(highs, default=None)
    if op is ExprOp.MAX:
        lows = [lo for lo in (al, bl) if lo is not None]
        return max(lows, default=None), (None if ah is None or bh is None else max(ah, bh))
    if op is ExprOp.MOD:  # the divisor's sign, and smaller than it
        if bl is not None and bl >= 0:
            return 0, None if bh is None else max(bh - 1, 0)
        if bh is not None and bh <= 0:
            return (None if bl is None else min(bl + 1, 0)), 0
        return UNKNOWN if bl is None or bh is None else (bl + 1, bh - 1)
    return _quotient(op is ExprOp.CEILDIV, a, b)


def _quotient(ceiling: bool, a: Range, b: Range) -> Range:
    """The values of a floor or ceiling quotient `a / b`. By a divisor that is not
    negative they are extreme at the ends of both ranges (a divisor without a bound
    takes the quotient to 0, or to -1 or 1 by the rounding); by any other, it is no
    larger than `a`."""
    (al, ah), (bl, bh) = a, b
    if al is None or ah is None:
        nonneg = al is not None and bl is not None and al >= 0 and bl >= 0
        return (0, None) if nonneg else UNKNOWN
    if bl is None or bl < 0:
        m = max(abs(al), abs(ah))
        return -m, m
    values = [-(-x // y) if ceiling else x // y for x in (al, ah) for y in (max(bl, 1), bh) if y]
    if bh is None:
        values += [int(ceiling and x > 0) - int(not ceiling and x < 0) for x in (al, ah)]
    if bl == 0:
        values.append(0)
    return min(values), max(values)


def _decided(op: ExprOp, a: str, b: str, ra: Range, rb: Range) -> str | None:
    """The operand that `a op b` is whatever their values, by their ranges (a minimum
    of ranges that do not overlap, a product by 1, ...); None when the values decide."""
    (al, ah), (bl, bh) = ra, rb
    below = ah is not None and bl is not None and ah <= bl
    above = al is not None and bh is not None and al >= bh
    if op is ExprOp.MIN:
        return a if below else b if above else None
    if op is ExprOp.MAX:
        return a if above else b if below else None
    if rb == (1, 1) and op in (ExprOp.MUL, ExprOp.FLOORDIV, ExprOp.CEILDIV):
        return a
    if rb == (0, 0) and op in (ExprOp.ADD, ExprOp.SUB):
        return a
    if (ra == (1, 1) and op is ExprOp.MUL) or (ra == (0, 0) and op is ExprOp.ADD):
        return b
    return None


def _nonzero(r: Range) -> bool:
    return (r[0] is not None and r[0] > 0) or (r[1] is not None and r[1] < 0)


def _inside(r: Range) -> bool:
    """Whether every value in `r` is inside int64."""
    return r[0] is not None and r[1] is not None and r[0] >= I64_MIN and r[1] <= I64_MAX


def slots_source(slots: Sequence[Slot]) -> str:
    """Python source of the slot function (validated slots only)."""
    lines = ["def slots(D, P, C):", *slot_lines(slots, _TABLE_LEAVES)[0]]
    lines.append("    return (" + "".join(f"s{i}, " for i in range(len(slots))) + ")")
    return "\n".join(lines) + "\n"


class Leaves(NamedTuple):
    """How generated code names the leaves of slot expressions: a dim (argument, axis)
    and a caller param; `C` is always the cores."""

    dim: Callable[[int, int], str]
    param: Callable[[int], str]


_TABLE_LEAVES = Leaves(lambda i, j: f"D[{i}][{j}]", lambda k: f"P[{k}]")
LOCAL_LEAVES = Leaves(lambda i, j: f"d{i}_{j}", lambda k: f"p{k}")
"""The names `argument_lines` unpacks the shapes and params into."""


def slot_lines(
    slots: Sequence[Slot], leaves: Leaves, fail: Callable[[int], str] = "return {}".format
) -> tuple[list[str], list[Range]]:
    """Body lines (indented once) that compute every slot into `s0`, `s1`, ...; a slot
    that may leave int64 is checked at once (running `fail(i)` when it does), so later
    slots may rely on it. Also gives each slot's range, from which later checks know
    what they need not test (a slot that is never negative, ...)."""
    lines: list[str] = []
    n = 0
    named: dict[str, str] = {}
    """Each expression computed so far -> its temporary: slots repeat subexpressions (a
    tile size inside every later size), which are computed once."""
    ranges: dict[str, Range] = {"C": (1, I64_MAX)}
    """The range of each operand's value (the cores: a positive int)."""
    value_of: dict[int, str] = {}
    """Each slot's value as an operand (a leaf or temporary): a later slot reads that
    instead of `s<i>`, so that its subexpressions match those already computed."""
    for i, slot in enumerate(slots):
        stack: list[str] = []
        for t in slot.expr:
            if t.op is ExprOp.DIM:
                stack.append(leaves.dim(int(t.a), int(t.b)))
                ranges[stack[-1]] = DIM_RANGE
            elif t.op is ExprOp.CONST:
                stack.append(f"({int(t.a)})")
                ranges[stack[-1]] = (int(t.a), int(t.a))
            elif t.op is ExprOp.PARAM:  # the caller's: anything
                stack.append(leaves.param(int(t.a)))
                ranges[stack[-1]] = UNKNOWN
            elif t.op is ExprOp.SLOT:
                stack.append(value_of[int(t.a)])
            elif t.op is ExprOp.CORES:
                stack.append("C")
            else:
                b, a = stack.pop(), stack.pop()
                ra, rb = ranges[a], ranges[b]
                decided = _decided(t.op, a, b, ra, rb)
                if decided is not None:
                    stack.append(decided)
                    continue
                if t.op in _INFIX:
                    expr = f"{a} {_INFIX[t.op]} {b}"
                elif t.op in _BY_NONZERO and _nonzero(rb):
                    expr = _BY_NONZERO[t.op].format(a=a, b=b)
                else:
                    expr = _INLINE[t.op].format(a=a, b=b)
                if expr not in named:
                    named[expr] = f"t{n}"
                    lines.append(f"    t{n} = {expr}")
                    ranges[f"t{n}"] = _range(t.op, ra, rb)
                    n += 1
                stack.append(named[expr])
        value = stack.pop()
        lines.append(f"    s{i} = {value}")
        lo, hi = ranges[value]
        if not _inside((lo, hi)):  # checked here, so later slots may rely on it
            lines.append(f"    if not {I64_MIN} <= s{i} <= {I64_MAX}: {fail(i)}")
            lo = I64_MIN if lo is None or lo < I64_MIN else lo
            hi = I64_MAX if hi is None or hi > I64_MAX else hi
            ranges[value] = (lo, hi)  # the same value: from here on, it is checked
        ranges[f"s{i}"] = (lo, hi)
        value_of[i] = value
    return lines, [ranges[f"s{i}"] for i in range(len(slots))]


Step = tuple[Callable[[int, int], int], int, int]
"""An operation of `SlotSteps`: (operator, the positions of its two operands' values)."""


class SlotSteps:
    """A slot table made into straight-line steps, to interpret for a program specialized
    at a few shapes, where generating and compiling the slot function would cost tens of
    times more than evaluating the slots. The values are one list: the constants, the
    dims and params the table reads, the cores, then each step's result. Each distinct
    operation is one step, however many times the slots repeat it (a tile size inside
    every later size: BERT's kernels read 125 to 684 tokens and take 32 to 61 steps)."""

    def __init__(self, slots: Sequence[Slot]) -> None:
        leaves: dict[tuple[int, int, int], int] = {}
        """Each leaf read (op, a, b) -> its number."""
        operations: dict[tuple[int, int, int], int] = {}
        """Each distinct operation (op, operands' positions) -> its number."""
        steps: list[Step] = []
        ends: list[tuple[int, int]] = []
        """Per slot, how many steps reach it, and its value's position."""
        # positions while tokens are read: -1 - n for leaf n, n for operation n (the
        # leaves come first in the values: made absolute once all are known)
        for slot in slots:
            stack: list[int] = []
            for t in slot.expr:
                op = t.op
                if op in _APPLY:
                    y, x = stack.pop(), stack.pop()
                    key = (op, y, x) if op in _COMMUTATIVE and y < x else (op, x, y)
                    n = operations.get(key)
                    if n is None:
                        n = operations[key] = len(steps)
                        steps.append((_APPLY[op], x, y))
                    stack.append(n)
                elif op is ExprOp.SLOT:
                    stack.append(ends[t.a][1])
                else:
                    n = leaves.setdefault((op, t.a, t.b), len(leaves))
                    stack.append(-1 - n)
            ends.append((len(steps), stack.pop()))
        # the values start with the constants, the dims, the params, then the cores
        order = sorted(leaves, key=lambda leaf: _LEAF_ORDER.index(leaf[0]))
        order = [leaf for leaf in order if leaf[0] is not ExprOp.CORES]
        start = {leaf: n for n, leaf in enumerate(order)}
        start[(ExprOp.CORES, 0, 0)] = len(order)
        at = [start[leaf] for leaf in leaves]  # leaf number -> its position

        def absolute(n: int) -> int:
            return at[-1 - n] if n < 0 else len(order) + 1 + n

        self.constants = [a for op, a, _ in order if op is ExprOp.CONST]
        self.dims = [(a, b) for op, a, b in order if op is ExprOp.DIM]
        self.params = [a for op, a, _ in order if op is ExprOp.PARAM]
        steps = [(fn, absolute(x), absolute(y)) for fn, x, y in steps]
        self.slots: list[tuple[list[Step], int]] = []
        """Per slot, the steps it adds and its value's position."""
        before = 0
        for reached, n in ends:
            self.slots.append((steps[before:reached], absolute(n)))
            before = reached

    def __call__(
        self, shapes: Sequence[Sequence[int]], params: Sequence[int], cores: int
    ) -> tuple[int, ...] | int:
        """All slot values, or the index of the first slot outside int64 (checked as
        each slot is computed, so that no value grows past a slot beyond it)."""
        v = [*self.constants, *[shapes[a][b] for a, b in self.dims]]
        v += [params[k] for k in self.params]
        v.append(cores)
        values = []
        for i, (steps, position) in enumerate(self.slots):
            for fn, x, y in steps:
                v.append(fn(v[x], v[y]))
            value = v[position]
            if not I64_MIN <= value <= I64_MAX:
                return i
            values.append(value)
        return tuple(values)


_LEAF_ORDER = (ExprOp.CONST, ExprOp.DIM, ExprOp.PARAM, ExprOp.CORES)
_COMMUTATIVE = {ExprOp.ADD, ExprOp.MUL, ExprOp.MIN, ExprOp.MAX}
_APPLY: dict[ExprOp, Callable[[int, int], int]] = {
    ExprOp.ADD: operator.add,
    ExprOp.SUB: operator.sub,
    ExprOp.MUL: operator.mul,
    ExprOp.FLOORDIV: lambda a, b: a // b if b else 0,
    ExprOp.CEILDIV: lambda a, b: -(-a // b) if b else 0,
    ExprOp.MOD: lambda a, b: a % b if b else 0,
    ExprOp.MIN: lambda a, b: a if a <= b else b,
    ExprOp.MAX: lambda a, b: a if a >= b else b,
}
"""The operators as `SlotSteps` applies them (x / 0 and x % 0 are 0, as generated)."""


def compile_slots(slots: Sequence[Slot], origin: str = "slots") -> SlotFn:
    """Compile the slot table of a validated program into one fast function (`origin`
    names it in tracebacks: `generated.define`)."""
    namespace: dict[str, object] = {"__builtins__": {}}
    return define(slots_source(slots), "slots", namespace, origin)


class SlotTable:
    """A validated program's slot function, compiled at its first call. Specializing
    evaluates the slots in the fast path (`checks.py`), which computes them itself; only
    a caller that wants the slots alone calls this (the table walk's tests), so a
    program compiled and run never generates it."""

    def __init__(self, slots: Sequence[Slot], origin: str = "slots") -> None:
        self.slots = slots
        self.origin = origin

    def __call__(
        self, shapes: Sequence[Sequence[int]], params: Sequence[int], cores: int
    ) -> tuple[int, ...] | int:
        return self.function(shapes, params, cores)

    @cached_property
    def function(self) -> SlotFn:
        """The compiled function (`compile_slots`)."""
        return compile_slots(self.slots, self.origin)


def argument_lines(ranks: Sequence[int], n_params: int) -> list[str]:
    """Body lines that unpack shapes `D` and params `P` into `LOCAL_LEAVES`' names:
    unpacking into exactly the declared ranks checks them, and `int` makes numpy
    integers plain (they would wrap around where the range checks expect Python's
    growth). Raises `_Bad` (ValueError) for a dim outside `DIM_RANGE`."""
    dims = _dim_names(ranks)
    names = [n for row in dims for n in row]
    params = [LOCAL_LEAVES.param(k) for k in range(n_params)]
    shapes = [f"D{i}" for i in range(len(ranks))]
    lines = [f"    [{', '.join(shapes)}] = D"]
    lines += [f"    [{', '.join(row)}] = _map(_int, D{i})" for i, row in enumerate(dims)]
    lines.append(f"    [{', '.join(params)}] = {'_map(_int, P)' if params else 'P'}")
    if names:  # the bitwise or of ints is negative iff one is, above 2**63-1 iff one is
        low, high = DIM_RANGE
        lines.append(f"    if not {low} <= {' | '.join(names)} <= {high}: raise _Bad")
    return lines


def _dim_names(ranks: Sequence[int]) -> list[list[str]]:
    """Per argument, the local names of its dims."""
    return [[LOCAL_LEAVES.dim(i, j) for j in range(rank)] for i, rank in enumerate(ranks)]


def shapes_text(ranks: Sequence[int]) -> str:
    """The unpacked shapes as a tuple of tuples."""
    dims = _dim_names(ranks)
    return "(" + "".join("(" + "".join(f"{n}, " for n in row) + "), " for row in dims) + ")"


def params_text(n_params: int) -> str:
    """The unpacked params as a tuple."""
    return "(" + "".join(f"{LOCAL_LEAVES.param(k)}, " for k in range(n_params)) + ")"


ARGUMENT_NAMESPACE: dict[str, object] = {"_int": int, "_map": map, "_Bad": ValueError}
