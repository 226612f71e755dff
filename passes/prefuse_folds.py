"""Copies and sizes of computed values taken out, and half-precision sums widened,
before fusion.

- A `tensor.convert` to its own type is a copy: its users read its source instead.
  Left in, it is an op of its own between its producer and its users, and a matmul
  reading it would read a value computed in its kernel, which a kernel cannot
  (the copy became a kernel of its own). A copy the function returns stays when its
  source is an argument or is returned too: each output is an array of its own.
- A `tensor.dim` of a value an op computes is a size the symbolic shapes know in
  terms of the arguments' dims (`symbolic-shapes`): it is read from those instead.
  Left in, the value is needed outside any kernel that computes it, so the kernel
  must write it out and the ops after the size cannot join it.
- An `scf.if` whose results nothing reads computes nothing that is used (the
  dialect's ops are pure): it is erased, with the ops that only it read (its
  predicate, the values only its branches read). Left in, its branches' kernels
  run. One that holds an `scf.while` stays: the loop might not end, and erasing
  it would turn a call that never returns into one that does. So is any other op
  whose results nothing reads: left in, it joins a kernel that writes none of
  its values, and a reduction there is computed again for every tile of the
  kernel's grid (a full reduction beside a gather of one row ran minutes).
  Collectives stay: every process takes part in them.
- A float16 or bfloat16 sum, mean or product is one of float32 between two
  converts, as numpy's and torch's are (and the reference interpreter's): a kernel
  that sums a long row chunk by chunk would carry its running total in the half
  type, infinite past 65504 where the mean of the same row is not. Made before
  fusion, the converts join the kernel and tiling counts the wider registers.

Where one of these changed the function, its shapes and guards are computed again,
starting from the guards found before (the new `tensor.dim`s need their values).
"""

from __future__ import annotations

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import BFloat16Type, Float16Type, IndexType, IntegerAttr, TensorType, f32
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from dvm.dialects import tensor as t
from dvm.dialects.collectives import COLLECTIVE_OPS
from dvm.dialects.expr import shape_attr
from dvm.dialects.walk import ops_within
from dvm.passes.concat_sinking import Sizes, infer_shapes_again
from dvm.passes.symbolic import SHAPE, shape_of


def fold_copies(function: func.FuncOp) -> bool:
    """Drop every `tensor.convert` to its own type that no output needs (see the module
    docstring); whether any went."""
    folded = False
    for op in ops_within(function):
        if not isinstance(op, t.ConvertOp) or op.input.type != op.result.type:
            continue
        if returned(op.result) and (isinstance(op.input, BlockArgument) or returned(op.input)):
            continue
        op.result.replace_all_uses_with(op.input)
        Rewriter.erase_op(op)
        folded = True
    return folded


def returned(value: SSAValue) -> bool:
    return any(isinstance(use.operation, func.ReturnOp) for use in value.uses)


HALF_FLOATS = (Float16Type(), BFloat16Type())
WIDENED_REDUCTIONS = (t.ReduceSumOp, t.ReduceMeanOp, t.ReduceProdOp)


def widen_half_reductions(function: func.FuncOp) -> bool:
    """Make each half-precision sum, mean and product one of float32 between two
    converts (see the module docstring); whether any was."""
    widened = False
    for op in ops_within(function):
        if not isinstance(op, WIDENED_REDUCTIONS):
            continue
        source, result = op.input.type, op.result.type
        assert isinstance(source, TensorType) and isinstance(result, TensorType)
        if source.element_type not in HALF_FLOATS:
            continue
        wide_input = t.ConvertOp.create(
            operands=[op.input],
            result_types=[TensorType(f32, source.get_shape())],
            attributes={SHAPE: shape_attr(shape_of(op.input))},
        )
        wide = type(op).create(
            operands=[wide_input.result],
            result_types=[TensorType(f32, result.get_shape())],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        narrow = t.ConvertOp.create(
            operands=[wide.result], result_types=[result], attributes=dict(op.attributes)
        )
        Rewriter.replace_op(op, [wide_input, wide, narrow], [narrow.result])
        widened = True
    return widened


def resolve_dims(function: func.FuncOp) -> bool:
    """Replace each `tensor.dim` of a computed value (constant axis) by its size built
    from the arguments' dims, where the symbolic shapes know it; whether any was."""
    sizes = Sizes(function)
    resolved = False
    for op in ops_within(function):
        if not isinstance(op, t.DimOp) or isinstance(op.source, BlockArgument):
            continue
        axis = op.index.owner
        if not isinstance(axis, arith.ConstantOp) or not isinstance(axis.value, IntegerAttr):
            continue
        if op.parent_block() is not sizes.block:
            continue
        size = shape_of(op.source)[axis.value.value.data]
        if not sizes.known(size):
            continue
        value = sizes.value(size)
        if isinstance(value, int):
            constant = arith.ConstantOp(IntegerAttr(value, IndexType()))
            Rewriter.insert_op(constant, InsertPoint.before(op))
            value = constant.result
        if not dominates(value, op):
            continue
        op.result.replace_all_uses_with(value)
        Rewriter.erase_op(op)
        resolved = True
    return resolved


def dominates(value: SSAValue, op: Operation) -> bool:
    """Whether `value` is defined before `op` in its block (or is an argument)."""
    owner = value.owner
    if not isinstance(owner, Operation):
        return True
    block = op.parent_block()
    return (
        owner.parent_block() is block
        and block is not None
        and (block.get_operation_index(owner) < block.get_operation_index(op))
    )


def erase_dead_ops(function: func.FuncOp) -> None:
    """Erase every op whose results nothing reads (an `scf.if` with what only it read;
    see the module docstring)."""
    for op in list(function.walk(reverse=True)):  # (the users before their producers)
        if op.results and function.is_ancestor(op):  # (not erased yet)
            erase_if_unread(op)


def erase_if_unread(op: Operation) -> None:
    """Erase `op` if it is pure and nothing reads its results, then its producers
    that nothing reads any more."""
    if any(result.uses for result in op.results) or not erasable(op):
        return
    read = [value for nested in ops_within(op) for value in nested.operands]  # (op's own too)
    producers = {
        value.owner
        for value in read
        if isinstance(value.owner, Operation) and not op.is_ancestor(value.owner)
    }
    Rewriter.erase_op(op)
    for producer in producers:
        erase_if_unread(producer)


def erasable(op: Operation) -> bool:
    """Whether erasing `op` (when nothing reads it) loses nothing: an op of the tensor
    or arith dialects but a collective, or an `scf.if` that holds no loop that might
    not end."""
    if isinstance(op, scf.IfOp):
        return not any(isinstance(nested, scf.WhileOp) for nested in ops_within(op))
    dialect = op.name.split(".")[0]
    collective = isinstance(op, COLLECTIVE_OPS)
    return dialect in ("tensor", "arith") and not op.regions and not collective


def fold_before_fusion(function: func.FuncOp) -> None:
    """`erase_dead_ops`, `fold_copies`, `resolve_dims` and `widen_half_reductions`,
    then the shapes again if any of the last three changed."""
    erase_dead_ops(function)
    changed = fold_copies(function)
    changed = widen_half_reductions(function) or changed
    changed = resolve_dims(function) or changed
    if changed:
        infer_shapes_again(function)
