"""The systems under test, as callables on one workload's inputs.

- `dvm`: this project, `dvm.compile(program)` once per workload (timed
  separately), then called with numpy arrays; a new shape pays the
  specialization inside its first call.
- `numpy`: numpy eager, the examples' reference composites.
- `torch`: torch eager, the same composite with torch ops.
- `numexpr`: where the workload is elementwise (see workloads.py).
- `inductor_recompile`: `torch.compile(fn, dynamic=False)` with dynamo's
  recompile limit raised, so every new shape is a full recompile (and a hit
  of the limit is an error, never a silent fallback to eager).
- `inductor_dynamic`: `torch.compile(fn, dynamic=True)`: one symbolic graph,
  recompiled only where a guard fails (a branch taken for the first time, a
  dim of 1, ...).
- `torch_dvm`: `torch.compile(fn, backend="dvm", dynamic=True)`: this project
  as a torch.compile backend (dvm.torch), one graph per structure, each ATen
  graph compiled once by dvm and specialized per shape.
- `dvm_lazy`: the workload's numpy version run on `dvm.lazy` arrays (recorded,
  fused and compiled per structure, flushed when the outputs are read).
- `onnxruntime`, `iree`: the ahead-of-time peers, the workload exported once to
  ONNX with dynamic dims (see aot_peers.py); their one-time costs are timed
  apart from the stream.

Each Inductor mode has its own fresh `TORCHINDUCTOR_CACHE_DIR` (a temp dir
made by the runner), set in the environment before that mode's calls (outside
the timed region; Inductor reads the variable on every cache access), and its
own copy of the function's code object: dynamo keeps its compiled-code cache
on the code object, so the two modes cannot see each other's graphs.
"""

from __future__ import annotations

import os
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from suite import aot_peers
from suite.workloads import Workload

ORDER = [
    "dvm", "numpy", "torch", "numexpr", "inductor_recompile", "inductor_dynamic",
    "torch_dvm", "dvm_lazy", "onnxruntime", "iree",
]  # fmt: skip
"""Every system, in the order they run at each shape and appear in the report."""

LABELS = {
    "dvm": "dvm (this project)",
    "numpy": "numpy eager",
    "torch": "torch eager",
    "numexpr": "numexpr",
    "inductor_recompile": "Inductor recompile (dynamic=False)",
    "inductor_dynamic": "Inductor dynamic (dynamic=True)",
    "torch_dvm": "torch.compile(backend=dvm, dynamic=True)",
    "dvm_lazy": "dvm.lazy (numpy code, recorded)",
    "onnxruntime": "ONNX Runtime (dynamic axes)",
    "iree": "IREE (llvm-cpu, dynamic dims)",
}
SHORT = {
    "dvm": "dvm",
    "numpy": "numpy",
    "torch": "torch",
    "numexpr": "numexpr",
    "inductor_recompile": "Ind-recompile",
    "inductor_dynamic": "Ind-dynamic",
    "torch_dvm": "torch+dvm",
    "dvm_lazy": "lazy",
    "onnxruntime": "ORT",
    "iree": "IREE",
}
INDUCTOR = {"inductor_recompile": False, "inductor_dynamic": True}
"""Inductor system -> torch.compile's `dynamic` argument."""


@dataclass
class System:
    """One system bound to one workload."""

    name: str
    fn: Callable[..., Any]
    takes_torch: bool
    """Called with torch tensors (sharing the numpy inputs' memory)."""
    cache_dir: str | None = None
    """TORCHINDUCTOR_CACHE_DIR to set before its calls."""
    compile_s: float | None = None
    """Ahead-of-time compile time (dvm, ONNX Runtime, IREE; Inductor compiles inside
    calls)."""
    program: Any = None
    """dvm's CompiledProgram (for VM statistics)."""
    extra: dict[str, Any] = field(default_factory=dict)

    def enter(self) -> None:
        """Prepare for this system's calls (outside the timed region)."""
        if self.cache_dir is not None:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = self.cache_dir


def fresh_function(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A copy of `fn` with its own code object (dynamo caches per code object)."""
    code = fn.__code__.replace()
    return types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def configure_dynamo() -> dict[str, Any]:
    """Raise dynamo's recompile limits (recompile mode compiles every shape)."""
    import torch._dynamo.config as cfg

    cfg.recompile_limit = 100_000
    cfg.accumulated_recompile_limit = 100_000
    cfg.fail_on_recompile_limit_hit = True
    return {
        "recompile_limit": cfg.recompile_limit,
        "accumulated_recompile_limit": cfg.accumulated_recompile_limit,
        "fail_on_recompile_limit_hit": cfg.fail_on_recompile_limit_hit,
    }


def torch_compile_warmup(dynamic: bool, cache_dir: str | None, backend: str = "inductor") -> float:
    """Compile and run an unrelated function once: the process's one-time start-up of
    a torch.compile backend (imports, compile workers), reported on its own."""
    import torch

    if cache_dir is not None:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache_dir

    def warm(x: torch.Tensor) -> torch.Tensor:
        return x * 2.0 + 1.0

    compiled = torch.compile(fresh_function(warm), dynamic=dynamic, backend=backend)
    t0 = time.perf_counter()
    compiled(torch.randn(7, 9))
    return time.perf_counter() - t0


def dvm_warmup() -> float:
    """Compile and run a small program once: dvm's one-time start-up (xDSL
    and the pipeline's imports, the VM's worker pool), reported on its own."""
    import dvm

    text = """
func.func @warm(%x: tensor<?x?xf32>, %w: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %m = tensor.matmul %x, %w : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %e = tensor.exp %m : tensor<?x?xf32>
  %s = tensor.reduce_sum %e {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %y = tensor.div %e, %s : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
"""
    t0 = time.perf_counter()
    program = dvm.compile(text)
    x = np.ones((300, 40), np.float32)
    program(x, np.ones((40, 50), np.float32) * np.float32(0.01))
    return time.perf_counter() - t0


def build_systems(
    workload: Workload, enabled: list[str], cache_dirs: dict[str, str]
) -> list[System]:
    """The enabled systems that apply to `workload`, in ORDER; dvm's compile is timed here."""
    out: list[System] = []
    for name in ORDER:
        if name not in enabled:
            continue
        if name == "dvm":
            import dvm

            t0 = time.perf_counter()
            program = dvm.compile(workload.program)
            compile_s = time.perf_counter() - t0
            out.append(System("dvm", program, False, compile_s=compile_s, program=program))
        elif name == "numpy":
            out.append(System("numpy", workload.numpy, False))
        elif name == "torch":
            out.append(System("torch", workload.torch, True))
        elif name == "numexpr":
            if workload.numexpr is not None:
                out.append(System("numexpr", workload.numexpr, False))
        elif name in INDUCTOR:
            import torch

            os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache_dirs[name]
            compiled = torch.compile(fresh_function(workload.torch), dynamic=INDUCTOR[name])
            out.append(System(name, compiled, True, cache_dir=cache_dirs[name]))
        elif name == "torch_dvm":
            import torch

            compiled = torch.compile(fresh_function(workload.torch), backend="dvm", dynamic=True)
            out.append(System(name, compiled, True))
        elif name == "dvm_lazy":
            out.append(System(name, on_lazy_arrays(workload.numpy), False))
        elif name in aot_peers.BUILDERS:
            fn, one_time_s = aot_peers.build(name, workload)
            out.append(System(name, fn, False, compile_s=one_time_s))
    return out


def on_lazy_arrays(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` (numpy code) called on lazy arrays over its inputs; its outputs read back."""
    from dvm import lazy

    def call(*args: np.ndarray) -> Any:
        out = fn(*[lazy.asarray(a) for a in args])
        if isinstance(out, tuple | list):
            return tuple(np.asarray(o) for o in out)
        return np.asarray(out)

    return call


def to_numpy(result: Any) -> tuple[np.ndarray, ...]:
    """A system's result as a tuple of numpy arrays."""
    items = result if isinstance(result, tuple | list) else (result,)
    out = []
    for item in items:
        if hasattr(item, "detach"):
            item = item.detach().numpy()
        out.append(np.asarray(item))
    return tuple(out)
