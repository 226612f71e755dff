"""The op classes made from tables (`dialects/derived_ops.py`): each copies its base's
first class's definition under its own name, and is what IRDL would make of it."""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

import pytest
from xdsl.irdl import IRDLOperation, irdl_op_definition

from dvm.dialects import bytecode, tensor, tile
from dvm.dialects.derived_ops import derived_op

DERIVED = [
    *tensor.ELEMENTWISE_OPS.values(),
    *(op for op in tile.MIRRORED.values() if op is not tile.SelectOp),  # (hand-written)
    *tile.REDUCES.values(),
    *bytecode.INSTRUCTIONS.values(),
]


def namespace_of(op: type[IRDLOperation]) -> dict[str, Any]:
    """What `derived_op` was given for `op`: its name, doc and class constants."""
    constants = inspect.get_annotations(op)
    keys = {"name", "__module__", "__doc__", *constants}
    namespace = {k: v for k, v in op.__dict__.items() if k in keys}
    return namespace | {"__annotations__": dict(constants)}


@pytest.mark.parametrize("op", DERIVED, ids=lambda op: op.name)
def test_a_derived_op_has_the_definition_irdl_gives(op: type[IRDLOperation]) -> None:
    base = op.__bases__[0]
    fresh = irdl_op_definition(type(op.__name__, (base,), namespace_of(op)))
    ours, irdl = op.get_irdl_definition(), fresh.get_irdl_definition()
    assert ours.name == irdl.name == op.name
    for field in ("operands", "results", "properties", "attributes", "regions", "options"):
        assert getattr(ours, field) == getattr(irdl, field), field
    assert ours.assembly_format == irdl.assembly_format
    assert list(ours.traits) == list(irdl.traits)


def test_a_derived_op_adds_no_field() -> None:
    class Base(IRDLOperation):
        VALUE: ClassVar[int] = 0

    made = derived_op(
        Base,
        "FirstOp",
        {"name": "test.first", "VALUE": 1, "__annotations__": {"VALUE": ClassVar[int]}},
    )
    again = derived_op(
        Base,
        "SecondOp",
        {"name": "test.second", "VALUE": 2, "__annotations__": {"VALUE": ClassVar[int]}},
    )
    assert (made.name, again.name, again.get_irdl_definition().name) == (
        "test.first",
        "test.second",
        "test.second",
    )
    with pytest.raises(TypeError, match="adds \\['extra'\\] to Base"):
        derived_op(Base, "ThirdOp", {"name": "test.third", "extra": 3})
