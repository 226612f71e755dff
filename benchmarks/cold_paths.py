"""What a small Python construct costs when it runs cold, as a new shape's steps do.

Run: .venv/bin/python benchmarks/cold_paths.py [--calls 3000]

A first call at a new shape runs steps no call at a known shape runs, after other work
has filled the caches (in the benchmark suite, the other systems' calls). This times
single calls of small functions, each right after writing 32 MiB (the host's L3 cache,
as `new_shape_stages.py --evict` does), the functions drawn at random so that none
follows itself: the median per function, in µs. Each pair computes one thing two ways,
as the new shape's steps once did and do now: with C-level maps (`zip` with `strict`,
`map` of `operator` functions, `any` of a `map`, a `partial`), and with a plain loop or
a direct call, whose bytecodes every call runs. In a hot loop the maps cost less; cold,
each takes a C path of its own that comes from memory. The last pair makes a
`Specialization` (a dataclass of its fields) with a dict and with slots.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import operator
import random
import statistics
import time
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from dvm.vm.plan import Specialization

REGISTERS = ((0, 4096), (16384, 4096), (32768, 64), (33024, 64), (33280, 4096))
ITEMSIZES = (4, 4, 4, 4, 4)
DIMS = ((1576, 155), (155,), (155,), (1576, 155))
STORED = (3,)
SHAPE = np.empty((30, 100), np.float32)


class Bound(NamedTuple):
    variant: Any
    symbols: dict[str, int]


VARIANTS = {frozenset(): "generic"}
GENERIC = "generic"
NEW_BOUND = partial(tuple.__new__, Bound)


def end_by_maps() -> int:
    offsets, counts = zip(*REGISTERS, strict=True)
    return max(map(operator.add, offsets, map(operator.mul, counts, ITEMSIZES)))


def end_by_loop() -> int:
    end = 0
    for (offset, count), itemsize in zip(REGISTERS, ITEMSIZES):  # noqa: B905 (cold)
        reach = offset + count * itemsize
        if reach > end:
            end = reach
    return end


def idle_by_maps() -> bool:
    return not any(map(all, map(DIMS.__getitem__, STORED)))


def idle_by_loop() -> bool:
    idle = True  # (as `Specializer.bind`: no generator's frame)
    for arg in STORED:
        if all(DIMS[arg]):
            idle = False
            break
    return idle


def sizes_with_int() -> tuple[int, int]:
    d0, d1 = SHAPE.shape
    return (int(d0), int(d1))


def sizes_without_int() -> tuple[int, int]:
    d0, d1 = SHAPE.shape
    return (d0, d1)


def bound_by_partial() -> Bound:
    return NEW_BOUND((VARIANTS[frozenset()], {}))


def bound_direct() -> Bound:
    return tuple.__new__(Bound, (GENERIC, {}))


def _like_specialization(slots: bool) -> Any:
    """A dataclass with `Specialization`'s fields and defaults, with or without slots."""
    fields = [(f.name, f.type, f) for f in dataclasses.fields(Specialization)]
    return dataclasses.make_dataclass("Spec", fields, eq=False, slots=slots)


SPEC_FIELDS = (None, None, DIMS, (), (1, 2), REGISTERS, (), None, False, False)
SPEC_FIELDS += (frozenset(), frozenset(), frozenset(), (np.dtype(np.float32),))
SPEC_DICT, SPEC_SLOTS = _like_specialization(False), _like_specialization(True)


def specialization_dict() -> Any:
    return SPEC_DICT(*SPEC_FIELDS, cores=1, small=True, idle=False, plan_after=32)


def specialization_slots() -> Any:
    return SPEC_SLOTS(*SPEC_FIELDS, cores=1, small=True, idle=False, plan_after=32)


def empty() -> None:
    return None


CASES: list[Callable[[], Any]] = [
    empty,
    end_by_maps,
    end_by_loop,
    idle_by_maps,
    idle_by_loop,
    sizes_with_int,
    sizes_without_int,
    bound_by_partial,
    bound_direct,
    specialization_dict,
    specialization_slots,
]


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--calls", type=int, default=3000, help="timed calls in all")
    a = ap.parse_args()
    scratch = np.ones(8 << 20, np.float32)
    rng = random.Random(0)
    spent: dict[str, list[int]] = {case.__name__: [] for case in CASES}
    last = None
    for _ in itertools.repeat(None, a.calls):
        case = rng.choice([c for c in CASES if c is not last])
        np.add(scratch, 1.0, out=scratch)  # the caches now hold other work
        t0 = time.perf_counter_ns()
        case()
        spent[case.__name__].append(time.perf_counter_ns() - t0)
        last = case
    for name, times in spent.items():
        print(f"  {name:18s} {statistics.median(times) / 1e3:6.2f} µs  ({len(times)} calls)")


if __name__ == "__main__":
    main()
