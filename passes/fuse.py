"""The `fuse` pass: group ops into `tensor.fusion` kernels, on symbolic shapes.

Each compute op starts as its own group. Walking the block in order, an op
joins the group of a producer when the union is still one legal kernel (see
`dvm.passes.domain`): its iteration space merges affinely with the group's,
by sympy proof on the symbolic shapes. Vector producers are tried before
matmul ones, so a reduction chain keeps its elementwise neighbours and a
matmul an epilogue (elementwise, or reducing its few columns). Then
sibling groups that read a common input merge too (one read instead of
two). Finally every group becomes a `tensor.fusion` op of kind

- `vector`: elementwise ops, reductions and layout ops (LayerNorm, softmax);
- `cube`: one matmul (with the layout ops that feed it as views);
- `mix`: a matmul with an epilogue (addmm + relu; a projection and its LayerNorm).

Sibling kernels whose domains may be equal but cannot be proved so (sizes
from different symbols) become a `tensor.choice`: one fused kernel when the
real shapes agree, the separate kernels otherwise (DVM's streaming fusion). So
do a matmul kernel and the vector kernel reducing its columns, of a dynamic
number: fused while there are few enough for a tile to hold whole rows.

Why: each kernel is one launch and one pass over memory; fusing keeps the
intermediates in local memory.

How: deciding the groups is a global analysis of each block (`Fuser`: which
merges are legal depends on every path between the groups). It ends with a
plan per group and the block *scheduled* so that each group's ops are
consecutive; then each group is replaced by its kernel, and the constants the
kernels copied in are erased (`fuse_rewrite.replace_groups`).
"""

from __future__ import annotations

import bisect
import heapq
import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import (
    IndexType,
    ModuleOp,
    TensorType,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass

from dvm.dialects import tensor as t
from dvm.dialects.expr import ConditionAttr
from dvm.dialects.walk import block_ops, ops_within
from dvm.passes.blocks import schedule, top_level
from dvm.passes.concat_fusion import PieceCache, fused_pieces
from dvm.passes.concat_sinking import flatten_concats, sink_concats
from dvm.passes.dag import MergeableDag
from dvm.passes.domain import (
    LAYOUT_KINDS,
    MATMUL_KINDS,
    MATMULS,
    VECTOR,
    Domain,
    DomainAnalysis,
    Facts,
    Illegal,
    OpSet,
    Visited,
    known_facts,
)
from dvm.passes.errors import ProgramError
from dvm.passes.fuse_rewrite import ChoicePlan, KernelPlan, Plan, replace_groups
from dvm.passes.kernel_inputs import is_splat_constant, loads
from dvm.passes.prefuse_folds import fold_before_fusion
from dvm.passes.reshape_sinking import sink_reshapes
from dvm.passes.symbolic import Shape, guard_facts
from dvm.passes.symbolic_shapes import ensure_shapes
from dvm.vm.isa import MAX_RANK

COMPUTE = (*VECTOR, *MATMULS)
COMPUTE_KINDS = OpSet(*COMPUTE)

Equality = tuple[sympy.Expr, sympy.Expr]
Bound = tuple[sympy.Expr, int]
"""A size and the most it may be."""


@dataclass
class Alternative:
    """A guarded choice's two groups, fused when the sizes meet the equalities (two
    independent groups laid on one domain) or the bounds (a matmul group and the
    reductions over its columns), apart otherwise."""

    first: Group
    second: Group
    equalities: list[Equality]
    bounds: list[Bound]

    @property
    def assumed(self) -> list[ConditionAttr]:
        """The equalities, as the fused kernel's ASSUME and the choice read them."""
        return [ConditionAttr(a, "==", b) for a, b in self.equalities]

    @property
    def bounded(self) -> list[ConditionAttr]:
        """The bounds, as the fused kernel's BOUNDED and the choice read them."""
        return [ConditionAttr(size, "<=", most) for size, most in self.bounds]


@dataclass(eq=False)
class Group:
    """Ops that become one kernel, in block order (never changed: merging two makes a new one)."""

    ops: list[Operation]
    alternative: Alternative | None = None
    """For a guarded choice: the two groups this one fuses, and when it may."""
    computing: int = -1
    """How many compute ops it holds (-1: counted from `ops`)."""
    has_matmul: bool = False
    """Whether it holds a matmul (counted from `ops` with `computing`)."""
    domain: Domain | None = field(default=None, init=False)
    """Its domain, once an analysis found it legal (its kernel's, if it is kept)."""
    visited: Visited | None = field(default=None, init=False, repr=False)
    """What that analysis found visiting its ops, for the analysis of a group that
    begins with them to take up."""

    def __post_init__(self) -> None:
        if self.computing < 0:
            self.computing = sum(op in COMPUTE_KINDS for op in self.ops)
            self.has_matmul = any(op in MATMUL_KINDS for op in self.ops)

    @staticmethod
    def union(a: Group, b: Group, ops: list[Operation]) -> Group:
        """The group of the ops of `a` and `b` (`ops`, in block order), its counts theirs
        summed: a chain grows a group an op at a time, and counting again would visit
        every op of the group at each."""
        return Group(
            ops, computing=a.computing + b.computing, has_matmul=a.has_matmul or b.has_matmul
        )

    @property
    def kind(self) -> str:
        if not self.has_matmul:
            return "vector"
        epilogue = [op for op in self.ops if op in COMPUTE_KINDS and op not in LAYOUT_KINDS]
        return "cube" if len(epilogue) == 1 else "mix"


class Fuser:
    """Decides the kernels of one block's compute ops."""

    def __init__(
        self, block: Block, kinds: Sequence[str], max_ops: int, facts: Facts = frozenset()
    ):
        self.block = block
        self.facts = facts
        """Size equalities the function's guards make true wherever it runs."""
        self.kinds = set(kinds)
        self.max_ops = max_ops
        self.order = {op: i for i, op in enumerate(block_ops(block))}
        self.group: dict[Operation, Group] = {}
        self.users = {
            r: [top_level(use.operation, block) for use in r.uses]
            for op in self.order
            for r in op.results
        }
        """Each result's users, as the ops of the block they are in (None: outside it),
        which every candidate group asks about (planning moves no use)."""
        self.graph = MergeableDag(len(self.order), self.edges())
        """The block's ops, each group merged into one node: what depends on what."""
        self.shapes: dict[SSAValue, Shape] = {}
        """The values' shapes, as the analyses of candidate groups found them (the
        block's shapes do not change while its groups are planned)."""
        self.pieces: PieceCache = {}
        """The pieces of fused concats and pads that candidate groups found."""

    def edges(self) -> Iterable[tuple[int, int]]:
        """(producer, user) for each value one op of the block uses from another (a use
        inside an op's regions is the op's)."""
        for op, i in self.order.items():
            for r in op.results:
                for user in self.users[r]:
                    if user is not None:
                        yield i, self.order[user]

    def node(self, group: Group) -> int:
        return self.graph.find(self.order[group.ops[0]])

    # -- deciding the groups ----------------------------------------------------

    def plan(self) -> list[Plan]:
        """Decide the groups, schedule the block so that each group's ops are
        consecutive, and say what replaces each group, in block order."""
        for op in block_ops(self.block):
            if op in COMPUTE_KINDS:
                self.group[op] = Group([op])
                for producer in self.producer_groups(op):
                    self.try_merge(self.group[op], producer)
        self.merge_siblings()
        self.propose_choices()
        schedule(self.block, [g.ops for g in self.distinct_groups()])
        return [
            self.plan_choice(g) if g.alternative else self.plan_kernel(g)
            for g in self.distinct_groups()
        ]

    def producer_groups(self, op: Operation) -> list[Group]:
        groups: list[Group] = []
        for v in op.operands:
            owner = v.owner
            if isinstance(owner, Operation) and owner in self.group:
                g = self.group[owner]
                if g is not self.group[op] and g not in groups:
                    groups.append(g)
        return sorted(groups, key=lambda g: g.has_matmul)  # vector groups first

    def try_merge(self, a: Group, b: Group) -> bool:
        if not self.may_fit(a, b):
            return False
        ops = sorted({*a.ops, *b.ops}, key=self.order.__getitem__)
        merged = Group.union(a, b, ops)
        if not self.allowed(merged) or self.creates_cycle(a, b):
            return False
        try:
            domain = self.analyze(merged, resume=begun(ops, a, b))
        except Illegal:
            return False
        if tile_rank(domain) > MAX_RANK:  # the VM could not hold its tiles: keep apart
            return False
        merged.domain = domain
        self.replace(merged, a, b)
        return True

    def replace(self, merged: Group, a: Group, b: Group) -> None:
        """Make `merged` the group of the ops of `a` and `b`."""
        self.graph.merge(self.node(a), self.node(b))
        for op in merged.ops:
            self.group[op] = merged

    def may_fit(self, a: Group, b: Group) -> bool:
        """Whether `a` and `b` together hold few enough compute ops for one kernel (the
        cheap part of `allowed`, asked first)."""
        return a.computing + b.computing <= self.max_ops

    def allowed(self, group: Group) -> bool:
        return group.computing <= self.max_ops and group.kind in self.kinds

    def analyze(self, group: Group, resume: Visited | None = None) -> Domain:
        """The domain of `group` (an `Illegal` when it cannot be one kernel); `resume`:
        what the analysis of a group its ops begin with found visiting them."""
        alternative = group.alternative
        outputs = self.outputs(group)
        fused = fused_pieces(group.ops, outputs, self.facts, self.pieces)
        if fused is not None:
            if alternative is not None:
                raise Illegal("a fused concat or pad is not part of a guarded choice")
            return fused[0]
        if alternative is None:
            analysis = DomainAnalysis(
                group.ops, outputs, known=self.facts, shapes=self.shapes, resume=resume, views=False
            )
            domain = analysis.run()
            group.visited = analysis.visited
            return domain
        align = bool(alternative.equalities)  # (bounds: a producer and its consumer)
        return self.domain(group.ops, outputs, alternative.equalities, align, alternative.bounds)

    def domain(
        self, ops: list[Operation], outputs: list[SSAValue], *args: Any, **kw: Any
    ) -> Domain:
        """`DomainAnalysis` of `ops` with the block's facts and shapes (an `Illegal`
        when they cannot be one kernel), without its views: a plan reads a domain's
        sizes and reduced axes, and lowering analyzes each kernel's ops again."""
        analysis = DomainAnalysis(
            ops, outputs, *args, known=self.facts, shapes=self.shapes, views=False, **kw
        )
        return analysis.run()

    def outputs(self, group: Group) -> list[SSAValue]:
        members = set(group.ops)
        return [
            r
            for op in group.ops
            for r in op.results
            if any(user not in members for user in self.users[r])
        ]

    def creates_cycle(self, a: Group, b: Group) -> bool:
        """Merging is illegal when a path leaves one group and re-enters the
        other through an op outside both: the fused kernel would depend on
        itself. (Another group on the way runs as one kernel: a path that enters
        it leaves through any of its ops, so the graph has a node per group.)"""
        return self.graph.would_cycle(self.node(a), self.node(b))

    def merge_siblings(self) -> None:
        """Vector groups that read a common input merge when legal: the first pair
        that can, in block order (of their first ops), then again until none can."""
        if "vector" in self.kinds:
            SiblingMerger(self).run()

    def propose_choices(self) -> None:
        """Independent vector groups with plausibly equal domains become one
        guarded group: fused when the real sizes agree, apart otherwise."""
        groups = [g for g in self.distinct_groups() if g.kind == "vector"]
        # Pairs linked through a third node now stay linked as groups merge: found for
        # all pairs at once, they are never asked about (most pairs, in a deep program)
        linked = self.graph.indirect([self.node(g) for g in groups])
        every = (1 << len(groups)) - 1
        taken = 0  # (sets of indices into `groups`)
        for i, a in enumerate(groups):
            if taken >> i & 1:
                continue
            later = every >> (i + 1) << (i + 1)
            for j in bit_indices(later & ~linked[i] & ~taken):
                b = groups[j]
                # the cheap tests first (all are free of side effects)
                if not self.may_fit(a, b) or self.creates_cycle(a, b):
                    continue
                conditions = self.fusible_if(a, b)
                if conditions:
                    self.guard(Alternative(a, b, conditions, []))
                    taken |= 1 << i | 1 << j
                    break
        self.propose_bounded()

    def guard(self, alternative: Alternative) -> None:
        """Make the two groups of `alternative` one guarded group."""
        ops = sorted({*alternative.first.ops, *alternative.second.ops}, key=self.order.__getitem__)
        self.replace(Group(ops, alternative), alternative.first, alternative.second)

    def propose_bounded(self) -> None:
        """A matmul group and a vector group reducing its columns, of a dynamic number,
        become one guarded group: fused when there are few enough columns for a tile
        to hold whole rows, apart otherwise (attention's scores and their softmax)."""
        for b in self.distinct_groups():
            if b.kind != "vector" or b.alternative is not None:
                continue
            for a in self.producers(b):
                bounds = self.bounded_if(a, b)
                if bounds:
                    self.guard(Alternative(a, b, [], bounds))
                    break

    def producers(self, group: Group) -> list[Group]:
        """The matmul groups without a guard whose results `group` reads."""
        found: list[Group] = []
        for op in group.ops:
            for g in self.producer_groups(op):
                if g.has_matmul and g.alternative is None and g not in found:
                    found.append(g)
        return found

    def bounded_if(self, a: Group, b: Group) -> list[Bound]:
        """The bounds on sizes under which `a` and its consumer `b` are one legal
        kernel (empty: never, or always, which the walk would have found)."""
        ops = sorted({*a.ops, *b.ops}, key=self.order.__getitem__)
        merged = Group(ops)
        if not self.allowed(merged) or self.creates_cycle(a, b):
            return []
        outputs = self.outputs(merged)
        try:
            self.domain(ops, outputs)
        except Illegal as e:
            if not e.bounds or e.conditions:
                return []
            try:
                domain = self.domain(ops, outputs, bounds=e.bounds)
            except Illegal:
                return []
            return e.bounds if tile_rank(domain) <= MAX_RANK else []
        return []

    def fusible_if(self, a: Group, b: Group) -> list[Equality]:
        """The size equalities that would make `a` and `b` one kernel (empty:
        not fusible, or not worth a guard)."""
        ops = sorted({*a.ops, *b.ops}, key=self.order.__getitem__)
        if not self.allowed(Group(ops)):
            return []
        outputs = self.outputs(Group(ops))
        try:
            self.domain(ops, outputs, align=True)
            return []
        except Illegal as e:
            conditions = e.conditions
        try:  # (the sizes equal, the ops may still not be one kernel: a choice then would fail)
            if conditions:
                self.domain(ops, outputs, assume=conditions, align=True)
        except Illegal:
            return []
        return conditions

    def distinct_groups(self) -> list[Group]:
        seen: dict[int, Group] = {}
        for op in block_ops(self.block):
            g = self.group.get(op)
            if g is not None:
                seen.setdefault(id(g), g)
        return list(seen.values())

    def inputs(self, group: Group) -> list[SSAValue]:
        members = set(group.ops)
        found: dict[SSAValue, None] = {}  # (ordered, and quick to ask)
        for op in group.ops:
            for v in op.operands:
                owner = v.owner
                # splat constants are copied into the kernel, except as operands it loads
                inside = isinstance(owner, Operation) and (
                    owner in members or (is_splat_constant(owner) and not loads(op, members))
                )
                if not inside and isinstance(v.type, TensorType | IndexType):
                    found[v] = None
        return list(found)

    # -- what replaces each group ------------------------------------------------

    def plan_kernel(self, group: Group) -> KernelPlan:
        """The kernel of `group`, refused here if the VM could not hold it."""
        domain = group.domain if group.domain is not None else self.analyze(group)
        inputs, outputs = self.inputs(group), self.outputs(group)
        check_rank(group.ops, domain, [*inputs, *outputs])
        return KernelPlan(group.ops, group.kind, domain, inputs, outputs)

    def plan_choice(self, group: Group) -> ChoicePlan:
        alternative = group.alternative
        assert alternative is not None
        fused = self.plan_kernel(group)
        first, second = (self.plan_kernel(g) for g in (alternative.first, alternative.second))
        return ChoicePlan(fused, first, second, alternative.assumed, alternative.bounded)


def begun(ops: list[Operation], a: Group, b: Group) -> Visited | None:
    """What the analysis of `a` or `b` found visiting its ops, if they are the first of
    `ops` (the two groups' ops in block order): the larger such."""
    found: Visited | None = None
    for group in (a, b):
        visited = group.visited
        n = len(group.ops)
        if visited is not None and (found is None or n > len(found.ops)) and ops[:n] == group.ops:
            found = visited
    return found


class SiblingMerger:
    """`Fuser.merge_siblings` in time linear in the pairs it tries.

    Of the vector groups that share an input, the first pair in block order (of their
    first ops) that can merge merges, then the first again, until none can. A pair
    that cannot merge never can later: what decides it is the two groups, and merging
    others only adds paths between them. So no pair is tried twice: a group's *row*
    (the pairs with the groups after it) is scanned when the group is new, and again
    only for a new group after it that shares an input. A heap keeps the rows to scan
    in block order."""

    def __init__(self, fuser: Fuser):
        self.fuser = fuser
        self.readers: dict[SSAValue, list[Group]] = {}
        """For each input, the vector groups that read it and may still merge, in order."""
        self.inputs: dict[Group, list[SSAValue]] = {}
        self.pending: dict[Group, set[Group] | None] = {}
        """The rows to scan, each with its partners not yet tried (None: all)."""
        self.rows: list[tuple[int, int, Group]] = []
        """(position, serial number, group) of each row to scan: a heap."""
        self.serial = itertools.count()

    def position(self, group: Group) -> int:
        return self.fuser.order[group.ops[0]]

    def alive(self, group: Group) -> bool:
        return self.fuser.group[group.ops[0]] is group

    def run(self) -> None:
        for group in self.fuser.distinct_groups():
            if not group.has_matmul:
                self.add(group)
        while self.rows:
            *_, a = heapq.heappop(self.rows)
            if a not in self.pending or not self.alive(a):
                continue
            partners = self.pending.pop(a)
            for b in self.after(a) if partners is None else sorted(partners, key=self.position):
                if self.alive(b) and self.fuser.try_merge(a, b):
                    self.merged(a, b)
                    break

    def add(self, group: Group) -> None:
        """A new group: its row is to be scanned, and the rows before it that share an
        input with it, for it."""
        if group.computing >= self.fuser.max_ops:  # full: it merges with nothing
            return
        self.inputs[group] = self.fuser.inputs(group)
        self.schedule(group, None)
        here = self.position(group)
        for v in self.inputs[group]:
            readers = self.readers.setdefault(v, [])
            at = bisect.bisect_left(readers, here, key=self.position)
            for earlier in readers[:at]:
                partners = self.pending.get(earlier, set())
                if partners is not None:
                    partners.add(group)
                    self.schedule(earlier, partners)
            readers.insert(at, group)

    def schedule(self, group: Group, partners: set[Group] | None) -> None:
        if group not in self.pending:
            heapq.heappush(self.rows, (self.position(group), next(self.serial), group))
        self.pending[group] = partners

    def merged(self, a: Group, b: Group) -> None:
        for gone in (a, b):
            for v in self.inputs.pop(gone, []):
                readers = self.readers[v]
                readers.pop(bisect.bisect_left(readers, self.position(gone), key=self.position))
            self.pending.pop(gone, None)
        self.add(self.fuser.group[a.ops[0]])

    def after(self, group: Group) -> Iterator[Group]:
        """The groups after `group` that share an input with it, in order."""
        here = self.position(group)

        def following(readers: list[Group]) -> Iterator[Group]:
            for i in range(bisect.bisect_right(readers, here, key=self.position), len(readers)):
                yield readers[i]

        last = None
        for g in heapq.merge(
            *(following(self.readers[v]) for v in self.inputs[group]), key=self.position
        ):
            if g is not last:
                yield g
            last = g


def bit_indices(mask: int) -> Iterator[int]:
    """The indices of the bits set in `mask` (not negative), lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def check_rank(ops: Sequence[Operation], domain: Domain, boundary: Sequence[SSAValue]) -> None:
    """Refuse a kernel the VM cannot hold: its arguments (the kernel's inputs and
    outputs) and its tiles (a dim per domain axis but a matmul's K, which loops
    walk) have at most MAX_RANK dims. Here the user's ops, with their places in
    the source, still stand for the kernel: the first with a tensor of the
    offending rank is named."""
    worst = max([tile_rank(domain), *map(rank, boundary)])
    if worst <= MAX_RANK:
        return
    ranks = [(max(map(rank, (*op.operands, *op.results)), default=0), op) for op in ops]
    found, op = next(((r, op) for r, op in ranks if r >= worst), (worst, ops[0]))
    raise ProgramError(op, f"rank {found} exceeds the VM's maximum rank {MAX_RANK}")


def tile_rank(domain: Domain) -> int:
    """The rank of a kernel's tiles: a dim per domain axis but a matmul's K."""
    return len(domain.sizes) - (domain.contraction is not None)


def rank(value: SSAValue) -> int:
    return value.type.get_num_dims() if isinstance(value.type, TensorType) else 0


def blocks_inside_out(func: FuncOp) -> list[Block]:
    """Every block of the function, nested ones first (so that when a block
    is fused, the constants its nested blocks' kernels copied are dead)."""
    blocks: list[Block] = []

    def visit(op: Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block_ops(block):
                    visit(inner)
                blocks.append(block)

    visit(func)
    return blocks


@dataclass(frozen=True)
class FusePass(ModulePass):
    """Group the ops of every function into `tensor.fusion` kernels
    (vector / cube / mix) whose legality is proved on symbolic shapes."""

    name = "fuse"

    kinds: tuple[str, ...] = ("vector", "cube", "mix")
    """Kernel kinds that may hold more than one op (a lone op is always a kernel)."""
    max_ops: int = 64
    """The most compute ops in one kernel."""

    def __post_init__(self) -> None:
        unknown = set(self.kinds) - set(t.KERNEL_KINDS)
        if unknown:
            raise ValueError(f"fuse: unknown kernel kinds {sorted(unknown)}; use {t.KERNEL_KINDS}")
        if self.max_ops < 1:
            raise ValueError(f"fuse: max-ops must be at least 1, got {self.max_ops}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in [f for f in ops_within(op) if type(f) is FuncOp]:
            if func.body.blocks:
                self.fuse(func)

    def fuse(self, func: FuncOp) -> None:
        """Plan every block's kernels (the analysis), then build them (the rewrite)."""
        ensure_shapes(func)
        fold_before_fusion(func)
        sink_reshapes(func)
        flatten_concats(func)
        sink_concats(func)
        facts = known_facts(guard_facts(func))
        kinds = (*self.kinds, "cube")  # a lone matmul is a cube kernel
        blocks = [  # (a choice written in the program may hold plain ops: they fuse too)
            block
            for block in blocks_inside_out(func)
            if not isinstance(block.parent_op(), t.FusionOp | t.StackOp)
        ]
        plans = [Fuser(block, kinds, self.max_ops, facts).plan() for block in blocks]
        replace_groups(plans, blocks)
