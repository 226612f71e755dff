"""Exercise: a VM instruction of a new kind, `argmax dst, src, {axis}`.

Skipped until the ISA table has an `argmax` row (docs/tutorial/06-bytecode-vm.md):
dst (i64, src's rank, 1 along the axis) = the index of the first largest element of
src along the one axis, the first NaN if there is one (numpy's `argmax`), 0 along an
empty axis. It is a category of its own (a register and an axis, no elementwise
typing rule), so the validator, the shape rules and both executors learn it.
"""

from __future__ import annotations

import numpy as np
import pytest

from dvm import vm
from dvm.vm.isa import DTYPE_BY_TEXT

pytestmark = pytest.mark.skipif(
    "argmax" not in vm.BY_NAME, reason="exercise: add the VM instruction argmax"
)

# One tile holds the whole argument (the axis is never split across tiles); r1 lies
# past r0 in local memory.
ARGMAX = """\
arg a0 T 2
arg a1 i64 2
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = 0
slot s3 = 1
slot s4 = dim(a1,0)
slot s5 = dim(a1,1)
slot s6 = 65536
grid s3
reg r0 T (s0, s1) at s2
reg r1 i64 (s4, s5) at s6
view v0 a0 offset s2 (s0 s1) (s1 s3)
view v1 a1 offset s2 (s4 s5) (s5 s3)
load r0, v0
argmax r1, r0, {AXIS}
store v1, r1
"""


def program(dtype: str = "f32", axis: int = 1, out: str = "i64") -> str:
    text = ARGMAX.replace(" T ", f" {dtype} ").replace("AXIS", str(axis))
    return text.replace("a1 i64", f"a1 {out}").replace("r1 i64", f"r1 {out}")


def run(text: str, x: np.ndarray, axis: int) -> list[np.ndarray]:
    """The result of three launches: the first runs unplanned, the next ones planned."""
    loaded = vm.load(vm.encode(vm.assemble(text)))
    shape = tuple(1 if i == axis else n for i, n in enumerate(x.shape))
    results = []
    for _ in range(3):
        out = np.full(shape, 99, np.int64)
        vm.launch(loaded, [x.copy(), out])
        results.append(out)
    return results


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "i32", "i64", "ui8"])
@pytest.mark.parametrize("shape", [(1, 1), (5, 7), (13, 300), (0, 3)])
def test_argmax_matches_numpy(axis: int, dtype: str, shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(7)
    x = rng.integers(0, 5, shape).astype(DTYPE_BY_TEXT[dtype].np)  # many ties
    want = np.argmax(x, axis=axis, keepdims=True) if x.size else None
    for got in run(program(dtype, axis), x, axis):
        if want is not None:
            np.testing.assert_array_equal(got, want)


def test_the_first_nan_wins_as_in_numpy() -> None:
    x = np.array([[1, np.nan, 7, np.nan], [3, 9, 9, 2]], np.float32)
    for got in run(program(), x, 1):
        np.testing.assert_array_equal(got, [[1], [1]])


def test_an_empty_axis_gives_zero() -> None:
    x = np.zeros((4, 0), np.float32)
    for got in run(program(), x, 1):
        np.testing.assert_array_equal(got, np.zeros((4, 1), np.int64))


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (program(out="i32"), "dtype mismatch"),
        (program(axis=2), "axis out of range"),
        (program().replace("{1}", "{0,1}"), "axis out of range"),
        (program().replace("r1 i64 (s4, s5) at", "r1 i64 (s4) at"), "rank mismatch"),
    ],
)
def test_the_validator_rejects_a_bad_argmax(text: str, reason: str) -> None:
    with pytest.raises((vm.BytecodeError, vm.AsmError), match=reason):
        vm.load(vm.encode(vm.assemble(text)))


def test_argmax_is_a_row_of_its_own_block() -> None:
    row = vm.BY_NAME["argmax"]
    assert vm.BY_CODE[row.code] is row
    assert row.cat is not vm.BY_NAME["reduce"].cat
    assert "argmax" in vm.disassemble(vm.encode(vm.assemble(program())))
