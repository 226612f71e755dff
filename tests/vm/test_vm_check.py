"""`vm.check` on Programs built in Python holds every field to what a binary can say.

For a value of a field's own type (an int for an index, count or constant, a float
for an immediate, a member of the field's enum, a tuple for a table), `check(program)`
accepts exactly what `load(encode(program))` accepts: an int past its u8, u16 or i64
field, or past the table it indexes, is rejected by both. A value of another type (a
float or a bool where an index belongs, a list for a tuple) has no binary form, and
neither has a field the binary has no room for (a tile size on an untiled view dim):
`check` rejects them. Always with a BytecodeError, never another exception.
"""

from __future__ import annotations

import copy
import math
import os
import pickle
from collections.abc import Iterator
from enum import Enum
from typing import Any

import numpy as np
import pytest
import vm_programs as P

import dvm.vm as vm
from dvm.vm import Instr, Scalar, ScalarTag
from dvm.vm.isa import OPCODES, OpDef

SEEDS = [
    P.elementwise_chain(tile=4),
    P.layernorm(rows_param=True),
    P.addmm_relu(tm=4, tn=4, tk=2, transpose_b=True),
    P.single_op("div", "i32", "i32", "sr", "#7.0"),
    P.mixed_rows(tile=2),
]
MUTATIONS = int(os.environ.get("DVM_CHECK_MUTATIONS", "2000"))

INTS = [-1, 0, 1, 2, 3, 8, 9, 255, 256, 65535, 65536, 2**63 - 1, 2**63, -(2**63) - 1]
FLOATS = [0.0, -0.0, 1.5, math.inf, -math.inf, math.nan, 1e308]
OTHERS = [0.797, 1.0, True, None, "0", np.int64(1), math.inf, [0]]
"""Values of other types than most fields' (each tried where its type is wrong)."""

Path = tuple[Any, ...]


def record_fields(obj: Any) -> tuple[str, ...] | None:
    """The field names of a record of the program model (the `Program`'s tables, the
    fields of its entries, named tuples); None for another value (an opcode's row, which
    counts as one field, is none)."""
    if isinstance(obj, OpDef | type):
        return None
    if isinstance(obj, vm.Program):
        return vm.Program.FIELDS
    return getattr(type(obj), "_fields", None)


def leaves(obj: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every field of a program that its binary holds, nested: tables, their entries and
    the entries' fields (an opcode's row counts as one field)."""
    names = record_fields(obj)
    if isinstance(obj, OpDef):
        yield path, obj
    elif names is not None:
        yield path, obj
        for name in names:
            yield from leaves(getattr(obj, name), (*path, name))
    elif isinstance(obj, tuple):
        yield path, obj
        for i, x in enumerate(obj):
            yield from leaves(x, (*path, i))
    else:
        yield path, obj


def replaced(obj: Any, path: Path, value: Any) -> Any:
    """`obj` with the field at `path` replaced by `value` (a new Program, not validated)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if record_fields(obj) is None:  # a table
        return (*obj[:head], replaced(obj[head], rest, value), *obj[head + 1 :])
    new = replaced(getattr(obj, head), rest, value)
    if isinstance(obj, vm.Program):
        return obj.replace(offsets=None, **{head: new})
    return obj._replace(**{head: new})


def candidates(old: Any) -> tuple[list[Any], list[Any]]:
    """(values of the field's own type, values of other types) to put in a field."""
    if isinstance(old, Enum):
        members = list(type(old))
        return members, [int(old), *[m for m in ScalarTag if type(old) is not ScalarTag]]
    if type(old) is int:
        return INTS, [x for x in OTHERS if type(x) is not int]
    if type(old) is float:
        return FLOATS, [1, True, None, "1.0"]
    if isinstance(old, OpDef):
        return list(OPCODES), [None, old._replace(code=0xFF)]
    if isinstance(old, tuple) and record_fields(old) is None:
        shorter, longer = old[:-1], (*old, old[-1]) if old else (0,)
        return [shorter, longer, ()], [list(old)]
    if old is None:  # an untiled view dim's tile
        return [0, 1], [0.5]
    return [], [None, 0, (old,)]  # a table entry: a record


def outcome(fn: Any, *args: Any) -> str:
    """'ok' or the reason of the BytecodeError `fn` raises (any other error fails)."""
    try:
        fn(*args)
    except vm.BytecodeError as e:
        return f"rejected ({e.reason})"
    return "ok"


def binary_outcome(program: vm.Program) -> str | None:
    """What loading the program's binary gives; None when the binary does not hold the
    program (a field it has no room for, which decoding does not give back)."""
    try:
        data = vm.encode(program)
        if repr(vm.decode(data)) != repr(program):
            return None
    except vm.BytecodeError as e:
        return f"rejected ({e.reason})"
    return outcome(vm.load, data)


def test_check_agrees_with_load_of_the_binary_on_mutated_programs() -> None:
    rng = np.random.default_rng(int(os.environ.get("DVM_CHECK_SEED", "28")))
    programs = [vm.assemble(text) for text in SEEDS]
    fields = [list(leaves(p)) for p in programs]
    counts = {"same type, ok": 0, "same type, rejected": 0, "other type": 0}
    for _ in range(MUTATIONS):
        i = int(rng.integers(len(programs)))
        path, old = fields[i][int(rng.integers(1, len(fields[i])))]
        same, other = candidates(old)
        own_type = bool(same) and (not other or rng.random() < 0.7)
        pool = same if own_type else other
        value = pool[int(rng.integers(len(pool)))]
        program = replaced(programs[i], path, value)
        got = outcome(vm.check, program)
        want = binary_outcome(program) if own_type else None
        where = f"{path} = {value!r} in seed {i}"
        if want is None:
            assert got.startswith("rejected"), where
            counts["other type"] += 1
        else:
            assert got.startswith("rejected") == want.startswith("rejected"), (where, got, want)
            counts["same type, " + ("rejected" if want.startswith("rejected") else "ok")] += 1
    assert all(n > MUTATIONS // 20 for n in counts.values()), counts


def scale(**fields: Any) -> vm.Program:
    """A small valid program (one load, a multiply by a slot, a store) with fields replaced."""
    program = vm.assemble(P.single_op("mul", "f32", "f32", "rs", "s0"))
    return program.replace(offsets=None, **fields)


def test_a_program_replaced_from_a_checked_one_is_checked_again() -> None:
    """What the VM derived from a program (that it is valid, its facts) stays with it:
    a program made from it by `replace` starts with nothing derived."""
    program = vm.check(scale())
    assert program.cache.validated is not None
    bad = program.replace(n_params=-1)
    assert bad.cache.validated is None
    with pytest.raises(vm.BytecodeError, match="bad param count"):
        vm.check(bad)


@pytest.mark.parametrize("n_params", [-1, 65536, 2**70, 1.0, True])
def test_param_count_outside_u16_is_rejected(n_params: Any) -> None:
    with pytest.raises(vm.BytecodeError, match="bad param count"):
        vm.check(scale(n_params=n_params))


@pytest.mark.parametrize("value", [0.797, math.inf, math.nan, -1, 70000, True])
def test_slot_scalar_must_be_a_slot_index(value: Any) -> None:
    program = scale()
    k, ins = next((k, ins) for k, ins in enumerate(program.code) if ins.op.name == "mul.rs")
    bad = Instr(ins.op, (*ins.operands[:2], Scalar(ScalarTag.SLOT, value)))
    code = (*program.code[:k], bad, *program.code[k + 1 :])
    with pytest.raises(vm.BytecodeError, match="slot index out of range"):
        vm.check(scale(code=code))


@pytest.mark.parametrize("value", [1, True, None])
def test_immediate_must_be_a_float(value: Any) -> None:
    program = scale()
    k, ins = next((k, ins) for k, ins in enumerate(program.code) if ins.op.name == "mul.rs")
    bad = Instr(ins.op, (*ins.operands[:2], Scalar(ScalarTag.IMM, value)))
    code = (*program.code[:k], bad, *program.code[k + 1 :])
    with pytest.raises(vm.BytecodeError, match="bad scalar operand"):
        vm.check(scale(code=code))


def test_encode_says_unencodable_for_an_immediate_beyond_f64() -> None:
    program = scale()
    k, ins = next((k, ins) for k, ins in enumerate(program.code) if ins.op.name == "mul.rs")
    bad = Instr(ins.op, (*ins.operands[:2], Scalar(ScalarTag.IMM, 10**400)))
    with pytest.raises(vm.BytecodeError, match="unencodable program"):
        vm.encode(scale(code=(*program.code[:k], bad, *program.code[k + 1 :])))


def test_a_program_is_an_immutable_value_of_its_tables() -> None:
    """Equal tables make equal programs (with equal hashes and reprs) whatever their name
    and binary offsets; a program cannot be changed in place, and a copy or a pickled
    one is equal to it."""
    program = scale()
    decoded = vm.decode(vm.encode(program), name="other")
    assert decoded.offsets is not None and decoded.name == "other"
    assert decoded == program and hash(decoded) == hash(program)
    assert program.replace(n_params=2) != program
    with pytest.raises(AttributeError):
        program.n_params = 2  # pyright: ignore[reportAttributeAccessIssue]
    for again in (copy.deepcopy(program), pickle.loads(pickle.dumps(program))):
        assert again == program and again.name == program.name
