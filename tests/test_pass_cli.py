"""`dvm-opt -p symbolic-shapes,fuse,stack` on every shared example.

Each run must exit 0 with nothing on stderr and print IR that parses back,
verifies and prints to the same text; the pipeline run again on its own
output changes nothing; and the fused program computes what the original
does. `dvm_opt.main` is called in-process (a subprocess costs a second of
start-up per call); one subprocess checks that the installed `dvm-opt`
script prints the same as the in-process call.
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import EXAMPLES_DIR, load_reference
from test_conformance import as_tuple, run_reference

import dvm
from dvm.dialects import tensor as t
from dvm.tools import dvm_opt

PIPELINE = "symbolic-shapes,fuse,stack"
DVM_OPT = Path(sys.executable).parent / "dvm-opt"


def _examples() -> list[Any]:
    if not EXAMPLES_DIR.is_dir():  # the test itself skips, through the fixture
        return [pytest.param("missing", id="examples-missing")]
    return [pytest.param(f, id=Path(f).stem) for f in sorted(load_reference().EXAMPLES)]


def run_opt(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """`dvm-opt argv...` in this process: its stdout, after checking that it
    exited 0 and printed no diagnostic."""
    code = dvm_opt.main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, f"dvm-opt {' '.join(argv)} exited {code}:\n{err}"
    assert err == "", err
    return out


@pytest.mark.parametrize("file", _examples())
def test_pipeline_output_parses_back(
    file: str,
    examples_dir: Path,
    reference: Any,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = run_opt(capsys, str(examples_dir / file), "-p", PIPELINE)
    module = dvm.parse(out)  # parses and verifies
    assert str(module).rstrip() == out.rstrip(), "the printed IR does not print back the same"
    kernels = [op for op in module.walk() if isinstance(op, t.FusionOp)]
    assert kernels, "fuse made no kernel"
    assert not any(
        op.name.startswith("tensor.") and op.name not in KERNEL_LEVEL
        for op in top_level_ops(module)
    ), "a tensor op was left outside every kernel"

    printed = tmp_path / "fused.mlir"
    printed.write_text(out)
    assert run_opt(capsys, str(printed)) == out, "dvm-opt does not print its output back the same"
    again = run_opt(capsys, str(printed), "-p", PIPELINE)
    assert again == out, "the pipeline changes its own output"

    name, spec, fn = reference.EXAMPLES[file]
    dims = dict.fromkeys("RCMKNBSE", 5)
    args = reference.make_inputs(spec, dims, np.random.default_rng(0), index_value=2)
    for got, want in zip(
        as_tuple(dvm.interpret(module, *args, entry=name)),
        run_reference(file, fn, args),
        strict=True,
    ):
        assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)


KERNEL_LEVEL = {
    "tensor.fusion",
    "tensor.stack",
    "tensor.choice",
    "tensor.yield",
    "tensor.dim",
    "tensor.extract",
}
"""Tensor ops that may stand in a function after fuse: kernels, their
containers, and the index/scalar ops that stay on the host."""


def top_level_ops(module: Any) -> list[Any]:
    """Ops of the functions (including control flow bodies), not inside kernels."""
    found: list[Any] = []
    for op in module.walk():
        parent = op.parent_op()
        inside = False
        while parent is not None:
            if isinstance(parent, t.FusionOp):
                inside = True
                break
            parent = parent.parent_op()
        if not inside:
            found.append(op)
    return found


def kernel_kinds(out: str) -> Counter[str]:
    module = dvm.parse(out)
    return Counter(op.kind.data for op in module.walk() if isinstance(op, t.FusionOp))


def test_kernel_counts_of_bert_and_mmoe(
    examples_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The counts docs/passes.md states: BERT is 10 kernels (two of them the apart
    side of a guarded choice), MMoE 4."""
    bert = run_opt(capsys, str(examples_dir / "bert_layer.mlir"), "-p", PIPELINE)
    assert kernel_kinds(bert) == {"cube": 1, "mix": 8, "vector": 1}
    assert bert.count("tensor.choice [x_1 <= 512]") == 1
    mmoe = run_opt(capsys, str(examples_dir / "mmoe.mlir"), "-p", PIPELINE)
    assert kernel_kinds(mmoe) == {"cube": 2, "mix": 1, "vector": 1}
    assert bert.count("tensor.stack parallel") == 1 and mmoe.count("tensor.stack parallel") == 1
    assert "%q, %k, %v = tensor.stack parallel" in bert
    assert "%h, %l0, %l1 = tensor.stack parallel" in mmoe


def test_installed_script_prints_the_same(
    examples_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The one subprocess: the `dvm-opt` entry point, as a user runs it."""
    path = str(examples_dir / "bert_layer.mlir")
    expected = run_opt(capsys, path, "-p", PIPELINE)
    result = subprocess.run(
        [str(DVM_OPT), path, "-p", PIPELINE], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert result.stdout == expected
