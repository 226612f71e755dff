"""The parse's verification of upstream ops written plainly (`dialects/plain_verify.py`)
accepts what xDSL's verifier accepts, and raises xDSL's error for what it rejects."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FunctionType,
    ModuleOp,
    StringAttr,
    TensorType,
    f32,
)
from xdsl.ir import Block, Operation
from xdsl.utils.exceptions import VerifyException

import dvm
from dvm.dialects.plain_verify import PLAIN, verifies, verify_module
from dvm.dialects.walk import ops_within

BRANCH = """\
func.func @f(%x: tensor<?xf32>, %c: i1) -> tensor<?xf32> {
  %one = arith.constant dense<1.000000e+00> : tensor<f32>
  %y = scf.if %c -> (tensor<?xf32>) {
    %t = tensor.add %x, %one : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
    scf.yield %t : tensor<?xf32>
  } else {
    scf.yield %x : tensor<?xf32>
  }
  func.return %y : tensor<?xf32>
}
"""


def test_every_example_verifies_with_its_upstream_ops_plain(examples_dir: Path) -> None:
    for path in sorted(examples_dir.glob("*.mlir")):
        ops = ops_within(dvm.parse(path))
        assert verifies(ops), path.name
        odd = [op.name for op in ops if type(op) in PLAIN and not PLAIN[type(op)](op)]
        assert not odd, (path.name, odd)


def the(module: ModuleOp, kind: type[Operation], index: int = 0) -> Operation:
    """The `index`-th op of class `kind` in `module`; each function below breaks a rule
    of the module `BRANCH` parses to, but the last two."""
    return [op for op in ops_within(module) if type(op) is kind][index]


def return_of_the_input(m: ModuleOp) -> None:
    ret = the(m, func.ReturnOp)
    ret.operands = [the(m, func.FuncOp).regions[0].blocks[0].args[1]]  # an i1


def constant_of_another_type(m: ModuleOp) -> None:
    other = DenseIntOrFPElementsAttr.from_list(TensorType(f32, [2]), [1.0, 2.0])
    the(m, arith.ConstantOp).properties["value"] = other


def return_not_last(m: ModuleOp) -> None:
    ret, constant = the(m, func.ReturnOp), the(m, arith.ConstantOp)
    ret.detach()
    constant.parent_block().insert_op_after(ret, constant)  # pyright: ignore[reportOptionalMemberAccess]


def yield_in_the_function(m: ModuleOp) -> None:
    ret = the(m, func.ReturnOp)
    ret.parent_block().insert_op_before(scf.YieldOp(), ret)  # pyright: ignore[reportOptionalMemberAccess]
    ret.detach()


def condition_of_a_tensor(m: ModuleOp) -> None:
    the(m, scf.IfOp).operands = [the(m, func.FuncOp).regions[0].blocks[0].args[0]]


def if_branch_without_yield(m: ModuleOp) -> None:
    the(m, scf.YieldOp, 1).detach()


def function_entry_of_other_types(m: ModuleOp) -> None:
    fn = the(m, func.FuncOp)
    fn.properties["function_type"] = FunctionType.from_lists([f32], [f32])


def module_of_two_blocks(m: ModuleOp) -> None:
    m.body.add_block(Block())


def function_with_a_bad_name(m: ModuleOp) -> None:
    the(m, func.FuncOp).properties["sym_name"] = f32


def value_from_another_function(m: ModuleOp) -> None:
    other = dvm.parse(BRANCH.replace("@f", "@g"))
    fn = the(other, func.FuncOp)
    fn.detach()
    m.body.block.add_op(fn)
    the(m, func.ReturnOp, 1).operands = [the(m, scf.IfOp).results[0]]  # @f's value in @g


def then_branch_yielding_an_argument(m: ModuleOp) -> None:
    the(m, scf.YieldOp, 0).operands = [the(m, func.FuncOp).regions[0].blocks[0].args[0]]


def module_named(m: ModuleOp) -> None:  # (valid: not plain, verified by xDSL)
    m.properties["sym_name"] = StringAttr("named")


@pytest.mark.parametrize(
    "break_it",
    [
        return_of_the_input,
        constant_of_another_type,
        return_not_last,
        yield_in_the_function,
        condition_of_a_tensor,
        if_branch_without_yield,
        function_entry_of_other_types,
        module_of_two_blocks,
        function_with_a_bad_name,
        value_from_another_function,
        then_branch_yielding_an_argument,
        module_named,
    ],
)
def test_a_changed_module_gets_xdsls_verdict(break_it: Callable[[ModuleOp], None]) -> None:
    module = dvm.parse(BRANCH)
    break_it(module)
    try:
        module.verify()
    except VerifyException as e:
        with pytest.raises(VerifyException) as ours:
            verify_module(module, ops_within(module))
        assert str(ours.value) == str(e)
        assert not verifies(ops_within(module))
    else:
        verify_module(module, ops_within(module))
        assert break_it in (module_named, then_branch_yielding_an_argument)


def test_a_parsed_fault_is_located_with_xdsls_message() -> None:
    text = BRANCH.replace("func.return %y : tensor<?xf32>", "func.return %c : i1")
    with pytest.raises(VerifyException, match=r"^<string>:9:3: error: .*same types as"):
        dvm.parse(text)
