"""A flushed segment as a tensor-dialect program (`.mlir` text).

The program takes the segment's known arrays (its inputs, and the Python scalars
used, as 0-d tensors), then one `index` per run-time size or offset the ops
recorded (a reshape's target dims, a slice's offsets), and returns the nodes the
flush computes. One text per structure: the sizes themselves are arguments. A
number recorded as a constant (`Node.constant`, where the recording code fixes its
value: `dvm.torch`'s graphs) is an `arith.constant` of the text instead, written
exactly (`literal_text`).

A size of a reshape, broadcast or iota that equals a `?` dim of an argument is
written as that dim (`tensor.dim`), and one that equals an earlier such size as
that size (`name_sizes`): the compiler then knows the sizes equal, as a
hand-written program says, and fuses across the reshapes (numpy's shapes carry no
names, so equal values are the only evidence; a size that tracks its origin,
`dvm.torch`'s, is named only by one that is the same expression of the inputs'
sizes, so that the names hold at every call: `size_key`). Which sizes are named so
is part of the segment's structure. A reshape's own structure is better evidence than
values, so it comes first: a dim the reshape keeps is its operand's dim, and the
dims a reshape splits one dim into are named only when every one of them is found
(`B * S -> B, S` undoes a flatten; splitting `H` into 4 heads of 16 while the
batch happens to be 4 or 16 does not make the heads the batch).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Hashable, Sequence
from typing import Any, NamedTuple

import numpy as np

from dvm.lazy.graph import Node, type_text


class OperandDim(NamedTuple):
    """The dim `axis` of node `node`'s operand: a size a reshape keeps."""

    node: int
    axis: int


SizeName = OperandDim | tuple[int, int] | int | None
"""How the program names one run-time index: None, an `index` argument of its own;
`(k, axis)`, the dim `axis` of argument `k`; an int `j`, the same as index `j`;
an `OperandDim`, a dim of the node's operand."""

Found = dict[Hashable, tuple[SizeName, int]]
"""The sizes met so far by `size_key`: how the program names each, and the size itself."""

NAMED_OPS = frozenset({"expand", "broadcast_to", "iota"})
"""The ops whose indices are all sizes (a slice's offsets may equal a dim by chance)."""


def name_sizes(args: Sequence[Node], nodes: Sequence[Node]) -> tuple[SizeName, ...]:
    """How the program names each of the nodes' indices, in order (see `SizeName`):
    a size found among the arguments' `?` dims, or among the sizes before it, is named
    by it (found by `size_key`)."""
    if not any([node.indices for node in nodes]):  # (the common case: no size at all)
        return ()
    dims: Found = {}
    for k, arg in enumerate(args):
        for axis, (size, fixed) in enumerate(zip(arg.shape, arg.static, strict=True)):
            if fixed is None:
                dims.setdefault(size_key(size), ((k, axis), size))
    names: list[SizeName] = []
    splits: dict[tuple[int, ...], list[SizeName]] = {}
    for place, node in enumerate(nodes):
        if node.op not in NAMED_OPS:
            names.extend([None] * len(node.indices))
        elif node.op == "expand":
            names.extend(expand_names(node, place, dims, splits, len(names)))
        elif node.op == "broadcast_to":
            names.extend(broadcast_names(node, place, dims, len(names)))
        else:
            names.extend(found_names(node.indices, dims, len(names), every=False))
    return tuple(names)


def expand_names(
    node: Node,
    place: int,
    dims: Found,
    splits: dict[tuple[int, ...], list[SizeName]],
    first: int,
) -> list[SizeName]:
    """An expand's sizes, group by group: a group with one `?` keeps the operand's dim
    (the rest are 1s); the `?`s a dim splits into are named as an earlier split into
    the same sizes was (the same heads), else all or none by value (`found_names`)."""
    groups, fixed = node.params
    names: list[SizeName] = []
    sizes = iter(node.indices)
    for axis, group in enumerate(groups):
        split = [next(sizes) for a in group if fixed[a] is None]
        if len(split) == 1:
            names.append(OperandDim(place, axis))
            continue
        values = tuple(value_of(size) for size in split)
        if values in splits and not any(tracked(size) for size in split):
            names.extend(splits[values])
            continue
        found = found_names(split, dims, first + len(names), every=True)
        own: list[SizeName] = [
            first + len(names) + k if how is None else how for k, how in enumerate(found)
        ]
        splits.setdefault(values, own)
        names.extend(found)
    return names


def broadcast_names(node: Node, place: int, dims: Found, first: int) -> list[SizeName]:
    """A broadcast's sizes: one its operand has (aligned at the last dim, not a 1 it
    broadcasts) is the operand's dim, whatever else it equals by chance (a pad's fill
    as wide as a row of another array); the others are named by value (`found_names`)."""
    source = node.operands[0]
    offset = node.ndim - source.ndim
    names: list[SizeName] = []
    for axis, fixed in enumerate(node.static):
        if fixed is not None:
            continue
        size, kept = node.shape[axis], axis - offset
        if kept >= 0 and value_of(size) != 1 and size_key(source.shape[kept]) == size_key(size):
            names.append(OperandDim(place, kept))
        else:
            names.extend(found_names([size], dims, first + len(names), every=False))
    return names


def found_names(sizes: Sequence[int], dims: Found, first: int, every: bool) -> list[SizeName]:
    """How each of `sizes` (index `first` onwards) is named by the sizes before it
    (None: not found, an index of its own, which later sizes may be named by); with
    `every`, none is named unless all are. Looked up by `size_key`: a plain number by
    its value, a size that tracks its origin (`dvm.torch`'s) by its identity, so that
    the names hold at every call the program serves (a padded height that equals the
    width now is not named by it) and need no guard; and a plain number is never a
    tracked size's name (a constant of the program, a head count, equal by chance)."""
    found = [dims.get(size_key(size)) for size in sizes]
    if every and None in found:
        found = [None] * len(found)
    names: list[SizeName] = []
    for k, (size, hit) in enumerate(zip(sizes, found, strict=True)):
        if hit is None:
            dims.setdefault(size_key(size), (first + k, size))
            names.append(None)
        else:
            names.append(hit[0])
    return names


def size_key(size: int) -> Hashable:
    """What names a size (`found_names`): its value, or for a size that tracks its
    origin (an int with an `identity`, `dvm.torch.sizes.Size`) that identity, what it
    is at every call."""
    identity = getattr(size, "identity", None)
    return value_of(size) if identity is None else ("identity", identity())


def value_of(size: int) -> int:
    """`size`'s plain value (without noting anything, for a size that tracks its origin)."""
    return int.__index__(size) if isinstance(size, int) else operator.index(size)


def tracked(size: int) -> bool:
    """Whether `size` tracks its origin: an int subclass (`dvm.torch.sizes.Size`)."""
    return type(size) is not int and isinstance(size, int) and not isinstance(size, bool)


class Emitter:
    """Writes one segment's function, an op per recorded node."""

    def __init__(
        self,
        args: Sequence[Node],
        nodes: Sequence[Node],
        sizes: Sequence[SizeName] = (),
        numbers: Sequence[Node] = (),
    ) -> None:
        self.names: dict[int, str] = {id(a): f"%a{i}" for i, a in enumerate(args)}
        self.numbers = numbers
        """The constants the program holds (`Node.constant`), each written once."""
        self.args, self.nodes = args, nodes
        self.lines: list[str] = []
        self.size_names = sizes
        """`name_sizes` of the nodes (none: every index an argument)."""
        self.index_names: list[str] = []
        """The name of each index used so far."""
        self.arg_dims: dict[tuple[int, int], str] = {}
        """The `tensor.dim`s of arguments written so far, by (argument, axis)."""
        self.index_args: list[str] = []
        self.constants: dict[int, str] = {}
        self.distinct: set[int] = set()
        """The arguments and results: an array of its own each (never renamed)."""

    def text(self, outputs: Sequence[Node]) -> str:
        self.distinct = {id(n) for n in (*self.args, *outputs)}
        written: dict[tuple[str, bytes], str] = {}
        for number in self.numbers:
            assert number.value is not None  # (a constant is a known value)
            key = (self.type(number), number.value.tobytes())
            if key not in written:
                written[key] = f"%k{len(written)}"
                literal = f"dense<{literal_text(number.value)}> : {self.type(number)}"
                self.lines.append(f"{written[key]} = arith.constant {literal}")
            self.names[id(number)] = written[key]
        for k, node in enumerate(self.nodes):
            self.names[id(node)] = f"%v{k}"
            EMITTERS[node.op](self, node)
        params = [f"{self.names[id(a)]}: {self.type(a)}" for a in self.args]
        params += [f"{name}: index" for name in self.index_args]
        results = ", ".join(self.type(n) for n in outputs)
        returned = ", ".join(self.names[id(n)] for n in outputs)
        types = ", ".join(self.type(n) for n in outputs)
        body = "".join(f"  {line}\n" for line in self.lines)
        return (
            f"func.func @segment({', '.join(params)}) -> ({results}) {{\n"
            f"{body}  func.return {returned} : {types}\n}}\n"
        )

    # -- helpers -----------------------------------------------------------------

    def type(self, node: Node) -> str:
        return type_text(node.static, node.dtype)

    def name(self, node: Node) -> str:
        return self.names[id(node)]

    def index(self) -> str:
        """The next of the nodes' run-time values: a new `index` argument, or the size
        that `name_sizes` found it equal to."""
        k = len(self.index_names)
        how = self.size_names[k] if k < len(self.size_names) else None
        if isinstance(how, OperandDim):
            name = self.dim(self.nodes[how.node].operands[0], how.axis)
        elif isinstance(how, tuple):
            name = self.arg_dims.get(how) or self.dim(self.args[how[0]], how[1])
            self.arg_dims[how] = name
        elif isinstance(how, int):
            name = self.index_names[how]
        else:
            name = f"%i{len(self.index_args)}"
            self.index_args.append(name)
        self.index_names.append(name)
        return name

    def constant(self, value: int) -> str:
        if value not in self.constants:
            self.constants[value] = f"%c{value}"
            self.lines.append(f"%c{value} = arith.constant {value} : index")
        return self.constants[value]

    def dim(self, node: Node, axis: int) -> str:
        name = f"%d{len(self.lines)}"
        self.lines.append(
            f"{name} = tensor.dim {self.name(node)}, {self.constant(axis)} : {self.type(node)}"
        )
        return name

    def sizes(self, static: Sequence[int | None]) -> list[str]:
        """A target shape's entries: its static 1s, and an index argument per `?`."""
        return [str(d) if d is not None else self.index() for d in static]

    def put(self, node: Node, text: str) -> None:
        self.lines.append(f"{self.name(node)} = {text}")


def literal_text(value: np.ndarray[Any, Any]) -> str:
    """A 0-d array's element as a `dense<...>` literal, exactly: a finite float in the
    fewest digits that read back as it (`1.0e-45`: a float literal has a point), any
    other (inf, NaN and its payload) as its bits in hex, which the parser reads as
    such (`dvm.literals`)."""
    if value.dtype == np.bool_:
        return "true" if value else "false"
    if value.dtype.kind in "iu":
        return str(int(value))
    number = float(value)
    if not math.isfinite(number):
        return "0x" + value.tobytes()[::-1].hex().upper()  # (little-endian bytes)
    text = repr(number)
    return text if "." in text else text.replace("e", ".0e")


def operand_types(e: Emitter, node: Node) -> str:
    return f"({', '.join(e.type(o) for o in node.operands)}) -> {e.type(node)}"


def operand_names(e: Emitter, node: Node) -> str:
    return ", ".join(e.name(o) for o in node.operands)


def emit_unary(e: Emitter, node: Node) -> None:
    """`: T`, or `: T -> i1-type` for a test such as `isnan` whose result type differs."""
    source = node.operands[0]
    types = e.type(node) if node.dtype == source.dtype else f"{e.type(source)} -> {e.type(node)}"
    e.put(node, f"tensor.{node.params[0]} {e.name(source)} : {types}")


def emit_nary(e: Emitter, node: Node) -> None:
    """Binary ops, comparisons, `select`, `clamp`: operands broadcast together."""
    e.put(node, f"tensor.{node.params[0]} {operand_names(e, node)} : {operand_types(e, node)}")


def emit_convert(e: Emitter, node: Node) -> None:
    source = node.operands[0]
    if e.type(source) == e.type(node) and id(source) not in e.distinct:
        # A copy of a value the program makes (a torch view or clone, numpy's `astype`
        # to the same dtype) is that value: a `tensor.convert` would cost a kernel.
        e.names[id(node)] = e.name(source)
        return
    e.put(node, f"tensor.convert {e.name(source)} : {e.type(source)} -> {e.type(node)}")


def emit_reduce(e: Emitter, node: Node) -> None:
    kind, axes, keepdims = node.params
    source = node.operands[0]
    attrs = f"{{axes = [{', '.join(map(str, axes))}], keepdims = {str(keepdims).lower()}}}"
    e.put(
        node,
        f"tensor.reduce_{kind} {e.name(source)} {attrs} : {e.type(source)} -> {e.type(node)}",
    )


def emit_matmul(e: Emitter, node: Node) -> None:
    e.put(node, f"tensor.matmul {operand_names(e, node)} : {operand_types(e, node)}")


def emit_transpose(e: Emitter, node: Node) -> None:
    source = node.operands[0]
    perm = "{perm = [" + ", ".join(map(str, node.params[0])) + "]}"
    e.put(node, f"tensor.transpose {e.name(source)} {perm} : {e.type(source)} -> {e.type(node)}")


def emit_broadcast(e: Emitter, node: Node) -> None:
    source = node.operands[0]
    target = ", ".join(e.sizes(node.static))
    e.put(
        node,
        f"tensor.broadcast_to {e.name(source)} to [{target}] : {e.type(source)} -> {e.type(node)}",
    )


def emit_iota(e: Emitter, node: Node) -> None:
    sizes = [name for name in e.sizes(node.static) if not name.isdigit()]
    operands = f" {', '.join(sizes)}" if sizes else ""
    e.put(node, f"tensor.iota dim({node.params[0]}){operands} : {e.type(node)}")


def reassociation_text(groups: Sequence[Sequence[int]]) -> str:
    return "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]"


def emit_collapse(e: Emitter, node: Node) -> None:
    source = node.operands[0]
    groups = reassociation_text(node.params[0])
    e.put(
        node,
        f"tensor.collapse_shape {e.name(source)} {groups} : {e.type(source)} into {e.type(node)}",
    )


def emit_expand(e: Emitter, node: Node) -> None:
    source = node.operands[0]
    groups = reassociation_text(node.params[0])
    shape = ", ".join(e.sizes(node.static))
    e.put(
        node,
        f"tensor.expand_shape {e.name(source)} {groups} output_shape [{shape}]"
        f" : {e.type(source)} into {e.type(node)}",
    )


def slice_text(e: Emitter, node: Node, whole: Callable[[int], str]) -> str:
    """A recorded slice's `[offsets] [sizes] [strides]`. `params` per dim: None for the
    whole dim (its size `whole(axis)`), else (stride, static size or None); a sliced dim
    takes its offset, then its size if not static, from the indices."""
    offsets, sizes, strides = [], [], []
    for axis, spec in enumerate(node.params[0]):
        if spec is None:
            offsets.append("0")
            sizes.append(whole(axis))
            strides.append("1")
            continue
        stride, size = spec
        offsets.append(e.index())
        sizes.append(str(size) if size is not None else e.index())
        strides.append(str(stride))
    return f"[{', '.join(offsets)}] [{', '.join(sizes)}] [{', '.join(strides)}]"


def emit_slice(e: Emitter, node: Node) -> None:
    source = node.operands[0]
    key = slice_text(e, node, lambda axis: e.dim(source, axis))
    e.put(
        node,
        f"tensor.extract_slice {e.name(source)}{key} : {e.type(source)} to {e.type(node)}",
    )


def emit_insert_slice(e: Emitter, node: Node) -> None:
    """A whole dim's size is the source's: static, or the destination's dim."""
    dest, source = node.operands

    def whole(axis: int) -> str:
        fixed = source.static[axis]
        return str(fixed) if fixed is not None else e.dim(dest, axis)

    key = slice_text(e, node, whole)
    e.put(
        node,
        f"tensor.insert_slice {e.name(source)} into {e.name(dest)}{key}"
        f" : {e.type(source)} into {e.type(dest)}",
    )


def emit_concat(e: Emitter, node: Node) -> None:
    e.put(
        node,
        f"tensor.concat dim({node.params[0]}) {operand_names(e, node)} : {operand_types(e, node)}",
    )


def emit_arg_reduce(e: Emitter, node: Node) -> None:
    source = node.operands[0]
    axis, keepdims = node.params
    attrs = f"{{axis = {axis}, keepdims = {str(keepdims).lower()}}}"
    e.put(node, f"tensor.{node.op} {e.name(source)} {attrs} : {e.type(source)} -> {e.type(node)}")


def emit_scan(e: Emitter, node: Node) -> None:
    source = node.operands[0]
    attrs = f"{{axis = {node.params[0]}, exclusive = false, reverse = false}}"
    e.put(node, f"tensor.{node.op} {e.name(source)} {attrs} : {e.type(source)} -> {e.type(node)}")


def emit_along_dim(e: Emitter, node: Node) -> None:
    """`tensor.take`, `tensor.take_along_axis` or `tensor.scatter_add` along a dim."""
    e.put(
        node,
        f"tensor.{node.op} {operand_names(e, node)} dim({node.params[0]})"
        f" : {operand_types(e, node)}",
    )


def emit_reverse(e: Emitter, node: Node) -> None:
    axes = ", ".join(map(str, node.params[0]))
    e.put(node, f"tensor.reverse {e.name(node.operands[0])} {{axes = [{axes}]}} : {e.type(node)}")


def emit_top_k(e: Emitter, node: Node) -> None:
    """The indices, `tensor.top_k`'s second result (`record.top_k`)."""
    source, (k, axis) = node.operands[0], node.params
    values = type_text(node.static, source.dtype)
    e.lines.append(
        f"{e.name(node)}_values, {e.name(node)} = tensor.top_k {e.name(source)}"
        f" {{k = {k}, axis = {axis}}} : {e.type(source)} -> {values}, {e.type(node)}"
    )


def emit_collective(e: Emitter, node: Node) -> None:
    source, params = node.operands[0], node.params
    attrs = {
        "all_reduce": f'{{kind = "{params[0]}"}}',
        "all_gather": f"{{axis = {params[0]}}}",
        "reduce_scatter": f'{{axis = {params[0]}, kind = "{params[-1]}"}}',
    }[node.op]
    e.put(node, f"tensor.{node.op} {e.name(source)} {attrs} : {e.type(source)} -> {e.type(node)}")


EMITTERS: dict[str, Callable[[Emitter, Node], None]] = {
    "unary": emit_unary,
    "nary": emit_nary,
    "convert": emit_convert,
    "reduce": emit_reduce,
    "matmul": emit_matmul,
    "transpose": emit_transpose,
    "broadcast_to": emit_broadcast,
    "iota": emit_iota,
    "collapse": emit_collapse,
    "expand": emit_expand,
    "extract_slice": emit_slice,
    "insert_slice": emit_insert_slice,
    "concat": emit_concat,
    "argmax": emit_arg_reduce,
    "argmin": emit_arg_reduce,
    "cumsum": emit_scan,
    "cumprod": emit_scan,
    "take": emit_along_dim,
    "take_along_axis": emit_along_dim,
    "reverse": emit_reverse,
    "top_k": emit_top_k,
    "scatter_add": emit_along_dim,
    "all_reduce": emit_collective,
    "all_gather": emit_collective,
    "reduce_scatter": emit_collective,
}
"""How each recorded op is written (`Node.op` -> its emitter)."""
