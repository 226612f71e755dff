"""Fuzzing the loader: mutated binaries either raise BytecodeError or run safely.

Each mutation (bit flips, truncations, insertions, extreme integers written
at operand positions) of a valid binary must either be rejected by `load` /
`specialize` with a BytecodeError, or run on arrays of matching dtype and
rank without any exception and without touching memory outside the
arrays: every array lives inside a larger buffer whose guard bytes on both
sides are checked after the launch.
"""

from __future__ import annotations

import importlib
import os

import numpy as np
import pytest
import vm_programs as P

import dvm.vm as vm

specialize_module = importlib.import_module("dvm.vm.specialize")
planner_module = importlib.import_module("dvm.vm.planner")
static_module = importlib.import_module("dvm.vm.static")

SEEDS = [
    P.elementwise_chain(tile=4),
    P.elementwise_chain(tile=P.SHARED_ROWS),
    P.layernorm(rows_param=False),
    P.column_stats(tile_rows=2, tile_cols=3),
    P.addmm_relu(tm=4, tn=4, tk=2),
    P.addmm_relu(tm=4, tn=4, tk=2, transpose_b=True),
    P.transpose_broadcast(tile=2),
    P.single_op("div", "i32", "i32", "sr", "#7.0"),
    P.single_op("sigmoid", "f32", "f32", "unary"),
    P.reduce_op("max", "i64", "{1}", True, tile_rows=2),
    P.mixed_rows(tile=2),
]
MUTATIONS = int(os.environ.get("DVM_FUZZ_MUTATIONS", "5000"))
GUARD = 64
HEADER_SIZE = 22
EXTREMES_16 = [0, 1, 0x7FFF, 0x8000, 0xFFFF]
EXTREMES_64 = [0, -1, 1, 2**31, 2**62, 2**63 - 1, -(2**63)]


def mutate(rng: np.random.Generator, data: bytes, code_start: int) -> bytes:
    """One random mutation, at an operand position (the code) 40% of the time, in the
    tables (slot constants, shapes, views) 40%, anywhere 20%."""
    b = bytearray(data)
    kind = int(rng.integers(6))
    region = rng.random()
    if region < 0.4:
        pos = int(rng.integers(code_start, len(b)))
    elif region < 0.8:
        pos = int(rng.integers(HEADER_SIZE, code_start))
    else:
        pos = int(rng.integers(0, len(b)))
    if kind == 0:
        for _ in range(int(rng.integers(1, 4))):
            p = int(rng.integers(len(b)))
            b[p] ^= 1 << int(rng.integers(8))
    elif kind == 1:
        del b[int(rng.integers(len(b))) :]
    elif kind == 2:
        b[pos:pos] = rng.integers(0, 256, int(rng.integers(1, 4))).astype(np.uint8).tobytes()
    elif kind == 3:
        v = EXTREMES_16[int(rng.integers(len(EXTREMES_16)))]
        b[pos : pos + 2] = v.to_bytes(2, "little")
    elif kind == 4:
        v = EXTREMES_64[int(rng.integers(len(EXTREMES_64)))]
        b[pos : pos + 8] = v.to_bytes(8, "little", signed=True)
    else:  # a nearby index or value: most likely to stay loadable
        b[pos] = (b[pos] + int(rng.choice([-2, -1, 1, 2]))) % 256
    return bytes(b)


def guarded_args(
    rng: np.random.Generator, prog: vm.Program
) -> tuple[list[np.ndarray], list[tuple[np.ndarray, np.ndarray]]]:
    """Arrays of the program's dtypes and ranks with small random dims, each inside a
    buffer with GUARD bytes of a known pattern on both sides."""
    arrays, guards = [], []
    square = rng.random() < 0.5  # all dims equal: most seeds' views then fit
    side = int(rng.integers(0, 7))
    for arg in prog.args:
        dims = [side] * arg.rank if square else rng.integers(0, 7, arg.rank)
        shape = tuple(int(d) for d in dims)
        dtype = arg.dtype.np
        n = int(np.prod(shape))
        raw = np.full(n * dtype.itemsize + 2 * GUARD, 0xA5, np.uint8)
        body = raw[GUARD : GUARD + n * dtype.itemsize].view(dtype).reshape(shape)
        body[...] = rng.integers(-3, 4, shape).astype(dtype)
        arrays.append(body)
        guards.append((raw, raw.copy()))
    return arrays, guards


def _code_start(data: bytes) -> int:
    offsets = vm.decode(data).offsets
    assert offsets is not None
    return offsets.code[0] if offsets.code else len(data)


def table_walk(
    prog: vm.Program, spec: vm.Specialization, shapes: list[tuple[int, ...]], params: list[int]
) -> tuple[object, object, object]:
    """The registers, their end and the views the specializer's table walk gives for
    these shapes: the generated layout checks (`checks.py`) must never accept what the
    walk rejects (it raises a BytecodeError here), nor place anything elsewhere (but
    where a program with an mma has its registers packed: `specialize.placed`)."""
    static = static_module.static_info(prog)
    sp = specialize_module.TableWalk(static, spec.device)
    dims = tuple(tuple(s) for s in shapes)
    sp.eval_slots(dims, tuple(params), spec.cores)
    regs = sp.place_registers()
    end = specialize_module.registers_end(regs, static.itemsizes)
    if static.placement:
        regs, end = specialize_module.placed(regs, static, spec.device, end)
    return regs, end, tuple(sp.view(i, dims) for i in range(len(prog.views)))


def walked_layout(
    prog: vm.Program, shapes: list[tuple[int, ...]], params: list[int]
) -> tuple[object, object, object]:
    """The registers, their end and views of a specialization bound without the fast
    path (the slots interpreted, the layout from `LayoutTables`, as the runtime's kernels
    read from the compile cache bind their first shapes): the same, or the same
    BytecodeError."""
    spec = vm.Specializer(prog, max_steps=20_000, walks=1)(shapes, params, lazy=False)
    assert spec.plan is not None  # planned, as `vm.specialize` plans: its checks too
    return spec.registers, spec.registers_end, spec.views


def test_fuzz_mutated_binaries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(planner_module, "MAX_PLAN_NODES", 2000)
    rng = np.random.default_rng(int(os.environ.get("DVM_FUZZ_SEED", "2024")))
    seeds = [vm.encode(vm.assemble(t)) for t in SEEDS]
    starts = [_code_start(d) for d in seeds]
    outcomes = {"load": 0, "specialize": 0, "ran": 0}
    for _ in range(MUTATIONS):
        i = int(rng.integers(len(seeds)))
        data = mutate(rng, seeds[i], starts[i])
        try:
            prog = vm.load(data)
        except vm.BytecodeError:
            outcomes["load"] += 1
            continue
        arrays, guards = guarded_args(rng, prog)
        params = [int(p) for p in rng.integers(-1, 5, prog.n_params)]
        try:
            spec = vm.specialize(prog, [a.shape for a in arrays], params, max_steps=20_000)
        except vm.BytecodeError as e:
            outcomes["specialize"] += 1
            with pytest.raises(vm.BytecodeError) as walked:
                walked_layout(prog, [a.shape for a in arrays], params)
            assert str(walked.value) == str(e), vm.disassemble(prog)
            continue
        layout = (spec.registers, spec.registers_end, spec.views)
        walk = table_walk(prog, spec, [a.shape for a in arrays], params)
        assert walk == layout, vm.disassemble(prog)
        walked = walked_layout(prog, [a.shape for a in arrays], params)
        assert walked == layout, vm.disassemble(prog)
        vm.launch(spec, arrays)
        for raw, before in guards:
            assert np.array_equal(raw[:GUARD], before[:GUARD]), vm.disassemble(prog)
            assert np.array_equal(raw[-GUARD:], before[-GUARD:]), vm.disassemble(prog)
        outcomes["ran"] += 1
    # the fuzzer must exercise all three outcomes, or it tests nothing
    assert all(v > MUTATIONS // 50 for v in outcomes.values()), outcomes


def test_seeds_run_clean() -> None:
    rng = np.random.default_rng(7)
    for text in SEEDS:
        prog = vm.load(vm.encode(vm.assemble(text)))
        for _ in range(5):
            arrays, guards = guarded_args(rng, prog)
            try:
                spec = vm.specialize(prog, [a.shape for a in arrays], [2] * prog.n_params)
            except vm.BytecodeError as e:
                # random dims may not fit the program's assumptions (e.g. matmul K)
                assert e.reason in {"view out of bounds", "mma inner dims differ"}, e
                continue
            vm.launch(spec, arrays)
            for raw, before in guards:
                assert np.array_equal(raw[:GUARD], before[:GUARD])
                assert np.array_equal(raw[-GUARD:], before[-GUARD:])


def test_fuzz_first_launch_without_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same mutations through an unplanned launch (a lazily specialized program's
    first launch, see `unplanned.py`): it raises BytecodeError or runs without touching
    memory outside the arrays; and where it runs, a planned launch gives the same
    results or refuses the program when planning it."""
    monkeypatch.setattr(planner_module, "MAX_PLAN_NODES", 2000)
    rng = np.random.default_rng(int(os.environ.get("DVM_FUZZ_SEED", "2025")))
    seeds = [vm.encode(vm.assemble(t)) for t in SEEDS]
    starts = [_code_start(d) for d in seeds]
    outcomes = {"load": 0, "refused": 0, "ran": 0, "same": 0}
    for _ in range(max(MUTATIONS // 2, 1)):
        i = int(rng.integers(len(seeds)))
        try:
            prog = vm.load(mutate(rng, seeds[i], starts[i]))
        except vm.BytecodeError:
            outcomes["load"] += 1
            continue
        arrays, guards = guarded_args(rng, prog)
        params = [int(p) for p in rng.integers(-1, 5, prog.n_params)]
        shapes = [a.shape for a in arrays]
        inputs = [a.copy() for a in arrays]
        try:
            lazy = vm.specialize(prog, shapes, params, max_steps=20_000, lazy=True)
            vm.launch(lazy, arrays)
        except vm.BytecodeError:
            outcomes["refused"] += 1
            continue
        finally:
            for raw, before in guards:
                assert np.array_equal(raw[:GUARD], before[:GUARD]), vm.disassemble(prog)
                assert np.array_equal(raw[-GUARD:], before[-GUARD:]), vm.disassemble(prog)
        outcomes["ran"] += 1
        unplanned = [a.copy() for a in arrays]
        for a, x in zip(arrays, inputs, strict=True):
            a[...] = x
        try:  # the second launch plans (with the same tiles: these arrays are small)
            vm.launch(lazy, arrays)
        except vm.BytecodeError:
            continue
        for got, want in zip(arrays, unplanned, strict=True):
            np.testing.assert_array_equal(got, want, err_msg=vm.disassemble(prog))
        outcomes["same"] += 1
    assert all(v > MUTATIONS // 100 for v in outcomes.values()), outcomes
