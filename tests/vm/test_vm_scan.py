"""The VM's `scan`: a running sum or product along one axis, carried across chunks."""

from __future__ import annotations

import numpy as np
import pytest

from dvm import vm
from dvm.vm.isa import DTYPE_BY_TEXT

# rows of a0 in grid tiles of 4, each row walked in chunks of 4 (a loop) from a carry
SCAN = """\
arg a0 T 2
arg a1 T 2
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = 4
slot s3 = s0 s2 ceildiv
slot s4 = 0
slot s5 = 1
slot s6 = s1 s2 ceildiv
slot s7 = 256
slot s8 = 512
grid s3
reg r0 T (s2, s5) at s4
reg r1 T (s2, s2) at s7
reg r2 T (s2, s2) at s8
view v0 a0 offset s4 (s0 s1 g0 s2) (s1 s5 l0 s2)
view v1 a1 offset s4 (s0 s1 g0 s2) (s1 s5 l0 s2)
fill r0, INIT, (v0[0], s5)
loop s6
load r1, v0
scan r2, r1, r0, KIND, {1}, FLAGS
store v1, r2
endloop
"""


def program(dtype: str = "f64", kind: str = "sum", exclusive: bool = False) -> str:
    text = SCAN.replace(" T ", f" {dtype} ").replace("KIND", kind)
    text = text.replace("INIT", "#0.0" if kind == "sum" else "#1.0")
    return text.replace("FLAGS", "[exclusive]" if exclusive else "[]")


def running(x: np.ndarray, add: bool, exclusive: bool) -> np.ndarray:
    """numpy's cumsum/cumprod along rows in x's dtype, shifted for `exclusive`."""
    out = (np.add if add else np.multiply).accumulate(x, axis=1, dtype=x.dtype)
    if exclusive:
        out = np.concatenate([np.full_like(out[:, :1], 0 if add else 1), out[:, :-1]], axis=1)
    return out


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("kind", ["sum", "prod"])
@pytest.mark.parametrize("dtype", ["f64", "f32", "i32", "ui8"])
@pytest.mark.parametrize("shape", [(1, 1), (5, 7), (13, 301), (3, 0), (0, 3)])
def test_scan_carries_across_chunks_in_order(
    shape: tuple[int, int], dtype: str, kind: str, exclusive: bool
) -> None:
    """Chunk tails and grid tails, planned and unplanned: the bits of one accumulate
    over the whole row (a float sum is not reassociated), integers wrapping."""
    loaded = vm.load(vm.encode(vm.assemble(program(dtype, kind, exclusive))))
    np_dtype = DTYPE_BY_TEXT[dtype].np
    rng = np.random.default_rng(7)
    if np_dtype.kind == "f":
        x = rng.standard_normal(shape) if kind == "sum" else rng.uniform(0.9, 1.1, shape)
    else:
        x = rng.integers(0, 4, shape)
    x = x.astype(np_dtype)
    want = running(x, kind == "sum", exclusive)
    for _ in range(3):  # the first launch runs unplanned, the next ones planned
        out = np.full(shape, 99, np_dtype)
        if out.size:
            vm.launch(loaded, [x, out])
        else:
            out = want
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (program("i1"), "dtype mismatch"),
        (program(kind="max"), "unknown reduce kind"),
        (program().replace("{1}", "{0,1}"), "axis out of range"),
        (program().replace("{1}", "{2}"), "axis out of range"),
        (program().replace("scan r2, r1, r0", "scan r0, r1, r0"), "overlaps its carry"),
    ],
)
def test_the_validator_rejects_a_bad_scan(text: str, reason: str) -> None:
    with pytest.raises((vm.BytecodeError, vm.AsmError), match=reason):
        vm.load(vm.encode(vm.assemble(text)))


def test_a_carry_of_the_wrong_shape_is_an_error_at_launch() -> None:
    text = (
        program().replace("(v0[0], s5)", "(v0[0], s2)").replace("(s2, s5) at s4", "(s2, s2) at s4")
    )
    loaded = vm.load(vm.encode(vm.assemble(text)))
    for _ in range(2):  # unplanned, then planned
        with pytest.raises(vm.BytecodeError, match="scan carry shape mismatch"):
            vm.launch(loaded, [np.ones((5, 7)), np.zeros((5, 7))])
