"""Kernels that take values from the host, at the tile levels too.

A kernel's sizes or slice offsets may be index values of the host function
(an index argument, `tensor.dim` arithmetic, an `scf.for` counter), which no
argument shape of the kernel holds. The reference interpreter binds each
symbol such a value stands for as it runs, so `dvm.interpret` of tile IR and
of bytecode runs these programs as compiled ones do, and checks their slices'
bounds with the same message.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_ops_slices import (
    FUSED,
    LAYERS,
    PRESETS,
    SLICE,
    check,
    grid,
    layers_numpy,
    levels,
    lowered,
)

import dvm
from dvm.errors import ExecutionError


@pytest.mark.parametrize("device", PRESETS)
def test_a_loop_counter_offset_at_every_level(device: str) -> None:
    """Layer i's weights sliced by the loop counter, tile IR and bytecode included."""
    runs = levels(LAYERS, device)
    assert len(runs) == 5
    for i, (layers, rows, d) in enumerate([(0, 3, 4), (1, 1, 1), (3, 7, 13), (2, 97, 61)]):
        rng = np.random.default_rng(i)
        w = (rng.standard_normal((layers, d, d)) / np.sqrt(d)).astype(np.float32)
        x = rng.standard_normal((rows, d)).astype(np.float32)
        want = layers_numpy(w, x)
        for name, run in runs:
            np.testing.assert_allclose(run(w, x), want, rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("device", PRESETS)
def test_offsets_and_sizes_from_index_arguments_at_every_level(device: str) -> None:
    cases = []
    for i, (r, c) in enumerate([(0, 3), (1, 1), (7, 13), (97, 301)]):
        x = grid(r, c, i)
        cases += [(x, 0, r), (x, r // 2, r - r // 2), (x, r, 0)]
    check(SLICE, device, cases, lambda x, o, n: x[o : o + n])
    y = grid(5, 8, 9)
    cases = [(grid(9, 16, 1), 5, y), (grid(5, 16, 2), 5, y)]
    check(FUSED, device, cases, lambda x, n, y: np.exp(x[:n, 1::2]) + y)


@pytest.mark.parametrize("spec", ["convert-tensor-to-tile", "dvm-pipeline"])
def test_out_of_bounds_at_the_tile_levels_names_op_and_values(spec: str) -> None:
    """An offset past the end, whose view still lies inside the buffer."""
    module = lowered(SLICE, f"symbolic-shapes,fuse,stack,{spec}" if spec[0] == "c" else spec)
    with pytest.raises(ExecutionError, match=r"tensor.extract_slice.*offset 8, size 3"):
        dvm.interpret(module, grid(10, 4, 0), 8, 3)
