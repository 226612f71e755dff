"""The body of one `tile.kernel`: what one tile runs, emitted from a fusion's ops.

Inside a tile every value is a tile of the kernel's domain (see
`dvm.passes.domain`): layout ops vanish (they only relabel axes, or become the
strides of a load), elementwise ops broadcast between tiles, and reductions
become loops over chunks of the reduced axes that accumulate:

- a vector kernel runs one *phase* per reduction: a loop over chunks that
  recomputes the reduction's input from the kernel inputs and folds it into
  an accumulator; then a last loop over chunks computes and stores the
  outputs (LayerNorm: mean, variance, output), each only in the loops over
  the axes it spans. When one chunk covers a row, each loop runs once and
  nothing is read twice from memory;
- a cube or mix kernel accumulates `tile.mma` over chunks of K, then applies
  its elementwise epilogue once per finished output tile and stores.

A value is emitted where it varies: one that does not change inside a loop is
computed before it. `convert-tensor-to-tile` (`dvm.lowering.tensor_to_tile`)
chooses the tiling and builds the kernel around the body made here.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import sympy
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from dvm.dialects import tensor as t
from dvm.dialects import tile
from dvm.dialects.attrs import float_attr, i64_attr
from dvm.dialects.expr import ExprAttr
from dvm.dialects.grouped_matmul import GroupedMatmulOp
from dvm.dialects.index_ops import (
    OP_AXIS,
    OP_LABEL,
    IotaOp,
    TakeAlongAxisOp,
    TakeOp,
    TileIotaOp,
    TileTakeOp,
)
from dvm.dialects.scans import BOOL_REDUCE_KIND
from dvm.dialects.walk import append_op, block_ops
from dvm.lowering.grouped_matmul import emit_grouped_matmul
from dvm.lowering.tiling import TilePlan
from dvm.passes.domain import ELEMENTWISE_KINDS, LAYOUT_KINDS, MATMULS, Domain, StridedView
from dvm.passes.errors import describe, located

REDUCE_KIND = {
    t.ReduceSumOp: "sum",
    t.ReduceMeanOp: "sum",
    t.ReduceMaxOp: "max",
    t.ReduceMinOp: "min",
    t.ReduceProdOp: "prod",
    **BOOL_REDUCE_KIND,
}
COMBINE = {"sum": t.AddOp, "max": t.MaxOp, "min": t.MinOp, "prod": t.MulOp}
ZERO, ONE = sympy.Integer(0), sympy.Integer(1)
UI8 = IntegerType(8, Signedness.UNSIGNED)


def identity(kind: str, element: Attribute) -> FloatAttr | IntegerAttr:
    """The reduction's value over no elements, as an attribute of `element`."""
    if t.is_float(element):
        value = {"sum": 0.0, "prod": 1.0, "max": float("-inf"), "min": float("inf")}[kind]
        return float_attr(value, element)
    assert t.is_bool(element) or t.is_int(element)
    assert isinstance(element, IntegerType)
    width = element.width.data
    if width == 1 or element.signedness.data == Signedness.UNSIGNED:
        lo, hi = 0, 2**width - 1
    else:
        lo, hi = -(2 ** (width - 1)), 2 ** (width - 1) - 1
    value = {"sum": 0, "prod": 1, "max": lo, "min": hi}[kind]
    return IntegerAttr(value, element)  # type: ignore[arg-type]


MAX_TILE_TYPES = 1024
"""The most tile types `tile_type` keeps (it starts again when full)."""
_tile_types: dict[tuple[tuple[sympy.Expr | int, ...], Attribute], tile.TileType] = {}


def tile_type(extents: Sequence[sympy.Expr | int], element: Attribute) -> tile.TileType:
    """`TileType(extents, element)`, made once per process (up to a bound): kernels
    share their tile types (the same tile sizes over the same elements), and xDSL
    verifies each type it makes, its shape too (600 bytecodes)."""
    key = (tuple(extents), element)
    found = _tile_types.get(key)
    if found is None:
        if len(_tile_types) >= MAX_TILE_TYPES:
            _tile_types.clear()
        found = _tile_types[key] = tile.TileType(extents, element)
    return found


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
    tile_types: dict[tuple[frozenset[int], Attribute], tile.TileType] = field(default_factory=dict)
    """`tile_type` of each (spans, element) asked about: a new type and its shape
    attribute are verified as made, several microseconds, and most tiles share one."""

    def __post_init__(self) -> None:
        self.loads = {v.target: v for v in self.domain.loads if not v.matmul_operand}

    # -- where to emit ------------------------------------------------------------

    def add(self, op: Operation) -> SSAValue:
        append_op(self.contexts[-1].block, op)
        return op.results[0] if op.results else SSAValue.get(op)  # type: ignore[arg-type]

    def put(self, op: Operation) -> None:
        append_op(self.contexts[-1].block, op)

    def tile_type(self, spans: frozenset[int], element: Attribute) -> tile.TileType:
        found = self.tile_types.get((spans, element))
        if found is None:
            extents = [self.plan.tiles[a] if a in spans else 1 for a in self.coords]
            found = self.tile_types[spans, element] = tile_type(extents, element)
        return found

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
        # an iota varies along its own dim only: out of the loops over the others
        iota = isinstance(value.owner, IotaOp)
        with self.hoisted(self.loaded_spans(value) if iota else self.value_spans(value)):
            return self.emit_here(value)

    def emit_here(self, value: SSAValue) -> SSAValue:
        if value in self.loads:
            return self.load(self.loads[value])
        op = value.owner
        assert isinstance(op, Operation), f"no tile for {value}"
        if isinstance(op, arith.ConstantOp):
            return self.constant(value, op)
        if op in LAYOUT_KINDS:  # in domain coordinates a layout op changes nothing
            source = self.emit(op.operands[0])
            return self.bind(value, source, self.spans[source])
        if op in ELEMENTWISE_KINDS:
            return self.elementwise(value, op)
        if isinstance(op, IotaOp):
            return self.iota(value, op)
        if value in self.domain.takes:
            return self.take(value, op)
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
        if isinstance(op, t.ClampOp):
            return self.bind(value, self.clamp(operands, value.type.element_type), spans)
        cls = tile.MIRRORED[type(op)]
        if tile.TileUnaryOp in cls.__mro__:  # (not `issubclass`: see `OpSet`)
            new = cls.create(operands=operands, result_types=[operands[0].type])
        else:
            new = cls.create(
                operands=operands, result_types=[self.tile_type(spans, value.type.element_type)]
            )
        return self.bind(value, self.add(new), spans)

    def iota(self, value: SSAValue, op: IotaOp) -> SSAValue:
        """A tile of the global index along the axis the iota's dim spans (0 along a
        unit dim, which spans none)."""
        assert isinstance(value.type, TensorType)
        element = value.type.element_type
        span = self.domain.placement[value][op.dim]
        if not span:
            zero = tile.ConstantOp(scalar_attr(0, element), self.tile_type(frozenset(), element))
            return self.bind(value, self.add(zero), frozenset())
        (axis,) = span
        spans = frozenset(span)
        new = self.add(TileIotaOp(self.coords.index(axis), self.tile_type(spans, element)))
        return self.bind(value, new, spans)

    def take(self, value: SSAValue, op: Operation) -> SSAValue:
        """An indexed load: the indices' tile, then the source through its view, whose
        last dim is the indexed one (whole)."""
        assert isinstance(op, TakeOp | TakeAlongAxisOp)
        indices = self.emit(op.indices)
        taken = self.domain.takes[value]
        dims = self.coord_dims(taken.view)
        view = self.view(taken.view, dims)
        view = tile.View(
            view.offset,
            [*view.sizes, taken.size],
            [*view.strides, taken.stride],
            [*view.tiles, taken.size],
            [*view.index, "whole"],
        )
        spans = frozenset(d[0] for d in dims if d)
        result = self.tile_type(spans, tensor_element(value))
        new = TileTakeOp(self.args[taken.view.value], indices, result, view)
        new.attributes[OP_LABEL] = StringAttr(located(op))
        new.attributes[OP_AXIS] = i64_attr(op.dim)
        return self.bind(value, self.add(new), spans)

    def clamp(self, operands: Sequence[SSAValue], element: Attribute) -> SSAValue:
        """`tensor.clamp` as the two instructions it is: `min(max(x, lo), hi)`."""
        x, low, high = operands
        for bound, op in ((low, t.MaxOp), (high, t.MinOp)):
            spans = self.spans[x] | self.spans[bound]
            new = tile.MIRRORED[op].create(
                operands=[x, bound], result_types=[self.tile_type(spans, element)]
            )
            x = self.add(new)
            self.spans[x] = spans
        return x

    # -- memory ----------------------------------------------------------------------

    def view(self, strided: StridedView, dims: Sequence[tuple[int, ...]]) -> tile.View:
        """A view whose dims each span one domain axis or none."""
        entries = [self.view_dim(strided, span) for span in dims]
        if not entries:  # a kernel over no axes: one element
            return tile.View(strided.offset, [], [], [], [])
        sizes, strides, tiles, index = zip(*entries, strict=True)
        return tile.View(strided.offset, sizes, strides, tiles, index)

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
        boolean = t.is_bool(op.result.type.element_type)
        # the VM reduces no i1: `any` and `all` reduce the booleans as ui8 (0 or 1)
        element = UI8 if boolean else op.result.type.element_type
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
                source = self.as_element(self.emit(op.input), element)
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
                    source = self.as_element(self.emit(op.input), element)
                    part = self.reduce(kind, source, reduced, acc_type)
                    combine = tile.MIRRORED[COMBINE[kind]]
                    inner[0] = self.add(
                        combine.create(operands=[inner[0], part], result_types=[acc_type])
                    )
                result = carried[0]
            if uniform:
                result = self.over_uniform(kind, result, uniform, acc_type)
            if isinstance(op, t.ReduceMeanOp):
                result = self.scaled(result, t.DivOp, reduced, acc_type)
            if boolean:
                result = self.as_element(result, op.result.type.element_type, spans)
            self.bind(op.result, result, spans)

    def as_element(
        self, value: SSAValue, element: Attribute, spans: frozenset[int] = frozenset()
    ) -> SSAValue:
        """`value` converted to element type `element` (itself when it has it); a value
        not bound yet (an accumulator) spans `spans`."""
        assert isinstance(value.type, tile.TileType)
        if value.type.element_type == element:
            return value
        converted = tile.TileType(value.type.extents, element)
        new = self.add(tile.ConvertOp.create(operands=[value], result_types=[converted]))
        self.spans[new] = self.spans.get(value, spans)
        return new

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
        some = self.add(
            tile.MIRRORED[t.GtOp].create(operands=[count, zero], result_types=[boolean])
        )
        empty = self.add(tile.ConstantOp(identity(kind, result.element_type), scalar))
        return self.add(tile.SelectOp(some, value, empty, result))

    def scaled(
        self, value: SSAValue, op: type[Operation], axes: Sequence[int], result: tile.TileType
    ) -> SSAValue:
        """`value op n`, n the number of elements along `axes`."""
        n = self.count(axes, result.element_type)
        return self.add(tile.MIRRORED[op].create(operands=[value, n], result_types=[result]))

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
        if value in self.loads or not isinstance(op, Operation) or isinstance(op, MATMULS):
            found = self.value_spans(value)
        elif isinstance(op, arith.ConstantOp):
            found = frozenset()
        elif isinstance(op, IotaOp):  # varies along its own dim's axis only
            found = frozenset(self.domain.placement[value][op.dim])
        elif value in self.domain.takes:  # an indexed load
            found = self.value_spans(value)
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
            reduction.create(
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


def tensor_element(value: SSAValue) -> Attribute:
    assert isinstance(value.type, TensorType)
    return value.type.element_type


def scalar_attr(value: float, element: Attribute) -> FloatAttr | IntegerAttr:
    """`value` as an attribute of element type `element` (float or integer)."""
    if isinstance(element, t.FLOAT_TYPES):
        return float_attr(float(value), element)
    assert isinstance(element, IntegerType)
    return IntegerAttr(int(value), element)


def axes_attr(axes: Sequence[int]) -> ArrayAttr[IntegerAttr]:
    return ArrayAttr([i64_attr(a) for a in axes])


def body_ops(fusion: t.FusionOp) -> list[Operation]:
    return [op for op in block_ops(fusion.body.block) if type(op) is not t.YieldOp]


def emit_kernel_body(
    block: Block,
    fusion: t.FusionOp,
    domain: Domain,
    plan: TilePlan,
    coords: list[int],
    args: dict[SSAValue, SSAValue],
) -> None:
    """Emit into `block`, a kernel's body, what one tile of `fusion` runs: tiled by
    `plan`, its tile dims standing for the domain axes `coords`, the fusion's inputs
    and outputs being the kernel's arguments `args`."""
    builder = KernelBuilder(domain, plan, coords, args, [Emission(block)])
    with builder.loops(plan.batch_loops, []):
        emit_body(builder, fusion, domain)


def emit_body(builder: KernelBuilder, fusion: t.FusionOp, domain: Domain) -> None:
    emit_ops(builder, body_ops(fusion), domain)


def emit_ops(builder: KernelBuilder, ops: Sequence[Operation], domain: Domain) -> None:
    """The phases of `ops` (reductions, matmuls), then the stores of `domain`."""
    for op in ops:
        if isinstance(op, t.ReduceOp):
            builder.reduction(op)
        elif isinstance(op, t.MatmulOp):
            builder.matmul(op)
        elif isinstance(op, GroupedMatmulOp):
            emit_grouped_matmul(builder, op)
    # Outputs that vary along the reduced axes are computed in last loops
    # over chunks; the others (reduction results) once, after the phases.
    # An output spanning a domain axis of size 0 (a static 0 dim, or a choice's branch
    # where a dim is 0) has no element to store, whatever its tiles.
    empty = {a for a, size in enumerate(domain.sizes) if size == 0}
    stored = [s for s in domain.stores if not builder.value_spans(s.target) & empty]
    along = [s for s in stored if builder.value_spans(s.target) & domain.reduced]
    emit_stores(builder, ops, [s for s in stored if s not in along])
    chunks = builder.chunked(sorted(domain.reduced))
    for once, stores in store_nests(builder, along, chunks):
        with builder.loops(chunks, [], once=once):
            emit_stores(builder, ops, stores)


def statically_empty(value: SSAValue) -> bool:
    """Whether `value` is a tensor of a static 0 dim: of no element at any shape."""
    return isinstance(value.type, TensorType) and 0 in value.type.get_shape()


def emit_stores(
    builder: KernelBuilder, ops: Sequence[Operation], stores: list[StridedView]
) -> None:
    """Emit the elementwise values `stores` need, not emitted yet, in the order of `ops`,
    each output stored once it is made. Emitting from the outputs alone would follow
    their operands depth first: an op's first operand's whole chain before its second's,
    which can keep many more tiles alive at once than the fusion's order does, and
    tiling sized the tiles by that order's live bytes (`tensor_to_tile.live_bytes`).
    The other values (loads, layouts, takes) are emitted where their first user asks."""
    needed: set[SSAValue] = set()
    pending = [s.target for s in stores]
    while pending:
        value = pending.pop()
        op = value.owner
        if value in needed or not isinstance(op, Operation) or op not in ELEMENTWISE_KINDS:
            continue
        if value in builder.loads or builder.lookup(value) is not None:
            continue
        needed.add(value)
        pending.extend(v for v in op.operands if isinstance(v.type, TensorType))
    waiting = list(stores)
    for op in ops:
        for result in op.results:
            if result in needed:
                builder.emit(result)
                for strided in [s for s in waiting if s.target == result]:
                    builder.store(strided)
                    waiting.remove(strided)
    for strided in waiting:
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
