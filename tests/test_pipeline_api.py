"""The Python pass-pipeline API: the same names and options as `dvm-opt -p`."""

from __future__ import annotations

import pytest

import dvm
import dvm.pipeline as pipeline
from dvm.dialects import tensor as t
from dvm.tools import dvm_opt

SOFTMAX = """
func.func @softmax(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %m = tensor.reduce_max %x {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %d = tensor.sub %x, %m : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  %e = tensor.exp %d : tensor<?x?xf32>
  %s = tensor.reduce_sum %e {axes = [1], keepdims = true} : tensor<?x?xf32> -> tensor<?x1xf32>
  %y = tensor.div %e, %s : (tensor<?x?xf32>, tensor<?x1xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
"""


def kernels(module: object) -> list[t.FusionOp]:
    return [op for op in module.walk() if isinstance(op, t.FusionOp)]  # type: ignore[attr-defined]


def test_the_api_knows_the_passes_dvm_opt_knows() -> None:
    assert set(pipeline.passes()) == set(dvm_opt.PASSES)
    assert {"symbolic-shapes", "fuse", "stack", "dvm-pipeline"} <= set(pipeline.passes())


def test_run_with_options_changes_the_result() -> None:
    assert len(kernels(pipeline.run(SOFTMAX, "symbolic-shapes,fuse"))) == 1
    assert len(kernels(pipeline.run(SOFTMAX, "symbolic-shapes,fuse{max-ops=2}"))) == 3


def test_a_parsed_pipeline_applies_to_a_parsed_module() -> None:
    module = dvm.parse(SOFTMAX)
    pipeline.parse("dvm-pipeline{device=ascend910b}").apply(pipeline.context(), module)
    assert "bytecode.program" in str(module)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("fuse{nope=1}", "nope"),
        ("no-such-pass", "no-such-pass"),
        ("stack{mode=diagonal}", "mode must be one of"),
        ("dvm-pipeline{device=gpu}", "unknown device"),
        ("fuse{", "Expected argument name here"),
        ("fuse,,stack", "Expected pass name here"),
    ],
)
def test_bad_pipelines_are_value_errors_naming_the_problem(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pipeline.parse(spec)


def test_a_program_error_is_a_dvm_error() -> None:
    """What a pass refuses is caught by `except DvmError`, as every deliberate error."""
    from dvm.errors import DvmError

    bad = """
func.func @f(%x: tensor<?x?x?x?x?x?x?x?x?xf32>) -> tensor<?x?x?x?x?x?x?x?x?xf32> {
  %y = tensor.exp %x : tensor<?x?x?x?x?x?x?x?x?xf32>
  func.return %y : tensor<?x?x?x?x?x?x?x?x?xf32>
}
"""
    with pytest.raises(DvmError, match="exceeds the VM's maximum rank"):
        dvm.compile(bad)
