"""The slot function checks a slot's int64 range only where its value may leave it.

Dims, constants, the cores and checked slots are inside int64; so are their minimum
and maximum, a non-negative one divided by anything and a remainder of one. Sums,
products and caller params are checked.
"""

from __future__ import annotations

import pytest

from dvm.vm import ExprOp
from dvm.vm.program import Slot, Tok
from dvm.vm.slots import I64_MAX, compile_slots, slots_source

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
    prog.specialize([(16,), (16,)])  # 64 bytes: aligned either way
    if tested:
        with pytest.raises(vm.BytecodeError, match="misaligned register"):
            prog.specialize([(17,), (17,)])
    else:
        prog.specialize([(17,), (17,)])
