"""Differential test of programs over symbolic axes and written regions
(`random_programs_symbolic`), and of programs at the edges of the generators
(`random_programs_edges`: repeated indices, written choices of any ops, ...).

As `test_random_programs.py`, from a fixed seed and few programs (the CI's budget):
compiled on the VM against the reference interpreter, each at up to three bindings
of its symbols through one compiled program. A long run draws more:

    DVM_RANDOM_PROGRAMS=3000 DVM_RANDOM_SEED=7 .venv/bin/pytest -q -n 2 \\
        tests/test_random_programs_symbolic.py
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from hypothesis import given, seed, settings
from random_programs import Case, RandomProgram, evaluate
from random_programs_edges import edge_cases, edge_programs_strategy
from random_programs_moves import padded_size
from random_programs_symbolic import symbolic_cases, symbolic_programs_strategy
from test_random_programs import BASE_SEED, LONG, PROGRAMS, SETTINGS, run_case, shapes_seen

SYMBOLIC_PROGRAMS = PROGRAMS if LONG else 12
EDGE_PROGRAMS = PROGRAMS if LONG else 10
MAX_STEPS = 20 if LONG else 8


@seed(BASE_SEED + 300)
@settings(SETTINGS, max_examples=SYMBOLIC_PROGRAMS)
@given(case=symbolic_cases(MAX_STEPS))
def test_symbolic_programs(case: Case) -> None:
    run_case(case)


@seed(BASE_SEED + 400)
@settings(SETTINGS, max_examples=EDGE_PROGRAMS)
@given(case=edge_cases(MAX_STEPS))
def test_edge_programs(case: Case) -> None:
    run_case(case)


def test_a_padded_product_is_a_symbol_of_its_own() -> None:
    size = padded_size(padded_size((2, ("a", "b")), 1), 2)
    assert size == (1, ("2*a*b+3",))
    assert evaluate(size, {"a": 4, "b": 5}) == 43
    assert evaluate((3, ("2*a+1", "b")), {"a": 0, "b": 2}) == 6


def test_symbolic_generator_covers_its_shapes() -> None:
    """Over 40 programs, every shape it adds appears, and every program verifies."""
    patterns = {
        "pad of a product": r"tensor\.pad [^\n]*\n(?:[^\n]*\n){2}[^\n]*: tensor<[^>]*> to",
        "written choice": r"= tensor\.choice \[",
        "written stack": r"= tensor\.stack (?:parallel|sequence)",
        "while": r"= scf\.while",
        "take along a permutation": r"tensor\.iota[^\n]*\n(?:.*\n)*.*tensor\.take",
        "every other element": r"tensor\.(?:extract|insert)_slice[^\n]*\[[^\]]*2[^\]]*\] :",
        "argmax of floored values": r"tensor\.floor[^\n]*\n.*tensor\.arg(?:max|min)",
    }

    def more(program: RandomProgram) -> Iterator[str]:
        if re.search(r"\+\d+\b", " ".join(str(s) for shape in program.shapes for s in shape)):
            yield "padded symbol"

    seen = shapes_seen(symbolic_programs_strategy(20), patterns, 40, more)
    assert seen >= {*patterns, "padded symbol"}, sorted({*patterns, "padded symbol"} - seen)


def test_edge_generator_covers_its_shapes() -> None:
    """Over 40 programs, every shape it adds appears, and every program verifies."""
    patterns = {
        "repeated indices": r"tensor\.(?:div|min) %v\d+, %\w+ [^\n]*\n(?:.*\n)*.*"
        r"tensor\.(?:take|take_along_axis|scatter_add) ",
        "scan along a padded axis": r"tensor\.pad [^\n]*high[^\n]*\n(?:.*\n)*.*"
        r"tensor\.(?:cumsum|cumprod|argmax|argmin|top_k) ",
        "choice of plain ops": r"= tensor\.choice \[[^\n]*\n\s+%\w+ = (?!tensor\.fusion)",
        "nested choice": r"= tensor\.choice [^\n]*\n(?:\s+%[^\n]*\n)*\s+%\w+(?:, %\w+)* = "
        r"tensor\.choice",
        "convert chain": r"tensor\.convert [^\n]*-> tensor<[^>]*(?:i8|bf16)>",
        "while passing a reduction": r"= tensor\.reduce_max %w\d+ [^\n]*\n(?:.*\n)*.*"
        r"scf\.condition",
    }
    seen = shapes_seen(edge_programs_strategy(20), patterns, 40)
    assert seen >= set(patterns), sorted(set(patterns) - seen)
