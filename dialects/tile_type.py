"""The tile type, `!tile.tile<[16, x_1], f32>`: a block of a kernel's iteration domain.

Apart from the `tile` dialect's ops (`dialects/tile.py`), so that the checks of tile
IR (`dialects/tile_checks.py`) can name it.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer

from dvm.dialects.expr import ShapeAttr, parse_expressions, print_expressions


@irdl_attr_definition
class TileType(ParametrizedAttribute, TypeAttribute):
    """`!tile.tile<[16, x_1], f32>`: the largest extent of each axis (an
    expression of the shape symbols), then the element type."""

    name = "tile.tile"
    shape: ShapeAttr
    element_type: Attribute

    def __init__(self, shape: Sequence[sympy.Expr | int], element_type: Attribute):
        super().__init__(ShapeAttr(shape), element_type)

    @property
    def rank(self) -> int:
        return len(self.shape.data)

    @property
    def extents(self) -> tuple[sympy.Expr, ...]:
        return self.shape.data

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            print_expressions(printer, self.extents)
            printer.print_string(", ")
            printer.print_attribute(self.element_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[ShapeAttr, Attribute]:
        with parser.in_angle_brackets():
            extents = parse_expressions(parser, parser.Delimiter.SQUARE)
            parser.parse_punctuation(",")
            element = parser.parse_type()
        return ShapeAttr(extents), element
