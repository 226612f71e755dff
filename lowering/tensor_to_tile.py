"""The `convert-tensor-to-tile` pass: each `tensor.fusion` becomes a `tile.kernel`.

The kernel iterates over its fusion's domain (see `dvm.passes.domain`) in
tiles chosen by the tiling function (`dvm.lowering.tiling`). Inside a tile
every value is a tile of the domain: layout ops vanish (they only relabel
axes, or become the strides of a load), elementwise ops broadcast between
tiles, and reductions become loops over chunks of the reduced axes that
accumulate:

- a vector kernel runs one *phase* per reduction: a loop over chunks that
  recomputes the reduction's input from the kernel inputs and folds it into
  an accumulator; then a last loop over chunks computes and stores the
  outputs (LayerNorm: mean, variance, output), each only in the loops over
  the axes it spans. When one chunk covers a row, each loop runs once and
  nothing is read twice from memory;
- a cube or mix kernel accumulates `tile.mma` over chunks of K, then applies
  its elementwise epilogue once per finished output tile and stores.

The host function keeps its control flow and calls the kernels with
`tile.launch`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast

import sympy
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from dvm.dialects import tensor as t
from dvm.dialects import tile
from dvm.dialects.expr import ExprAttr, symbol
from dvm.lowering.tiling import (
    TilePlan,
    ceildiv,
    plan_matmul_tiles,
    plan_vector_tiles,
    rows_fit,
    whole_k_always_fits,
    whole_k_fits,
)
from dvm.passes.domain import (
    ELEMENTWISE,
    LAYOUT,
    Domain,
    DomainAnalysis,
    Facts,
    StridedView,
    known_facts,
)
from dvm.passes.errors import describe, located
from dvm.passes.fuse import ASSUME, BOUNDED
from dvm.passes.symbolic import (
    SHAPE,
    SHAPES,
    guard_facts,
    shape_attr,
    shape_of,
    split_condition,
    static_truth,
)
from dvm.vm.device import DeviceSpec

DEVICES = {"host": DeviceSpec.host, "ascend910b": DeviceSpec.ascend910b}

TILE_SIZES = "dvm.tile_sizes"
"""On a kernel: each named tile size (`t0`) and its expression."""
AXES = "dvm.axes"
"""On a kernel: for each dim of its tiles, the domain axis's size, tile size
and walker (`gridN`, `loopN` or `whole`)."""
DEVICE = "dvm.device"
"""On a kernel: the device preset it was tiled for."""
ARG_SHAPES = "dvm.arg_shapes"
"""On a kernel: the symbolic shape of each argument, from which the runtime
binds the shape symbols when it launches the kernel."""
INDEX_DIMS = "dvm.index_dims"
"""On a launch: each op of its kernel whose shape takes dims from `index` values
(`broadcast_to`, `expand_shape`), as {op, shape}; the runtime checks, as it launches,
that none is negative (the interpreter's ShapeError), since the kernel cannot."""

REDUCE_KIND = {
    t.ReduceSumOp: "sum",
    t.ReduceMeanOp: "sum",
    t.ReduceMaxOp: "max",
    t.ReduceMinOp: "min",
    t.ReduceProdOp: "prod",
}
COMBINE = {"sum": t.AddOp, "max": t.MaxOp, "min": t.MinOp, "prod": t.MulOp}
ZERO, ONE = sympy.Integer(0), sympy.Integer(1)


def element_bytes(t_: Attribute) -> int:
    width = getattr(t_, "bitwidth", None) or getattr(getattr(t_, "width", None), "data", 8)
    return max(1, int(width) // 8)


def identity(kind: str, element: Attribute) -> FloatAttr | IntegerAttr:
    """The reduction's value over no elements, as an attribute of `element`."""
    if t.is_float(element):
        value = {"sum": 0.0, "prod": 1.0, "max": float("-inf"), "min": float("inf")}[kind]
        return FloatAttr(value, element)  # type: ignore[arg-type]
    assert t.is_bool(element) or t.is_int(element)
    width = element.width.data  # type: ignore[attr-defined]
    lo, hi = (0, 1) if width == 1 else (-(2 ** (width - 1)), 2 ** (width - 1) - 1)
    value = {"sum": 0, "prod": 1, "max": lo, "min": hi}[kind]
    return IntegerAttr(value, element)  # type: ignore[arg-type]


@dataclass
class Emission:
    """Where ops are being emitted: a block, the tiles visible there, and
    the domain axes its enclosing loop walks (none for the kernel body)."""

    block: Block
    scope: dict[SSAValue, SSAValue] = field(default_factory=dict)
    axes: frozenset[int] = frozenset()


@dataclass
class KernelBuilder:
    """Emits the body of one `tile.kernel` from a fusion's ops."""

    domain: Domain
    plan: TilePlan
    coords: list[int]
    """The domain axes that tile dims stand for (all but a matmul's K)."""
    args: dict[SSAValue, SSAValue]
    """Fusion inputs and outputs -> the kernel's block arguments."""
    contexts: list[Emission]
    spans: dict[SSAValue, frozenset[int]] = field(default_factory=dict)
    """Domain axes each emitted tile varies along."""
    loads: dict[SSAValue, StridedView] = field(init=False)
    loaded: dict[SSAValue, frozenset[int]] = field(default_factory=dict)
    """`loaded_spans` of each value asked about (memo: values may share operands)."""

    def __post_init__(self) -> None:
        self.loads = {v.target: v for v in self.domain.loads if not v.matmul_operand}

    # -- where to emit ------------------------------------------------------------

    def add(self, op: Operation) -> SSAValue:
        self.contexts[-1].block.add_op(op)
        return op.results[0] if op.results else SSAValue.get(op)  # type: ignore[arg-type]

    def put(self, op: Operation) -> None:
        self.contexts[-1].block.add_op(op)

    def tile_type(self, spans: frozenset[int], element: Attribute) -> tile.TileType:
        return tile.TileType(
            [self.plan.tiles[a] if a in spans else 1 for a in self.coords], element
        )

    def lookup(self, value: SSAValue) -> SSAValue | None:
        for context in reversed(self.contexts):
            if value in context.scope:
                return context.scope[value]
        return None

    def bind(self, value: SSAValue, tile_value: SSAValue, spans: frozenset[int]) -> SSAValue:
        self.contexts[-1].scope[value] = tile_value
        self.spans[tile_value] = spans
        if value.name_hint:
            tile_value.name_hint = value.name_hint
        return tile_value

    @contextmanager
    def hoisted(self, spans: frozenset[int]) -> Iterator[None]:
        """Emit in the innermost context whose loop the value varies with:
        a value that does not change inside a loop is computed before it."""
        depth = max((i for i, c in enumerate(self.contexts) if c.axes & spans), default=0)
        inner = self.contexts[depth + 1 :]
        del self.contexts[depth + 1 :]
        try:
            yield
        finally:
            self.contexts.extend(inner)

    @contextmanager
    def loops(
        self, axes: Sequence[int], carried: list[SSAValue], once: Sequence[int] = ()
    ) -> Iterator[list[SSAValue]]:
        """`tile.for` loops over chunks of `axes` (outermost first), carrying
        `carried`; the loops over the axes in `once` run one iteration. Inside,
        `inner` holds the carried values: update it; after the block, `carried`
        holds the loops' results."""
        opened: list[tuple[Emission, list[SSAValue]]] = []
        current: list[SSAValue] = list(carried)
        for axis in axes:
            body = Block(arg_types=[v.type for v in current])
            opened.append((Emission(body, axes=frozenset([axis])), current))
            current = list(body.args)
            self.contexts.append(opened[-1][0])
        inner = list(current)
        yield inner
        results = inner
        for (context, inits), axis in zip(reversed(opened), reversed(list(axes)), strict=True):
            self.contexts.pop()
            if not inits and context.block.first_op is None:  # its stores were hoisted out
                continue
            context.block.add_op(tile.YieldOp(*results))
            level = int(self.plan.index[axis].removeprefix("loop"))
            trips = 1 if axis in once else self.plan.trips(axis, self.domain.sizes)
            loop = tile.ForOp(level, trips, inits, Region(context.block))
            self.put(loop)
            results = list(loop.results)
        carried[:] = results

    # -- values --------------------------------------------------------------------

    def value_spans(self, value: SSAValue) -> frozenset[int]:
        placement = self.domain.placement.get(value, ())
        return frozenset(a for span in placement for a in span)

    def emit(self, value: SSAValue) -> SSAValue:
        """The tile of `value`, emitting what it needs where it belongs."""
        found = self.lookup(value)
        if found is not None:
            return found
        with self.hoisted(self.value_spans(value)):
            return self.emit_here(value)

    def emit_here(self, value: SSAValue) -> SSAValue:
        if value in self.loads:
            return self.load(self.loads[value])
        op = value.owner
        assert isinstance(op, Operation), f"no tile for {value}"
        if isinstance(op, arith.ConstantOp):
            return self.constant(value, op)
        if isinstance(op, LAYOUT):  # in domain coordinates a layout op changes nothing
            source = self.emit(op.operands[0])
            return self.bind(value, source, self.spans[source])
        if isinstance(op, ELEMENTWISE):
            return self.elementwise(value, op)
        raise NotImplementedError(f"{describe(op)} cannot be emitted inside a tile")

    def constant(self, value: SSAValue, op: arith.ConstantOp) -> SSAValue:
        dense = op.value
        assert isinstance(dense, DenseIntOrFPElementsAttr)
        element = dense.get_element_type()
        raw = dense.get_values()[0]
        assert isinstance(raw, int | float)
        attr = scalar_attr(raw, element)
        new = self.add(tile.ConstantOp(attr, self.tile_type(frozenset(), element)))
        return self.bind(value, new, frozenset())

    def elementwise(self, value: SSAValue, op: Operation) -> SSAValue:
        operands = [self.emit(v) for v in op.operands if isinstance(v.type, TensorType)]
        spans = frozenset[int]().union(*(self.spans[v] for v in operands))
        assert isinstance(value.type, TensorType)
        cls = tile.MIRRORED[type(op)]
        if issubclass(cls, tile.TileUnaryOp):
            new = cls.build(operands=operands, result_types=[operands[0].type])
        else:
            new = cls.build(
                operands=operands, result_types=[self.tile_type(spans, value.type.element_type)]
            )
        return self.bind(value, self.add(new), spans)

    # -- memory ----------------------------------------------------------------------

    def view(self, strided: StridedView, dims: Sequence[tuple[int, ...]]) -> tile.View:
        """A view whose dims each span one domain axis or none."""
        entries = [self.view_dim(strided, span) for span in dims]
        if not entries:  # a kernel over no axes: one element
            return tile.View(ZERO, [], [], [], [])
        sizes, strides, tiles, index = zip(*entries, strict=True)
        return tile.View(ZERO, sizes, strides, tiles, index)

    def view_dim(
        self, strided: StridedView, span: tuple[int, ...]
    ) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr, str]:
        """(size, stride, tile, walker) of a view dim; a unit dim is one element."""
        if not span:
            return (ONE, ZERO, ONE, "whole")
        (axis,) = span
        plan = self.plan
        return (self.domain.sizes[axis], strided.strides[axis], plan.tiles[axis], plan.index[axis])

    def coord_dims(self, strided: StridedView) -> list[tuple[int, ...]]:
        spanned = frozenset(a for span in strided.placement for a in span)
        return [(a,) if a in spanned else () for a in self.coords]

    def load(self, strided: StridedView) -> SSAValue:
        assert isinstance(strided.target.type, TensorType)
        dims = self.coord_dims(strided)
        spans = frozenset(d[0] for d in dims if d)
        result_type = self.tile_type(spans, strided.target.type.element_type)
        new = self.add(tile.LoadOp(self.args[strided.value], result_type, self.view(strided, dims)))
        return self.bind(strided.target, new, spans)

    def store(self, strided: StridedView) -> None:
        """Store an output where it varies: out of the loops over axes it does not
        span, each of whose chunks would store it again (and an empty one never)."""
        value = self.emit(strided.target)
        dims = self.coord_dims(strided)
        spans = frozenset(d[0] for d in dims if d)
        with self.hoisted(spans):
            if self.spans[value] != spans:  # e.g. an output made by broadcast_to
                assert isinstance(value.type, tile.TileType)
                widened = self.tile_type(spans, value.type.element_type)
                value = self.add(tile.BroadcastOp(value, widened))
            self.put(tile.StoreOp(value, self.args[strided.value], self.view(strided, dims)))

    # -- reductions and matmuls ----------------------------------------------------------

    def reduction(self, op: t.ReduceOp) -> None:
        """One phase: fold chunks of the reduced axes into an accumulator."""
        kind = REDUCE_KIND[type(op)]
        assert isinstance(op.result.type, TensorType)
        element = op.result.type.element_type
        reduced = sorted(self.domain.reduced & self.value_spans(op.input))
        spans = self.value_spans(op.input) - self.domain.reduced
        # Computed where it varies: a result that does not vary along an open
        # (batch) loop is made before it, where later uses outside it find it.
        with self.hoisted(spans):
            if not reduced:  # over no axes (or only unit dims): the value itself
                source = self.emit(op.input)
                self.bind(op.result, source, self.spans[source])
                return
            acc_type = self.tile_type(spans, element)
            # Along a reduced axis that no load it is made from spans (a splat constant's),
            # the value is uniform and its tile one element: a loop over such an axis runs
            # once (each chunk would count the value again; the loop stays, as the loop
            # levels nest in order), and `over_uniform` accounts for the axis in closed form.
            uniform = [a for a in reduced if a not in self.loaded_spans(op.input)]
            chunks = self.chunked(reduced)
            if not chunks:  # whole rows in the tile: one reduction, no accumulator
                source = self.emit(op.input)
                # the result spans what its input's tile spans: a uniform input's
                # result is uniform too, and whoever stores it broadcasts it
                spans = self.spans[source] - self.domain.reduced
                acc_type = self.tile_type(spans, element)
                result = self.reduce(kind, source, reduced, acc_type)
            else:
                carried = [self.add(tile.ConstantOp(identity(kind, element), acc_type))]
                # Hoisted out of batch loops, the chunk loops would not sit at the depth
                # their levels (after the batch loops') need: the batch loops it left are
                # opened again around them, for one iteration (the value does not vary
                # along them).
                left = [a for a in self.plan.batch_loops if a not in self.open_axes()]
                with self.loops([*left, *chunks], carried, once=[*uniform, *left]) as inner:
                    part = self.reduce(kind, self.emit(op.input), reduced, acc_type)
                    combine = tile.MIRRORED[COMBINE[kind]]
                    inner[0] = self.add(
                        combine.build(operands=[inner[0], part], result_types=[acc_type])
                    )
                result = carried[0]
            if uniform:
                result = self.over_uniform(kind, result, uniform, acc_type)
            if isinstance(op, t.ReduceMeanOp):
                result = self.scaled(result, t.DivOp, reduced, acc_type)
            self.bind(op.result, result, spans)

    def over_uniform(
        self, kind: str, value: SSAValue, axes: Sequence[int], result: tile.TileType
    ) -> SSAValue:
        """The reduction over `axes` of a value that does not vary along them: a sum
        times their size, a product to that power; a max or min is the value itself,
        or the identity when the axes hold no elements."""
        if kind in ("sum", "prod"):
            return self.scaled(value, t.MulOp if kind == "sum" else t.PowOp, axes, result)
        if sympy.Mul(*(self.domain.sizes[a] for a in axes)).is_positive:
            return value
        scalar = self.tile_type(frozenset(), result.element_type)
        count = self.count(axes, result.element_type)
        zero = self.add(tile.ConstantOp(scalar_attr(0, result.element_type), scalar))
        boolean = self.tile_type(frozenset(), IntegerType(1))
        some = self.add(tile.MIRRORED[t.GtOp].build(operands=[count, zero], result_types=[boolean]))
        empty = self.add(tile.ConstantOp(identity(kind, result.element_type), scalar))
        return self.add(tile.SelectOp(some, value, empty, result))

    def scaled(
        self, value: SSAValue, op: type[Operation], axes: Sequence[int], result: tile.TileType
    ) -> SSAValue:
        """`value op n`, n the number of elements along `axes`."""
        n = self.count(axes, result.element_type)
        return self.add(tile.MIRRORED[op].build(operands=[value, n], result_types=[result]))

    def count(self, axes: Sequence[int], element: Attribute) -> SSAValue:
        """A one-element tile of the number of elements along `axes` (a slot expression)."""
        size = ExprAttr(sympy.Mul(*(self.domain.sizes[a] for a in axes)))
        return self.add(tile.ConstantOp(size, self.tile_type(frozenset(), element)))

    def loaded_spans(self, value: SSAValue) -> frozenset[int]:
        """The domain axes spanned by the loads `value` is computed from (in this
        kernel): a tile varies along no others. A matmul's result, like a value of
        unknown origin, spans its whole placement."""
        found = self.loaded.get(value)
        if found is not None:
            return found
        op = value.owner
        if value in self.loads or not isinstance(op, Operation) or isinstance(op, t.MatmulOp):
            found = self.value_spans(value)
        elif isinstance(op, arith.ConstantOp):
            found = frozenset()
        else:
            found = frozenset[int]().union(
                *(self.loaded_spans(v) for v in op.operands if isinstance(v.type, TensorType))
            )
        self.loaded[value] = found
        return found

    def open_axes(self) -> frozenset[int]:
        """The axes the loops around the current emission point walk."""
        return frozenset[int]().union(*(c.axes for c in self.contexts))

    def chunked(self, axes: Sequence[int]) -> list[int]:
        """Those of `axes` that a loop walks in chunks (not whole in the tile)."""
        return [a for a in axes if self.plan.index[a].startswith("loop")]

    def reduce(
        self, kind: str, source: SSAValue, axes: Sequence[int], result: Attribute
    ) -> SSAValue:
        dims = [self.coords.index(a) for a in axes if a in self.spans[source]]
        reduction = tile.REDUCES[kind]
        return self.add(
            reduction.build(
                operands=[source], result_types=[result], properties={"axes": axes_attr(dims)}
            )
        )

    def matmul(self, op: t.MatmulOp) -> None:
        """acc = the sum over chunks of K of a_chunk @ b_chunk."""
        assert self.domain.contraction is not None
        assert isinstance(op.result.type, TensorType)
        element = op.result.type.element_type
        spans = self.value_spans(op.result)
        carried = [
            self.add(tile.ConstantOp(identity("sum", element), self.tile_type(spans, element)))
        ]
        # lhs then rhs, as the analysis added them (a dict by value would
        # keep one load for `x @ x`, whose operands are read differently)
        lhs, rhs = (v for v in self.domain.loads if v.matmul_operand)
        batch = [span for span in self.domain.placement[op.result][:-2] if span]
        # K whole in the tile: no loop, one mma onto the zero constant (which
        # the bytecode lowering turns into an mma that does not accumulate)
        with self.loops(self.chunked([self.domain.contraction]), carried) as inner:
            a, b = (self.operand_tile(v, batch) for v in (lhs, rhs))
            inner[0] = self.add(tile.MmaOp(a, b, inner[0], op.flags))
        self.bind(op.result, carried[0], spans)

    def operand_tile(self, strided: StridedView, batch: Sequence[tuple[int, ...]]) -> SSAValue:
        """A matmul operand's tile in the accumulator's dims: the result's
        batch axes (1 where the operand does not span one), then its own
        rows and cols. Unit batch dims, which have no axis, are left out,
        as they are from the accumulator, so that the ranks agree."""
        assert isinstance(strided.target.type, TensorType)
        own = list(strided.placement)
        spanned = {a for span in own[:-2] for a in span}
        dims = [span if span[0] in spanned else () for span in batch] + own[-2:]
        shape = [self.plan.tiles[d[0]] if d else 1 for d in dims]
        tile_type = tile.TileType(shape, strided.target.type.element_type)
        return self.add(tile.LoadOp(self.args[strided.value], tile_type, self.view(strided, dims)))


def scalar_attr(value: float, element: Attribute) -> FloatAttr | IntegerAttr:
    """`value` as an attribute of element type `element` (float or integer)."""
    if isinstance(element, t.FLOAT_TYPES):
        return FloatAttr(float(value), element)
    assert isinstance(element, IntegerType)
    return IntegerAttr(int(value), element)


def axes_attr(axes: Sequence[int]) -> ArrayAttr[IntegerAttr]:
    return ArrayAttr([IntegerAttr(a, i64) for a in axes])


def body_ops(fusion: t.FusionOp) -> list[Operation]:
    return [op for op in fusion.body.block.ops if not isinstance(op, t.YieldOp)]


def yielded(fusion: t.FusionOp) -> list[SSAValue]:
    last = fusion.body.block.last_op
    assert isinstance(last, t.YieldOp)
    return list(last.values)


def analyze(fusion: t.FusionOp, guards: Facts) -> Domain:
    """The fusion's domain, given what its function's guards make true (`guards`, as
    fuse assumed when it grouped the ops: a guard without a substitution, e.g.
    `x_0*x_1 == x_1`)."""
    facts = [(lhs, rhs) for lhs, _, rhs in assumed(fusion, ASSUME)]
    bounds = [(size, int(most)) for size, _, most in assumed(fusion, BOUNDED)]
    return DomainAnalysis(
        body_ops(fusion), yielded(fusion), facts, bool(facts), bounds, known=guards
    ).run()


def assumed(fusion: t.FusionOp, key: str) -> list[tuple[sympy.Expr, Any, sympy.Expr]]:
    """What a guarded choice lets its fused kernel assume, as `split_condition` reads
    the texts: `lhs == rhs` (ASSUME) or `lhs <= rhs` (BOUNDED)."""
    attr = fusion.attributes.get(key)
    if not isinstance(attr, ArrayAttr):
        return []
    return [split_condition(text.data) for text in attr.data if isinstance(text, StringAttr)]


def last_uses(
    fusion: t.FusionOp,
) -> tuple[list[Operation], dict[Operation, int], dict[SSAValue, int]]:
    """The fusion's ops, each op's position and the position of each value's last
    use (an output's: past the last op)."""
    ops = body_ops(fusion)
    position = {op: i for i, op in enumerate(ops)}
    last_use: dict[SSAValue, int] = {}
    for i, op in enumerate(ops):
        for v in op.operands:
            last_use[v] = i
    for v in yielded(fusion):
        last_use[v] = len(ops)
    return ops, position, last_use


def spanned(domain: Domain, value: SSAValue) -> frozenset[int]:
    return frozenset(a for span in domain.placement.get(value, ()) for a in span)


def live_bytes(fusion: t.FusionOp, domain: Domain) -> tuple[int, int]:
    """Bytes per domain element of the largest set of full-size tiles alive
    at once (smaller tiles, e.g. a row's mean, are negligible while the axes
    they skip are long; see `skipping_bytes`), and the widest element size."""
    ops, position, last_use = last_uses(fusion)
    full = set(domain.parallel) | set(domain.reduced)
    widest = 1
    sizes: dict[SSAValue, int] = {}
    for v in last_use:
        if isinstance(v.type, TensorType):
            size = element_bytes(v.type.element_type)
            widest = max(widest, size)
            if spanned(domain, v) >= full:
                sizes[v] = size
    peak = 0
    for i in range(len(ops) + 1):
        live = [v for v in sizes if last_use[v] >= i and position.get(v.owner, -1) < i]  # type: ignore[arg-type]
        peak = max(peak, sum(sizes[v] for v in live))
    return peak + widest, widest


Kind = tuple[frozenset[int], Attribute]
"""A register's kind: the domain axes its tile spans and its element type."""


def skipping_bytes(fusion: t.FusionOp, domain: Domain, chunks: bool = False) -> int:
    """Bytes per domain element of a vector kernel's registers when the tiles
    that skip reduced axes are as large as full ones, as they are when those
    axes' tiles are 1. The bytecode reuses a register only for a tile of its
    kind, so this sums each kind's most bytes alive at once, over the kinds
    that span every parallel axis (the others are negligible, as in
    `live_bytes`). With `chunks`, a reduction walks loops over chunks and
    holds an accumulator beside each chunk's partial result."""
    ops, position, last_use = last_uses(fusion)
    kinds: dict[SSAValue, Kind] = {}
    for v in last_use:
        spans = spanned(domain, v)
        if isinstance(v.type, TensorType) and spans and spans >= set(domain.parallel):
            kinds[v] = (spans, v.type.element_type)
    peaks: dict[Kind, int] = {}
    for i in range(len(ops) + 1):
        alive = [v for v in kinds if position.get(v.owner, -1) < i <= last_use[v]]  # type: ignore[arg-type]
        if i < len(ops):
            made = new_registers(ops[i], kinds, last_use, i)
            alive += made * 2 if chunks and isinstance(ops[i], t.ReduceOp) else made
        held: dict[Kind, int] = {}
        for v in alive:
            held[kinds[v]] = held.get(kinds[v], 0) + element_bytes(kinds[v][1])
        for kind, size in held.items():
            peaks[kind] = max(peaks.get(kind, 0), size)
    return sum(peaks.values())


def new_registers(
    op: Operation, kinds: dict[SSAValue, Kind], last_use: dict[SSAValue, int], i: int
) -> list[SSAValue]:
    """The results of `op`, at position `i`, that take a register of their own:
    an elementwise op writes into an operand of its kind that dies there."""
    dying = {kinds[v] for v in op.operands if v in kinds and last_use[v] == i}
    in_place = isinstance(op, ELEMENTWISE)
    return [r for r in op.results if r in kinds and not (in_place and kinds[r] in dying)]


def kernel_plan(
    fusion: t.FusionOp, domain: Domain, device: DeviceSpec, whole_rows: bool = False
) -> tuple[TilePlan, list[int]]:
    """The tiling of a kernel and the domain axes its tile dims stand for.
    With `whole_rows` the reduced axes (or a matmul's K) are whole in a tile."""
    bytes_live, widest = live_bytes(fusion, domain)
    if domain.contraction is None:
        # a chunked kernel the rows variant stands beside runs only when a row
        # is too long for one tile, so its accumulators are negligible; in a
        # stack it runs for every shape
        stacked = isinstance(fusion.parent_op(), t.StackOp)
        skipping = skipping_bytes(fusion, domain, chunks=stacked and not whole_rows)
        plan = plan_vector_tiles(domain, bytes_live, widest, device, whole_rows, skipping)
        return plan, list(range(len(domain.sizes)))
    m, n, out_tiles = matmul_shape(fusion, domain)
    plan = plan_matmul_tiles(domain, m, n, out_tiles, widest, device, whole_rows)
    # `tile.mma` makes (batch..., rows, cols): the tile dims follow the matmul result's
    # axes in that order, whatever numbers the domain gave them (an epilogue reading an
    # input along other axes than the matmul does may number the rows first)
    result = [a for span in domain.placement[matmul_of(fusion).result] for a in span]
    others = [a for a in range(len(domain.sizes)) if a != domain.contraction and a not in result]
    return plan, others + result


def matmul_of(fusion: t.FusionOp) -> t.MatmulOp:
    """The one matmul of a cube or mix kernel's fusion."""
    return next(op for op in body_ops(fusion) if isinstance(op, t.MatmulOp))


def matmul_shape(fusion: t.FusionOp, domain: Domain) -> tuple[int, int, int]:
    """A cube or mix kernel's output axes (rows, cols) and how many output-sized
    tiles it holds at once: the accumulator coming into and going out of an
    mma (2), or the epilogue's peak if higher (the matmul's result is one of
    its full-size values). The operand tiles are counted by the plan itself."""
    m_span, n_span = domain.placement[matmul_of(fusion).result][-2:]
    bytes_live, widest = live_bytes(fusion, domain)
    return m_span[0], n_span[0], max(2, -(-bytes_live // widest))


def name_tile_sizes(plan: TilePlan, domain: Domain) -> dict[str, sympy.Expr]:
    """Give each computed tile size a name (`t0` for axis 0), so the IR shows
    `!tile.tile<[t0, t1], f32>` and the kernel lists each size once. A size
    built from earlier ones (a matmul's K chunk from its tm and tn) names them
    too: the sizes are evaluated in order at every new shape, each once."""
    taken = {str(s) for size in domain.sizes for s in size.free_symbols}
    names: dict[str, sympy.Expr] = {}
    earlier: dict[sympy.Expr, sympy.Expr] = {}
    for axis, size in enumerate(plan.tiles):
        if size.is_Integer or size == domain.sizes[axis]:
            continue
        name = f"t{axis}"
        while name in taken:
            name += "_"
        names[name] = in_named_sizes(size, tuple(earlier.items()))
        earlier[size] = symbol(name)
        plan.tiles[axis] = symbol(name)
    plan.grid = [ceildiv(domain.sizes[a], plan.tiles[a]) for a in plan.gridded] or [
        sympy.Integer(1)
    ]
    return names


@functools.lru_cache(maxsize=1024)
def in_named_sizes(
    size: sympy.Expr, named: tuple[tuple[sympy.Expr, sympy.Expr], ...]
) -> sympy.Expr:
    """`size` with the earlier tile sizes in it replaced by their names (`named`).
    Remembered: rebuilding the Min and Max in it costs sympy tens of milliseconds,
    and kernels of repeated structure (a model's layers) ask the same."""
    return cast(sympy.Expr, size.xreplace(dict(named)))


def lower_kernel(
    fusion: t.FusionOp, name: str, device: DeviceSpec, guards: Facts, whole_rows: bool = False
) -> tuple[tile.KernelOp, tile.LaunchOp]:
    domain = analyze(fusion, guards)
    plan, coords = kernel_plan(fusion, domain, device, whole_rows)
    sizes = name_tile_sizes(plan, domain)
    axes = ArrayAttr([tile.AxisAttr(domain.sizes[a], plan.tiles[a], plan.index[a]) for a in coords])
    inputs = [a for a in fusion.body.block.args if isinstance(a.type, TensorType)]
    outputs = yielded(fusion)
    kernel = tile.KernelOp(
        name,
        fusion.kind.data,
        plan.grid,
        [v.type for v in (*inputs, *outputs)],
        len(outputs),
        {
            TILE_SIZES: DictionaryAttr({k: ExprAttr(v) for k, v in sizes.items()}),
            AXES: axes,
            DEVICE: StringAttr(device.name),
            ARG_SHAPES: ArrayAttr([shape_attr(shape_of(v)) for v in (*inputs, *outputs)]),
        },
    )
    kernel_args = list(kernel.body.block.args)
    args: dict[SSAValue, SSAValue] = dict(zip([*inputs, *outputs], kernel_args, strict=True))
    for value, arg in args.items():
        arg.name_hint = value.name_hint
    builder = KernelBuilder(domain, plan, coords, args, [Emission(kernel.body.block)])
    with builder.loops(plan.batch_loops, []):
        emit_body(builder, fusion, domain)
    host_inputs = [v for v in fusion.inputs if isinstance(v.type, TensorType)]
    launch = tile.LaunchOp(name, host_inputs, fusion.result_types)
    for key in (SHAPE, SHAPES):
        if key in fusion.attributes:
            launch.attributes[key] = fusion.attributes[key]
    if dims := index_dims(fusion):
        launch.attributes[INDEX_DIMS] = ArrayAttr(dims)
    return kernel, launch


def index_dims(fusion: t.FusionOp) -> list[DictionaryAttr]:
    """The shapes of the ops in `fusion` that take dims from index values (`INDEX_DIMS`)."""
    found = []
    for op in body_ops(fusion):
        if isinstance(op, t.BroadcastToOp | t.ExpandShapeOp) and op.operands[1:]:
            shape = op.attributes[SHAPE]
            found.append(DictionaryAttr({"op": StringAttr(located(op)), "shape": shape}))
    return found


def emit_body(builder: KernelBuilder, fusion: t.FusionOp, domain: Domain) -> None:
    for op in body_ops(fusion):
        if isinstance(op, t.ReduceOp):
            builder.reduction(op)
        elif isinstance(op, t.MatmulOp):
            builder.matmul(op)
    # Outputs that vary along the reduced axes are computed in last loops
    # over chunks; the others (reduction results) once, after the phases.
    along = [s for s in domain.stores if builder.value_spans(s.target) & domain.reduced]
    for strided in domain.stores:
        if strided not in along:
            builder.store(strided)
    chunks = builder.chunked(sorted(domain.reduced))
    for once, stores in store_nests(builder, along, chunks):
        with builder.loops(chunks, [], once=once):
            for strided in stores:
                builder.store(strided)


def store_nests(
    builder: KernelBuilder, stores: Sequence[StridedView], chunks: list[int]
) -> list[tuple[list[int], list[StridedView]]]:
    """The loop nests over `chunks` that `stores` are made in, each with the loops
    that run once. An output is stored only in loops over axes it spans: one that
    spans the leading chunked axes is stored in the nest over all of them, out of
    the inner loops (see `store`); another gets a nest whose loops over the axes it
    does not span run once (loop levels nest in order, so none can be left out)."""
    nests: dict[tuple[int, ...], list[StridedView]] = {}
    for strided in stores:
        spanned = [a for a in chunks if a in builder.value_spans(strided.target)]
        key = tuple(chunks) if spanned == chunks[: len(spanned)] else tuple(spanned)
        nests.setdefault(key, []).append(strided)
    return [([a for a in chunks if a not in key], group) for key, group in nests.items()]


@dataclass(frozen=True)
class ConvertTensorToTilePass(ModulePass):
    """Lower every `tensor.fusion` to a `tile.kernel` (tiled for `device`)
    and a `tile.launch` of it in place of the fusion."""

    name = "convert-tensor-to-tile"

    device: str = "host"
    """The device preset to tile for: `host` or `ascend910b`."""

    def __post_init__(self) -> None:
        if self.device not in DEVICES:
            raise ValueError(
                f"convert-tensor-to-tile: unknown device {self.device!r}; use {sorted(DEVICES)}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        device = DEVICES[self.device]()
        count = 0
        for func in list(op.ops):
            if not isinstance(func, FuncOp):
                continue
            guards = known_facts(guard_facts(func))
            for fusion in [f for f in func.walk() if isinstance(f, t.FusionOp)]:
                if not fusion.results:  # dead code: nothing it computes is used
                    Rewriter.erase_op(fusion)
                    continue
                name = f"{func.sym_name.data}_k{count}"
                count += 1
                Rewriter.replace_op(fusion, lower_fusion(op, fusion, name, device, guards))


def add_kernel(module: ModuleOp, kernel: tile.KernelOp, launch: tile.LaunchOp) -> tile.LaunchOp:
    """Add `kernel` to the module; its launch replaces the fusion."""
    module.body.block.add_op(kernel)
    return launch


def lower_fusion(
    module: ModuleOp, fusion: t.FusionOp, name: str, device: DeviceSpec, guards: Facts
) -> Operation:
    """The kernel(s) of a fusion, added to `module`, and what launches them.

    A vector kernel with reductions gets two variants: `_rows`, whose tiles
    hold whole rows (fastest, when a row fits in local memory), and one that
    walks rows in chunks (any row length); a `tensor.choice` picks one from
    the real shapes. A cube or mix kernel likewise gets `_whole_k`, whose
    tiles hold all of K (one mma per tile, nothing accumulated), when K fits
    beside the output tiles in the cube memory; when K always fits (a
    static K) that is its only kernel. A condition the static sizes decide
    (a static row that always fits, or never does) keeps one kernel. Inside
    a `tensor.stack`, which holds only launches, a kernel has no variant."""
    domain = analyze(fusion, guards)
    bytes_live, widest = live_bytes(fusion, domain)
    stacked = isinstance(fusion.parent_op(), t.StackOp)
    if domain.contraction is None and not domain.reduced:  # elementwise: no variants
        return add_kernel(module, *lower_kernel(fusion, name, device, guards))
    if domain.contraction is not None:
        suffix = "_whole_k"
        m, n, out_tiles = matmul_shape(fusion, domain)
        if whole_k_always_fits(domain, out_tiles, widest, device):
            return add_kernel(module, *lower_kernel(fusion, name, device, guards, True))
        condition = whole_k_fits(domain, m, n, out_tiles, widest, device)
    else:
        suffix = "_rows"
        condition = rows_fit(domain, bytes_live, device, widest, skipping_bytes(fusion, domain))
    decided = static_truth(condition)  # static sizes: one variant whatever the symbols
    if decided is not None:
        return add_kernel(module, *lower_kernel(fusion, name, device, guards, decided))
    if stacked:
        return add_kernel(module, *lower_kernel(fusion, name, device, guards))
    chunked, launch = lower_kernel(fusion, name, device, guards)
    module.body.block.add_op(chunked)
    rows, rows_launch = lower_kernel(fusion, f"{name}{suffix}", device, guards, True)
    module.body.block.add_op(rows)
    choice = t.ChoiceOp(
        [condition],
        launch.result_types,
        Region(Block([rows_launch, t.YieldOp(*rows_launch.results)])),
        Region(Block([launch, t.YieldOp(*launch.results)])),
    )
    for key in (SHAPE, SHAPES):
        if key in launch.attributes:
            choice.attributes[key] = launch.attributes[key]
    return choice
