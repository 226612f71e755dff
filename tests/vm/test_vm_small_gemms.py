"""A stack of launches with an mma each, whose gemms are small, runs on one core even
when its bytes would share the cores (`plan.SHARE_GEMM`)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import vm_programs as P

import dvm.vm as vm
from dvm.vm import plan
from dvm.vm.memory import workers

launch = importlib.import_module("dvm.vm.launch")


def planned(m: int, k: int, n: int) -> vm.Specialization:
    """addmm_relu at (m, k) @ (k, n), planned."""
    program = vm.load(vm.encode(vm.assemble(P.addmm_relu(tm=64, tn=64, tk=64))))
    return vm.specialize(program, [(m, k), (k, n), (n,), (m, n)])


@pytest.mark.skipif(workers() == 0, reason="one CPU: every launch runs on one core")
def test_a_stack_of_small_gemms_runs_on_one_core(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two (512, 64) @ (64, 512) launches move 2.5 MB, enough to share the cores by
    their bytes, but do 33M multiply-adds: shared; at (256, 16) @ (16, 256), 2M
    multiply-adds and 0.6 MB in two: one core, unless SHARE_GEMM is 0."""
    large, small = planned(512, 64, 512), planned(256, 16, 256)
    assert launch._planned_cores([large, large], None) == 2
    assert launch._planned_cores([small, small], None) == 1
    monkeypatch.setattr(plan, "SHARE_GEMM", 0)
    assert launch._planned_cores([small, small], None) == 2


def test_a_small_gemm_on_one_core_is_right() -> None:
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((2, 256, 16)).astype(np.float32)
    w, bias = rng.standard_normal((16, 256)).astype(np.float32), np.zeros(256, np.float32)
    spec = planned(256, 16, 256)
    outs = [np.full((256, 256), np.nan, np.float32) for _ in range(2)]
    vm.launch_stack([(spec, [a, w, bias, outs[0]], False), (spec, [b, w, bias, outs[1]], False)])
    for x, out in zip((a, b), outs, strict=True):
        np.testing.assert_allclose(out, np.maximum(x @ w, 0), rtol=1e-4, atol=1e-4)
