"""Slot expressions -> one plain Python function, built once per program.

A binary stores each slot as a postfix token list (`ExprOp`). The loader
turns the whole table into the source of a single function

    def slots(D, P, C):       # D: argument shapes, P: caller params, C: cores
        t0 = D[0][0]
        s0 = t0
        ...
        return (s0, s1, ...)

and compiles it with an empty `__builtins__` and three helpers. The source
is generated only from validated integers and a fixed set of operators, so
nothing in a binary can become code. Each slot is range-checked as soon as
it is computed, so values never grow past int64 (a chain of squarings
cannot blow up memory).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from dvm.vm.isa import ExprOp
from dvm.vm.program import Slot

I64_MIN, I64_MAX = -(2**63), 2**63 - 1

SlotFn = Callable[[Sequence[Sequence[int]], Sequence[int], int], "tuple[int, ...] | int"]
"""(shapes, params, cores) -> all slot values, or the index of the first slot out of
int64 range."""


def _fdiv(a: int, b: int) -> int:
    """Floor division; x // 0 = 0 so expressions never raise."""
    return a // b if b else 0


def _cdiv(a: int, b: int) -> int:
    """Ceiling division; x /^ 0 = 0."""
    return -(-a // b) if b else 0


def _mod(a: int, b: int) -> int:
    """Python (floor) modulo; x % 0 = 0."""
    return a % b if b else 0


_INFIX = {ExprOp.ADD: "+", ExprOp.SUB: "-", ExprOp.MUL: "*"}
_BY_CONSTANT = {
    ExprOp.FLOORDIV: "({a} // {b})",
    ExprOp.CEILDIV: "(-(-{a} // {b}))",
    ExprOp.MOD: "({a} % {b})",
}
"""The division operators by a non-zero constant (tile sizes, alignments): no zero test."""
_INLINE = {
    ExprOp.FLOORDIV: "({a} // {b} if {b} else 0)",
    ExprOp.CEILDIV: "(-(-{a} // {b}) if {b} else 0)",
    ExprOp.MOD: "({a} % {b} if {b} else 0)",
    ExprOp.MIN: "({a} if {a} <= {b} else {b})",
    ExprOp.MAX: "({a} if {a} >= {b} else {b})",
}
"""The other operators inline (operands are leaves or temporaries, cheap to repeat):
a Python call per operator would cost more than the arithmetic."""
SLOT_NAMESPACE: dict[str, object] = {
    "_fdiv": _fdiv,
    "_cdiv": _cdiv,
    "_mod": _mod,
    "_min": min,
    "_max": max,
}


Known = tuple[bool, bool]
"""What is known of a value before any shape: (inside int64, non-negative)."""


def _known(op: ExprOp, a: Known, b: Known) -> Known:
    """What is known of `a op b`. Sums and products may leave int64; a minimum or
    maximum of int64 values may not, nor a non-negative int64 divided by any int
    (its magnitude does not grow), nor a remainder of an int64 divisor."""
    (a_int, a_pos), (b_int, b_pos) = a, b
    if op is ExprOp.MIN:
        return a_int and b_int, a_pos and b_pos
    if op is ExprOp.MAX:
        return a_int and b_int, a_pos or b_pos
    if op in (ExprOp.FLOORDIV, ExprOp.CEILDIV):
        return a_int and a_pos and b_int, a_pos and b_pos
    if op is ExprOp.MOD:
        return b_int, b_pos
    return False, op is not ExprOp.SUB and a_pos and b_pos


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
) -> tuple[list[str], list[bool]]:
    """Body lines (indented once) that compute every slot into `s0`, `s1`, ...; a slot
    that may leave int64 is checked at once (running `fail(i)` when it does), so later
    slots may rely on it. Also says which slots are never negative (sums, products,
    minimums, ... of dims, cores and non-negative constants), which later checks need
    not test."""
    lines: list[str] = []
    n = 0
    constants: set[str] = set()
    """The constant leaves' text, e.g. `(16)`."""
    named: dict[str, str] = {}
    """Each expression computed so far -> its temporary: slots repeat subexpressions (a
    tile size inside every later size), which are computed once."""
    known: dict[str, Known] = {"C": (True, True)}
    """What is known of each operand's value (the cores are a small positive int)."""
    for i, slot in enumerate(slots):
        stack: list[str] = []
        for t in slot.expr:
            if t.op is ExprOp.DIM:  # a dim of a numpy array: inside int64, >= 0
                stack.append(leaves.dim(int(t.a), int(t.b)))
                known[stack[-1]] = (True, True)
            elif t.op is ExprOp.CONST:
                stack.append(f"({int(t.a)})")
                constants.add(stack[-1])
                known[stack[-1]] = (True, t.a >= 0)  # validated inside int64
            elif t.op is ExprOp.PARAM:  # the caller's: anything
                stack.append(leaves.param(int(t.a)))
                known[stack[-1]] = (False, False)
            elif t.op is ExprOp.SLOT:
                stack.append(f"s{int(t.a)}")
            elif t.op is ExprOp.CORES:
                stack.append("C")
            else:
                b, a = stack.pop(), stack.pop()
                if t.op in _INFIX:
                    expr = f"{a} {_INFIX[t.op]} {b}"
                elif t.op in _BY_CONSTANT and b in constants and b != "(0)":
                    expr = _BY_CONSTANT[t.op].format(a=a, b=b)
                else:
                    expr = _INLINE[t.op].format(a=a, b=b)
                if expr not in named:
                    named[expr] = f"t{n}"
                    lines.append(f"    t{n} = {expr}")
                    known[f"t{n}"] = _known(t.op, known[a], known[b])
                    n += 1
                stack.append(named[expr])
        value = stack.pop()
        lines.append(f"    s{i} = {value}")
        inside, positive = known[value]
        if not inside:  # checked here, so later slots may rely on it
            lines.append(f"    if not {I64_MIN} <= s{i} <= {I64_MAX}: {fail(i)}")
        known[f"s{i}"] = (True, positive)
    return lines, [known[f"s{i}"][1] for i in range(len(slots))]


def compile_slots(slots: Sequence[Slot]) -> SlotFn:
    """Compile the slot table of a validated program into one fast function."""
    namespace: dict[str, object] = {"__builtins__": {}, **SLOT_NAMESPACE}
    exec(compile(slots_source(slots), "<dvm slots>", "exec"), namespace)
    return namespace["slots"]  # type: ignore[return-value]


def argument_lines(ranks: Sequence[int], n_params: int) -> list[str]:
    """Body lines that unpack shapes `D` and params `P` into `LOCAL_LEAVES`' names:
    unpacking into exactly the declared ranks checks them, and `int` makes numpy
    integers plain (they would wrap around where the range checks expect Python's
    growth). Raises `_Bad` (ValueError) for a negative dim."""
    dims = _dim_names(ranks)
    names = [n for row in dims for n in row]
    params = [LOCAL_LEAVES.param(k) for k in range(n_params)]
    lines = [f"    [{', '.join('[' + ', '.join(row) + ']' for row in dims)}] = D"]
    lines.append(f"    [{', '.join(params)}] = P")
    lines += [f"    {n} = _int({n})" for n in [*names, *params]]
    if names:
        lines.append(f"    if {' or '.join(f'{n} < 0' for n in names)}: raise _Bad")
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


ARGUMENT_NAMESPACE: dict[str, object] = {"_int": int, "_Bad": ValueError}
