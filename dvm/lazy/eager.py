"""Recorded nodes run one by one in numpy: what a segment does when the compiler
refuses it (each node as `dvm.interpret` would run its op)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dvm.collectives import world_of
from dvm.dialects.elementwise import ELEMENTWISE as SPECS
from dvm.lazy.graph import Node

Array = np.ndarray[Any, Any]
FUNCTIONS = {spec.name: spec.numpy_fn for spec in SPECS}
"""Each elementwise op's numpy function, by the op's name."""


def nary(node: Node, xs: list[Array]) -> Array:
    name = node.params[0]
    if name == "select":
        return np.where(*xs)
    if name == "clamp":
        return np.minimum(np.maximum(xs[0], xs[1]), xs[2])
    return FUNCTIONS[name](*xs)


def reduce(node: Node, xs: list[Array]) -> Array:
    kind, axes, keepdims = node.params
    function = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod,
                "any": np.any, "all": np.all}  # fmt: skip
    return function[kind](xs[0], axis=axes, keepdims=keepdims)


def slice_(node: Node, xs: list[Array]) -> Array:
    return xs[0][slice_key(node)]


def insert_slice(node: Node, xs: list[Array]) -> Array:
    out = xs[0].copy()
    out[slice_key(node)] = xs[1]
    return out


def slice_key(node: Node) -> tuple[slice, ...]:
    """The numpy key of a recorded slice (`extract_slice`, `insert_slice`)."""
    values = iter(node.indices)
    key = []
    for spec in node.params[0]:
        if spec is None:
            key.append(slice(None))
            continue
        stride, size = spec
        offset = next(values)
        size = size if size is not None else next(values)
        key.append(slice(offset, offset + size * stride, stride))
    return tuple(key)


def iota(node: Node, xs: list[Array]) -> Array:
    from dvm.interpret_index_ops import iota_values  # (the interpreter's: xDSL, when run)

    return iota_values(node.shape, node.params[0], node.dtype)


def top_k(node: Node, xs: list[Array]) -> Array:
    from dvm.interpret_scans import top_k_values  # (the interpreter's: xDSL, when run)

    k, axis = node.params
    return top_k_values(xs[0], axis, k)[1]


def scatter_add(node: Node, xs: list[Array]) -> Array:
    base, indices, updates = xs
    axis, depth = node.params[0], np.ndim(indices)
    result = np.array(base, copy=True)
    ends = list(range(axis, axis + depth))  # (the dims of `updates` that `indices` names)
    np.add.at(np.moveaxis(result, axis, 0), indices, np.moveaxis(updates, ends, range(depth)))
    return result


def collective(node: Node, xs: list[Array]) -> Array:
    """The collective in the default process group (`dvm.collectives.world_of`)."""
    world, params = world_of(None), node.params
    if node.op == "all_reduce":
        return world.all_reduce(xs[0], params[0])
    if node.op == "all_gather":
        return world.all_gather(xs[0], params[0])
    return world.reduce_scatter(xs[0], params[0], params[1])


RUNNERS: dict[str, Callable[[Node, list[Array]], Any]] = {
    "unary": lambda node, xs: FUNCTIONS[node.params[0]](xs[0]),
    "nary": nary,
    "convert": lambda node, xs: xs[0].astype(node.dtype),
    "reduce": reduce,
    "matmul": lambda node, xs: np.matmul(*xs),
    "transpose": lambda node, xs: np.transpose(xs[0], node.params[0]),
    "broadcast_to": lambda node, xs: np.broadcast_to(xs[0], node.shape),
    "iota": iota,
    "collapse": lambda node, xs: np.reshape(xs[0], node.shape),
    "expand": lambda node, xs: np.reshape(xs[0], node.shape),
    "extract_slice": slice_,
    "insert_slice": insert_slice,
    "concat": lambda node, xs: np.concatenate(xs, axis=node.params[0]),
    "argmax": lambda node, xs: np.argmax(xs[0], axis=node.params[0], keepdims=node.params[1]),
    "argmin": lambda node, xs: np.argmin(xs[0], axis=node.params[0], keepdims=node.params[1]),
    "cumsum": lambda node, xs: np.cumsum(xs[0], axis=node.params[0]),
    "cumprod": lambda node, xs: np.cumprod(xs[0], axis=node.params[0]),
    "take": lambda node, xs: np.take(xs[0], xs[1], axis=node.params[0]),
    "take_along_axis": lambda node, xs: np.take_along_axis(xs[0], xs[1], axis=node.params[0]),
    "reverse": lambda node, xs: np.flip(xs[0], node.params[0]),
    "top_k": top_k,
    "scatter_add": scatter_add,
    "all_reduce": collective,
    "all_gather": collective,
    "reduce_scatter": collective,
}


def evaluate(nodes: Sequence[Node]) -> None:
    """Give every node its value, in order (operands come first)."""
    for node in nodes:
        xs = [o.value for o in node.operands]
        value = np.asarray(RUNNERS[node.op](node, xs))  # type: ignore[arg-type]
        node.value = np.array(value, dtype=node.dtype, copy=True)
