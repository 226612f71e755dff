"""The tile level: tiled kernels compute what the programs mean, and the
tiling function keeps its promises.

Differential: every shared example, lowered through
`symbolic-shapes,fuse,stack,convert-tensor-to-tile{device=D}` for both
device presets, runs on the tile interpreter and matches `reference.py` on
shapes with dims of 0, 1, primes and large ones -- large enough that the
ascend910b preset cuts the parallel work into many tiles and walks long
reduced axes (a LayerNorm row of 30011 floats, a matmul's K of 257) in
several chunks. While they run, every launched kernel's live tiles are
measured at the real shapes and must fit the device's local memory.

Units: for concrete sizes (0, 1, primes, large) and both presets, the tiling
function's plans fit local memory, align the innermost tile unless it is
whole, give every core a tile when the shape allows, and cover every axis
exactly (tails included).
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
import sympy
from conftest import EXAMPLES_DIR, load_reference
from test_conformance import TOLERANCES, as_tuple, run_reference
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import VerifyException

import dvm
import dvm.pipeline
from dvm import tile_interpreter
from dvm.dialects import tile
from dvm.dialects.expr import symbol
from dvm.dialects.tensor import KernelKind, KernelKindAttr
from dvm.ir import make_context
from dvm.lowering.tensor_to_tile import DEVICES, Lifetimes, element_bytes
from dvm.lowering.tiling import (
    SMALL_WORK_BYTES,
    TilePlan,
    matmul_budget,
    matmul_tiles,
    plan_matmul_tiles,
    plan_vector_tiles,
    rows_fit,
    whole_k_always_fits,
    whole_k_fits,
)
from dvm.passes import PASSES
from dvm.passes.domain import Domain
from dvm.passes.symbolic import CORES, conditions_hold
from dvm.vm.device import DeviceSpec

PRESETS = tuple(DEVICES)
"""Device presets: "host" (the machine running the VM) and "ascend910b"."""


def pipeline(device: str) -> str:
    return f"symbolic-shapes,fuse,stack,convert-tensor-to-tile{{device={device}}}"


# -- differential: every example through tiles ---------------------------------

DRAWS: dict[str, list[dict[str, int]]] = {
    # Rows of 30011 and 40009 floats need 3 chunks on the ascend910b preset
    # (13920 floats per chunk) and 2 on a host with 512 KiB per core; 2003
    # rows make 48 tiles there.
    "layernorm.mlir": [
        {"R": 0, "C": 5},
        {"R": 3, "C": 0},
        {"R": 1, "C": 1},
        {"R": 97, "C": 13},
        {"R": 2003, "C": 31},
        {"R": 3, "C": 30011},
        {"R": 2, "C": 40009},
    ],
    "softmax.mlir": [{"B": 0, "S": 7}, {"B": 1, "S": 1}, {"B": 7, "S": 313}, {"B": 3, "S": 2003}],
    "gelu.mlir": [{"R": 0, "C": 7}, {"R": 1, "C": 1}, {"R": 61, "C": 1009}, {"R": 2, "C": 30011}],
    # K = 257 is 3 chunks of 96 (ascend910b) or 2 of 160 (host); K = 0 sums nothing.
    "matmul.mlir": [
        {"M": 0, "K": 5, "N": 3},
        {"M": 3, "K": 0, "N": 5},
        {"M": 1, "K": 1, "N": 1},
        {"M": 131, "K": 257, "N": 97},
        {"M": 389, "K": 13, "N": 211},
    ],
    "addmm_relu.mlir": [
        {"M": 5, "K": 0, "N": 3},
        {"M": 1, "K": 1, "N": 1},
        {"M": 131, "K": 257, "N": 97},
    ],
    "if_else_add.mlir": [
        {"R": 0, "C": 3},
        {"R": 1, "C": 1},
        {"R": 31, "C": 17},
        {"R": 523, "C": 97},
    ],
    # A column of 20011 floats is several chunks; C = 0 and R = 0 are empty.
    "column_stats.mlir": [
        {"R": 0, "C": 5},
        {"R": 5, "C": 0},
        {"R": 1, "C": 1},
        {"R": 20011, "C": 7},
        {"R": 13, "C": 1009},
    ],
    "mixed_precision.mlir": [{"R": 0}, {"R": 1}, {"R": 3001}],
    "residual_loop.mlir": [
        {"M": 0, "K": 3},
        {"M": 1, "K": 1},
        {"M": 17, "K": 13},
        {"M": 64, "K": 131},
    ],
    "bert_layer.mlir": [{"B": 1, "S": 1}, {"B": 2, "S": 0}, {"B": 2, "S": 37}, {"B": 1, "S": 97}],
    "mmoe.mlir": [{"B": 0, "E": 3}, {"B": 1, "E": 1}, {"B": 97, "E": 5}, {"B": 3, "E": 3001}],
}
INDEX_VALUES = (2, 0, 1, 3)
"""Trip counts for `index` arguments (residual_loop), by draw."""


def tolerances(dtype: np.dtype[Any], dims: dict[str, int]) -> tuple[float, float]:
    """(rtol, atol): the dtype's, with atol grown like the rounding error of a
    float32 sum of the longest dim (chunked sums add in another order than
    numpy's pairwise ones)."""
    rtol, atol = TOLERANCES[dtype]
    longest = max([1, *dims.values()])
    return rtol, atol * math.sqrt(longest)


def _cases() -> list[Any]:
    if not EXAMPLES_DIR.is_dir():  # the test itself skips, through the fixture
        return [pytest.param("missing", "host", id="examples-missing")]
    files = sorted(load_reference().EXAMPLES)
    return [pytest.param(f, d, id=f"{Path(f).stem}-{d}") for f in files for d in PRESETS]


@cache
def lowered(path: Path, device: str) -> ModuleOp:
    module = dvm.parse(path)
    PassPipeline.parse_spec(PASSES, pipeline(device)).apply(make_context(), module)
    module.verify()
    return module


@dataclass
class Launch:
    kernel: str
    peak: int
    """The most bytes of tiles alive at once, at the launch's real shapes."""
    cube: bool = False
    """Whether the kernel has an mma (its tiles live in the cube memory)."""


@pytest.fixture
def launches(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Launch]]:
    """Every kernel the tile interpreter launches while the test runs, with
    the peak bytes of its live tiles (each rounded up to the alignment)."""
    seen: list[Launch] = []
    real_launch = tile_interpreter.launch

    def measured(
        kernel: tile.KernelOp, inputs: Sequence[Any], cores: int | None = None, known: Any = None
    ) -> list[Any]:
        cube = kernel.kind.data != "vector"
        seen.append(Launch(kernel.sym_name.data, peak_live_bytes(kernel, inputs), cube))
        return real_launch(kernel, inputs, cores, known)

    monkeypatch.setattr(tile_interpreter, "launch", measured)
    yield seen


def test_lowering_covers_every_example(examples_dir: Path, reference: Any) -> None:
    assert set(DRAWS) == set(reference.EXAMPLES)


def test_kernel_kind_is_an_enum_attribute() -> None:
    kernel = tile.KernelOp("k", "cube", [1], [], 0)
    assert kernel.kind == KernelKindAttr(KernelKind.CUBE)
    assert kernel.kind.data is KernelKind.CUBE
    assert str(kernel).startswith("tile.kernel @k cube grid [1] outputs 0 ()")
    with pytest.raises(ValueError, match="scalar"):
        tile.KernelOp("k", "scalar", [1], [], 0)


@pytest.mark.parametrize(("file", "device"), _cases())
def test_tiled_example_matches_reference(
    file: str, device: str, examples_dir: Path, reference: Any, launches: list[Launch]
) -> None:
    name, spec, fn = reference.EXAMPLES[file]
    module = lowered(examples_dir / file, device)
    assert not any(op.name == "tensor.fusion" for op in module.walk()), "a kernel was not lowered"
    memory = DEVICES[device]().memory_bytes
    for draw, dims in enumerate(DRAWS[file]):
        rng = np.random.default_rng(draw)
        args = reference.make_inputs(spec, dims, rng, index_value=INDEX_VALUES[draw % 4])
        expected = run_reference(file, fn, args)
        launches.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the interpreters must not leak numpy warnings
            actual = as_tuple(dvm.interpret(module, *args, entry=name))
        assert len(actual) == len(expected)
        for i, (got, want) in enumerate(zip(actual, expected, strict=True)):
            want = np.asarray(want)
            where = f"{dims} result {i}"
            assert got.shape == want.shape, f"{where}: shape {got.shape} != {want.shape}"
            assert got.dtype == want.dtype, f"{where}: dtype {got.dtype} != {want.dtype}"
            rtol, atol = tolerances(want.dtype, dims)
            np.testing.assert_allclose(got, want, rtol, atol, equal_nan=True, err_msg=where)
        too_big = [launch for launch in launches if launch.peak > memory(launch.cube)]
        assert not too_big, f"{dims}: live tiles exceed the local (or cube) memory: {too_big}"


def test_large_shapes_use_many_tiles_and_chunks(examples_dir: Path, launches: list[Launch]) -> None:
    """The large draws do what they are there for on ascend910b: a LayerNorm
    row of 30011 floats is walked in 3 chunks, 2003 rows fill the 48 cores."""
    module = lowered(examples_dir / "layernorm.mlir", "ascend910b")
    kernels = {k.sym_name.data: k for k in module.ops if isinstance(k, tile.KernelOp)}
    rng = np.random.default_rng(0)

    def launched(rows: int, cols: int) -> tuple[tile.KernelOp, tile_interpreter.KernelRun]:
        launches.clear()
        args = [rng.standard_normal(s).astype(np.float32) for s in [(rows, cols), (cols,), (cols,)]]
        dvm.interpret(module, *args)
        (launch,) = launches
        kernel = kernels[launch.kernel]
        return kernel, tile_interpreter.kernel_run(kernel, args)

    kernel, run = launched(3, 30011)
    loops = [op for op in kernel.walk() if isinstance(op, tile.ForOp)]
    assert len(loops) == 3, "three phases: mean, variance, output"
    assert all(run.eval(op.count.data) == 3 for op in loops)
    # enough rows and data (2003 x 401 floats) for every core's share to hold
    # SMALL_WORK_BYTES: every core gets a tile
    kernel, run = launched(2003, 401)
    grid = [run.eval(g) for g in kernel.grid.data]
    assert math.prod(grid) >= DeviceSpec.ascend910b().vector_cores
    # little data (2003 x 3): fewer, bigger tiles
    kernel, run = launched(2003, 3)
    grid = [run.eval(g) for g in kernel.grid.data]
    assert math.prod(grid) == -(-2003 // (SMALL_WORK_BYTES // 4 // 3))


def rising_product(rounds: int) -> str:
    """p times c, then c + 1, for each of `rounds` rounds while c < k (lgamma's
    recurrence, as torch's importer writes it). Emitted depth first from the output p,
    the masks would take the whole counter chain's tiles before the first product."""
    f64, mask, scalar = "tensor<?xf64>", "tensor<?xi1>", "tensor<f64>"
    lines, p, c = [], "%one", "%x"
    for i in range(rounds):
        lines += [
            f"%m{i} = tensor.lt {c}, %k : ({f64}, {scalar}) -> {mask}",
            f"%q{i} = tensor.mul {p}, {c} : ({f64 if i else scalar}, {f64}) -> {f64}",
            f"%p{i} = tensor.select %m{i}, %q{i}, {p} : ({mask}, {f64}, {f64 if i else scalar})"
            f" -> {f64}",
            f"%s{i} = tensor.add {c}, %one : ({f64}, {scalar}) -> {f64}",
            f"%c{i} = tensor.select %m{i}, %s{i}, {c} : ({mask}, {f64}, {f64}) -> {f64}",
        ]
        p, c = f"%p{i}", f"%c{i}"
    body = "\n  ".join(lines)
    return f"""func.func @rising(%x: {f64}, %k: {scalar}, %one: {scalar}) -> ({f64}, {f64}) {{
  {body}
  func.return {p}, {c} : {f64}, {f64}
}}"""


@pytest.mark.parametrize("device", PRESETS)
def test_a_kernel_emitted_in_its_fusions_order_fits_its_tiles(
    device: str, launches: list[Launch]
) -> None:
    """Tiles are sized by the bytes the fusion's values hold at once in its order, so
    the kernel is emitted in that order: the rising product's tiles fit the local
    memory at a size whose tiles take all of it, and give numpy's results."""
    text = rising_product(8)
    module = dvm.parse(text)
    PassPipeline.parse_spec(PASSES, pipeline(device)).apply(make_context(), module)
    x = np.random.default_rng(0).uniform(0.1, 10.0, 300_007)
    k, one = np.float64(7.5), np.float64(1.0)
    p, c = np.ones_like(x), x.copy()
    for _ in range(8):
        below = c < k
        p, c = np.where(below, p * c, p), np.where(below, c + 1, c)
    got = dvm.interpret(module, x, k, one)
    too_big = [launch for launch in launches if launch.peak > DEVICES[device]().memory_bytes(False)]
    assert not too_big, f"live tiles exceed the local memory: {too_big}"
    compiled = dvm.compile(text, device=device)(x, k, one)
    for results in (got, compiled):
        np.testing.assert_allclose(results[0], p, rtol=1e-12)
        np.testing.assert_array_equal(results[1], c)


BESIDE = """
func.func @beside(%q: tensor<?xf32>, %x: tensor<?xf32>)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?x?xf32>, tensor<f32>) {
  %yq = tensor.abs %q : tensor<?xf32>
  %yx = tensor.abs %x : tensor<?xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %q, %c0 : tensor<?xf32>
  %qe = tensor.expand_shape %q [[0, 1]] output_shape [%n, 1] : tensor<?xf32> into tensor<?x1xf32>
  %o = tensor.add %qe, %x : (tensor<?x1xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %m = tensor.reduce_max %o {axes = [0, 1]} : tensor<?x?xf32> -> tensor<f32>
  func.return %yq, %yx, %o, %m : tensor<?xf32>, tensor<?xf32>, tensor<?x?xf32>, tensor<f32>
}
"""


@pytest.mark.parametrize("device", PRESETS)
def test_outputs_beside_an_empty_reduced_axis_are_stored(device: str) -> None:
    """Outputs fused with a reduction over more axes than they span (|q| and |x|
    beside the max of q[:, None] + x) are written by the chunked kernel when an
    axis they do not span is empty: stored in a loop over it, they never would be."""
    module = dvm.parse(BESIDE)
    PassPipeline.parse_spec(PASSES, pipeline(device)).apply(make_context(), module)
    kernels = {k.sym_name.data: k for k in module.ops if isinstance(k, tile.KernelOp)}
    kernel = kernels["beside_k0"]
    rng = np.random.default_rng(0)
    for rows, cols in [(0, 5), (5, 0), (3, 4)]:
        q, x = (rng.standard_normal(n).astype(np.float32) + 1 for n in (rows, cols))
        yq, yx, o, m = tile_interpreter.launch(kernel, [q, x])
        np.testing.assert_array_equal(yq, np.abs(q))
        np.testing.assert_array_equal(yx, np.abs(x))
        np.testing.assert_array_equal(o, q[:, None] + x)
        assert m == (o.max() if o.size else -np.inf)


def test_lifetimes_sum_the_values_alive_at_each_op() -> None:
    """A value is alive at op i when it is made before it and used by it or later (an
    input is made at -1, an output used past the last op)."""
    ops: list[Any] = ["op0", "op1", "op2"]
    made, last_use = {"a": -1, "b": 0, "c": 1}, {"a": 1, "b": 3, "c": 2}
    life = Lifetimes(ops, made, last_use)  # type: ignore[arg-type]
    sizes: dict[Any, int] = {"a": 4, "b": 2, "c": 1}
    alive = [sum(n for v, n in sizes.items() if made[v] < i <= last_use[v]) for i in range(4)]
    assert life.held(sizes) == alive == [4, 6, 3, 2]


# -- measuring live tiles ------------------------------------------------------------


def peak_live_bytes(kernel: tile.KernelOp, inputs: Sequence[Any]) -> int:
    """The most bytes of tiles alive at one point of the kernel body.

    Ops are numbered in program order (a loop's body inside the loop). A
    value lives from its definition to its last use; a use inside a loop the
    value was defined outside of keeps it alive to the end of that loop. Each
    tile takes its largest extents, rounded up to the device alignment of 32.
    """
    run = tile_interpreter.kernel_run(kernel, inputs)
    order: list[Operation] = []
    end: dict[Operation, int] = {}

    def number(op: Operation) -> None:
        order.append(op)
        for region in op.regions:
            for block in region.blocks:
                for inner in block.ops:
                    number(inner)
        end[op] = len(order) - 1

    for op in kernel.body.block.ops:
        number(op)
    position = {op: i for i, op in enumerate(order)}

    def size(value: SSAValue) -> int:
        assert isinstance(value.type, tile.TileType)
        extents = [run.eval(e) for e in value.type.extents]
        nbytes = math.prod(extents) * element_bytes(value.type.element_type)
        return -(-nbytes // 32) * 32

    def last_use(value: SSAValue, defined: int) -> int:
        last = defined
        for use in value.uses:
            user: Operation | None = use.operation
            until = position[use.operation]
            while user is not None and user is not kernel:
                if isinstance(user, tile.ForOp) and not position[user] <= defined <= end[user]:
                    until = end[user]  # the loop needs the value on every iteration
                user = user.parent_op()
            last = max(last, until)
        return last

    intervals: list[tuple[int, int, int]] = []
    for op in order:
        values: list[tuple[SSAValue, int]] = [(r, end[op]) for r in op.results]
        if isinstance(op, tile.ForOp):
            values += [(a, position[op]) for a in op.body.block.args]
        for value, defined in values:
            if isinstance(value.type, tile.TileType):
                intervals.append((defined, last_use(value, defined), size(value)))
    return max(
        (sum(b for d, last, b in intervals if d <= i <= last) for i in range(len(order))),
        default=0,
    )


# -- units: the tiling function ---------------------------------------------------------

SIZES = (0, 1, 2, 7, 13, 97, 193, 1009, 30011, 1_000_003)
"""0, 1, primes, and sizes far beyond one tile."""

R, C, D = symbol("r"), symbol("c"), symbol("d")


@dataclass(frozen=True)
class VectorCase:
    name: str
    domain: Callable[[], Domain]
    live_bytes: int = 12
    element_bytes: int = 4


VECTOR_CASES = [
    VectorCase("rows", lambda: Domain([R, C], frozenset({1}))),
    VectorCase("columns", lambda: Domain([R, C], frozenset({0}))),
    VectorCase("all", lambda: Domain([R, C], frozenset({0, 1}))),
    VectorCase("elementwise", lambda: Domain([R, C])),
    VectorCase("flat", lambda: Domain([R]), live_bytes=8),
    VectorCase("f16", lambda: Domain([R, C], frozenset({1})), live_bytes=6, element_bytes=2),
    VectorCase("batch-loop", lambda: Domain([D, R, sympy.Integer(4), C])),
    VectorCase("middle", lambda: Domain([R, D, C], frozenset({1})), live_bytes=16),
]


INTEGER_MATH = {"ceiling": math.ceil, "floor": math.floor, "Max": max, "Min": min}


def concrete(
    plan: TilePlan, domain: Domain, symbols: Sequence[sympy.Symbol]
) -> Callable[[dict[sympy.Symbol, int]], tuple[list[int], list[int], list[int]]]:
    """The plan's tile extents, grid and tile counts per axis (grid axes and
    loops) as a function of the sizes, compiled once: substituting into sympy
    for every draw would take seconds."""
    counts = [
        plan.grid[plan.gridded.index(a)]
        if a in plan.gridded
        else plan.trips(a, domain.sizes)
        if plan.index[a].startswith("loop")
        else sympy.Integer(1)
        for a in range(len(domain.sizes))
    ]
    compiled = sympy.lambdify(
        list(symbols), [plan.tiles, plan.grid, counts], [INTEGER_MATH, "math"]
    )

    def at(sizes: dict[sympy.Symbol, int]) -> tuple[list[int], list[int], list[int]]:
        tiles, grid, walked = compiled(*(sizes[s] for s in symbols))
        return [int(v) for v in tiles], [int(v) for v in grid], [int(v) for v in walked]

    return at


def size_draws(symbols: Sequence[sympy.Symbol]) -> list[dict[sympy.Symbol, int]]:
    """Each size in SIZES for each symbol against small and large others."""
    draws = []
    for s in symbols:
        for n in SIZES:
            for other in (3, 1009):
                draws.append({t: n if t is s else other for t in symbols})
    return draws


def check_tails(plan: TilePlan, tiles: list[int], counts: list[int], sizes: list[int]) -> None:
    """Along every walked axis, `count` tiles of `tile` elements, the last
    one cut at the axis's end, cover it exactly: no tile is empty (so none
    reads past the end) and no element is left out. A `whole` axis is one
    tile spanning it."""
    for axis, (walker, tile_size, count, n) in enumerate(
        zip(plan.index, tiles, counts, sizes, strict=True)
    ):
        assert tile_size >= 1, (axis, tiles)
        if walker == "whole":
            assert tile_size == max(n, 1), (axis, tiles)
        elif n == 0:
            assert count == 0, (axis, count)
        else:
            assert (count - 1) * tile_size < n <= count * tile_size, (axis, tile_size, count, n)


def achievable_tiles(plan: TilePlan, sizes: list[int], align: int, innermost: int) -> int:
    """How many tiles the gridded axes could give, with an aligned innermost tile."""
    counts = [-(-sizes[a] // align) if a == innermost else sizes[a] for a in plan.gridded]
    return math.prod(counts)


@pytest.mark.parametrize("device", PRESETS)
@pytest.mark.parametrize(
    ("case", "whole_rows"),
    [
        pytest.param(c, rows, id=f"{c.name}-{'whole-rows' if rows else 'chunks'}")
        for c in VECTOR_CASES
        for rows in (False, True)
        if c.domain().reduced or not rows  # whole rows are for kernels with reductions
    ],
)
def test_vector_tiling(device: str, case: VectorCase, whole_rows: bool) -> None:
    spec = DEVICES[device]()
    domain = case.domain()
    plan = plan_vector_tiles(domain, case.live_bytes, case.element_bytes, spec, whole_rows)
    condition = rows_fit(domain, case.live_bytes, spec, case.element_bytes) if whole_rows else None
    align = spec.alignment // case.element_bytes
    n = len(domain.sizes)
    symbols = [s for s in (R, C, D) if any(d.has(s) for d in domain.sizes)]
    evaluate = concrete(plan, domain, [*symbols, CORES])
    checked = 0
    for draw in size_draws(symbols):
        if condition is not None and not conditions_hold([condition], draw):
            continue
        checked += 1
        sizes = [int(cast(sympy.Integer, d.xreplace(draw))) for d in domain.sizes]
        counted = []
        for cores in (spec.vector_cores, 1):  # planned, and a first launch on one core
            tiles, grid, counts = evaluate({**draw, CORES: cores})
            where = f"{device} {case.name} sizes {sizes}, {cores} cores: tiles {tiles}, grid {grid}"
            # The kernel's live tiles (live_bytes per domain element) fit local memory.
            assert math.prod(tiles) * case.live_bytes <= spec.local_memory_bytes, where
            inner = tiles[n - 1]
            assert inner % align == 0 or inner == sizes[n - 1] or sizes[n - 1] == 0, where
            assert grid == ([-(-sizes[a] // tiles[a]) for a in plan.gridded] or [1]), where
            counted.append(math.prod(grid))
            # every core gets a tile, as long as each share holds SMALL_WORK_BYTES
            work = math.prod(sizes[a] for a in plan.gridded)
            row = math.prod(max(sizes[a], 1) for a in domain.reduced)
            least = max(1, SMALL_WORK_BYTES // case.element_bytes // row)
            shares = max(1, work // least)
            wanted = min(cores, achievable_tiles(plan, sizes, align, n - 1), shares)
            assert counted[-1] >= wanted, f"{where}: {counted[-1]} tiles for {wanted} cores"
            check_tails(plan, tiles, counts, sizes)
        assert counted[1] <= counted[0], f"{where}: more tiles for one core than for all"
    assert checked, "no draw met the whole-rows condition"


MATMUL_CASES = {
    # domain (M, N, K), contraction K; m, n are the output's axes
    "2d": (lambda: Domain([R, C, D], contraction=2), 0, 1),
    "batched": (lambda: Domain([sympy.Integer(4), R, C, D], contraction=3), 1, 2),
}


@pytest.mark.parametrize("device", PRESETS)
@pytest.mark.parametrize("case", sorted(MATMUL_CASES))
@pytest.mark.parametrize("out_tiles", [2, 4])
@pytest.mark.parametrize("whole_k", [False, True], ids=["chunks", "whole-k"])
def test_matmul_tiling(device: str, case: str, out_tiles: int, whole_k: bool) -> None:
    spec = DEVICES[device]()
    make, m, n = MATMUL_CASES[case]
    domain = make()
    k = domain.contraction
    assert k is not None
    plan = plan_matmul_tiles(domain, m, n, out_tiles, 4, spec, whole_k)
    condition = whole_k_fits(domain, m, n, out_tiles, 4, spec) if whole_k else None
    align = spec.alignment // 4
    assert (not plan.chunk_loops) == whole_k  # whole K: no K loop, one mma per tile
    evaluate = concrete(plan, domain, [R, C, D, CORES])
    checked = 0
    for draw in size_draws([R, C, D]):
        if condition is not None and not conditions_hold([condition], draw):
            continue
        checked += 1
        sizes = [int(cast(sympy.Integer, d.xreplace(draw))) for d in domain.sizes]
        counted = []
        for cores in (spec.cube_cores, 1):  # planned, and a first launch on one core
            tiles, grid, counts = evaluate({**draw, CORES: cores})
            where = f"{device} {case} sizes {sizes}, {cores} cores: tiles {tiles}, grid {grid}"
            check_matmul_tiles(plan, spec, (m, n, k), out_tiles, sizes, tiles, where)
            # K is one chunk (no accumulation) whenever it fits beside the output tiles
            tm, tn, tk = tiles[m], tiles[n], tiles[k]
            budget = int(spec.memory_bytes(cube=True) * 0.85) // 4
            k_rounded = -(-sizes[k] // align) * align
            if (tm + tn) * k_rounded + out_tiles * tm * tn <= budget:
                assert tk == max(sizes[k], 1), where
                assert condition is None or conditions_hold([condition], draw), where
            check_tails(plan, tiles, counts, sizes)
            counted.append(math.prod(grid))
        assert counted[1] <= counted[0], f"{where}: more tiles for one core than for all"
    assert checked, "no draw met the whole-K condition"


def check_matmul_tiles(
    plan: TilePlan,
    spec: DeviceSpec,
    axes: tuple[int, int, int],
    out_tiles: int,
    sizes: list[int],
    tiles: list[int],
    where: str,
) -> None:
    """What every matmul tile plan must hold, at concrete sizes."""
    m, n, k = axes
    tm, tn, tk = tiles[m], tiles[n], tiles[k]
    align = spec.alignment // 4
    # the operand and output tiles of the stack of matrices a tile multiplies fit
    # the cube memory together
    budget = int(spec.memory_bytes(cube=True) * 0.85) // 4
    stack = math.prod(t for a, t in enumerate(tiles) if a not in (m, n, k))
    assert stack * (tm * tk + tk * tn + out_tiles * tm * tn) <= budget, where
    for axis in (k, n):  # the innermost axes of the operand and result tiles
        assert tiles[axis] % align == 0 or tiles[axis] == sizes[axis] or sizes[axis] == 0, where
    if plan.chunk_loops:
        assert plan.index[k] == "loop0" and plan.chunk_loops == [k], where
    else:  # no K loop: one mma per tile
        assert plan.index[k] == "whole", where
    if spec.shared_gemm:  # BLAS's threads share each gemm: rows cut for the memory only
        _, _, side = matmul_budget(out_tiles, 4, spec)
        rows_cap = min(4 * side, side * side // tn)
        assert tm == max(1, sizes[m]) or 2 * tm >= rows_cap, where
        return
    # every core gets rows: a row tile is at most one core's share (rounded up),
    # or one alignment unit, or the least rows worth a tile (SMALL_WORK_BYTES of
    # A's and the output's rows)
    least = SMALL_WORK_BYTES // 4 // max(1, sizes[k] + tn)
    assert tm <= max(align, -(-sizes[m] // spec.cube_cores), least, 1), where


def test_remembered_matmul_tiles_follow_the_domain() -> None:
    """`matmul_tiles` is remembered by every part of the domain it reads: asked again it
    gives what it gave, and a domain whose columns are reduced (whole rows in a tile),
    or whose K is another axis, gets tiles of its own (on a device whose cube cores
    each take a share of the rows, which reads K)."""
    spec = DEVICES["ascend910b"]()
    plain = Domain([R, C, D], contraction=2)
    first = matmul_tiles(plain, 0, 1, 2, 4, spec)
    assert matmul_tiles(Domain([R, C, D], contraction=2), 0, 1, 2, 4, spec) == first
    reduced = matmul_tiles(
        Domain([R, C, D], reduced=frozenset({1}), contraction=2), 0, 1, 2, 4, spec
    )
    assert reduced[1] == sympy.Max(1, C) and first[1] != reduced[1]
    e = symbol("e")
    k_at_2 = matmul_tiles(Domain([R, C, D, e], contraction=2), 0, 1, 2, 4, spec)
    k_at_3 = matmul_tiles(Domain([R, C, D, e], contraction=3), 0, 1, 2, 4, spec)
    assert k_at_2 == first  # the row tile reads K's size (a row of A is K long)
    assert D in first[0].free_symbols and k_at_3[0].free_symbols == {R, C, e}


@pytest.mark.parametrize("device", PRESETS)
def test_a_stack_of_matmuls_shares_tiles(device: str) -> None:
    """A batch axis takes several matrices per tile: one tile for a small stack on one
    core (a first launch), a tile per core for a large one."""
    spec = DEVICES[device]()
    batch = symbol("batch")
    domain = Domain([batch, R, C, D], contraction=3)
    plan = plan_matmul_tiles(domain, 1, 2, 2, 4, spec, whole_k=True)
    evaluate = concrete(plan, domain, [batch, R, C, D, CORES])
    _, grid, _ = evaluate({batch: 6, R: 33, C: 64, D: 64, CORES: 1})
    assert grid == [1, 1, 1]
    _, grid, _ = evaluate({batch: 4096, R: 33, C: 64, D: 64, CORES: spec.cube_cores})
    assert math.prod(grid) >= spec.cube_cores


@pytest.mark.parametrize("device", PRESETS)
def test_a_static_k_that_always_fits_needs_no_variant(device: str) -> None:
    """A static K within the least room the tiles leave it is whole in every
    tile (the kernel has no K loop and no `tensor.choice`)."""
    spec = DEVICES[device]()
    for k, fits in [(32, True), (10**6, False), (D, False)]:
        domain = Domain([R, C, sympy.sympify(k)], contraction=2)
        assert whole_k_always_fits(domain, 2, 4, spec) is fits
        if fits:  # then the condition holds for any M, N
            condition = whole_k_fits(domain, 0, 1, 2, 4, spec)
            assert all(conditions_hold([condition], draw) for draw in size_draws([R, C]))


EMPTY_GRID = """
func.func @f(%x: tensor<0xf32>, %n: index) -> tensor<?x0xf32> {
  %r = tensor.broadcast_to %x to [%n, 0] : tensor<0xf32> -> tensor<?x0xf32>
  func.return %r : tensor<?x0xf32>
}
"""


def test_a_kernel_with_an_empty_body_prints_text_that_parses_back() -> None:
    """A kernel of a statically empty result has no op in its body: its printed
    form must not repeat the arguments as a `^bb0(...)` label, which the parser
    refuses after the arguments written in the header."""
    spec = "symbolic-shapes,fuse,stack,convert-tensor-to-tile{device=host}"
    module = dvm.pipeline.run(dvm.parse(EMPTY_GRID), spec)
    kernel = next(op for op in module.ops if isinstance(op, tile.KernelOp))
    assert not kernel.body.block.ops and len(kernel.body.block.args) == 2
    printed = str(module)
    assert "^bb0" not in printed
    reparsed = dvm.parse(printed)
    again = next(op for op in reparsed.ops if isinstance(op, tile.KernelOp))
    assert [a.type for a in again.body.block.args] == [a.type for a in kernel.body.block.args]
    got = dvm.interpret(reparsed, np.zeros(0, np.float32), 3)
    assert got.shape == (3, 0)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ('{op = "t", size = #dvm.expr<x_1>, k = 1 : i64, input = 1 : i64}', "needs `axis`"),
        ('{op = "t", size = 5 : i64, axis = 1 : i64, input = 1 : i64}', "`size`: an expression"),
        ('{op = "t", size = #dvm.expr<x_1>, axis = 1 : i64, input = 7 : i64}', "reads input 7"),
        ("[1]", "entry 0 must be a dictionary"),
    ],
)
def test_a_malformed_launch_check_is_a_verifier_error(entry: str, message: str) -> None:
    """A lowered module written by hand: the checks a launch carries are verified,
    rather than read blindly when the reference interpreter launches it."""
    program = f"""
tile.kernel @k vector grid [1] outputs 1 (%a: tensor<?x?xf32>, %i: tensor<2xi64>,
    %r: tensor<?x2xf32>) {{
}}
func.func @f(%x: tensor<?x?xf32>, %i: tensor<2xi64>) -> tensor<?x2xf32> {{
  %r = tile.launch @k(%x, %i) {{dvm.take_checks = [{entry}]}}
      : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x2xf32>
  func.return %r : tensor<?x2xf32>
}}
"""
    with pytest.raises(VerifyException, match=re.escape(message)):
        dvm.parse(program)
