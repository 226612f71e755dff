"""The VM's `iota`: the index along a view dim of each element of its current tile."""

from __future__ import annotations

import numpy as np
import pytest

from dvm import vm
from dvm.vm.isa import DTYPE_BY_TEXT

IOTA = """\
arg a0 T 2
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = 4
slot s3 = s0 s2 ceildiv
slot s4 = 0
slot s5 = 1
slot s6 = s1 s2 ceildiv
grid s3
reg r0 T (s2, s2) at s4
view v0 a0 offset s4 (s0 s1 g0 s2) (s1 s5 l0 s2)
view v1 a0 offset s4 (s0 s4 g0 s2) (s1 s4 l0 s2)
loop s6
iota r0, v1, {AXIS}
store v0, r0
endloop
"""


def program(dtype: str = "i64", axis: int = 1) -> str:
    return IOTA.replace(" T ", f" {dtype} ").replace("AXIS", str(axis))


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("dtype", ["i64", "i32", "ui8", "f16", "f32"])
@pytest.mark.parametrize("shape", [(1, 1), (5, 7), (13, 300), (0, 3)])
def test_iota_starts_each_tile_where_it_lies(axis: int, dtype: str, shape: tuple[int, int]) -> None:
    """Tiles of a grid axis and of a loop, tails included, planned and unplanned."""
    loaded = vm.load(vm.encode(vm.assemble(program(dtype, axis))))
    np_dtype = DTYPE_BY_TEXT[dtype].np
    along = np.arange(shape[axis]).reshape([-1, 1] if axis == 0 else [1, -1])
    with np.errstate(over="ignore"):
        want = np.broadcast_to(along, shape).astype(np_dtype)
    for _ in range(3):  # the first launch runs unplanned, the next ones planned
        out = np.full(shape, 99, np_dtype)
        vm.launch(loaded, [out])
        np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (program("i1"), "dtype mismatch"),
        (program(axis=2), "axis out of range"),
        (program().replace("{1}", "{0,1}"), "axis out of range"),
        (program().replace("iota r0, v1", "iota r0, v2"), "view"),
    ],
)
def test_the_validator_rejects_a_bad_iota(text: str, reason: str) -> None:
    with pytest.raises((vm.BytecodeError, vm.AsmError), match=reason):
        vm.load(vm.encode(vm.assemble(text)))
