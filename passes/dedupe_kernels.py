"""The `dedupe-kernels` pass: one kernel for each set of identical kernels.

Repeated structure in a model -- the q, k and v projections of attention, a
LayerNorm after each residual, every layer of a deep network -- lowers to
kernels that differ only in their names. Left apart, each is converted,
loaded and, at every new shape, specialized on its own. This pass keeps the
first of each set of structurally identical `tile.kernel` (or
`bytecode.program`) ops, erases the others and points their launches at the
one kept, so the runtime specializes it once per shape for all of its
launches. LLVM's MergeFunctions does the same for functions.

Identical means equal in everything but the symbol name: operations,
types, attributes (tile sizes, grid, argument shapes), and the way values
flow. The names of block arguments are printing hints and do not count.

How: an analysis finds each kernel's twin (`twins`: kernels sorted into
buckets by a fingerprint, then compared in full within a bucket); the
duplicates are erased, and the rewrite pattern `LaunchTwin`, in one walk of
the host code, points each of their launches at the twin.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from dvm.dialects import bytecode as bc
from dvm.dialects import tile
from dvm.dialects.walk import erase_isolated, ops_inside

KERNEL_OPS = (tile.KernelOp, bc.ProgramOp)
Kernel = tile.KernelOp | bc.ProgramOp


def identical_but_name(a: Operation, b: Operation) -> bool:
    """Whether two kernels differ at most in their symbol names."""
    if type(a) is not type(b) or a.attributes != b.attributes:
        return False
    props_a = {k: v for k, v in a.properties.items() if k != "sym_name"}
    props_b = {k: v for k, v in b.properties.items() if k != "sym_name"}
    if props_a != props_b or len(a.regions) != len(b.regions):
        return False
    return all(
        ra.is_structurally_equivalent(rb, {}) for ra, rb in zip(a.regions, b.regions, strict=True)
    )


def fingerprint(kernel: Operation, head: Hashable = None) -> Hashable:
    """What identical kernels have in common, to sort them into buckets compared in
    full only among themselves: each op's name, operand count, attributes and
    properties, in order (not the symbol name, nor the values' names). Kernels of one
    size that differ in a constant or a tile size then cost no comparison. `head` is
    the kernel's `heading`, when known."""
    parts: list[Hashable] = [heading(kernel) if head is None else head]
    for op in ops_inside(kernel):
        parts.append((op.name, len(op.operands), items(op.attributes), items(op.properties)))
    return tuple(parts)


def heading(kernel: Operation) -> Hashable:
    """The kernel op's own name, attributes and properties (but its symbol name): what
    `fingerprint` starts with, found without walking the body."""
    return (kernel.name, items(kernel.attributes), items(kernel.properties))


def items(attrs: Mapping[str, Attribute]) -> tuple[tuple[str, Attribute], ...]:
    return tuple(sorted((k, v) for k, v in attrs.items() if k != "sym_name"))


def twins(module: ModuleOp) -> dict[Kernel, Kernel]:
    """Each kernel of `module` identical but for its name to one before it, with the
    first of them. Kernels are sorted by their `heading` first: a body is walked for
    its `fingerprint` only when another kernel has the same heading (the variants of
    one fusion differ in their tile sizes, and most kernels have no twin)."""
    only: dict[Hashable, Kernel | None] = {}
    """By heading: its one kernel so far (None once a second came: both fingerprinted)."""
    buckets: dict[Hashable, list[Kernel]] = {}  # by fingerprint, then compared in full
    found: dict[Kernel, Kernel] = {}
    for kernel in module.ops:
        if not isinstance(kernel, KERNEL_OPS):
            continue
        head = heading(kernel)
        if head not in only:
            only[head] = kernel
            continue
        first = only[head]
        if first is not None:
            buckets[fingerprint(first, head)] = [first]
            only[head] = None
        bucket = buckets.setdefault(fingerprint(kernel, head), [])
        twin = next((k for k in bucket if identical_but_name(kernel, k)), None)
        if twin is None:
            bucket.append(kernel)
        else:
            found[kernel] = twin
    return found


@dataclass(eq=False)
class LaunchTwin(RewritePattern):
    """Point a launch of an erased kernel at its twin."""

    renamed: dict[str, str]
    """The name of each kernel erased, to the name of its twin."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, launch: tile.LaunchOp, rewriter: PatternRewriter) -> None:
        target = self.renamed.get(launch.callee.root_reference.data)
        if target is not None:
            launch.callee = SymbolRefAttr(target)
            rewriter.notify_op_modified(launch)


@dataclass(frozen=True)
class DedupeKernelsPass(ModulePass):
    """Merge kernels that differ only in their names into the first of them and
    point every launch of the others at it."""

    name = "dedupe-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        found = twins(op)
        if not found:
            return
        renamed = {kernel.sym_name.data: twin.sym_name.data for kernel, twin in found.items()}
        for kernel in found:
            erase_isolated(kernel)
        # The launches are in the host code: the walk leaves out the kernels' bodies,
        # which hold most of the module's ops and no launch.
        walker = PatternRewriteWalker(LaunchTwin(renamed), apply_recursively=False)
        for host in op.ops:
            if not isinstance(host, KERNEL_OPS):
                for region in host.regions:
                    walker.rewrite_region(region)
