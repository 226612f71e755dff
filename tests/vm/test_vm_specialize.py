"""The specializer's fast paths agree with its table walks.

Specialization runs the layout checks as one generated function per program
(`checks.py`) and plans the frequent instructions with closures made once
per program; the slow paths (walking the register and view tables, the
generic `op`) remain for errors and for the other instructions. Here both
run on the same programs and shapes (tails, empty dims, unit dims) and must
give the same registers, views, class keys and planned bodies.
"""

from __future__ import annotations

import gc
import importlib
import threading
import weakref
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest
import vm_programs as P

import dvm.vm as vm
from dvm.vm.planner import TilePlanner

S = importlib.import_module("dvm.vm.specialize")
static_module = importlib.import_module("dvm.vm.static")

PROGRAMS = {
    "chain": (P.elementwise_chain(tile=8), lambda r, c: [(r, c), (r, c)], []),
    "chain-shared": (P.elementwise_chain(tile=P.SHARED_ROWS), lambda r, c: [(r, c), (r, c)], []),
    # the output's view has the input's sizes: natural only when it holds as many elements
    "chain-reshaped": (P.elementwise_chain(tile=8), lambda r, c: [(r, c), (c, r)], []),
    "chain-larger": (P.elementwise_chain(tile=8), lambda r, c: [(r, c), (r + 2, c)], []),
    "layernorm": (P.layernorm(True), lambda r, c: [(r, c), (c,), (c,), (r, c)], [3]),
    "layernorm-alias": (P.layernorm(True, True), lambda r, c: [(r, c), (c,), (c,), (r, c)], [5]),
    "column-stats": (P.column_stats(), lambda r, c: [(r, c), (c,), (c,)], []),
    "addmm": (P.addmm_relu(8, 8, 4), lambda r, c: [(r, c), (c, r + 3), (r + 3,), (r, r + 3)], []),
    "transpose": (P.transpose_broadcast(tile=4), lambda r, c: [(r, c), (c,), (c, r)], []),
}
SHAPES = [(0, 0), (0, 5), (1, 1), (3, 7), (8, 8), (9, 17), (33, 4), (64, 129)]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize(("rows", "cols"), SHAPES)
def test_fast_layout_and_planners_match_the_table_walks(name: str, rows: int, cols: int) -> None:
    text, shapes_of, params = PROGRAMS[name]
    prog = vm.load(vm.encode(vm.assemble(text)))
    shapes = tuple(tuple(s) for s in shapes_of(rows, cols))
    fast = vm.specialize(prog, shapes, params)

    static = static_module.static_info(prog)
    sp = S.TableWalk(static, fast.device)
    sp.eval_slots(shapes, tuple(params), fast.cores)
    regs = sp.place_registers()
    views = tuple(sp.view(i, shapes) for i in range(len(prog.views)))
    end = S.registers_end(regs, static.itemsizes)
    placed = S.placed(regs, static, fast.device, end) if static.placement else (regs, end)
    # (an mma program's packed: `specialize.placed`)
    assert placed == (fast.registers, fast.registers_end)
    assert views == fast.views
    fast_fn = next(iter(static.fast_paths.values()))
    dims, values, _, _, slots, got = fast_fn(shapes, params, fast.cores, S.UNPLANNED_BYTES)
    assert (dims, values, slots) == (shapes, tuple(params), sp.s)
    # the fast path lays them out, but for an empty view, or one whose sizes disagree
    # with its argument's dims, which it may leave to the walk (`checks._natural_tests`)
    rare = rows == 0 or cols == 0 or name == "chain-larger"
    assert got == (regs, views, end) or (rare and got is None)
    # what planning reads of the fast path's result, as the walk gives it
    planner = TilePlanner(static, fast, S.DEFAULT_MAX_STEPS)
    assert planner.caps == tuple(cap for _, cap in regs)
    assert planner.sizes == tuple(vp.sizes for vp in views)
    walked = {
        src: tuple((views[v].sizes[d], tile_of(views[v].tiled, d)) for v, d in group)
        for src, group in static.pairs.items()
    }
    assert planner.keys == walked


def tile_of(tiled: tuple[tuple[int, int, int], ...], d: int) -> int:
    """The tile size of tiled dim `d` of a view (`ViewPlan.tiled`), found by its dim (the
    planner reads it at the place `Static.pair_places` gives)."""
    return next(t for dim, _, t in tiled if dim == d)


def test_what_the_slots_decide_of_a_view_is_not_tested() -> None:
    """A view whose sizes are its argument's dims and whose strides their products is
    natural whenever it is not empty: the fast path tests neither its bounds nor its
    strides. The same sizes over another argument compare the element counts."""
    from dvm.vm.checks import fast_source

    prog = vm.load(vm.encode(vm.assemble(P.elementwise_chain(tile=8))))
    source = fast_source(prog, 1 << 20, 64, 1, False)
    assert "    if s0 and s1 and numel0 <= 1152921504606846976: v0 = " in source
    assert "    if s0 and s1 and d0_0 * d0_1 == numel1 and numel1 <= " in source


def test_a_failing_check_falls_back_to_the_table_walk() -> None:
    """The fast path's layout is None on a failed check; the walk names the reason."""
    prog = vm.load(vm.encode(vm.assemble(P.elementwise_chain(tile=8))))
    tiny = vm.DeviceSpec(1, 1, 256, 32, 32, "tiny")
    with pytest.raises(vm.BytecodeError, match="register exceeds local memory"):
        vm.specialize(prog, [(64, 64), (64, 64)], device=tiny)


def tracked_objects() -> set[int]:
    """The ids of the objects the collector tracks, after collections enough to untrack
    the tuples that hold only untracked objects (one nesting level per collection)."""
    for _ in range(3):
        gc.collect()
    return {id(o) for o in gc.get_objects()}


def reached_among(roots: list[Any], new: set[int]) -> list[Any]:
    """The objects of `new` (ids) that `roots` reach through objects of `new`."""
    reached: dict[int, Any] = {}
    stack = list(roots)
    while stack:
        o = stack.pop()
        if id(o) in new and id(o) not in reached:
            reached[id(o)] = o
            stack.extend(gc.get_referents(o))
    return list(reached.values())


@pytest.mark.usefixtures("young_heap")
def test_a_cached_specialization_keeps_few_objects_for_the_collector() -> None:
    # Python's full collections traverse every tracked object alive and come more
    # often the more each new shape leaves alive (docs/performance.md, "The garbage
    # collector"). A specialization not yet planned (the runtime's, `lazy`) keeps its
    # views (NamedTuples, always tracked), itself, its specializer and that one's
    # attributes' dict, its views' tuple, its `ready` list and its key in the program's
    # cache: nothing else per shape, in the program or elsewhere in the process.
    text, shapes_of, params = PROGRAMS["layernorm"]
    prog = vm.load(vm.encode(vm.assemble(text)))
    shapes = 60

    def specialize(first: int) -> list[vm.Specialization]:
        rows = range(first, first + shapes)
        return [vm.specialize(prog, shapes_of(r, 5), params, lazy=True) for r in rows]

    # What the first shapes create once (caches, and the test harness's own objects
    # made at the first collections) is not per shape: two batches before the count.
    warm = specialize(10) + specialize(10 + shapes)
    old = tracked_objects()
    specs = specialize(10 + 2 * shapes)
    new = tracked_objects() - old
    kept = reached_among([*specs, *gc.get_referents(prog.cache.specializations)], new)
    per_shape = len(kept) / shapes
    kinds = Counter(type(o).__name__ for o in kept)
    assert per_shape <= len(prog.views) + 6, kinds
    assert len(new) <= len(kept) + shapes // 4, (len(new), kinds)
    assert len(warm) == 2 * len(specs) == 2 * shapes


def test_a_specializer_binds_like_specialize_without_caching() -> None:
    """`vm.Specializer` (the runtime's, one per kernel) gives what `specialize` gives, a
    new object per call (its caller caches), with numpy integers made plain ints."""
    text, shapes_of, params = PROGRAMS["layernorm"]
    prog = vm.load(vm.encode(vm.assemble(text)))
    make = vm.Specializer(prog)
    numpy_dims = [tuple(np.int64(n) for n in s) for s in shapes_of(9, 17)]
    spec = make(numpy_dims, [np.int32(p) for p in params])
    cached = vm.specialize(prog, shapes_of(9, 17), params)
    assert make(shapes_of(9, 17), params) is not spec
    assert (spec.shapes, spec.params, spec.slots) == (cached.shapes, cached.params, cached.slots)
    assert all(type(n) is int for s in spec.shapes for n in s)
    assert (spec.registers, spec.views) == (cached.registers, cached.views)
    assert spec.plan.bodies == cached.plan.bodies
    assert len(prog.cache.specializations) == 1


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize(("rows", "cols"), SHAPES)
@pytest.mark.parametrize("lazy", [True, False])
def test_a_shape_walked_binds_as_the_fast_path_binds(
    name: str, rows: int, cols: int, lazy: bool
) -> None:
    """A specializer's first shapes bound without the fast path (`walks`: the slots
    interpreted, the tables walked) get what the fast path gives them, and no fast path
    is made for them."""
    text, shapes_of, params = PROGRAMS[name]

    def bound(walks: int) -> tuple[object, ...]:
        prog = vm.load(vm.encode(vm.assemble(text)))
        spec = vm.Specializer(prog, walks=walks)(shapes_of(rows, cols), params, lazy=lazy)
        made = static_module.static_info(prog).fast_paths
        fields = (spec.shapes, spec.params, spec.slots, spec.registers, spec.views)
        return (*fields, spec.cores, spec.small, spec.shared, spec.plan_after, bool(made))

    assert bound(1) == (*bound(0)[:-1], False)


def test_the_fast_path_is_made_after_the_walks() -> None:
    """A specializer with walks makes the fast path at the first new shape after them,
    and walks none once the program has one (`vm.prepare` makes it ahead)."""
    text, shapes_of, params = PROGRAMS["layernorm"]
    prog = vm.load(vm.encode(vm.assemble(text)))
    made = static_module.static_info(prog).fast_paths
    make = vm.Specializer(prog, walks=2)
    for rows, fast_paths in [(3, 0), (4, 0), (5, 1), (6, 1)]:
        make(shapes_of(rows, 7), params)
        assert len(made) == fast_paths
    prepared = vm.prepare(vm.load(vm.encode(vm.assemble(text))), vm.DeviceSpec.host())
    again = vm.Specializer(prepared, walks=2)
    again(shapes_of(3, 7), params)
    assert "slot_steps" not in vars(again)  # (a walk interprets the slots by them)
    assert again.walks == 0  # none left to walk: later shapes ask nothing more


@pytest.mark.parametrize(
    ("shapes", "params", "message"),
    [
        ([(4, 16), (16,), (16,)], [3], "program takes 4 arguments, got 3 shapes"),
        (
            [(4, 16), (16, 1), (16,), (4, 16)],
            [3],
            r"argument a1: shape \(16, 1\) does not fit rank 1",
        ),
        (
            [(4, -16), (16,), (16,), (4, 16)],
            [3],
            r"argument a0: shape \(4, -16\) has a dim outside 0..2\*\*63-1",
        ),
        (
            [(4, 16), (2**63,), (16,), (4, 16)],
            [3],
            r"argument a1: shape \(9223372036854775808,\) has a dim outside 0..2\*\*63-1",
        ),
        ([(4, 16), (16,), (16,), (4, 16)], [], "program takes 1 params, got 0"),
    ],
)
@pytest.mark.parametrize("walks", [0, 1])
def test_shapes_that_do_not_fit_the_header_are_named(
    shapes: list[tuple[int, ...]], params: list[int], message: str, walks: int
) -> None:
    prog = vm.load(vm.encode(vm.assemble(PROGRAMS["layernorm"][0])))
    with pytest.raises(ValueError, match=message):
        vm.Specializer(prog, walks=walks)(shapes, params)


@pytest.mark.usefixtures("share_from_inline_bytes")
def test_a_first_launch_is_tiled_for_one_core_and_planning_tiles_for_all() -> None:
    """A slot that reads `cores` is evaluated for one core when the first launch may
    run unplanned (on one core), and again for the device's cores when a
    planned launch will share the work; results are the same either way."""
    prog = vm.load(vm.encode(vm.assemble(P.elementwise_chain(tile=P.SHARED_ROWS))))
    four = vm.DeviceSpec(4, 4, 4 << 20, 64, name="four-cores")
    grid = prog.grid[0]

    def chain(x: np.ndarray) -> np.ndarray:
        return np.tanh(np.exp(-np.abs(x)) * np.float32(2.5) + x)

    def check(rows: int, cols: int, first: int, planned: int) -> None:
        x = np.random.default_rng(rows).standard_normal((rows, cols)).astype(np.float32)
        spec = vm.specialize(prog, [x.shape, x.shape], device=four, lazy=True)
        assert (spec.cores, spec.slots[grid]) == (first, first), (rows, cols)
        ys = []
        for _ in range(2):  # unplanned, then planned
            ys.append(np.empty_like(x))
            vm.launch(spec, [x, ys[-1]])
        assert (spec.cores, spec.slots[grid]) == (planned, planned), (rows, cols)
        np.testing.assert_allclose(ys[0], chain(x), rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(ys[0], ys[1])  # elementwise: the same bits

    check(64, 64, first=1, planned=1)  # 32 KiB in all: planned launches run on one core
    check(512, 160, first=1, planned=4)  # 640 KiB: unplanned on one, then shared by four
    check(1024, 160, first=4, planned=4)  # 1.25 MiB: planned at once
    eager = vm.specialize(prog, [(512, 160), (512, 160)], device=four)
    assert (eager.cores, eager.slots[grid]) == (4, 4)  # planned now: for all the cores


def test_a_launch_too_small_to_share_is_tiled_for_one_core(
    monkeypatch: pytest.MonkeyPatch, pool_rounds: list[int]
) -> None:
    """Arguments too large to run unplanned (UNPLANNED_BYTES) but too small for the
    planned launches to share the work (`share_bytes`, here 4 MB) run on the calling
    thread: their slots are evaluated for one core, as one tile per core's share would
    only add tiles, and stay so once planned."""
    monkeypatch.setattr(importlib.import_module("dvm.vm.plan"), "SHARE_WORK", 8_000_000)
    prog = vm.load(vm.encode(vm.assemble(P.elementwise_chain(tile=P.SHARED_ROWS))))
    assert static_module.static_info(prog).share_bytes == 4_000_000
    four = vm.DeviceSpec(4, 4, 4 << 20, 64, name="four-cores-one-core-bytes")
    x = np.random.default_rng(8).standard_normal((1024, 160)).astype(np.float32)  # 1.25 MiB
    spec = vm.specialize(prog, [x.shape, x.shape], device=four, lazy=True)
    assert not spec.small and not spec.shared
    ys = [np.empty_like(x), np.empty_like(x)]
    for y in ys:  # planned at its second launch
        vm.launch(spec, [x, y])
    assert spec.planned and (spec.cores, spec.slots[prog.grid[0]]) == (1, 1)
    assert pool_rounds == []
    np.testing.assert_allclose(ys[0], np.tanh(np.exp(-np.abs(x)) * 2.5 + x), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(ys[0], ys[1])


@pytest.mark.usefixtures("share_from_inline_bytes")
def test_concurrent_launches_meet_the_retiling_safely() -> None:
    """Threads launching one lazy specialization at once: one runs unplanned with
    the one-core tiles while others plan, which evaluates the slots again for four cores.
    Planning waits for the device (its lock), so no launch mixes the two layouts."""
    prog = vm.load(vm.encode(vm.assemble(P.elementwise_chain(tile=P.SHARED_ROWS))))
    four = vm.DeviceSpec(4, 4, 4 << 20, 64, name="four-cores-threads")
    x = np.random.default_rng(7).standard_normal((512, 160)).astype(np.float32)
    want = np.tanh(np.exp(-np.abs(x)) * np.float32(2.5) + x)
    for _ in range(5):
        spec = vm.specialize(prog, [x.shape, x.shape], device=four, lazy=True)
        prog.cache.specializations.clear()  # a new specialization each round

        def run(_: int, spec: vm.Specialization = spec) -> np.ndarray:
            y = np.empty_like(x)
            vm.launch(spec, [x, y])
            return y

        with ThreadPoolExecutor(6) as pool:
            outs = list(pool.map(run, range(12)))
        assert spec.cores == 4
        for y in outs:
            np.testing.assert_array_equal(y, outs[0])
        np.testing.assert_allclose(outs[0], want, rtol=1e-6, atol=1e-6)


def test_two_threads_evicting_at_once_drop_one_specialization_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the cache full, threads A and B each specialize a new shape, and both find
    the oldest entry to drop: A is about to drop it when B comes to drop one. Each drops
    one entry and caches its shape. (B dropped the entry A was dropping, and A's `del`
    raised KeyError out of `vm.launch`.) A waits until B has dropped its entry or waits
    for A's eviction to end."""
    prog = vm.load(vm.encode(vm.assemble(P.elementwise_chain(tile=8))))
    a_drops, b_moved = threading.Event(), threading.Event()

    class PausingA(dict[Any, Any]):
        def __delitem__(self, key: Any) -> None:
            if threading.current_thread().name == "A":
                a_drops.set()
                assert b_moved.wait(10)
            super().__delitem__(key)

    class AnnouncingB:
        lock = threading.Lock()

        def __enter__(self) -> None:
            if threading.current_thread().name != "A":
                b_moved.set()  # (B waits for A's eviction to end)
            self.lock.acquire()

        def __exit__(self, *_: object) -> None:
            self.lock.release()

    monkeypatch.setattr(S, "MAX_CACHED", 2)
    monkeypatch.setattr(S, "_EVICTING", AnnouncingB(), raising=False)
    prog.cache.specializations = PausingA()
    for rows in (1, 2):
        vm.specialize(prog, [(rows, 8), (rows, 8)])
    errors: list[BaseException] = []

    def specialize(rows: int) -> None:
        try:
            vm.specialize(prog, [(rows, 8), (rows, 8)])
        except BaseException as e:
            errors.append(e)
        finally:
            b_moved.set()

    a = threading.Thread(target=specialize, args=(3,), name="A")
    a.start()
    assert a_drops.wait(10)
    specialize(4)
    a.join(10)
    assert errors == []
    assert sorted(shapes[0][0] for (shapes, _), _, _ in prog.cache.specializations) == [3, 4]


@pytest.mark.usefixtures("share_from_inline_bytes")
def test_a_first_launch_runs_on_the_calling_thread_even_with_an_mma(
    pool_rounds: list[int],
) -> None:
    """An unplanned launch runs on the calling thread, with or without an mma, at a size whose
    planned launches share the work: a worker that slept since the last call wakes too
    late for a first launch to gain by it. The planned launches share. The results
    agree."""
    shares = pool_rounds
    cores = min(2, len(importlib.import_module("dvm.vm.memory").pool().queues) + 1)
    rng = np.random.default_rng(3)
    m, k, n = 256, 64, 256  # 513 KiB of arguments: shared, and small enough to run unplanned
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in [(m, k), (k, n), (n,)])
    addmm = vm.load(vm.encode(vm.assemble(P.addmm_relu(32, 32, 16))))
    spec = vm.specialize(addmm, [x.shape, w.shape, b.shape, (m, n)], lazy=True)
    assert spec.small and spec.shared
    first, planned = np.full((m, n), np.nan, np.float32), np.empty((m, n), np.float32)
    vm.launch(spec, [x, w, b, first])
    assert not spec.planned and shares == []
    vm.launch(spec, [x, w, b, planned])
    assert shares == ([2] if cores == 2 else [])
    np.testing.assert_allclose(first, np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(first, planned)

    chain = vm.load(vm.encode(vm.assemble(P.elementwise_chain(tile=P.SHARED_ROWS))))
    x = rng.standard_normal((512, 160)).astype(np.float32)  # 640 KiB: shared too
    spec = vm.specialize(chain, [x.shape, x.shape], lazy=True)
    assert spec.small and spec.shared
    shares.clear()
    vm.launch(spec, [x, np.empty_like(x)])
    assert shares == []  # on the calling thread alone


@pytest.mark.parametrize("in_turn", [True, False])
def test_a_stacked_launch_is_one_launch_over_the_cores(
    pool_rounds: list[int], in_turn: bool
) -> None:
    """`launch_stack` runs independent launches (two programs, one of them twice) as one:
    first launches unplanned, each by itself on the calling thread; the second call plans
    and binds them and runs inline (as a new executable's first launch does below
    FIRST_INLINE_BYTES); then one pool round trip for all, as their traffic together is
    worth the cores, though each alone would run inline. Every result is right, in
    either order."""
    shares = pool_rounds
    cores = min(2, len(importlib.import_module("dvm.vm.memory").pool().queues) + 1)
    rng = np.random.default_rng(4)
    m, k, n = 96, 64, 96  # each launch alone moves less than INLINE_BYTES: inline
    addmm = vm.load(vm.encode(vm.assemble(P.addmm_relu(32, 32, 16))))
    chain = vm.load(vm.encode(vm.assemble(P.elementwise_chain(tile=P.SHARED_ROWS))))
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in [(m, k), (k, n), (n,)])
    y = rng.standard_normal((96, 160)).astype(np.float32)
    mm = vm.specialize(addmm, [x.shape, w.shape, b.shape, (m, n)], lazy=True)
    ch = vm.specialize(chain, [y.shape, y.shape], lazy=True)
    assert mm.small and ch.small
    for call in range(3):
        outs = [np.full((m, n), np.nan, np.float32) for _ in range(2)]
        chained = np.full_like(y, np.nan)
        members = [(mm, [x, w, b, outs[0]], call == 0), (ch, [y, chained], call == 0)]
        members.append((mm, [x, w, b, outs[1]], call == 0))  # the same specialization again
        vm.launch_stack(members, fresh=True, in_turn=in_turn)
        assert mm.planned == (call > 0) and ch.planned == (call > 0)
        assert shares == ([cores] if call == 2 and cores == 2 else []), call
        for out in outs:
            np.testing.assert_allclose(out, np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-5)
        one = np.empty_like(y)
        vm.launch(ch, [y, one])
        np.testing.assert_array_equal(chained, one)


def test_a_stack_of_two_devices_launches_each_by_itself() -> None:
    """Members specialized for another device than the first member's cannot share its
    cores: each runs by itself, planned or not, and every result is right."""
    chain = vm.load(vm.encode(vm.assemble(P.elementwise_chain(tile=P.SHARED_ROWS))))
    y = np.random.default_rng(5).standard_normal((100, 64)).astype(np.float32)
    want = np.empty_like(y)
    vm.launch(vm.specialize(chain, [y.shape, y.shape]), [y, want])
    host = vm.specialize(chain, [y.shape, y.shape], lazy=True)
    ascend = vm.specialize(chain, [y.shape, y.shape], device=vm.DeviceSpec.ascend910b(), lazy=True)
    for call in range(3):
        outs = [np.full_like(y, np.nan) for _ in range(3)]
        members = [(host, [y, outs[0]], False), (ascend, [y, outs[1]], False)]
        members.append((host, [y, outs[2]], False))
        vm.launch_stack(members, fresh=True)
        for out in outs:
            np.testing.assert_array_equal(out, want, err_msg=f"call {call}")
    assert host.planned and ascend.planned


def test_a_launch_keeps_none_of_its_arrays() -> None:
    """Executables stay with their specialization for the shape's next launch, but the
    arrays of the last one are let go: a dropped input's or output's memory is freed.
    Unplanned, planned inline and on the cores, and stacked."""
    chain = vm.load(vm.encode(vm.assemble(P.elementwise_chain(tile=P.SHARED_ROWS))))
    rng = np.random.default_rng(6)
    for rows in (100, 4000):  # inline; big enough for the cores
        spec = vm.specialize(chain, [(rows, 64), (rows, 64)], lazy=True)
        for launch in range(4):
            y = rng.standard_normal((rows, 64)).astype(np.float32)
            out = np.empty_like(y)
            alive = [weakref.ref(y), weakref.ref(out)]
            if launch < 3:
                vm.launch(spec, [y, out])
            else:
                vm.launch_stack([(spec, [y, out], False), (spec, [y, out.copy()], False)])
            del y, out
            assert [r() is None for r in alive] == [True, True], (rows, launch)
        assert spec.planned


SPREAD_STORE = """\
arg a0 f32 1
arg a1 f32 1
params 0
slot s0 = dim(a0,0)
slot s1 = 1024
slot s2 = s0 s1 ceildiv
slot s3 = 0
slot s4 = 1
slot s5 = 4096
grid s2
reg r0 f32 (s1) at s3
reg r1 f32 (s1) at s5
view v0 a0 offset s3 (s0 s4 g0 s1)
view v1 a1 offset s3 (s0 {stride} g0 s1)
load r0, v0
exp r1, r0
store v1, r1
"""
"""y = exp(x) through a store view of stride {stride}: 0 stores every element to one."""


@pytest.mark.parametrize("lazy", [True, False], ids=["unplanned", "planned"])
def test_a_store_view_that_overlaps_itself_is_refused(lazy: bool) -> None:
    """Which of several elements stored to one address would win depends on the order
    the tiles run in: the first launch runs them in order on the calling thread, later
    ones share them among the cores. The specializer refuses such a view for both."""
    prog = vm.load(vm.encode(vm.assemble(SPREAD_STORE.format(stride="s3"))))
    x = np.linspace(0, 1, 200_000, dtype=np.float32)  # planned, it runs on every core
    with pytest.raises(vm.BytecodeError, match="store view overlaps itself") as e:
        spec = vm.specialize(prog, [x.shape, (1,)], lazy=lazy)
        vm.launch(spec, [x, np.zeros(1, np.float32)])
    assert e.value.offset == vm.decode(vm.encode(prog)).offsets.views[1]  # type: ignore[union-attr]
    # one element stores nothing twice, and a stride of one is the identity
    for n, stride in ((1, "s3"), (len(x), "s4")):
        prog = vm.load(vm.encode(vm.assemble(SPREAD_STORE.format(stride=stride))))
        spec = vm.specialize(prog, [(n,), (n,)], lazy=lazy)
        outs = []
        for _ in range(2):  # (a lazy one's first launch is unplanned, the second planned)
            y = np.zeros(n, np.float32)
            vm.launch(spec, [x[:n].copy(), y])
            outs.append(y)
        np.testing.assert_array_equal(outs[0], outs[1])
        if stride == "s4":
            np.testing.assert_allclose(outs[0], np.exp(x), rtol=1e-6)
        else:
            np.testing.assert_allclose(outs[0], np.exp(x[:1]), rtol=1e-6)


@pytest.mark.parametrize(
    ("sizes", "strides", "overlaps"),
    [
        ((4, 5), (5, 1), False),  # row-major
        ((4, 5), (1, 4), False),  # transposed
        ((4, 1, 5), (5, 0, 1), False),  # a unit dim's stride is never used
        ((4, 5), (0, 1), True),  # a broadcast row
        ((4, 5), (4, 1), True),  # rows overlap by one element
        ((3, 2), (2, 3), True),  # interleaved: one-to-one, but refused all the same
        ((4, 5), (-5, 1), False),  # rows reversed
        ((0, 5), (0, 1), False),  # empty
    ],
)
def test_overlaps_itself(sizes: tuple[int, ...], strides: tuple[int, ...], overlaps: bool) -> None:
    checks = importlib.import_module("dvm.vm.checks")
    assert checks.overlaps_itself(sizes, strides) is overlaps


@pytest.mark.parametrize(("rows", "planned_at"), [(8, 4), (64, 2)])
def test_patience_plans_once_the_unplanned_launches_ran_its_price(
    rows: int, planned_at: int
) -> None:
    """A Specializer's patience keeps a small specialization's launches unplanned until
    they have run `patience` times the program's instructions: with tiles of 8 rows, a
    launch over 8 rows runs the program once, so with a patience of 3 the fourth launch
    plans; one over 64 rows runs it 8 times and the second launch plans. Every launch
    computes the same as numpy."""
    prog = vm.load(vm.encode(vm.assemble(P.elementwise_chain(tile=8))))
    x = np.random.default_rng(7).standard_normal((rows, 16)).astype(np.float32)
    spec = vm.Specializer(prog, patience=3)([x.shape, x.shape])
    assert spec.small and spec.plan_after == 3 * len(prog.code)
    for launch in range(1, 6):
        out = np.full_like(x, np.nan)
        vm.launch(spec, [x, out])
        assert spec.planned == (launch >= planned_at), launch
        np.testing.assert_allclose(out, np.tanh(np.exp(-np.abs(x)) * 2.5 + x), rtol=1e-5)


def test_the_cores_share_a_launch_by_its_work_not_its_bytes_alone(pool_rounds: list[int]) -> None:
    """A planned launch shares its tiles among the cores from `share_bytes` of traffic:
    INLINE_BYTES for a program with an mma, more for one doing less work per byte. At
    768 KiB an add of two arrays runs on the calling thread, while tanh(exp(...)) on
    1.25 MiB is shared; both compute what numpy does."""
    static_info = importlib.import_module("dvm.vm.static").static_info
    inline_bytes = importlib.import_module("dvm.vm.plan").INLINE_BYTES
    add = vm.load(vm.encode(vm.assemble(P.single_op("add", "f32", "f32"))))
    chain = vm.load(vm.encode(vm.assemble(P.elementwise_chain(tile=P.SHARED_ROWS))))
    addmm = vm.load(vm.encode(vm.assemble(P.addmm_relu(32, 32, 16))))
    # work per element: add 4 passes over 12 bytes; the chain 16 (exp and tanh 5 each) over 8
    assert static_info(add).share_bytes == 6_000_000
    assert static_info(chain).share_bytes == 1_000_000
    assert static_info(addmm).share_bytes == inline_bytes
    cores = min(2, len(importlib.import_module("dvm.vm.memory").pool().queues) + 1)

    rng = np.random.default_rng(5)
    x, y = (rng.standard_normal(1 << 16).astype(np.float32) for _ in range(2))
    spec = vm.specialize(add, [x.shape, y.shape, x.shape])  # planned now: 768 KiB moved
    assert spec.plan.inline and spec.plan.global_bytes >= inline_bytes
    out = np.empty_like(x)
    vm.launch(spec, [x, y, out])
    assert pool_rounds == []
    np.testing.assert_array_equal(out, x + y)

    x = rng.standard_normal((1024, 160)).astype(np.float32)
    spec = vm.specialize(chain, [x.shape, x.shape])
    out = np.empty_like(x)
    vm.launch(spec, [x, out])
    assert pool_rounds == ([cores] if cores > 1 else [])
    np.testing.assert_allclose(out, np.tanh(np.exp(-np.abs(x)) * np.float32(2.5) + x), rtol=1e-6)
