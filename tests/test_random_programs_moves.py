"""Differential test of the data movement ops and mixed concats (`random_programs_moves`).

As `test_random_programs.py`, from fixed seeds and fewer programs: compiled on
the VM against the reference interpreter. A long run draws more:

    DVM_RANDOM_PROGRAMS=3000 DVM_RANDOM_SEED=7 .venv/bin/pytest -q -n 2 \\
        tests/test_random_programs_moves.py
"""

from __future__ import annotations

import math
import re
from typing import Any

from hypothesis import given, seed, settings
from random_programs import Case
from random_programs_moves import move_cases, move_programs_strategy
from test_random_programs import BASE_SEED, LONG, PROGRAMS, SETTINGS, run_case

import dvm

MOVE_PROGRAMS = PROGRAMS if LONG else 60
MOVES_SETTINGS = settings(SETTINGS, max_examples=math.ceil(MOVE_PROGRAMS / 2))


@seed(BASE_SEED + 100)
@MOVES_SETTINGS
@given(case=move_cases())
def test_move_programs_0(case: Case) -> None:
    run_case(case)


@seed(BASE_SEED + 101)
@MOVES_SETTINGS
@given(case=move_cases())
def test_move_programs_1(case: Case) -> None:
    run_case(case)


def test_moves_generator_covers_its_ops() -> None:
    """Over a few hundred programs, every op and concat piece it adds appears, and
    every program verifies."""
    seen: set[str] = set()

    @settings(max_examples=300, deadline=None, database=None, derandomize=True)
    @given(program=move_programs_strategy())
    def collect(program: Any) -> None:
        dvm.parse(program.text).verify()
        text = program.text
        seen.update(re.findall(r"\btensor\.[a-z_]+", text))
        if re.search(r"\] \[[^]]*\] \[[^]]*[23][^]]*\] : ", text):
            seen.add("strided slice")
        if re.search(r"reduce_(sum|max) %\w+ \{axes = \[\d\], keepdims = true\}", text):
            seen.add("unit reduction")

    collect()
    wanted = {
        "tensor.pad", "tensor.reverse", "tensor.insert_slice", "tensor.top_k",
        "tensor.cumprod", "tensor.concat", "tensor.broadcast_to", "tensor.expand_shape",
        "strided slice", "unit reduction",
    }  # fmt: skip
    assert wanted <= seen, sorted(wanted - seen)
