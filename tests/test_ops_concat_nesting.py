"""Nested concats and iota pieces fused into one kernel, at every level.

A concat of a concat along the same axis is flattened before fusion; an iota is
a piece of a fused concat or pad like any elementwise producer, counting along
its own part of the axis. Each program runs in the reference interpreter, after
`fuse`, as tile IR, as bytecode and compiled, on both presets, on shapes with 0,
1, primes and large dims, and must match numpy.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_ops_slices import PRESETS, check, lowered

PROGRAMS = (Path(__file__).parent / "filecheck/ops_moves/concat_nested_iota.mlir").read_text()


def function(name: str) -> str:
    """One function of the lit test's program, alone."""
    start = PROGRAMS.index(f"func.func @{name}")
    return PROGRAMS[start : PROGRAMS.index("\n}\n", start) + 3]


def rows(n: int, cols: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, cols)).astype(np.float32)


SIZES = [(0, 0, 0), (1, 1, 1), (2, 0, 3), (7, 13, 5), (3001, 2, 17)]


@pytest.mark.parametrize("device", PRESETS)
def test_a_concat_of_a_concat_is_one_kernel(device: str) -> None:
    src = function("same_axis")
    assert str(lowered(src, "symbolic-shapes,fuse")).count("tensor.fusion") == 1
    cases = [(rows(a, 4, 1), rows(b, 4, 2), rows(c, 4, 3)) for a, b, c in SIZES]
    check(src, device, cases, lambda a, b, c: np.concatenate([np.exp(a), b, -c]))


@pytest.mark.parametrize("device", PRESETS)
def test_an_iota_piece_counts_along_its_own_part(device: str) -> None:
    src = function("positions")
    assert str(lowered(src, "symbolic-shapes,fuse")).count("tensor.fusion") == 1

    def want(a: np.ndarray, n: int) -> np.ndarray:
        positions = np.broadcast_to(np.arange(n, dtype=np.float32)[:, None], (n, 4))
        return np.concatenate([np.exp(a), positions])

    cases = [(rows(a, 4, a), n) for a, n, _ in SIZES] + [(rows(5, 4, 9), 10007)]
    check(src, device, cases, want)


@pytest.mark.parametrize("device", PRESETS)
def test_a_padded_iota_is_one_kernel(device: str) -> None:
    src = function("padded_iota")
    assert str(lowered(src, "symbolic-shapes,fuse")).count("tensor.fusion") == 1

    def want(n: int) -> np.ndarray:
        counted = np.broadcast_to(np.arange(3, dtype=np.int32), (n, 3))
        return np.pad(counted, ((1, 2), (0, 0)), constant_values=-1)

    check(src, device, [(n,) for n in (0, 1, 2, 13, 3001)], want)


@pytest.mark.parametrize("device", PRESETS)
def test_a_concat_of_a_concat_along_another_axis_is_two_kernels(device: str) -> None:
    src = function("other_axis")
    assert str(lowered(src, "symbolic-shapes,fuse")).count("tensor.fusion") == 2
    cases = [(rows(a, 4, 1), rows(b, 4, 2), rows(a + b, c, 3)) for a, b, c in [*SIZES, (5, 6, 0)]]
    check(src, device, cases, lambda a, b, c: np.concatenate([np.concatenate([a, b]), c], 1))
