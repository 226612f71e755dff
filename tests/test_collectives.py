"""Collectives (`tensor.all_reduce`, `all_gather`, `reduce_scatter`): the ops, their
symbolic shapes, the world of one process, and programs across two processes on
gloo over loopback (`tests/collective_worker.py` is one such process)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

import dvm
from dvm import pipeline
from dvm.collectives import SINGLE_PROCESS, reducible, torch_view, world_of
from dvm.errors import CompileError, ShapeError
from dvm.numerics import bfloat16
from dvm.sharding import check_gather, parse_sharding, shard, unshard
from dvm.tools import dvm_run

EXAMPLES = Path(dvm.__file__).parent / "examples"
WORKER = Path(__file__).parent / "collective_worker.py"

GATHER_SCATTER = """
func.func @main(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %g = tensor.all_gather %x {axis = 0} : tensor<?x8xf32> -> tensor<?x8xf32>
  %e = tensor.exp %g : tensor<?x8xf32>
  %r = tensor.reduce_scatter %e {axis = 0, kind = "sum"} : tensor<?x8xf32> -> tensor<?x8xf32>
  %s = tensor.add %r, %x : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %e, %s : tensor<?x8xf32>, tensor<?x8xf32>
}
"""


def one_op(op: str, attrs: str, source: str, result: str) -> str:
    return (
        f"func.func @main(%x: {source}) -> {result} {{\n"
        f"  %r = {op} %x {{{attrs}}} : {source} -> {result}\n"
        f"  return %r : {result}\n}}\n"
    )


# -- the ops ------------------------------------------------------------------------


def test_the_ops_print_as_they_parse() -> None:
    text = one_op("tensor.all_reduce", 'kind = "max"', "tensor<?x4xf32>", "tensor<?x4xf32>")
    assert 'tensor.all_reduce %x {kind = "max"} : tensor<?x4xf32> -> tensor<?x4xf32>' in str(
        dvm.parse(text)
    )
    printed = str(dvm.parse(GATHER_SCATTER))
    assert "tensor.all_gather %x {axis = 0 : i64} : tensor<?x8xf32> -> tensor<?x8xf32>" in printed
    assert 'tensor.reduce_scatter %e {axis = 0 : i64, kind = "sum"}' in printed


@pytest.mark.parametrize(
    ("op", "attrs", "source", "result", "message"),
    [
        ("all_reduce", 'kind = "mean"', "4xf32", "4xf32", "kind 'mean' is not one of sum, max"),
        ("all_reduce", 'kind = "sum"', "4xi1", "4xi1", "expected a numeric type"),
        ("all_reduce", 'kind = "prod"', "4xf32", "4xf16", "changes the element type"),
        ("all_reduce", 'kind = "min"', "4xf32", "5xf32", "has dim 5 at axis 0, expected 4"),
        ("all_gather", "axis = 2", "4x2xf32", "4x2xf32", "axis 2 is out of range"),
        ("all_gather", "axis = 0", "4x2xf32", "?x3xf32", "has dim 3 at axis 1, expected 2"),
        ("reduce_scatter", 'axis = 0, kind = "sum"', "4xf32", "4x1xf32", "has rank 2"),
        ("reduce_scatter", 'axis = 0, kind = "sum"', "4xui1", "?xui1", "expected a numeric"),
    ],
)
def test_the_verifiers_say_what_is_wrong(
    op: str, attrs: str, source: str, result: str, message: str
) -> None:
    text = one_op(f"tensor.{op}", attrs, f"tensor<{source}>", f"tensor<{result}>")
    with pytest.raises(VerifyException, match=message):
        dvm.parse(text)


def test_an_all_gather_grows_its_axis_by_the_world_and_a_scatter_divides_it() -> None:
    printed = str(pipeline.run(GATHER_SCATTER, "symbolic-shapes"))
    assert "tensor.all_gather %x {dvm.shape = #dvm.shape<world*x_0, 8>" in printed
    assert "tensor.reduce_scatter %e {dvm.shape = #dvm.shape<x_0, 8>" in printed  # w*x_0 / w
    scatter = one_op(
        "tensor.reduce_scatter", 'axis = 1, kind = "sum"', "tensor<3x?xf32>", "tensor<3x?xf32>"
    )
    printed = str(pipeline.run(scatter, "symbolic-shapes"))
    assert "#dvm.shape<3, floor(x_1/world)>" in printed
    assert "#dvm.cond<Mod(x_1, world) == 0>" in printed


def test_an_index_argument_named_world_keeps_a_symbol_of_its_own() -> None:
    text = """
func.func @main(%x: tensor<?xf32>, %world: index) -> tensor<?xf32> {
  %g = tensor.all_gather %x {axis = 0} : tensor<?xf32> -> tensor<?xf32>
  return %g : tensor<?xf32>
}
"""
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(dvm.compile(text)(x, 5), x)


# -- a world of one process ---------------------------------------------------------


def mlp_reference(x: Any, w1: Any, b1: Any, w2: Any, b2: Any) -> Any:
    return np.maximum(x @ w1 + b1, 0) @ w2 + b2


def test_a_world_of_one_runs_the_whole_program() -> None:
    assert world_of(None) is SINGLE_PROCESS
    rng = np.random.default_rng(0)
    program = dvm.compile(EXAMPLES / "tp_mlp.mlir")
    for batch, model, hidden in [(3, 8, 16), (1, 5, 3), (0, 4, 4)]:
        shapes = [(batch, model), (model, hidden), (hidden,), (hidden, model), (model,)]
        args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        want = mlp_reference(*args)
        np.testing.assert_allclose(program(*args), want, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(
            dvm.interpret(EXAMPLES / "tp_mlp.mlir", *args), want, rtol=1e-4, atol=1e-4
        )
    x = rng.standard_normal((5, 8)).astype(np.float32)
    compiled, interpreted = dvm.compile(GATHER_SCATTER)(x), dvm.interpret(GATHER_SCATTER, x)
    for got, want in zip(compiled, interpreted, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_a_group_without_torch_distributed_is_a_compile_error() -> None:
    with pytest.raises(CompileError, match="no process group for the collectives: "):
        dvm.compile(GATHER_SCATTER, group=object())


def test_a_gathered_static_size_is_checked_when_the_program_runs() -> None:
    text = one_op("tensor.all_gather", "axis = 0", "tensor<4xf32>", "tensor<8xf32>")
    with pytest.raises(ShapeError, match=r"%r = tensor.all_gather needs 4\*world == 8"):
        dvm.compile(text)(np.zeros(4, np.float32))


def test_a_world_of_one_needs_no_torch() -> None:
    script = (
        "import sys; sys.modules['torch'] = None\n"  # `import torch` fails
        "import numpy as np, dvm\n"
        f"program = dvm.compile({GATHER_SCATTER!r})\n"
        "x = np.ones((2, 8), np.float32)\n"
        "print(program(x)[1].sum())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) == pytest.approx(16 * (np.e + 1))


@pytest.mark.parametrize("dtype", [np.int16, np.uint16, np.uint32, np.uint64])
@pytest.mark.parametrize("kind", ["sum", "prod", "max", "min"])
def test_types_gloo_does_not_reduce_travel_as_ones_it_does(dtype: Any, kind: str) -> None:
    """The reduction of the types gloo reduces, then the conversion back, is the
    reduction of the original type (numpy's wrapping sums and products)."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(1)
    parts = [rng.integers(info.min, info.max, size=6, dtype=dtype) for _ in range(3)]
    parts[0][:2] = info.max, info.min
    ufunc = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}[kind]
    sent = [reducible(p, kind) for p in parts]
    assert all(s.dtype in (np.int32, np.int64) for s, _ in sent)
    wire = sent[0][0].dtype
    combined = ufunc.reduce(np.stack([s for s, _ in sent]), dtype=wire)
    want = ufunc.reduce(np.stack(parts), dtype=dtype)
    np.testing.assert_array_equal(sent[0][1](combined), want)


def test_a_sharding_cuts_and_joins_arrays() -> None:
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    for text in ("replicate", "split:1", "partial"):
        spec = parse_sharding(text)
        assert str(spec) == text
        np.testing.assert_array_equal(unshard([shard(x, spec, r, 2) for r in (0, 1)], spec), x)
    with pytest.raises(ValueError, match="write replicate, partial or split:AXIS"):
        parse_sharding("split")
    with pytest.raises(ValueError, match="result 0 has rank 2: it has no axis 7 to gather"):
        check_gather("result 0", parse_sharding("split:7"), x.shape)
    check_gather("result 0", parse_sharding("split:1"), x.shape)


def test_dvm_run_rejects_a_bad_sharding_before_it_starts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = [str(EXAMPLES / "sp_layernorm.mlir"), "--nproc", "2", "--shapes", "4x4", "4", "4"]
    assert dvm_run.main([*argv, "--shard", "split:x"]) == 1
    assert "invalid sharding 'split:x': write replicate, partial or split:AXIS" in (
        capsys.readouterr().err
    )
    assert dvm_run.main([*argv[:-4], "--nproc", "0"]) == 1
    assert "the number of processes must be at least 1" in capsys.readouterr().err


# -- two processes, gloo over loopback ----------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_two_processes_match_the_single_process_program_and_fail_without_a_peer() -> None:
    """Rank 0 and rank 1 of `tests/collective_worker.py`: the tensor-parallel MLP and the
    sequence-parallel LayerNorm on streams of shapes, every element type through every
    collective, then a peer that stalls and dies. Both are killed at the end, whatever
    happened."""
    port, processes = free_port(), []
    try:
        for rank in (0, 1):
            env = {
                **os.environ,
                **{"RANK": str(rank), "WORLD_SIZE": "2", "OMP_NUM_THREADS": "1"},
                **{"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)},
            }
            command = [sys.executable, str(WORKER)]
            processes.append(subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True))
        out, _ = processes[0].communicate(timeout=180)
    finally:
        for process in processes:
            process.kill()
            process.communicate()
    assert processes[0].returncode == 0, out
    assert "ok: 6 MLP shapes, 5 LayerNorm shapes, 13 types" in out
    assert "ok: 10 ops of an FX graph on dvm" in out
    assert (
        "indivisible: @layernorm: %x = tensor.reduce_scatter needs Mod(h_0, world) == 0 "
        "(equal sizes), but Mod(h_0, world) (from axis 0 of %h) is 1 and it must be 0"
    ) in out
    failed = "%s = tensor.all_reduce: the collective failed on rank 0 of a world of 2"
    for what, reason in [("stalls", "Timed out waiting 1000ms"), ("dies", "closed by peer")]:
        line = next(line for line in out.splitlines() if line.startswith(f"a peer that {what}"))
        assert failed in line and reason in line, line
        seconds = float(line.split("failed after ")[1].split(" s")[0])
        assert seconds < 1.0 + 5.0  # the group's timeout, and slack for a busy machine


def test_dvm_run_runs_a_program_across_two_processes() -> None:
    command = [
        *(sys.executable, "-m", "dvm.tools.dvm_run", str(EXAMPLES / "sp_layernorm.mlir")),
        *("--nproc", "2", "--shapes", "16x64", "64", "64"),
        *("--shard", "partial", "replicate", "replicate", "--timeout", "30", "--check"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "result 0: (16, 64) float32" in done.stdout
    assert "check result 0: ok" in done.stdout


@pytest.mark.parametrize("dtype", [bfloat16(), np.float16, np.int8, np.bool_, np.uint64])
def test_the_collectives_see_the_numpy_buffers_themselves(dtype: Any) -> None:
    import torch

    x = np.arange(4).astype(dtype)
    t = torch_view(x)
    assert t.data_ptr() == x.ctypes.data
    assert t.dtype == (torch.bfloat16 if dtype == bfloat16() else torch.from_numpy(x).dtype)


def test_the_torch_backend_runs_functional_collectives_on_dvm_or_in_torch() -> None:
    """In an FX graph, torch's functional collectives of the default group become the
    dialect's; `avg`, which has no counterpart, and another group's run in torch, each
    waited for there."""
    import torch
    import torch.distributed as dist
    from torch.fx.experimental.proxy_tensor import make_fx

    from dvm.torch.graph import GraphRunner

    c10d = torch.ops._c10d_functional
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=1
    )
    try:
        default, another = dist.group.WORLD, dist.new_group([0])
        assert isinstance(default, dist.ProcessGroup) and isinstance(another, dist.ProcessGroup)
        name, other = default.group_name, another.group_name

        def step(x: Any, y: Any) -> list[Any]:
            a = c10d.wait_tensor(c10d.all_reduce(torch.tanh(x), "sum", name))
            g = c10d.wait_tensor(c10d.all_gather_into_tensor(a * 2, 1, name))
            r = c10d.wait_tensor(c10d.reduce_scatter_tensor(g + y, "max", 1, name))
            m = c10d.wait_tensor(c10d.all_reduce(r, "avg", name))
            return [torch.exp(c10d.wait_tensor(c10d.all_reduce(m, "sum", other)))]

        generator = torch.Generator().manual_seed(0)
        x, y = (torch.randn(4, 3, generator=generator) for _ in range(2))
        runner = GraphRunner(make_fx(step)(x, y), "collectives")
        torch.testing.assert_close(runner(x, y)[0], step(x, y)[0])
        assert runner.report.fallbacks == {"all_reduce": 2}  # avg, and another group
        assert runner.report.ops_on_dvm == runner.report.ops_total - 2
    finally:
        dist.destroy_process_group()
