"""Run a lit test's `// RUN:` lines in this process, as lit's shell would.

`lit -v tests/filecheck` runs the `.mlir` tests the standard way, one
`dvm-opt` process per command. Most of such a process's time is Python
starting and importing the compiler, so the test suite runs the same lines
here instead: `dvm-opt` and `filecheck` are called as functions, and each
test file is a pytest case of its own (spread over pytest's workers).

The shell understands what the tests use: `&&`, pipes (`pipefail`, as lit),
`not`, `2>&1`, `< file`, and the commands `dvm-opt`, `filecheck` and
`diff A -`. Anything else is an error naming the line, never a silent pass.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from filecheck.main import main as filecheck_main

from dvm.tools.dvm_opt import main as dvm_opt_main


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str


Tool = Callable[[list[str], str], Outcome]


def captured(function: Callable[[], int | None], stdin: str) -> Outcome:
    """Run `function` with `stdin` as standard input; its exit code and output."""
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()), encoding="utf-8")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = function() or 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        sys.stdin = saved
    return Outcome(code, out.getvalue(), err.getvalue())


def dvm_opt(argv: list[str], stdin: str) -> Outcome:
    return captured(lambda: dvm_opt_main(argv), stdin)


def filecheck(argv: list[str], stdin: str) -> Outcome:
    return captured(lambda: filecheck_main(["filecheck", *argv]), stdin)


def diff(argv: list[str], stdin: str) -> Outcome:
    """`diff FILE -`: whether standard input equals the file."""
    if len(argv) != 2 or argv[1] != "-":
        raise ValueError(f"diff: only `diff FILE -` is supported, got {argv}")
    same = Path(argv[0]).read_text() == stdin
    return Outcome(0 if same else 1, "", "" if same else f"{argv[0]} differs from stdin\n")


TOOLS: dict[str, Tool] = {"dvm-opt": dvm_opt, "filecheck": filecheck, "diff": diff}


def run_command(words: list[str], stdin: str) -> Outcome:
    """One command of a pipeline, with its `not` and redirections."""
    negate = words[:1] == ["not"]
    words = words[1:] if negate else words
    merge_stderr = "2>&1" in words
    words = [w for w in words if w != "2>&1"]
    if "<" in words:
        at = words.index("<")
        stdin = Path(words[at + 1]).read_text()
        words = words[:at] + words[at + 2 :]
    if not words or words[0] not in TOOLS:
        raise ValueError(f"unsupported command {' '.join(words)!r}; use one of {sorted(TOOLS)}")
    outcome = TOOLS[words[0]](words[1:], stdin)
    if merge_stderr:
        outcome = Outcome(outcome.code, outcome.stdout + outcome.stderr, "")
    if negate:
        outcome.code = 0 if outcome.code != 0 else 1
    return outcome


def run_line(line: str) -> Outcome:
    """A RUN line: `&&`-joined pipelines; stops at the first that fails."""
    outcome = Outcome(0, "", "")
    for pipeline in line.split("&&"):
        stdin, stderr, failed = "", "", 0
        for command in pipeline.split("|"):
            outcome = run_command(shlex.split(command), stdin)
            stdin, stderr = outcome.stdout, stderr + outcome.stderr
            failed = failed or outcome.code  # pipefail
        outcome = Outcome(failed, outcome.stdout, stderr)
        if failed:
            break
    return outcome


def run_lines(test: Path, temp: Path) -> list[str]:
    """Every RUN line of `test` with lit's `%s` and `%t`; returns the failures' reports."""
    text = test.read_text()
    lines = [m.group(1).strip() for m in re.finditer(r"^// RUN:(.*)$", text, re.MULTILINE)]
    if not lines:
        return [f"{test.name} has no RUN line"]
    failures: list[str] = []
    for line in lines:
        command = line.replace("%s", str(test)).replace("%t", str(temp / test.name))
        outcome = run_line(command)
        if outcome.code != 0:
            failures.append(f"RUN: {line}\nexit {outcome.code}\n{outcome.stderr}")
    return failures
