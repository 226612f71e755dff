"""torch's functional collectives (`_c10d_functional`: `all_reduce`,
`all_gather_into_tensor`, `reduce_scatter_tensor`), recorded as the dialect's
collectives over the default process group (docs/distributed.md)."""

from __future__ import annotations

from typing import Any

from dvm.lazy import LazyArray
from dvm.lazy.record import collective as record_collective
from dvm.torch.aten import Handler, Unsupported, identity, lazy

REDUCE_OPS = {"sum": "sum", "max": "max", "min": "min", "product": "prod"}
"""torch's reductions that the dialect's collectives have (`avg` and the bitwise
ones run in torch)."""


def default_world(group_name: str) -> int:
    """The size of the default process group, which `group_name` must name: the
    programs of `dvm.lazy` run their collectives there (docs/distributed.md)."""
    import torch.distributed as dist

    default = dist.group.WORLD if dist.is_initialized() else None
    if default is None or str(group_name) != default.group_name:
        raise Unsupported("a collective of a group other than the default one")
    return dist.get_world_size()


def reduce_kind(reduce_op: str) -> str:
    kind = REDUCE_OPS.get(str(reduce_op).lower())
    if kind is None:
        raise Unsupported(f"the reduction {reduce_op!r}")
    return kind


def all_reduce(x: Any, reduce_op: str, group_name: str) -> Any:
    kind, world = reduce_kind(reduce_op), default_world(group_name)
    return LazyArray(record_collective("all_reduce", lazy(x)._node, (kind,), world))


def all_gather(x: Any, group_size: int, group_name: str) -> Any:
    world = default_world(group_name)
    return LazyArray(record_collective("all_gather", lazy(x)._node, (0,), world))


def reduce_scatter(x: Any, reduce_op: str, group_size: int, group_name: str) -> Any:
    kind, world = reduce_kind(reduce_op), default_world(group_name)
    if not lazy(x).shape or lazy(x).shape[0] % world:
        raise Unsupported("a reduce-scatter whose dim 0 does not divide by the world size")
    return LazyArray(record_collective("reduce_scatter", lazy(x)._node, (0, kind), world))


HANDLERS: dict[str, Handler] = {
    "all_reduce": all_reduce, "all_gather_into_tensor": all_gather,
    "reduce_scatter_tensor": reduce_scatter,
    # a collective's result is there when the program runs, or when torch ran it
    "wait_tensor": identity,
}  # fmt: skip
"""The collectives that record, by name."""
