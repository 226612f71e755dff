"""Op classes made from a table: one class per row, each differing from its base only
in its name and class constants (`tensor.add` and `tensor.exp`, `bytecode.load`).

`irdl_op_definition` reads a class's whole definition from its fields and parses its
assembly format, 0.3 to 0.5 ms a class, and the three tables (the elementwise ops in
the tensor and tile dialects, the VM's instructions) make about 240 classes as a
process imports the dialects. Rows of one base have the same fields, so the first
class of a base is defined by IRDL and the others copy its definition under their
own name, with the first's assembly format program (which reads the class it parses
to from its call, not from the definition).
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, TypeVar, cast, get_origin

from xdsl.irdl import IRDLOperation, irdl_op_definition
from xdsl.irdl.operations import get_accessors_from_op_def

OpT = TypeVar("OpT", bound=IRDLOperation)

_PLAIN_KEYS = frozenset({"name", "__module__", "__doc__", "__annotations__"})

_FIRST_OF_BASE: dict[type[Any], tuple[type[Any], dict[str, Any]]] = {}
"""Each base's first derived class, defined by IRDL, and its assembly format's `parse`
and `print` as IRDL made them (a dialect may wrap the class's own afterwards)."""


def derived_op(base: type[OpT], class_name: str, namespace: dict[str, Any]) -> type[OpT]:
    """`irdl_op_definition(type(class_name, (base,), namespace))`, for a `namespace` of
    a name, a doc string and class constants (each declared a ClassVar in its
    `__annotations__`): it adds no field to `base`'s definition."""
    annotations = namespace.get("__annotations__", {})
    constants = {k for k, v in annotations.items() if get_origin(v) is ClassVar}
    if extra := set(namespace) - _PLAIN_KEYS - constants:
        raise TypeError(f"{class_name} adds {sorted(extra)} to {base.__name__}'s definition")
    cls = cast(type[OpT], type(class_name, (base,), namespace))
    known = _FIRST_OF_BASE.get(base)
    if known is None:
        first = irdl_op_definition(cls)
        format_methods = {k: v for k, v in vars(first).items() if k in ("parse", "print")}
        _FIRST_OF_BASE[base] = (first, format_methods)
        return first
    first, format_methods = known
    shared = first.get_irdl_definition()
    op_def = dataclasses.replace(shared, name=cls.name, assembly_format=None)
    accessors = get_accessors_from_op_def(op_def, getattr(cls, "verify_", None))
    op_def.assembly_format = shared.assembly_format
    for key, value in (accessors | format_methods).items():
        setattr(cls, key, value)
    return cls
