"""The tutorial (docs/tutorial/) runs, and its exercises' solutions pass.

Each chapter's fenced blocks run in order, so the tutorial cannot rot:

- ```python blocks run in one namespace per chapter (their asserts are the checks);
- ```mlir blocks whose first line is `// file: NAME` are written to NAME in the
  chapter's working folder, for the later blocks to use;
- ```sh blocks run each line that starts with `dvm-opt` or `dvm-run` in this
  process (through the tools' `main`, which skips their start-up) and expect
  exit status 0, or the status a trailing `# exit N` names;
- other blocks (text, output) are only read.

Each graded exercise (tests/tutorial/test_ex_*.py) is skipped until it is
solved; its solution (tests/tutorial/solutions/NAME.patch) is applied to a copy
of the packages in a temporary folder, and the exercise's test must pass there.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dvm.tools import dvm_opt, dvm_run

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "docs" / "tutorial").glob("[0-9][0-9]-*.md"))
EXERCISES = ROOT / "tests" / "tutorial"
SOLUTIONS = sorted((EXERCISES / "solutions").glob("*.patch"))
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
TOOLS = {"dvm-opt": dvm_opt.main, "dvm-run": dvm_run.main}
PACKAGES = {
    "dvm": "dvm",
    "dvm/dialects": "dialects",
    "dvm/passes": "passes",
    "dvm/lowering": "lowering",
    "dvm/vm": "vm",
}
"""Where each package of the installed layout lives in the source tree (pyproject.toml)."""


def blocks(chapter: Path) -> list[tuple[str, str, int]]:
    """The fenced blocks of a chapter: (language, text, line)."""
    text = chapter.read_text()
    return [
        (m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)
    ]


def run_tool(command: str, where: str) -> str:
    """Run one `dvm-opt`/`dvm-run` command line in this process; return its output."""
    words = shlex.split(command, comments=True)
    expected = int(m.group(1)) if (m := re.search(r"#\s*exit\s+(\d+)\s*$", command)) else 0
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = TOOLS[words[0]](words[1:])
        except SystemExit as exit_:
            status = exit_.code if isinstance(exit_.code, int) else 1
    assert status == expected, (
        f"{where}: `{command}` exited {status}\n{out.getvalue()}{err.getvalue()}"
    )
    return out.getvalue() + err.getvalue()


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_chapter_runs(chapter: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": f"tutorial_{chapter.stem.replace('-', '_')}"}
    for language, text, line in blocks(chapter):
        where = f"{chapter.name}:{line}"
        if language == "python":
            exec(compile("\n" * line + text, str(chapter), "exec"), namespace)
        elif language == "mlir" and (m := re.match(r"// file: (\S+)\n", text)):
            Path(m.group(1)).write_text(text)
        elif language == "sh":
            for command in text.splitlines():
                if command.split(" ", 1)[0] in TOOLS:
                    run_tool(command, where)


def test_there_are_chapters() -> None:
    assert len(CHAPTERS) >= 1


def packages_copy(into: Path) -> Path:
    """The packages as installed (`dvm`, `dvm.dialects`, ...), copied under `into`."""
    site = into / "site"
    for package, folder in PACKAGES.items():
        shutil.copytree(
            ROOT / folder,
            site / package,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    for folder in ("tests", "docs"):
        shutil.copytree(ROOT / folder, into / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", into / "pyproject.toml")
    return site


def installed_paths(patch: str) -> str:
    """A patch of the source tree (dialects/...) as one of the copy (site/dvm/dialects/...)."""

    def header(line: re.Match[str]) -> str:
        text = line.group(0)
        for package, folder in PACKAGES.items():
            text = re.sub(rf"(?<![\w/])([ab])/{folder}/", rf"\1/site/{package}/", text)
        return text

    return re.sub(r"(?m)^(diff --git|---|\+\+\+) .*$", header, patch)


@pytest.mark.parametrize("solution", SOLUTIONS, ids=[s.stem for s in SOLUTIONS])
def test_solution_solves_its_exercise(solution: Path, tmp_path: Path) -> None:
    exercise = EXERCISES / f"test_ex_{solution.stem}.py"
    assert exercise.exists(), f"{solution.name} solves no exercise ({exercise.name})"
    site = packages_copy(tmp_path)
    subprocess.run(
        ["git", "apply", "-"], input=installed_paths(solution.read_text()), text=True,
        cwd=tmp_path, check=True,
    )  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(site)}
    test = tmp_path / "tests" / "tutorial" / exercise.name
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
         "-rs", str(test)],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )  # fmt: skip
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "skipped" not in output, output
