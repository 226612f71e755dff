"""Malformed programs get an error at their place from every entry point.

Each program below once ended in an internal error (a `KeyError` in a pass,
a `RecursionError` in the parser, xDSL's `ValueError` for a block label) or
was accepted although it cannot run. `dvm.parse`, `dvm.compile` and `dvm-opt`
must each report it as `file:line:col: error: ...` at the culprit; dvm-opt
exits 1 without a traceback.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from xdsl.utils.exceptions import ParseError, VerifyException

import dvm
from dvm.errors import CallError, ExecutionError
from dvm.ir import MAX_NESTING
from dvm.passes.errors import ProgramError
from dvm.tools.dvm_opt import main as dvm_opt


def nested_ifs(depth: int) -> str:
    """`depth` scf.if nested in each other's then branch (line 2 + i holds the i-th)."""
    t = "tensor<?xf32>"
    lines = [f"func.func @main(%a: {t}, %c: i1) -> {t} {{"]
    lines += [f"{'  ' * (i + 1)}%r{i} = scf.if %c -> ({t}) {{" for i in range(depth)]
    lines += [
        f"{'  ' * (depth + 1)}%e = tensor.exp %a : {t}",
        f"{'  ' * (depth + 1)}scf.yield %e : {t}",
    ]
    for i in reversed(range(depth)):
        pad = "  " * (i + 1)
        inner = f"%r{i + 1}" if i + 1 < depth else "%e"
        if i + 1 < depth:
            lines.append(f"{pad}  scf.yield {inner} : {t}")
        lines += [f"{pad}}} else {{", f"{pad}  scf.yield %a : {t}", f"{pad}}}"]
    lines += [f"  func.return %r0 : {t}", "}"]
    return "\n".join(lines) + "\n"


def nested_fors(depth: int) -> str:
    """`depth` scf.for nested in each other's body (line 4 + i holds the i-th)."""
    t = "tensor<?xf32>"
    lines = [
        f"func.func @main(%a: {t}, %n: index) -> {t} {{",
        "  %c0 = arith.constant 0 : index",
        "  %c1 = arith.constant 1 : index",
    ]
    carried = "%a"
    for i in range(depth):
        pad = "  " * (i + 1)
        loop = f"scf.for %i{i} = %c0 to %n step %c1 iter_args(%x{i} = {carried})"
        lines.append(f"{pad}%r{i} = {loop} -> ({t}) {{")
        carried = f"%x{i}"
    lines += [
        f"{'  ' * (depth + 1)}%e = tensor.exp {carried} : {t}",
        f"{'  ' * (depth + 1)}scf.yield %e : {t}",
    ]
    for i in reversed(range(depth)):
        pad = "  " * (i + 1)
        lines.append(f"{pad}}}")
        if i > 0:
            lines.append(f"{pad}scf.yield %r{i} : {t}")
    lines += [f"  func.return %r0 : {t}", "}"]
    return "\n".join(lines) + "\n"


def brace(text: str, line: int) -> tuple[int, int]:
    """The place of the last `{` on a line (1-based)."""
    return line, text.splitlines()[line - 1].rindex("{") + 1


def function(body: str, args: str = "%x: tensor<?x4xf32>") -> str:
    return f"func.func @main({args}) -> tensor<?x4xf32> {{\n{body}\n}}\n"


T = "tensor<?x4xf32>"

MALFORMED = {
    "use before definition": (
        function(f"  %y = tensor.exp %z : {T}\n  %z = tensor.exp %x : {T}\n  func.return %y : {T}"),
        (2, 19),
        "%z is used before its definition on line 3",
    ),
    "use in its own definition": (
        function(f"  %y = tensor.add %y, %x : ({T}, {T}) -> {T}\n  func.return %y : {T}"),
        (2, 19),
        "%y is used in its own definition",
    ),
    "use in a branch before the definition": (
        function(
            f"  %c = arith.constant true\n  %r = scf.if %c -> ({T}) {{\n"
            f"    scf.yield %z : {T}\n  }} else {{\n    scf.yield %x : {T}\n  }}\n"
            f"  %z = tensor.exp %x : {T}\n  func.return %r : {T}"
        ),
        (4, 15),
        "%z is used before its definition on line 8",
    ),
    "a branch's result used in the branch": (
        function(
            f"  %c = arith.constant true\n  %r = scf.if %c -> ({T}) {{\n"
            f"    scf.yield %r : {T}\n  }} else {{\n    scf.yield %x : {T}\n  }}\n"
            f"  func.return %r : {T}"
        ),
        (4, 15),
        "%r is used in its own definition",
    ),
    "an if that binds a result it does not declare": (
        function(f"  %c = arith.constant true\n  %r = scf.if %c {{\n  }}\n  func.return %x : {T}"),
        (3, 3),
        "Operation has 0 results, but was given 1 to bind.",
    ),
    "an extract whose tensor has another type": (
        function(f"  %e = tensor.extract %x[] : tensor<f32>\n  func.return %x : {T}"),
        (2, 23),
        "operand is used with type tensor<f32>, but has been previously used or defined",
    ),
    "a loop bound from its own induction variable": (
        function(
            "  %c0 = arith.constant 0 : index\n"
            f"  %r = scf.for %i = %c0 to %i step %c0 iter_args(%a = %x) -> ({T}) {{\n"
            f"    scf.yield %a : {T}\n  }}\n  func.return %r : {T}"
        ),
        (3, 28),
        "%i is used in its own definition",
    ),
    f"ifs nested {MAX_NESTING} deep": (
        nested_ifs(MAX_NESTING),
        brace(nested_ifs(MAX_NESTING), MAX_NESTING + 1),
        f"regions nest more than {MAX_NESTING} deep here, which dvm does not support",
    ),
    "120 nested ifs": (
        nested_ifs(120),
        brace(nested_ifs(120), MAX_NESTING + 1),
        f"regions nest more than {MAX_NESTING} deep",
    ),
    "140 nested fors": (
        nested_fors(140),
        brace(nested_fors(140), MAX_NESTING + 3),
        f"regions nest more than {MAX_NESTING} deep",
    ),
    "a dense literal nested 2000 deep": (
        function(
            "  %k = arith.constant dense<" + "[" * 2000 + "1.0" + "]" * 2000 + "> : tensor<f32>\n"
            f"  func.return %x : {T}"
        ),
        (2, None),
        "the program nests too deeply here for the parser",
    ),
    "a type nested 2000 deep": (
        function(
            f"  func.return %x : {T}", f"%x: {T}, %t: " + "tuple<" * 2000 + "f32" + ">" * 2000
        ),
        (1, None),
        "the program nests too deeply here for the parser",
    ),
    "a static dim of 2**63": (
        function(f"  func.return %x : {T}", f"%x: {T}, %y: tensor<9223372036854775808xf32>"),
        (1, 49),
        "shape 9223372036854775808 of f32 is too large",
    ),
    "static dims whose product is 2**64": (
        function(f"  func.return %x : {T}", f"%x: {T}, %y: tensor<?x4294967296x4294967296xi8>"),
        (1, 49),
        "shape ?x4294967296x4294967296 of i8 is too large",
    ),
    "a static dim of 2**61 f64 elements": (
        function(f"  func.return %x : {T}", f"%x: {T}, %y: tensor<2305843009213693952xf64>"),
        (1, 49),
        "its static dims alone hold 18446744073709551616 bytes, more than the 2**63 - 1",
    ),
    "a function defined twice": (
        function(f"  func.return %x : {T}") * 2,
        (4, 1),
        'redefinition of symbol "main" (first defined on line 1)',
    ),
    "a function whose body is empty": (
        f"func.func @main(%x: {T}) -> {T} {{\n}}\n",
        (1, 1),
        "contains empty block in single-block region that expects at least a terminator",
    ),
    "a string not closed at the end of the input": (
        function(f"  func.return %x : {T}") + '"',
        (4, 1),
        "string literal not closed before the end of the input",
    ),
}


def located(error: BaseException | str, place: tuple[int, int | None], message: str) -> None:
    first = str(error).splitlines()[0]
    line, column = place
    where = f"<string>:{line}:{column if column is not None else ''}"
    assert first.startswith(where), first
    assert message in first, first


@pytest.mark.parametrize("name", MALFORMED)
def test_parse_and_compile_locate_the_error(name: str) -> None:
    text, place, message = MALFORMED[name]
    with pytest.raises((ParseError, VerifyException)) as parsed:
        dvm.parse(text)
    located(parsed.value, place, message)
    with pytest.raises((ParseError, VerifyException)) as compiled:
        dvm.compile(text)
    located(compiled.value, place, message)


@pytest.mark.parametrize("name", MALFORMED)
def test_dvm_opt_exits_1_with_the_located_error(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, place, message = MALFORMED[name]
    source = tmp_path / "bad.mlir"
    source.write_text(text)
    assert dvm_opt([str(source), "-p", "dvm-pipeline"]) == 1
    err = capsys.readouterr().err
    assert "internal error" not in err and "Traceback" not in err
    located(err.replace(str(source), "<string>"), place, message)


@pytest.mark.parametrize("nest", [nested_ifs, nested_fors])
def test_nesting_up_to_the_limit_runs_at_every_level(nest: object) -> None:
    assert callable(nest)
    text = nest(MAX_NESTING - 1)  # with the function body: MAX_NESTING regions deep
    a = np.linspace(-1, 1, 5, dtype=np.float32)
    last = np.bool_(True) if nest is nested_ifs else 1
    want = dvm.interpret(text, a, last)
    np.testing.assert_allclose(dvm.compile(text)(a, last), want, rtol=1e-6)
    np.testing.assert_allclose(dvm.compile(text, device="ascend910b")(a, last), want, rtol=1e-6)
    printed = str(dvm.parse(text))  # with an explicit module around it
    assert str(dvm.parse(printed)) == printed


def test_numbered_block_labels_parse() -> None:
    """`^0` is a valid MLIR block label (the docs write kernel bodies so)."""
    text = f"""func.func @main(%x: {T}) -> {T} {{
  %f = tensor.fusion vector (%x) : ({T}) -> ({T}) {{
  ^0(%a: {T}):
    %e = tensor.exp %a : {T}
    tensor.yield %e : {T}
  }}
  func.return %f : {T}
}}
"""
    x = np.ones((2, 4), np.float32)
    np.testing.assert_allclose(dvm.interpret(text, x), np.exp(x), rtol=1e-6)


def test_compiling_a_module_built_with_a_use_before_its_definition() -> None:
    """The parser rejects such a program; a module built in Python may still have one,
    and `symbolic-shapes` names the op instead of failing with a `KeyError`."""
    module = dvm.parse(f"""func.func @main(%x: {T}) -> {T} {{
  %y = tensor.exp %x : {T}
  %z = tensor.neg %y : {T}
  func.return %z : {T}
}}
""")
    block = next(iter(module.ops)).regions[0].block
    exp = block.first_op
    assert exp is not None and exp.next_op is not None
    exp.detach()
    block.insert_op_after(exp, block.first_op)  # now after the neg that uses it
    with pytest.raises(ProgramError, match=r"<string>:3:3: %z = tensor.neg: uses %y before its"):
        dvm.compile(module)


def test_a_kernel_written_in_the_program_that_cannot_be_one_is_named() -> None:
    """A `tensor.fusion` written in the program whose parts need not have one domain
    (`fuse` never makes one; a choice's first region would take its second) is an
    error at the kernel, not the domain analysis's internal `Illegal`."""
    x, y = "tensor<?xf32>", "tensor<?x?xf32>"
    text = f"""func.func @main(%x: {x}, %y: {y}) -> ({x}, {y}) {{
  %a, %b = tensor.fusion vector (%x, %y) : ({x}, {y}) -> ({x}, {y}) {{
  ^bb0(%x1: {x}, %y1: {y}):
    %e = tensor.neg %x1 : {x}
    %f = tensor.abs %y1 : {y}
    tensor.yield %e, %f : {x}, {y}
  }}
  func.return %a, %b : {x}, {y}
}}
"""
    with pytest.raises(ProgramError, match=r"<string>:2:3: %a, %b = tensor.fusion: cannot be one"):
        dvm.compile(text)


def test_an_op_whose_results_share_a_name_is_named_as_written() -> None:
    """`%c:2 = tensor.top_k ...` is named so in a call's error, not `%c, %c`."""
    x, v, i = "tensor<?x?xf32>", "tensor<?x5xf32>", "tensor<?x5xi64>"
    text = f"""func.func @main(%x: {x}) -> ({v}, {i}) {{
  %c:2 = tensor.top_k %x {{k = 5}} : {x} -> {v}, {i}
  func.return %c#0, %c#1 : {v}, {i}
}}
"""
    with pytest.raises(CallError, match=r"@main: %c:2 = tensor.top_k needs "):
        dvm.compile(text, cache=False)(np.ones((2, 3), np.float32))


@pytest.mark.parametrize("condition", ["y_0 <= 3", "y_0 == x_0"])
def test_a_choice_condition_naming_no_dim_is_an_error(condition: str) -> None:
    """A written choice's condition naming a symbol that is no argument's dim (`y_0`
    where only `%x` exists) cannot be decided: an error at the choice, not sympy's
    `TypeError` (`<=`), a silent second region (`==`) or the host validator's error."""
    x = "tensor<?xf32>"
    text = f"""func.func @main(%x: {x}) -> {x} {{
  %r = tensor.choice [{condition}] -> ({x}) {{
    %e = tensor.neg %x : {x}
    tensor.yield %e : {x}
  }} else {{
    %e = tensor.neg %x : {x}
    tensor.yield %e : {x}
  }}
  func.return %r : {x}
}}
"""
    where = rf"<string>:2:3: %r = tensor.choice: condition `{re.escape(condition)}` names y_0,"
    with pytest.raises(ProgramError, match=where):
        dvm.compile(text)
    with pytest.raises(ProgramError, match=where):
        dvm.interpret(text, np.ones(3, np.float32))


def test_lowering_a_kernel_without_symbolic_shapes_names_the_op(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A kernel written by hand, lowered without `symbolic-shapes` before: an error at
    the op whose shape is missing, not a `KeyError`."""
    source = tmp_path / "kernel.mlir"
    source.write_text(f"""func.func @main(%x: {T}) -> {T} {{
  %y = tensor.fusion vector (%x) {{dvm.domain = #dvm.shape<x_0, x_1>}} : ({T}) -> {T} {{
  ^bb0(%a: {T}):
    %e = tensor.exp %a : {T}
    tensor.yield %e : {T}
  }}
  func.return %y : {T}
}}
""")
    assert dvm_opt([str(source), "-p", "convert-tensor-to-tile"]) == 1
    err = capsys.readouterr().err
    assert "internal error" not in err
    assert f"{source}:4:5: error: %e = tensor.exp: no symbolic shape" in err


def test_bytecode_beyond_the_binary_format_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hand-written extent index of 300 parses, but a binary holds it in a byte: the
    error names the op and its program."""
    source = tmp_path / "wide.mlir"
    source.write_text(
        """bytecode.program @wide params [] {
  bytecode.arg a0 f32 [x_0]
  bytecode.slot s0 = x_0
  bytecode.slot s1 = 0
  bytecode.grid [s0]
  bytecode.reg r0 f32 (s0) at s1
  bytecode.view v0 a0 offset s1 (s0 s0)
  bytecode.fill r0, 0.0, (v0[300])
}
"""
    )
    assert dvm_opt([str(source), "-t", "bytecode", "-o", str(tmp_path / "wide.dvmb")]) == 1
    err = capsys.readouterr().err
    assert "internal error" not in err
    assert "dvm-opt: error: cannot encode the bytecode" in err
    assert f"({source}:8:3: bytecode.fill in @wide: instruction 0: " in err  # the op at fault


def test_a_binary_of_split_chunks_is_refused_before_the_file_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A binary module has no separators: the chunks would overwrite one another (and
    xDSL's text separators the binary), leaving a file that does not decode."""
    chunk = function(f"  %y = tensor.exp %x : {T}\n  func.return %y : {T}")
    source = tmp_path / "two.mlir"
    source.write_text(f"{chunk}\n// -----\n{chunk}")
    out = tmp_path / "two.dvmb"
    argv = [str(source), "--split-input-file", "-p", "dvm-pipeline", "-t", "bytecode"]
    assert dvm_opt([*argv, "-o", str(out)]) == 1
    assert "write each chunk to a file of its own" in capsys.readouterr().err
    assert not out.exists()


def test_interpreting_a_call_that_never_returns() -> None:
    text = function(f"  %y = func.call @main(%x) : ({T}) -> {T}\n  func.return %y : {T}")
    with pytest.raises(ExecutionError, match=r"@main: calls \(func.call\) nest deeper"):
        dvm.interpret(text, np.ones((2, 4), np.float32))


@pytest.mark.parametrize(
    ("line", "says"),
    [
        (
            "%e = tensor.exp %x : tensor<?xf32> -> tensor<?xf32>",
            "'tensor.exp' names no result type: the syntax is `tensor.exp %x : tensor<...>",
        ),
        (
            "%e = tensor.add %x, %x : tensor<?xf32>",
            "the syntax is `tensor.add %a, %b : (tensor<...>, tensor<...>) -> tensor<...>`",
        ),
        (
            "%e = tensor.isnan %x : tensor<?xf32>",
            "the syntax is `tensor.isnan %x : tensor<...xT> -> tensor<...xi1>`",
        ),
    ],
)
def test_an_elementwise_op_in_the_wrong_syntax_is_told_its_syntax(line: str, says: str) -> None:
    source = "\n".join(
        [
            "func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {",
            f"  {line}",
            "  func.return %x : tensor<?xf32>",
            "}",
        ]
    )
    with pytest.raises(ParseError) as error:
        dvm.parse(source)
    assert says in str(error.value)
