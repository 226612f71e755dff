"""Hand-made bad binaries, one per reason: each must raise BytecodeError at the right byte.

Structural problems are found by `decode`, meaning problems by the validator
(`load`), shape-dependent ones by `specialize`; every error names a reason
and the byte offset of the table entry or instruction at fault.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

import numpy as np
import pytest

import dvm.vm as vm
from dvm.vm.binary import HEADER
from dvm.vm.isa import ExprOp
from dvm.vm.program import Slot, Tok
from dvm.vm.validate import validate

BASE = """\
arg a0 f32 2
arg a1 f32 2
params 1
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = 4
slot s3 = s0 s2 ceildiv
slot s4 = 0
slot s5 = 1
slot s6 = 4096
slot s7 = p0
grid s3
reg r0 f32 (s2, s1) at s4
reg r1 f32 (s2, s1) at s6
view v0 a0 offset s4 (s0 s1 g0 s2) (s1 s5)
view v1 a1 offset s4 (s0 s1 g0 s2) (s1 s5)
load r0, v0
exp r1, r0
store v1, r1
"""
SHAPES = [(8, 8), (8, 8)]


def _bin(text: str) -> bytes:
    return vm.encode(vm.assemble(text))


def _edit(old: str, new: str, base: str = BASE) -> str:
    assert old in base, old
    return base.replace(old, new, 1)


def _layout(text: str) -> vm.program.Offsets:
    offsets = vm.decode(_bin(text)).offsets
    assert offsets is not None
    return offsets


def _patch(data: bytes, at: int, value: int) -> bytes:
    return data[:at] + bytes([value]) + data[at + 1 :]


def _with_code(extra: str) -> str:
    """BASE with more instructions (the first at index 2) before the final store."""
    return _edit("store v1, r1\n", f"{extra}\nstore v1, r1\n")


Case = tuple[str, Callable[[], bytes], str, Callable[[], int]]

BASE_BIN = _bin(BASE)
BASE_OFF = _layout(BASE)


def _offset(text: str, where: tuple[str, int]) -> int:
    """Byte offset of a table entry or instruction, e.g. ("code", 2), in text's binary."""
    offsets = _layout(text)
    return offsets.grid if where[0] == "grid" else getattr(offsets, where[0])[where[1]]


STRUCTURAL: list[Case] = [
    ("short header", lambda: BASE_BIN[:10], "truncated", lambda: 0),
    ("bad magic", lambda: b"XVMB" + BASE_BIN[4:], "bad magic", lambda: 0),
    (
        "version",
        lambda: BASE_BIN[:4] + struct.pack("<H", 99) + BASE_BIN[6:],
        "unsupported version",
        lambda: 4,
    ),
    ("reserved", lambda: _patch(BASE_BIN, 17, 1), "reserved byte not zero", lambda: 17),
    ("arg dtype", lambda: _patch(BASE_BIN, HEADER.size, 42), "unknown dtype", lambda: 22),
    ("arg rank", lambda: _patch(BASE_BIN, HEADER.size + 1, 9), "rank too large", lambda: 23),
    (
        "expr op",
        lambda: _patch(BASE_BIN, BASE_OFF.slots[0] + 2, 99),
        "unknown expression op",
        lambda: BASE_OFF.slots[0] + 2,
    ),
    (
        "index source",
        lambda: _patch(BASE_BIN, BASE_OFF.views[0] + 9, 7),
        "unknown index source",
        lambda: BASE_OFF.views[0] + 9,
    ),
    (
        "opcode",
        lambda: _patch(BASE_BIN, BASE_OFF.code[1], 0xFF),
        "unknown opcode",
        lambda: BASE_OFF.code[1],
    ),
    (
        "scalar tag",
        lambda: _patch(
            _bin(_with_code("add.rs r1, r1, #1.0")),
            _layout(_with_code("add.rs r1, r1, #1.0")).code[2] + 5,
            7,
        ),
        "unknown scalar tag",
        lambda: _layout(_with_code("add.rs r1, r1, #1.0")).code[2] + 5,
    ),
    (
        "extent kind",
        lambda: _patch(
            _bin(_with_code("fill r1, #0.0, (s2, s1)")),
            _layout(_with_code("fill r1, #0.0, (s2, s1)")).code[2] + 13,
            9,
        ),
        "unknown extent kind",
        lambda: _layout(_with_code("fill r1, #0.0, (s2, s1)")).code[2] + 13,
    ),
    (
        "reduce kind",
        lambda: _patch(
            _bin(_with_code("reduce r1, r0, sum, {1}, [keepdims]")),
            _layout(_with_code("reduce r1, r0, sum, {1}, [keepdims]")).code[2] + 5,
            9,
        ),
        "unknown reduce kind",
        lambda: _layout(_with_code("reduce r1, r0, sum, {1}, [keepdims]")).code[2] + 5,
    ),
    (
        "acc kind",
        lambda: _patch(
            _bin(_edit("store v1, r1", "store_acc v1, r1, add")), BASE_OFF.code[2] + 5, 9
        ),
        "unknown acc kind",
        lambda: BASE_OFF.code[2] + 5,
    ),
    ("trailing", lambda: BASE_BIN + b"\0", "trailing bytes", lambda: len(BASE_BIN)),
    ("code past end", lambda: BASE_BIN[:-1], "truncated", lambda: BASE_OFF.code[0]),
    (
        "instruction cut",
        lambda: (
            BASE_BIN[:18]
            + struct.pack("<I", len(BASE_BIN) - 1 - BASE_OFF.code[0])
            + BASE_BIN[22:-1]
        ),
        "truncated",
        lambda: BASE_OFF.code[2] + 3,
    ),
]

SEMANTIC: list[tuple[str, str, str, tuple[str, int]]] = [
    (
        "dim arg",
        _edit("slot s1 = dim(a0,1)", "slot s1 = dim(a5,1)"),
        "arg index out of range",
        ("slots", 1),
    ),
    ("dim axis", _edit("slot s1 = dim(a0,1)", "slot s1 = dim(a0,2)"), "bad DIM axis", ("slots", 1)),
    ("param", _edit("slot s7 = p0", "slot s7 = p1"), "param index out of range", ("slots", 7)),
    (
        "forward slot",
        _edit("slot s3 = s0 s2 ceildiv", "slot s3 = s4 s2 ceildiv"),
        "slot refers to itself or a later slot",
        ("slots", 3),
    ),
    (
        "underflow",
        _edit("slot s3 = s0 s2 ceildiv", "slot s3 = s0 ceildiv"),
        "expression stack underflow",
        ("slots", 3),
    ),
    (
        "underflow before a forward slot",
        _edit("slot s3 = s0 s2 ceildiv", "slot s3 = s0 ceildiv s5 add"),
        "expression stack underflow",
        ("slots", 3),
    ),
    (
        "two values",
        _edit("slot s3 = s0 s2 ceildiv", "slot s3 = s0 s2"),
        "expression must leave one value",
        ("slots", 3),
    ),
    ("no grid", _edit("grid s3", "grid"), "bad grid rank", ("grid", 0)),
    ("grid slot", _edit("grid s3", "grid s30"), "slot index out of range", ("grid", 0)),
    (
        "reg slot",
        _edit("reg r1 f32 (s2, s1) at s6", "reg r1 f32 (s2, s1) at s60"),
        "slot index out of range",
        ("registers", 1),
    ),
    ("view arg", _edit("view v1 a1", "view v1 a7"), "arg index out of range", ("views", 1)),
    (
        "grid axis",
        _edit("view v1 a1 offset s4 (s0 s1 g0 s2)", "view v1 a1 offset s4 (s0 s1 g2 s2)"),
        "grid axis out of range",
        ("views", 1),
    ),
    ("register", _edit("exp r1, r0", "exp r1, r9"), "register index out of range", ("code", 1)),
    ("view", _edit("load r0, v0", "load r0, v5"), "view index out of range", ("code", 0)),
    ("loop slot", _with_code("loop s99\nendloop"), "slot index out of range", ("code", 2)),
    ("endloop", _with_code("endloop"), "endloop without loop", ("code", 2)),
    ("loop", _with_code("loop s5"), "loop without endloop", ("code", 2)),
    (
        "nesting",
        _with_code("loop s5\n" * 9 + "endloop\n" * 9),
        "loop nesting too deep",
        ("code", 10),
    ),
    ("load dtype", _edit("reg r0 f32", "reg r0 i32"), "dtype mismatch", ("code", 0)),
    ("load rank", _edit("reg r0 f32 (s2, s1)", "reg r0 f32 (s2)"), "rank mismatch", ("code", 0)),
    ("float op on int", _with_code("convert r1, r0, i32"), "dtype mismatch", ("code", 2)),
    ("flags", _with_code("mma r1, r0, r0, [bit5]"), "unknown flag bits", ("code", 2)),
    ("axis", _with_code("reduce r1, r0, sum, {3}, [keepdims]"), "axis out of range", ("code", 2)),
    ("mma overlap", _with_code("mma r1, r1, r0, []"), "mma result overlaps an input", ("code", 2)),
    (
        "loop view",
        _edit("view v1 a1 offset s4 (s0 s1 g0 s2)", "view v1 a1 offset s4 (s0 s1 l0 s2)"),
        "view tiled by a loop that does not enclose it",
        ("code", 2),
    ),
    (
        "extent dim",
        _with_code("fill r1, #0.0, (v0[0], v0[5])"),
        "extent dim out of range",
        ("code", 2),
    ),
    ("compare dst", _with_code("lt r1, r0, r0"), "dtype mismatch", ("code", 2)),
]

SPECIALIZE: list[tuple[str, str, str, tuple[str, int]]] = [
    (
        "misaligned",
        _edit("slot s6 = 4096", "slot s6 = 4100"),
        "misaligned register",
        ("registers", 1),
    ),
    (
        "local memory",
        _edit("slot s6 = 4096", "slot s6 = 1073741824"),
        "register exceeds local memory",
        ("registers", 1),
    ),
    ("overlap", _edit("slot s6 = 4096", "slot s6 = 64"), "registers overlap", ("registers", 1)),
    (
        "bounds",
        _edit(
            "view v1 a1 offset s4 (s0 s1 g0 s2) (s1 s5)",
            "view v1 a1 offset s5 (s0 s1 g0 s2) (s1 s5)",
        ),
        "view out of bounds",
        ("views", 1),
    ),
    (
        "store overlap",  # every row of the tile stores to the same row of a1
        _edit(
            "view v1 a1 offset s4 (s0 s1 g0 s2) (s1 s5)",
            "view v1 a1 offset s4 (s0 s4 g0 s2) (s1 s5)",
        ),
        "store view overlaps itself",
        ("views", 1),
    ),
    (
        "transposed bounds",
        _edit(
            "view v1 a1 offset s4 (s0 s1 g0 s2) (s1 s5)",
            "view v1 a1 offset s4 (s0 s1 g0 s2) (s1 s1)",
        ),
        "view out of bounds",
        ("views", 1),
    ),
    (
        "negative size",
        _edit("slot s7 = p0", "slot s7 = 0 1 sub").replace(
            "view v1 a1 offset s4 (s0 s1", "view v1 a1 offset s4 (s7 s1"
        ),
        "negative view size",
        ("views", 1),
    ),
    (
        "negative loop",
        _edit("slot s7 = p0", "slot s7 = 0 3 sub", _with_code("loop s7\nendloop")),
        "negative loop count",
        ("code", 2),
    ),
    (
        "negative grid",
        _edit("slot s7 = p0", "slot s7 = 0 3 sub", _edit("grid s3", "grid s7")),
        "negative grid extent",
        ("grid", 0),
    ),
    ("steps", _edit("grid s3", "grid s6"), "too many steps", ("grid", 0)),
    (
        "fit",
        _edit("reg r1 f32 (s2, s1)", "reg r1 f32 (s5, s1)"),
        "tile does not fit register",
        ("code", 1),
    ),
    ("broadcast", _with_code("broadcast r1, r0, (s5, s1)"), "shapes do not broadcast", ("code", 2)),
    (
        "read before write",
        _edit("exp r1, r0", "exp r0, r1"),
        "register read before written",
        ("code", 1),
    ),
    (
        "store shape",
        _edit("exp r1, r0", "reduce r1, r0, sum, {1}, [keepdims]"),
        "stored tile shape mismatch",
        ("code", 2),
    ),
    (
        "int64",
        _edit("slot s7 = p0", "slot s7 = 9223372036854775807 2 mul"),
        "slot value out of int64 range",
        ("slots", 7),
    ),
    (
        "view too large",
        _edit("slot s7 = p0", "slot s7 = 4611686018427387904").replace(
            "view v1 a1 offset s4 (s0 s1 g0 s2) (s1 s5)",
            "view v1 a1 offset s4 (s0 s1 g0 s2) (s7 s4)",
        ),
        "view too large",
        ("views", 1),
    ),
    (
        "tile too large",
        _edit(
            "slot s7 = p0", "slot s7 = 4611686018427387904", _with_code("fill r1, #0.0, (s4, s7)")
        ),
        "tile too large",
        ("code", 2),
    ),
    ("mma dims", _with_code("mma r1, r0, r0, []"), "mma inner dims differ", ("code", 2)),
    (
        "mma accumulator",
        _with_code("fill r1, #0.0, (s2, s1)\nmma r1, r0, r0, [tb, acc]"),
        "mma accumulator shape mismatch",
        ("code", 3),
    ),
    (
        "negative extent",
        _edit("slot s7 = p0", "slot s7 = 0 3 sub", _with_code("fill r1, #0.0, (s5, s7)")),
        "negative extent",
        ("code", 2),
    ),
]


@pytest.mark.parametrize(
    ("name", "make", "reason", "offset"), STRUCTURAL, ids=[c[0] for c in STRUCTURAL]
)
def test_structural(
    name: str, make: Callable[[], bytes], reason: str, offset: Callable[[], int]
) -> None:
    with pytest.raises(vm.BytecodeError) as e:
        vm.load(make())
    assert (e.value.reason, e.value.offset) == (reason, offset())


@pytest.mark.parametrize(
    ("name", "text", "reason", "where"), SEMANTIC, ids=[c[0] for c in SEMANTIC]
)
def test_validation(name: str, text: str, reason: str, where: tuple[str, int]) -> None:
    with pytest.raises(vm.BytecodeError) as e:
        vm.load(_bin(text))
    assert (e.value.reason, e.value.offset) == (reason, _offset(text, where))


@pytest.mark.parametrize(
    ("name", "text", "reason", "where"), SPECIALIZE, ids=[c[0] for c in SPECIALIZE]
)
def test_specialization(name: str, text: str, reason: str, where: tuple[str, int]) -> None:
    prog = vm.load(_bin(text))
    with pytest.raises(vm.BytecodeError) as e:
        vm.specialize(prog, SHAPES, [5], max_steps=1000)
    assert (e.value.reason, e.value.offset) == (reason, _offset(text, where))


@pytest.mark.parametrize(
    ("name", "text", "reason", "where"), SPECIALIZE, ids=[c[0] for c in SPECIALIZE]
)
def test_specialization_walked(name: str, text: str, reason: str, where: tuple[str, int]) -> None:
    """A shape bound without the fast path (a runtime kernel's first: `walks`) is refused
    for the same reason at the same offset."""
    prog = vm.load(_bin(text))
    with pytest.raises(vm.BytecodeError) as e:
        spec = vm.Specializer(prog, max_steps=1000, walks=1)(SHAPES, [5], lazy=False)
        spec.plan  # noqa: B018 (planning raises what is wrong with the shapes)
    assert (e.value.reason, e.value.offset) == (reason, _offset(text, where))


@pytest.mark.parametrize(
    ("name", "text", "reason", "where"), SPECIALIZE, ids=[c[0] for c in SPECIALIZE]
)
def test_first_launch_unplanned(name: str, text: str, reason: str, where: tuple[str, int]) -> None:
    """A lazy specialization's first launch runs unplanned (`unplanned.py`): it
    refuses the same programs with the same reason and offset, before or while running."""
    import numpy as np

    prog = vm.load(_bin(text))
    arrays = [np.zeros(s, np.float32) for s in SHAPES]
    with pytest.raises(vm.BytecodeError) as e:
        spec = vm.specialize(prog, SHAPES, [5], max_steps=1000, lazy=True)
        vm.launch(spec, arrays)
    assert (e.value.reason, e.value.offset) == (reason, _offset(text, where))


def test_base_is_valid() -> None:
    import numpy as np

    prog = vm.load(BASE_BIN)
    x = np.arange(64, dtype=np.float32).reshape(8, 8) / 64
    y = np.zeros_like(x)
    vm.launch(prog, [x, y], params=[5])
    np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)


def test_at_least_25_reasons() -> None:
    reasons = {c[2] for c in STRUCTURAL} | {c[2] for c in SEMANTIC} | {c[2] for c in SPECIALIZE}
    assert len(reasons) >= 25, sorted(reasons)


def test_error_message_names_offset_and_reason() -> None:
    with pytest.raises(vm.BytecodeError, match=r"at byte 0: bad magic"):
        vm.load(b"XXXX" + BASE_BIN[4:])


def test_repeated_tokens_are_shared_and_checked() -> None:
    """The decoder makes equal slot tokens once per binary; a repeated token cut short is
    still refused where its first missing field starts, and the validator still checks
    a shared token against the arguments of every slot that holds it."""
    text = _edit("slot s2 = 4\n", "slot s2 = dim(a0,1)\n")
    prog = vm.decode(_bin(text))
    assert prog == vm.assemble(text)
    assert prog.slots[2].expr[0] is prog.slots[1].expr[0]
    token_at = _layout(text).slots[2] + 2  # the slot's u16 token count, then the token
    with pytest.raises(vm.BytecodeError) as e:
        vm.decode(_bin(text)[: token_at + 2])
    assert (e.value.reason, e.value.offset) == ("truncated", token_at + 1)
    narrower = _edit("arg a0 f32 2\n", "arg a0 f32 1\n", text)
    with pytest.raises(vm.BytecodeError) as e:
        vm.load(_bin(narrower))
    assert (e.value.reason, e.value.offset) == ("bad DIM axis", _offset(narrower, ("slots", 1)))


def test_a_result_written_into_its_stored_tile_must_fit_its_register_at_each_shape() -> None:
    """An unplanned launch writes `exp`'s result straight into the stored tile (a fused
    store) and checks, as the planner does, that the tile fits the result's register,
    without a view of that register: once per register and tile shape (`kept.fitted`).
    A register too small at another capacity (p0) is refused all the same, unplanned or
    planned, at the `exp`."""
    text = _edit("reg r1 f32 (s2, s1) at s6", "reg r1 f32 (s7, s1) at s6")
    prog = vm.load(_bin(text))
    x = np.arange(64, dtype=np.float32).reshape(8, 8) / 64
    out = np.zeros((8, 8), np.float32)
    device = vm.DeviceSpec(1, 1, 1 << 20, name="fused-fit")  # (a memory of its own)
    spec = vm.specialize(prog, SHAPES, [4], device, lazy=True)
    vm.launch(spec, [x, out])
    np.testing.assert_array_equal(out, np.exp(x))
    assert spec.memory is not None
    kept = spec.memory.unplanned
    assert (spec.registers[1], (4, 8)) in kept.fitted
    assert not [key for key in kept.views if key[0] == spec.registers[1]]
    for lazy in (True, False):
        with pytest.raises(vm.BytecodeError) as e:
            vm.launch(vm.specialize(prog, SHAPES, [1], device, lazy=lazy), [x, out])
        assert (e.value.reason, e.value.offset) == (
            "tile does not fit register",
            _offset(text, ("code", 1)),
        )


def _with_slots(program: vm.Program, slots: dict[int, tuple[Tok, ...]]) -> vm.Program:
    """`program` (a new object, not yet validated) with some slots' tokens replaced."""
    table = tuple(Slot(slots[i]) if i in slots else s for i, s in enumerate(program.slots))
    fields = (program.args, program.n_params, table, program.grid, program.registers)
    return vm.Program(*fields, program.views, program.code)


def test_a_token_is_trusted_across_programs_only_where_it_reads_nothing_of_them() -> None:
    """The validator checks an operator or constant token once per process (compiled
    programs share them); a token that reads its program, a dim, param or slot, is
    checked in each program that holds it, and a bad token in every one."""
    first = vm.assemble(BASE)
    validate(first)
    four, ceildiv = first.slots[2].expr[0], first.slots[3].expr[2]
    assert validate(_with_slots(first, {4: (four, four, ceildiv)}))
    narrower = first.args[0]._replace(rank=1)  # (slot s1 holds the token dim(a0,1))
    with pytest.raises(vm.BytecodeError, match="bad DIM axis"):
        tables = (first.n_params, first.slots, first.grid, first.registers, first.views)
        validate(vm.Program((narrower, *first.args[1:]), *tables, first.code))
    reading_on = first.slots[3].expr[0]  # s0, read by s3
    with pytest.raises(vm.BytecodeError, match="refers to itself or a later slot"):
        validate(_with_slots(first, {0: (reading_on,)}))
    huge = Tok(ExprOp.CONST, 2**63)
    for program in (first, vm.assemble(BASE)):
        with pytest.raises(vm.BytecodeError, match="constant out of int64 range"):
            validate(_with_slots(program, {2: (huge,)}))
