"""Run the lit + filecheck suite in `tests/filecheck` as part of pytest.

The `.mlir` tests themselves say what they check (`// RUN:` and `// CHECK:`
lines); this only makes `pytest` fail when any of them fails, and shows
lit's report when it does.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

FILECHECK_DIR = Path(__file__).resolve().parent / "filecheck"


def lit_command() -> list[str]:
    """The venv's `lit` script, or `lit` run by this Python if there is none."""
    script = Path(sys.executable).parent / "lit"
    fallback = [sys.executable, "-c", "import sys, lit.main; sys.exit(lit.main.main())"]
    return [str(script)] if script.exists() else fallback


def test_lit_suite_passes() -> None:
    result = subprocess.run(
        [*lit_command(), "-v", str(FILECHECK_DIR)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = f"{result.stdout}\n{result.stderr}"
    assert result.returncode == 0, f"lit failed:\n{report}"
    assert "Passed" in result.stdout, f"lit ran no tests:\n{report}"
