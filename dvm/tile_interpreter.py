"""An interpreter for tile IR: runs each `tile.kernel` tile by tile with numpy.

It checks the tiling itself, before any bytecode exists: every tile is read
and written through its view with explicit index arithmetic (a read or
write outside an argument is an error, not a silent wrap), tails get their
real extents, and loops run their symbolic trip counts. `dvm.interpret`
uses it for the `tile.launch` ops of a lowered module, so the same call runs
every level.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, StringAttr
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Block, Operation, SSAValue

from dvm import numerics, vm
from dvm.arguments import numpy_dtype
from dvm.dialects import bytecode as bc
from dvm.dialects import tensor, tile
from dvm.dialects.expr import ExprAttr, ShapeAttr, symbol
from dvm.dialects.grouped_matmul import TileGroupedMmaOp, group_sizes_error
from dvm.dialects.index_ops import (
    OP_AXIS,
    OP_LABEL,
    PIECE_SIZES,
    TileIotaOp,
    TileScatterAddOp,
    TileTakeOp,
    index_error,
)
from dvm.dialects.scans import TileScanOp, TileTopKOp
from dvm.elementwise import ELEMENTWISE
from dvm.errors import ExecutionError, IndexOutOfRangeError, ShapeError
from dvm.index_checks import check_takes
from dvm.interpret_grouped_matmul import grouped_rows
from dvm.lowering.bytecode_to_vm import to_program
from dvm.lowering.grouped_matmul import GROUP_SIZES, read_group_size_checks
from dvm.lowering.tensor_to_tile import DEVICE, DEVICES, INDEX_DIMS
from dvm.lowering.tile_to_bytecode import check_runnable, dtype_name
from dvm.passes.errors import ProgramError
from dvm.passes.symbolic import CORES, shape_from_attr, substitute
from dvm.slice_checks import check_slices
from dvm.vm.kernels import scan_into
from dvm.vm.top_k import top_k_into

Array = np.ndarray[Any, Any]

TENSOR_OF: dict[type[Operation], type[Operation]] = {v: k for k, v in tile.MIRRORED.items()}
"""Tile op class -> the tensor op it mirrors (whose numpy meaning it shares)."""

REDUCE_KINDS = {cls: kind for kind, cls in tile.REDUCES.items()}


def bind_shape(
    symbols: dict[sympy.Symbol, int], declared: Sequence[sympy.Expr], actual: Sequence[int]
) -> None:
    for d, n in zip(declared, actual, strict=True):
        if isinstance(d, sympy.Symbol):
            symbols.setdefault(d, n)


@dataclass
class KernelRun:
    """One launch of a kernel: symbol values, and the loop/grid counters."""

    kernel: tile.KernelOp
    symbols: dict[sympy.Symbol, int]
    counters: dict[str, int] = field(default_factory=dict)
    values: dict[SSAValue, Any] = field(default_factory=dict)

    def eval(self, expr: sympy.Expr) -> int:
        value = substitute(expr, self.symbols)
        if not value.is_number:
            raise ExecutionError(f"@{self.kernel.sym_name.data}: {expr} is not known ({value})")
        return int(value)

    # -- the tile's position -------------------------------------------------------

    def span(self, size: int, tile_size: int, source: str) -> range:
        """The indices of the current tile along one dim."""
        if size < 0 or (tile_size < 1 and source != "whole"):  # (hand-written sizes)
            raise ExecutionError(
                f"@{self.kernel.sym_name.data}: a dim of size {size} in tiles of {tile_size}"
            )
        if source == "whole":
            return range(size)
        start = self.counters[source] * tile_size
        return range(start, min(start + tile_size, size))

    def extents(self, type_: tile.TileType) -> tuple[int, ...]:
        """The current extents of a tile of this type: its dims are the
        kernel's axes; a dim typed 1 stays 1, and one typed other than its axis's
        tile, or outside the loop that walks its axis (a top_k carry's k), is its own
        size."""
        axes = self.kernel.attributes["dvm.axes"]
        assert isinstance(axes, ArrayAttr)
        out = []
        for extent, axis in zip(type_.extents, axes.data, strict=True):
            assert isinstance(axis, tile.AxisAttr)
            walker = axis.walker.data
            outside = walker != "whole" and walker not in self.counters  # before its loop
            if extent == 1 or extent != axis.tile.data or outside:
                out.append(self.eval(extent))
                continue
            size, tile_size = self.eval(axis.size.data), self.eval(axis.tile.data)
            out.append(len(self.span(size, tile_size, axis.walker.data)))
        return tuple(out)

    def flat_indices(self, op: tile.ViewOp, target: Array) -> Array:
        view = op.view
        index = np.asarray(self.eval(view.offset), dtype=np.int64)
        rank = len(view.sizes)
        for d, (size, stride, tile_size, source) in enumerate(
            zip(view.sizes, view.strides, view.tiles, view.index, strict=True)
        ):
            span = self.span(self.eval(size), self.eval(tile_size), source)
            positions = np.arange(span.start, span.stop, dtype=np.int64)
            shape = [1] * rank
            shape[d] = len(positions)
            index = index + (positions * self.eval(stride)).reshape(shape)
        if index.size and (index.min() < 0 or index.max() >= target.size):
            raise ExecutionError(
                f"@{self.kernel.sym_name.data}: {op.name} reaches element {int(index.max())} "
                f"of an argument with {target.size} elements"
            )
        return index

    # -- running ops -------------------------------------------------------------------

    def run(self, block: Block, args: Sequence[Any] | None = None) -> list[Any]:
        """Run a block (binding its arguments to `args`, if given); return what it yields."""
        for arg, value in zip(block.args, args or (), strict=args is not None):
            self.values[arg] = value
        for op in block.ops:
            if isinstance(op, tile.YieldOp):
                return [self.values[v] for v in op.values]
            results = self.step(op)
            for r, value in zip(op.results, results, strict=True):
                self.values[r] = value
        return []

    def step(self, op: Operation) -> list[Any]:
        handler = HANDLERS.get(type(op))
        if handler is not None:
            return handler(self, op)
        cls = TENSOR_OF.get(type(op))
        if cls is None:
            raise ExecutionError(f"the tile interpreter cannot run {op.name}")
        args = [self.values[v] for v in op.operands]
        dtype = numpy_dtype(tile_element(op.results[0]))
        if cls is tensor.ConvertOp:
            return [numerics.convert(args[0], dtype)]
        if cls is tensor.SelectOp:
            return [np.where(*args).astype(dtype)]
        fn = ELEMENTWISE[cls]
        return [np.asarray(fn(*args)).astype(dtype, copy=False)]


def tile_element(value: SSAValue) -> Any:
    assert isinstance(value.type, tile.TileType)
    return value.type.element_type


def load(run: KernelRun, op: Operation) -> list[Any]:
    assert isinstance(op, tile.LoadOp)
    source = run.values[op.source].reshape(-1)
    return [source[run.flat_indices(op, source)]]


def store(run: KernelRun, op: Operation) -> list[Any]:
    assert isinstance(op, tile.StoreOp)
    dest = run.values[op.dest].reshape(-1)
    index = run.flat_indices(op, dest)
    value = np.broadcast_to(run.values[op.value], index.shape)
    combine = {"add": np.add, "max": np.maximum, "min": np.minimum}.get(op.accumulation)
    if combine is None:
        dest[index] = value
    else:
        combine.at(dest, index, value)
    return []


def constant(run: KernelRun, op: Operation) -> list[Any]:
    assert isinstance(op, tile.ConstantOp)
    assert isinstance(op.result.type, tile.TileType)
    dtype = numpy_dtype(op.result.type.element_type)
    value = op.value
    raw: Any = run.eval(value.data) if isinstance(value, ExprAttr) else value.value.data
    if isinstance(value, IntegerAttr) and dtype == np.bool_:
        raw = bool(raw)
    return [np.full(run.extents(op.result.type), raw, dtype=dtype)]


def broadcast(run: KernelRun, op: Operation) -> list[Any]:
    """A dim the input spans keeps its extent (a fused concat's piece has its own along
    the axis), as the VM's `broadcast` does."""
    assert isinstance(op, tile.BroadcastOp) and isinstance(op.result.type, tile.TileType)
    assert isinstance(op.input.type, tile.TileType)
    x = run.values[op.input]
    pairs = zip(op.input.type.extents, op.result.type.extents, strict=True)
    spanned = [a == b != 1 for a, b in pairs]
    extents = piece_extents(run, op, op.result.type)
    shape = [n if kept else e for n, kept, e in zip(x.shape, spanned, extents, strict=True)]
    return [np.broadcast_to(x, shape).copy()]


def piece_extents(run: KernelRun, op: Operation, type_: tile.TileType) -> list[int]:
    """The current extents of a tile of `type_` that `op` makes: in a fused piece
    (`PIECE_SIZES`), along the piece's own sizes, not the result's."""
    extents = list(run.extents(type_))
    piece = op.attributes.get(PIECE_SIZES)
    if not isinstance(piece, ShapeAttr):
        return extents
    axes = run.kernel.attributes["dvm.axes"]
    assert isinstance(axes, ArrayAttr)
    for d, (extent, axis) in enumerate(zip(type_.extents, axes.data, strict=True)):
        assert isinstance(axis, tile.AxisAttr)
        if extent != 1:
            tile_size = run.eval(axis.tile.data)
            extents[d] = len(run.span(run.eval(piece.data[d]), tile_size, axis.walker.data))
    return extents


def reduce(run: KernelRun, op: Operation) -> list[Any]:
    assert isinstance(op, tile.TileReduceOp)
    kind = REDUCE_KINDS[type(op)]
    return [numerics.reduce(kind, run.values[op.input], op.reduced_axes, keepdims=True)]  # type: ignore[arg-type]


def mma(run: KernelRun, op: Operation) -> list[Any]:
    assert isinstance(op, tile.MmaOp)
    a, b, acc = (run.values[v] for v in op.operands)
    return [acc + numerics.matmul(a, b, *op.flags)]


def grouped_mma(run: KernelRun, op: Operation) -> list[Any]:
    """Each row of the tile times its group's matrix: the tile's rows start where the
    current tile of the op's view of the rows starts."""
    assert isinstance(op, TileGroupedMmaOp)
    a, b, sizes = (run.values[v] for v in op.operands[:3])
    view = op.view
    rows = run.eval(view.sizes[0])
    start = run.span(rows, run.eval(view.tiles[0]), view.index[0]).start
    label = f"@{run.kernel.sym_name.data}: {op.name}"
    return [grouped_rows(label, a, b, sizes, start, rows)]


def loop(run: KernelRun, op: Operation) -> list[Any]:
    assert isinstance(op, tile.ForOp)
    carried = [run.values[v] for v in op.inits]
    source = f"loop{op.level.value.data}"
    for i in range(run.eval(op.count.data)):
        run.counters[source] = i
        carried = run.run(op.body.block, carried)
    run.counters.pop(source, None)  # past the loop, its axis has no current tile
    return carried


def iota(run: KernelRun, op: Operation) -> list[Any]:
    """The global index along the tile dim's kernel axis, converted as the VM converts."""
    assert isinstance(op, TileIotaOp) and isinstance(op.result.type, tile.TileType)
    axes = run.kernel.attributes["dvm.axes"]
    assert isinstance(axes, ArrayAttr)
    axis = axes.data[op.dim]
    assert isinstance(axis, tile.AxisAttr)
    piece = op.attributes.get(PIECE_SIZES)  # a fused piece's own sizes
    length = piece.data[op.dim] if isinstance(piece, ShapeAttr) else axis.size.data
    span = run.span(run.eval(length), run.eval(axis.tile.data), axis.walker.data)
    shape = piece_extents(run, op, op.result.type)
    along = [len(span) if d == op.dim else 1 for d in range(len(shape))]
    index = np.arange(span.start, span.stop, dtype=np.int64).reshape(along)
    dtype = numpy_dtype(op.result.type.element_type)
    return [np.broadcast_to(numerics.convert(index, dtype), shape).copy()]


def take(run: KernelRun, op: Operation) -> list[Any]:
    """The view's tile (its last dim the indexed one), each element's index taken,
    once every index is inside that dim."""
    assert isinstance(op, TileTakeOp)
    source = run.values[op.source].reshape(-1)
    index = run.flat_indices(op, source)
    label, axis = op.attributes[OP_LABEL], op.attributes[OP_AXIS]
    assert isinstance(label, StringAttr) and isinstance(axis, IntegerAttr)
    indices = np.broadcast_to(run.values[op.indices], index.shape[:-1])
    error = index_error(label.data, indices, index.shape[-1], axis.value.data)
    if error is not None:
        raise IndexOutOfRangeError(error)
    picked = np.take_along_axis(index, indices[..., None].astype(np.int64), axis=-1)
    return [source[picked[..., 0]]]


def scatter_add(run: KernelRun, op: Operation) -> list[Any]:
    """Each update added at its element of the view's tile (its last dim the indexed
    one; a dim the tile spans once takes every update along it), in order, once every
    index is inside that dim."""
    assert isinstance(op, TileScatterAddOp)
    dest = run.values[op.dest].reshape(-1)
    index = run.flat_indices(op, dest)
    updates = run.values[op.value]
    label, axis = op.attributes[OP_LABEL], op.attributes[OP_AXIS]
    assert isinstance(label, StringAttr) and isinstance(axis, IntegerAttr)
    indices = np.broadcast_to(run.values[op.indices], updates.shape)
    error = index_error(label.data, indices, index.shape[-1], axis.value.data)
    if error is not None:
        raise IndexOutOfRangeError(error)
    picked = np.broadcast_to(index, (*updates.shape, index.shape[-1]))
    flat = np.take_along_axis(picked, indices[..., None].astype(np.int64), axis=-1)[..., 0]
    with np.errstate(all="ignore"):
        np.add.at(dest, flat, updates)
    return []


def scan(run: KernelRun, op: Operation) -> list[Any]:
    """The running sum or product from the carry, and the carry past the tile, as the
    VM's `scan` computes them."""
    assert isinstance(op, TileScanOp)
    x, carry = run.values[op.source], run.values[op.carry].copy()
    out = np.empty_like(x)
    ufunc = np.add if op.kind.data == "sum" else np.multiply
    scan_into(ufunc, x, carry, op.along, op.is_exclusive, out)
    return [out, carry]


def top_k(run: KernelRun, op: Operation) -> list[Any]:
    """The carry merged with the tile, as the VM's `top_k` merges them."""
    assert isinstance(op, TileTopKOp)
    values, indices = run.values[op.values].copy(), run.values[op.indices].copy()
    x, positions = run.values[op.source], run.values[op.positions]
    top_k_into(values, indices, x, positions, op.along)
    return [values, indices]


HANDLERS: dict[type[Operation], Callable[[KernelRun, Operation], list[Any]]] = {
    tile.LoadOp: load,
    tile.StoreOp: store,
    tile.ConstantOp: constant,
    tile.BroadcastOp: broadcast,
    **{cls: reduce for cls in tile.REDUCES.values()},
    tile.MmaOp: mma,
    TileGroupedMmaOp: grouped_mma,
    tile.ForOp: loop,
    TileIotaOp: iota,
    TileTakeOp: take,
    TileScanOp: scan,
    TileTopKOp: top_k,
    TileScatterAddOp: scatter_add,
}


def kernel_run(
    kernel: tile.KernelOp,
    inputs: Sequence[Array],
    cores: int | None = None,
    known: dict[sympy.Symbol, int] | None = None,
) -> KernelRun:
    """A launch of `kernel` on `inputs`, its shape symbols and tile sizes bound, with
    tiles sized for `cores` (default: the kernel's device's vector cores). `known`:
    the call's argument symbols, which bind a dim its argument shapes only sum
    (a concat's `a_1 + b_1`)."""
    check_runnable(kernel)
    symbols: dict[sympy.Symbol, int] = {**(known or {})}
    symbols[CORES] = cores or device_of(kernel).vector_cores
    declared = declared_shapes(kernel)
    check_ranks(kernel, declared, inputs)
    for shape, array in zip(declared, inputs, strict=False):
        bind_shape(symbols, shape, np.shape(array))
    run = KernelRun(kernel, symbols)
    sizes = kernel.attributes.get("dvm.tile_sizes")
    if isinstance(sizes, DictionaryAttr):
        for name, size in sizes.data.items():
            assert isinstance(size, ExprAttr)
            symbols[symbol(name)] = run.eval(size.data)
    return run


def declared_shapes(kernel: tile.KernelOp) -> list[tuple[sympy.Expr, ...]]:
    shapes = kernel.attributes["dvm.arg_shapes"]
    assert isinstance(shapes, ArrayAttr)
    return [shape_from_attr(s) for s in shapes.data]


def launch(
    kernel: tile.KernelOp,
    inputs: Sequence[Array],
    cores: int | None = None,
    known: dict[sympy.Symbol, int] | None = None,
) -> list[Array]:
    """Run every tile of `kernel` on `inputs`, with tiles sized for `cores` (default:
    the kernel's device's vector cores) and the call's argument symbols `known`;
    return its new outputs."""
    run = kernel_run(kernel, inputs, cores, known)
    declared = declared_shapes(kernel)
    args = kernel.body.block.args
    outputs = [
        np.zeros(tuple(run.eval(d) for d in shape), numpy_dtype(arg.type))
        for shape, arg in zip(declared[len(inputs) :], args[len(inputs) :], strict=True)
    ]
    for arg, value in zip(args, [*inputs, *outputs], strict=True):
        run.values[arg] = value
    grid = [run.eval(g) for g in kernel.grid.data]
    if min(grid) < 0:
        raise ExecutionError(f"@{kernel.sym_name.data}: a grid of {grid} tiles")
    for point in itertools.product(*(range(g) for g in grid)):
        run.counters = {f"grid{i}": p for i, p in enumerate(point)}
        run.run(kernel.body.block)
    return outputs


def launch_program(
    program: bc.ProgramOp, inputs: Sequence[Array], known: dict[sympy.Symbol, int] | None = None
) -> list[Array]:
    """Run a `bytecode.program` on the VM: bind the shape symbols from the call's
    argument symbols (`known`) and the inputs' shapes, allocate the outputs, launch."""
    loaded = LOADED.get(program)
    if loaded is None:
        try:
            loaded = LOADED[program] = vm.load(vm.encode(to_program(program)))
        except vm.BytecodeError as e:  # the VM's validator: the last line of defence
            raise ProgramError(program, f"@{program.sym_name.data}: {e}") from None
    args = [op for op in program.body.block.ops if isinstance(op, bc.ArgOp)]
    check_ranks(program, [a.dims.data for a in args], inputs)
    symbols: dict[sympy.Symbol, int] = {**(known or {})}
    for arg, array in zip(args, inputs, strict=False):
        bind_shape(symbols, arg.dims.data, array.shape)
    outputs = []
    for arg in args[len(inputs) :]:
        shape = tuple(int(substitute(d, symbols)) for d in arg.dims.data)
        outputs.append(np.zeros(shape, vm.DType[dtype_name(arg.dtype.data)].np))
    if all(o.size == 0 for o in outputs):  # it would write nothing: as the runtime, skip it
        return outputs
    params = [int(substitute(symbol(p), symbols)) for p in program.param_names]
    vm.launch(loaded, [*inputs, *outputs], params, device=device_of(program))
    return outputs


def check_ranks(
    callee: tile.KernelOp | bc.ProgramOp,
    declared: Sequence[Sequence[sympy.Expr]],
    inputs: Sequence[Array],
) -> None:
    """The launch's inputs have the ranks the callee declares its arguments with (a
    launch and its callee are only checked against each other as they run)."""
    name = f"@{callee.sym_name.data}"
    if len(declared) < len(inputs):
        raise ProgramError(callee, f"{name} takes {len(declared)} arguments, launched with more")
    for i, (shape, array) in enumerate(zip(declared, inputs, strict=False)):
        if len(shape) != np.ndim(array):
            message = f"{name} declares argument {i} of rank {len(shape)}, launched with rank"
            raise ProgramError(callee, f"{message} {np.ndim(array)}")


def check_arity(op: tile.LaunchOp, callee: tile.KernelOp | bc.ProgramOp) -> None:
    """A launch passes the callee's inputs and takes its outputs, of the ranks the
    callee declares them with: one per argument."""
    if isinstance(callee, tile.KernelOp):
        check_runnable(callee)
        declared = declared_shapes(callee)
    else:
        declared = [a.dims.data for a in callee.body.block.ops if isinstance(a, bc.ArgOp)]
    name = f"@{callee.sym_name.data}"
    if len(declared) != len(op.inputs) + len(op.outputs):
        counts = f"{len(op.inputs)} inputs and {len(op.outputs)} results"
        raise ProgramError(op, f"launches {name} of {len(declared)} arguments with {counts}")
    for i, (shape, result) in enumerate(zip(declared[len(op.inputs) :], op.outputs, strict=True)):
        rank = len(result.type.get_shape())
        if len(shape) != rank:
            message = f"{name} declares output {i} of rank {len(shape)}, the launch's has {rank}"
            raise ProgramError(op, message)


def device_of(op: Operation) -> vm.DeviceSpec:
    """The device a kernel or program was lowered for (its `dvm.device` preset)."""
    device = op.attributes.get(DEVICE)
    return DEVICES[device.data if isinstance(device, StringAttr) else "host"]()


def check_group_sizes(
    op: tile.LaunchOp, callee: tile.KernelOp | bc.ProgramOp, inputs: Sequence[Array]
) -> None:
    """The group sizes of the launch's grouped matmuls (`GROUP_SIZES`), checked as the
    compiled program checks them, when the rows they split are known from the inputs'
    shapes."""
    entries = op.attributes.get(GROUP_SIZES)
    if not isinstance(entries, ArrayAttr):
        return
    if isinstance(callee, tile.KernelOp):
        shapes = declared_shapes(callee)
    else:
        shapes = [a.dims.data for a in callee.body.block.ops if isinstance(a, bc.ArgOp)]
    symbols: dict[sympy.Symbol, int] = {}
    for shape, array in zip(shapes, inputs, strict=False):
        bind_shape(symbols, shape, np.shape(array))
    for label, index, rows in read_group_size_checks(entries):
        count = substitute(rows, symbols)
        if not count.is_number:  # rows a kernel takes from index values: its gmma checks
            continue
        error = group_sizes_error(label, inputs[index].tolist(), int(count))
        if error is not None:
            raise ExecutionError(error)


def check_index_dims(attributes: dict[str, Any], symbols: dict[sympy.Symbol, int]) -> None:
    """The shapes the launch's kernel takes from index values (`INDEX_DIMS`), checked
    for a negative dim on the call's `symbols` as the compiled program checks them."""
    entries = attributes.get(INDEX_DIMS)
    for entry in entries.data if isinstance(entries, ArrayAttr) else ():
        assert isinstance(entry, DictionaryAttr)
        label = entry.data["op"]
        assert isinstance(label, StringAttr)
        dims = [substitute(d, symbols) for d in shape_from_attr(entry.data["shape"])]
        if any(d.is_number and d < 0 for d in dims):
            shown = [int(d) if d.is_number else d for d in dims]
            raise ShapeError(f"{label.data}: got a negative dim in shape {shown}")


LOADED: dict[bc.ProgramOp, vm.Program] = {}
"""Programs decoded and validated once per `bytecode.program` op."""


@register_impls
class TileFunctions(InterpreterFunctions):
    """`tile.launch` for the reference interpreter: runs the callee's tiles
    with the tile interpreter, or its bytecode on the VM once lowered, given the
    values of the argument symbols for this call."""

    def __init__(self, symbols: dict[sympy.Symbol, int] | None = None):
        self.symbols = {} if symbols is None else symbols

    @impl(tile.LaunchOp)
    def run_launch(
        self, interpreter: Interpreter, op: tile.LaunchOp, args: PythonValues
    ) -> PythonValues:
        name = op.callee.root_reference.data
        callee = next(
            (
                k
                for k in interpreter.module.ops
                if isinstance(k, tile.KernelOp | bc.ProgramOp) and k.sym_name.data == name
            ),
            None,
        )
        if callee is None:
            raise ProgramError(op, f"launches @{name}, which is no kernel of the module")
        check_arity(op, callee)
        check_slices(op.attributes, self.symbols)
        check_index_dims(op.attributes, self.symbols)
        # (np.ascontiguousarray alone would make a rank-0 argument rank 1)
        inputs = [np.ascontiguousarray(a).reshape(np.shape(a)) for a in args]
        check_group_sizes(op, callee, inputs)
        check_takes(op.attributes, inputs, self.symbols)
        if isinstance(callee, bc.ProgramOp):
            return tuple(launch_program(callee, inputs, self.symbols))
        return tuple(launch(callee, inputs, known=self.symbols))
