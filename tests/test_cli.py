"""`dvm-opt` as a user meets it: its exit code, stdout and stderr.

The promise under test: good input exits 0; every kind of bad input exits 1
with a diagnostic on stderr -- `file:line:col: error: ...` when the error has
a place in the input -- and never a Python traceback.

Starting Python and importing xDSL costs about a second, so a few invocations
run as processes of the installed script (see `SUBPROCESSES`: a real exit code,
standard input and interpreter), started at once, and the rest call `main` in
this process with its streams captured, an exception escaping it failing the test.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import io
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from dvm.passes import lazy_pass
from dvm.tools import dvm_opt

BIN = Path(sys.executable).parent
DVM_OPT = str(BIN / "dvm-opt")
LOCATION = re.compile(r"^(?P<file>[^\s:]+):(?P<line>\d+):(?P<col>\d+): error: ", re.MULTILINE)

GOOD = """\
func.func @f(%x: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<?x4xf32> {
  %y = tensor.add %x, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
"""

PARSE_ERROR = """\
func.func @f(%x: tensor<4xf32>) {
  %y = tensor.nope %x : tensor<4xf32>
  func.return
}
"""

VERIFY_ERROR = """\
func.func @f(%x: tensor<4x3xf32>) {
  %c = arith.constant 0 : index
  %y = tensor.reduce_sum %x {axes = [2]} : tensor<4x3xf32> -> tensor<4xf32>
  func.return
}
"""

SPLIT = f"{GOOD}\n// -----\n\n{VERIFY_ERROR}"
"""A good chunk, then the verify error: the bad op is on line 10 of the file."""

PASSES_MODULE = '''\
"""Passes for the CLI tests, registered in dvm-opt's PASSES before main() runs."""

import sys
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.passes import ModulePass

from dvm.dialects import tensor
from dvm.passes import lazy_pass
from dvm.tools import dvm_opt


@dataclass(frozen=True)
class NoopPass(ModulePass):
    name = "test-noop"
    times: int = 1

    def apply(self, ctx, op):
        pass


@dataclass(frozen=True)
class CrashPass(ModulePass):
    name = "test-crash"

    def apply(self, ctx, op):
        raise RuntimeError("the test pass crashed on purpose")


@dataclass(frozen=True)
class BreakPass(ModulePass):
    """Inserts tensor.exp over the first argument: invalid on integers."""

    name = "test-break"

    def apply(self, ctx, op):
        f = next(o for o in op.walk() if isinstance(o, func.FuncOp))
        exp = tensor.ELEMENTWISE_OPS["exp"](f.args[0])
        f.body.block.insert_op_before(exp, f.body.block.first_op)


dvm_opt.PASSES["test-noop"] = lazy_pass("cli_passes", "NoopPass")
dvm_opt.PASSES["test-crash"] = lambda: CrashPass
dvm_opt.PASSES["test-break"] = lambda: BreakPass
'''

DRIVER = "import sys, cli_passes; from dvm.tools.dvm_opt import main; sys.exit(main())"
"""dvm-opt with the test passes: `python -c DRIVER args...`."""


@dataclass(frozen=True)
class Run:
    """One finished invocation."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    def __str__(self) -> str:
        return f"$ {' '.join(self.args)}\nexit {self.returncode}\n{self.stdout}\n{self.stderr}"


def invocations(tmp: Path) -> dict[str, list[str]]:
    """Every command line under test, by name, with its input files written to `tmp`."""
    files = {
        "good.mlir": GOOD.encode(),
        "parse_error.mlir": PARSE_ERROR.encode(),
        "verify_error.mlir": VERIFY_ERROR.encode(),
        "split.mlir": SPLIT.encode(),
        "latin1.mlir": "func.func @f() {\n  // café\n  func.return\n}\n".encode("latin-1"),
        "int_arg.mlir": b"func.func @f(%x: tensor<4xi32>) {\n  func.return\n}\n",
        "cli_passes.py": PASSES_MODULE.encode(),
    }
    for name, data in files.items():
        (tmp / name).write_bytes(data)
    driver = [sys.executable, "-c", DRIVER]
    return {
        "good": [DVM_OPT, "good.mlir"],
        "output_file": [DVM_OPT, "good.mlir", "-o", "out.mlir"],
        "stdin": [DVM_OPT],
        "stdin_dash": [DVM_OPT, "-"],
        "verify_diagnostics": [DVM_OPT, "verify_error.mlir", "--verify-diagnostics"],
        "parse_error": [DVM_OPT, "parse_error.mlir"],
        "verify_error": [DVM_OPT, "verify_error.mlir"],
        "split_verify_error": [DVM_OPT, "split.mlir", "--split-input-file"],
        "non_utf8": [DVM_OPT, "latin1.mlir"],
        "missing_file": [DVM_OPT, "missing.mlir"],
        "directory": [DVM_OPT, "."],
        "unwritable_output": [DVM_OPT, "good.mlir", "-o", "no/such/dir/out.mlir"],
        "unknown_pass": [DVM_OPT, "good.mlir", "-p", "no-such-pass"],
        "pipeline_syntax": [DVM_OPT, "good.mlir", "-p", "a{"],
        "unknown_target": [DVM_OPT, "good.mlir", "-t", "no-such-target"],
        "target_syntax": [DVM_OPT, "good.mlir", "-t", "bytecode{"],
        "unknown_target_option": [DVM_OPT, "good.mlir", "-t", "bytecode-asm{width=3}"],
        "frontend_syntax": [DVM_OPT, "good.mlir", "-f", "mlir}"],
        "unknown_flag": [DVM_OPT, "good.mlir", "--no-such-flag"],
        "unknown_pass_option": [*driver, "good.mlir", "-p", "test-noop{speed=3}"],
        "bad_pass_option_value": [*driver, "good.mlir", "-p", "test-noop{times=many}"],
        "pass_crash": [*driver, "good.mlir", "-p", "test-crash"],
        "pass_breaks_ir": [*driver, "int_arg.mlir", "-p", "test-break"],
    }


@pytest.fixture(scope="module")
def cli_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The working directory of the invocations, holding their files."""
    return tmp_path_factory.mktemp("cli")


SUBPROCESSES = ("good", "stdin", "parse_error", "pass_crash")
"""The invocations run as processes: the installed script's output, standard input
read from a pipe, and a located error and an internal error, each exit 1 with no
traceback from a real interpreter."""


def in_process(args: list[str], stdin: str | None) -> Run:
    """`args` run by calling `dvm_opt.main` (the script or driver prefix dropped),
    with `stdin` as standard input and the output streams captured."""
    argv = args[1:] if args[0] == DVM_OPT else args[3:]  # driver: python -c DRIVER
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((stdin or "").encode())))
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = dvm_opt.main(argv)
    return Run(args, code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def runs(cli_dir: Path) -> Iterator[dict[str, Run]]:
    """Every invocation, run in `cli_dir` (the processes concurrently); results by name."""
    tmp = cli_dir
    env = {**os.environ, "PYTHONPATH": str(tmp)}
    commands = invocations(tmp)
    started: dict[str, subprocess.Popen[str]] = {}
    for name in SUBPROCESSES:
        started[name] = subprocess.Popen(
            commands[name],
            cwd=tmp,
            env=env,
            stdin=subprocess.PIPE if name.startswith("stdin") else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    results: dict[str, Run] = {}
    with pytest.MonkeyPatch.context() as patch:
        # The test passes, registered as the driver registers them, in a copy of PASSES.
        patch.chdir(tmp)
        patch.syspath_prepend(str(tmp))
        patch.setattr(dvm_opt, "PASSES", dict(dvm_opt.PASSES))
        patch.delitem(sys.modules, "cli_passes", raising=False)
        importlib.import_module("cli_passes")
        for name, args in commands.items():
            if name not in SUBPROCESSES:
                results[name] = in_process(args, GOOD if name.startswith("stdin") else None)
    for name, process in started.items():
        stdin = GOOD if name.startswith("stdin") else None
        stdout, stderr = process.communicate(stdin, timeout=300)
        results[name] = Run(commands[name], process.returncode, stdout, stderr)
    yield results
    sys.modules.pop("cli_passes", None)


def locations(run: Run) -> Iterator[tuple[str, int, int]]:
    """The `file:line:col` of each `error:` on stderr."""
    for m in LOCATION.finditer(run.stderr):
        yield m["file"], int(m["line"]), int(m["col"])


def assert_fails_cleanly(run: Run, message: str) -> None:
    """Exit 1, `message` on stderr, nothing on stdout, no traceback."""
    assert run.returncode == 1, run
    assert message in run.stderr, run
    assert "Traceback" not in run.stderr, run
    assert run.stdout == "", run


# Good input --------------------------------------------------------------


def test_good_input_prints_the_module(runs: dict[str, Run]) -> None:
    run = runs["good"]
    assert run.returncode == 0, run
    assert run.stderr == ""
    assert "%y = tensor.add %x, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>" in (
        run.stdout
    )


def test_output_file_is_written(runs: dict[str, Run], cli_dir: Path) -> None:
    run = runs["output_file"]
    assert run.returncode == 0, run
    assert run.stdout == ""
    written = (cli_dir / "out.mlir").read_text()
    assert written == runs["good"].stdout


def test_reads_stdin(runs: dict[str, Run]) -> None:
    assert runs["stdin"].returncode == 0, runs["stdin"]
    assert runs["stdin"].stdout == runs["good"].stdout


def test_reads_stdin_named_by_a_dash(runs: dict[str, Run]) -> None:
    """`-` is standard input, as for mlir-opt (`... | dvm-opt - -p dvm-pipeline`)."""
    assert runs["stdin_dash"].returncode == 0, runs["stdin_dash"]
    assert runs["stdin_dash"].stdout == runs["good"].stdout


def test_verify_diagnostics_reports_on_stdout_and_succeeds(runs: dict[str, Run]) -> None:
    run = runs["verify_diagnostics"]
    assert run.returncode == 0, run
    assert "verify_error.mlir:3:3: error: 'tensor.reduce_sum' axis 2 is out of range" in run.stdout


# Bad input: located diagnostics ------------------------------------------


def test_parse_error_is_located(runs: dict[str, Run]) -> None:
    run = runs["parse_error"]
    assert_fails_cleanly(run, "error: Operation tensor.nope is not registered")
    assert [loc[:2] for loc in locations(run)] == [("parse_error.mlir", 2)]
    assert "  %y = tensor.nope %x : tensor<4xf32>" in run.stderr  # the source line


def test_verify_error_is_located_at_the_op(runs: dict[str, Run]) -> None:
    run = runs["verify_error"]
    assert_fails_cleanly(
        run, "'tensor.reduce_sum' axis 2 is out of range for tensor<4x3xf32> (rank 2)"
    )
    assert list(locations(run)) == [("verify_error.mlir", 3, 3)]


def test_split_input_reports_lines_of_the_whole_file(runs: dict[str, Run]) -> None:
    run = runs["split_verify_error"]
    assert run.returncode == 1, run
    assert "Traceback" not in run.stderr
    assert list(locations(run)) == [("split.mlir", 10, 3)]


def test_non_utf8_input_is_located(runs: dict[str, Run]) -> None:
    run = runs["non_utf8"]
    assert_fails_cleanly(run, "invalid UTF-8 (byte 0xe9)")
    assert list(locations(run)) == [("latin1.mlir", 2, 9)]


def test_verify_error_after_a_pass_shows_the_ir(runs: dict[str, Run]) -> None:
    # The op was made by a pass, so it has no place in the input: the message
    # comes with the IR, the op marked.
    run = runs["pass_breaks_ir"]
    assert_fails_cleanly(
        run, "dvm-opt: error: 'tensor.exp' operand has element type i32, expected a float type"
    )
    assert '"tensor.exp"(%x)' in run.stderr


# Bad input without a place in it -------------------------------------------


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("missing_file", "dvm-opt: error: cannot access 'missing.mlir': No such file or directory"),
        ("directory", "dvm-opt: error: cannot access '.': Is a directory"),
        ("unwritable_output", "dvm-opt: error: cannot access 'no/such/dir/out.mlir'"),
        ("unknown_pass", "Unrecognized passes: ['no-such-pass']"),
        ("pipeline_syntax", "dvm-opt: error: invalid pass pipeline 'a{'"),
        (
            "unknown_target",
            "dvm-opt: error: argument -t/--target: invalid choice: 'no-such-target'",
        ),
        ("target_syntax", "dvm-opt: error: argument -t/--target: invalid spec 'bytecode{'"),
        ("unknown_target_option", "-t/--target: invalid spec 'bytecode-asm{width=3}': Provided"),
        ("frontend_syntax", "dvm-opt: error: argument -f/--frontend: invalid spec 'mlir}'"),
        ("unknown_flag", "dvm-opt: error: unrecognized arguments: --no-such-flag"),
        ("unknown_pass_option", "not found in expected arguments"),
        ("bad_pass_option_value", "dvm-opt: error: invalid pass pipeline 'test-noop{times=many}'"),
        ("pass_crash", "dvm-opt: internal error: RuntimeError: the test pass crashed on purpose"),
    ],
)
def test_fails_cleanly(runs: dict[str, Run], name: str, message: str) -> None:
    assert_fails_cleanly(runs[name], message)


def test_pipeline_syntax_error_points_into_the_pipeline(runs: dict[str, Run]) -> None:
    assert "pass-pipeline:1:3" in runs["pipeline_syntax"].stderr


def test_unreadable_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Permissions do not stop root, so the refusal is simulated where the file is opened.
    path = tmp_path / "secret.mlir"
    path.write_text(GOOD)
    real_open = builtins.open

    def refusing_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", refusing_open)
    assert dvm_opt.main([str(path)]) == 1
    err = capsys.readouterr().err
    assert "Permission denied" in err and "Traceback" not in err


# In-process: cheap checks of the same entry point -----------------------------


@dataclass(frozen=True)
class NoopPass(ModulePass):
    name = "test-noop"
    times: int = 1

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        pass


class CrashPass(ModulePass):
    name = "test-crash"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise RuntimeError("the test pass crashed on purpose")


@pytest.fixture
def good_file(tmp_path: Path) -> str:
    path = tmp_path / "good.mlir"
    path.write_text(GOOD)
    return str(path)


def test_version_names_dvm(capsys: pytest.CaptureFixture[str]) -> None:
    assert dvm_opt.main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("dvm-opt ") and "(dvm, built on xDSL " in out


def test_help_lists_the_standard_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert dvm_opt.main(["--help"]) == 0
    out = capsys.readouterr().out
    for flag in ("--split-input-file", "--verify-diagnostics", "--print-op-generic", "-o", "-p"):
        assert flag in out


def test_generic_output(good_file: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert dvm_opt.main([good_file, "--print-op-generic"]) == 0
    assert '"tensor.add"(%x, %b)' in capsys.readouterr().out


def test_only_our_dialects_are_registered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "linalg.mlir"
    path.write_text('"linalg.yield"() : () -> ()\n')
    assert dvm_opt.main([str(path)]) == 1
    assert "Operation linalg.yield is not registered" in capsys.readouterr().err


def test_passes_run_and_ir_is_printed_between(
    good_file: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(dvm_opt.PASSES, "test-noop", lambda: NoopPass)
    assert (
        dvm_opt.main([good_file, "--print-between-passes", "-p", "test-noop,test-noop{times=2}"])
        == 0
    )
    out = capsys.readouterr().out
    assert "IR after test-noop:" in out
    assert out.count("tensor.add") == 2  # once between the passes, once at the end


def test_lazy_pass_imports_on_first_use() -> None:
    factory = lazy_pass("xdsl.transforms.dead_code_elimination", "DeadCodeElimination")
    assert issubclass(factory(), ModulePass)


def test_show_traceback_lets_internal_errors_through(
    good_file: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(dvm_opt.PASSES, "test-crash", lambda: CrashPass)
    with pytest.raises(RuntimeError, match="crashed on purpose"):
        dvm_opt.main([good_file, "-p", "test-crash", "--show-traceback"])
