"""The slot function checks a slot's int64 range only where its value may leave it.

Which may is decided by interval arithmetic from the leaves' ranges: a dim is in
0..2**63-1, a constant is itself, the cores are positive, a caller's param and a
checked slot are anything in int64. The same ranges drop a minimum or maximum they
decide and a division's zero test; a random test holds every value to its range.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dvm.vm import ExprOp
from dvm.vm.program import Slot, Tok
from dvm.vm.slots import (
    I64_MAX,
    I64_MIN,
    LOCAL_LEAVES,
    SlotSteps,
    compile_slots,
    slot_lines,
    slots_source,
)

DIM = Tok.dim(0, 0)


def slot(*tokens: Tok) -> Slot:
    return Slot(tuple(tokens))


SLOTS = [
    slot(DIM, Tok.const(5), Tok.binop(ExprOp.MAX)),  # s0: inside int64, >= 0
    slot(Tok.slot(0), Tok.cores(), Tok.binop(ExprOp.CEILDIV)),  # s1: inside, >= 0
    slot(Tok.param(0), Tok.const(7), Tok.binop(ExprOp.MOD)),  # s2: a remainder of 7
    slot(DIM, DIM, Tok.binop(ExprOp.MUL)),  # s3: a product: checked
    slot(Tok.param(0), Tok.const(2), Tok.binop(ExprOp.FLOORDIV)),  # s4: a param: checked
    slot(Tok.slot(3), Tok.const(3), Tok.binop(ExprOp.MIN)),  # s5: of checked slots
]


def test_only_values_that_may_leave_int64_are_checked() -> None:
    source = slots_source(SLOTS)
    lines = source.splitlines()
    checked = {int(line.rsplit("return ", 1)[1]) for line in lines if line.startswith("    if not")}
    assert checked == {3, 4}


def test_a_slot_read_by_a_later_one_shares_its_subexpressions() -> None:
    """s1 reads s0 (= max(d, 5)); s2 repeats s0's expression: `3 * s0` and
    `3 * max(d, 5)` are one temporary, as is everything built on them."""
    d_or_5 = [DIM, Tok.const(5), Tok.binop(ExprOp.MAX)]
    tripled_plus_d = [Tok.const(3), Tok.binop(ExprOp.MUL), DIM, Tok.binop(ExprOp.ADD)]
    table = [slot(*d_or_5), slot(Tok.slot(0), *tripled_plus_d), slot(*d_or_5, *tripled_plus_d)]
    lines, _ = slot_lines(table, LOCAL_LEAVES)
    temporaries = [line for line in lines if line.lstrip().startswith("t")]
    assert len(temporaries) == 3, lines  # the max, the product, the sum
    assert compile_slots(table)([(4,)], [], 1) == (5, 19, 19)


def test_the_interpreter_takes_each_distinct_operation_once() -> None:
    """`SlotSteps` makes the same table one step per distinct operation: s2 repeats s0's
    and s1's operations (a sum written the other way round is the same), and its own
    is the only new one; the values are those of the compiled function."""
    d_or_5 = [DIM, Tok.const(5), Tok.binop(ExprOp.MAX)]
    tripled_plus_d = [Tok.const(3), Tok.binop(ExprOp.MUL), DIM, Tok.binop(ExprOp.ADD)]
    d_plus_tripled = [DIM, Tok.const(3), *d_or_5, Tok.binop(ExprOp.MUL), Tok.binop(ExprOp.ADD)]
    table = [
        slot(*d_or_5),
        slot(Tok.slot(0), *tripled_plus_d),
        slot(*d_plus_tripled, Tok.param(0), Tok.binop(ExprOp.SUB)),
    ]
    steps = SlotSteps(table)
    assert [len(added) for added, _ in steps.slots] == [1, 2, 1]
    for dims, param in [((4,), 0), ((9,), -2), ((0,), I64_MIN)]:
        want = compile_slots(table)([dims], [param], 1)
        assert steps([dims], [param], 1) == want == SlotSteps(table)([dims], [param], 1)
    assert steps([(I64_MAX,)], [0], 1) == 1  # 3 * max(d, 5) + d leaves int64 first in s1


@pytest.mark.parametrize(
    ("dim", "param", "out_of_range"),
    [(10, 9, None), (2**32, 1, 3), (3, 2**64, 4), (3, -(2**65), 4)],
)
def test_a_slot_outside_int64_is_reported(dim: int, param: int, out_of_range: int | None) -> None:
    got = compile_slots(SLOTS)([(dim,)], [param], 2)
    if out_of_range is None:
        assert got == (10, 5, param % 7, 100, param // 2, 3)
    else:
        assert got == out_of_range
    assert isinstance(got, int) or all(abs(v) <= I64_MAX for v in got)


OPERATORS = [op for op in ExprOp if op >= ExprOp.ADD]


def reference(op: ExprOp, a: int, b: int) -> int:
    """`a op b` as the ISA defines it (x / 0 and x % 0 are 0)."""
    if op in (ExprOp.FLOORDIV, ExprOp.CEILDIV, ExprOp.MOD) and b == 0:
        return 0
    return {
        ExprOp.ADD: lambda: a + b,
        ExprOp.SUB: lambda: a - b,
        ExprOp.MUL: lambda: a * b,
        ExprOp.FLOORDIV: lambda: a // b,
        ExprOp.CEILDIV: lambda: -(-a // b),
        ExprOp.MOD: lambda: a % b,
        ExprOp.MIN: lambda: min(a, b),
        ExprOp.MAX: lambda: max(a, b),
    }[op]()


EDGES = [0, 1, 2, 3, 7, 16, 1000, 2**31, 2**62, I64_MAX]


def expressions(leaf: st.SearchStrategy[Tok], depth: int) -> st.SearchStrategy[list[Tok]]:
    """Postfix expressions of up to `depth` operators deep over `leaf`."""
    one = leaf.map(lambda t: [t])
    if depth == 0:
        return one
    pair = st.tuples(
        expressions(leaf, depth - 1), expressions(leaf, depth - 1), st.sampled_from(OPERATORS)
    )
    return st.one_of(one, pair.map(lambda t: [*t[0], *t[1], Tok.binop(t[2])]))


CONSTANTS = st.sampled_from([0, 1, -1, 2, 16, -7, 1000, I64_MAX, I64_MIN]).map(Tok.const)


@st.composite
def slot_tables(draw: st.DrawFn) -> list[Slot]:
    """Up to 8 slots, each a random expression over two dims, a param, the cores,
    constants (0, 1, signs, int64's ends) and the earlier slots."""
    slots: list[Slot] = []
    for i in range(draw(st.integers(1, 8))):
        leaves = [Tok.dim(0, 0), Tok.dim(0, 1), Tok.param(0), Tok.cores()]
        leaves += [Tok.slot(k) for k in range(i)]
        leaf = st.one_of(st.sampled_from(leaves), CONSTANTS)
        slots.append(Slot(tuple(draw(expressions(leaf, 3)))))
    return slots


@settings(max_examples=150, deadline=None, database=None, derandomize=True)
@given(
    table=slot_tables(),
    dims=st.tuples(st.sampled_from(EDGES), st.sampled_from(EDGES)),
    param=st.sampled_from([0, 5, -3, I64_MIN, I64_MAX]),
    cores=st.integers(1, 8),
)
def test_every_slot_value_lies_in_its_range(
    table: list[Slot], dims: tuple[int, int], param: int, cores: int
) -> None:
    """Each slot's value (by a plain evaluator) lies in the range the generator gave it,
    and the compiled function, with the ranges' simplifications, computes it, as the
    interpreter (`SlotSteps`) does; a value outside int64 is reported as the first
    such slot."""
    _, ranges = slot_lines(table, LOCAL_LEAVES)
    values: list[int] = []
    first_outside = None
    for i, sl in enumerate(table):
        stack: list[int] = []
        for t in sl.expr:
            if t.op is ExprOp.DIM:
                stack.append(dims[t.b])
            elif t.op is ExprOp.CONST:
                stack.append(t.a)
            elif t.op is ExprOp.PARAM:
                stack.append(param)
            elif t.op is ExprOp.SLOT:
                stack.append(values[t.a])
            elif t.op is ExprOp.CORES:
                stack.append(cores)
            else:
                b, a = stack.pop(), stack.pop()
                stack.append(reference(t.op, a, b))
        value = stack.pop()
        if not I64_MIN <= value <= I64_MAX:
            first_outside = i
            break
        lo, hi = ranges[i]
        assert (lo is None or lo <= value) and (hi is None or value <= hi), (i, value, lo, hi)
        values.append(value)
    got = compile_slots(table)([dims], [param], cores)
    assert got == (first_outside if first_outside is not None else tuple(values))
    assert SlotSteps(table)([dims], [param], cores) == got  # the interpreter's too


ALIGNED = """\
arg a0 f32 1
arg a1 f32 1
params 0
slot s0 = dim(a0,0)
slot s1 = 0
slot s2 = 1
slot s3 = s0 4 mul 63 add 64 floordiv 64 mul
slot s4 = s0 4 mul
grid s2
reg r0 f32 (s0) at s1
reg r1 f32 (s0) at {offset}
view v0 a0 offset s1 (s0 s2)
view v1 a1 offset s1 (s0 s2)
load r0, v0
exp r1, r0
store v1, r1
"""


@pytest.mark.parametrize(("offset", "tested"), [("s3", False), ("s4", True)])
def test_an_offset_rounded_to_the_alignment_is_not_tested(offset: str, tested: bool) -> None:
    """The fast path tests a register offset for alignment only when the slot's value
    is not known to be a multiple of it (as the compiler rounds offsets up); either way
    a misaligned register is refused."""
    from dvm import vm
    from dvm.vm.checks import fast_source

    prog = vm.load(vm.encode(vm.assemble(ALIGNED.format(offset=offset))))
    assert ("s3 % 64" in fast_source(prog, 1 << 20, 64, 1, False)) is False
    assert (f"{offset} % 64" in fast_source(prog, 1 << 20, 64, 1, False)) is tested
    vm.specialize(prog, [(16,), (16,)])  # 64 bytes: aligned either way
    if tested:
        with pytest.raises(vm.BytecodeError, match="misaligned register"):
            vm.specialize(prog, [(17,), (17,)])
    else:
        vm.specialize(prog, [(17,), (17,)])
