"""A parsed module's verification, its upstream ops written plainly checked directly.

xDSL verifies an op by walking its IRDL definition: each operand, result, region
and property against its constraint, 1,300 to 2,000 interpreted bytecodes an op.
Every program holds a `builtin.module`, a `func.func` and a `func.return`, most
hold `arith.constant`s, and a branch an `scf.if` and two `scf.yield`s: a small
program's parse spent 8 to 15 thousand bytecodes verifying them. An op of these
written plainly (the parts its definition wants, no optional property) is checked
here by what its definition and its own verifier ask of it, and where it stands
(`Operation.verify`'s rules for the last op of a block), then by its traits as
xDSL runs them, but for a function's `IsolatedFromAbove` (`IsolatedBySets`). The
project's own ops skip the walk the same way (`tensor.with_plain_verify`).

`verify_module` answers as `module.verify()` does: at an op it does not find plainly
valid, or at any fault, it runs `module.verify()`, which raises xDSL's error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    Signedness,
    StringAttr,
)
from xdsl.ir import ErasedSSAValue, Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.traits import IsolatedFromAbove, NoTerminator, OpTrait
from xdsl.utils.exceptions import VerifyException

from dvm.dialects.walk import ops_inside

FUNC_PROPERTIES = {"sym_name", "function_type"}
BOOL = IntegerType(1)


def verify_module(module: ModuleOp, ops: Sequence[Operation]) -> None:
    """Verify `module`, whose ops (itself among them) are `ops`, as `module.verify()`
    does, raising its error."""
    if not verifies(ops):
        module.verify()


def verifies(ops: Sequence[Operation]) -> bool:
    """Whether every op of `ops` verifies: a plain upstream op by the checks here and
    its traits, any other by its own `verify` (its regions' ops are in `ops`); False
    at the first fault."""
    try:
        for op in ops:
            plain = PLAIN.get(type(op))
            if plain is not None and plain(op):
                for trait in traits(type(op)):
                    trait.verify(op)
            else:
                op.verify(verify_nested_ops=False)
            if not blocks_hold_ops(op):
                return False
    except Exception:  # (`module.verify()` raises it, as xDSL words it)
        return False
    return True


def blocks_hold_ops(op: Operation) -> bool:
    """`Block.verify`'s rule, which verifying an op alone does not check: the one block
    of a region is empty only in an op that needs no terminator."""
    for region in op.regions:
        block = region.first_block
        empty = block is not None and block.first_op is None and block.next_block is None
        if empty and not op.has_trait(NoTerminator):
            return False
    return True


_TRAITS: dict[type[Operation], tuple[OpTrait, ...]] = {}


def traits(cls: type[Operation]) -> tuple[OpTrait, ...]:
    """The traits of an op class's definition, listed once per class; a function's
    `IsolatedFromAbove` checked by `IsolatedBySets`."""
    found = _TRAITS.get(cls)
    if found is None:
        assert issubclass(cls, IRDLOperation)
        listed = cls.get_irdl_definition().traits
        found = tuple(
            IsolatedBySets() if cls is func.FuncOp and type(t) is IsolatedFromAbove else t
            for t in listed
        )
        _TRAITS[cls] = found
    return found


class IsolatedBySets(IsolatedFromAbove):
    """`IsolatedFromAbove`'s rule: each operand of an op inside is a value defined inside
    (a result of an op within, an argument of a block within), found in the set of
    them. xDSL walks from each operand's owner up the op's parents, some 200 bytecodes
    an op of a function. It checks the ops inside an isolated op within too, which
    that op's own rule holds to its values, so the verdict is xDSL's."""

    def verify(self, op: Operation) -> None:
        inside = ops_inside(op)
        defined: set[SSAValue] = {v for o in inside for v in o.results}
        for o in (op, *inside):
            defined.update(a for region in o.regions for b in region.blocks for a in b.args)
        if not all(v in defined for o in inside for v in o.operands):
            raise VerifyException(f"'{op.name}' uses a value defined outside it")


def bare(op: Operation) -> bool:
    """No successors, properties or regions (none of the ops below has a successor,
    and those without regions or properties take none), and no operand erased
    (`Operation.verify`'s rule)."""
    return (
        not op.successors
        and not op.properties
        and not op.regions
        and not any(isinstance(v, ErasedSSAValue) for v in op.operands)
    )


def plain_module(op: Operation) -> bool:
    """The top-level module: one region of one block (`SymbolTable`'s and IRDL's
    rules), no name, nothing else."""
    assert isinstance(op, ModuleOp)
    region = op.body
    return (
        op.parent is None
        and not op.operands
        and not op.results
        and not op.successors
        and not op.properties
        and region.first_block is not None
        and region.first_block.next_block is None
    )


def plain_func(op: Operation) -> bool:
    """A function in a module, with its name and type only; its entry block takes
    the inputs (its own verifier's rule). The module needs no terminator, so a
    function may end its block."""
    assert isinstance(op, func.FuncOp)
    props = op.properties
    if not (
        type(op.parent_op()) is ModuleOp
        and not op.operands
        and not op.results
        and not op.successors
        and props.keys() == FUNC_PROPERTIES
        and isinstance(props["sym_name"], StringAttr)
        and isinstance(props["function_type"], FunctionType)
        and len(op.regions) == 1
    ):
        return False
    entry = op.body.first_block
    return entry is None or op.function_type.inputs.data == entry.arg_types


def plain_return(op: Operation) -> bool:
    """The last op of a function's block, returning its result types."""
    parent = op.parent_op()
    return (
        bare(op)
        and not op.results
        and op.next_op is None
        and type(parent) is func.FuncOp
        and parent.function_type.outputs.data == tuple(v.type for v in op.operands)
    )


def plain_yield(op: Operation) -> bool:
    """The last op of its block (its traits check its parent; `check_control_flow`
    the types it yields, which xDSL's definition leaves free)."""
    return bare(op) and not op.results and op.next_op is None


def plain_constant(op: Operation) -> bool:
    """A `dense` literal, a float or an integer (signless, or an index) of the
    result's type, not the last op of its block."""
    props = op.properties
    value = props.get("value")
    typed = isinstance(value, DenseIntOrFPElementsAttr | FloatAttr | IntegerAttr)
    return (
        not op.operands
        and len(op.results) == 1
        and not op.regions
        and not op.successors
        and len(props) == 1
        and typed
        and (not isinstance(value, IntegerAttr) or plain_integer(value))
        and value.type == op.results[0].type
        and op.next_op is not None
    )


def plain_integer(value: IntegerAttr) -> bool:
    """An integer of `index` type or a signless integer type."""
    kind = value.type
    return type(kind) is IndexType or (
        type(kind) is IntegerType and kind.signedness.data is Signedness.SIGNLESS
    )


def plain_if(op: Operation) -> bool:
    """An `if` on an i1, not the last op of its block; its `then` region one block
    (its traits check that each block ends in an `scf.yield`)."""
    operands = op.operands
    return (
        len(operands) == 1
        and not isinstance(operands[0], ErasedSSAValue)
        and operands[0].type == BOOL
        and not op.successors
        and not op.properties
        and len(op.regions) == 2
        and len(op.regions[0].blocks) == 1
        and op.next_op is not None
    )


PLAIN: dict[type[Operation], Callable[[Operation], bool]] = {
    ModuleOp: plain_module,
    func.FuncOp: plain_func,
    func.ReturnOp: plain_return,
    scf.YieldOp: plain_yield,
    arith.ConstantOp: plain_constant,
    scf.IfOp: plain_if,
}
"""For each upstream op class, whether an op is plain: then its IRDL definition, its
own verifier and its place in its block let it be, and only its traits remain."""
