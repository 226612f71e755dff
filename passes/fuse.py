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
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import sympy
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
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
from dvm.passes.blocks import rebuild_block, top_level
from dvm.passes.domain import LAYOUT, VECTOR, Domain, DomainAnalysis, Illegal
from dvm.passes.errors import ProgramError
from dvm.passes.symbolic import SHAPE, SHAPES, guard_facts, shape_attr, shape_of
from dvm.passes.symbolic_shapes import ensure_shapes
from dvm.vm.isa import MAX_RANK

COMPUTE = (*VECTOR, t.MatmulOp)
ASSUME = "dvm.assume"
"""On a kernel inside a guarded choice: the size equalities it may assume."""
BOUNDED = "dvm.bounded"
"""On a kernel inside a guarded choice: the sizes it may assume bounded (`n <= 512`)."""

Equality = tuple[sympy.Expr, sympy.Expr]
Bound = tuple[sympy.Expr, int]
"""A size and the most it may be."""


def is_splat_constant(op: Operation) -> bool:
    """A constant that a kernel can hold as an immediate (a scalar or a splat)."""
    if not isinstance(op, arith.ConstantOp) or not isinstance(op.result.type, TensorType):
        return False
    value = op.value
    # (xDSL's is_splat fails on a constant with no elements, which is no splat)
    return isinstance(value, DenseIntOrFPElementsAttr) and len(value) > 0 and value.is_splat()


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
    def assumed(self) -> list[str]:
        """The equalities, as the fused kernel's ASSUME and the choice read them."""
        return [f"{a} == {b}" for a, b in self.equalities]

    @property
    def bounded(self) -> list[str]:
        """The bounds, as the fused kernel's BOUNDED and the choice read them."""
        return [f"{size} <= {most}" for size, most in self.bounds]


@dataclass
class Group:
    ops: list[Operation]
    alternative: Alternative | None = None
    """For a guarded choice: the two groups this one fuses, and when it may."""

    @property
    def has_matmul(self) -> bool:
        return any(isinstance(op, t.MatmulOp) for op in self.ops)

    @property
    def kind(self) -> str:
        if not self.has_matmul:
            return "vector"
        epilogue = [op for op in self.ops if isinstance(op, COMPUTE) and not isinstance(op, LAYOUT)]
        return "cube" if len(epilogue) == 1 else "mix"


class Fuser:
    """Fuses the compute ops of one block."""

    def __init__(
        self, block: Block, kinds: Sequence[str], max_ops: int, facts: Sequence[Equality] = ()
    ):
        self.block = block
        self.facts = list(facts)
        """Size equalities the function's guards make true wherever it runs."""
        self.kinds = set(kinds)
        self.max_ops = max_ops
        self.order = {op: i for i, op in enumerate(block.ops)}
        self.group: dict[Operation, Group] = {}

    # -- deciding the groups ----------------------------------------------------

    def run(self) -> None:
        for op in list(self.block.ops):
            if isinstance(op, COMPUTE):
                self.group[op] = Group([op])
                for producer in self.producer_groups(op):
                    self.try_merge(self.group[op], producer)
        self.merge_siblings()
        self.propose_choices()
        self.rebuild()

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
        ops = sorted({*a.ops, *b.ops}, key=self.order.__getitem__)
        merged = Group(ops)
        if not self.allowed(merged) or self.creates_cycle(a, b):
            return False
        try:
            domain = self.analyze(merged)
        except Illegal:
            return False
        if tile_rank(domain) > MAX_RANK:  # the VM could not hold its tiles: keep apart
            return False
        for op in ops:
            self.group[op] = merged
        return True

    def allowed(self, group: Group) -> bool:
        computing = sum(isinstance(op, COMPUTE) for op in group.ops)
        return computing <= self.max_ops and group.kind in self.kinds

    def analyze(self, group: Group) -> Domain:
        alternative = group.alternative
        if alternative is None:
            return DomainAnalysis(group.ops, self.outputs(group), self.facts).run()
        assume = [*self.facts, *alternative.equalities]
        align = bool(alternative.equalities)  # (bounds: a producer and its consumer)
        return DomainAnalysis(
            group.ops, self.outputs(group), assume, align, alternative.bounds
        ).run()

    def outputs(self, group: Group) -> list[SSAValue]:
        members = set(group.ops)
        found: list[SSAValue] = []
        for op in group.ops:
            for r in op.results:
                if any(top_level(use.operation, self.block) not in members for use in r.uses):
                    found.append(r)
        return found

    def creates_cycle(self, a: Group, b: Group) -> bool:
        """Merging is illegal when a path leaves one group and re-enters the
        other through an op outside both: the fused kernel would depend on
        itself."""
        inside = {*a.ops, *b.ops}
        return self.reaches_through_outside(
            a.ops, set(b.ops), inside
        ) or self.reaches_through_outside(b.ops, set(a.ops), inside)

    def reaches_through_outside(
        self, start: Iterable[Operation], targets: set[Operation], inside: set[Operation]
    ) -> bool:
        frontier = [u for op in start for u in self.users(op) if u not in inside]
        seen = set(frontier)
        while frontier:
            op = frontier.pop()
            # another group runs as one kernel: a path that enters it leaves
            # through any of its ops (op-level paths miss two groups that each
            # need the other, e.g. through tensor.dim ops)
            group = self.group.get(op)
            for member in group.ops if group is not None else [op]:
                for user in self.users(member):
                    if user in targets:
                        return True
                    if user not in seen and user not in inside:
                        seen.add(user)
                        frontier.append(user)
        return False

    def users(self, op: Operation) -> set[Operation]:
        found: set[Operation] = set()
        for r in op.results:
            for use in r.uses:
                top = top_level(use.operation, self.block)
                if top is not None:
                    found.add(top)
        return found

    def merge_siblings(self) -> None:
        """Vector groups that read a common input merge when legal."""
        changed = True
        while changed:
            changed = False
            groups = self.distinct_groups()
            for i, a in enumerate(groups):
                for b in groups[i + 1 :]:
                    if a.has_matmul or b.has_matmul or not self.share_input(a, b):
                        continue
                    if self.try_merge(a, b):
                        changed = True
                        break
                if changed:
                    break

    def propose_choices(self) -> None:
        """Independent vector groups with plausibly equal domains become one
        guarded group: fused when the real sizes agree, apart otherwise."""
        groups = [g for g in self.distinct_groups() if g.kind == "vector"]
        taken: set[int] = set()
        for i, a in enumerate(groups):
            for b in groups[i + 1 :]:
                if id(a) in taken or id(b) in taken or self.creates_cycle(a, b):
                    continue
                conditions = self.fusible_if(a, b)
                if conditions:
                    self.guard(Alternative(a, b, conditions, []))
                    taken |= {id(a), id(b)}
        self.propose_bounded()

    def guard(self, alternative: Alternative) -> None:
        """Make the two groups of `alternative` one guarded group."""
        ops = sorted({*alternative.first.ops, *alternative.second.ops}, key=self.order.__getitem__)
        guarded = Group(ops, alternative)
        for op in ops:
            self.group[op] = guarded

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
            DomainAnalysis(ops, outputs, self.facts).run()
        except Illegal as e:
            if not e.bounds or e.conditions:
                return []
            try:
                domain = DomainAnalysis(ops, outputs, self.facts, bounds=e.bounds).run()
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
        try:
            DomainAnalysis(ops, self.outputs(Group(ops)), self.facts, align=True).run()
        except Illegal as e:
            return e.conditions
        return []

    def distinct_groups(self) -> list[Group]:
        seen: dict[int, Group] = {}
        for op in self.block.ops:
            g = self.group.get(op)
            if g is not None:
                seen.setdefault(id(g), g)
        return list(seen.values())

    def inputs(self, group: Group) -> list[SSAValue]:
        members = set(group.ops)
        found: list[SSAValue] = []
        for op in group.ops:
            for v in op.operands:
                owner = v.owner
                # splat constants are copied into the kernel, except as matmul
                # operands, which a cube kernel loads from memory
                inside = isinstance(owner, Operation) and (
                    owner in members
                    or (is_splat_constant(owner) and not isinstance(op, t.MatmulOp))
                )
                if not inside and isinstance(v.type, TensorType | IndexType) and v not in found:
                    found.append(v)
        return found

    def share_input(self, a: Group, b: Group) -> bool:
        return bool(set(self.inputs(a)) & set(self.inputs(b)))

    # -- building the IR ---------------------------------------------------------

    def rebuild(self) -> None:
        """Replace each group by a fusion op (or a guarded choice), keeping
        the block in an order where every value is defined before its uses."""
        groups = {id(g.ops): g for g in self.distinct_groups()}
        rebuild_block(
            self.block, [g.ops for g in groups.values()], lambda ops: self.emit(groups[id(ops)])
        )

    def emit(self, group: Group) -> None:
        outputs = self.outputs(group)
        if group.alternative is None:
            replacement: Operation = self.build_kernel(group, outputs)
        else:
            replacement = self.build_choice(group, outputs)
        annotate_results(replacement, outputs)
        self.block.add_op(replacement)
        for old, new in zip(outputs, replacement.results, strict=True):
            old.replace_all_uses_with(new)
            new.name_hint = old.name_hint
        for op in reversed(group.ops):
            op.detach()
            op.erase(safe_erase=False)

    def build_choice(self, group: Group, outputs: list[SSAValue]) -> t.ChoiceOp:
        alternative = group.alternative
        assert alternative is not None
        first, second = alternative.first, alternative.second
        fused = self.build_kernel(group, outputs)
        for key, texts in ((ASSUME, alternative.assumed), (BOUNDED, alternative.bounded)):
            if texts:
                fused.attributes[key] = ArrayAttr([StringAttr(text) for text in texts])
        annotate_results(fused, outputs)  # the shapes last, where symbolic-shapes puts them
        apart = [self.build_kernel(g, self.outputs(g)) for g in (first, second)]
        apart_results = {
            v: r
            for k, g in zip(apart, (first, second), strict=True)
            for v, r in zip(self.outputs(g), k.results, strict=True)
        }
        # One apart kernel may use what the other computes: take it from that
        # kernel (emit() replaces the uses of the old value with the choice's
        # result, which inside the choice would be a use before definition),
        # and put the producer first.
        for kernel in apart:
            for i, v in enumerate(kernel.operands):
                if v in apart_results:
                    kernel.operands[i] = apart_results[v]
        if any(r in apart[0].operands for r in apart[1].results):
            apart.reverse()
        then_body = Block([fused, t.YieldOp(*fused.results)])
        else_body = Block([*apart, t.YieldOp(*(apart_results[v] for v in outputs))])
        return t.ChoiceOp(
            [*alternative.assumed, *alternative.bounded],
            [v.type for v in outputs],
            Region(then_body),
            Region(else_body),
        )

    def build_kernel(self, group: Group, outputs: list[SSAValue]) -> t.FusionOp:
        """A fusion op computing `outputs` from clones of the group's ops."""
        domain = self.analyze(group)
        inputs = self.inputs(group)
        check_rank(group.ops, domain, [*inputs, *outputs])
        body = Block(arg_types=[v.type for v in inputs])
        mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, body.args, strict=True))
        for v, arg in mapping.items():
            arg.name_hint = v.name_hint
        for op in group.ops:
            for v in op.operands:
                owner = v.owner
                if v not in mapping and isinstance(owner, Operation) and is_splat_constant(owner):
                    constant = owner.clone()
                    body.add_op(constant)
                    mapping[v] = constant.results[0]
            body.add_op(op.clone(value_mapper=mapping))
        body.add_op(t.YieldOp(*(mapping[v] for v in outputs)))
        kernel = t.FusionOp(
            group.kind, inputs, [v.type for v in outputs], Region(body), describe_domain(domain)
        )
        annotate_results(kernel, outputs)
        for source, result in zip(outputs, kernel.results, strict=True):
            result.name_hint = source.name_hint
        return kernel


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


def describe_domain(domain: Domain) -> dict[str, Attribute]:
    """What a student sees on a kernel: its iteration domain and reduced axes."""
    attrs: dict[str, Attribute] = {"dvm.domain": shape_attr(domain.sizes)}
    if domain.reduced:
        attrs["dvm.reduced"] = ArrayAttr([IntegerAttr(a, i64) for a in sorted(domain.reduced)])
    return attrs


def annotate_results(op: Operation, sources: Sequence[SSAValue]) -> None:
    """Give `op`'s results the shapes of `sources`: one `dvm.shape`, or `dvm.shapes`
    for several (never both: `shape_of` reads `dvm.shape` first)."""
    shapes = [shape_attr(shape_of(v)) for v in sources]
    for key in (SHAPE, SHAPES):
        op.attributes.pop(key, None)
    if len(shapes) == 1:
        op.attributes[SHAPE] = shapes[0]
    elif shapes:
        op.attributes[SHAPES] = ArrayAttr(shapes)


def remove_dead_constants(block: Block) -> None:
    for op in list(block.ops):
        if isinstance(op, arith.ConstantOp) and not op.result.uses:
            Rewriter.erase_op(op)


def blocks_inside_out(func: FuncOp) -> list[Block]:
    """Every block of the function, nested ones first (so that when a block
    is fused, the constants its nested blocks' kernels copied are dead)."""
    blocks: list[Block] = []

    def visit(op: Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.ops:
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
        kinds = {*self.kinds, "cube"}  # a lone matmul is a cube kernel
        for func in op.walk():
            if isinstance(func, FuncOp) and func.body.blocks:
                ensure_shapes(func)
                facts = guard_facts(func)
                for block in blocks_inside_out(func):
                    if isinstance(block.parent_op(), t.FusionOp | t.StackOp | t.ChoiceOp):
                        continue
                    Fuser(block, tuple(kinds), self.max_ops, facts).run()
                    remove_dead_constants(block)
