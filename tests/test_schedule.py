"""Ordering a vector fusion's ops before its tiles are sized (`lowering/schedule.py`).

Random elementwise programs whose values are used far from where they are made, as
frontends write them (`0.5 * x * (1 + tanh(...))`), compiled as they are and with the
ops left in the program's order: the same values (the same ops on the same operands,
at most an ulp apart where numpy's vector loops meet a different tail), never more live
bytes per element nor more tiles, and some of the kernels drawn hold fewer bytes.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pytest

import dvm
from dvm.lowering import tensor_to_tile
from dvm.lowering.schedule import schedule

UNARY = ("tanh", "exp", "neg", "abs")
BINARY = ("add", "mul", "sub", "max")
T = "tensor<?x?xf32>"
SHAPES = [(1, 1), (3, 5), (64, 33), (700, 1024)]


def chain_program(seed: int) -> str:
    """A program of 6-12 elementwise ops on `x` and `y`; each operand is drawn from every
    value made so far, the older ones as likely as the newer, and the result combines
    the last value with an early one."""
    rng = np.random.default_rng(seed)
    values = ["%x", "%y", "%c"]
    lines = ["  %c = arith.constant dense<0.5> : tensor<f32>"]
    for i in range(int(rng.integers(6, 13))):
        name = f"%v{i}"
        if rng.random() < 0.3:
            op = str(rng.choice(UNARY))
            operand = str(rng.choice([v for v in values if v != "%c"]))
            lines.append(f"  {name} = tensor.{op} {operand} : {T}")
        else:
            op = str(rng.choice(BINARY))
            a, b = (str(v) for v in rng.choice(values, size=2))
            if a == b == "%c":
                a = "%x"
            ta, tb = ("tensor<f32>" if v == "%c" else T for v in (a, b))
            lines.append(f"  {name} = tensor.{op} {a}, {b} : ({ta}, {tb}) -> {T}")
        values.append(name)
    early = str(rng.choice(values[3:5]))
    lines.append(f"  %r = tensor.mul {values[-1]}, {early} : ({T}, {T}) -> {T}")
    body = "\n".join(lines)
    return f"func.func @f(%x: {T}, %y: {T}) -> {T} {{\n{body}\n  func.return %r : {T}\n}}\n"


def tiles(program: Any, args: list[np.ndarray]) -> int:
    _, launches = program.profile(*args)
    return sum(stats.tiles for _, stats in launches)


class Compiled(NamedTuple):
    text: str
    scheduled: Any
    in_order: Any
    live_bytes: tuple[int, int]
    """Bytes per element of the kernel's live tiles in the program's order and after."""


@pytest.fixture(scope="module")
def compiled_both_ways() -> list[Compiled]:
    out = []
    for seed in range(30):
        text = chain_program(seed)
        costs: list[tuple[int, int]] = []

        def recording(ops: Any, cost: Any, current: int, costs: list[Any] = costs) -> Any:
            order = schedule(ops, cost, current)
            costs.append((current, current if order is None else cost(order)))
            return order

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(tensor_to_tile, "schedule", recording)
            scheduled = dvm.compile(text, cache=False)
            patch.setattr(tensor_to_tile, "schedule", lambda *_: None)
            in_order = dvm.compile(text, cache=False)
        (live_bytes,) = costs  # one kernel
        out.append(Compiled(text, scheduled, in_order, live_bytes))
    return out


def test_values_stay_those_of_the_program_order(compiled_both_ways: list[Compiled]) -> None:
    rng = np.random.default_rng(5)
    for text, scheduled, in_order, _ in compiled_both_ways:
        for shape in SHAPES:
            args = [rng.uniform(-2, 2, shape).astype(np.float32) for _ in range(2)]
            got, want = scheduled(*args), in_order(*args)
            np.testing.assert_array_max_ulp(got, want, maxulp=1, dtype=np.float32)
            np.testing.assert_allclose(got, dvm.interpret(text, *args), rtol=1e-5, atol=1e-6)


def test_live_bytes_often_fewer_and_tiles_never_more(compiled_both_ways: list[Compiled]) -> None:
    rng = np.random.default_rng(6)
    args = [rng.uniform(-2, 2, (2048, 1024)).astype(np.float32) for _ in range(2)]
    for text, scheduled, in_order, (before, after) in compiled_both_ways:
        assert after <= before, text
        assert tiles(scheduled, args) <= tiles(in_order, args), text
    fewer = sum(after < before for *_, (before, after) in compiled_both_ways)
    assert fewer >= 4, f"only {fewer} of {len(compiled_both_ways)} kernels hold fewer bytes"
