"""Launches over empty tensors cost the same whatever the size of their other dims.

A launch whose stored arguments have no element runs no tile, and a loop whose one
inner loop makes no pass makes none either, unplanned and planned: the Python lines a
launch runs (the `traced_lines` fixture) are the same for 64 rows as for a million."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import vm_programs as P

import dvm.vm as vm

CHUNKED_SUM = """\
arg a0 f32 2
arg a1 f32 2
params 0
slot s0 = dim(a0,0)
slot s1 = dim(a0,1)
slot s2 = 8
slot s3 = 16
slot s4 = s0 s2 ceildiv
slot s5 = s1 s3 ceildiv
slot s6 = 0
slot s7 = 1
slot s8 = 1024
slot s9 = 2048
grid s7
reg r0 f32 (s7, s7) at s6
reg r1 f32 (s2, s3) at s8
reg r2 f32 (s7, s7) at s9
view v0 a0 offset s6 (s0 s1 l0 s2) (s1 s7 l1 s3)
view v1 a1 offset s6 (s7 s6) (s7 s6)
fill r0, #0.0, (s7, s7)
loop s4
  loop s5
    load r1, v0
    reduce r2, r1, sum, {0,1}, [keepdims]
    add r0, r0, r2
  endloop
endloop
store v1, r0
"""
"""The sum of a matrix in chunks of 8 x 16: a loop over row chunks holding only a loop
over column chunks, which makes no pass when there is no column."""


def launches(
    prog: vm.Program, x: np.ndarray, out: np.ndarray, traced_lines: Callable[..., int]
) -> list[int]:
    """The lines of a new shape's first launch (unplanned), a planned one and one with
    statistics."""
    spec = vm.specialize(prog, [x.shape, out.shape], lazy=True)
    return [
        traced_lines(lambda: vm.launch(spec, [x, out])),
        traced_lines(lambda: vm.launch(spec, [x, out])),
        traced_lines(lambda: vm.launch(spec, [x, out], stats=True)),
    ]


@pytest.mark.parametrize(
    ("text", "out_shape"),
    [
        pytest.param(P.elementwise_chain(), lambda rows: (rows, 0), id="nothing-to-store"),
        pytest.param(CHUNKED_SUM, lambda rows: (1, 1), id="loop-over-an-empty-loop"),
    ],
)
def test_an_empty_launch_costs_the_same_at_any_size(
    text: str, out_shape: Callable[[int], tuple[int, ...]], traced_lines: Callable[..., int]
) -> None:
    prog = vm.load(vm.encode(vm.assemble(text)))
    counts = []
    for rows in (128, 64, 1 << 20):  # the first meets the tile shapes: kept for the others
        x, out = np.empty((rows, 0), np.float32), np.full(out_shape(rows), np.nan, np.float32)
        counts.append(launches(prog, x, out, traced_lines))
        np.testing.assert_array_equal(out, np.zeros_like(out))
    assert counts[1] == counts[2]


def test_a_loop_over_an_empty_loop_still_runs_when_it_is_not() -> None:
    """The chunked sum on values, unplanned and planned."""
    prog = vm.load(vm.encode(vm.assemble(CHUNKED_SUM)))
    x = np.random.default_rng(3).standard_normal((37, 45), dtype=np.float32)
    spec = vm.specialize(prog, [x.shape, (1, 1)], lazy=True)
    for executor in ("unplanned", "planned"):
        out = np.empty((1, 1), np.float32)
        vm.launch(spec, [x, out])
        np.testing.assert_allclose(out[0, 0], x.sum(dtype=np.float64), rtol=1e-5, err_msg=executor)
