"""What MLIR verifies of `scf` regions and xDSL 0.75 does not.

The project uses xDSL's `scf` and `func` ops as they are. Their verifiers
miss rules that upstream MLIR checks, and a program that broke one failed
later with an internal error, or ran and returned a value of another type
than it declares. `check_control_flow` checks them in every region of a
module, in source order:

- a region holds at most one block (dvm programs have no branches);
- each branch of `scf.if` yields its results' types, and an `scf.if` with
  results has an `else` branch;
- `scf.for`'s body takes, yields and returns its `iter_args`' types;
- `scf.while`'s `before` region takes the initial values' types and passes
  the results' types to `scf.condition`; its `do` region takes those and
  yields the initial values' types.

An op whose regions or operands do not even have the op's layout is left
to xDSL's verifier, which names what is missing. `func.return` against the
function's result types is checked by xDSL too.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, Operation, Region
from xdsl.utils.exceptions import VerifyException

from dvm.dialects.walk import ops_within


class RegionError(VerifyException):
    """A region breaks a rule above. `places` are the ops to report it at, best
    first: a terminator (when it was written, not implied), then the region's op."""

    def __init__(self, message: str, *places: Operation):
        super().__init__(message)
        self.places = places


def check_control_flow(module: ModuleOp) -> None:
    """Raise a `RegionError` for the first op (in source order) that breaks a rule."""
    for op in ops_within(module):
        for region in op.regions:
            if len(region.blocks) > 1:
                raise RegionError(
                    f"'{op.name}' has a region of {len(region.blocks)} blocks; dvm programs "
                    "have no branches, so a region holds one block",
                    op,
                )
        if isinstance(op, scf.IfOp) and len(op.regions) == 2:
            check_if(op)
        elif isinstance(op, scf.ForOp) and len(op.regions) == 1 and len(op.operands) >= 3:
            check_for(op)
        elif isinstance(op, scf.WhileOp) and len(op.regions) == 2:
            check_while(op)


def check_if(op: Operation) -> None:
    results = op.result_types
    then, otherwise = op.regions
    if results and not otherwise.blocks:
        raise RegionError(f"'{op.name}' has results, so it needs an else branch", op)
    check_end(op, then, scf.YieldOp, "then branch yields", results, "its results are")
    if otherwise.blocks:
        check_end(op, otherwise, scf.YieldOp, "else branch yields", results, "its results are")


def check_for(op: Operation) -> None:
    carried = [v.type for v in op.operands[3:]]  # after the bounds and the step
    against = "its iter_args are"
    if list(op.result_types) != carried:
        raise RegionError(
            f"'{op.name}' returns {types_text(op.result_types)}, but {against} "
            f"{types_text(carried)}",
            op,
        )
    (body,) = op.regions
    check_takes(op, body.blocks.first, 1, "body takes", carried, against)
    check_end(op, body, scf.YieldOp, "body yields", carried, against)


def check_while(op: Operation) -> None:
    inits = [v.type for v in op.operands]
    results = list(op.result_types)
    before, after = op.regions
    check_takes(op, before.blocks.first, 0, "before region takes", inits, "its inits are")
    check_end(op, before, scf.ConditionOp, "condition passes", results, "its results are")
    check_takes(op, after.blocks.first, 0, "do region takes", results, "its results are")
    check_end(op, after, scf.YieldOp, "do region yields", inits, "its inits are")


def check_takes(
    op: Operation,
    block: Block | None,
    skip: int,
    what: str,
    expected: Sequence[Attribute],
    against: str,
) -> None:
    """The block's arguments after the first `skip` have the expected types."""
    got = [arg.type for arg in block.args[skip:]] if block is not None else []
    if got != list(expected):
        raise RegionError(
            f"'{op.name}' {what} {types_text(got)}, but {against} {types_text(expected)}", op
        )


def check_end(
    op: Operation,
    region: Region,
    kind: type[Operation],
    what: str,
    expected: Sequence[Attribute],
    against: str,
) -> None:
    """The region ends in a `kind` op passing values (after a condition's flag) of the
    expected types; an empty region yields nothing."""
    block = region.blocks.first
    end = block.last_op if block is not None else None
    if end is None and kind is scf.YieldOp:
        got: list[Attribute] = []
    elif isinstance(end, kind):
        values = end.operands[1:] if isinstance(end, scf.ConditionOp) else end.operands
        got = [v.type for v in values]
    else:
        raise RegionError(f"'{op.name}' region must end with '{kind.name}'", op)
    if got != list(expected):
        raise RegionError(
            f"'{op.name}' {what} {types_text(got)}, but {against} {types_text(expected)}",
            *([end] if end is not None else []),
            op,
        )


def types_text(types: Sequence[Attribute]) -> str:
    return "(" + ", ".join(str(t) for t in types) + ")"
