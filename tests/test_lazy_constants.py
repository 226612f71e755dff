"""Python numbers as constants of the program (`Trace.constants`, which `dvm.torch`
turns on while it records a graph): each written in the program's text exactly, bit
for bit, and part of the segment's key. Off (numpy code), a number is an argument and
one program serves every value."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from dvm import lazy
from dvm.lazy.record import TRACE
from dvm.lazy.segment import WATCHERS

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # (numpy's overflows)


@contextmanager
def numbers_as_constants() -> Iterator[list[str]]:
    """The programs' texts run meanwhile, with Python numbers as constants."""
    texts: list[str] = []
    WATCHERS.append(texts.append)
    TRACE.constants = lambda: True
    try:
        yield texts
    finally:
        TRACE.constants = None
        WATCHERS.remove(texts.append)


FLOATS = [0.1, -0.0, 0.0, math.inf, -math.inf, math.nan, 1e-45, 5e-324, 65504.0, 1e16, -2.5]
INTEGERS = {
    np.int8: [-128, 127, 0], np.int64: [2**63 - 1, -(2**63)], np.uint8: [255],
    np.uint64: [2**64 - 1], np.bool_: [True, False],
}  # fmt: skip
CASES = [(dtype, v) for dtype in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64)
         for v in FLOATS] + [(dtype, v) for dtype, vs in INTEGERS.items() for v in vs]  # fmt: skip


@pytest.mark.parametrize(("dtype", "value"), CASES)
def test_a_constant_reaches_the_program_bit_for_bit(dtype: Any, value: Any) -> None:
    """A select of the number in the array's dtype (NEP 50) gives the bits numpy's
    cast gives: inf and NaN survive the text, a float16 number rounds as numpy rounds
    it, and -0.0 stays negative."""
    x = np.arange(6).reshape(2, 3).astype(dtype)
    chosen = np.array([[True, False, True], [False, True, False]])
    with numbers_as_constants() as texts:
        got = np.asarray(np.where(lazy.asarray(chosen), value, lazy.asarray(x)))
    expected = np.where(chosen, np.asarray(value).astype(dtype), x)
    assert got.dtype == expected.dtype
    assert got.tobytes() == expected.tobytes()
    assert "arith.constant dense<" in texts[-1]


def test_two_constants_make_two_programs_and_arguments_one() -> None:
    """As constants, two numbers are two programs (a constant is part of the key, and
    of the text), the same number again the same one; as arguments (numpy's default),
    both run one program."""
    x = lazy.asarray(np.arange(4.0, dtype=np.float32))
    with numbers_as_constants() as texts:
        results = [np.asarray(x * 0.5 + shift) for shift in (1.25, 1.25, 1.5)]
    assert texts[0] == texts[1] != texts[2]
    assert "dense<1.25> : tensor<f32>" in texts[0] and "dense<1.5> : tensor<f32>" in texts[2]
    assert [r.tolist() for r in results[1:]] == [[1.25, 1.75, 2.25, 2.75], [1.5, 2.0, 2.5, 3.0]]
    texts.clear()
    WATCHERS.append(texts.append)
    try:
        results = [np.asarray(x * scale - 2.1875) for scale in (0.75, 0.875)]
    finally:
        WATCHERS.remove(texts.append)
    assert texts[0] == texts[1]
    assert [r.tolist() for r in results] == [[-2.1875, -1.4375, -0.6875, 0.0625],
                                             [-2.1875, -1.3125, -0.4375, 0.4375]]  # fmt: skip
    assert "arith.constant dense" not in texts[0] and ": tensor<f32>," in texts[0]
