"""The peers' stream totals measured on the benchmark machine when it was quiet.

From `shared/baselines/summary.md` (run A: Inductor recompile mode, run B:
Inductor dynamic mode, each in its own process; numpy, torch and numexpr in
both): 30 shapes x 10 calls, the same shape streams as this benchmark's
`matmul`, `addmm_relu`, `addmm_gelu`, `layernorm` and `if_else_add` (same
samplers, same seeds), 2 threads. The report sets them beside this run's
numbers: they show how much the machine's other work inflated each peer.

Small differences in the composites: the baseline's numpy addmm adds the bias
and applies relu in place, and its torch LayerNorm uses `rsqrt`.
"""

from __future__ import annotations

SOURCE = "shared/baselines/summary.md"
SHAPES = 30
REPS = 10
QUIET_NUMPY_STEADY_MS = {
    "matmul": 0.447,
    "addmm_relu": 0.384,
    "addmm_gelu": 0.492,
    "layernorm": 0.506,
    "if_else_add": 0.122,
}
"""numpy's steady-state median over the stream's shapes (run A)."""

STREAM_TOTALS_S: dict[str, dict[str, tuple[float, ...]]] = {
    "matmul": {
        "numpy": (0.65, 0.69),
        "torch": (0.53, 0.53),
        "inductor_recompile": (4.22,),
        "inductor_dynamic": (0.86,),
    },
    "addmm_relu": {
        "numpy": (0.72, 0.66),
        "torch": (0.68, 0.67),
        "numexpr": (1.29, 1.57),
        "inductor_recompile": (41.40,),
        "inductor_dynamic": (2.03,),
    },
    "addmm_gelu": {
        "numpy": (1.01, 1.28),
        "torch": (0.88, 0.89),
        "numexpr": (3.23, 3.48),
        "inductor_recompile": (52.15,),
        "inductor_dynamic": (2.45,),
    },
    "layernorm": {
        "numpy": (0.89, 1.14),
        "torch": (0.36, 0.40),
        "numexpr": (1.07, 1.29),
        "inductor_recompile": (48.09,),
        "inductor_dynamic": (2.32,),
    },
    "if_else_add": {
        "numpy": (0.26, 0.32),
        "torch": (0.13, 0.15),
        "numexpr": (0.32, 0.32),
        "inductor_recompile": (78.33,),
        "inductor_dynamic": (4.97,),
    },
}
"""Workload -> system -> stream totals in seconds (runs A and B where both ran)."""


def quiet_total(workload: str, system: str) -> float | None:
    """The baseline's stream total (mean over its runs), or None."""
    runs = STREAM_TOTALS_S.get(workload, {}).get(system)
    return sum(runs) / len(runs) if runs else None
