"""An elementwise op fused with the store after it writes straight into the stored
view's tile, whose layout is the program's: here every other element of the output,
from every 4th element of the input (an alias load, not copied). numpy 2.4 computes
`negative`, `isnan`, `isinf` and `isfinite` wrongly into such an output
(`kernels.STRIDED_WRONG`); the VM must still give numpy's results, planned and
unplanned."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

import dvm.vm as vm
from dvm.vm.kernels import unit_stride


def every_other(op: str, out_type: str) -> str:
    """y[:, ::2] = op(x[:, ::4]) in tiles of 16 rows; y[:, 1::2] is not written."""
    return f"""\
arg a0 f32 2
arg a1 {out_type} 2
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = dim(a1,1)
slot s3 = s1 4 floordiv
slot s4 = 0
slot s5 = 1
slot s6 = 4
slot s7 = 2
slot s8 = 16
slot s9 = s0 s8 ceildiv
slot s10 = s8 s3 mul 4 mul 63 add 64 floordiv 64 mul
grid s9
reg r0 f32 (s8, s3) at s4
reg r1 {out_type} (s8, s3) at s10
view v0 a0 offset s4 (s0 s1 g0 s8) (s3 s6)
view v1 a1 offset s4 (s0 s2 g0 s8) (s3 s7)
load r0, v0
{op} r1, r0
store v1, r1
"""


CASES = [
    ("neg", "f32", np.negative),
    ("isnan", "i1", np.isnan),
    ("isinf", "i1", np.isinf),
    ("isfinite", "i1", np.isfinite),
]


@pytest.mark.parametrize("op, out_type, fn", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("rows, cols", [(40, 64), (300, 33), (5, 1)])
def test_an_op_fused_with_a_strided_store_is_numpys(
    op: str, out_type: str, fn: Callable[..., np.ndarray], rows: int, cols: int
) -> None:
    program = vm.prepare(
        vm.load(vm.encode(vm.assemble(every_other(op, out_type)))), vm.DeviceSpec.host()
    )
    rng = np.random.default_rng(rows)
    x = rng.standard_normal((rows, 4 * cols)).astype(np.float32)
    x[::3, ::5], x[1::3, ::7] = np.nan, -np.inf
    spec = vm.specialize(program, [x.shape, (rows, 2 * cols)], lazy=True)
    for unplanned in (True, False):
        y = np.zeros((rows, 2 * cols), np.bool_ if out_type == "i1" else np.float32)
        vm.launch(spec, [x, y], unplanned=unplanned)
        assert spec.planned != unplanned
        np.testing.assert_array_equal(y[:, ::2], fn(x[:, ::4]))
        assert not y[:, 1::2].any()


def test_unit_stride() -> None:
    a = np.zeros((6, 8), np.float32)
    assert unit_stride(a) and unit_stride(a[:, 2:5]) and unit_stride(a.T) and unit_stride(a[::2])
    assert not unit_stride(a[:, ::2]) and not unit_stride(a[:, 1]) and unit_stride(a[:1, :1])
