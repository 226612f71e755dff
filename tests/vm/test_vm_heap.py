"""The allocator's thresholds the first device memory sets (`vm/heap.py`): a new
shape's large output lands in pages already mapped, each way a process may have them."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import pytest

GLIBC = hasattr(ctypes.CDLL(None), "gnu_get_libc_version")

GROWING_OUTPUTS = """\
import resource, statistics, sys
import numpy as np
import dvm
from dvm.vm import heap
heap.KEEP_FREED = sys.argv[1] == "1"
program = dvm.compile('''func.func @double(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %y = tensor.add %x, %x : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}''')
rng = np.random.default_rng(0)
x = rng.standard_normal((4, 1024), dtype=np.float32)
np.testing.assert_array_equal(program(x), x + x)  # the first launch sets the thresholds
print(heap.keep_freed_memory())
faults = []
for rows in range(1024, 1024 + 6 * 64, 64):  # 4 MiB, each output larger than any before
    x = rng.standard_normal((rows, 1024), dtype=np.float32)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    y = program(x)
    faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    np.testing.assert_array_equal(y, x + x)
    del y
print(statistics.median(faults))
"""


def growing_outputs(keep: bool, env: dict[str, str] | None = None) -> tuple[str, float]:
    """(whether the thresholds are set, the median page faults of a first call at a shape
    whose 4-5 MiB output is larger than any before) in a fresh process."""
    command = [sys.executable, "-c", GROWING_OUTPUTS, "1" if keep else "0"]
    run = subprocess.run(command, capture_output=True, text=True, check=True, env=env, timeout=300)
    kept, faults = run.stdout.split()
    return kept, float(faults)


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc thresholds")
def test_new_shapes_outputs_do_not_fault_with_the_thresholds_kept() -> None:
    """With glibc's defaults each new, larger output is mapped anew (a fault for most of
    its 1024+ pages; some come as huge pages); with the thresholds set, the heap keeps
    the freed outputs' pages and grows by at most the difference (64 rows: 64 pages)."""
    kept, faults = growing_outputs(True)
    assert kept == "True" and faults < 64
    kept, faults = growing_outputs(False)
    assert kept == "False" and faults > 150


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc thresholds")
def test_the_environment_s_thresholds_win() -> None:
    """A threshold set through the environment is the user's choice: nothing is set."""
    env = {**os.environ, "MALLOC_TRIM_THRESHOLD_": str(128 << 10)}
    kept, _ = growing_outputs(True, env)
    assert kept == "False"
