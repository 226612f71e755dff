"""The ahead-of-time peers: ONNX Runtime and IREE, compiled once with dynamic dims.

Neither recompiles per shape, so they test this project's claim head on. Each
workload's torch version (workloads.py) is exported once to ONNX (the
TorchScript exporter, opset 17), every dim that depends on the stream's shape
marked dynamic: the dims that differ between the inputs made at two shapes. A
workload whose control flow depends on data (`if_else_add`) is exported through
`torch.jit.script`, so its branch is an ONNX `If` that picks the path per call;
a trace would bake in the path of its example.

- `onnxruntime`: one `InferenceSession` on the CPU provider, `intra_op` threads
  as the run's, called with the numpy inputs.
- `iree`: the ONNX model imported into MLIR (`iree-import-onnx`), compiled for
  `llvm-cpu` on this CPU (`--iree-llvmcpu-target-cpu=host`) with its dims
  dynamic, and run on the `local-task` driver with the run's thread count; each
  call copies its results back to numpy arrays, as every other system returns.

The export, the session and the compile are each system's one-time cost
(`System.compile_s`), reported apart from its stream, like Inductor's warm-up.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from suite.workloads import Workload

OPSET = 17
SCRIPTED: dict[str, Callable[[], Any]] = {}
"""Workloads exported through `torch.jit.script` (data-dependent control flow): name ->
a function making the module."""


def _if_else_add_module() -> Any:
    import torch

    class IfElseAdd(torch.nn.Module):
        """`if_else_add` with its branch kept: (x + 1 if sum(x) > 0 else x - 1) + x."""

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = x + 1.0 if bool(x.sum() > 0) else x - 1.0
            return y + x

    return torch.jit.script(IfElseAdd())


SCRIPTED["if_else_add"] = _if_else_add_module


def threads() -> int:
    """The run's thread count (`set_thread_env` exports it before anything loads)."""
    return int(os.environ.get("OMP_NUM_THREADS", "2"))


def dynamic_axes(workload: Workload) -> tuple[list[str], dict[str, dict[int, str]], tuple]:
    """Input names, the dims that vary with the shape (named per input and axis), and
    example inputs: the dims that differ between the inputs made at two shapes."""
    shape = workload.sampler(1)[0]
    rng = np.random.default_rng(0)
    a = workload.make_inputs(shape, rng)
    b = workload.make_inputs(tuple(n + 1 for n in shape), rng)
    names = [f"in{i}" for i in range(len(a))]
    axes: dict[str, dict[int, str]] = {}
    for name, x, y in zip(names, a, b, strict=True):
        varying = {d: f"{name}_d{d}" for d in range(x.ndim) if x.shape[d] != y.shape[d]}
        if varying:
            axes[name] = varying
    return names, axes, a


def export_onnx(workload: Workload, path: Path) -> list[str]:
    """Write `workload` as an ONNX model with dynamic dims to `path`; its input names."""
    import torch

    names, axes, example = dynamic_axes(workload)
    if workload.name in SCRIPTED:
        model = SCRIPTED[workload.name]()
    else:

        class Exported(torch.nn.Module):
            def forward(self, *args: torch.Tensor) -> Any:
                return workload.torch(*args)

        model = Exported()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's deprecation and tracer notes
        torch.onnx.export(
            model,
            tuple(torch.from_numpy(x) for x in example),
            str(path),
            input_names=names,
            dynamic_axes=axes,
            dynamo=False,
            opset_version=OPSET,
        )
    return names


def onnxruntime_callable(workload: Workload, folder: Path) -> tuple[Callable[..., Any], float]:
    """The workload on ONNX Runtime, and its one-time cost (export and session), in s."""
    import onnxruntime as ort

    t0 = time.perf_counter()
    path = folder / f"{workload.name}.onnx"
    names = export_onnx(workload, path)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads()
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    run = session.run

    def call(*args: np.ndarray) -> Any:
        return run(None, dict(zip(names, args, strict=True)))

    return call, time.perf_counter() - t0


_IREE: dict[str, Any] = {}
"""The process's IREE runtime config (its thread flags are read once)."""


def _iree_config() -> Any:
    import iree.runtime as rt

    if "config" not in _IREE:
        rt.flags.parse_flags(f"--task_topology_max_group_count={threads()}")
        _IREE["config"] = rt.Config("local-task")
    return _IREE["config"]


def iree_callable(workload: Workload, folder: Path) -> tuple[Callable[..., Any], float]:
    """The workload on IREE (llvm-cpu, dynamic dims), and its one-time cost (export,
    import and compile), in s."""
    import iree.compiler as compiler
    import iree.runtime as rt

    t0 = time.perf_counter()
    onnx_path, mlir_path = folder / f"{workload.name}.onnx", folder / f"{workload.name}.mlir"
    if not onnx_path.exists():
        export_onnx(workload, onnx_path)
    importer = [sys.executable, "-m", "iree.compiler.tools.import_onnx"]
    subprocess.run([*importer, str(onnx_path), "-o", str(mlir_path)], check=True)
    flatbuffer = compiler.compile_file(
        str(mlir_path), target_backends=["llvm-cpu"], extra_args=["--iree-llvmcpu-target-cpu=host"]
    )
    context = rt.SystemContext(config=_iree_config())
    context.add_vm_module(rt.VmModule.copy_buffer(context.instance, flatbuffer))
    main = context.modules.module["main_graph"]

    def call(*args: np.ndarray) -> tuple[np.ndarray, ...]:
        out = main(*args)
        items = out if isinstance(out, tuple | list) else (out,)
        return tuple(item.to_host() for item in items)

    return call, time.perf_counter() - t0


BUILDERS = {"onnxruntime": onnxruntime_callable, "iree": iree_callable}
"""System name -> how it is built for a workload."""


def build(name: str, workload: Workload) -> tuple[Callable[..., Any], float]:
    """System `name` bound to `workload` (its files in a temporary folder, removed once
    the model is loaded)."""
    folder = Path(tempfile.mkdtemp(prefix=f"dvm_bench_{name}_"))
    try:
        return BUILDERS[name](workload, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
