"""The compiler-facing API: Python-built programs, the ISA table, text, launch options."""

from __future__ import annotations

import importlib
import json
import mmap
import os
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
import vm_programs as P

import dvm.vm as vm
from dvm.vm import DType, Extent, Index, Instr, Register, Scalar, Slot, Tok, View, ViewDim
from dvm.vm.isa import ExprOp
from dvm.vm.kernels import QUIET
from dvm.vm.static import static_info


def scale_program() -> vm.Program:
    """out = x * p0 + 1 over a 1-D grid of 8-element tiles, built with the constructors."""
    return vm.Program(
        args=(vm.Arg(DType.F32, 1), vm.Arg(DType.F32, 1)),
        n_params=1,
        slots=(
            Slot((Tok.dim(0, 0),)),  # s0 = n
            Slot((Tok.const(8),)),  # s1 = tile
            Slot((Tok.slot(0), Tok.slot(1), Tok.binop(ExprOp.CEILDIV))),  # s2 = tiles
            Slot((Tok.const(0),)),  # s3
            Slot((Tok.const(1),)),  # s4
            Slot((Tok.param(0),)),  # s5 = caller's int
        ),
        grid=(2,),
        registers=(Register(DType.F32, (1,), offset=3),),
        views=(
            View(0, 3, (ViewDim(0, 4, Index.grid(0), 1),)),
            View(1, 3, (ViewDim(0, 4, Index.grid(0), 1),)),
        ),
        code=(
            Instr.of("load", 0, 0),
            Instr.of("mul.rs", 0, 0, Scalar.slot(5)),
            Instr.of("add.rs", 0, 0, 1.0),
            Instr.of("store", 1, 0),
        ),
    )


def test_python_built_program_runs_and_round_trips() -> None:
    prog = scale_program()
    data = vm.encode(prog)
    assert vm.decode(data) == prog
    assert vm.assemble(vm.disassemble(prog)) == prog
    x = np.arange(21, dtype=np.float32)
    y = np.zeros_like(x)
    vm.launch(prog, [x, y], params=[3])
    np.testing.assert_array_equal(y, x * 3 + 1)


def test_unvalidated_python_program_is_validated_on_specialize() -> None:
    bad = scale_program()
    bad = vm.Program(bad.args, bad.n_params, bad.slots, bad.grid, bad.registers, bad.views,
                     (Instr.of("load", 5, 0),))  # fmt: skip
    with pytest.raises(vm.BytecodeError, match="register index out of range"):
        vm.specialize(bad, [(4,), (4,)], [1])
    with pytest.raises(vm.BytecodeError) as e:
        vm.check(bad)
    assert e.value.offset == vm.decode(vm.encode(bad)).offsets.code[0]  # type: ignore[union-attr]


def test_prepare_leaves_a_first_launch_no_code_to_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """After `prepare`, the first launch at a new shape generates no code (the slot,
    fast-path and unplanned launch functions exist): it pays only for its shape."""
    prog = vm.prepare(vm.load(vm.encode(vm.assemble(P.layernorm(False)))), vm.DeviceSpec.host())
    built: list[str] = []
    for module, name in [
        ("dvm.vm.slots", "compile_slots"),
        ("dvm.vm.specialize", "compile_fast"),
        ("dvm.vm.unplanned", "Launcher"),
    ]:
        # (by module object: `dvm.vm.specialize` also names the function)
        monkeypatch.setattr(sys.modules[module], name, lambda *a, name=name: built.append(name))
    x = np.ones((5, 16), np.float32)
    out = np.empty_like(x)
    spec = vm.specialize(prog, [x.shape, (16,), (16,), out.shape], lazy=True)
    vm.launch(spec, [x, x[0], x[0], out])
    assert built == []
    assert not spec.planned  # the launch ran unplanned, its launcher built by `prepare`


def test_the_slot_table_alone_is_compiled_only_when_called(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Specializing computes the slots in the fast path: a program prepared and
    launched never compiles its slot table alone, which a caller of `slot_fn` gets
    compiled then, giving the slots the launch used."""
    slots_module = importlib.import_module("dvm.vm.slots")
    compile_slots = slots_module.compile_slots
    compiled: list[str] = []

    def counted(*args: object) -> object:
        compiled.append("slots")
        return compile_slots(*args)

    monkeypatch.setattr(slots_module, "compile_slots", counted)
    prog = vm.prepare(vm.load(vm.encode(vm.assemble(P.layernorm(False)))), vm.DeviceSpec.host())
    x = np.ones((5, 16), np.float32)
    shapes = [x.shape, (16,), (16,), x.shape]
    spec = vm.specialize(prog, shapes, lazy=True)
    vm.launch(spec, [x, x[0], x[0], np.empty_like(x)])
    assert compiled == []
    assert static_info(prog).slot_fn(shapes, (), spec.cores) == spec.slots
    assert compiled == ["slots"]


def test_launches_map_the_memory_their_registers_reach() -> None:
    """A launch maps the local memory its registers reach before its tiles use them (a
    tile would otherwise pay the page faults): an unplanned one on the calling thread,
    all its registers in core 0's memory; a planned one, the register views each core
    binds, in that core's. `prepare` maps none of it. The mapped part only grows, and
    every result is right."""
    memory_module = importlib.import_module("dvm.vm.memory")
    device = vm.DeviceSpec(2, 2, 256 << 10, 64, name="mapped-as-reached", cube_memory_bytes=1 << 20)
    memory = memory_module.device_memory(device)
    program = vm.prepare(vm.load(vm.encode(vm.assemble(P.layernorm(False)))), device)
    assert memory.touched == [0, 0]
    rng = np.random.default_rng(0)
    mapped = []
    for rows, cols, planned in [(5, 16, False), (40, 64, False), (5, 8, False), (40, 256, True)]:
        x = rng.standard_normal((rows, cols), dtype=np.float32)
        w, b = np.ones(cols, np.float32), np.zeros(cols, np.float32)
        out = np.empty_like(x)
        shapes = [x.shape, w.shape, b.shape, out.shape]
        spec = vm.specialize(program, shapes, device=device, lazy=True)
        vm.launch(spec, [x, w, b, out], cores=1 if planned else None)
        assert spec.planned == planned
        mean, var = x.mean(1, keepdims=True), x.var(1, keepdims=True)
        np.testing.assert_allclose(out, (x - mean) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-4)
        mapped.append(memory.touched[0])
        if planned:  # what its bound registers reach, at most all of them
            assert mapped[-2] < memory.touched[0] <= spec.registers_end
        else:
            assert memory.touched[0] == max([spec.registers_end, *mapped[:-1]])
        assert memory.touched[1] == 0  # one core ran them all
    assert 0 < mapped[0] < mapped[1] == mapped[2] < mapped[3] < 256 << 10


IN_PLACE_MATMUL = """\
arg a0 f32 2
arg a1 f32 2
arg a2 f32 2
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = dim(a1,1)
slot s3 = 1
slot s4 = 0
slot s5 = 16
slot s6 = s0 s5 ceildiv
slot s7 = s5 s1 mul 4 mul
slot s8 = s1 s2 mul 4 mul s7 add
grid s6
reg r0 f32 (s5, s1) at s4
reg r1 f32 (s1, s2) at s7
reg r2 f32 (s5, s2) at s8
view v0 a0 offset s4 (s0 s1 g0 s5) (s1 s3)
view v1 a1 offset s4 (s1 s2) (s2 s3)
view v2 a2 offset s4 (s0 s2 g0 s5) (s2 s3)
load r0, v0
load r1, v1
mma r2, r0, r1, []
store v2, r2
"""


def test_reach_maps_the_bytes_asked_for_and_never_refills() -> None:
    """`reach` from a start maps those bytes only; a later reach over them and the gaps
    around maps the gaps and leaves what is mapped (a register's data) as it is."""
    memory_module = importlib.import_module("dvm.vm.memory")
    device = vm.DeviceSpec(1, 1, 64 << 10, 64, name="reach-ranges", cube_memory_bytes=64 << 10)
    memory = memory_module.DeviceMemory(device, 1)
    buffer = memory.buffers[0]
    memory.reach(3000, core=0, start=2000)
    memory.reach(9000, core=0, start=8000)
    assert memory.mapped[0] == [(2000, 3000), (8000, 9000)] and memory.touched[0] == 0
    buffer[2000:3000] = 7  # data in the mapped registers
    buffer[8000:9000] = 9
    memory.reach(8500, core=0)
    assert memory.mapped[0] == [(0, 9000)] and memory.touched[0] == 9000
    assert (buffer[2000:3000] == 7).all() and (buffer[8000:9000] == 9).all()
    memory.reach(100, core=0, start=50)  # inside the mapped prefix: nothing to do
    assert memory.mapped[0] == [(0, 9000)]


def anon_huge_kib(start: int, end: int) -> int:
    """AnonHugePages (KiB) of this process's mappings that overlap [start, end)."""
    inside, huge = False, 0
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):  # a mapping's address range
                lo, hi = (int(bound, 16) for bound in head.split("-"))
                inside = lo < end and start < hi
            elif inside and head == "AnonHugePages:":
                huge += int(line.split()[1])
    return huge


def test_local_memory_is_zero_and_mapped_in_base_pages() -> None:
    """A local memory buffer starts zeroed, and where the system has madvise, touching
    all of it maps no transparent huge page (each first touch of a register would
    zero a whole 2 MiB page)."""
    memory_module = importlib.import_module("dvm.vm.memory")
    buffer = memory_module.zeroed_without_huge_pages(8 << 20)
    assert buffer.dtype == np.uint8 and buffer.size == 8 << 20 and not buffer.any()
    buffer.fill(1)
    if not hasattr(mmap, "MADV_NOHUGEPAGE") or not os.path.exists("/proc/self/smaps"):
        pytest.skip("no madvise or no /proc/self/smaps")
    assert anon_huge_kib(buffer.ctypes.data, buffer.ctypes.data + buffer.size) == 0


ADDMM = IN_PLACE_MATMUL.replace(
    "mma r2, r0, r1, []\nstore v2, r2", "mma r2, r0, r1, []\nadd r2, r2, r2\nstore v2, r2"
)


def matmul_on_a_fresh_device(
    text: str, name: str
) -> tuple[Any, Any, np.ndarray, np.ndarray, np.ndarray]:
    """A 2-core device of its own (`name`: its memory is fresh), the program `text`
    specialized there for a 64x64 by 64x64 product, seeded operands and an output."""
    device = vm.DeviceSpec(2, 2, 64 << 10, 64, name=name, cube_memory_bytes=1 << 20)
    memory = importlib.import_module("dvm.vm.memory").device_memory(device)
    program = vm.load(vm.encode(vm.assemble(text)))
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((64, 64), dtype=np.float32) for _ in range(2))
    out = np.empty((64, 64), np.float32)
    spec = vm.specialize(program, [a.shape, b.shape, out.shape], device=device)
    return memory, spec, a, b, out


def test_a_register_past_in_place_operands_maps_its_own_bytes() -> None:
    """A planned matmul whose operands are read in place but whose product is a register
    (an op follows the mma) maps that register's bytes only, not the operand registers'
    span (at 536x3419x706, 13 MiB per core whose faults cost a first call several times
    its gemm). The specialization places the product below the operands, which the
    program placed first: every shape's product then reuses the pages mapped first."""
    memory, spec, a, b, out = matmul_on_a_fresh_device(ADDMM, "register-past-operands")
    assert spec.registers == ((4 << 10, 16 * 64), (8 << 10, 64 * 64), (0, 16 * 64))
    vm.launch(spec, [a, b, out], cores=1)
    np.testing.assert_allclose(out, 2 * (a @ b), rtol=1e-5, atol=1e-4)
    assert memory.mapped[0] == [(0, 4 << 10)] and memory.touched == [4 << 10, 0]


def test_an_unplanned_matmul_maps_its_product_register_only() -> None:
    """A first launch, unplanned, reads the operands in place as a planned one does, and
    maps as little: its product register's bytes, not the operand registers'."""
    memory, spec, a, b, out = matmul_on_a_fresh_device(ADDMM, "unplanned-past-operands")
    first = vm.Specializer(spec.program, spec.device)([a.shape, b.shape, out.shape])
    vm.launch(first, [a, b, out])
    assert not first.planned
    np.testing.assert_allclose(out, 2 * (a @ b), rtol=1e-5, atol=1e-4)
    assert memory.mapped[0] == [(0, 4 << 10)] and memory.touched == [4 << 10, 0]


def test_new_shapes_of_a_matmul_reuse_the_pages_its_product_mapped() -> None:
    """The product register is placed first at every shape (the operands' registers,
    read in place, after it), so a new shape whose product is no larger than one before
    maps no new page of cube memory, where the program placed it above the operands'
    registers, at an offset each inner dim moved."""
    memory, spec, a, b, out = matmul_on_a_fresh_device(ADDMM, "products-reuse-pages")
    for k in (64, 48, 32):  # the operands' registers shrink, the product's stays
        x, y = a[:, :k].copy(), b[:k].copy()
        first = vm.Specializer(spec.program, spec.device)([x.shape, y.shape, out.shape])
        vm.launch(first, [x, y, out])
        np.testing.assert_allclose(out, 2 * (x @ y), rtol=1e-5, atol=1e-4)
        assert memory.mapped[0] == [(0, 4 << 10)]


def test_an_unplanned_matmul_writing_the_output_tile_maps_no_local_memory() -> None:
    """A first launch, unplanned, whose mma writes the store's tile directly (nothing
    follows it) never writes its product register, so it maps none of the cube memory
    (a new shape's first call paid for those pages); one whose output is also an operand
    copies the operands into their registers, which it maps."""
    memory, spec, a, b, out = matmul_on_a_fresh_device(IN_PLACE_MATMUL, "unplanned-in-place")
    first = vm.Specializer(spec.program, spec.device)([a.shape, b.shape, out.shape])
    vm.launch(first, [a, b, out])
    assert not first.planned
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-4)
    assert memory.mapped == [[], []] and memory.touched == [0, 0]
    expected = a @ b
    again = vm.Specializer(spec.program, spec.device)([a.shape, b.shape, a.shape])
    vm.launch(again, [a, b, a])  # the output overwrites an operand: loads copy
    np.testing.assert_allclose(a, expected, rtol=1e-5, atol=1e-4)
    assert memory.mapped[0] == [(4 << 10, 24 << 10)]  # r0 and r1, above the product's


def test_a_matmul_reading_in_place_maps_no_local_memory() -> None:
    """A planned matmul whose loads read its operands in place and whose mma writes the
    output tile directly binds no register, so it maps none of the cube memory its
    registers' offsets span (at a large shape, that part's page faults cost a first
    call more than the gemm); one whose output is also an operand copies the operands
    into its registers, which it maps first."""
    memory, spec, a, b, out = matmul_on_a_fresh_device(IN_PLACE_MATMUL, "in-place-matmul")
    for cores in (1, 2):
        vm.launch(spec, [a, b, out], cores=cores)
        np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-4)
    assert memory.touched == [0, 0] and spec.registers_end == 24 << 10
    expected = a @ b
    vm.launch(spec, [a, b, a], cores=1)  # the output overwrites an operand: loads copy
    np.testing.assert_allclose(a, expected, rtol=1e-5, atol=1e-4)
    assert memory.mapped[0] == [(4 << 10, 24 << 10)]  # r0 and r1, above the product's


SMALL_LAUNCHES = """\
import sys, threading
import numpy as np
import dvm.vm as vm
program = vm.prepare(vm.load(vm.encode(vm.assemble(sys.argv[1]))), vm.DeviceSpec.host())
x = np.ones((5, 16), np.float32)
for cores in (None, 1):  # unplanned, then planned on the calling thread
    vm.launch(program, [x, x[0], x[0], np.empty_like(x)], cores=cores)
assert threading.active_count() == 1, threading.enumerate()
"""


def test_launches_on_the_calling_thread_start_no_worker() -> None:
    """A process whose launches all run on the calling thread starts none of the
    pool's threads (starting one waits for it to run)."""
    command = [sys.executable, "-c", SMALL_LAUNCHES, P.layernorm(False)]
    subprocess.run(command, check=True, timeout=300)


LATER_IMPORTS = """\
import importlib, sys
import dvm.vm as vm
program = vm.check(vm.load(vm.encode(vm.assemble(sys.argv[1]))))  # decoded, validated
later = {"dvm.vm.launch", "dvm.vm.specialize", "dvm.vm.planned", "dvm.vm.unplanned"}
assert not later & set(sys.modules), later & set(sys.modules)
importlib.import_module("dvm.vm.specialize")  # a module named as its function, first
from dvm.vm import launch
assert [vm.specialize.__module__, launch.__module__] == ["dvm.vm.specialize", "dvm.vm.launch"]
assert [vm.specialize.__name__, launch.__name__] == ["specialize", "launch"]
assert vm.launch is launch and vm.Specializer is sys.modules["dvm.vm.specialize"].Specializer
"""


def test_the_package_imports_the_launcher_at_first_use() -> None:
    """`import dvm.vm` loads what decodes and validates programs, not what specializes
    and launches them (the modules a compile cache hit needs not); `vm.launch` and
    `vm.specialize` are the functions whichever module was imported first."""
    command = [sys.executable, "-c", LATER_IMPORTS, P.layernorm(False)]
    subprocess.run(command, check=True, timeout=300)


def test_unplanned_launches_until_one_is_not() -> None:
    """Only a specialization's first launch runs unplanned unless the caller asks again
    with `unplanned` (more launches for the request that met the shape); each launch
    gives the same result."""
    prog = vm.prepare(vm.load(vm.encode(vm.assemble(P.layernorm(False)))), vm.DeviceSpec.host())
    x = np.random.default_rng(0).standard_normal((5, 16), dtype=np.float32)
    spec = vm.specialize(prog, [x.shape, (16,), (16,), x.shape], lazy=True)
    outs = []
    for unplanned in (False, True, True, False):
        outs.append(np.empty_like(x))
        vm.launch(spec, [x, x[0], x[1], outs[-1]], unplanned=unplanned)
        assert spec.planned == (len(outs) == 4)
    for out in outs[1:]:
        np.testing.assert_allclose(out, outs[0], rtol=1e-6, atol=1e-6)


def test_isa_table_is_consistent() -> None:
    codes = [d.code for d in vm.OPCODES]
    assert len(codes) == len(set(codes)) and all(0 <= c < 256 for c in codes)
    assert len({d.name for d in vm.OPCODES}) == len(codes)
    for name in ["load", "store", "store_acc", "select", "convert", "broadcast", "fill"]:
        assert name in vm.BY_NAME
    for name in ["reduce", "mma", "copy", "loop", "endloop", "rsqrt", "erf", "isfinite"]:
        assert name in vm.BY_NAME
    for op in ["add", "sub", "div", "pow", "logical_or", "ge"]:
        assert {op, op + ".rs", op + ".sr"} <= set(vm.BY_NAME)


@pytest.mark.parametrize(
    "text",
    [
        P.elementwise_chain(),
        P.elementwise_chain(tile=P.SHARED_ROWS),  # a `cores` leaf
        P.layernorm(),
        P.layernorm(False),
        P.column_stats(),
        P.addmm_relu(),
        P.addmm_relu(transpose_b=True),
        P.transpose_broadcast(),
    ],
)
def test_text_binary_text_round_trip(text: str) -> None:
    data = vm.encode(vm.assemble(text))
    assert vm.disassemble(data) == text
    assert vm.encode(vm.decode(data)) == data


def test_disassembler_offsets_and_comments() -> None:
    data = vm.encode(vm.assemble(P.addmm_relu()))
    text = vm.disassemble(data, offsets=True)
    assert "  ; @" in text
    assert vm.disassemble(vm.assemble(text)) == P.addmm_relu()


def test_assembler_errors_name_the_line() -> None:
    with pytest.raises(vm.AsmError, match="line 2"):
        vm.assemble("arg a0 f32 1\nfrobnicate r0\n")
    with pytest.raises(vm.AsmError, match="line 1"):
        vm.assemble("add r0, r1\n")


def test_slot_arithmetic_never_raises() -> None:
    text = """\
arg a0 f32 1
params 0
slot s0 = dim(a0,0)
slot s1 = 7 s0 floordiv
slot s2 = 7 s0 ceildiv
slot s3 = 7 s0 mod
slot s4 = -7 2 floordiv
slot s5 = -7 2 ceildiv
slot s6 = -7 2 mod
slot s7 = 3 -4 min 9 max
slot s8 = 1
grid s8
"""
    spec = vm.specialize(vm.load(vm.encode(vm.assemble(text))), [(0,)])
    assert spec.slots == (0, 0, 0, 0, -4, -3, 1, 9, 1)


def test_stats_and_chrome_trace() -> None:
    prog = vm.load(vm.encode(vm.assemble(P.layernorm())))
    x = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    w, b = np.ones(32, np.float32), np.zeros(32, np.float32)
    y = np.empty_like(x)
    st = vm.launch(prog, [x, w, b, y], params=[16], stats=True, trace=True)
    assert st is not None and st.tiles == 4
    assert st.instructions["reduce"] == 8 and st.instructions["store"] == 4
    assert st.bytes_written == y.nbytes
    assert st.bytes_read == x.nbytes + 4 * (w.nbytes + b.nbytes)
    assert 0 < st.peak_local_memory <= vm.DeviceSpec.host().local_memory_bytes
    assert st.numpy_s > 0 and st.wall_s > 0
    trace = json.loads(st.chrome_trace())
    assert len(trace["traceEvents"]) == st.total_instructions
    assert {e["ph"] for e in trace["traceEvents"]} == {"X"}
    assert vm.launch(prog, [x, w, b, y], params=[16]) is None


def test_a_known_shapes_direct_launch_keeps_every_check() -> None:
    """After its first launches a known shape's launch is one bound closure; it still
    refuses what does not fit, and runs again after a refusal."""
    prog = vm.load(vm.encode(vm.assemble(P.elementwise_chain())))
    spec = vm.specialize(prog, [(4, 4), (4, 4)])
    x, y = np.ones((4, 4), np.float32), np.empty((4, 4), np.float32)
    for _ in range(3):
        vm.launch(spec, [x, y])
    assert spec.ready[False] is not None or spec.ready[True] is not None
    want = y.copy()
    ro = np.ones((4, 4), np.float32)
    ro.flags.writeable = False
    with pytest.raises(vm.LaunchError, match="read-only"):
        vm.launch(spec, [x, ro])
    with pytest.raises(vm.LaunchError, match="C-contiguous"):
        vm.launch(spec, [x, np.ones((4, 8), np.float32)[:, ::2]])
    with pytest.raises(vm.LaunchError, match="a1"):
        vm.launch(spec, [x, np.ones((4, 4), np.float64)])
    y[...] = 0
    vm.launch(spec, [x, y])
    np.testing.assert_array_equal(y, want)


def test_launch_errors() -> None:
    prog = vm.load(vm.encode(vm.assemble(P.elementwise_chain())))
    x = np.ones((4, 4), np.float32)
    with pytest.raises(vm.LaunchError, match="a1"):
        vm.launch(vm.specialize(prog, [(4, 4), (4, 4)]), [x, np.ones((4, 4), np.float64)])
    with pytest.raises(vm.LaunchError, match="C-contiguous"):
        vm.launch(vm.specialize(prog, [(4, 4), (4, 4)]), [x, np.ones((4, 8), np.float32)[:, ::2]])
    spec, y = vm.specialize(prog, [(4, 4), (4, 4)]), np.empty((4, 4), np.float32)
    with pytest.raises(vm.LaunchError, match="takes 2 arguments, got 1"):
        vm.launch(spec, [x])
    with pytest.raises(vm.LaunchError, match=r"a0: expected f32\[4, 4\], got float32\[4, 5\]"):
        vm.launch(spec, [np.ones((4, 5), np.float32), y])  # not the specialization's shape
    with pytest.raises(vm.LaunchError, match="a0: expected a numpy array, got list"):
        vm.launch(spec, [x.tolist(), y])
    with pytest.raises(vm.LaunchError, match="a0: expected f32"):
        vm.launch(spec, [x.astype(">f4"), y])  # equal-sized but byte-swapped
    ro = np.ones((4, 4), np.float32)
    ro.flags.writeable = False
    with pytest.raises(vm.LaunchError, match="read-only"):
        vm.launch(prog, [x, ro])
    with pytest.raises(ValueError, match="rank"):
        vm.specialize(prog, [(4,), (4, 4)])


def test_in_place_launch_disables_alias_loads() -> None:
    """When an input shares memory with an output, loads must copy instead of alias."""
    prog = vm.load(vm.encode(vm.assemble(P.elementwise_chain(tile=4))))
    x = np.arange(64, dtype=np.float32).reshape(8, 8) / 64
    want = np.tanh(np.exp(-np.abs(x)) * np.float32(2.5) + x)
    spec = vm.specialize(prog, [(8, 8), (8, 8)])
    vm.launch(spec, [x, x])  # in place: each tile is read before it is written
    np.testing.assert_allclose(x, want, rtol=1e-6)
    assert [ex.alias for ex in spec.executables.values()] == [False]
    vm.launch(spec, [want.copy(), np.empty_like(x)])
    assert sorted(ex.alias for ex in spec.executables.values()) == [False, True]


def test_device_presets() -> None:
    host = vm.DeviceSpec.host()
    assert host.vector_cores >= 1 and host.local_memory_bytes >= 64 * 1024
    npu = vm.DeviceSpec.ascend910b()
    assert (npu.vector_cores, npu.cube_cores, npu.local_memory_bytes) == (48, 24, 192 * 1024)
    assert npu.alignment == 32
    prog = vm.load(vm.encode(vm.assemble(P.layernorm(False))))
    x = np.ones((40, 8), np.float32)
    w, b, y = np.ones(8, np.float32), np.zeros(8, np.float32), np.empty((40, 8), np.float32)
    vm.launch(prog, [x, w, b, y], device=npu)
    np.testing.assert_allclose(y, 0, atol=1e-6)
    tiny = vm.DeviceSpec(1, 1, 1024, 64, 32)
    with pytest.raises(vm.BytecodeError, match="register exceeds local memory"):
        vm.specialize(prog, [(40, 8), (8,), (8,), (40, 8)], device=tiny)


def test_cube_programs_live_in_cube_memory() -> None:
    """A program with an mma places its registers in the cube memory, a vector
    program in the local memory; either is rejected when its registers exceed it."""
    host, npu = vm.DeviceSpec.host(), vm.DeviceSpec.ascend910b()
    assert host.memory_bytes(cube=True) >= host.memory_bytes(cube=False)
    assert npu.memory_bytes(cube=True) == 512 * 1024  # the 910B cube core's L1 buffer
    assert vm.DeviceSpec(1, 1, 1024).memory_bytes(cube=True) == 1024  # none given: the same
    # 64x64 tiles of A, B and the accumulator: 3 x 16 KiB + the bias row
    prog = vm.load(vm.encode(vm.assemble(P.addmm_relu(64, 64, 64))))
    shapes = [(128, 64), (64, 128), (128,), (128, 128)]
    small = vm.DeviceSpec(2, 2, 16 * 1024, 64, 32, "small", cube_memory_bytes=32 * 1024)
    with pytest.raises(vm.BytecodeError, match="register exceeds cube memory"):
        vm.specialize(prog, shapes, device=small)
    roomy = vm.DeviceSpec(2, 2, 16 * 1024, 64, 32, "roomy", cube_memory_bytes=64 * 1024)
    rng = np.random.default_rng(0)
    a, b, bias = (rng.standard_normal(s).astype(np.float32) for s in shapes[:3])
    out = np.empty((128, 128), np.float32)
    vm.launch(prog, [a, b, bias, out], device=roomy)  # over the local memory: fits cube memory
    np.testing.assert_allclose(out, np.maximum(a @ b + bias, 0), rtol=1e-4, atol=1e-4)
    vector = vm.load(vm.encode(vm.assemble(P.layernorm(False))))
    with pytest.raises(vm.BytecodeError, match="register exceeds local memory"):
        vm.specialize(
            vector,
            [(40, 8), (8,), (8,), (40, 8)],
            device=vm.DeviceSpec(1, 1, 1024, 64, 32, "v", 1 << 20),
        )


def test_fill_shape_from_registers_and_views() -> None:
    """fill/broadcast shapes follow tail tiles through v[d] and r[d] extents."""
    text = P.transpose_broadcast(tile=4).replace(
        "load r1, v1\n", "load r1, v1\nfill r1, #2.0, (r0[0], v0[1])\n"
    )
    prog = vm.load(vm.encode(vm.assemble(text)))
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    out = np.zeros((6, 5), np.float32)
    vm.launch(prog, [x, np.zeros(6, np.float32), out])
    np.testing.assert_array_equal(out, x.T + 2)


def test_extent_and_scalar_constructors() -> None:
    assert Extent.view_dim(1, 0).index == 1
    assert Scalar.imm(2).value == 2.0
    assert Instr.of("fill", 0, 1.5, (3, Extent.reg_dim(0, 1))).operands[2][0] == Extent.slot(3)


@pytest.mark.parametrize("private", [True, False], ids=["numpy-private-state", "np-errstate"])
def test_float_errors_never_raise_and_user_error_state_is_kept(
    private: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the first launch and at a known shape's (the closure `spec.ready` keeps),
    whether numpy's private error state is there to swap or not."""
    if not private:
        monkeypatch.setattr(QUIET, "var", None)
    prog = vm.load(vm.encode(vm.assemble(P.single_op("div", "f32", "f32"))))
    spec = vm.specialize(prog, [(4,), (4,), (4,)], lazy=True)
    x = np.array([1, 0, -1, np.inf], np.float32)
    y = np.zeros(4, np.float32)
    for target in (prog, spec, spec, spec):
        out = np.empty(4, np.float32)
        with np.errstate(all="raise"):
            vm.launch(target, [x, y, out])
            assert np.geterr()["divide"] == "raise"
        np.testing.assert_array_equal(out, [np.inf, np.nan, -np.inf, np.inf])
    assert spec.ready != [None, None]  # (the last launches ran it)


def test_concurrent_launches_from_threads() -> None:
    """Launches from several threads share the device's cores one at a time."""
    from concurrent.futures import ThreadPoolExecutor

    prog = vm.load(vm.encode(vm.assemble(P.elementwise_chain(tile=16))))
    rng = np.random.default_rng(5)
    xs = [rng.standard_normal((200 + 37 * i, 64)).astype(np.float32) for i in range(8)]

    def run(x: np.ndarray) -> np.ndarray:
        y = np.empty_like(x)
        for _ in range(3):
            vm.launch(prog, [x, y])
        return y

    with ThreadPoolExecutor(4) as pool:
        for x, y in zip(xs, pool.map(run, xs), strict=True):
            np.testing.assert_allclose(
                y, np.tanh(np.exp(-np.abs(x)) * np.float32(2.5) + x), rtol=1e-6
            )


def test_unencodable_program() -> None:
    p = scale_program()
    bad = vm.Program(p.args, p.n_params, p.slots, p.grid, p.registers, p.views,
                     (Instr.of("load", 70000, 0),))  # fmt: skip
    with pytest.raises(vm.BytecodeError, match="unencodable program") as e:
        vm.encode(bad)
    assert e.value.part == ("instruction", 0)  # the entry at fault, for its op's location
    with pytest.raises(vm.BytecodeError, match="register index out of range") as e:
        vm.check(bad)
    assert e.value.offset == -1
