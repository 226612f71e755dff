"""`dvm-run --nproc N`: one program across N processes of this machine.

    dvm-run --nproc 2 tp_mlp.mlir --shapes 8x64 64x256 256x64 \\
        --shard replicate split:1 split:0 --check

`launch` starts `torch.distributed.run` (torch's launcher) with N workers on the
loopback interface, each `dvm-run --worker` with the same options. A worker joins the
`gloo` process group (`join`), draws the whole inputs as `dvm-run` does (the same seed
on every rank), keeps its rank's part of each (`shard_arguments`: `--shard`, one
`dvm.sharding` spec per tensor argument, `replicate` by default), compiles and runs
the program in the group, and sends its results to rank 0, which puts them together
(`gather_results`: `--gather`, one spec per result, `replicate` by default), prints
them and with `--check` compares them with the reference interpreter's run of the
program on the whole inputs: the program in a world of one process. A collective that
waits longer than `--timeout` seconds for a peer fails, and the launcher then stops
every worker.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import socket
import subprocess
import sys
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from dvm.sharding import REPLICATE, Sharding, check_gather, check_sharding, shard, unshard

PREFIX = "dvm-run: "
"""How the workers' messages start: the launcher passes these lines of theirs on."""


def free_port() -> int:
    """A TCP port free on the loopback interface now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def worker_argv(argv: Sequence[str]) -> list[str]:
    """The command line of a worker: the same options, `--nproc` dropped."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--nproc":
            skip = True
        elif not arg.startswith("--nproc="):
            out.append(arg)
    return [*out, "--worker"]


def first_line(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def launch(options: argparse.Namespace, argv: Sequence[str]) -> int:
    """Run `dvm-run` in `options.nproc` processes through `torch.distributed.run`;
    its exit code. The launcher's own report of a failed worker is replaced by the
    workers' messages (it is printed only when they said nothing)."""
    if importlib.util.find_spec("torch") is None:
        raise ValueError("--nproc runs the processes with torch.distributed: install torch")
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        f"--nproc-per-node={options.nproc}",
        "--nnodes=1",
        "--master-addr=127.0.0.1",
        f"--master-port={free_port()}",
        "-m",
        "dvm.tools.dvm_run",
        *worker_argv(argv),
    ]
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    done = subprocess.run(command, stderr=subprocess.PIPE, text=True, env=env, check=False)
    said = [line for line in done.stderr.splitlines() if line.startswith(PREFIX)]
    for line in said or (done.stderr.splitlines()[-20:] if done.returncode else []):
        print(line, file=sys.stderr)
    return 1 if done.returncode else 0


def shardings(given: Sequence[Sharding] | None, count: int, what: str) -> list[Sharding]:
    """One spec per tensor argument (or result), `replicate` for all when none is given."""
    if given and len(given) != count:
        raise ValueError(f"the function has {count} {what}, got {len(given)} shardings")
    return list(given or [REPLICATE] * count)


def join(timeout_s: float) -> tuple[int, int]:
    """Join the `gloo` process group the launcher set up; this rank and the world size."""
    import torch.distributed as dist

    from dvm.errors import ExecutionError

    try:
        dist.init_process_group("gloo", timeout=timedelta(seconds=timeout_s))
    except RuntimeError as e:  # torch's DistStoreError, DistNetworkError
        raise ExecutionError(f"cannot join the process group: {first_line(e)}") from None
    return dist.get_rank(), dist.get_world_size()


def leave() -> None:
    import torch.distributed as dist

    dist.destroy_process_group()


def shard_arguments(
    given: Sequence[Sharding] | None, types: Sequence[Any], whole: list[Any], rank: int, world: int
) -> list[Any]:
    """This rank's part of each tensor argument (`--shard`); index arguments as they are."""
    from xdsl.dialects.builtin import TensorType

    tensors = [i for i, t in enumerate(types) if isinstance(t, TensorType)]
    args = list(whole)
    for i, spec in zip(tensors, shardings(given, len(tensors), "tensor arguments"), strict=True):
        check_sharding(f"argument {i}", spec, whole[i].shape, world)
        args[i] = shard(whole[i], spec, rank, world)
    return args


def gather_results(
    outputs: tuple[Any, ...], given: Sequence[Sharding] | None, rank: int, world: int
) -> tuple[Any, ...] | None:
    """On rank 0, the whole results that the ranks' results make (`--gather`); None on
    the others."""
    import numpy as np
    import torch.distributed as dist

    parts: list[Any] = [None] * world
    dist.all_gather_object(parts, outputs)
    if rank != 0:
        return None
    specs = shardings(given, len(outputs), "results")
    for k, spec in enumerate(specs):
        check_gather(f"result {k}", spec, np.shape(outputs[k]))
    return tuple(unshard([p[k] for p in parts], spec) for k, spec in enumerate(specs))
