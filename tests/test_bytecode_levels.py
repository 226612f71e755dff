"""Every kernel of every shared example, as bytecode on the VM.

Each example is lowered with `dvm-pipeline{device=D}` (for both presets)
and run through the reference interpreter, whose `tile.launch` then runs
the kernels' bytecode on the VM. The results must match the tile level
(the tile interpreter on the same tiling) and the numpy reference, on
shapes with dims of 0, 1, primes and larger ones. The binary of every
kernel must also survive encode -> decode -> text -> assemble unchanged.
"""

from __future__ import annotations

import warnings
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import EXAMPLES_DIR, load_reference
from test_conformance import TOLERANCES, as_tuple, run_reference
from xdsl.dialects.builtin import ModuleOp

import dvm
import dvm.pipeline as pipeline
from dvm import vm
from dvm.dialects.bytecode import ProgramOp
from dvm.lowering.bytecode_to_vm import (
    decode_module,
    encode_module,
    from_postfix,
    from_program,
    to_program,
)

PRESETS = ("host", "ascend910b")
DRAWS = (
    {"R": 0, "C": 5, "M": 0, "K": 3, "N": 2, "B": 0, "S": 3, "E": 2},
    {"R": 1, "C": 1, "M": 1, "K": 1, "N": 1, "B": 1, "S": 1, "E": 1},
    {"R": 7, "C": 13, "M": 7, "K": 13, "N": 5, "B": 2, "S": 7, "E": 3},
    {"R": 97, "C": 301, "M": 61, "K": 67, "N": 71, "B": 3, "S": 31, "E": 5},
    {"R": 2, "C": 3001, "M": 3, "K": 509, "N": 2, "B": 1, "S": 61, "E": 1},
)


def _cases() -> list[Any]:
    if not EXAMPLES_DIR.is_dir():
        return [pytest.param("missing", "host", id="examples-missing")]
    files = sorted(load_reference().EXAMPLES)
    return [pytest.param(f, d, id=f"{Path(f).stem}-{d}") for f in files for d in PRESETS]


@cache
def lowered(program: Path | str, spec: str) -> ModuleOp:
    return pipeline.run(dvm.parse(program), spec)


MATMUL = """
func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c = tensor.matmul %a, %b : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %c : tensor<?x?xf32>
}
"""


def close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, what
    rtol, atol = TOLERANCES[want.dtype]
    np.testing.assert_allclose(
        got, want, rtol=10 * rtol, atol=10 * atol, equal_nan=True, err_msg=what
    )


@pytest.mark.parametrize(("file", "device"), _cases())
def test_bytecode_matches_tiles_and_reference(
    file: str, device: str, examples_dir: Path, reference: Any
) -> None:
    name, spec, fn = reference.EXAMPLES[file]
    tiles = lowered(
        examples_dir / file, f"symbolic-shapes,fuse,stack,convert-tensor-to-tile{{device={device}}}"
    )
    bytecode = lowered(examples_dir / file, f"dvm-pipeline{{device={device}}}")
    assert any(isinstance(op, ProgramOp) for op in bytecode.ops)
    for i, dims in enumerate(DRAWS):
        if file == "bert_layer.mlir" and dims["S"] > 31:
            continue  # attention is S x S per head: keep the file quick
        args = reference.make_inputs(spec, dims, np.random.default_rng(i), index_value=i % 3)
        want = run_reference(file, fn, args)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            on_vm = as_tuple(dvm.interpret(bytecode, *args, entry=name))
            on_tiles = as_tuple(dvm.interpret(tiles, *args, entry=name))
        for k, (v, t_, w) in enumerate(zip(on_vm, on_tiles, want, strict=True)):
            close(v, t_, f"{file} result {k} on {dims}: VM vs tiles")
            close(v, np.asarray(w), f"{file} result {k} on {dims}: VM vs reference")


@pytest.mark.parametrize(("file", "device"), _cases())
def test_binaries_round_trip(file: str, device: str, examples_dir: Path) -> None:
    module = lowered(examples_dir / file, f"dvm-pipeline{{device={device}}}")
    data = encode_module(module)
    decoded = decode_module(data)
    programs = [op for op in module.ops if isinstance(op, ProgramOp)]
    assert [n for n, _ in decoded] == [p.sym_name.data for p in programs]
    for (label, program), original in zip(decoded, programs, strict=True):
        assert program == to_program(original)
        text = vm.disassemble(program)
        assert vm.disassemble(vm.assemble(text)) == text
        assert vm.encode(vm.assemble(text)) == vm.encode(program)
        # Through the dialect the slots are sympy again (their tokens may be
        # reordered once), then stable: a second round changes nothing.
        once = to_program(from_program(program, label))
        assert to_program(from_program(once, label)) == once
        assert (once.code, once.registers, once.views) == (
            program.code,
            program.registers,
            program.views,
        )


@pytest.mark.parametrize("file", ["addmm_relu.mlir", "bert_layer.mlir"])
def test_a_program_holds_one_token_per_value(file: str, examples_dir: Path) -> None:
    """Equal slot tokens of a program are one object, as in a decoded binary: the VM's
    validator checks each once (a nested tile size repeats its operators and constants
    hundreds of times)."""
    module = lowered(examples_dir / file, "dvm-pipeline")
    for op in module.ops:
        if isinstance(op, ProgramOp):
            tokens = [t for slot in to_program(op).slots for t in slot.expr]
            assert len({id(t) for t in tokens}) == len(set(tokens)) < len(tokens)


def test_a_program_prints_the_device_it_was_lowered_for() -> None:
    """The printed program keeps its attributes (the device its kernel runs on): the
    text parses back to the same program."""
    module = lowered(MATMUL, "dvm-pipeline{device=ascend910b}")
    programs = [op for op in module.ops if isinstance(op, ProgramOp)]
    again = [op for op in dvm.parse(str(module)).ops if isinstance(op, ProgramOp)]
    assert programs and len(again) == len(programs)
    for program, parsed in zip(programs, again, strict=True):
        assert 'attributes {dvm.device = "ascend910b"}' in str(program)
        assert parsed.attributes == program.attributes
        assert str(parsed) == str(program)


def test_a_corrupt_module_file_is_a_bytecode_error(examples_dir: Path) -> None:
    data = encode_module(lowered(examples_dir / "layernorm.mlir", "dvm-pipeline"))
    for bad in (data[:-3], b"XXXX" + data[4:], data + b"\0"):
        with pytest.raises(vm.BytecodeError):
            decode_module(bad)


def test_a_slot_divided_by_a_literal_zero_reads_back_as_the_vms_zero() -> None:
    """A binary may divide a slot by the literal 0, which the VM computes as 0 (never
    raising); read back as IR it is 0 too, not sympy's `zoo` (a TypeError at `floor`)."""
    dim, zero = vm.Tok(vm.ExprOp.DIM, 0, 0), vm.Tok(vm.ExprOp.CONST, 0)
    for op in (vm.ExprOp.FLOORDIV, vm.ExprOp.CEILDIV, vm.ExprOp.MOD):
        assert from_postfix([dim, zero, vm.Tok(op)]) == 0


@pytest.mark.parametrize("device", PRESETS)
def test_a_whole_k_matmul_overwrites_instead_of_accumulating(device: str) -> None:
    """The `_whole_k` kernel's mma lands on a zero constant: it becomes an mma
    without the accumulate flag into a fresh register, with no fill before it;
    the chunked kernel still fills its accumulator and accumulates."""
    module = lowered(MATMUL, f"dvm-pipeline{{device={device}}}")
    texts = {
        op.sym_name.data: vm.disassemble(to_program(op))
        for op in module.walk()
        if isinstance(op, ProgramOp)
    }
    whole, chunked = texts["matmul_k0_whole_k"], texts["matmul_k0"]
    assert "fill" not in whole and "loop" not in whole
    assert [line.split(",")[-1].strip() for line in whole.splitlines() if "mma" in line] == ["[]"]
    assert "fill" in chunked and "[acc]" in chunked
