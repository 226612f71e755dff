"""A compiled program called from several threads at once.

What is promised and checked here (`tests/test_runtime.py` has a broader mix of
programs and shapes against the reference):

- calls of one multi-kernel program from several threads, on shapes of their own and
  shapes they share, give the bits the same calls give on one thread;
- holds of BLAS at one thread (`vm.with_blas_held`) made by several threads at once
  are one hold: the count comes back once, when the last one ends, and no hold is
  left behind for the calls after them;
- the VM's worker pool is made once when threads launch for the first time at once;
- `dvm.lazy` runs a segment whose program another thread evicted from the cache
  meanwhile;
- a `torch.compile`d module's graph recorded by two threads at once leaves each its
  own result, and plans that later calls replay correctly.
"""

from __future__ import annotations

import importlib
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import dvm

F32 = np.float32
WAIT = 10
"""Seconds a thread waits for another before the test fails (it never should)."""


def _bert_args(reference: Any, batch: int, seq: int, seed: int) -> tuple[np.ndarray, ...]:
    """Arguments of `bert_layer.mlir` for a batch of `batch` sequences of `seq` tokens."""
    _, spec, _ = reference.EXAMPLES["bert_layer.mlir"]
    dims = {"B": batch, "S": seq}
    return tuple(reference.make_inputs(spec, dims, np.random.default_rng(seed)))


def _bits(out: Any) -> tuple[bytes, ...]:
    return tuple(o.tobytes() for o in (out if isinstance(out, tuple) else (out,)))


def test_threads_get_the_bits_of_one_thread(examples_dir: Path, reference: Any) -> None:
    """4 threads call the BERT layer (several kernels, a stack, intermediates in kept
    memory) on 16 calls each: 4 shapes all threads share, 2 of each thread's own, and
    sequences of 1 and 0 tokens, with 2 signatures cached (evicted as they go). Each
    result is what one thread calling a program compiled alike gets, bit for bit."""
    shared = [(1, 5), (2, 9), (1, 1), (3, 0)]
    own = [[(1 + t % 2, 11 + 2 * t), (2, 3 + t)] for t in range(4)]
    calls = [[(*(shared + own[t])[(i + t) % 6], 100 * t + i) for i in range(16)] for t in range(4)]
    shapes = {(batch, seq) for thread in calls for batch, seq, _ in thread}
    alone = dvm.compile(examples_dir / "bert_layer.mlir")
    want = {}
    for thread in calls:
        for batch, seq, seed in thread:  # twice: a first launch, then a planned one
            args = _bert_args(reference, batch, seq, seed)
            want[batch, seq, seed] = {_bits(alone(*args)), _bits(alone(*args))}
    program = dvm.compile(examples_dir / "bert_layer.mlir", cache_size=2)
    start = threading.Barrier(4, timeout=WAIT)

    def run(thread: list[tuple[int, int, int]]) -> list[bool]:
        start.wait()
        return [_bits(program(*_bert_args(reference, *call))) in want[call] for call in thread]

    with ThreadPoolExecutor(4) as pool:
        same = list(pool.map(run, calls))
    assert same == [[True] * 16] * 4
    assert len(shapes) > 6 and len(program.cache) <= 2


@pytest.fixture
def blas_count(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """OpenBLAS's thread count, faked at 2 (as on a machine with several CPUs), and no
    hold in progress."""
    blas = importlib.import_module("dvm.vm.blas")
    count = [2]
    monkeypatch.setattr(blas, "_THREADS", [(lambda: count[0], lambda n: count.__setitem__(0, n))])
    monkeypatch.setattr(blas, "HELD_FROM", [0])
    return count


def test_overlapping_blas_holds_of_two_threads_are_one(blas_count: list[int]) -> None:
    """Thread A holds BLAS, thread B holds it too, A's hold ends, then B's: while B
    holds, the count stays at one thread, and once both end it is the process's count
    again, with no hold left recorded. (B's hold once found the count A had set, one,
    and recorded A's as its own: A gave the count back under B, and B's end left A's
    recorded hold behind for good, which made every later first launch of a matmul hold
    BLAS at one thread.)"""
    blas = importlib.import_module("dvm.vm.blas")
    host = dvm.vm.DeviceSpec.host()
    a_holds, b_holds, a_ended = threading.Event(), threading.Event(), threading.Event()
    seen_by_b: list[int] = []

    def in_a() -> None:
        a_holds.set()
        assert b_holds.wait(WAIT)

    def in_b() -> None:
        b_holds.set()
        assert a_ended.wait(WAIT)
        seen_by_b.append(blas_count[0])

    def thread_a() -> None:
        dvm.vm.with_blas_held(host, in_a)
        a_ended.set()

    def thread_b() -> None:
        assert a_holds.wait(WAIT)
        dvm.vm.with_blas_held(host, in_b)

    threads = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert seen_by_b == [1]
    assert (blas_count, blas.HELD_FROM) == ([2], [0])


def test_two_threads_launching_first_at_once_make_one_worker_pool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The worker pool is made once, whichever threads launch first: thread B asks for
    it while A is making it and gets A's. (Each once made its own, and the threads of
    the one not kept waited for work forever.) A waits for B to start a second pool, in
    vain once the pool is made under a lock."""
    memory = importlib.import_module("dvm.vm.memory")
    a_making, b_making = threading.Event(), threading.Event()
    made: list[Any] = []

    class WatchedPool:  # (no threads)
        def __init__(self, n: int) -> None:
            made.append(self)
            if threading.current_thread().name == "A":
                a_making.set()
                b_making.wait(0.5)  # (set only by a second pool)
            else:
                b_making.set()

    monkeypatch.setattr(memory, "Pool", WatchedPool)
    monkeypatch.setattr(memory, "_POOL", [])
    pools: dict[str, Any] = {}

    def ask(name: str) -> None:
        if name == "B":
            assert a_making.wait(WAIT)
        pools[name] = memory.pool()

    threads = [threading.Thread(target=ask, args=(n,), name=n) for n in "AB"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert len(made) == 1 and pools["A"] is pools["B"] is made[0]


def test_lazy_segment_evicted_between_lookup_and_use(monkeypatch: pytest.MonkeyPatch) -> None:
    """Thread A finds its segment's program in `dvm.lazy`'s cache of compiled programs;
    before it marks it as recently used, thread B compiles another segment, which
    evicts A's (a cache of one). A's flush still runs its program: the eviction made the
    program no longer cached, not unusable. (A's KeyError once ended its flush.)"""
    from collections import OrderedDict

    from dvm import lazy
    from dvm.lazy import segment

    found, evicted = threading.Event(), threading.Event()

    class PausingAfterAHit(OrderedDict[Any, Any]):
        def get(self, key: Any, default: Any = None) -> Any:
            got = super().get(key, default)
            if threading.current_thread().name == "A" and got is not None:
                found.set()
                assert evicted.wait(WAIT)
            return got

    monkeypatch.setattr(segment, "PROGRAMS", PausingAfterAHit())
    monkeypatch.setattr(segment, "MAX_PROGRAMS", 1)
    x = np.arange(12, dtype=F32).reshape(3, 4)
    np.asarray(np.exp(lazy.asarray(x)) + 1)  # A's segment, compiled and cached
    results: dict[str, Any] = {}

    def thread_a() -> None:
        results["A"] = np.asarray(np.exp(lazy.asarray(x)) + 1)

    def thread_b() -> None:
        assert found.wait(WAIT)
        results["B"] = np.asarray(np.tanh(lazy.asarray(x)) * 2)
        evicted.set()

    threads = [threading.Thread(target=thread_a, name="A"), threading.Thread(target=thread_b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert sorted(results) == ["A", "B"]
    np.testing.assert_allclose(results["A"], np.exp(x) + 1, rtol=1e-6)
    np.testing.assert_allclose(results["B"], np.tanh(x) * 2, rtol=1e-6)


def test_two_threads_recording_one_torch_graph(monkeypatch: pytest.MonkeyPatch) -> None:
    """A compiled module's plan from a warm-up call holds a guard (its slice `[:, :8]` is
    clamped for rows of 8 or more) that calls with shorter rows fail: threads A and B
    each record such a call, A pausing in its walk until B has recorded. Each gets its
    own result, and so do later calls at their shapes and at another. (The graph's
    runner and the lists of builders and segment callbacks were the process's: A's walk
    went on with B's state, or none, and left a plan that later calls replayed wrongly.)"""
    torch = pytest.importorskip("torch")
    import dvm.torch  # noqa: F401  (the backend)
    from dvm.torch import plan

    def model(x: Any) -> Any:
        return (x[:, :8] * 2).sum(-1) + x.mean(-1)

    compiled = torch.compile(model, backend="dvm", dynamic=True)
    rng = np.random.default_rng(3)

    def tensor(*shape: int) -> Any:
        return torch.from_numpy(rng.standard_normal(shape, dtype=F32))

    walking, recorded = threading.Event(), threading.Event()
    record_input = plan.Builder.input

    def pausing_a(builder: Any, value: Any) -> Any:
        if threading.current_thread().name == "A" and not walking.is_set():
            walking.set()
            assert recorded.wait(WAIT)
        return record_input(builder, value)

    x_a, x_b = tensor(3, 5), tensor(2, 6)
    results: dict[str, Any] = {}

    def call(name: str, x: Any) -> None:
        with torch.no_grad():
            results[name] = compiled(x)

    def thread_b() -> None:
        assert walking.wait(WAIT)
        try:
            call("B", x_b)
        finally:
            recorded.set()

    with torch.no_grad():
        for x in (tensor(3, 20),):  # warm-up: the plan for long rows
            torch.testing.assert_close(compiled(x), model(x))
    monkeypatch.setattr(plan.Builder, "input", pausing_a)
    threads = [threading.Thread(target=call, args=("A", x_a), name="A")]
    threads.append(threading.Thread(target=thread_b))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    monkeypatch.undo()
    torch.testing.assert_close(results["A"], model(x_a))
    torch.testing.assert_close(results["B"], model(x_b))
    with torch.no_grad():
        for x in (tensor(3, 5), tensor(2, 6), tensor(5, 7)):
            torch.testing.assert_close(compiled(x), model(x))
