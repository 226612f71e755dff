"""An mma's epilogue that updates its register in place runs in the stored tile."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import dvm.vm as vm

planned = importlib.import_module("dvm.vm.planned")

ADDMM_RELU = """\
arg a0 f32 2
arg a1 f32 2
arg a2 f32 1
arg a3 f32 2
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = dim(a1,1)
slot s3 = 0
slot s4 = 1
slot s5 = s0 s1 mul 4 mul 63 add 64 floordiv 64 mul
slot s6 = s1 s2 mul 4 mul 63 add 64 floordiv 64 mul s5 add
slot s7 = s0 s2 mul 4 mul 63 add 64 floordiv 64 mul s6 add
grid s4
reg r0 f32 (s0, s1) at s3
reg r1 f32 (s1, s2) at s5
reg r2 f32 (s0, s2) at s6
reg r3 f32 (s4, s2) at s7
view v0 a0 offset s3 (s0 s1) (s1 s4)
view v1 a1 offset s3 (s1 s2) (s2 s4)
view v2 a2 offset s3 (s4 s3) (s2 s4)
view v3 a3 offset s3 (s0 s2) (s2 s4)
load r0, v0
load r1, v1
mma r2, r0, r1, []
load r3, v2
add r2, r2, r3
max.rs r2, r2, #0.0
store v3, r2
"""
"""out = max(a @ b + bias, 0) in one tile, the bias loaded between the mma and its epilogue."""

DEVICE = vm.DeviceSpec(1, 1, 64 << 20, name="test-64MiB")


def _operands(rng: np.random.Generator, m: int, k: int, n: int) -> list[np.ndarray]:
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    return [a, b, rng.standard_normal(n).astype(np.float32)]


def _chains(spec: vm.Specialization, alias: bool) -> dict[int, tuple[int, ...]]:
    """The chains the planned executor's core 0 finds in the one tile class."""
    ex = spec.executables[(1, False, alias, 0)]
    core = ex.cores[0]
    ((key, body),) = spec.plan.bodies.items()
    return planned.fused_chains(body, core.fused[key], core)


@pytest.mark.parametrize("rows", [300, 20])
def test_a_large_tile_runs_its_epilogue_in_the_stored_tile(
    rows: int, rng: np.random.Generator
) -> None:
    """From CHAIN_BYTES of output tile, the mma writes the tile and the add and maximum
    update it there (a smaller tile keeps its register); the same results either way,
    and the launch lets go of the tile it pointed its register at."""
    a, b, bias = _operands(rng, rows, 64, 512)
    out = np.full((rows, 512), np.nan, np.float32)
    spec = vm.specialize(
        vm.assemble(ADDMM_RELU), [a.shape, b.shape, bias.shape, out.shape], device=DEVICE
    )
    for _ in range(2):
        vm.launch(spec, [a, b, bias, out], cores=1)
        np.testing.assert_allclose(out, np.maximum(a @ b + bias, 0), rtol=1e-5, atol=1e-4)
    large = rows == 300  # 600 KB of output tile, against 40 KB
    assert large == (out.nbytes >= planned.CHAIN_BYTES)
    assert _chains(spec, True) == ({2: (4, 5)} if large else {})
    core = spec.executables[(1, False, True, 0)].cores[0]
    assert core.alias[2] is None


def test_no_chain_when_the_output_shares_memory_with_what_it_loads(
    rng: np.random.Generator,
) -> None:
    """The mma would write the output before the bias is loaded: with the bias a row of
    the output, the epilogue keeps its register (and the bias its value when read)."""
    a, b, _ = _operands(rng, 300, 64, 512)
    out = np.zeros((300, 512), np.float32)
    out[0] = rng.standard_normal(512).astype(np.float32)
    bias = out[0]
    want = np.maximum(a @ b + bias, 0)
    spec = vm.specialize(
        vm.assemble(ADDMM_RELU), [a.shape, b.shape, bias.shape, out.shape], device=DEVICE
    )
    vm.launch(spec, [a, b, bias, out], cores=1)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)
    assert _chains(spec, False) == {}


def test_a_chain_counts_its_instructions(rng: np.random.Generator) -> None:
    """Instrumented, a chained launch counts every instruction and the elided store's
    bytes, as one without the chain does."""
    a, b, bias = _operands(rng, 300, 64, 512)
    out = np.zeros((300, 512), np.float32)
    spec = vm.specialize(
        vm.assemble(ADDMM_RELU), [a.shape, b.shape, bias.shape, out.shape], device=DEVICE
    )
    st = vm.launch(spec, [a, b, bias, out], stats=True)
    assert st is not None
    assert st.instructions["mma"] == st.instructions["add"] == st.instructions["store"] == 1
    assert st.bytes_written == out.nbytes
    np.testing.assert_allclose(out, np.maximum(a @ b + bias, 0), rtol=1e-5, atol=1e-4)
