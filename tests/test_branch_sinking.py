"""`sink-into-branches` on whole programs: the compiled program (every launch on
the VM) against the reference interpreter, with either branch taken, and the
launches it saves.

Variants of the shared `if_else_add` example: the consumer also reads a value
made before the `if`; the `if` result read twice and returned; a branch that
yields its argument unchanged (nothing sinks, the result must still be right);
an `if` nested in a branch; a consumer that broadcasts; branches that yield
different shapes. The shapes and guards after sinking are those a new inference
makes (the pass infers them again only when sinking could change them).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import EXAMPLES_DIR
from xdsl.context import Context
from xdsl.dialects.func import FuncOp

import dvm
from dvm.ir import parse
from dvm.passes.branch_sinking import SinkIntoBranchesPass
from dvm.passes.concat_sinking import infer_shapes_again
from dvm.passes.symbolic_shapes import SymbolicShapesPass

IF_ELSE_ADD = (EXAMPLES_DIR / "if_else_add.mlir").read_text() if EXAMPLES_DIR.is_dir() else ""

HEAD = """
  %zero = arith.constant dense<0.0> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %s = tensor.reduce_sum %x {axes = [0, 1]} : tensor<?x?xf32> -> tensor<f32>
  %p = tensor.gt %s, %zero : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %c = tensor.extract %p[] : tensor<i1>
"""

T = "tensor<?x?xf32>"

ADD_OR_SUB = f"""%y = scf.if %c -> ({T}) {{
    %t = tensor.add %x, %one : ({T}, tensor<f32>) -> {T}
    scf.yield %t : {T}
  }} else {{
    %t = tensor.sub %x, %one : ({T}, tensor<f32>) -> {T}
    scf.yield %t : {T}
  }}"""

READS_EARLIER = f"""
func.func @main(%x: {T}, %w: {T}) -> {T} {{
  {HEAD}
  %before = tensor.mul %w, %w : ({T}, {T}) -> {T}
  {ADD_OR_SUB}
  %r = tensor.add %y, %before : ({T}, {T}) -> {T}
  func.return %r : {T}
}}
"""

USED_TWICE = f"""
func.func @main(%x: {T}, %w: {T}) -> ({T}, {T}, {T}) {{
  {HEAD}
  {ADD_OR_SUB}
  %r = tensor.add %y, %w : ({T}, {T}) -> {T}
  %q = tensor.mul %y, %y : ({T}, {T}) -> {T}
  func.return %r, %q, %y : {T}, {T}, {T}
}}
"""

PASSED_THROUGH = f"""
func.func @main(%x: {T}, %w: {T}) -> {T} {{
  {HEAD}
  %y = scf.if %c -> ({T}) {{
    %t = tensor.add %x, %one : ({T}, tensor<f32>) -> {T}
    scf.yield %t : {T}
  }} else {{
    scf.yield %x : {T}
  }}
  %r = tensor.add %y, %w : ({T}, {T}) -> {T}
  func.return %r : {T}
}}
"""

NESTED = f"""
func.func @main(%x: {T}, %w: {T}) -> {T} {{
  {HEAD}
  %m = tensor.reduce_max %w {{axes = [0, 1]}} : {T} -> tensor<f32>
  %q = tensor.gt %m, %one : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %d = tensor.extract %q[] : tensor<i1>
  %y = scf.if %c -> ({T}) {{
    %u = scf.if %d -> ({T}) {{
      %t = tensor.add %x, %one : ({T}, tensor<f32>) -> {T}
      scf.yield %t : {T}
    }} else {{
      %t = tensor.exp %x : {T}
      scf.yield %t : {T}
    }}
    scf.yield %u : {T}
  }} else {{
    %t = tensor.sub %x, %one : ({T}, tensor<f32>) -> {T}
    scf.yield %t : {T}
  }}
  %r = tensor.add %y, %w : ({T}, {T}) -> {T}
  func.return %r : {T}
}}
"""

BROADCASTS = f"""
func.func @main(%x: {T}, %w: {T}) -> {T} {{
  {HEAD}
  %row = tensor.reduce_sum %w {{axes = [0], keepdims = true}} : {T} -> tensor<1x?xf32>
  {ADD_OR_SUB}
  %r = tensor.add %y, %row : ({T}, tensor<1x?xf32>) -> {T}
  func.return %r : {T}
}}
"""

JOINS_SHAPES = f"""
func.func @main(%x: {T}, %w: {T}) -> {T} {{
  {HEAD}
  %y = scf.if %c -> ({T}) {{
    %t = tensor.add %x, %one : ({T}, tensor<f32>) -> {T}
    scf.yield %t : {T}
  }} else {{
    %t = tensor.sub %w, %one : ({T}, tensor<f32>) -> {T}
    scf.yield %t : {T}
  }}
  %r = tensor.mul %y, %y : ({T}, {T}) -> {T}
  func.return %r : {T}
}}
"""

VARIANTS = {
    "reads_earlier": READS_EARLIER,
    "used_twice": USED_TWICE,
    "passed_through": PASSED_THROUGH,
    "nested": NESTED,
    "broadcasts": BROADCASTS,
    "joins_shapes": JOINS_SHAPES,
}
SHAPES = [(0, 3), (1, 1), (7, 13), (97, 301)]


def arguments(shape: tuple[int, int], sign: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`x` whose sum has the sign `sign` (so the branch is known), and `w`."""
    rng = np.random.default_rng(seed)
    x = (np.abs(rng.standard_normal(shape)) * sign).astype(np.float32)
    w = rng.standard_normal(shape).astype(np.float32) * 2
    return x, w


def as_tuple(value: object) -> tuple[np.ndarray, ...]:
    return value if isinstance(value, tuple) else (value,)  # type: ignore[return-value]


@pytest.mark.parametrize("name", sorted(VARIANTS))
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_variant_matches_the_interpreter(name: str, sign: float) -> None:
    program = dvm.compile(VARIANTS[name])
    for i, shape in enumerate(SHAPES):
        x, w = arguments(shape, sign, seed=i)
        want = as_tuple(dvm.interpret(VARIANTS[name], x, w))
        for _ in range(3):  # unplanned, then planned launches
            got = as_tuple(program(x, w))
            assert len(got) == len(want)
            for g, e in zip(got, want, strict=True):
                assert g.shape == e.shape and g.dtype == e.dtype
                np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)


@pytest.mark.skipif(not IF_ELSE_ADD, reason="shared examples missing")
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_if_else_add_is_two_launches(sign: float) -> None:
    """The reduction, then one fused pass for the branch and the join's add."""
    program = dvm.compile(IF_ELSE_ADD)
    x, _ = arguments((61, 67), sign, seed=3)
    result, launches = program.profile(x)
    np.testing.assert_allclose(result, x + sign + x, rtol=1e-6)
    assert len(launches) == 2


def test_passed_through_keeps_its_launches() -> None:
    """The branch yielding its argument keeps the add after the `if`: one kernel on
    either path, as before."""
    program = dvm.compile(PASSED_THROUGH)
    x, w = arguments((5, 6), -1.0, seed=4)
    result, launches = program.profile(x, w)
    np.testing.assert_allclose(result, x + w, rtol=1e-6)
    assert len(launches) == 2


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_shapes_after_sinking_are_inferred_ones(name: str) -> None:
    """What sinking leaves (shapes, guards) is what inferring them again makes."""
    module = parse(VARIANTS[name])
    SymbolicShapesPass().apply(Context(), module)
    SinkIntoBranchesPass().apply(Context(), module)
    sunk = str(module)
    for func in module.ops:
        assert isinstance(func, FuncOp)
        infer_shapes_again(func)
    assert sunk == str(module)
