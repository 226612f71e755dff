"""`dvm.lazy`: numpy code, recorded and fused on real shapes (DVM's eager mode).

    import numpy as np
    from dvm import lazy

    x = lazy.asarray(np.random.rand(4096, 1024).astype(np.float32))
    y = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    print(np.asarray(y))        # a sync point: the recorded ops run as one program

Operations on lazy arrays are recorded, not run (`array`: numpy's protocols); a
sync point flushes them as one segment, compiled once per structure by
`dvm.compile` and specialized per shape (`segment`). See docs/lazy.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dvm.lazy import methods
from dvm.lazy.array import LazyArray
from dvm.lazy.graph import Node
from dvm.lazy.record import TRACE
from dvm.lazy.segment import PROGRAMS, flush, select
from dvm.lazy.stats import STATS, Stats

methods.install()

__all__ = ["LazyArray", "asarray", "explain", "reset", "stats", "sync"]


def asarray(a: Any, dtype: Any = None) -> LazyArray:
    """`a` as a lazy array: `np.asarray(a, dtype)` wrapped, without a copy (so writes
    to `a` through numpy while ops that read it are pending are not seen by them:
    write through the lazy array, or `sync()` first)."""
    if isinstance(a, LazyArray):
        return a if dtype is None else a.astype(dtype, copy=False)
    return LazyArray(Node.of(np.asarray(a, dtype)))


def sync() -> None:
    """Run every pending op now."""
    flush()


def stats() -> dict[str, Any]:
    """What recording has done: ops recorded, segments run, compiled and reused
    (by structure), kernels launched, compile seconds, fallbacks by function name,
    and segments the compiler refused (run in numpy)."""
    return STATS.as_dict()


def reset() -> None:
    """Forget the statistics and the compiled segments."""
    flush()
    PROGRAMS.clear()
    fresh = Stats()
    for name in vars(fresh):
        setattr(STATS, name, getattr(fresh, name))


def explain(*arrays: LazyArray, passes: str = "") -> str:
    """The `.mlir` program that computing `arrays` now would run (and the other
    pending arrays still alive), after the pass pipeline `passes` (e.g.
    `symbolic-shapes,fuse`, or `dvm-pipeline` for the bytecode; none: the tensor
    dialect as recorded). Runs nothing."""
    segment = select(TRACE.nodes, [a._node for a in arrays])
    if segment is None:
        return ""
    text = segment.text()
    if not passes:
        return text
    from dvm.pipeline import run

    return str(run(text, passes))
