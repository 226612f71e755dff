"""The device the VM simulates: core counts and the per-core memories."""

from __future__ import annotations

import os
from typing import NamedTuple

_CACHE_DIR = "/sys/devices/system/cpu/cpu0/cache"

HOST_LOCAL_LEAST = 2 << 20
"""The host's local memory per core is its L2 cache, but at least this. A kernel passes
over its tiles once per instruction, so tiles that stay in L2 between the passes run
faster than larger ones (on 2 MiB of L2, the GELU, softmax and if-else-add streams of
`benchmarks/run.py` run 1.2-1.6 times faster than with 8 MiB tiles); but each numpy
call costs a microsecond or two whatever its size (and a GIL hand-off when two cores
run), which the tiles of a small L2 spread over too few elements (on 512 KiB of L2, a
LayerNorm 8192x1024 runs 1.5 times faster with 2 MiB tiles than with L2-sized ones)."""


class DeviceSpec(NamedTuple):
    """What tiling and validation need to know about a device.

    vector_cores / cube_cores: cores that run vector / matmul kernels (a
    program with an `mma` runs on the cube cores). local_memory_bytes: each
    vector core's local memory (registers live there). alignment: register
    offsets must be multiples of it. vector_width: bytes per SIMD instruction,
    a hint for tile sizes (the VM itself does not need it).
    cube_memory_bytes: each cube core's working memory, where the registers
    of a program with an `mma` live (None: the same as local_memory_bytes).
    A cube unit keeps its own buffers for matmul operands and accumulators,
    larger than the vector unit's, so matmul tiles can be much larger than
    vector tiles.
    shared_gemm: whether the cube cores multiply one matrix together, as the
    host's BLAS does on its threads: a matmul's rows are then cut into tiles
    only where the cube memory needs it, not into a share per cube core (the
    cores still share a batch of matrices).
    """

    vector_cores: int
    cube_cores: int
    local_memory_bytes: int
    alignment: int = 32
    vector_width: int = 32
    name: str = "custom"
    cube_memory_bytes: int | None = None
    shared_gemm: bool = False

    def memory_bytes(self, cube: bool) -> int:
        """The memory a program's registers live in: the cube memory for a
        program with an `mma` (cube), otherwise the vector local memory."""
        if cube and self.cube_memory_bytes is not None:
            return self.cube_memory_bytes
        return self.local_memory_bytes

    def cores_for(self, cube: bool) -> int:
        """The cores that run a program: the cube cores for one with an `mma` (cube),
        otherwise the vector cores."""
        return self.cube_cores if cube else self.vector_cores

    @staticmethod
    def host() -> DeviceSpec:
        """This machine: one core per CPU, local memory = the per-core L2 cache but at
        least HOST_LOCAL_LEAST, cube memory = the core's share of the last-level (L3) cache,
        which a large sgemm blocks for (at least the local memory); its BLAS shares a
        gemm among its threads (`shared_gemm`). Read once: every
        call returns the same object (see `_preset`)."""
        got = _PRESETS.get("host")
        if got is None:
            cores = os.cpu_count() or 1
            local = max(_per_core_cache(2) or 0, HOST_LOCAL_LEAST)
            cube = max(local, _per_core_cache(3, shared=True) or 0)
            got = _preset(DeviceSpec(cores, cores, local, 64, 32, "host", cube, True))
        return got

    @staticmethod
    def ascend910b() -> DeviceSpec:
        """Shaped like an Ascend 910B: 48 vector and 24 cube cores, a 192 KiB
        unified buffer per vector core and a 512 KiB L1 buffer per cube core
        (where matmul operands are staged; its L0A/L0B/L0C buffers, 64/64/128
        KiB, are not modelled)."""
        got = _PRESETS.get("ascend910b")
        if got is None:
            got = _preset(DeviceSpec(48, 24, 192 * 1024, 32, 256, "ascend910b", 512 * 1024))
        return got


_PRESETS: dict[str, DeviceSpec] = {}


PRESETS = {"host": DeviceSpec.host, "ascend910b": DeviceSpec.ascend910b}
"""The device presets by name (`dvm.compile(..., device=...)`)."""


def _preset(device: DeviceSpec) -> DeviceSpec:
    """Keep one object per preset: the dicts keyed by device (local memories,
    specializations) then find it by identity, without comparing its fields."""
    return _PRESETS.setdefault(device.name, device)


def _per_core_cache(wanted: int, shared: bool = False) -> int | None:
    """Size of cpu0's data/unified cache of level `wanted` divided by the CPUs sharing it
    (with `shared`: the whole cache)."""
    try:
        for index in sorted(n for n in os.listdir(_CACHE_DIR) if n.startswith("index")):
            folder = os.path.join(_CACHE_DIR, index)
            level, kind = _read(folder, "level"), _read(folder, "type")
            if level == str(wanted) and kind in ("Unified", "Data"):
                size = _parse_size(_read(folder, "size"))
                sharing = _count_cpus(_read(folder, "shared_cpu_list"))
                return size if shared else size // max(sharing, 1)
    except (OSError, ValueError):
        return None
    return None


def _read(folder: str, name: str) -> str:
    """The text of a file of `folder`, stripped (by `os.path`: a compile cache hit
    imports no `pathlib`)."""
    with open(os.path.join(folder, name)) as file:
        return file.read().strip()


def _parse_size(text: str) -> int:
    """'512K' -> 524288."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    if text[-1] in units:
        return int(text[:-1]) * units[text[-1]]
    return int(text)


def _count_cpus(cpu_list: str) -> int:
    """'0-1,4' -> 3."""
    n = 0
    for part in cpu_list.split(","):
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return n
