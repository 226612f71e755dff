"""Running extremes and selections by rank (`dvm/torch/aten_select.py`): values and
indices as eager gives them, ties, NaN and infinities included, over two sizes of
one compiled function."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import dvm.torch  # noqa: E402


def compiled_reports(fn: Callable[..., Any], calls: list[Any]) -> list[dict[str, Any]]:
    """Runs `fn` compiled on each argument of `calls`, checks every output equal to
    eager's (dtypes and NaNs too), and returns the reports of its graphs."""
    torch._dynamo.reset()
    before = len(dvm.torch.reports())
    compiled = torch.compile(fn, backend="dvm", dynamic=True)
    for x in calls:
        actual, expected = compiled(x), fn(x)
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            assert a.dtype == e.dtype
            torch.testing.assert_close(a, e, rtol=0, atol=0, equal_nan=True)
    return dvm.torch.reports()[before:]


def with_ties(shape: tuple[int, ...], dtype: Any, seed: int) -> Any:
    """Small integers (many ties) in `dtype`; floats with NaN and infinities too."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randint(-3, 4, shape, generator=generator).to(dtype)
    if dtype.is_floating_point:
        x[torch.rand(shape, generator=generator) < 0.15] = float("nan")
        x[torch.rand(shape, generator=generator) < 0.1] = -float("inf")
    return x


def running_and_medians(x: Any) -> tuple[Any, ...]:
    return (*torch.cummax(x, 1), *torch.cummin(x, 0), *torch.median(x, 1),
            *torch.nanmedian(x, 0, keepdim=True))  # fmt: skip


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_cummax_cummin_and_medians_give_eagers_indices_among_ties(dtype: Any) -> None:
    # 19 rows: the running extremes take 5 rounds of doubling along dim 0
    calls = [with_ties((5, 7), dtype, 0), with_ties((19, 3), dtype, 1)]
    reports = compiled_reports(running_and_medians, calls)
    assert reports and not any(r["fallbacks"] for r in reports), reports


def test_mode_gives_the_smallest_most_frequent_value_at_its_last_index() -> None:
    calls = [with_ties((4, 9), torch.int64, 2), torch.tensor([[0.0, -0.0, 1.0, -0.0, 0.0]])]
    for x in calls:
        reports = compiled_reports(lambda x: torch.mode(x, 1), [x])
        assert not any(r["fallbacks"] for r in reports), reports
    # longer rows: torch's sort of them, not the index, decides which of equal values
    reports = compiled_reports(lambda x: torch.mode(x, 0), [with_ties((20, 2), torch.int64, 3)])
    assert reports[-1]["fallbacks"] == {"mode": 1}


def test_kthvalue_runs_on_dvm_unless_its_value_repeats_in_a_row() -> None:
    generator = torch.Generator().manual_seed(4)
    distinct = [torch.randn(6, 4, generator=generator), torch.randn(11, 2, generator=generator)]
    reports = compiled_reports(lambda x: torch.kthvalue(x, 3, 0), distinct)
    assert not any(r["fallbacks"] for r in reports), reports
    # equal values: eager's index comes of its quickselect's swaps, so the op runs there
    tied = compiled_reports(lambda x: torch.kthvalue(x, 2, 1), [with_ties((6, 4), torch.int64, 5)])
    assert tied[-1]["fallbacks"] == {"kthvalue": 1}


def test_gradients_of_running_extremes_and_selections_run_on_dvm() -> None:
    def selected(x: Any) -> Any:
        return (torch.cummax(x, 1)[0].sum() + torch.median(x, 0)[0].sum()
                + torch.kthvalue(x, 2, 1)[0].sum() + torch.nanmedian(x))  # fmt: skip

    torch._dynamo.reset()
    before = len(dvm.torch.reports())
    compiled = torch.compile(selected, backend="dvm", dynamic=True)
    generator = torch.Generator().manual_seed(6)
    for shape in [(5, 6), (8, 9)]:
        x = torch.randn(shape, generator=generator, requires_grad=True)
        (actual,) = torch.autograd.grad(compiled(x), x)
        (expected,) = torch.autograd.grad(selected(x), x)
        torch.testing.assert_close(actual, expected, rtol=0, atol=0)
    reports = dvm.torch.reports()[before:]
    assert reports and not any(r["fallbacks"] for r in reports), reports


def test_gradients_of_selections_from_a_0d_tensor_run_on_dvm() -> None:
    # (their backward is a scatter into the 0-d gradient)
    def selected(x: Any) -> Any:
        return torch.median(x, 0)[0] * 2 + torch.cummax(x, 0)[0] + torch.mode(x, -1)[0]

    torch._dynamo.reset()
    before = len(dvm.torch.reports())
    x = torch.tensor(2.5, requires_grad=True)
    (actual,) = torch.autograd.grad(torch.compile(selected, backend="dvm")(x), x)
    assert actual.item() == 4.0
    reports = dvm.torch.reports()[before:]
    assert reports and not any(r["fallbacks"] for r in reports), reports
