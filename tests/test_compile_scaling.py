"""Compile work grows linearly with program size: counted, never timed.

Each pass runs on programs of one family of `benchmarks/compile_scaling.py` at
two sizes, the second twice the first, and what it costs may grow about twofold,
not fourfold: the Python function calls it makes (cProfile's count, which unlike
a time does not depend on the machine), or for work done in C (copies of sets)
the most memory it holds at once. Sympy's caches and the expression caches are
emptied before each pass, so that both sizes start alike. Kernels are kept small
(`max-ops`) so that the sizes tested are many kernels long.
"""

from __future__ import annotations

import cProfile
import importlib.util
import pstats
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import sympy
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline

import dvm
import dvm.pipeline as pipeline
from dvm.dialects import expr
from dvm.lowering import tensor_to_tile
from dvm.passes import domain
from dvm.passes.dag import MergeableDag

LINEAR = 2.3
"""The most a pass's cost may grow when the program doubles (quadratic: 4)."""


def families() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "compile_scaling.py"
    spec = importlib.util.spec_from_file_location("compile_scaling", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FAMILIES = families().FAMILIES


def calls(stage: PassPipeline, module: ModuleOp) -> int:
    """The Python function calls `stage` makes on `module`."""
    sympy.core.cache.clear_cache()
    for cached in (
        expr.symbol,
        expr.expr_text,
        expr.parse_expr,
        expr.parse_condition_text,
        expr._node_count,
        expr.symbols_in,
        expr.integer_fraction,
        tensor_to_tile.in_named_sizes,
        domain._contiguous_strides,
    ):
        cached.cache_clear()
    profile = cProfile.Profile()
    profile.enable()
    stage.apply(pipeline.context(), module)
    profile.disable()
    return pstats.Stats(profile).total_calls  # type: ignore[attr-defined]


def memory(stage: PassPipeline, module: ModuleOp) -> int:
    """The most memory `stage` holds at once on `module` (what it allocates in C, e.g.
    sets, which calls do not count)."""
    tracemalloc.start()
    try:
        stage.apply(pipeline.context(), module)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


Measure = Callable[[PassPipeline, ModuleOp], int]


def work(text: str, passes: list[str], measure: Measure) -> int:
    """What the last of `passes` costs on `text`, after the ones before."""
    module = dvm.parse(text)
    for spec in passes[:-1]:
        pipeline.parse(spec).apply(pipeline.context(), module)
    return measure(pipeline.parse(passes[-1]), module)


def case(family: str, size: int, passes: list[str], measure: Measure = calls) -> Any:
    name = passes[-1].split("{")[0]
    return pytest.param(family, size, passes, measure, id=f"{name}-{family}")


@pytest.mark.parametrize(
    ("family", "size", "passes", "measure"),
    [
        case("args", 200, ["symbolic-shapes"]),
        case("args", 40, ["symbolic-shapes", "fuse{max-ops=8}"]),
        case("results", 60, ["symbolic-shapes", "fuse{max-ops=8}"]),
        case("chain", 80, ["symbolic-shapes", "fuse{max-ops=8}"]),
        case("blocks", 60, ["symbolic-shapes", "fuse"]),
        # (a size well past the few kilobytes the pass holds whatever the size)
        case("chain", 320, ["symbolic-shapes", "fuse{max-ops=2}", "stack"], memory),
        case("args", 50, ["symbolic-shapes", "fuse{max-ops=2}", "convert-tensor-to-tile"]),
        case(
            "constants",
            40,
            ["symbolic-shapes", "fuse{max-ops=8}", "convert-tensor-to-tile", "dedupe-kernels"],
        ),
    ],
)
def test_passes_work_in_linear_time(
    family: str, size: int, passes: list[str], measure: Measure
) -> None:
    program = FAMILIES[family]
    small, large = (work(program(n), passes, measure) for n in (size, 2 * size))
    assert large <= LINEAR * small, f"{passes[-1]}: {small} then {large}"


def test_merges_search_only_between_the_nodes() -> None:
    """A chain of nodes, each merged into the one before: no search visits a node."""
    dag = MergeableDag(1000, [(i, i + 1) for i in range(999)])
    kept = 0
    for i in range(1, 1000):
        assert not dag.would_cycle(kept, i)
        kept = dag.merge(kept, i)
    assert dag.visits == 0
    assert all(dag.find(i) == kept for i in range(1000))


def reaches_through_another(
    edges: set[tuple[int, int]], find: Callable[[int], int], a: int, b: int
) -> bool:
    """Brute force: a path from `a` to `b` through a third node, nodes merged by `find`."""
    succ: dict[int, set[int]] = {}
    for x, y in edges:
        if find(x) != find(y):
            succ.setdefault(find(x), set()).add(find(y))
    seen = {n for n in succ.get(a, set()) if n != b}
    stack = list(seen)
    while stack:
        for n in succ.get(stack.pop(), set()):
            if n == b:
                return True
            if n not in seen:
                seen.add(n)
                stack.append(n)
    return False


@pytest.mark.parametrize("seed", range(10))
def test_merges_agree_with_a_search_of_the_whole_graph(seed: int) -> None:
    """Random DAGs and random merges: `would_cycle` and `indirect` answer as a search
    of the whole graph does, and the order stays topological."""
    rng = np.random.default_rng(seed)
    count = 20
    edges = {(a, b) for a in range(count) for b in range(a + 1, count) if rng.random() < 0.15}
    dag = MergeableDag(count, edges)
    for _ in range(25):
        nodes = sorted({dag.find(n) for n in range(count)})
        if len(nodes) < 2:
            break
        linked = dag.indirect(nodes)
        for k, a in enumerate(nodes):
            for j, b in enumerate(nodes):
                if a != b:
                    cycle = reaches_through_another(edges, dag.find, a, b) or (
                        reaches_through_another(edges, dag.find, b, a)
                    )
                    assert dag.would_cycle(a, b) == cycle
                    assert bool(linked[k] >> j & 1) == cycle
        a, b = rng.choice(nodes, 2, replace=False)
        if not dag.would_cycle(int(a), int(b)):
            dag.merge(int(a), int(b))
        for x, y in edges:
            if dag.find(x) != dag.find(y):
                assert dag.position[dag.find(x)] < dag.position[dag.find(y)]
