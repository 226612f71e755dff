"""The output pool: results of MIN_POOLED_BYTES to MAX_POOLED_BYTES are views of blocks
that later results use again, once nothing can reach the earlier result.

What is promised and checked here:

- size classes are a quarter of an octave wide, and a block of a class has that class;
- a dropped result's block serves the next result of its class, at another shape too;
- a view, a slice or a memoryview of a result keeps its block from being lent again;
- free blocks are kept up to the pool's bound;
- small and huge results are plain arrays;
- calls from several threads get correct results and give every block back.
"""

from __future__ import annotations

import gc
import threading
from typing import Any

import numpy as np
import pytest

import dvm
from dvm import output_pool, runtime
from dvm.output_pool import (
    MAX_POOLED_BYTES,
    MIN_POOLED_BYTES,
    OutputPool,
    class_bytes,
    size_class,
)

DOUBLE = """func.func @double(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %y = tensor.add %x, %x : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
"""
F32 = np.dtype(np.float32)


@pytest.fixture
def pool(monkeypatch: pytest.MonkeyPatch) -> OutputPool:
    """A new pool for the programs' results, so that blocks other tests gave back do
    not count."""
    fresh = OutputPool()
    monkeypatch.setattr(runtime, "OUTPUTS", fresh)
    return fresh


@pytest.fixture(scope="module")
def double() -> Any:
    return dvm.compile(DOUBLE)


def _x(rows: int, cols: int, seed: int = 0) -> np.ndarray[Any, Any]:
    return np.random.default_rng(seed).standard_normal((rows, cols)).astype(F32)


def test_size_classes_are_a_quarter_octave_wide() -> None:
    rng = np.random.default_rng(0)
    sizes = [MIN_POOLED_BYTES, MIN_POOLED_BYTES + 1, MAX_POOLED_BYTES - 1, MAX_POOLED_BYTES]
    sizes += [int(n) for n in rng.integers(MIN_POOLED_BYTES, MAX_POOLED_BYTES, 2000)]
    for n in sizes:
        c = size_class(n)
        assert c is not None
        assert n <= class_bytes(c) < 1.25 * n, n
        assert size_class(class_bytes(c)) == c
    classes = range(size_class(MIN_POOLED_BYTES) or 0, (size_class(MAX_POOLED_BYTES) or 0) + 1)
    steps = [class_bytes(c + 1) / class_bytes(c) for c in classes[:-1]]
    assert all(1.14 < s <= 1.25 for s in steps)
    assert size_class(MIN_POOLED_BYTES - 1) is None and size_class(MAX_POOLED_BYTES + 1) is None


def test_a_dropped_result_lends_its_block_again(double: Any, pool: OutputPool) -> None:
    x = _x(300, 300)  # 360,000 bytes
    y = double(x)
    np.testing.assert_array_equal(y, x + x)
    assert not y.flags.owndata and len(pool.lent) == 1
    address = y.ctypes.data
    del y
    assert not pool.lent and pool.free_bytes() == class_bytes(size_class(360_000) or 0)
    x2 = _x(299, 300, seed=1)  # a new shape of the same size class
    y2 = double(x2)
    assert y2.ctypes.data == address
    np.testing.assert_array_equal(y2, x2 + x2)
    assert pool.free_bytes() == 0


def test_a_result_reachable_through_a_view_keeps_its_block(double: Any, pool: OutputPool) -> None:
    x = _x(300, 300)
    y = double(x)
    address = y.ctypes.data
    row, view = y[5].copy(), memoryview(y[7:9])
    column = y[:, 3]
    del y
    gc.collect()
    y2 = double(_x(300, 300, seed=1))
    assert y2.ctypes.data != address  # lent still: the views reach it
    np.testing.assert_array_equal(column, (x + x)[:, 3])
    del column
    y3 = double(_x(300, 300, seed=2))
    assert y3.ctypes.data not in (address, y2.ctypes.data)  # the memoryview reaches it
    np.testing.assert_array_equal(np.asarray(view)[0], (x + x)[7])
    np.testing.assert_array_equal(row, (x + x)[5])
    del view
    y4 = double(_x(300, 300, seed=3))
    assert y4.ctypes.data == address


def test_free_blocks_are_kept_up_to_the_bound() -> None:
    block = class_bytes(size_class(400_000) or 0)
    pool = OutputPool(max_free_bytes=2 * block)
    c = size_class(400_000)
    assert c is not None
    lent = [pool.array(c, (100_000,), F32) for _ in range(4)]
    assert pool.free_bytes() == 0 and len(pool.lent) == 4
    del lent
    assert pool.free_bytes() == 2 * block and not pool.lent


def test_small_and_huge_results_are_plain_arrays(double: Any, pool: OutputPool) -> None:
    small = double(_x(10, 10))
    assert small.flags.owndata
    huge_rows = MAX_POOLED_BYTES // (4 * 1024) + 1
    huge = double(np.ones((huge_rows, 1024), F32))
    assert huge.flags.owndata and huge[-1, -1] == 2
    assert not pool.lent


def test_results_from_threads(double: Any, pool: OutputPool) -> None:
    """4 threads, 30 calls each at shapes of a few size classes, each checking its result
    and dropping it: every block comes back, and no result is another's."""
    errors: list[str] = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for i in range(30):
            x = _x(int(rng.integers(200, 400)), 300, seed=seed * 100 + i)
            y = double(x)
            if not np.array_equal(y, x + x):
                errors.append(f"thread {seed} call {i}: wrong result")

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert not pool.lent
    assert 0 < pool.free_bytes() <= output_pool.MAX_FREE_BYTES
