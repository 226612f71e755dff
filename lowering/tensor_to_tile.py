"""The `convert-tensor-to-tile` pass: each `tensor.fusion` becomes a `tile.kernel`.

The kernel iterates over its fusion's domain (see `dvm.passes.domain`) in
tiles chosen by the tiling function (`dvm.lowering.tiling`), from what the
fusion's live tiles cost per domain element; `dvm.lowering.kernel_body` emits
the body every tile runs. A kernel with reductions (or a matmul's K) that
may not fit a tile gets a second variant that holds them whole, and a
`tensor.choice` picks one from the real shapes.

The host function keeps its control flow and calls the kernels with
`tile.launch`.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IndexType,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from dvm.dialects import tensor as t
from dvm.dialects import tile
from dvm.dialects.expr import ConditionAttr, ExprAttr, replace, shape_attr, symbol, symbol_names
from dvm.dialects.grouped_matmul import GroupedMatmulOp
from dvm.dialects.index_ops import IotaOp
from dvm.dialects.scans import BOOL_REDUCE_OPS
from dvm.dialects.walk import erase_isolated, ops_within, replace_isolated
from dvm.lowering.concat_fusion import emit_fused_concat, emit_fused_pad, fused_plan
from dvm.lowering.data_movement import emit_own_body, own_kernel_op, own_plan
from dvm.lowering.grouped_matmul import GROUP_SIZES, group_size_checks
from dvm.lowering.index_ops import TAKE_CHECKS, take_checks
from dvm.lowering.kernel_body import body_ops, emit_kernel_body
from dvm.lowering.scans import unwrap_large_top_k
from dvm.lowering.schedule import reorder, schedule
from dvm.lowering.tiling import (
    TilePlan,
    ceildiv,
    plan_matmul_tiles,
    plan_vector_tiles,
    rows_fit,
    whole_k_always_fits,
    whole_k_fits,
)
from dvm.passes.concat_fusion import Piece, fused_concat, fused_pad, fused_pieces
from dvm.passes.data_movement import SLICE_BOUNDS, slice_bounds
from dvm.passes.domain import (
    ELEMENTWISE_KINDS,
    MATMULS,
    Domain,
    DomainAnalysis,
    Facts,
    Illegal,
    known_facts,
)
from dvm.passes.errors import ProgramError, located
from dvm.passes.fuse_rewrite import ASSUME, BOUNDED
from dvm.passes.symbolic import (
    SHAPE,
    SHAPES,
    guard_facts,
    shape_of,
    static_truth,
)
from dvm.vm.device import PRESETS, DeviceSpec

DEVICES = PRESETS

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


def element_bytes(t_: Attribute) -> int:
    if isinstance(t_, IndexType):  # i64 on the VM
        return 8
    width = getattr(t_, "bitwidth", None) or getattr(getattr(t_, "width", None), "data", 8)
    return max(1, int(width) // 8)


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
    try:
        return DomainAnalysis(
            body_ops(fusion), yielded(fusion), facts, bool(facts), bounds, known=guards
        ).run()
    except Illegal:
        if facts or choice_preferring(fusion) is None:
            raise
    # A choice's first region written in the program may fuse independent parts
    # without assumptions (of equal static sizes): lay them on one domain.
    return DomainAnalysis(
        body_ops(fusion), yielded(fusion), facts, True, bounds, known=guards
    ).run()


def assumed(fusion: t.FusionOp, key: str) -> list[tuple[sympy.Expr, Any, sympy.Expr]]:
    """What a guarded choice lets its fused kernel assume, each condition split in
    (lhs, relation, rhs): `lhs == rhs` (ASSUME) or `lhs <= rhs` (BOUNDED). Those the
    kernel carries, and those of every choice whose first region holds it (a choice
    written in the program need not copy its conditions onto its kernels)."""
    attr = fusion.attributes.get(key)
    found = list(attr.data) if isinstance(attr, ArrayAttr) else []
    relation = "==" if key == ASSUME else "<="
    inner: Operation = fusion
    while isinstance(outer := inner.parent_op(), t.ChoiceOp):
        if inner.parent_region() is outer.then_body:
            found += [c for c in outer.conditions.data if c.relation.data == relation]
        inner = outer
    unique = dict.fromkeys(c for c in found if isinstance(c, ConditionAttr))
    return [c.split() for c in unique]


@dataclass
class Lifetimes:
    """A fusion's ops in order, and where each value they use is made (-1: an input)
    and last used (an output: past the last op), as positions among them."""

    ops: list[Operation]
    made: dict[SSAValue, int]
    last_use: dict[SSAValue, int]
    tiles: dict[SSAValue, tuple[int, frozenset[int]]] = field(default_factory=dict)
    """Each tensor value's bytes per element (`value_bytes`) and the domain axes it
    spans (`spanned`): every count of bytes asks them of each value."""

    def held(self, sizes: dict[SSAValue, int]) -> list[int]:
        """The sum of `sizes` over the values alive as each op runs (made before it, used
        by it or later), at each position of the ops and past the last: one pass over the
        values' spans, where testing every value at every position is quadratic."""
        steps = [0] * (len(self.ops) + 2)
        for value, size in sizes.items():
            steps[self.made[value] + 1] += size
            steps[self.last_use[value] + 1] -= size
        return list(itertools.accumulate(steps[:-1]))


def lifetimes(
    fusion: t.FusionOp, domain: Domain, order: list[Operation] | None = None
) -> Lifetimes:
    """The lifetimes of the values of a fusion's body over `domain`, its ops run in
    their order or in `order`."""
    ops = body_ops(fusion) if order is None else order
    position = {op: i for i, op in enumerate(ops)}
    first_use: dict[SSAValue, int] = {}
    last_use: dict[SSAValue, int] = {}
    for i, op in enumerate(ops):
        for v in op.operands:
            first_use.setdefault(v, i)
            last_use[v] = i
    for v in yielded(fusion):
        last_use[v] = len(ops)
    reduced = set(domain.reduced)

    def made_at(v: SSAValue) -> int:
        if v.owner in position:
            return position[v.owner]  # type: ignore[index]
        # An input is loaded where its first user asks (`kernel_body.emit_stores`),
        # inside the loops over the reduced axes it spans: one that spans them all
        # just before that user; another may be hoisted out of the loops, before
        # ops that come earlier, so it counts as alive from the start.
        if v in first_use and spanned(domain, v) >= reduced:
            return first_use[v] - 1
        return -1

    tiles = {
        v: (value_bytes(v), spanned(domain, v)) for v in last_use if isinstance(v.type, TensorType)
    }
    return Lifetimes(ops, {v: made_at(v) for v in last_use}, last_use, tiles)


def value_bytes(value: SSAValue) -> int:
    """Bytes per element of a tile of `value` and of the copies the body makes of it:
    `any` and `all` reduce a ui8 copy of their booleans."""
    assert isinstance(value.type, TensorType)
    copies = any(isinstance(use.operation, BOOL_REDUCE_OPS) for use in value.uses)
    return element_bytes(value.type.element_type) * (2 if copies else 1)


def spanned(domain: Domain, value: SSAValue) -> frozenset[int]:
    return frozenset(a for span in domain.placement.get(value, ()) for a in span)


def live_bytes(life: Lifetimes, domain: Domain, least_inner: int = 1) -> tuple[int, int]:
    """Bytes per domain element of the largest set of full-size tiles alive
    at once, at least the registers of the tiles that span every reduced axis
    (see below), and the widest element size. Tiles that skip a reduced axis
    (e.g. a row's mean) are negligible while that axis is long; see
    `skipping_bytes`. `least_inner` is as in `kind_peaks`."""
    full = set(domain.parallel) | set(domain.reduced)
    widest = 1
    sizes: dict[SSAValue, int] = {}
    for v, (size, spans) in life.tiles.items():
        widest = max(widest, size)
        if spans >= full:
            sizes[v] = size
    peak = max(life.held(sizes))
    # registers are reused only by tiles of their kind: a kernel mixing element
    # types (an argmax's i64 indices beside its i32 values) may hold more than that.
    # A vector kernel's tile that skips only parallel axes (an operand broadcast
    # along rows) is as large as a full one when those axes' tiles are 1 (the inner
    # axes took the budget, or the axes are short), so it counts as one: tiles of
    # several such kinds overflowed the slack above. A matmul's operand tiles skip
    # parallel axes too, and its plan counts them.
    spanning = full if domain.contraction is not None else set(domain.reduced)
    by_kind = kind_peaks(life, domain, lambda spans: spans >= spanning, least_inner=least_inner)
    return max(peak + widest, by_kind), widest


def tile_spans(domain: Domain, value: SSAValue) -> frozenset[int]:
    """The axes a tile of `value` spans: an iota's only its own dim's (its register
    is a row or a column, which no full-size tile reuses)."""
    op = value.owner
    if isinstance(op, IotaOp):
        return frozenset(domain.placement[value][op.dim])
    return spanned(domain, value)


Kind = tuple[frozenset[int], Attribute]
"""A register's kind: the domain axes its tile spans and its element type."""


def skipping_bytes(
    life: Lifetimes, domain: Domain, chunks: bool = False, least_inner: int = 1
) -> int:
    """Bytes per domain element of a vector kernel's registers when the tiles
    that skip reduced axes are as large as full ones, as they are when those
    axes' tiles are 1. The bytecode reuses a register only for a tile of its
    kind, so this sums each kind's most bytes alive at once, over every kind:
    a tile that also skips parallel axes is as large as a full one when their
    tiles are 1 too (see `live_bytes`). With `chunks`, a reduction walks loops
    over chunks and holds an accumulator beside each chunk's partial result."""
    return kind_peaks(life, domain, lambda spans: True, chunks, least_inner)


def kind_peaks(
    life: Lifetimes,
    domain: Domain,
    counted: Callable[[frozenset[int]], bool],
    chunks: bool = False,
    least_inner: int = 1,
) -> int:
    """The sum over register kinds of the most bytes per domain element that tiles of
    that kind hold at once, over the tiles whose spans are `counted`. A tile that
    skips the innermost axis is at most 1/`least_inner` of a full one (that axis's
    least tile, see `least_inner_tile`): the bytes are counted in 1/`least_inner`."""
    ops, last_use = life.ops, life.last_use
    inner = len(domain.sizes) - 1
    kinds: dict[SSAValue, Kind] = {}
    sizes: dict[SSAValue, int] = {}
    for v, (size, spans) in life.tiles.items():
        if spans and counted(spans):
            assert isinstance(v.type, TensorType)
            kinds[v] = (tile_spans(domain, v), v.type.element_type)
            sizes[v] = size * (least_inner if inner in spans else 1)
    of_kind: dict[Kind, dict[SSAValue, int]] = {}
    for v, kind in kinds.items():
        of_kind.setdefault(kind, {})[v] = sizes[v]
    held = {kind: life.held(values) for kind, values in of_kind.items()}
    for i, op in enumerate(ops):  # the new registers of op i, beside what is alive there
        made = new_registers(op, kinds, last_use, i)
        for v in made * 2 if chunks and isinstance(op, t.ReduceOp) else made:
            held[kinds[v]][i] += sizes[v]
    return -(-sum(max(bytes_at) for bytes_at in held.values()) // least_inner)


def new_registers(
    op: Operation, kinds: dict[SSAValue, Kind], last_use: dict[SSAValue, int], i: int
) -> list[SSAValue]:
    """The results of `op`, at position `i`, that take a register of their own:
    an elementwise op writes into an operand of its kind that dies there."""
    dying = {kinds[v] for v in op.operands if v in kinds and last_use[v] == i}
    in_place = op in ELEMENTWISE_KINDS
    return [r for r in op.results if r in kinds and not (in_place and kinds[r] in dying)]


@dataclass
class FusionTiling:
    """What tiling a fusion's kernels reads from its ops: its domain and the bytes its
    live tiles hold per domain element. Found once for all its variants (a reduction's
    chunked and whole-rows kernels): each count walks every op and value."""

    fusion: t.FusionOp
    domain: Domain
    life: Lifetimes
    """When each of its values is made and last used, which every count reads."""
    live_bytes: int
    """The most bytes per domain element its full-size tiles hold at once (`live_bytes`)."""
    widest: int
    """The widest element size, in bytes."""
    least_inner: int = 1
    """The least tile of the innermost axis (`least_inner_tile`)."""
    skipping: dict[bool, int] = field(default_factory=dict)
    """`skipping_bytes`, by its `chunks`, as asked."""

    @staticmethod
    def of(fusion: t.FusionOp, guards: Facts, device: DeviceSpec) -> FusionTiling:
        domain = analyze(fusion, guards)
        life = lifetimes(fusion, domain)
        widest = max((size for size, _ in life.tiles.values()), default=1)
        least = least_inner_tile(domain, device, widest)
        live, widest = live_bytes(life, domain, least)
        if fusion.kind.data is not t.KernelKind.CUBE:  # (a cube kernel: a matmul alone)

            def cost(order: list[Operation]) -> int:
                return live_bytes(lifetimes(fusion, domain, order), domain, least)[0]

            if (order := schedule(life.ops, cost, live)) is not None:
                reorder(fusion.body.block, order)
                life = lifetimes(fusion, domain)
                live, widest = live_bytes(life, domain, least)
        return FusionTiling(fusion, domain, life, live, widest, least)

    def skipping_bytes(self, chunks: bool = False) -> int:
        if chunks not in self.skipping:
            count = skipping_bytes(self.life, self.domain, chunks, self.least_inner)
            self.skipping[chunks] = count
        return self.skipping[chunks]


def least_inner_tile(domain: Domain, device: DeviceSpec, widest: int) -> int:
    """The least tile of a vector kernel's innermost axis when its size is static:
    one alignment unit, or the whole axis if shorter (`tiling.aligned`). A tile
    that skips that axis is at most 1/that of a full one (a broadcast along it)."""
    size = domain.sizes[-1] if domain.sizes else None
    if domain.contraction is not None or not isinstance(size, sympy.Integer):
        return 1
    return max(1, min(int(size), device.alignment // widest))


def kernel_plan(
    tiling: FusionTiling, device: DeviceSpec, whole_rows: bool = False
) -> tuple[TilePlan, list[int]]:
    """The tiling of a kernel and the domain axes its tile dims stand for.
    With `whole_rows` the reduced axes (or a matmul's K) are whole in a tile."""
    fusion, domain, widest = tiling.fusion, tiling.domain, tiling.widest
    if domain.contraction is None:
        # a chunked kernel the rows variant stands beside runs only when a row
        # is too long for one tile, so its accumulators are negligible; in a
        # stack it runs for every shape
        stacked = isinstance(fusion.parent_op(), t.StackOp)
        skipping = tiling.skipping_bytes(chunks=stacked and not whole_rows)
        plan = plan_vector_tiles(domain, tiling.live_bytes, widest, device, whole_rows, skipping)
        return plan, list(range(len(domain.sizes)))
    m, n, out_tiles = matmul_shape(tiling)
    groups = weight_groups(fusion)
    plan = plan_matmul_tiles(domain, m, n, out_tiles, widest, device, whole_rows, groups)
    # `tile.mma` makes (batch..., rows, cols): the tile dims follow the matmul result's
    # axes in that order, whatever numbers the domain gave them (an epilogue reading an
    # input along other axes than the matmul does may number the rows first)
    result = [a for span in domain.placement[matmul_of(fusion).result] for a in span]
    others = [a for a in range(len(domain.sizes)) if a != domain.contraction and a not in result]
    return plan, others + result


def matmul_of(fusion: t.FusionOp) -> t.MatmulOp | GroupedMatmulOp:
    """The one matmul (or grouped matmul) of a cube or mix kernel's fusion."""
    return next(op for op in body_ops(fusion) if isinstance(op, MATMULS))


def weight_groups(fusion: t.FusionOp) -> sympy.Expr:
    """How many matrices a cube or mix kernel's tile holds a chunk of: a grouped
    matmul's groups, or one."""
    op = matmul_of(fusion)
    return shape_of(op.w)[0] if isinstance(op, GroupedMatmulOp) else sympy.Integer(1)


def matmul_shape(tiling: FusionTiling) -> tuple[int, int, int]:
    """A cube or mix kernel's output axes (rows, cols) and how many output-sized
    tiles it holds at once: the accumulator coming into and going out of an
    mma (2), or the epilogue's peak if higher (the matmul's result is one of
    its full-size values). The operand tiles are counted by the plan itself."""
    matmul = matmul_of(tiling.fusion)
    m_span, n_span = tiling.domain.placement[matmul.result][-2:]
    # a grouped matmul's product is a tile beside the accumulator's
    product = 1 if isinstance(matmul, GroupedMatmulOp) else 0
    outputs = max(2, -(-tiling.live_bytes // tiling.widest)) + product
    return m_span[0], n_span[0], outputs


def name_tile_sizes(plan: TilePlan, domain: Domain) -> dict[str, sympy.Expr]:
    """Give each computed tile size a name (`t0` for axis 0), so the IR shows
    `!tile.tile<[t0, t1], f32>` and the kernel lists each size once. A size
    built from earlier ones (a matmul's K chunk from its tm and tn) names them
    too: the sizes are evaluated in order at every new shape, each once."""
    taken = symbol_names(domain.sizes)
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
    """`size` with the earlier tile sizes in it replaced by their names (`named`),
    its Min and Max rebuilt unevaluated (`replace`): sympy's `xreplace` would search
    them for redundant arguments, hundreds of milliseconds of assumption queries in a
    process that has not asked them before. Remembered: kernels of repeated structure
    (a model's layers) ask the same."""
    return replace(size, dict(named))


def lower_kernel(
    fusion: t.FusionOp,
    name: str,
    device: DeviceSpec,
    guards: Facts,
    whole_rows: bool = False,
    tiling: FusionTiling | None = None,
) -> tuple[tile.KernelOp, tile.LaunchOp]:
    """A kernel of `fusion` and its launch; `tiling`, when given, is the fusion's
    (`FusionTiling.of`), found by the caller."""
    ops = body_ops(fusion)
    own, concat, pad = own_kernel_op(ops), fused_concat(ops), fused_pad(ops)
    fused = fused_pieces(ops, yielded(fusion), guards)
    pieces: list[Piece] = []
    if fused is not None:  # a concat or pad fused with its producers
        domain, pieces = fused
        plan, coords = fused_plan(pieces, domain, device), list(range(len(domain.sizes)))
    elif own is None:
        tiling = tiling or FusionTiling.of(fusion, guards, device)
        domain = tiling.domain
        plan, coords = kernel_plan(tiling, device, whole_rows)
    else:  # a concat or insert_slice: copies, see dvm.lowering.data_movement
        domain, plan, coords = own_plan(own, device)
    sizes = name_tile_sizes(plan, domain)
    axes = ArrayAttr([axis_attr(domain.sizes[a], plan.tiles[a], plan.index[a]) for a in coords])
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
    if concat is not None:
        emit_fused_concat(kernel.body.block, concat, pieces, plan, args)
    elif pad is not None:
        emit_fused_pad(kernel.body.block, pad, pieces[0], plan, args)
    elif own is None:
        emit_kernel_body(kernel.body.block, fusion, domain, plan, coords, args)
    else:
        emit_own_body(kernel.body.block, own, plan, args)
    host_inputs = [v for v in fusion.inputs if isinstance(v.type, TensorType)]
    launch = tile.LaunchOp(name, host_inputs, fusion.result_types)
    for key in (SHAPE, SHAPES):
        if key in fusion.attributes:
            launch.attributes[key] = fusion.attributes[key]
    if dims := index_dims(fusion):
        launch.attributes[INDEX_DIMS] = ArrayAttr(dims)
    if bounds := slice_bounds(list(body_ops(fusion))):
        launch.attributes[SLICE_BOUNDS] = ArrayAttr(bounds)
    if checks := group_size_checks(body_ops(fusion), inputs):
        launch.attributes[GROUP_SIZES] = ArrayAttr(checks)
    if takes := take_checks(list(body_ops(fusion)), inputs):
        launch.attributes[TAKE_CHECKS] = ArrayAttr(takes)
    return kernel, launch


@functools.lru_cache(maxsize=1 << 12)
def axis_attr(size: sympy.Expr, tile_size: sympy.Expr, walker: str) -> tile.AxisAttr:
    """`AxisAttr(size, tile_size, walker)`, made once (xDSL verifies it and its three
    parts as it makes them, 640 bytecodes; kernels repeat their axes)."""
    return tile.AxisAttr(size, tile_size, walker)


def index_dims(fusion: t.FusionOp) -> list[DictionaryAttr]:
    """The shapes of the ops in `fusion` that take dims from index values (`INDEX_DIMS`)."""
    found = []
    for op in body_ops(fusion):
        if isinstance(op, t.BroadcastToOp | t.ExpandShapeOp) and op.operands[1:]:
            shape = op.attributes[SHAPE]
            found.append(DictionaryAttr({"op": StringAttr(located(op)), "shape": shape}))
    return found


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
            erase_unused_kernel_groups(func)
            for fusion in [f for f in ops_within(func) if isinstance(f, t.FusionOp)]:
                if not func.is_ancestor(fusion):
                    continue  # in the first region of a choice that took its second
                if not fusion.results:  # dead code: nothing it computes is used
                    erase_isolated(fusion)
                    continue
                if unwrap_large_top_k(fusion, device):
                    continue
                copy_repeated_outputs(fusion)
                name = f"{func.sym_name.data}_k{count}"
                count += 1
                try:
                    lowered = lower_fusion(op, fusion, name, device, guards)
                except Illegal as e:  # a kernel written in the program (fuse makes legal ones)
                    choice = choice_preferring(fusion)
                    if choice is None:
                        raise ProgramError(fusion, f"cannot be one kernel: {e}") from e
                    take_second_region(choice)
                    continue
                replace_isolated(fusion, lowered)


def copy_repeated_outputs(fusion: t.FusionOp) -> None:
    """Yield a copy (a `convert` to its own type) of each input and each value yielded
    twice by a kernel written in the program: lowering names a kernel's arguments by
    the values they hold, so an output that is an input, or another output, would
    share its argument (and be read before anything is stored there)."""
    block = fusion.body.block
    last = block.last_op
    assert isinstance(last, t.YieldOp)
    seen: set[SSAValue] = set(block.args)
    for i, value in enumerate(last.values):
        if value in seen:
            copy = t.ConvertOp.build(operands=[value], result_types=[value.type])
            copy.attributes[SHAPE] = shape_attr(shape_of(value))
            Rewriter.insert_op(copy, InsertPoint.before(last))
            last.operands[i] = copy.result
        seen.add(last.operands[i])


def choice_preferring(fusion: t.FusionOp) -> t.ChoiceOp | None:
    """The innermost choice whose first region holds `fusion`, if any."""
    inner: Operation = fusion
    while (outer := inner.parent_op()) is not None:
        if isinstance(outer, t.ChoiceOp) and inner.parent_region() is outer.then_body:
            return outer
        inner = outer
    return None


def take_second_region(choice: t.ChoiceOp) -> None:
    """Replace `choice` by its second region's ops: its first holds a kernel that
    cannot be one (one written in the program, under conditions that do not make its
    parts align, e.g. in a variant where a dim of one part is 1). The second computes
    the same values, so the program stays right, only less fused."""
    block = choice.else_body.block
    last = block.last_op
    assert isinstance(last, t.YieldOp)
    for op in list(block.ops)[:-1]:
        op.detach()
        Rewriter.insert_op(op, InsertPoint.before(choice))
    for result, value in zip(choice.results, last.values, strict=True):
        result.replace_all_uses_with(value)
    Rewriter.erase_op(choice)


def erase_unused_kernel_groups(func: FuncOp) -> None:
    """Erase the choices and stacks of `func` that give no result: they hold only
    kernels, which compute values and nothing else, so none of their work is used
    (fusion may leave one when every value it planned for is dead)."""
    unused = [
        op for op in ops_within(func) if isinstance(op, t.ChoiceOp | t.StackOp) and not op.results
    ]
    for op in reversed(unused):  # (the innermost first: an outer one erases its contents)
        Rewriter.erase_op(op)


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
    ops = body_ops(fusion)
    if fused_concat(ops) is not None or fused_pad(ops) is not None:  # loops walk it: no variants
        return add_kernel(module, *lower_kernel(fusion, name, device, guards))
    tiling = FusionTiling.of(fusion, guards, device)
    domain, widest = tiling.domain, tiling.widest
    stacked = isinstance(fusion.parent_op(), t.StackOp)
    if domain.contraction is None and not domain.reduced:  # elementwise: no variants
        return add_kernel(module, *lower_kernel(fusion, name, device, guards, tiling=tiling))
    if domain.contraction is not None:
        suffix = "_whole_k"
        m, n, out_tiles = matmul_shape(tiling)
        groups = weight_groups(fusion)
        if groups == 1 and whole_k_always_fits(domain, out_tiles, widest, device):
            return add_kernel(module, *lower_kernel(fusion, name, device, guards, True, tiling))
        condition = whole_k_fits(domain, m, n, out_tiles, widest, device, groups)
    else:
        suffix = "_rows"
        live, skipping = tiling.live_bytes, tiling.skipping_bytes()
        condition = rows_fit(domain, live, device, widest, skipping)
    decided = static_truth(condition)  # static sizes: one variant whatever the symbols
    if decided is not None:
        return add_kernel(module, *lower_kernel(fusion, name, device, guards, decided, tiling))
    if stacked:
        return add_kernel(module, *lower_kernel(fusion, name, device, guards, tiling=tiling))
    chunked, launch = lower_kernel(fusion, name, device, guards, tiling=tiling)
    module.body.block.add_op(chunked)
    rows, rows_launch = lower_kernel(fusion, f"{name}{suffix}", device, guards, True, tiling)
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
