"""Programs the random tester found failing, kept running.

Each `tests/regressions/*.mlir` file is a program with a header that says
what failed and how it was fixed, and the calls to check it on:

    // shapes: 17x1 97x17     (one line per call: each argument's shape, index=3 for an index)
    // seed: 5                (of the argument values, see random_programs.make_inputs)
    // device: ascend910b     (the device preset to compile for)
    // xfail: why             (a known bug, reported and not yet fixed)

The program is compiled once with `dvm.compile` and every call compared with
`dvm.interpret`, as `test_random_programs.py` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from random_programs import check_regression, read_regression

REGRESSIONS = Path(__file__).resolve().parent / "regressions"
FILES = sorted(REGRESSIONS.glob("*.mlir"))


def _params() -> list[Any]:
    params = []
    for path in FILES:
        reg = read_regression(path.read_text())
        marks = [pytest.mark.xfail(strict=True, reason=reg.xfail)] if reg.xfail else []
        params.append(pytest.param(path, marks=marks, id=path.stem))
    return params


@pytest.mark.parametrize("path", _params())
def test_regression(path: Path) -> None:
    check_regression(read_regression(path.read_text()))


def test_regressions_are_recorded() -> None:
    assert FILES, f"no regression programs in {REGRESSIONS}"
    for path in FILES:
        text = path.read_text()
        assert text.startswith("//"), f"{path.name}: no header saying what failed"
        reg = read_regression(text)
        assert reg.calls and all(isinstance(s, tuple | int) for call in reg.calls for s in call)
