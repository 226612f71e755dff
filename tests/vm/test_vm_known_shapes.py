"""An unplanned launch broadcasts without a check where the program fixes the shapes.

The launch function follows each register's tile shape as tokens (`known_shapes.py`):
a row reduction's result against its rows, or a row of weights against the rows, cannot
fail to broadcast, so no check or broadcast memo is written there; shapes it cannot
follow keep theirs. Either way the launch gives the planned launch's bits.
"""

from __future__ import annotations

import numpy as np
import pytest
import vm_programs as P

import dvm.vm as vm
from dvm.vm.known_shapes import KnownShapes
from dvm.vm.unplanned import Launcher

LAYERNORM = vm.assemble(P.layernorm(rows_param=False))


def layernorm_reference(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = x - x.mean(1, keepdims=True)
    return d / np.sqrt((d * d).mean(1, keepdims=True) + np.float32(1e-5)) * w + b


def test_known_tokens_broadcast_only_where_they_cannot_fail() -> None:
    known = KnownShapes(LAYERNORM)
    rows, cols = ("tile", 1, 16, "rows"), ("slot", "cols")
    assert known.broadcast((rows, cols), (rows, 1)) == (rows, cols)
    assert known.broadcast((1, cols), (rows, cols)) == (rows, cols)
    assert known.broadcast((rows, 1), (1, cols)) == (rows, cols)
    assert known.broadcast((rows, cols), (cols, rows)) is None  # (may differ)
    assert known.broadcast((rows, cols), (cols,)) is None  # (ranks differ)
    assert known.broadcast(None, (rows, cols)) is None


def test_a_layernorm_launch_broadcasts_its_rows_unchecked() -> None:
    """Its row statistics and its weights broadcast against the rows (the view's tile
    and the weights' view share the columns' slot; the rows of one are a slot set to 1)."""
    source = Launcher(vm.load(vm.encode(LAYERNORM))).source()
    assert "_pair" not in source and "_bcast" not in source
    assert "_bcast" in Launcher(vm.load(vm.encode(vm.assemble(P.broadcast_add())))).source()


@pytest.mark.parametrize("alias", [False, True])
def test_unplanned_layernorm_gives_the_planned_bits_at_many_tile_shapes(alias: bool) -> None:
    """Row counts below, at and across the 16-row tile (tails), several widths: the
    first launch runs unplanned, the second planned, with equal results."""
    program = vm.load(vm.encode(vm.assemble(P.layernorm(rows_param=False, alias=alias))))
    rng = np.random.default_rng(7)
    for rows, cols in [(1, 1), (3, 5), (16, 64), (17, 3), (40, 33), (5, 1)]:
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        w, b = (rng.standard_normal(cols).astype(np.float32) for _ in range(2))
        spec = vm.specialize(program, [x.shape, w.shape, b.shape, x.shape], lazy=True)
        first, again = np.full_like(x, np.nan), np.full_like(x, np.nan)
        vm.launch(spec, [x, w, b, first])
        assert not spec.planned
        vm.launch(spec, [x, w, b, again])
        assert spec.planned
        np.testing.assert_array_equal(first, again)
        np.testing.assert_allclose(first, layernorm_reference(x, w, b), rtol=1e-4, atol=1e-4)


def test_shapes_it_cannot_follow_keep_their_check() -> None:
    """Arguments of any shapes: a pair that does not broadcast is still the launch's
    error, unplanned as planned."""
    program = vm.load(vm.encode(vm.assemble(P.broadcast_add())))
    shapes = [(3, 4), (2, 4), (3, 4)]
    arrays = [np.ones(s, np.float32) for s in shapes]
    spec = vm.specialize(program, shapes, lazy=True)
    with pytest.raises(vm.BytecodeError, match="shapes do not broadcast"):
        vm.launch(spec, arrays)
