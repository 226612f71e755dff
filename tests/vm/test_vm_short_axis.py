"""A max or min over a short axis of a tile with many elements along the others runs
as pairwise calls on views (`kernels.short_axis`), with the reduce's exact values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import vm_programs as P

import dvm.vm as vm
from dvm.vm import bind, kernels, unplanned

CASES = [("{0}", (7, 120), 8), ("{1}", (300, 5), 128), ("{1}", (300, 20), 40)]
"""(axes, input shape, tile rows): a short axis 0 in one tile, a short axis 1 in tiles
of 128 rows, and an axis longer than SHORT_AXIS (the reduce); each fits its registers."""


def spied(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts of the pairwise reductions each executor runs (planned: binds)."""
    counts = {"unplanned": 0, "planned": 0}

    def run(*args: Any) -> bool:
        done = kernels.reduce_short_axis(*args)
        counts["unplanned"] += done
        return done

    def pairwise(*args: Any) -> None:
        counts["planned"] += 1
        kernels.reduce_pairwise(*args)

    monkeypatch.setattr(unplanned, "reduce_short_axis", run)
    monkeypatch.setattr(bind, "reduce_pairwise", pairwise)
    return counts


@pytest.mark.parametrize("kind", ["max", "min"])
@pytest.mark.parametrize("dtype", ["f32", "i32"])
@pytest.mark.parametrize("keepdims", [True, False])
@pytest.mark.parametrize(("axes", "shape", "tile_rows"), CASES)
def test_a_short_axis_max_or_min_is_the_reduce(
    kind: str,
    dtype: str,
    keepdims: bool,
    axes: str,
    shape: tuple[int, int],
    tile_rows: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(len(shape) + shape[1])
    np_dtype = vm.isa.DTYPE_BY_TEXT[dtype].np
    x = rng.integers(-50, 50, shape).astype(np_dtype)
    if dtype == "f32":
        x[3, :4] = [np.nan, -0.0, 0.0, np.inf]  # values a reduction must keep
    axis = int(axes[1])
    want = (np.max if kind == "max" else np.min)(x, axis=axis, keepdims=keepdims)
    program = vm.load(vm.encode(vm.assemble(P.reduce_op(kind, dtype, axes, keepdims, tile_rows))))
    counts = spied(monkeypatch)
    spec = vm.specialize(program, [x.shape, want.shape], lazy=True)
    for _ in ("unplanned", "planned"):
        out = np.zeros_like(want)
        vm.launch(spec, [x, out])
        np.testing.assert_array_equal(out, want)
    assert spec.planned
    short = shape[axis] <= kernels.SHORT_AXIS
    assert bool(counts["unplanned"]) == short
    assert bool(counts["planned"]) == short


@pytest.mark.parametrize(
    ("shape", "axis", "expected"),
    [((569, 4, 1), 1, 1), ((64, 8, 1), 1, None), ((100, 1), 1, None), ((4, 100), 0, 0)],
)
def test_which_axes_are_short(shape: tuple[int, ...], axis: int, expected: int | None) -> None:
    assert kernels.short_axis(vm.isa.ReduceKind.MAX, 1 << axis, shape) == expected
    assert kernels.short_axis(vm.isa.ReduceKind.SUM, 1 << axis, shape) is None
