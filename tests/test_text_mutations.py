"""Mutated program text: dvm-opt reports an error or succeeds, never hangs or crashes.

A fixed, seeded set of mutations (characters deleted, tokens inserted, lines
deleted or repeated, words swapped, numbers replaced, the text cut short,
an opening quote or bracket without its closing) of
the repository's `.mlir` files, each parsed by `dvm-opt` and, for some, run
through `dvm-pipeline`. Each must exit 0, or 1 with an `error:` line, and no
internal error. A case that runs longer than `CASE_SECONDS` fails: a hang,
such as xDSL's lexer backtracking over an unclosed string, not a slow case
(the limit is many times what any case takes).
"""

from __future__ import annotations

import random
import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import pytest

from dvm.tools.dvm_opt import main as dvm_opt

REPO = Path(__file__).resolve().parents[1]
BLOCKS = sorted(REPO.glob("benchmarks/blocks/*.mlir"))
"""Whole programs without comments: half the mutations are of these."""
FILECHECK = sorted(REPO.glob("tests/filecheck/**/*.mlir"))
SEED = 17
MUTATIONS = 160
CASE_SECONDS = 10
TOKENS = ['"', '"\\q', "{", "}", "<", ">", "(", ")", "[", "]", ",", ":", "->", "?", "x", "%0"]
TOKENS += ["f16", "i1", "index", "0", "-1", "99999999999999999999", "1e400", "dense<", "#", "@"]
NUMBERS = ["0", "1", "3", "65536", "2147483648", "9223372036854775808", "18446744073709551616"]


def mutate(rng: random.Random, text: str) -> str:
    """One random edit of `text`."""
    lines = text.split("\n")
    kind = rng.randrange(8)
    at = rng.randrange(len(text) + 1)
    if kind == 0:
        return text[:at] + text[at + rng.randint(1, 8) :]
    if kind == 1:
        return text[:at] + rng.choice(TOKENS) + text[at:]
    if kind == 2:
        del lines[rng.randrange(len(lines))]
        return "\n".join(lines)
    if kind == 3:
        line = rng.randrange(len(lines))
        return "\n".join([*lines[:line], lines[line], *lines[line:]])
    if kind == 4:
        words = re.split(r"(\W)", text)
        words[rng.randrange(len(words))] = rng.choice(words)
        return "".join(words)
    if kind == 5:
        numbers = [m.span() for m in re.finditer(r"\b\d+\b", text)]
        start, end = rng.choice(numbers) if numbers else (at, at)
        return text[:start] + rng.choice(NUMBERS) + text[end:]
    if kind == 6:
        return text[:at]
    return text[:at] + rng.choice('"{<([') + text[at:]  # an opening without its closing


class Hang(BaseException):
    """A case ran past `CASE_SECONDS` (a BaseException: dvm-opt reports any Exception)."""


@contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    def expire(signum: int, frame: FrameType | None) -> None:
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def cases() -> list[tuple[str, str, list[str]]]:
    """(name, mutated text, dvm-opt options) for each mutation, the same every run."""
    rng = random.Random(SEED)
    texts = {path.relative_to(REPO).as_posix(): path.read_text() for path in BLOCKS + FILECHECK}
    made = []
    for number in range(MUTATIONS):
        name = rng.choice(BLOCKS if rng.random() < 0.5 else FILECHECK).relative_to(REPO).as_posix()
        options = ["-p", "dvm-pipeline"] if rng.random() < 0.2 else []
        made.append((f"{number}: {name}", mutate(rng, texts[name]), options))
    return made


def test_mutated_texts_get_an_error_or_a_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "mutated.mlir"
    failures = []
    for name, text, options in cases():
        source.write_text(text)
        try:
            with time_limit(CASE_SECONDS):
                code = dvm_opt([str(source), "--split-input-file", *options])
        except Hang as e:
            failures.append(f"{name} {options}: {e}")
            continue
        err = capsys.readouterr().err
        if code not in (0, 1) or "internal error" in err or (code == 1 and "error:" not in err):
            failures.append(f"{name} {options}: exit {code}: {err[-300:]}")
    assert not failures, "\n".join(failures)
