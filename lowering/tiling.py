"""The tiling function: tile sizes and grid of a kernel, as sympy expressions.

Given a kernel's domain (symbolic sizes, reduced axes, matmul contraction)
and the device, choose for every domain axis a tile extent and what walks
it:

- parallel axes get a grid axis each (at most three; further outer ones are
  walked by loops inside the tile, one element at a time);
- reduced axes and a matmul's K are walked by loops over chunks, so a row of
  any length fits (when one chunk covers the axis, each loop runs once);
- every live tile of the kernel must fit in a core's local memory (a matmul
  kernel's: the cube core's cube memory), the innermost axis is a multiple
  of the alignment unless it is whole, and the parallel work is cut so that
  every core gets a tile when the shape allows and, for vector kernels, each
  share holds at least SMALL_WORK_BYTES of an operand; less work than that
  stays in one tile (the VM runs such a launch on one core anyway, and every
  tile costs a pass of instruction dispatch).

The results are expressions of the shape symbols: they are evaluated once
per concrete shape, when the bytecode template is specialized. A vector
kernel's, and a matmul's batch tiles, also name the symbol `cores` (CORES),
the cores the work is shared among: the VM evaluates them for one core when
it runs a first launch unplanned on one, and for the device's cores when it
plans.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

import sympy
from sympy.core.mul import _mulsort

from dvm.dialects.expr import ConditionAttr, product, sceiling, sfloor, smax, smin, total
from dvm.passes.domain import Domain
from dvm.passes.symbolic import CORES
from dvm.vm.device import DeviceSpec

LOCAL_MEMORY_SHARE = sympy.Rational(85, 100)
"""Of the local memory, what tiles may fill (the rest absorbs alignment)."""

MAX_GRID_AXES = 3

ONE = sympy.Integer(1)

SMALL_WORK_BYTES = 64 * 1024
"""A core's share of a vector kernel's data is at least this many bytes of one operand
(all of it, when there is less): below ~2x this, a launch's traffic is under the VM's
inline threshold and it runs on the calling thread, where more tiles only cost dispatch."""


def ceildiv(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    return sceiling(quotient(a, b))


def floor_div(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    return sfloor(quotient(a, b))


def quotient(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    """a/b as sympy makes it. Over a sum or a call (Max, Min, floor, ceiling), a number,
    a name, a sum or a call is put together directly, and so is a number or a name over
    a product of calls: sympy would make 1/b again and again, each time searching b for
    an infinite term or asking whether it is zero, by assumption queries that walk a
    nested tile size (milliseconds, in a process that has not asked them). The product
    is what sympy's would be: its factors in sympy's order, none of which can cancel or
    combine with 1/b. A name or a call over a whole number is that with the coefficient
    1/b, as sympy puts it first; a whole number times a call over a sum keeps the number
    first, then the call and 1/b in sympy's order; a name over another name is their
    two factors in sympy's order."""
    if isinstance(b, sympy.Integer) and b > 1 and (a.is_Symbol or isinstance(a, OVER[1:])):
        return cast(sympy.Expr, sympy.Mul(sympy.Rational(1, int(b)), a, evaluate=False))
    if _whole_times_call(b) and (a.is_Symbol or isinstance(a, OVER[1:])) and a != b.args[1]:
        # a name or a call over a whole number times a call (`2*Min(...)`, the cores
        # times a row cap): 1/that number first, then the two factors in sympy's order
        number, call = cast(tuple[sympy.Integer, sympy.Expr], b.args)
        return _over(a, [call], sympy.Rational(1, int(number)))
    if _whole_times_call(a) and isinstance(b, sympy.Add):
        # a whole number times a call over a sum (a reduction's budget, the memory
        # times its shortest row over the bytes of the row): the number first
        number, call = cast(tuple[sympy.Integer, sympy.Expr], a.args)
        return _over(call, [b], number)
    if b.is_Symbol and a.is_Symbol and a != b:  # a size over a tile size's name
        return _over(a, [b])
    if _product_of_calls(b) and (a.is_Symbol or (a.is_Integer and a > 1)):
        # a number or a name over a product of calls (a work budget over a row's tiles,
        # `16384/(Max(1, x_0)*Max(1, x_1))`): a factor per call, none cancels
        return _over(a, cast(tuple[sympy.Expr, ...], b.args))
    if not isinstance(b, OVER) or a in (0, 1, b) or not _plain_numerator(a):
        return a / b
    return _over(a, [b])


def _over(
    a: sympy.Expr, denominators: Sequence[sympy.Expr], *coefficient: sympy.Expr
) -> sympy.Expr:
    """The product of `coefficient` (first, as sympy puts a number), `a` and 1 over each
    of `denominators`, these in sympy's order of a product's factors, unevaluated."""
    factors = [a, *(sympy.Pow(d, -1, evaluate=False) for d in denominators)]
    _mulsort(factors)
    return cast(sympy.Expr, sympy.Mul(*coefficient, *factors, evaluate=False))


OVER = (sympy.Add, sympy.Min, sympy.Max, sympy.floor, sympy.ceiling)
"""The denominators `quotient` divides by itself."""


def _whole_times_call(b: sympy.Expr) -> bool:
    """Whether `b` is a whole number above 1 times a Max, Min, floor or ceiling."""
    if not (b.is_Mul and len(b.args) == 2 and isinstance(b.args[1], OVER[1:])):
        return False
    number = b.args[0]
    return isinstance(number, sympy.Integer) and number > 1


def _product_of_calls(b: sympy.Expr) -> bool:
    """Whether `b` is a product of Max, Min, floor and ceiling calls only."""
    return b.is_Mul and all(isinstance(f, OVER[1:]) for f in b.args)


def _plain_numerator(a: sympy.Expr) -> bool:
    """A numerator that stays one factor of the quotient: an integer (not 0 or 1,
    which sympy drops), a name, a sum or a call."""
    return bool(a.is_Integer or a.is_Symbol or a.is_Add or a.is_Function)


@dataclass
class TilePlan:
    """Per domain axis: the tile extent and its walker (`gridN`, `loopN`, `whole`)."""

    tiles: list[sympy.Expr]
    index: list[str]
    grid: list[sympy.Expr] = field(default_factory=list)
    """Number of tiles along each grid axis."""
    gridded: list[int] = field(default_factory=list)
    """The parallel axes that grid axes walk, in grid order."""
    batch_loops: list[int] = field(default_factory=list)
    """Parallel axes walked by loops (outermost first), beyond the grid."""
    chunk_loops: list[int] = field(default_factory=list)
    """Reduced axes (or K) walked by loops over chunks, outermost first."""

    def copy(self) -> TilePlan:
        """A plan of its own lists (callers change a plan's tiles)."""
        return TilePlan(
            list(self.tiles),
            list(self.index),
            list(self.grid),
            list(self.gridded),
            list(self.batch_loops),
            list(self.chunk_loops),
        )

    def trips(self, axis: int, sizes: Sequence[sympy.Expr]) -> sympy.Expr:
        """How many chunks a loop over `axis` runs."""
        return ceildiv(sizes[axis], self.tiles[axis])


def aligned(budget: sympy.Expr, size: sympy.Expr, align: int) -> sympy.Expr:
    """min(size, budget rounded down to a multiple of `align`, at least `align`)."""
    rounded = smax(align, floor_div(budget, sympy.Integer(align)) * align)
    return at_least_one(smin(size, rounded))


def at_least_one(tile: sympy.Expr) -> sympy.Expr:
    """A tile is never empty, even along an axis of size 0 (whose grid is then 0)."""
    return smax(1, tile)


def usable_bytes(device: DeviceSpec, cube: bool = False) -> int:
    """The share of local memory tiles may take (with `cube`, of the cube memory that
    matmul kernels' tiles live in)."""
    return int(device.memory_bytes(cube) * LOCAL_MEMORY_SHARE)


def elements_in(device: DeviceSpec, bytes_per_element: int, cube: bool = False) -> int:
    """How many elements of `bytes_per_element` fit in the usable local memory."""
    return max(1, usable_bytes(device, cube) // max(bytes_per_element, 1))


def live_elements(
    domain: Domain, device: DeviceSpec, live_bytes: int, skipping_bytes: int = 0
) -> sympy.Expr:
    """How many domain elements a vector kernel's tiles fit in the usable local
    memory. `live_bytes` per element counts the tiles that span every reduced
    axis only: a tile of a value that skips reduced axes is 1/(their tiles) of a
    full one, negligible along long axes but full-size when an axis's tile is 1
    (its size is 0 or 1).
    `skipping_bytes` counts those tiles whole; with m the shortest reduced axis,
    `live_bytes + (skipping_bytes - live_bytes) / m` bytes per element bound
    them all, and the slack in `live_bytes` absorbs them when it has room."""
    extra = skipping_bytes - live_bytes
    if extra <= 0 or not domain.reduced:
        return sympy.Integer(elements_in(device, live_bytes))
    usable = usable_bytes(device)
    # no reduced tile is shorter than m: the rows variant holds each axis
    # whole, and a chunk is long unless inner chunks take the whole budget
    m = smin(*(at_least_one(domain.sizes[a]) for a in sorted(domain.reduced)))
    return smax(1, sfloor(quotient(usable * m, live_bytes * m + extra)))


def plan_vector_tiles(
    domain: Domain,
    live_bytes: int,
    element_bytes: int,
    device: DeviceSpec,
    whole_rows: bool = False,
    skipping_bytes: int = 0,
) -> TilePlan:
    """Tile extents for a vector kernel; `live_bytes` is the most bytes per
    domain element that its live full-size tiles hold at once, `skipping_bytes`
    as much with the tiles that skip reduced axes counted whole (see
    `live_elements`). With `whole_rows`, a tile covers the reduced axes
    entirely (valid when `rows_fit` holds): each reduction is then one
    instruction and nothing is computed twice.

    Remembered (`sized_vector_tiles`) by what it reads of the domain, its sizes and
    the axes it reduces or contracts: a program's branches, its repeated layers and
    programs on arguments of the same shapes ask again. Each caller has its own copy."""
    axes = (tuple(domain.sizes), domain.reduced, domain.contraction)
    return sized_vector_tiles(
        *axes, live_bytes, element_bytes, device, whole_rows, skipping_bytes
    ).copy()


@functools.lru_cache(maxsize=256)
def sized_vector_tiles(
    sizes: tuple[sympy.Expr, ...],
    reduced: frozenset[int],
    contraction: int | None,
    live_bytes: int,
    element_bytes: int,
    device: DeviceSpec,
    whole_rows: bool,
    skipping_bytes: int,
) -> TilePlan:
    """`plan_vector_tiles` of a domain of `sizes` that reduces the axes `reduced` (and
    contracts `contraction`)."""
    domain = Domain(list(sizes), reduced, contraction)
    n = len(domain.sizes)
    budget = live_elements(domain, device, live_bytes, skipping_bytes)
    align = max(1, device.alignment // element_bytes)
    tiles: list[sympy.Expr] = [sympy.Integer(1)] * n
    if whole_rows:
        for axis in domain.reduced:
            tiles[axis] = at_least_one(domain.sizes[axis])
            budget = smax(1, floor_div(budget, tiles[axis]))
        return plan_parallel(domain, tiles, budget, element_bytes, device, [])
    chunked = sorted(domain.reduced)
    # An innermost parallel axis takes at least one alignment unit (or all of
    # itself) whatever budget is left, so the chunks leave room for that.
    reserve: sympy.Expr = sympy.Integer(1)
    if chunked and n - 1 not in domain.reduced and n - 1 in domain.parallel:
        reserve = at_least_one(smin(domain.sizes[n - 1], align))
    chunk_budget = smax(1, floor_div(budget, reserve))
    for axis in reversed(chunked):  # chunks first: rows of any length must fit
        tiles[axis] = fit(chunk_budget, domain.sizes[axis], align, axis == n - 1)
        chunk_budget = smax(1, floor_div(chunk_budget, tiles[axis]))
        budget = smax(1, floor_div(budget, tiles[axis]))
    return plan_parallel(domain, tiles, budget, element_bytes, device, chunked)


def plan_parallel(
    domain: Domain,
    tiles: list[sympy.Expr],
    budget: sympy.Expr,
    element_bytes: int,
    device: DeviceSpec,
    chunked: list[int],
) -> TilePlan:
    """Fill the parallel axes, innermost first, with what the budget leaves,
    but no more than one core's share of the work."""
    n = len(domain.sizes)
    align = max(1, device.alignment // element_bytes)
    parallel = domain.parallel
    # One core's share of the gridded work, rounded down so that the tiles
    # number at least the cores (rounded up, 1009 rows on 48 cores would be
    # 46 tiles of 22), but not less than SMALL_WORK_BYTES of data (a row of
    # the reduced axes counts whole). Axes beyond the grid are walked inside
    # each tile. The cores are a symbol the VM gives: a first launch runs on
    # one core, where a tile per core would only cost dispatch.
    work = sympy.Mul(*(domain.sizes[a] for a in parallel[-MAX_GRID_AXES:]))
    row = sympy.Mul(*(at_least_one(domain.sizes[a]) for a in sorted(domain.reduced)))
    least = smax(1, floor_div(sympy.Integer(SMALL_WORK_BYTES // element_bytes), row))
    share = smax(floor_div(work, CORES), smin(work, least))
    budget = smax(1, smin(budget, share))
    for axis in reversed(parallel):
        tiles[axis] = fit(budget, domain.sizes[axis], align, axis == n - 1)
        budget = smax(1, floor_div(budget, tiles[axis]))
    return finish(domain, tiles, chunked)


def rows_fit(
    domain: Domain,
    live_bytes: int,
    device: DeviceSpec,
    element_bytes: int = 1,
    skipping_bytes: int = 0,
) -> ConditionAttr:
    """The condition under which whole rows (the reduced axes) fit a tile,
    beside the least an innermost parallel axis takes (one alignment unit of
    `element_bytes` elements, or the whole axis if it is shorter)."""
    reduced = [domain.sizes[a] for a in sorted(domain.reduced)]
    # as the tiles take them: at least 1 along each axis, so that a row with
    # an empty axis is not taken to fit whatever the others (one axis alone
    # fits or not alike, and keeps the plain condition)
    row = sympy.Mul(*(reduced if len(reduced) == 1 else map(at_least_one, reduced)))
    n = len(domain.sizes)
    if n - 1 in domain.parallel:
        align = max(1, device.alignment // element_bytes)
        row = row * sympy.Min(domain.sizes[n - 1], align)
    return ConditionAttr(row, "<=", live_elements(domain, device, live_bytes, skipping_bytes))


def plan_matmul_tiles(
    domain: Domain,
    m: int,
    n: int,
    out_tiles: int,
    element_bytes: int,
    device: DeviceSpec,
    whole_k: bool = False,
    groups: sympy.Expr = ONE,
) -> TilePlan:
    """Tile extents for a cube or mix kernel (see `matmul_tiles`). K is
    walked in chunks, or with `whole_k` held whole in the tile (valid when
    `whole_k_fits` holds): then there is no K loop and no accumulation."""
    assert domain.contraction is not None
    k = domain.contraction
    align = max(1, device.alignment // element_bytes)
    tm, tn, k_cap = matmul_tiles(domain, m, n, out_tiles, element_bytes, device, groups)
    tiles: list[sympy.Expr] = [sympy.Integer(1)] * len(domain.sizes)
    tiles[m], tiles[n] = tm, tn
    if whole_k:
        tiles[k] = at_least_one(domain.sizes[k])
    else:
        tiles[k] = balanced(domain.sizes[k], k_cap, align)
    batch_tiles(domain, tiles, m, n, out_tiles, element_bytes, device)
    return finish(domain, tiles, [] if whole_k else [k])


def batch_tiles(
    domain: Domain,
    tiles: list[sympy.Expr],
    m: int,
    n: int,
    out_tiles: int,
    element_bytes: int,
    device: DeviceSpec,
) -> None:
    """Give a matmul's gridded batch axes (innermost first) tiles of several matrices
    where the cube memory has room beside the matrix tiles, no more than a core's
    share of the batch (`cores`, as for vector kernels) unless that share is small
    work: one mma then multiplies a stack of matrices, where a tile per matrix costs
    a pass of instruction dispatch (BERT's attention has batch x heads of them)."""
    batch = [a for a in reversed(domain.parallel[-MAX_GRID_AXES:]) if a not in (m, n)]
    if not batch:  # (a plain matmul has none: no sympy work on its nested tile sizes)
        return
    budget = sympy.Integer(elements_in(device, element_bytes, cube=True))
    tm, tn, tk = tiles[m], tiles[n], tiles[domain.contraction or 0]
    # per matrix of the stack: its A and B tiles (when batched) and the output tiles,
    # put together as sympy's arithmetic would (`total`: sympy flattens each new sum
    # of products of nested tile sizes by assumption queries, 4 ms of BERT's first compile)
    outputs = product(sympy.Integer(out_tiles), tm, tn)
    per_matrix = total(product(tm, tk), product(tk, tn), outputs)
    room = smax(1, floor_div(budget, per_matrix))
    # the matrices that make a share worth having: rows of SMALL_WORK_BYTES, as for tm
    work = smax(1, floor_div(least_rows(tk, tn, element_bytes), tm))
    for axis in batch:
        size = domain.sizes[axis]
        share = smax(floor_div(size, CORES), smin(size, work))
        tiles[axis] = at_least_one(smin(size, room, share))
        room = smax(1, floor_div(room, tiles[axis]))


def whole_k_fits(
    domain: Domain,
    m: int,
    n: int,
    out_tiles: int,
    element_bytes: int,
    device: DeviceSpec,
    groups: sympy.Expr = ONE,
) -> ConditionAttr:
    """The condition under which K fits in one chunk beside the output tiles."""
    assert domain.contraction is not None
    _, _, k_cap = matmul_tiles(domain, m, n, out_tiles, element_bytes, device, groups)
    return ConditionAttr(domain.sizes[domain.contraction], "<=", k_cap)


def whole_k_always_fits(
    domain: Domain, out_tiles: int, element_bytes: int, device: DeviceSpec
) -> bool:
    """Whether K is static and fits in one chunk whatever the other sizes: the
    least room K gets is beside output tiles of the largest side."""
    assert domain.contraction is not None
    size = domain.sizes[domain.contraction]
    if not size.is_Integer:
        return False
    align, budget, side = matmul_budget(out_tiles, element_bytes, device)
    # the operand tiles are widest at tm + tn <= 5 x side (see `matmul_tiles`)
    least = (budget - out_tiles * side * side) // (5 * side) // align * align
    return int(size) <= max(align, least)


def matmul_budget(out_tiles: int, element_bytes: int, device: DeviceSpec) -> tuple[int, int, int]:
    """(alignment unit, elements usable in the cube memory, the largest side of
    an output tile: `out_tiles` of them fill at most half of the memory)."""
    align = max(1, device.alignment // element_bytes)
    budget = elements_in(device, element_bytes, cube=True)
    side = max(align, math.isqrt(budget // (2 * out_tiles)) // align * align)
    return align, budget, side


def matmul_tiles(
    domain: Domain,
    m: int,
    n: int,
    out_tiles: int,
    element_bytes: int,
    device: DeviceSpec,
    groups: sympy.Expr = ONE,
) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr]:
    """(tm, tn, the most K a chunk may hold) of a matmul's tiles, in the
    device's cube memory: a tm x tk tile of A, a tk x tn tile of B and
    `out_tiles` tm x tn tiles (the accumulator coming in and going out of an
    mma, epilogue values) alive at once.

    The output tiles take at most half of the memory: each holds at most
    side^2 elements, with out_tiles x side^2 within that half. The columns
    are cut into equal tiles of at most `side`; the rows into a multiple of
    the cube cores' count of equal tiles (every core gets the same work) of
    at most side^2 / tn rows, and no more than 4 x side: narrow outputs
    (mmoe's 16 columns) get taller tiles, so fewer calls. Small work is not
    shared: a row tile holds at least SMALL_WORK_BYTES of A's and the output's
    rows together (as for vector kernels). On a device whose cube cores share
    each gemm (`shared_gemm`: the host's BLAS threads), the rows are cut only
    into as many equal tiles as the memory needs. K gets the rest.

    A grouped matmul's tile holds a tk x tn chunk of each of its `groups` matrices
    (and a row of tn of each group's bias, and the sizes): its columns are cut so
    that the chunks of one alignment unit of K take at most a quarter of the memory.

    Remembered (`sized_matmul_tiles`): a fusion asks three times, for the condition
    that K fits and for each of its two kernels."""
    sizes, k, reduced_n = tuple(domain.sizes), domain.contraction or 0, n in domain.reduced
    return sized_matmul_tiles(sizes, k, m, n, reduced_n, out_tiles, element_bytes, device, groups)


@functools.lru_cache(maxsize=256)
def sized_matmul_tiles(
    sizes: tuple[sympy.Expr, ...],
    k: int,
    m: int,
    n: int,
    reduced_n: bool,
    out_tiles: int,
    element_bytes: int,
    device: DeviceSpec,
    groups: sympy.Expr,
) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr]:
    """`matmul_tiles` of a domain of `sizes` with K at axis `k` (`reduced_n`: the
    columns are reduced)."""
    align, budget, side = matmul_budget(out_tiles, element_bytes, device)
    cols_cap: sympy.Expr = sympy.Integer(side)
    if groups != 1:
        quarter = sympy.Integer(budget // (4 * align))
        cols_cap = smax(align, smin(side, floor_div(quarter, smax(1, groups))))
    # an epilogue that reduces the columns needs whole rows in a tile (the domain
    # analysis allows it only for at most MAX_REDUCED_COLUMNS of them, or under that bound)
    tn = at_least_one(sizes[n]) if reduced_n else balanced(sizes[n], cols_cap, align)
    rows_cap = smin(4 * side, floor_div(sympy.Integer(side * side), tn))
    if device.shared_gemm:  # BLAS's threads share each gemm: no share per core
        row_tiles = smax(1, ceildiv(sizes[m], rows_cap))
    else:
        cores = sympy.Integer(device.cube_cores)
        shared = cores * ceildiv(sizes[m], cores * rows_cap)
        least = least_rows(sizes[k], tn, element_bytes)
        row_tiles = smax(1, ceildiv(sizes[m], rows_cap), smin(shared, ceildiv(sizes[m], least)))
    tm = at_least_one(smin(sizes[m], smax(align, ceildiv(sizes[m], row_tiles))))
    # what the output tiles leave, for the two operand tiles (tm + tn) x tk
    # (a grouped matmul's: tm x tk and groups x tk x tn, beside its bias and sizes)
    if groups == 1:  # (put together as sympy would, without flattening: `total`)
        outputs = product(sympy.Integer(-out_tiles), tm, tn)
        k_cap = floor_div(total(sympy.Integer(budget), outputs), total(tm, tn))
    else:
        k_cap = floor_div(budget - out_tiles * tm * tn - groups * (tn + 4), tm + groups * tn)
    unit = sympy.Integer(align)
    return tm, tn, smax(align, product(unit, floor_div(k_cap, unit)))


def least_rows(k: sympy.Expr, tn: sympy.Expr, element_bytes: int) -> sympy.Expr:
    """The fewest rows a matmul's row tile holds when the work is split: a row of A
    (k elements) and of the output tile (tn) take SMALL_WORK_BYTES together."""
    row = smax(1, total(k, tn))
    return smax(1, floor_div(sympy.Integer(SMALL_WORK_BYTES // element_bytes), row))


def balanced(size: sympy.Expr, cap: sympy.Expr | int, align: int) -> sympy.Expr:
    """Equal tiles of at most `cap` (a multiple of `align`) along an axis:
    ceiling(size/cap) of them, each rounded up to the alignment (or the
    whole axis). Equal tiles have no short tail tile, which costs as much
    per call as a full one."""
    parts = smax(1, ceildiv(size, sympy.sympify(cap)))
    each = product(sympy.Integer(align), ceildiv(ceildiv(size, parts), sympy.Integer(align)))
    return at_least_one(smin(size, each))


def fit(budget: sympy.Expr, size: sympy.Expr, align: int, innermost: bool) -> sympy.Expr:
    return aligned(budget, size, align) if innermost else at_least_one(smin(size, budget))


def finish(domain: Domain, tiles: list[sympy.Expr], chunked: list[int]) -> TilePlan:
    """Give the parallel axes grid axes (innermost three) or loops, and the
    chunked axes loops."""
    parallel = domain.parallel
    plan = TilePlan(tiles, ["whole"] * len(tiles))
    gridded = parallel[-MAX_GRID_AXES:]
    plan.gridded = gridded
    for g, axis in enumerate(gridded):
        plan.index[axis] = f"grid{g}"
        plan.grid.append(ceildiv(domain.sizes[axis], tiles[axis]))
    if not plan.grid:
        plan.grid.append(sympy.Integer(1))
    plan.batch_loops = [a for a in parallel if a not in gridded]
    for axis in plan.batch_loops:
        tiles[axis] = sympy.Integer(1)  # walked one at a time
    plan.chunk_loops = chunked
    for level, axis in enumerate([*plan.batch_loops, *chunked]):
        plan.index[axis] = f"loop{level}"
    return plan
