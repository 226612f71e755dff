"""The lit + filecheck tests in `tests/filecheck`, as part of pytest.

The `.mlir` tests say what they check (`// RUN:` and `// CHECK:` lines).
`lit -v tests/filecheck` runs them the standard way; here each file is a
pytest case whose RUN lines run in this process (`tests/lit_shell.py`),
which saves a Python start per command. One case runs lit itself on one
file, so that the lit configuration keeps working too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from lit_shell import run_lines

FILECHECK_DIR = Path(__file__).resolve().parent / "filecheck"
TESTS = sorted(p for p in FILECHECK_DIR.rglob("*.mlir") if "Output" not in p.parts)


@pytest.mark.parametrize("test", TESTS, ids=[str(t.relative_to(FILECHECK_DIR)) for t in TESTS])
def test_run_lines_pass(test: Path, tmp_path: Path) -> None:
    failures = run_lines(test, tmp_path)
    assert not failures, "\n".join(failures)


def lit_command() -> list[str]:
    """The venv's `lit` script, or `lit` run by this Python if there is none."""
    script = Path(sys.executable).parent / "lit"
    fallback = [sys.executable, "-c", "import sys, lit.main; sys.exit(lit.main.main())"]
    return [str(script)] if script.exists() else fallback


def test_lit_runs_a_test() -> None:
    # (one RUN line, dvm-opt piped into filecheck: both tools found by the configuration,
    # one Python start of each)
    test = FILECHECK_DIR / "ops_moves" / "kv_cache.mlir"
    result = subprocess.run(
        [*lit_command(), "-v", str(test)], capture_output=True, text=True, timeout=300
    )
    report = f"{result.stdout}\n{result.stderr}"
    assert result.returncode == 0, f"lit failed:\n{report}"
    assert "Passed: 1" in result.stdout, f"lit ran no test:\n{report}"
