"""What a lazy array stands for: a node of the recorded graph.

A `Node` is either a value (an array known now: an argument of the next segment)
or an op recorded on other nodes, to run when the segment is flushed. Each node
knows its real shape (numpy's, computed as the op is recorded: shapes are never
lazy) and its *type*, the shape the compiled program sees: every dim `?` except
the 1s the program's structure makes (a `keepdims` reduction, an integer index,
`np.newaxis`, a reshape to 1), so that one program serves every shape the same
code runs on.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dvm.numerics import is_bfloat16

Static = tuple[int | None, ...]
"""A type's dims: 1 where the program's structure makes a 1, None for `?`."""

ELEMENT_TYPES: dict[np.dtype[Any], str] = {
    np.dtype(np.bool_): "i1",
    np.dtype(np.int8): "i8",
    np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.uint8): "ui8",
    np.dtype(np.uint16): "ui16",
    np.dtype(np.uint32): "ui32",
    np.dtype(np.uint64): "ui64",
    np.dtype(np.float16): "f16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
}
"""The numpy dtypes a program computes on but bf16 (`element_type`), and their element
types. Any other (complex, object, strings, non-native byte order) runs in numpy."""


def element_type(dtype: np.dtype[Any]) -> str | None:
    """The element type of a numpy dtype a program computes on, or None."""
    found = ELEMENT_TYPES.get(dtype)
    return "bf16" if found is None and is_bfloat16(dtype) else found


def is_supported(dtype: np.dtype[Any]) -> bool:
    return element_type(dtype) is not None


def type_text(static: Static, dtype: np.dtype[Any]) -> str:
    dims = "".join("?x" if d is None else f"{d}x" for d in static)
    return f"tensor<{dims}{element_type(dtype)}>"


@dataclass(eq=False, slots=True)
class Node:
    """One value of the recorded graph (see the module docstring)."""

    op: str
    """The op's name (`add`, `reduce_sum`, `extract_slice`...), or `value`."""
    operands: tuple[Node, ...]
    params: tuple[Any, ...]
    """The op's static attributes: part of the segment's structure."""
    indices: tuple[int, ...]
    """The op's run-time sizes and offsets: arguments of the program, not structure."""
    shape: tuple[int, ...]
    dtype: np.dtype[Any]
    static: Static
    value: np.ndarray[Any, Any] | None = None
    """The array, once known (a value node, or an op after its segment ran)."""
    owner: weakref.ref[Any] | None = None
    """The lazy array that shows this node, while it lives (a flush computes the
    nodes still shown, and what they need)."""
    view: tuple[Node, Any] | None = None
    """(base, index) when numpy would make this node a view of `base` (`base[index]`,
    `base.T`...): once both are known it becomes that view, so writes through either
    are seen by the other, as in numpy."""
    scalar: bool = False
    """Whether this 0-d result stands for the numpy scalar numpy's op gives (`x.sum()`,
    `x[0, 0]`), immutable, rather than a 0-d array (`x.reshape(())`, a view); set when
    a lazy array first shows it."""
    memory: Memory | None = None
    """Who else could see this node's memory (None: no one, the common case of an op's
    result; see `updatable`)."""
    constant: bool = False
    """Whether this value (a Python number an op reads, while `Trace.constants` says
    so) is a constant of the program, written in its text, rather than an argument."""

    @staticmethod
    def of(array: np.ndarray[Any, Any]) -> Node:
        """A node for an array known now."""
        return Node("value", (), (), (), array.shape, array.dtype, (None,) * array.ndim, array)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def pending(self) -> bool:
        return self.value is None

    def escape(self) -> None:
        """numpy code now holds this node's memory, and its base's if it is a view."""
        node: Node | None = self
        while node is not None:
            if node.memory is None:
                node.memory = Memory(held=True)
            node.memory.held = True
            node = node.memory.base

    def updatable(self, writer: Any = None) -> bool:
        """Whether an in-place write may make this node's array show a new value instead
        (a functional update): the node is an op's result (its memory, once computed,
        a segment's fresh array) that no numpy code was given, that is no view, that
        one lazy array shows and that no live view shares but `writer` (the view a
        write goes through, which is then updated too). A known array given to
        `asarray` is the caller's memory, a fallback's result numpy's."""
        memory = self.memory
        if self.op == "value":
            return False
        if memory is None:
            return True
        live = (ref() for ref in memory.views)
        return not (memory.held or any(view is not None and view is not writer for view in live))

    def shown(self) -> bool:
        """Whether a live lazy array shows this node."""
        owner = self.owner() if self.owner is not None else None
        return owner is not None and owner._node is self


@dataclass(eq=False, slots=True)
class Memory:
    """What could see a node's memory besides its lazy array (`Node.memory`)."""

    held: bool = False
    """Whether it is held elsewhere: numpy code was given it (`np.asarray`, a
    fallback's argument), a second lazy array shows it, or it is a view's (never
    False again once True)."""
    views: list[weakref.ref[Any]] = field(default_factory=list)
    """The lazy arrays recorded as views of it (directly, or views of such views): while
    one lives, a write must reach the memory."""
    base: Node | None = None
    """For a view, the node whose memory it shares (kept after the flush that makes it
    a view, unlike `Node.view`): numpy code given the view holds the base's too."""
    index: Any = None
    """For a view, how numpy makes it of `base`: a key for `[]`, or a function."""


def broadcast_static(*statics: Static) -> Static:
    """The type dims of a broadcast result: 1 where every operand that has the dim
    has a static 1 (aligned at the last dim, as numpy aligns shapes)."""
    rank = max(map(len, statics), default=0)
    out: list[int | None] = []
    for axis in range(rank):
        dims = [s[axis - rank + len(s)] for s in statics if axis - rank + len(s) >= 0]
        out.append(broadcast_dim(dims))
    return tuple(out)


def broadcast_dim(dims: list[int | None]) -> int | None:
    """The type dim of type dims broadcast together: 1 if all are 1, a static size if one
    has it (a `?` broadcast with `128` is 128), else `?`."""
    sizes = [d for d in dims if d != 1]
    if not sizes:
        return 1
    return next((d for d in sizes if d is not None), None)


def broadcast_shape(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    """numpy's broadcast of `shapes`, or None when they do not broadcast."""
    rank = max(map(len, shapes), default=0)
    out = []
    for axis in range(rank):
        size = 1
        for shape in shapes:
            k = axis - rank + len(shape)
            if k < 0 or shape[k] == 1:
                continue
            if size not in (1, shape[k]):
                return None
            size = shape[k]
        out.append(size)
    return tuple(out)


def broadcast_nodes(nodes: list[Node]) -> tuple[tuple[int, ...], Static] | None:
    """numpy's broadcast of the nodes' shapes and its type dims (`broadcast_shape`,
    `broadcast_static`) in one pass; None when they do not broadcast."""
    rank = max([len(n.shape) for n in nodes])
    aligned = [((None,) * (rank - len(n.shape)) + n.shape, n.static) for n in nodes]
    shape: list[int] = []
    static: list[int | None] = []
    for axis in range(rank):
        size, types = 1, []
        for dims, statics in aligned:
            d = dims[axis]
            if d is None:
                continue
            types.append(statics[axis - rank + len(statics)])
            if d == 1:
                continue
            if size != 1 and size != d:
                return None
            size = d
        shape.append(size)
        static.append(broadcast_dim(types))
    return tuple(shape), tuple(static)


def same_shape(a: Sequence[int], b: Sequence[int]) -> bool:
    """Whether two shapes are equal, their sizes compared only at one rank: Python
    compares a tuple's items before its length, and a size that tracks its origin
    (`dvm.torch.sizes`) notes each comparison as a guard of the call, so comparing a
    matrix's (rows, cols) with a row's (cols,) would tie the call to rows != cols."""
    return len(a) == len(b) and a == b


def broadcast_pair(a: Node, b: Node) -> tuple[tuple[int, ...], Static] | None:
    """`broadcast_nodes` of two nodes of one rank (the common case: a row's statistic
    against its rows), in one walk over their dims (it runs once per such op)."""
    if len(a.shape) != len(b.shape):
        return broadcast_nodes([a, b])
    shape: list[int] = []
    static: list[int | None] = []
    for da, db, sa, sb in zip(a.shape, b.shape, a.static, b.static):  # noqa: B905 (one rank)
        if da == db or db == 1:
            shape.append(da)
        elif da == 1:
            shape.append(db)
        else:
            return None
        static.append(sa if sa == sb else broadcast_dim([sa, sb]))
    return tuple(shape), tuple(static)
