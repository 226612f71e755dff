"""A program's first compile in a process: the lowering builds its symbolic sizes without
asking sympy to simplify them (sympy's Min and Max search their arguments by assumption
queries, hundreds of milliseconds before its caches fill), and what it builds instead has
the values sympy's evaluation gives, at any shape.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sympy
from xdsl.context import Context
from xdsl.dialects.builtin import f32, f64

import dvm
import dvm.lowering.tensor_to_tile as tensor_to_tile
from dvm.dialects.attrs import float_attr
from dvm.dialects.expr import (
    ExprAttr,
    ShapeAttr,
    expr_attr,
    expr_text,
    sceiling,
    shape_attr,
    smax,
    smin,
    symbol,
)
from dvm.dialects.tile import TileType
from dvm.dialects.walk import ops_inside, ops_within
from dvm.ir import parse
from dvm.lowering.kernel_body import tile_type
from dvm.lowering.pipeline import DvmPipelinePass
from dvm.lowering.tile_to_bytecode import whole_units
from dvm.lowering.tiling import quotient
from dvm.passes.symbolic import substitute

X0, X1, T0, CORES = (symbol(n) for n in ("x_0", "x_1", "t0", "cores"))


@pytest.fixture
def evaluated_min_max(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The Min and Max sympy is asked to evaluate while the test runs."""
    made: list[str] = []
    for kind in (sympy.Min, sympy.Max):

        def counting(cls: Any, *args: Any, original: Any = kind.__new__, **options: Any) -> Any:
            if options.get("evaluate", True):
                made.append(f"{cls.__name__}{args}")
            return original(cls, *args, **options)

        monkeypatch.setattr(kind, "__new__", staticmethod(counting))
    yield made


@pytest.mark.parametrize("program", ["matmul", "bert_layer", "layernorm", "softmax"])
def test_a_compile_evaluates_no_min_or_max(
    examples_dir: Path, program: str, evaluated_min_max: list[str]
) -> None:
    dvm.compile((examples_dir / f"{program}.mlir").read_text(), cache=False)
    assert evaluated_min_max == []


def shapes(symbols: set[sympy.Symbol], rng: random.Random) -> Iterator[dict[sympy.Symbol, int]]:
    """Values of `symbols`: empty, short and long axes, and every core count up to 40."""
    lengths = [0, 1, 2, 3, 7, 16, 17, 100, 4096, 5000, 300_000]
    for _ in range(6):
        yield {s: rng.randint(1, 40) if s == CORES else rng.choice(lengths) for s in symbols}


@pytest.mark.parametrize("program", ["matmul", "mmoe", "column_stats", "bert_layer"])
def test_named_tile_sizes_have_the_values_sympy_gives(
    examples_dir: Path, program: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each tile size with the earlier ones named in it (rebuilt unevaluated) has the
    value of the size itself, whose earlier sizes sympy's `xreplace` would fold in."""
    named: list[tuple[sympy.Expr, tuple[tuple[sympy.Expr, sympy.Expr], ...], sympy.Expr]] = []
    original = tensor_to_tile.in_named_sizes

    def recording(size: sympy.Expr, earlier: Any) -> sympy.Expr:
        named.append((size, earlier, original(size, earlier)))
        return named[-1][2]

    monkeypatch.setattr(tensor_to_tile, "in_named_sizes", recording)
    dvm.compile((examples_dir / f"{program}.mlir").read_text(), cache=False)
    assert any(earlier for _, earlier, _ in named)
    rng = random.Random(program)
    for size, earlier, renamed in named:
        for values in shapes(size.free_symbols, rng):
            named_values = {name: substitute(e, values) for e, name in earlier}
            expected = substitute(size, values)
            assert substitute(renamed, {**values, **named_values}) == expected, expr_text(size)


def test_quotients_over_sums_are_what_sympy_makes() -> None:
    """`quotient` skips sympy's evaluation of 1/b for a sum b; it makes the same
    expression, arguments and text."""
    tile = smax(1, smin(X1, smax(16, sceiling(X1 / smax(1, sceiling(X1 / 4352))))))
    sums = [X0 + X1, 7130316 - 192 * tile, 832 * tile + 16384, tile + 64, T0 + 2 * X0 - 1]
    others = [*sums, sympy.Integer(0), sympy.Integer(1), sympy.Integer(-3), sympy.Integer(96)]
    for b in sums:
        for a in [*others, X0, tile, 4 * X0 * T0]:
            made, expected = quotient(a, b), a / b
            assert made == expected and made.args == expected.args, (a, b)
            assert expr_text(made) == str(expected)


@pytest.mark.parametrize(
    ("named", "itemsize"),
    [
        ([T0, X0], 4),
        ([T0, X0, X1], 1),
        ([], 48),
        ([T0], 64),
        ([smax(1, X0)], 4),
        ([T0, X0 + 1], 2),
        ([T0, X0, sympy.Integer(128)], 4),
        ([sympy.Integer(3), T0, sympy.Integer(5)], 2),
        ([sympy.Integer(0), T0], 4),
    ],
)
def test_whole_units_is_sympy_ceiling(named: list[sympy.Expr], itemsize: int) -> None:
    for unit in (1, 16, 32, 64):
        made = whole_units(named, itemsize, unit)
        expected = sympy.ceiling(sympy.Mul(*named) * itemsize / unit)
        assert made == expected and sympy.srepr(made) == sympy.srepr(expected)


NESTED = """
func.func @f(%x: tensor<?x4xf32>, %c: tensor<i1>) -> tensor<?x4xf32> {
  %p = tensor.extract %c[] : tensor<i1>
  %y = scf.if %p -> (tensor<?x4xf32>) {
    %a = tensor.exp %x : tensor<?x4xf32>
    scf.yield %a : tensor<?x4xf32>
  } else {
    %b = tensor.neg %x : tensor<?x4xf32>
    scf.yield %b : tensor<?x4xf32>
  }
  %z = tensor.add %y, %x : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return %z : tensor<?x4xf32>
}
"""


def test_ops_within_lists_what_xdsl_walks() -> None:
    """The passes' walk (`ops_within`) visits the ops xDSL's walk does, in its order,
    before and after the pipeline nests kernels, choices and ifs."""
    module = parse(NESTED)
    for stage in (None, *DvmPipelinePass().stages()):
        if stage is not None:
            stage.apply(Context(), module)
        for op in (module, *module.walk()):
            assert ops_within(op) == list(op.walk())
            assert ops_inside(op) == list(op.walk())[1:]


def test_ops_appended_are_linked_as_xdsl_links_them() -> None:
    """`block_of` and `append_op` link ops as xDSL's `Block(ops)` and `add_op` do; an op
    already in a block, or one with regions, goes through `add_op` and its checks."""
    from xdsl.dialects.test import TestOp
    from xdsl.ir import Block, Region

    from dvm.dialects.walk import append_op, block_of

    ops = [TestOp() for _ in range(4)]
    block = block_of(ops[:3], arg_types=[f32])
    append_op(block, ops[3])
    expected = Block([TestOp() for _ in range(4)], arg_types=[f32])
    assert list(block.ops) == ops and [a.type for a in block.args] == [f32]
    assert block.first_op is ops[0] and block.last_op is ops[3]
    for i, op in enumerate(ops):
        assert op.parent is block and op.parent_block() is block
        assert op.prev_op is (ops[i - 1] if i else None)
        assert op.next_op is (ops[i + 1] if i < 3 else None)
    assert len(list(expected.ops)) == len(ops)
    with pytest.raises(ValueError, match="already attached"):
        append_op(Block(), ops[1])
    holder = TestOp(regions=[Region(Block())])
    with pytest.raises(ValueError, match="contained in the operation"):
        append_op(holder.regions[0].block, holder)


def test_a_name_over_a_name_is_what_sympy_makes() -> None:
    made, expected = quotient(X0, T0), X0 / T0
    assert made == expected and made.args == expected.args
    assert quotient(T0, T0) == 1


def test_attributes_made_once_keep_their_values() -> None:
    """A float attribute made once per value tells 0.0 from -0.0 and keeps a NaN (equal
    floats, or none, yet different attributes); a tile type is shared by its parts."""
    zero, negative = float_attr(0.0, f32), float_attr(-0.0, f32)
    assert zero is float_attr(0.0, f32) and negative is float_attr(-0.0, f32)
    assert math.copysign(1, negative.value.data) == -1 and zero != negative
    assert math.isnan(float_attr(math.nan, f32).value.data)
    assert float_attr(1.0, f32) != float_attr(1.0, f64)
    assert tile_type([T0, 4], f32) is tile_type([T0, 4], f32) != tile_type([T0, 4], f64)
    assert tile_type([T0, 4], f32) == TileType([T0, 4], f32)
    # an expression's attribute and a shape's, shared by equal ones
    assert expr_attr(X0 * T0) is expr_attr(T0 * X0) == ExprAttr(X0 * T0) != expr_attr(X0)
    assert expr_attr(4) is expr_attr(sympy.Integer(4)) and expr_attr(4).data == 4
    assert shape_attr([X0, 4]) is shape_attr((X0, sympy.Integer(4))) == ShapeAttr([X0, 4])
