"""Reads and reductions at indices (`dvm/torch/aten_index.py`): `scatter_reduce` by
every reduction, `index_reduce`, `index_fill`, `gather` by a shorter index; each
compiled with `dynamic=True` over two sizes, against eager: with and without the
target's own values, indices that repeat, positions nothing names, NaN, integers (a
mean rounded toward -inf), and the gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import dvm.torch  # noqa: E402


def on_dvm(fn: Callable[..., Any], *calls: tuple[Any, ...]) -> None:
    """`fn` compiled once gives eager's results on each call's arguments (the later
    sizes reusing the graph), with every op of its graphs on dvm."""
    torch._dynamo.reset()
    before = len(dvm.torch.reports())
    run = torch.compile(fn, backend="dvm", dynamic=True)
    for arguments in calls:
        torch.testing.assert_close(run(*arguments), fn(*arguments), equal_nan=True)
    reports = dvm.torch.reports()[before:]
    assert reports and not any(r["fallbacks"] for r in reports), reports


def test_index_fill_by_computed_ids_that_repeat_runs_on_dvm() -> None:
    def fill(x: Any, ids: Any) -> Any:
        return x.index_fill(1, ids % 3, -2.5)

    generator = torch.Generator().manual_seed(0)
    on_dvm(
        fill,
        (torch.randn(4, 5, generator=generator), torch.tensor([1, 4, 1, 7])),
        (torch.randn(6, 7, generator=generator), torch.tensor([2, 2, 5])),
    )


def test_gather_by_an_index_shorter_than_its_input_reads_the_first_elements() -> None:
    def gather(x: Any, index: Any) -> Any:
        return torch.gather(x, 1, index)

    generator = torch.Generator().manual_seed(0)
    calls = [
        (
            torch.randn(n, n + 2, generator=generator),
            torch.randint(0, n + 2, (n - 1, 3), generator=generator),
        )
        for n in (4, 7)
    ]
    on_dvm(gather, *calls)
