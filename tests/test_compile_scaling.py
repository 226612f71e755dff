"""Compile work grows linearly with program size: counted, never timed.

Each pass runs on programs of one family of `benchmarks/compile_scaling.py` at
two sizes, the second twice the first, and what it costs may grow about twofold,
not fourfold: the Python function calls it makes (cProfile's count, which unlike
a time does not depend on the machine). Sympy's caches and the expression
caches are emptied before each pass, so that both sizes start alike. Kernels
are kept small (`max-ops`) so that the sizes tested are many kernels long.
"""

from __future__ import annotations

import cProfile
import importlib.util
import pstats
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import sympy
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline

import dvm
import dvm.pipeline as pipeline
from dvm.passes import symbolic

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
    symbolic.parse_expr.cache_clear()
    symbolic.symbol.cache_clear()
    profile = cProfile.Profile()
    profile.enable()
    stage.apply(pipeline.context(), module)
    profile.disable()
    return pstats.Stats(profile).total_calls  # type: ignore[attr-defined]


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
    ],
)
def test_passes_work_in_linear_time(
    family: str, size: int, passes: list[str], measure: Measure
) -> None:
    program = FAMILIES[family]
    small, large = (work(program(n), passes, measure) for n in (size, 2 * size))
    assert large <= LINEAR * small, f"{passes[-1]}: {small} then {large}"
