"""One process of the gloo tests of `tests/test_collectives.py`:

    python tests/collective_worker.py     (RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT
                                           in the environment)

Two ranks (process start and torch's import cost most: one pair runs everything):

- the tensor-parallel MLP and the sequence-parallel LayerNorm of `dvm/examples` on a
  stream of shapes, each rank on its part of the inputs, against the single-process
  program on the whole inputs; then every element type through every collective,
  against numpy; an FX graph of torch's functional collectives through the torch
  backend, against torch; a reduce-scatter whose axis does not divide;
- a program compiled for a group with a short timeout, whose peer first stalls,
  then dies: rank 0 must fail both times, in bounded time.

Rank 0 prints what it checked and measured; a failed check is a traceback and exit 1.
"""

from __future__ import annotations

import os
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import torch.distributed as dist

import dvm
from dvm.errors import ExecutionError, ShapeError
from dvm.numerics import bfloat16, is_float_dtype
from dvm.sharding import parse_sharding, shard

EXAMPLES = Path(dvm.__file__).parent / "examples"
MLP_SHARDING = [parse_sharding(s) for s in ("replicate", "split:1", "split:0", "split:0")]
MLP_SHARDING.append(parse_sharding("replicate"))
MLP_SHAPES = [  # (batch, model, hidden): hidden splits among the ranks
    (1, 8, 4),
    (5, 16, 32),
    (8, 64, 256),
    (3, 7, 6),
    (17, 32, 64),
    (0, 8, 4),
]
SHORT_TIMEOUT_S = 1.0
LAYERNORM_SHAPES = [(2, 8), (16, 64), (6, 5), (32, 128), (4, 1)]  # (rows, features)


def whole_inputs(shapes: list[tuple[int, ...]], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)  # the same on every rank
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


def check_close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    error = float(np.abs(got - want).max(initial=0.0))
    assert error <= 1e-4 * scale, f"{what}: off by {error} (scale {scale})"


def run_mlp(rank: int, world: int) -> int:
    program = dvm.compile(EXAMPLES / "tp_mlp.mlir")
    for k, (batch, model, hidden) in enumerate(MLP_SHAPES):
        shapes = [(batch, model), (model, hidden), (hidden,), (hidden, model), (model,)]
        whole = whole_inputs(shapes, seed=k)
        parts = [shard(x, s, rank, world) for x, s in zip(whole, MLP_SHARDING, strict=True)]
        got = program(*parts)
        want = dvm.interpret(EXAMPLES / "tp_mlp.mlir", *whole)
        check_close(got, want, f"MLP {batch}x{model}x{hidden} on rank {rank}")
    return len(MLP_SHAPES)


def run_layernorm(rank: int, world: int) -> int:
    program = dvm.compile(EXAMPLES / "sp_layernorm.mlir")
    for k, (rows, features) in enumerate(LAYERNORM_SHAPES):
        rows *= world
        h, w, b = whole_inputs([(world, rows, features), (features,), (features,)], seed=k)
        # each rank holds a partial sum of the residual stream: the sum of all is the whole
        got = program(np.ascontiguousarray(h[rank]), w, b)
        want = dvm.interpret(EXAMPLES / "sp_layernorm.mlir", h.sum(axis=0), w, b)
        check_close(got, want, f"LayerNorm {rows}x{features} on rank {rank}")
    return len(LAYERNORM_SHAPES)


TYPES: dict[str, Any] = {
    "f16": np.float16,
    "bf16": bfloat16(),
    "f32": np.float32,
    "f64": np.float64,
    **{f"i{w}": np.dtype(f"int{w}") for w in (8, 16, 32, 64)},
    **{f"ui{w}": np.dtype(f"uint{w}") for w in (8, 16, 32, 64)},
    "i1": np.bool_,
}

EVERY_COLLECTIVE = """
func.func @main(%x: tensor<2x?xT>) -> (tensor<2x?xT>, tensor<2x?xT>, tensor<2x?xT>,
                                       tensor<2x?xT>, tensor<2x?xT>, tensor<2x?xT>) {
  %sum = tensor.all_reduce %x {kind = "SUM"} : tensor<2x?xT> -> tensor<2x?xT>
  %prod = tensor.all_reduce %x {kind = "PROD"} : tensor<2x?xT> -> tensor<2x?xT>
  %max = tensor.all_reduce %x {kind = "max"} : tensor<2x?xT> -> tensor<2x?xT>
  %min = tensor.all_reduce %x {kind = "min"} : tensor<2x?xT> -> tensor<2x?xT>
  %gather = tensor.all_gather %x {axis = 1} : tensor<2x?xT> -> tensor<2x?xT>
  %scatter = tensor.reduce_scatter %x {axis = 1, kind = "max"} : tensor<2x?xT> -> tensor<2x?xT>
  return %sum, %prod, %max, %min, %gather, %scatter
    : tensor<2x?xT>, tensor<2x?xT>, tensor<2x?xT>, tensor<2x?xT>, tensor<2x?xT>, tensor<2x?xT>
}
"""


def ranks_inputs(dtype: np.dtype[Any], world: int, columns: int) -> list[np.ndarray]:
    """Every rank's operand (the same on every rank): small values, extremes of the type
    for integers (sums and products wrap), with their sign for unsigned types."""
    rng = np.random.default_rng(7)
    shape = (2, columns)
    if dtype == np.bool_:
        return [rng.random(shape) < 0.5 for _ in range(world)]
    if is_float_dtype(dtype):
        return [rng.standard_normal(shape).astype(dtype) for _ in range(world)]
    info = np.iinfo(dtype)
    values = [rng.integers(info.min, info.max, size=shape, dtype=dtype) for _ in range(world)]
    for v in values:
        v[0, 0], v[1, 0] = info.max, info.min
    return values


def run_types(rank: int, world: int) -> int:
    columns = 2 * world
    for name, dtype in TYPES.items():
        # booleans reduce by max and min only: those stand for sum and prod
        sum_, prod = ("max", "min") if name == "i1" else ("sum", "prod")
        text = EVERY_COLLECTIVE.replace("xT>", f"x{name}>")
        text = text.replace('"SUM"', f'"{sum_}"').replace('"PROD"', f'"{prod}"')
        program = dvm.compile(text)
        inputs = ranks_inputs(np.dtype(dtype), world, columns)
        got = program(inputs[rank])
        wanted = expected(inputs, rank, world, boolean=name == "i1")
        names = ["sum", "prod", "max", "min", "gather", "scatter"]
        for what, g, w in zip(names, got, wanted, strict=True):
            assert g.dtype == w.dtype, f"{name} {what}: {g.dtype} for {w.dtype}"
            if is_float_dtype(g.dtype) and what in ("sum", "prod"):
                tol = 1e-2 if g.dtype in (np.float16, bfloat16()) else 1e-6
                assert np.allclose(g.astype(np.float64), w.astype(np.float64), rtol=tol), name
            else:
                assert np.array_equal(g, w), f"{name} {what}: {g} for {w}"
    return len(TYPES)


def expected(inputs: list[np.ndarray], rank: int, world: int, boolean: bool) -> list[np.ndarray]:
    stack, dtype = np.stack(inputs), inputs[0].dtype
    wide = np.float64 if is_float_dtype(dtype) else None
    with np.errstate(all="ignore"):
        total = stack.sum(axis=0, dtype=wide).astype(dtype)
        product = stack.prod(axis=0, dtype=wide).astype(dtype)
    if boolean:
        total, product = stack.max(axis=0), stack.min(axis=0)
    largest = stack.max(axis=0)
    part = largest.shape[1] // world
    scatter = largest[:, rank * part : (rank + 1) * part]
    return [total, product, largest, stack.min(axis=0), np.concatenate(inputs, 1), scatter]


def run_fx_graph(rank: int) -> int:
    """An FX graph of torch's functional collectives through the torch backend, against
    torch: they run on dvm, in the programs the lazy arrays record."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx

    from dvm.torch.graph import GraphRunner

    default = dist.group.WORLD
    assert isinstance(default, dist.ProcessGroup)
    c10d, name = torch.ops._c10d_functional, default.group_name

    def step(x: Any, y: Any) -> list[Any]:
        a = c10d.wait_tensor(c10d.all_reduce(torch.tanh(x), "sum", name))
        g = c10d.wait_tensor(c10d.all_gather_into_tensor(a * 2, 2, name))
        r = c10d.wait_tensor(c10d.reduce_scatter_tensor(g + y, "max", 2, name))
        return [torch.exp(r)]

    generator = torch.Generator().manual_seed(rank)  # each rank its own values
    x, y = torch.randn(4, 3, generator=generator), torch.randn(8, 3, generator=generator)
    runner = GraphRunner(make_fx(step)(x, y), "collectives")
    torch.testing.assert_close(runner(x, y)[0], step(x, y)[0])
    assert runner.report.ops_on_dvm == runner.report.ops_total, runner.report.as_dict()
    return runner.report.ops_total


def run_indivisible(world: int) -> str:
    """A reduce-scatter whose axis does not divide by the world size fails on every
    rank before it communicates: the guard of the call's start."""
    program = dvm.compile(EXAMPLES / "sp_layernorm.mlir")
    w = np.ones(4, np.float32)
    try:
        program(np.ones((2 * world + 1, 4), np.float32), w, w)
    except ShapeError as e:
        return str(e)
    raise AssertionError("a reduce-scatter of an axis that does not divide ran")


def run_programs(rank: int, world: int) -> None:
    start = time.perf_counter()
    counts = (run_mlp(rank, world), run_layernorm(rank, world), run_types(rank, world))
    fx_ops = run_fx_graph(rank)
    indivisible = run_indivisible(world)
    if rank == 0:
        took = time.perf_counter() - start
        print(f"ok: {counts[0]} MLP shapes, {counts[1]} LayerNorm shapes, {counts[2]} types")
        print(f"ok: {fx_ops} ops of an FX graph on dvm")
        print(f"indivisible: {indivisible}")
        print(f"took {took:.2f} s")


ABANDONED = """
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %s = tensor.all_reduce %x {kind = "sum"} : tensor<?xf32> -> tensor<?xf32>
  return %s : tensor<?xf32>
}
"""


def run_abandoned(rank: int) -> None:
    """Rank 1 stalls (sleeps past the timeout), then dies; rank 0 must fail twice, each
    time in a group of its own with a short timeout: when the timeout ends, and at once
    when the peer has died."""
    timeout = timedelta(seconds=SHORT_TIMEOUT_S)
    groups = {what: dist.new_group([0, 1], timeout=timeout) for what in ("stalls", "dies")}
    programs = {what: dvm.compile(ABANDONED, group=g) for what, g in groups.items()}
    dist.barrier()
    if rank == 1:
        time.sleep(3 * SHORT_TIMEOUT_S)
        os._exit(3)
    for what, program in programs.items():
        if what == "dies":
            time.sleep(3 * SHORT_TIMEOUT_S)  # until the peer has died
        start = time.perf_counter()
        try:
            program(np.ones(4, np.float32))
        except ExecutionError as e:
            print(f"a peer that {what}: failed after {time.perf_counter() - start:.2f} s: {e}")
        else:
            raise AssertionError(f"a peer {what}, and the collective did not fail")
    os._exit(0)  # (destroying the group would wait for the peer)


def main() -> None:
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", rank=rank, world_size=world, timeout=timedelta(seconds=60))
    run_programs(rank, world)
    run_abandoned(rank)


if __name__ == "__main__":
    main()
