"""Shared fixtures: the example programs in `shared/examples` and their numpy reference,
a random generator seeded per test, a record of the VM's pool round trips, a count
of the Python lines a call runs, and a heap whose collections see only the test's objects.

The examples live next to the repository (`<repo>/../shared/examples`), not in
it; tests that need them skip when that folder is absent, and only then.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import os
import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType, ModuleType
from typing import Any

import numpy as np
import pytest

from dvm import launches

# Every compile runs the pipeline: tests change the compiler's switches, which the
# compile cache's key does not see, and the suite writes nothing to the user's cache.
# The cache's own tests turn it on, in a temporary folder (`DVM_CACHE=on` runs the
# whole suite through the cache).
os.environ.setdefault("DVM_CACHE", "off")

# The torch tests' tracing makes and drops millions of container objects, and at
# Python's default thresholds (700, 10, 10) a worker spent about a tenth of its time
# in the collector. A youngest generation of 50,000 collects as much, less often. No
# test depends on when the collector runs (the tests of what a call leaves alive
# count the objects themselves, after collecting).
gc.set_threshold(50_000, 50, 50)

# Kernels plan a shape at its second call (a plan patience of 0): the many tests that
# call a program twice then run both executors, unplanned and planned.
# `tests/test_runtime_calls.py` tests the runtime's patience.
launches.PLAN_PATIENCE = 0


def pytest_collection_finish(session: pytest.Session) -> None:
    """Once the torch tests are collected (they import dynamo): no collection after each
    frame dynamo compiles (`run_gc_after_compile`, a `gc.collect(1)` to free memory
    sooner; it changes no graph). With the thresholds above, the young generations then
    hold up to millions of objects: these collections took 2% of the torch zoos' time."""
    dynamo_config = sys.modules.get("torch._dynamo.config")
    if dynamo_config is not None:
        dynamo_config.run_gc_after_compile = False


EXAMPLES_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "examples"
"""`shared/examples`, beside the repository root."""


def load_reference(examples_dir: Path = EXAMPLES_DIR) -> ModuleType:
    """Import `reference.py` from the examples folder (it is not a package)."""
    path = examples_dir / "reference.py"
    spec = importlib.util.spec_from_file_location("dvm_examples_reference", path)
    assert spec is not None and spec.loader is not None, f"cannot load {path}"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def examples_dir() -> Path:
    """The examples folder; skips the test when it does not exist."""
    if not EXAMPLES_DIR.is_dir():
        pytest.skip(f"example programs not found at {EXAMPLES_DIR}")
    return EXAMPLES_DIR


@pytest.fixture(scope="session")
def reference(examples_dir: Path) -> ModuleType:
    """`shared/examples/reference.py`: EXAMPLES and make_inputs."""
    return load_reference(examples_dir)


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    """A generator seeded by the test's id (parameters included): a test draws the same
    inputs whichever tests ran before it, in whichever worker."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


@pytest.fixture
def share_from_inline_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Programs loaded while the test runs share their launches among the cores from
    INLINE_BYTES of traffic, whatever their work per byte (`plan.share_bytes`): for
    tests of the sharing itself at small sizes."""
    monkeypatch.setattr(importlib.import_module("dvm.vm.plan"), "SHARE_WORK", 0)


@pytest.fixture
def pool_rounds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The cores of each pool round trip the VM makes while the test runs (a launch
    inline on the calling thread makes none)."""
    launch = importlib.import_module("dvm.vm.launch")
    pool, rounds = launch.pool(), []

    class Recording:
        queues = pool.queues

        def run(self, jobs: list[tuple[object, int, int]]) -> None:
            rounds.append(len(jobs))
            pool.run(jobs)

    monkeypatch.setattr(launch, "pool", Recording)
    return rounds


@pytest.fixture
def young_heap() -> Iterator[None]:
    """Full collections during the test traverse only the objects it made. A worker that
    ran the torch tests before holds millions of objects, and a `gc.collect()` of them
    takes seconds: the garbage is collected once, then what is alive is frozen
    (`gc.freeze`), as the runtime's first compile does. It stays frozen: the worker's
    later garbage among it is never collected, a little memory for minutes of the suite."""
    gc.collect()
    gc.freeze()
    yield


def count_lines(fn: Callable[[], Any]) -> int:
    """How many Python lines (and calls) `fn()` runs on this thread: a measure of work
    that is deterministic where a time is not. The collector is held off while it runs:
    a collection would run finalizers (of generated code, say) left by earlier tests."""
    count = 0

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        count += 1
        return trace

    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    sys.settrace(trace)
    try:
        fn()
    finally:
        sys.settrace(None)
        if was_enabled:
            gc.enable()
    return count


@pytest.fixture
def traced_lines(young_heap: None) -> Callable[[Callable[[], Any]], int]:
    """`count_lines`, for the tests that compare the work of two calls."""
    return count_lines
