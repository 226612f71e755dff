"""The VM's `top_k`: the k largest along one axis, merged chunk by chunk into a carry."""

from __future__ import annotations

import numpy as np
import pytest

from dvm import vm
from dvm.vm.isa import DTYPE_BY_TEXT

# rows of a0 in grid tiles of 4, each row walked in chunks of 4 (a loop) merged
# into a carry of K values (a1) and their i64 indices (a2), stored after the loop
TOP_K = """\
arg a0 T 2
arg a1 T 2
arg a2 i64 2
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = 4
slot s3 = s0 s2 ceildiv
slot s4 = 0
slot s5 = 1
slot s6 = s1 s2 ceildiv
slot s7 = 1024
slot s8 = 2048
slot s9 = 3072
slot s10 = K
grid s3
reg r0 T (s2, s10) at s4
reg r1 i64 (s2, s10) at s7
reg r2 T (s2, s2) at s8
reg r3 i64 (s2, s2) at s9
view v0 a0 offset s4 (s0 s1 g0 s2) (s1 s5 l0 s2)
view v1 a1 offset s4 (s0 s10 g0 s2) (s10 s5)
view v2 a2 offset s4 (s0 s10 g0 s2) (s10 s5)
fill r0, #LOWEST, (v0[0], s10)
fill r1, #9007199254740992.0, (v0[0], s10)
loop s6
load r2, v0
iota r3, v0, {1}
top_k r0, r1, r2, r3, {1}
endloop
store v1, r0
store v2, r1
"""


def program(dtype: str = "f64", k: int = 3) -> str:
    lowest = "-inf" if dtype.startswith("f") else "0" if dtype.startswith("u") else "-128"
    text = TOP_K.replace(" T ", f" {dtype} ").replace("= K\n", f"= {k}\n")
    return text.replace("#LOWEST", f"#{lowest}")


def ranked(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """NaN first, then larger first, equal ones by the lower index."""
    rows = x.astype(np.float64)
    number = ~np.isnan(rows)
    position = np.broadcast_to(np.arange(rows.shape[1]), rows.shape)
    order = np.lexsort((position, np.where(number, -rows, 0), number), axis=-1)[:, :k]
    return np.take_along_axis(x, order, axis=1), order


@pytest.mark.parametrize("k", [1, 3, 8])
@pytest.mark.parametrize("dtype", ["f64", "f16", "i8", "ui8"])
@pytest.mark.parametrize("shape", [(1, 8), (5, 9), (13, 301), (0, 9)])
def test_top_k_merges_chunks_in_order(shape: tuple[int, int], dtype: str, k: int) -> None:
    """Chunk tails and grid tails, ties, NaN and the lowest value (which ties with
    the carry's unfilled places and must win), planned and unplanned."""
    loaded = vm.load(vm.encode(vm.assemble(program(dtype, k))))
    np_dtype = DTYPE_BY_TEXT[dtype].np
    rng = np.random.default_rng(k)
    x = rng.integers(-3, 4, shape).astype(np.float64)
    if np_dtype.kind == "f":
        x[rng.random(shape) < 0.1] = np.nan
        x[rng.random(shape) < 0.2] = -np.inf
    else:
        x[rng.random(shape) < 0.3] = np.iinfo(np_dtype).min
    x = x.astype(np_dtype)
    want_values, want_indices = ranked(x, k)
    for _ in range(3):  # the first launch runs unplanned, the next ones planned
        values, indices = np.zeros((shape[0], k), np_dtype), np.zeros((shape[0], k), np.int64)
        if x.size:
            vm.launch(loaded, [x, values, indices])
            np.testing.assert_array_equal(values, want_values)
            np.testing.assert_array_equal(indices, want_indices)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (program().replace("top_k r0, r1, r2", "top_k r0, r0, r2"), "dtype mismatch"),
        (program().replace("reg r1 i64", "reg r1 i32"), "dtype mismatch"),
        (program().replace("{1}\nendloop", "{0,1}\nendloop"), "axis out of range"),
        (program().replace("{1}\nendloop", "{2}\nendloop"), "axis out of range"),
    ],
)
def test_the_validator_rejects_a_bad_top_k(text: str, reason: str) -> None:
    with pytest.raises((vm.BytecodeError, vm.AsmError), match=reason):
        vm.load(vm.encode(vm.assemble(text)))


def test_a_carry_of_the_wrong_shape_is_an_error_at_launch() -> None:
    text = program().replace(
        "fill r1, #9007199254740992.0, (v0[0], s10)", "fill r1, #0.0, (v0[0], s2)"
    )
    loaded = vm.load(
        vm.encode(vm.assemble(text.replace("reg r1 i64 (s2, s10)", "reg r1 i64 (s2, s2)")))
    )
    for _ in range(2):  # unplanned, then planned
        with pytest.raises(vm.BytecodeError, match="top_k carry shape mismatch"):
            vm.launch(loaded, [np.ones((5, 7)), np.zeros((5, 3)), np.zeros((5, 3), np.int64)])
