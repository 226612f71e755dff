"""Indexing lazy arrays by None keeps the sizes `dvm.torch` tracks (one plan, replayed)."""

from __future__ import annotations

from typing import Any

import pytest

# -- new axes keep their sizes' origin -------------------------------------------------------


def test_indexing_by_none_replays_one_plan() -> None:
    """`x[..., None]` (and `x[:, None, :]`) in a `dvm.torch` handler keeps the sizes
    symbolic, as `np.expand_dims` does: one plan, replayed at the other sizes."""
    torch = pytest.importorskip("torch")
    import dvm.torch
    from dvm.torch import aten, graph

    def by_index(x: Any, dim: int) -> Any:
        x = aten.lazy(x)
        axis = int(dim) % (x.ndim + 1)
        return aten.needs(x[(Ellipsis, None) + (slice(None),) * (x.ndim - axis)])

    def f(x: Any) -> Any:
        return (x.unsqueeze(-1) * x.unsqueeze(1)).sum(0) + x.unsqueeze(0).sum(1)

    original = graph.HANDLERS["unsqueeze"]
    graph.HANDLERS["unsqueeze"] = by_index
    try:
        first = len(dvm.torch.reports())
        compiled = torch.compile(f, backend="dvm", dynamic=True)
        torch.manual_seed(0)
        with torch.no_grad():
            for rows in (3, 5, 6, 9):
                x = torch.randn(rows, 4)
                torch.testing.assert_close(compiled(x), f(x))
    finally:
        graph.HANDLERS["unsqueeze"] = original
    (report,) = dvm.torch.reports()[first:]
    assert (report["plans"], report["replayed"]) == (1, 3), report
