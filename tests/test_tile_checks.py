"""Hand-edited tile and bytecode IR: a clear error naming the kernel or op, never a crash.

A softmax is lowered to tile IR and to bytecode; each case edits the text as a
person might (an attribute deleted or of another kind, a rank, a grid axis, an
element type, a slot, a register changed) and runs what reads that level:
`dvm-opt -p convert-tile-to-bytecode` or `dvm-opt -t bytecode`, and
`dvm.interpret`. Each must fail with the case's message and a location, with no
"internal error". (The verifier's messages, at their ops, are FileCheck tests:
tests/filecheck/dialects/tile/tile_invalid.mlir and
tests/filecheck/dialects/bytecode/bytecode_invalid.mlir.)
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from test_pipeline_api import SOFTMAX
from xdsl.utils.exceptions import DiagnosticException

import dvm
from dvm.errors import DvmError
from dvm.tools.dvm_opt import main as dvm_opt

TILE = "symbolic-shapes,fuse,convert-tensor-to-tile"
PIPELINES = {"tile": TILE, "bytecode": f"{TILE},convert-tile-to-bytecode"}
READERS = {"tile": ["-p", "convert-tile-to-bytecode"], "bytecode": ["-t", "bytecode"]}

CASES = [
    # (level, pattern, replacement, message); each edit applies to every kernel.
    ("tile", r"dvm\.axes = \[[^\]]*\], ", "", "has no dvm.axes"),
    (
        "tile",
        r"dvm\.arg_shapes = \[[^\]]*\]",
        "dvm.arg_shapes = [#dvm.shape<x_0, x_1>]",
        "1 shapes",
    ),
    ("tile", r"dvm\.arg_shapes = \[[^\]]*\]", "dvm.arg_shapes = 3 : i64", "array of #dvm.shape"),
    ("tile", r'dvm\.device = "host"', 'dvm.device = "tpu"', "device presets"),
    ("tile", r"\[t0, 1\], f32>", "[t0, 1, 1], f32>", "rank"),
    ("tile", r"index \[grid0, whole\]", "index [grid1, whole]", "walks grid1"),
    (
        "tile",
        r"arg_shapes = \[#dvm.shape<x_0, x_1>",
        "arg_shapes = [#dvm.shape<x_0>",
        "its shape 1",
    ),
    ("tile", r"axes = \[1 : i64\]", "axes = [2 : i64]", "distinct axes"),
    ("tile", r"grid \[ceiling\(x_0/t0\)\]", "grid [-1]", "a grid of [-1] tiles"),
    ("tile", r"t0 = #dvm.expr<[^>]*>", "t0 = #dvm.expr<-2>", "a grid of [-2] tiles"),
    ("tile", r"sizes \[x_0, x_1\]", "sizes [-5, x_1]", "a dim of size -5"),
    ("tile", r"tiles \[t0, t1\]", "tiles [-2, t1]", "tiles must be the tile's extents"),
    ("bytecode", r"slot s2 = x_0", "slot s2 = zz", "symbol zz is neither"),
    ("bytecode", r'dvm\.device = "host"', 'dvm.device = "tpu"', "device presets"),
    ("bytecode", r"reg r0 f32 \(s0, s1\)", "reg r0 f32 (s0)", "rank mismatch"),
]


@cache
def lowered(level: str, tmp: Path) -> str:
    source, out = tmp / "softmax.mlir", tmp / f"softmax-{level}.mlir"
    source.write_text(SOFTMAX)
    assert dvm_opt([str(source), "-p", PIPELINES[level], "-o", str(out)]) == 0
    return out.read_text()


@pytest.fixture(scope="module")
def lowered_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("lowered")


@pytest.mark.parametrize(("level", "pattern", "replacement", "message"), CASES)
def test_an_edited_lowered_program_is_a_clear_error(
    level: str,
    pattern: str,
    replacement: str,
    message: str,
    lowered_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    text, edits = re.subn(pattern, replacement, lowered(level, lowered_dir))
    assert edits, f"{pattern!r} is not in the {level}-level softmax"
    edited = tmp_path / "edited.mlir"
    edited.write_text(text)
    code = dvm_opt([str(edited), *READERS[level], "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert "internal error" not in err
    if code:  # (a rank the VM checks when the program runs may encode)
        assert message in err and re.search(r"\.mlir:\d+:\d+: ", err), err
    x = np.random.default_rng(0).standard_normal((5, 7)).astype(np.float32)
    with pytest.raises((DvmError, DiagnosticException)) as raised:
        dvm.interpret(text, x)
    assert message in str(raised.value)
    assert re.search(r"@softmax_k0|:\d+:\d+", str(raised.value)), "the error names no place"


def test_the_unedited_program_runs(lowered_dir: Path) -> None:
    """The cases' baseline: both levels run and agree with numpy."""
    x = np.random.default_rng(1).standard_normal((5, 7)).astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    for level in PIPELINES:
        got = dvm.interpret(lowered(level, lowered_dir), x)
        np.testing.assert_allclose(got, e / e.sum(axis=1, keepdims=True), rtol=1e-5)
