"""Kernel domains: when can a group of ops run as one tiled kernel?

A fused kernel iterates over one *domain*: a list of axes with symbolic
sizes. Every value inside the kernel is *placed* in that domain: each of its
dims spans an ordered list of domain axes (one axis usually; several after a
collapse; none for a unit dim that broadcasts). Elementwise ops then line up
by numpy broadcasting in domain coordinates, transposes and reshapes inside
a kernel only relabel axes, and reductions reduce domain axes. This is what
"iteration spaces merge affinely" means here.

Values that come from outside the kernel (inputs) are read through a
*strided view* of their buffer: the chain of layout ops between the input
and its first compute use (transpose, expand/collapse, broadcast_to) is
folded into per-axis strides, when that is provably possible. Outputs are
written the same way, through the layout ops that follow the last compute.

A group is legal when every placement is consistent, sizes agree by sympy
proof, all reductions reduce the same axes, and every output spans every
axis that is not reduced. The `fuse` pass asks this analysis about candidate
groups; `convert-tensor-to-tile` reads the domain of each kernel from it.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import sympy
from xdsl.dialects import arith
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from dvm.dialects import tensor as t
from dvm.dialects.data_movement import ConcatOp, ExtractSliceOp, InsertSliceOp, PadOp, ReverseOp
from dvm.dialects.expr import product
from dvm.dialects.grouped_matmul import GroupedMatmulOp
from dvm.dialects.index_ops import IotaOp, ScatterAddOp, TakeAlongAxisOp, TakeOp
from dvm.dialects.scans import BOOL_REDUCE_OPS, CumProdOp, CumSumOp, TopKOp
from dvm.dialects.shape_ops import CastOp
from dvm.passes.data_movement import reverse_view, slice_view
from dvm.passes.domain_model import Axes as Axes
from dvm.passes.domain_model import Domain as Domain
from dvm.passes.domain_model import Placement as Placement
from dvm.passes.domain_model import StridedView as StridedView
from dvm.passes.domain_model import TakeView as TakeView
from dvm.passes.errors import describe
from dvm.passes.symbolic import (
    Shape,
    shape_of,
)


class OpSet:
    """Op classes asked about at every op of every analysis: `op in OpSet(*classes)` is
    `isinstance(op, classes)`, remembered per class, and found among the bases of
    the op's class (`__mro__`; no op class is an ABC's virtual subclass): xDSL's op classes
    are ABCs, whose first test of a class runs Python calls for each of their subclasses."""

    def __init__(self, *classes: type[Operation]):
        self.classes = frozenset(classes)
        self.known: dict[type, bool] = {}

    def __contains__(self, op: object) -> bool:
        known = self.known.get(type(op))
        if known is None:
            known = self.known[type(op)] = not self.classes.isdisjoint(type(op).__mro__)
        return known


ELEMENTWISE = (*t.UNARY_OPS, t.ConvertOp, *t.BINARY_OPS, t.SelectOp, t.ClampOp)
LAYOUT = (
    t.TransposeOp,
    t.ExpandShapeOp,
    t.CollapseShapeOp,
    t.BroadcastToOp,
    ExtractSliceOp,
    ReverseOp,
    CastOp,
)
TAKES = (TakeOp, TakeAlongAxisOp)
OWN_KERNEL = (ConcatOp, InsertSliceOp, PadOp, CumSumOp, CumProdOp, ScatterAddOp, TopKOp)
"""Ops that are kernels of their own (`DomainAnalysis.alone`): data movement ops, and
scans and top_k, whose axis one tile walks in order (`dvm.lowering.scans`)."""
VECTOR = (*ELEMENTWISE, *t.REDUCE_OPS, *BOOL_REDUCE_OPS, *LAYOUT, IotaOp, *TAKES, *OWN_KERNEL)
"""Ops a vector kernel may hold; a cube/mix kernel adds one of `MATMULS`."""
MATMULS = (t.MatmulOp, GroupedMatmulOp)
"""The ops a cube or mix kernel is built around (one per kernel)."""
ELEMENTWISE_KINDS = OpSet(*ELEMENTWISE)
POINTWISE_KINDS = OpSet(*ELEMENTWISE, t.BroadcastToOp)
LAYOUT_KINDS = OpSet(*LAYOUT)
OWN_KERNEL_KINDS = OpSet(*OWN_KERNEL)
MATMUL_KINDS = OpSet(*MATMULS)


MAX_REDUCED_COLUMNS = 512
"""The most columns a matmul's epilogue may reduce: a tile holds whole rows of them."""


class Illegal(Exception):
    """The group cannot be one kernel. `conditions` lists size equalities
    that were plausible but not provable, `bounds` sizes that must not exceed
    a number: with them assumed, the group would be legal (so a guarded choice
    can take it when they hold)."""

    def __init__(
        self,
        reason: str,
        conditions: Sequence[tuple[sympy.Expr, sympy.Expr]] = (),
        bounds: Sequence[tuple[sympy.Expr, int]] = (),
    ):
        super().__init__(reason)
        self.conditions = list(conditions)
        self.bounds = list(bounds)


Facts = frozenset[frozenset[sympy.Expr]]
"""Size equalities known to hold, each as the set of its two sides."""


def known_facts(pairs: Iterable[tuple[sympy.Expr, sympy.Expr]]) -> Facts:
    """`pairs` as Facts: made once (e.g. from a function's guards) and shared by every
    analysis, which would otherwise copy them all for each candidate group."""
    return frozenset(frozenset(pair) for pair in pairs)


def provably_equal(a: sympy.Expr, b: sympy.Expr) -> bool:
    return a == b or sympy.expand(a - b) == 0


def provably_different(a: sympy.Expr, b: sympy.Expr) -> bool:
    d = sympy.expand(a - b)
    return bool(d.is_number and d != 0)


def contiguous_strides(shape: Shape) -> list[sympy.Expr]:
    return list(_contiguous_strides(tuple(shape)))


@lru_cache(maxsize=1024)
def _contiguous_strides(shape: Shape) -> Shape:
    """Remembered: each analysis asks for its inputs' and outputs' (products of sizes;
    not the whole size, no stride, which sympy would flatten by assumption queries;
    each put together by `expr.product`, as sympy's `Mul` would make it: `Mul` asks
    the assumptions of a product it has not met, 5,900 bytecodes of softmax's first
    compile for `128*x_1`)."""
    strides: list[sympy.Expr] = [sympy.S.One]
    for d in reversed(shape[1:]):
        strides.append(d if strides[-1] is sympy.S.One else product(strides[-1], d))
    return tuple(reversed(strides)) if shape else ()


@dataclass(frozen=True)
class Visited:
    """What an analysis found visiting `ops`, before it finished the domain (copies of
    its state then). An analysis of a group that begins with these ops takes it up
    instead of visiting them again (`fuse` grows a group an op at a time): visiting an
    op depends only on the ops before it in block order, so both end the same."""

    ops: tuple[Operation, ...]
    domain: Domain
    """Its sizes, placements and contraction axis."""
    lists: tuple[list[Any], ...]
    """The union-find, reductions, unproved equalities, loads (matmul operands') and takes."""
    chains: dict[SSAValue, tuple[Operation, SSAValue]]


def visited_part(domain: Domain) -> Domain:
    """A copy of what the visits make of `domain` (the rest is made as it is finished)."""
    return Domain(
        list(domain.sizes), placement=dict(domain.placement), contraction=domain.contraction
    )


class DomainAnalysis:
    """Places the values of one candidate group of ops into a common domain."""

    def __init__(
        self,
        ops: Sequence[Operation],
        outputs: Iterable[SSAValue],
        assume: Iterable[tuple[sympy.Expr, sympy.Expr]] = (),
        align: bool = False,
        bounds: Iterable[tuple[sympy.Expr, int]] = (),
        known: Facts = frozenset(),
        shapes: dict[SSAValue, Shape] | None = None,
        resume: Visited | None = None,
        views: bool = True,
    ):
        """`assume` and `known`: size equalities known to hold where the kernel runs
        (`known` as made by `known_facts`, shared), and `bounds`: sizes known not to
        exceed a number there (a guarded choice checked them). `align`: the ops form
        two independent parts whose domains are to be laid on top of each other,
        axis by axis. `shapes`: the values' shapes (`shape_of`) as found so far,
        shared by the analyses of one block's candidate groups. `resume`: what an analysis
        with these `known` and `shapes` (no `assume`, `align`, `bounds`) found visiting
        the first of `ops`, which are not visited again. `views`: make the views of the
        domain's loads and stores; without them it has its sizes, placements and reduced
        axes, and the ops are refused where the views would refuse them (what `fuse`
        asks of a candidate group)."""
        self.ops = list(ops)
        self.shapes = {} if shapes is None else shapes
        self.known = known
        self.facts = known_facts(assume)
        self.bounds = dict(bounds)
        self.align = align
        self.members = set(self.ops)
        self.outputs = list(outputs)
        self.domain = Domain()
        self.reductions: list[tuple[Operation, set[int]]] = []
        """Each reduction and the axes it reduces; all must agree (checked
        once axes are unified, at the end)."""
        self.conditions: list[tuple[sympy.Expr, sympy.Expr]] = []
        self.chains: dict[SSAValue, tuple[Operation, SSAValue]] = {}
        """Layout results computed from inputs only: the op and its operand."""
        self.parent: list[int] = []
        """Union-find over domain axes: two axes found to be one are merged."""
        self.loaded: list[SSAValue] = []
        self.operand_loads: list[tuple[SSAValue, Placement]] = []
        self.takes: list[tuple[TakeOp | TakeAlongAxisOp, Placement]] = []
        """Each take and the axes its source's dims (all but the indexed one) span."""
        self.resume = resume
        self.views = views
        self.resumable = True
        """Not when an op is a kernel of its own (`alone` asks about every op)."""
        self.visited: Visited | None = None
        """After `run`, if resumable: what visiting the ops found."""

    # -- entry point ------------------------------------------------------------

    def run(self) -> Domain:
        start = self.restore(self.resume) if self.resume is not None else 0
        for op in self.ops[start:]:
            self.visit(op)
        if self.resumable:
            self.visited = self.saved()
        if self.align:
            self.align_parts()
        for value in self.outputs:
            if self.placed(value) is None:  # only layout ops from an input: a copy
                self.place_new(value)
        self.canonicalize()
        if self.domain.contraction is not None:
            self.check_epilogue()
        if self.views:
            self.add_views()
        else:
            self.check_views()
        if self.conditions:
            raise Illegal("sizes are not provably equal", self.conditions)
        return self.domain

    def add_views(self) -> None:
        """The views through which the kernel loads its inputs and stores its outputs."""
        for value in self.loaded:
            self.add_load(value, self.domain.placement[value])
        for value, placement in self.operand_loads:
            self.add_load(value, tuple(tuple(self.renumbered(span)) for span in placement), True)
        for op, placement in self.takes:
            self.add_take(op, tuple(tuple(self.renumbered(span)) for span in placement))
        for value in self.outputs:
            self.add_store(value)

    def check_views(self) -> None:
        """Refuse what `add_views` would refuse, in its order, without making the views:
        an input read through layout ops that are no strided view, an output that does
        not span the parallel axes. (`fuse` analyzes every group it grows, an op larger
        each time, and reads none of their views.)"""
        sources = (op.source for op, _ in self.takes)
        for value in (*self.loaded, *(v for v, _ in self.operand_loads), *sources):
            if value in self.chains:
                self.view_through_chain(value)
        for value in self.outputs:
            self.check_spans_parallel(value)

    def saved(self) -> Visited:
        """A copy of what the visits found (finishing the domain changes it)."""
        lists = (self.parent, self.reductions, self.conditions, self.loaded)
        copies = tuple(map(list, (*lists, self.operand_loads, self.takes)))
        return Visited(tuple(self.ops), visited_part(self.domain), copies, dict(self.chains))

    def restore(self, visited: Visited) -> int:
        """Take up what `visited` found (its ops begin this analysis's); how many it had."""
        done = len(visited.ops)
        assert all(map(operator.is_, visited.ops, self.ops[:done]))
        self.domain = visited_part(visited.domain)
        self.parent, self.reductions, self.conditions, self.loaded, *rest = map(list, visited.lists)
        self.operand_loads, self.takes = rest
        self.chains = dict(visited.chains)
        return done

    def find(self, axis: int) -> int:
        while self.parent[axis] != axis:
            self.parent[axis] = self.parent[self.parent[axis]]
            axis = self.parent[axis]
        return axis

    def unify(self, what: str, a: int, b: int) -> None:
        a, b = self.find(a), self.find(b)
        if a != b:
            self.require_size(what, self.domain.sizes[b], (a,))
            self.parent[b] = a

    def check_epilogue(self) -> None:
        """A mix kernel's epilogue works on tiles of the matmul's output: it
        may not iterate over axes that the matmul result does not span, and it
        reduces only the result's columns, when there are few: a tile then holds
        whole rows of the result, as a vector kernel's does (a LayerNorm after a
        projection). A dynamic number of them needs a bound, which a guarded
        choice checks (attention's scores and their softmax)."""
        matmuls = [op for op in self.ops if op in MATMUL_KINDS]
        placement = self.domain.placement[matmuls[0].results[0]]
        spanned = {a for span in placement for a in span}
        if set(self.domain.parallel) - spanned:
            raise Illegal("the epilogue iterates over axes the matmul result does not span")
        if not self.domain.reduced:
            return
        columns = set(placement[-1])
        size = self.domain.sizes[placement[-1][0]] if len(columns) == 1 else None
        if self.domain.reduced != columns or size is None:
            raise Illegal("a matmul kernel reduces only its result's columns")
        if size.is_Integer:
            if size > MAX_REDUCED_COLUMNS:
                raise Illegal(f"a matmul kernel reduces at most {MAX_REDUCED_COLUMNS} columns")
        elif self.bounds.get(size, MAX_REDUCED_COLUMNS + 1) > MAX_REDUCED_COLUMNS:
            raise Illegal(
                f"a matmul kernel reduces at most {MAX_REDUCED_COLUMNS} columns, not {size}",
                bounds=[(size, MAX_REDUCED_COLUMNS)],
            )

    def align_parts(self) -> None:
        """Lay two independent parts of equal rank on one domain, axis by
        axis in the order they were created."""
        parts: dict[int, list[int]] = {}
        link = {self.find(a): self.find(a) for a in range(len(self.parent))}

        def root(a: int) -> int:
            while link[a] != a:
                a = link[a]
            return a

        for placement in self.domain.placement.values():
            axes = [self.find(a) for span in placement for a in span]
            for a in axes[1:]:
                link[root(a)] = root(axes[0])
        # in the order of each axis's first member: which member union-find keeps as
        # the root depends on the order of the unifications (lowering, which sees the
        # constants inside the kernel, unifies them in another order than fuse did)
        first_member: dict[int, int] = {}
        for a in range(len(self.parent)):
            first_member.setdefault(self.find(a), a)
        for a in sorted(link, key=first_member.__getitem__):
            parts.setdefault(root(a), []).append(a)
        if len(parts) != 2:
            raise Illegal(f"cannot align {len(parts)} independent parts")
        first, second = parts.values()
        if len(first) != len(second):
            raise Illegal("the parts to align have domains of different rank")
        for a, b in zip(first, second, strict=True):
            self.unify("aligned parts", a, b)

    def canonicalize(self) -> None:
        """Renumber the axes that survived unification densely, in order."""
        found = [self.find(a) for a in range(len(self.parent))]
        roots = sorted(set(found))
        number = {r: i for i, r in enumerate(roots)}
        renumbered = list(map(number.__getitem__, found)).__getitem__

        def renumber(axes: Axes) -> Axes:
            return tuple(map(renumbered, axes))

        self.renumbered = renumber

        sizes = self.domain.sizes
        self.domain.sizes = [sizes[r] for r in roots]
        unchanged = len(roots) == len(found)  # (no axes unified: each keeps its number)
        for value, placement in self.domain.placement.items():
            if not unchanged:
                placement = tuple([tuple(map(renumbered, span)) for span in placement])
                self.domain.placement[value] = placement
            flat = list(itertools.chain.from_iterable(placement))
            if len(flat) != len(set(flat)):
                raise Illegal(f"{value.name_hint or 'a value'} would iterate one axis twice")
        reduced = [(op, frozenset(renumber(tuple(axes)))) for op, axes in self.reductions]
        for op, axes in reduced[1:]:
            if axes != reduced[0][1]:
                raise Illegal(
                    f"{describe(op)} reduces other axes than the kernel's other reductions"
                )
        self.domain.reduced = reduced[0][1] if reduced else frozenset()
        if self.domain.contraction is not None:
            self.domain.contraction = number[self.find(self.domain.contraction)]

    # -- helpers ----------------------------------------------------------------

    def shape(self, value: SSAValue) -> Shape:
        """`shape_of(value)`, remembered: an argument's is read from its function's
        attributes, each candidate group asks again, and a value may be asked often."""
        shape = self.shapes.get(value)
        if shape is None:
            shape = self.shapes[value] = shape_of(value)
        return shape

    def is_internal(self, value: SSAValue) -> bool:
        return isinstance(value.owner, Operation) and value.owner in self.members

    def new_axis(self, size: sympy.Expr) -> int:
        self.domain.sizes.append(size)
        self.parent.append(len(self.parent))
        return len(self.domain.sizes) - 1

    def span_size(self, axes: Axes) -> sympy.Expr:
        return sympy.Mul(*(self.domain.sizes[self.find(a)] for a in axes))

    def equal(self, a: sympy.Expr, b: sympy.Expr) -> bool:
        pair = frozenset((a, b))
        return provably_equal(a, b) or pair in self.known or pair in self.facts

    def require_size(self, what: str, size: sympy.Expr, axes: Axes) -> None:
        want = self.span_size(axes)
        if self.equal(size, want):
            return
        if provably_different(size, want):
            raise Illegal(f"{what}: size {size} cannot span domain size {want}")
        self.conditions.append((size, want))

    def placed(self, value: SSAValue) -> Placement | None:
        return self.domain.placement.get(value)

    def place_new(self, value: SSAValue) -> Placement:
        """A value whose dims get fresh domain axes (unit dims get none)."""
        placement = tuple(() if d == 1 else (self.new_axis(d),) for d in self.shape(value))
        self.assign(value, placement)
        return placement

    def assign(self, value: SSAValue, placement: Placement) -> None:
        """Place `value`; for an input (or a layout result from inputs) this
        also fixes the strided view through which the kernel reads it."""
        old = self.placed(value)
        if old is not None:
            self.merge_spans(f"{value.name_hint or 'a value'}", old, placement)
            return
        self.domain.placement[value] = placement
        if not self.is_internal(value) or value in self.chains:
            self.loaded.append(value)

    # -- the rules ---------------------------------------------------------------

    def visit(self, op: Operation) -> None:
        if type(op) is arith.ConstantOp:  # (the exact class: a cheap test, per op)
            return
        if type(op) is ExtractSliceOp or type(op) is ReverseOp:
            self.slice(op)
            return
        if op in OWN_KERNEL_KINDS:
            self.alone(op)
            return
        if op in LAYOUT_KINDS and self.is_input_view(op.operands[0]):
            self.chains[op.results[0]] = (op, op.operands[0])  # still a view of an input
            return
        if op in POINTWISE_KINDS:
            self.elementwise(op)
        elif isinstance(op, t.ReduceOp):
            self.reduce(op)
        elif isinstance(op, t.TransposeOp):
            source = self.operand_placement(op.input)
            self.domain.placement[op.result] = tuple(source[p] for p in op.permutation)
        elif isinstance(op, t.CollapseShapeOp):
            self.collapse(op)
        elif isinstance(op, t.ExpandShapeOp):
            self.expand(op)
        elif isinstance(op, t.MatmulOp):
            self.matmul(op)
        elif isinstance(op, CastOp):  # only the type changes (its guard is the host's)
            self.domain.placement[op.dest] = self.operand_placement(op.source)
        elif isinstance(op, GroupedMatmulOp):
            self.grouped_matmul(op)
        elif isinstance(op, IotaOp):  # computed in the kernel from the tile's position
            self.place_new(op.result)
        elif isinstance(op, TAKES):
            self.take(op)
        else:
            raise Illegal(f"{describe(op)} cannot be part of a kernel")

    def take(self, op: TakeOp | TakeAlongAxisOp) -> None:
        """An indexed load of an input (or a view of one) by an input's indices or an
        iota's (which the runtime checks before the launch): the result gets fresh axes,
        the indices and the source's other dims span the result's."""
        if self.is_internal(op.indices) and not isinstance(op.indices.owner, IotaOp):
            raise Illegal(f"{describe(op)}: its indices must be an input or an iota")
        if self.is_internal(op.source) and op.source not in self.chains:
            raise Illegal(f"{describe(op)}: its source must come from outside the kernel")
        placement = self.place_new(op.result)
        result, a = self.shape(op.result), op.dim
        if isinstance(op, TakeOp):
            rank = len(self.shape(op.indices))
            self.assign(op.indices, placement[a : a + rank])
            self.takes.append((op, (*placement[:a], *placement[a + rank :])))
            return

        def spans(shape: Shape, skip: int | None) -> Placement:
            return tuple(
                () if d == 1 != result[i] else placement[i]
                for i, d in enumerate(shape)
                if i != skip
            )

        self.assign(op.indices, spans(self.shape(op.indices), None))
        self.takes.append((op, spans(self.shape(op.source), a)))

    def slice(self, op: ExtractSliceOp | ReverseOp) -> None:
        """A slice is a view of its source: of an input (or layout ops applied to one),
        even one the kernel also reads whole, which is a load of its own. A slice of a
        value the kernel computes would shift the domain: it is not fused. So is a
        reverse (a view with negative strides)."""
        source = op.operands[0]
        if self.is_internal(source) and source not in self.chains:
            raise Illegal(f"{describe(op)} slices a value computed in the kernel")
        self.chains[op.results[0]] = (op, source)

    def alone(self, op: Operation) -> None:
        """A concat is a kernel of its own: its inputs differ in size along the axis,
        so no one domain holds them (it copies each into its part of the output).
        So are an insert_slice and a pad, whose two writes overlap, a cumsum or
        cumprod or top_k, whose axis no grid may split, and a scatter_add, whose
        updates go where their indices say."""
        if any(other is not op and not isinstance(other, arith.ConstantOp) for other in self.ops):
            raise Illegal(f"{describe(op)} is a kernel of its own")
        self.resumable = False
        placement = self.place_new(op.results[0])
        for other in op.results[1:]:  # top_k's indices: the values' shape
            self.domain.placement[other] = placement

    def is_input_view(self, value: SSAValue) -> bool:
        """Not yet placed, and an input or layout ops applied to an input."""
        unplaced = self.placed(value) is None
        return unplaced and (not self.is_internal(value) or value in self.chains)

    def operand_placement(self, value: SSAValue) -> Placement:
        placement = self.placed(value)
        return placement if placement is not None else self.place_new(value)

    def elementwise(self, op: Operation) -> None:
        result = op.results[0]
        result_shape = self.shape(result)
        rank = len(result_shape)
        tensors = [v for v in op.operands if isinstance(v.type, TensorType)]
        axes: list[Axes | None] = [None] * rank
        for v in tensors:  # what the placed operands already fix
            placement = self.placed(v)
            if placement is None:
                continue
            shape = self.shape(v)
            offset = rank - len(placement)
            for i, span in enumerate(placement):
                # a dim of 1 that broadcasts does not fix the result's axis
                # (a matmul's rows or cols of size 1 have an axis of size 1)
                if span and not (shape[i] == 1 and result_shape[offset + i] != 1):
                    self.merge_axis(op, axes, offset + i, span)
        for j, d in enumerate(result_shape):
            if axes[j] is None and d != 1:
                axes[j] = (self.new_axis(d),)
        for v in tensors:  # now place the operands that come from outside
            if self.placed(v) is None:
                shape = self.shape(v)
                offset = rank - len(shape)
                spans = [() if d == 1 else axes[offset + i] or () for i, d in enumerate(shape)]
                for d, span in zip(shape, spans, strict=True):
                    if d != 1:
                        self.require_size(describe(op), d, span)
                self.assign(v, tuple(spans))
        self.domain.placement[result] = tuple(a or () for a in axes)

    def merge_axis(self, op: Operation, axes: list[Axes | None], j: int, span: Axes) -> None:
        current = axes[j]
        if current is None:
            axes[j] = span
        else:
            self.merge_spans(describe(op), (current,), (span,))

    def merge_spans(self, what: str, a: Placement, b: Placement) -> None:
        """Two placements of the same dims must iterate the same axes: merge
        axes that were created apart, one to one."""
        for x, y in zip(a, b, strict=True):
            if [self.find(i) for i in x] == [self.find(i) for i in y]:
                continue
            if len(x) != len(y):
                raise Illegal(f"{what}: operands iterate over different domain axes")
            for i, j in zip(x, y, strict=True):
                self.unify(what, i, j)

    def reduce(self, op: t.ReduceOp) -> None:
        source = self.operand_placement(op.input)
        axes = op.reduced_axes
        self.reductions.append((op, {a for i in axes for a in source[i]}))
        kept = [() if i in axes else span for i, span in enumerate(source)]
        self.domain.placement[op.result] = (
            tuple(kept) if op.keeps_dims else tuple(s for i, s in enumerate(kept) if i not in axes)
        )

    def collapse(self, op: t.CollapseShapeOp) -> None:
        source = self.operand_placement(op.src)
        self.domain.placement[op.result] = tuple(
            sum((source[i] for i in group), ()) for group in op.groups
        )

    def expand(self, op: t.ExpandShapeOp) -> None:
        source = self.operand_placement(op.src)
        target = self.shape(op.result)
        if not op.groups:  # from rank 0: every result dim is a static 1
            self.domain.placement[op.result] = tuple(() for _ in target)
            return
        placement: list[Axes] = []
        for span, group in zip(source, op.groups, strict=True):
            rest = list(span)
            for i in group:
                if target[i] == 1:
                    placement.append(())
                    continue
                taken: list[int] = []
                while rest and not self.equal(self.span_size(tuple(taken)), target[i]):
                    taken.append(rest.pop(0))
                if not self.equal(self.span_size(tuple(taken)), target[i]):
                    raise Illegal(
                        f"{describe(op)} splits a dim that the kernel iterates as one axis"
                    )
                placement.append(tuple(taken))
        self.domain.placement[op.result] = tuple(placement)

    def matmul(self, op: t.MatmulOp) -> None:
        if self.domain.contraction is not None:
            raise Illegal("a kernel holds at most one matmul")
        for v in (op.lhs, op.rhs):
            if self.is_internal(v) and v not in self.chains:
                raise Illegal(f"{describe(op)}: matmul operands must come from outside the kernel")
        result = self.shape(op.result)
        a, b = self.shape(op.lhs), self.shape(op.rhs)
        transpose_a, transpose_b = op.flags
        batch = [() if d == 1 else (self.new_axis(d),) for d in result[:-2]]
        m, n = self.new_axis(result[-2]), self.new_axis(result[-1])
        k = self.new_axis(a[-2] if transpose_a else a[-1])
        self.domain.contraction = k
        # Each matmul operand gets a load of its own, in matmul coordinates,
        # even when the epilogue reads the same input in output coordinates.
        self.operand_loads.append((op.lhs, self.operand_spans(a, batch, (m, k), transpose_a)))
        self.operand_loads.append((op.rhs, self.operand_spans(b, batch, (k, n), transpose_b)))
        self.domain.placement[op.result] = (*batch, (m,), (n,))

    def grouped_matmul(self, op: GroupedMatmulOp) -> None:
        """Like a matmul's (rows m, cols n, K the contraction), but the weights' groups
        (and the bias's) span no axis: a tile holds every group's matrix chunk and the
        sizes whole, so they are read from inputs as they are (not through layout ops)."""
        if self.domain.contraction is not None:
            raise Illegal("a kernel holds at most one matmul")
        if self.is_internal(op.x) and op.x not in self.chains:
            raise Illegal(f"{describe(op)}: matmul operands must come from outside the kernel")
        for v in (op.sizes, op.w, op.bias):
            if v is not None and self.is_internal(v):
                raise Illegal(f"{describe(op)} reads its sizes, weights and bias as inputs")
        m, n = (self.new_axis(d) for d in self.shape(op.result))
        k = self.new_axis(self.shape(op.x)[1])
        self.domain.contraction = k
        self.operand_loads.append((op.x, ((m,), (k,))))
        self.operand_loads.append((op.w, ((), (k,), (n,))))
        if op.bias is not None:
            self.operand_loads.append((op.bias, ((), (n,))))
        self.domain.placement[op.result] = ((m,), (n,))

    @staticmethod
    def operand_spans(
        shape: Shape, batch: list[Axes], rows_cols: tuple[int, int], transposed: bool
    ) -> Placement:
        offset = len(batch) - (len(shape) - 2)
        own_batch = [() if d == 1 else batch[offset + i] for i, d in enumerate(shape[:-2])]
        r, c = rows_cols
        return (*own_batch, (c,), (r,)) if transposed else (*own_batch, (r,), (c,))

    # -- views of inputs and outputs ----------------------------------------------

    def add_load(self, value: SSAValue, placement: Placement, matmul_operand: bool = False) -> None:
        source, offset, dims = self.view_through_chain(value)
        strides = self.axis_strides(placement, dims)
        view = StridedView(source, strides, value, placement, matmul_operand, offset)
        self.domain.loads.append(view)

    def view_through_chain(self, value: SSAValue) -> tuple[SSAValue, sympy.Expr, list[sympy.Expr]]:
        """The input buffer behind `value`, and where `value` starts in it and the
        strides of its dims."""
        if value not in self.chains:
            return value, sympy.Integer(0), contiguous_strides(self.shape(value))
        op, operand = self.chains[value]
        source, offset, strides = self.view_through_chain(operand)
        if isinstance(op, ExtractSliceOp):
            return source, *slice_view(op, offset, strides)
        if isinstance(op, ReverseOp):
            return source, *reverse_view(op, self.shape(operand), offset, strides)
        return source, offset, self.apply_layout(op, self.shape(operand), strides)

    def apply_layout(
        self, op: Operation, shape: Shape, strides: list[sympy.Expr]
    ) -> list[sympy.Expr]:
        if isinstance(op, t.TransposeOp):
            return [strides[p] for p in op.permutation]
        if isinstance(op, CastOp):
            return strides
        if isinstance(op, t.ExpandShapeOp):
            target = self.shape(op.result)
            if not op.groups:  # from rank 0: every dim is a static 1, one element
                return [sympy.Integer(0)] * len(target)
            out: list[sympy.Expr] = []
            for group, stride in zip(op.groups, strides, strict=True):
                out.extend(
                    stride * sympy.Mul(*(target[j] for j in group[k + 1 :]))
                    for k in range(len(group))
                )
            return out
        if isinstance(op, t.CollapseShapeOp):
            return [
                self.merged_stride(op, [shape[i] for i in g], [strides[i] for i in g])
                for g in op.groups
            ]
        assert isinstance(op, t.BroadcastToOp)
        target = self.shape(op.result)
        offset = len(target) - len(shape)
        return [
            sympy.Integer(0)
            if i < offset or shape[i - offset] == 1 != target[i]
            else strides[i - offset]
            for i in range(len(target))
        ]

    def merged_stride(
        self, op: Operation, sizes: list[sympy.Expr], strides: list[sympy.Expr]
    ) -> sympy.Expr:
        """Collapsing dims is a view only where each stride is the next one's
        stride times its size (unit dims do not matter)."""
        kept = [(d, s) for d, s in zip(sizes, strides, strict=True) if d != 1]
        if not kept:
            return sympy.Integer(1)
        for (_, outer), (size, inner) in itertools.pairwise(kept):
            if not self.equal(outer, inner * size):
                raise Illegal(f"{describe(op)} of a non-contiguous view is not a strided view")
        return kept[-1][1]

    def axis_strides(
        self, placement: Placement, dim_strides: Sequence[sympy.Expr]
    ) -> tuple[sympy.Expr, ...]:
        strides: list[sympy.Expr] = [sympy.Integer(0)] * len(self.domain.sizes)
        for span, stride in zip(placement, dim_strides, strict=True):
            running = stride
            inner = None  # (the product past the outermost axis is not needed)
            for axis in reversed(span):
                if inner is not None:
                    running = running * self.domain.sizes[inner]
                strides[axis] = running
                inner = axis
        return tuple(strides)

    def add_take(self, op: TakeOp | TakeAlongAxisOp, placement: Placement) -> None:
        source, offset, dims = self.view_through_chain(op.source)
        a = op.dim
        strides = self.axis_strides(placement, [*dims[:a], *dims[a + 1 :]])
        result = self.domain.placement[op.result]
        view = StridedView(source, strides, op.result, result, offset=offset)
        self.domain.takes[op.result] = TakeView(view, dims[a], self.shape(op.source)[a])

    def add_store(self, value: SSAValue) -> None:
        """An output: written through the layout ops that produced it from the
        last computed value, which must span every non-reduced axis."""
        placement = self.check_spans_parallel(value)
        strides = self.axis_strides(placement, contiguous_strides(self.shape(value)))
        self.domain.stores.append(StridedView(value, strides, value, placement))

    def check_spans_parallel(self, value: SSAValue) -> Placement:
        """The placement of the output `value`, which must span every parallel axis."""
        placement = self.domain.placement[value]
        spanned = {a for span in placement for a in span}
        missing = [a for a in self.domain.parallel if a not in spanned]
        if missing:
            raise Illegal(f"output {value.name_hint or ''} does not span domain axes {missing}")
        return placement
