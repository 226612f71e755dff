"""A large first launch runs unplanned, its tiles shared among the cores.

A specialization whose arguments are too large to run on one core
(`UNPLANNED_BYTES`) and whose tiles write disjoint memory (an mma's included) runs
its launches unplanned, each core taking chunks of the grid's first axis with its
own local memory, until its patience is spent (`plan_after`); then it is planned and
bound as before. Both executors must give the same results.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import vm_programs as P

import dvm.vm as vm
from dvm.vm.launch import SHARED_PLAN_PRICE
from dvm.vm.memory import device_memory, workers
from dvm.vm.static import static_info
from dvm.vm.unplanned import generated

CHAIN = P.elementwise_chain(tile=64)


def chain_reference(x: np.ndarray) -> np.ndarray:
    return np.tanh(np.exp(-np.abs(x)) * np.float32(2.5) + x)


needs_a_worker = pytest.mark.skipif(workers() == 0, reason="one CPU: no core to share with")


@needs_a_worker
@pytest.mark.parametrize("rows", [2500, 3001, 4097])
def test_a_large_first_launch_shares_its_tiles(rows: int, pool_rounds: list[int]) -> None:
    """The first launch runs unplanned on the cores (a pool round of several), the
    second is planned: both equal numpy's result, and each other's exactly."""
    program = vm.load(vm.encode(vm.assemble(CHAIN)))
    x = np.random.default_rng(rows).standard_normal((rows, 64)).astype(np.float32)
    spec = vm.specialize(program, [x.shape, x.shape], lazy=True)
    assert spec.shares_unplanned and not spec.small
    first = np.full_like(x, np.nan)
    vm.launch(spec, [x, first])
    assert not spec.planned and spec.shared_launches == 1
    assert pool_rounds and pool_rounds[-1] >= 2
    again = np.full_like(x, np.nan)
    vm.launch(spec, [x, again])
    assert spec.planned and spec.shared_launches == 1
    np.testing.assert_allclose(first, chain_reference(x), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(first, again)


@needs_a_worker
def test_shared_launches_wait_for_their_patience() -> None:
    """With a patience, a large shape's launches stay unplanned (and shared) until they
    have walked `plan_after` instructions, each counting its steps once per
    `SHARED_PLAN_PRICE` per core (planning binds each class on each core); the next is
    planned."""
    program = vm.load(vm.encode(vm.assemble(CHAIN)))
    x = np.random.default_rng(1).standard_normal((4000, 64)).astype(np.float32)
    spec = vm.Specializer(program, patience=100)([x.shape, x.shape])
    per_launch = 0
    while not spec.planned:
        out = np.full_like(x, np.nan)
        walked = spec.walked
        vm.launch(spec, [x, out])
        per_launch = per_launch or spec.walked - walked
        np.testing.assert_allclose(out, chain_reference(x), rtol=1e-6, atol=1e-6)
    assert spec.plan_after == 100 * len(program.code)
    assert spec.shared_launches == -(-spec.plan_after // per_launch) > 1
    cores = min(len(device_memory(spec.device).kept), workers() + 1)
    assert per_launch == -(-spec.plan.steps // (cores * SHARED_PLAN_PRICE)) < spec.plan.steps


@needs_a_worker
def test_each_core_calls_the_launch_function_once(pool_rounds: list[int]) -> None:
    """The cores draw chunks of tiles from one counter, each within a single call of
    the unplanned launch function (what it does per call, such as each argument's
    whole view, is done once per core): every tile runs once, on some core."""
    program = vm.load(vm.encode(vm.assemble(CHAIN)))
    made = static_info(program).unplanned
    launcher = generated(program)
    calls: list[list[int]] = []

    def counting(spec: Any, args: Any, kept: Any, extents: Any, alias: bool, first: Any) -> None:
        ran: list[int] = []
        calls.append(ran)

        def tiles() -> Iterator[int]:
            for g in first:
                ran.append(g)
                yield g

        launcher.launch(spec, args, kept, extents, alias, tiles())

    x = np.random.default_rng(5).standard_normal((4097, 64)).astype(np.float32)
    spec = vm.specialize(program, [x.shape, x.shape], lazy=True)
    out = np.full_like(x, np.nan)
    made[0] = launcher._replace(launch=counting)
    try:
        vm.launch(spec, [x, out])
    finally:
        made[0] = launcher
    assert spec.shared_launches == 1 and pool_rounds[-1] >= 2
    assert len(calls) == pool_rounds[-1]
    bound = launcher.bound(spec.slots)
    assert bound is not None
    tiles = bound[0][0]
    assert sorted(g for ran in calls for g in ran) == list(range(tiles)) and tiles > 16
    np.testing.assert_allclose(out, chain_reference(x), rtol=1e-6, atol=1e-6)


def layernorm_reference(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = x - x.mean(1, keepdims=True)
    return d / np.sqrt((d * d).mean(1, keepdims=True) + np.float32(1e-5)) * w + b


@needs_a_worker
def test_a_large_first_launch_allocates_nothing_per_tile() -> None:
    """A first launch at a new large shape runs its registers in the cores' local
    memories: no instruction allocates a temporary (each would be a tile, 512 KiB
    here), so while it runs the process allocates only a few Python objects."""
    program = vm.load(vm.encode(vm.assemble(P.layernorm(False))))  # tiles of 16 rows
    rng = np.random.default_rng(3)
    w, b = rng.standard_normal((2, 8192)).astype(np.float32)
    peaks = []
    for rows in (199, 200):  # the first maps the local memories; the second is measured
        x = rng.standard_normal((rows, 8192)).astype(np.float32)
        spec = vm.specialize(program, [x.shape, w.shape, b.shape, x.shape], lazy=True)
        out = np.full_like(x, np.nan)
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            vm.launch(spec, [x, w, b, out])
            peaks.append(tracemalloc.get_traced_memory()[1] - before)
        finally:
            tracemalloc.stop()
        assert spec.shares_unplanned and spec.shared_launches == 1 and not spec.planned
        np.testing.assert_allclose(out, layernorm_reference(x, w, b), rtol=1e-4, atol=1e-4)
    assert peaks[-1] < 128 << 10


@needs_a_worker
def test_a_large_matmul_shares_its_first_launch(pool_rounds: list[int]) -> None:
    """A program with an mma, its tiles writing disjoint rows, shares its large first
    launch unplanned too (planning it, several times the Python of the launch, waits
    for the shape to come back); planned, the second gives the same bits."""
    program = vm.load(vm.encode(vm.assemble(P.addmm_relu(64, 64, 32))))
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((2, 600, 300)).astype(np.float32)
    b = b.T.copy()
    bias = rng.standard_normal(600).astype(np.float32)
    spec = vm.specialize(program, [a.shape, b.shape, bias.shape, (600, 600)], lazy=True)
    assert spec.has_mma and spec.shares_unplanned and not spec.small
    first = np.full((600, 600), np.nan, np.float32)
    vm.launch(spec, [a, b, bias, first])
    assert not spec.planned and spec.shared_launches == 1
    assert pool_rounds and pool_rounds[-1] >= 2
    again = np.full_like(first, np.nan)
    vm.launch(spec, [a, b, bias, again])
    assert spec.planned
    expected = np.maximum(a.astype(np.float64) @ b + bias, 0)
    np.testing.assert_allclose(first, expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(first, again)


def test_accumulating_tiles_are_not_shared_unplanned() -> None:
    """Tiles that accumulate into the same output (store_acc) run planned, under its
    locks: a large launch of them is planned at once, as before."""
    program = vm.load(vm.encode(vm.assemble(P.column_stats())))
    x = np.random.default_rng(2).standard_normal((4000, 96)).astype(np.float32)
    spec = vm.specialize(program, [x.shape, (96,), (96,)], lazy=True)
    assert not spec.small and not spec.shares_unplanned
    sums, maxima = np.zeros(96, np.float32), np.full(96, -np.inf, np.float32)
    vm.launch(spec, [x, sums, maxima])
    assert spec.planned and spec.shared_launches == 0
    np.testing.assert_allclose(sums, np.maximum(x, 0).sum(0), rtol=1e-4)
    np.testing.assert_array_equal(maxima, x.max(0))
