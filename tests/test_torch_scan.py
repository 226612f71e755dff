"""`logcumsumexp` (`dvm/torch/aten_select.py`), a scan by doubling: eager's values,
its infinities and NaNs, in each float dtype, over lengths of two powers of two, and
its gradient, which AOTAutograd writes with `logcumsumexp` of flipped tensors."""

from __future__ import annotations

import math
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import dvm.torch  # noqa: E402

SPECIALS = [
    [-math.inf, -math.inf, 1.0, math.inf, -math.inf, math.nan, 1.0],
    [1000.0, -1000.0, 1001.0, 3.0, -math.inf, math.inf, math.inf],
    [-math.inf, 2.0, math.nan, math.inf, 0.0, -math.inf, -1e30],
]


def running(x: Any) -> Any:
    return torch.logcumsumexp(x, -1)


def running_in_each_dtype(*xs: Any) -> tuple[Any, ...]:
    return tuple(running(x) for x in xs)


def ramps(length: int) -> Any:
    """Rows whose maximum keeps growing (a ramp), jumps far from the terms before it,
    and falls."""
    generator = torch.Generator().manual_seed(0)
    noise = torch.randn(3, length, generator=generator, dtype=torch.float64)
    ramp = torch.linspace(-50, 300, length, dtype=torch.float64)
    return torch.stack([noise[0] * 5, ramp + noise[1], noise[2] * 300, -ramp])


def test_logcumsumexp_gives_eagers_values_infinities_and_nans_in_each_dtype() -> None:
    """float64 within 4e-15 of eager, float32 within an ulp (both accumulate in
    float64), bfloat16 within its tolerance; an empty dim and a 0-d tensor as eager's;
    over two lengths (3 and 6 rounds of doubling) of one compiled graph."""
    torch._dynamo.reset()
    before = len(dvm.torch.reports())
    compiled = torch.compile(running_in_each_dtype, backend="dvm", dynamic=True)
    dtypes = (torch.float64, torch.float32, torch.bfloat16)
    tolerances = ({"rtol": 4e-15, "atol": 0}, {"rtol": 2e-7, "atol": 0}, {}, {}, {})
    for x in (torch.tensor(SPECIALS, dtype=torch.float64), ramps(40)):
        arguments = (*(x.to(dtype) for dtype in dtypes), torch.empty(3, 0), torch.tensor(2.5))
        results = zip(compiled(*arguments), running_in_each_dtype(*arguments), strict=True)
        for (actual, expected), tolerance in zip(results, tolerances, strict=True):
            assert actual.dtype == expected.dtype
            torch.testing.assert_close(actual, expected, equal_nan=True, **tolerance)
    reports = dvm.torch.reports()[before:]
    assert reports and not any(r["fallbacks"] for r in reports), reports


def test_the_gradient_of_logcumsumexp_runs_on_dvm() -> None:
    def weighted(x: Any) -> Any:
        return (torch.logcumsumexp(x * 1.5, 0) * torch.arange(9.0).unsqueeze(1)).sum()

    torch._dynamo.reset()
    before = len(dvm.torch.reports())
    generator = torch.Generator().manual_seed(2)
    x = torch.randn(9, 4, generator=generator, dtype=torch.float64, requires_grad=True)
    (gradient,) = torch.autograd.grad(torch.compile(weighted, backend="dvm")(x), x)
    (expected,) = torch.autograd.grad(weighted(x), x)
    torch.testing.assert_close(gradient, expected)
    reports = dvm.torch.reports()[before:]
    assert any("backward" in r["graph"] for r in reports), reports
    assert not any(r["fallbacks"] for r in reports), reports


def test_logcumsumexp_of_integers_raises_torchs_error() -> None:
    compiled = torch.compile(running, backend="dvm", dynamic=True)
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        compiled(torch.arange(4))
