"""The reference interpreter: runs tensor-dialect programs on numpy arrays.

`interpret(program, *args, entry=None)` is the meaning of a program that every
other level of dvm is tested against, so it favours being obviously right
over being fast (each op pays xDSL's dispatch, more than a small op's numpy call).

It is built on `xdsl.interpreter`: one `InterpreterFunctions` class per
dialect (tensor, arith, scf; func comes from xDSL), each mapping an op class
to a Python function. Values during a run are:

- tensors: numpy arrays of exactly the declared element type (0-d arrays for
  rank 0, never numpy scalars);
- `index`: Python ints;
- other scalars (`tensor.extract`, arith on `i32`, `f32`, ...): numpy scalars.

Numerics (integer division, conversions, reductions over empty axes, erf)
live in `dvm.numerics`, the numpy function of each elementwise op (shared with
the tile interpreter) in `dvm.elementwise`, and the checks of a call's
arguments (shared with `dvm.compile`) in `dvm.arguments`. Every op's result
is checked against the static dims of its type, so a shape error surfaces at
the op that made it, as a `ShapeError` naming the op.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import sympy
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    TensorType,
)
from xdsl.dialects.func import FuncOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.scf import ScfFunctions as XdslScfFunctions
from xdsl.ir import Operation

from dvm import numerics
from dvm.arguments import (
    check_arguments,
    declared,
    find_entry,
    numpy_dtype,
    result,
    to_value,
)
from dvm.arith_ops import (
    ARITH_OPS,
    arith_function,
    dense_array,
)
from dvm.call_errors import fail
from dvm.declared import owned
from dvm.dialects import tensor
from dvm.dialects.expr import symbol
from dvm.elementwise import ELEMENTWISE
from dvm.errors import ExecutionError, ShapeError
from dvm.guards import check_call_guards, late_guard_check
from dvm.host_steps import check_step, checked_axis, checked_indices
from dvm.ir import parse
from dvm.numerics import ReduceKind
from dvm.passes.errors import located
from dvm.passes.symbolic import (
    WORLD,
    arg_symbol_name,
    bind_symbols,
    check_choice_symbols,
    conditions_hold,
    index_symbol_name,
)

__all__ = ["interpret", "make_interpreter"]

# --------------------------------------------------------------------------
# Types and values
# --------------------------------------------------------------------------


def broadcast_shapes(
    op: Operation, shapes: Sequence[tuple[int, ...]], what: str = "operand shapes"
) -> tuple[int, ...]:
    """numpy's broadcast of `shapes`, or a ShapeError naming the op."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        shown = ", ".join(str(s) for s in shapes)
        raise ShapeError(f"{located(op)}: {what} {shown} do not broadcast") from None


def mixed_shape(op: Operation, static: Sequence[int], dynamic: Sequence[int]) -> list[int]:
    """A shape given as static dims with `?` taken, in order, from index operands."""
    values = iter(dynamic)
    shape = [next(values) if d == DYNAMIC_INDEX else d for d in static]
    if any(d < 0 for d in shape):
        raise ShapeError(f"{located(op)}: got a negative dim in shape {shape}")
    return shape


def int_groups(attr: ArrayAttr[ArrayAttr[IntegerAttr]]) -> list[list[int]]:
    """A reassociation attribute such as `[[0], [1, 2]]` as Python lists."""
    return [[i.value.data for i in group.data] for group in attr.data]


# --------------------------------------------------------------------------
# Table-driven impls: many ops, one Python function each
# --------------------------------------------------------------------------

RawImpl = Callable[[InterpreterFunctions, Interpreter, Operation, PythonValues], PythonValues]
F = TypeVar("F", bound=InterpreterFunctions)


def with_impls(table: Mapping[type[Operation], RawImpl]) -> Callable[[type[F]], type[F]]:
    """Add one `@impl` method per op class of `table` to a class, for `register_impls`.

    xDSL looks impls up by the exact op class, so a table of ops sharing one
    Python function still needs one method per class; this writes them.
    """

    def add(cls: type[F]) -> type[F]:
        for op_type, run in table.items():
            setattr(cls, f"run_{op_type.name.replace('.', '_')}", impl(op_type)(run))
        return cls

    return add


def elementwise(fn: Callable[..., Any]) -> RawImpl:
    """An impl applying the numpy function `fn` to the operands (broadcast first)."""

    def run(
        _self: InterpreterFunctions, _interp: Interpreter, op: Operation, args: PythonValues
    ) -> PythonValues:
        if len(args) > 1:
            broadcast_shapes(op, [np.shape(a) for a in args])
        return result(op, fn(*args))

    return run


def reduction(kind: ReduceKind) -> RawImpl:
    """An impl of `tensor.reduce_<kind>`."""

    def run(
        _self: InterpreterFunctions, _interp: Interpreter, op: Operation, args: PythonValues
    ) -> PythonValues:
        assert isinstance(op, tensor.ReduceOp)
        return result(op, numerics.reduce(kind, args[0], op.reduced_axes, op.keeps_dims))

    return run


# --------------------------------------------------------------------------
# The tensor dialect
# --------------------------------------------------------------------------

REDUCTIONS: dict[type[Operation], ReduceKind] = {
    tensor.ReduceSumOp: "sum",
    tensor.ReduceMeanOp: "mean",
    tensor.ReduceMaxOp: "max",
    tensor.ReduceMinOp: "min",
    tensor.ReduceProdOp: "prod",
}

TENSOR_TABLE: dict[type[Operation], RawImpl] = {
    **{op: elementwise(fn) for op, fn in ELEMENTWISE.items()},
    tensor.SelectOp: elementwise(np.where),
    tensor.ClampOp: elementwise(numerics.clamp),
    **{op: reduction(kind) for op, kind in REDUCTIONS.items()},
}


@register_impls
@with_impls(TENSOR_TABLE)
class TensorFunctions(InterpreterFunctions):
    """The tensor dialect's ops; elementwise ops and reductions come from `TENSOR_TABLE`."""

    @impl(tensor.ConvertOp)
    def run_convert(
        self, interpreter: Interpreter, op: tensor.ConvertOp, args: PythonValues
    ) -> PythonValues:
        return result(op, numerics.convert(args[0], numpy_dtype(op.result.type)))

    @impl(tensor.BroadcastToOp)
    def run_broadcast_to(
        self, interpreter: Interpreter, op: tensor.BroadcastToOp, args: PythonValues
    ) -> PythonValues:
        x, *dynamic = args
        shape = mixed_shape(op, op.static_shape.get_values(), dynamic)
        try:
            return result(op, np.broadcast_to(x, shape))
        except ValueError:
            message = f"{located(op)}: cannot broadcast shape {x.shape} to {shape}"
            raise ShapeError(message) from None

    @impl(tensor.TransposeOp)
    def run_transpose(
        self, interpreter: Interpreter, op: tensor.TransposeOp, args: PythonValues
    ) -> PythonValues:
        return result(op, np.transpose(args[0], op.permutation))

    @impl(tensor.ExpandShapeOp)
    def run_expand_shape(
        self, interpreter: Interpreter, op: tensor.ExpandShapeOp, args: PythonValues
    ) -> PythonValues:
        x, *dynamic = args
        shape = mixed_shape(op, op.static_output_shape.get_values(), dynamic)
        for axis, group in enumerate(int_groups(op.reassociation)):
            dims = [shape[i] for i in group]
            if math.prod(dims) != x.shape[axis]:
                raise ShapeError(
                    f"{located(op)}: output dims {dims} do not multiply to dim {x.shape[axis]} "
                    f"of source axis {axis} (source shape {x.shape})"
                )
        return result(op, x.reshape(shape))

    @impl(tensor.CollapseShapeOp)
    def run_collapse_shape(
        self, interpreter: Interpreter, op: tensor.CollapseShapeOp, args: PythonValues
    ) -> PythonValues:
        (x,) = args
        shape = [math.prod(x.shape[i] for i in group) for group in int_groups(op.reassociation)]
        return result(op, x.reshape(shape))

    @impl(tensor.DimOp)
    def run_dim(
        self, interpreter: Interpreter, op: tensor.DimOp, args: PythonValues
    ) -> PythonValues:
        x, index = args
        return (x.shape[checked_axis(located(op), index, x.shape)],)

    @impl(tensor.ExtractOp)
    def run_extract(
        self, interpreter: Interpreter, op: tensor.ExtractOp, args: PythonValues
    ) -> PythonValues:
        x, *indices = args
        return result(op, x[checked_indices(located(op), indices, x.shape)])

    @impl(tensor.MatmulOp)
    def run_matmul(
        self, interpreter: Interpreter, op: tensor.MatmulOp, args: PythonValues
    ) -> PythonValues:
        a, b = args
        transpose_a, transpose_b = op.flags
        ka = a.shape[-2] if transpose_a else a.shape[-1]
        kb = b.shape[-1] if transpose_b else b.shape[-2]
        if ka != kb:
            raise ShapeError(
                f"{located(op)}: contraction dims differ: lhs shape {a.shape} has {ka}, "
                f"rhs shape {b.shape} has {kb} (transpose_a={transpose_a}, "
                f"transpose_b={transpose_b})"
            )
        broadcast_shapes(op, [a.shape[:-2], b.shape[:-2]], what="batch shapes")
        return result(op, numerics.matmul(a, b, transpose_a, transpose_b))


# --------------------------------------------------------------------------
# The arith dialect (constants, index arithmetic, scalar and tensor math;
# their meaning is in `dvm.arith_ops`)
# --------------------------------------------------------------------------


def run_arith(
    _self: InterpreterFunctions, _interp: Interpreter, op: Operation, args: PythonValues
) -> PythonValues:
    """An impl of the ops of `ARITH_OPS` (on scalars, or on tensors that broadcast)."""
    if len(args) > 1:
        broadcast_shapes(op, [np.shape(a) for a in args])
    raw = arith_function(op)(*args)
    if len(op.results) > 1:
        return tuple(to_value(op, r, v.type) for r, v in zip(raw, op.results, strict=True))
    return result(op, raw)


@register_impls
@with_impls(dict.fromkeys(ARITH_OPS, run_arith))
class ArithFunctions(InterpreterFunctions):
    """arith ops on the values of this interpreter (xDSL's own arith impls use attributes)."""

    @impl(arith.ConstantOp)
    def run_constant(
        self, interpreter: Interpreter, op: arith.ConstantOp, args: PythonValues
    ) -> PythonValues:
        value, t = op.value, op.result.type
        if isinstance(value, DenseIntOrFPElementsAttr) and isinstance(t, TensorType):
            return result(op, dense_array(value, t))
        if isinstance(value, IntegerAttr | FloatAttr):
            raw = value.value.data
            return result(op, raw != 0 if numpy_dtype(t) == np.bool_ else raw)
        raise ExecutionError(f"'{op.name}' with value {value} is not supported")


# --------------------------------------------------------------------------
# scf: xDSL's if/while/yield work on any Python values; for needs Python ints
# --------------------------------------------------------------------------


@register_impls
class ScfFunctions(XdslScfFunctions):
    """xDSL's scf impls, with `scf.for` over Python ints instead of attributes."""

    @impl(scf.ForOp)
    def run_for(self, interpreter: Interpreter, op: scf.ForOp, args: PythonValues) -> PythonValues:
        lower, upper, step, *carried = args
        check_step(located(op), step)
        values = tuple(carried)
        for i in range(int(lower), int(upper), int(step)):
            index = to_value(op, i, op.lb.type)
            values = interpreter.run_ssacfg_region(op.body, (index, *values), "scf.for")
        return values


# --------------------------------------------------------------------------
# Kernels built by the fuse and stack passes: run their bodies
# --------------------------------------------------------------------------


@register_impls
class KernelFunctions(InterpreterFunctions):
    """`tensor.fusion` runs its body on its inputs, `tensor.stack` its kernels
    in order, and `tensor.choice` the alternative its conditions select,
    given the values of the argument symbols for this call."""

    def __init__(self, symbols: dict[sympy.Symbol, int] | None = None):
        self.symbols = {} if symbols is None else symbols

    @impl(tensor.FusionOp)
    def run_fusion(
        self, interpreter: Interpreter, op: tensor.FusionOp, args: PythonValues
    ) -> PythonValues:
        return interpreter.run_ssacfg_region(op.body, args, "tensor.fusion")

    @impl(tensor.StackOp)
    def run_stack(
        self, interpreter: Interpreter, op: tensor.StackOp, args: PythonValues
    ) -> PythonValues:
        return interpreter.run_ssacfg_region(op.body, (), "tensor.stack")

    @impl(tensor.ChoiceOp)
    def run_choice(
        self, interpreter: Interpreter, op: tensor.ChoiceOp, args: PythonValues
    ) -> PythonValues:
        check_choice_symbols(op, self.symbols)
        taken = conditions_hold(op.conditions.data, self.symbols)
        region = op.then_body if taken else op.else_body
        return interpreter.run_ssacfg_region(region, (), "tensor.choice")

    @impl_terminator(tensor.YieldOp)
    def run_yield(
        self, interpreter: Interpreter, op: tensor.YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()


# --------------------------------------------------------------------------
# Calling a function
# --------------------------------------------------------------------------


def make_interpreter(
    module: ModuleOp,
    symbols: dict[sympy.Symbol, int] | None = None,
    check_late: Callable[[set[str]], None] | None = None,
) -> Interpreter:
    """An xDSL interpreter for `module` that knows func, arith, scf, tensor
    and the launches of tile kernels."""
    # imported here: they build on this module (and the tile interpreter loads the
    # lowering, which a tensor-level program never needs)
    from dvm.interpret_collectives import CollectiveFunctions
    from dvm.interpret_data_movement import DataMovementFunctions, SymbolBinder
    from dvm.interpret_grouped_matmul import GroupedMatmulFunctions
    from dvm.interpret_index_ops import IndexOpsFunctions
    from dvm.interpret_scans import ScanFunctions
    from dvm.interpret_shape_ops import ShapeOpFunctions
    from dvm.tile_interpreter import TileFunctions

    symbols = {} if symbols is None else symbols  # shared: the binder adds to it
    interpreter = Interpreter(module)
    interpreter.listeners = (SymbolBinder(interpreter, symbols, check_late),)
    for functions in (
        FuncFunctions(),
        ArithFunctions(),
        ScfFunctions(),
        TensorFunctions(),
        DataMovementFunctions(),
        ScanFunctions(),
        ShapeOpFunctions(),
        GroupedMatmulFunctions(),
        IndexOpsFunctions(),
        CollectiveFunctions(),
        KernelFunctions(symbols),
        TileFunctions(symbols),
    ):
        interpreter.register_implementations(functions)
    return interpreter


def bind_unannotated(
    func: FuncOp, shapes: Sequence[tuple[int, ...] | None], symbols: dict[sympy.Symbol, int]
) -> None:
    """Bind the dynamic dims of arguments that carry no shape (a program `symbolic-shapes`
    has not run on) to the symbols that pass would give them (`x_0`): a `tensor.choice`
    written in the program names them in its conditions."""
    for arg, shape in zip(func.body.block.args, shapes, strict=True):
        if shape is None or not isinstance(arg.type, TensorType):
            continue
        for axis, (static, n) in enumerate(zip(arg.type.get_shape(), shape, strict=True)):
            if static == DYNAMIC_INDEX:
                symbols.setdefault(symbol(arg_symbol_name(arg, axis)), n)


def interpret(module_or_text: ModuleOp | str | Path, *args: Any, entry: str | None = None) -> Any:
    """Run function `entry` of a program on numpy arrays, with numpy semantics.

    `module_or_text` is a module, `.mlir` text or a path. Arguments are numpy
    arrays for tensors (exact element type, rank and static dims, else a
    `CallError`) and Python ints for `index`. Returns a numpy array, or a tuple
    of them unless the function has exactly one result. Each result is an array
    of its own: it shares memory with no argument and no other result.
    """
    module = module_or_text if isinstance(module_or_text, ModuleOp) else parse(module_or_text)
    func = find_entry(module, entry)
    values = check_arguments(func, args)
    shapes = [v.shape if isinstance(v, np.ndarray) else None for v in values]
    symbols = bind_symbols(func, shapes)
    bind_unannotated(func, shapes, symbols)
    symbols[WORLD] = 1  # the world of one process (`dvm.dialects.collectives`)
    for arg, value in zip(func.body.block.args, values, strict=True):
        if isinstance(arg.type, IndexType):  # a kernel may take it as a size or offset
            symbols[symbol(index_symbol_name(arg))] = int(value)
    check_call_guards(func, symbols)
    interpreter = make_interpreter(module, symbols, late_guard_check(func, symbols))
    try:
        with np.errstate(all="ignore"):
            outputs = owned(interpreter.call_op(func, values), values)
    except MemoryError as e:  # a result, or the copy of a returned argument, too large
        fail(declared(func), values, e)
    except RecursionError:  # regions nest at most MAX_NESTING deep: only calls recurse
        raise ExecutionError(
            f"@{func.sym_name.data}: calls (func.call) nest deeper than Python's stack allows"
        ) from None
    except Exception as e:
        # xDSL adds a printout of the module per enclosing op; the first marks the failing op.
        if len(notes := getattr(e, "__notes__", [])) > 1:
            e.__notes__ = notes[:1]
        raise
    return outputs[0] if len(outputs) == 1 else tuple(outputs)
