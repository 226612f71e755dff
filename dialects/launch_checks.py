"""The run-time checks a `tile.launch` carries, as attributes, and their verifier.

Lowering records on each launch what the runtime must check before the kernel
runs: indices of takes and scatters (`dvm.take_checks`), slice bounds
(`dvm.slice_bounds`), grouped matmul sizes (`dvm.group_sizes`) and shapes taken
from index values (`dvm.index_dims`). Each is an array of dictionaries; a
lowered module may be written by hand, so the verifier checks each entry's keys
and kinds here, and the readers can trust them.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, StringAttr
from xdsl.ir import Attribute
from xdsl.utils.exceptions import VerifyException

from dvm.dialects.expr import ExprAttr, ShapeAttr

INPUT_KEYS = {"dvm.take_checks": "input", "dvm.group_sizes": "sizes"}
"""The key of each kind that names one of the launch's inputs (a take check's
`input` may be -1: indices an iota in the kernel makes)."""

SCHEMAS: dict[str, dict[str, tuple[type[Attribute], bool]]] = {
    "dvm.take_checks": {
        "op": (StringAttr, True),
        "input": (IntegerAttr, True),
        "size": (ExprAttr, True),
        "axis": (IntegerAttr, True),
        "length": (ExprAttr, False),
    },
    "dvm.slice_bounds": {
        "op": (StringAttr, True),
        "source": (ShapeAttr, True),
        "offsets": (ShapeAttr, True),
        "sizes": (ShapeAttr, True),
        "strides": (ShapeAttr, True),
        "whole": (StringAttr, False),
    },
    "dvm.group_sizes": {
        "op": (StringAttr, True),
        "sizes": (IntegerAttr, True),
        "rows": (ExprAttr, True),
    },
    "dvm.index_dims": {"op": (StringAttr, True), "shape": (ShapeAttr, True)},
}
"""For each check a launch may carry: each key, its attribute kind, and whether the
entry must have it."""

KIND_NAMES = {
    StringAttr: "a string",
    IntegerAttr: "an integer",
    ExprAttr: "an expression (#dvm.expr)",
    ShapeAttr: "a shape (#dvm.shape)",
}


def verify_launch_checks(attributes: dict[str, Attribute], inputs: int) -> None:
    """A VerifyException naming the attribute and the key if any of the checks in
    `attributes` is malformed (a launch of `inputs` inputs)."""
    for name, schema in SCHEMAS.items():
        entries = attributes.get(name)
        if entries is None:
            continue
        if not isinstance(entries, ArrayAttr):
            raise VerifyException(f"'tile.launch' {name} must be an array of dictionaries")
        for k, entry in enumerate(entries.data):
            where = f"'tile.launch' {name} entry {k}"
            if not isinstance(entry, DictionaryAttr):
                raise VerifyException(f"{where} must be a dictionary")
            for key, (kind, required) in schema.items():
                value = entry.data.get(key)
                if value is None and not required:
                    continue
                if not isinstance(value, kind):
                    raise VerifyException(f"{where} needs `{key}`: {KIND_NAMES[kind]}")
            unknown = sorted(set(entry.data) - set(schema))
            if unknown:
                raise VerifyException(f"{where} has unknown keys {unknown}")
            if name in INPUT_KEYS:
                verify_input_index(where, entry.data[INPUT_KEYS[name]], inputs, name)
            if name == "dvm.slice_bounds":
                lists = [entry.data[key] for key in ("source", "offsets", "sizes", "strides")]
                if len({len(shape.data) for shape in lists if isinstance(shape, ShapeAttr)}) > 1:
                    raise VerifyException(f"{where} has lists of different lengths")


def verify_input_index(where: str, value: Attribute, inputs: int, name: str) -> None:
    """The input a check reads exists (a take check's -1: none, an iota's indices)."""
    assert isinstance(value, IntegerAttr)
    index = value.value.data
    lowest = -1 if name == "dvm.take_checks" else 0
    if not lowest <= index < inputs:
        raise VerifyException(f"{where} reads input {index} of a launch of {inputs} inputs")
