"""Reads and reductions at indices (`dvm/torch/aten_index.py`): `scatter_reduce` by
every reduction, `scatter` with a reduce, `index_reduce`, `index_fill`, `searchsorted`,
`gather` by a shorter index, `masked_scatter`; each compiled with `dynamic=True` over
two sizes, against eager: with and without the target's own values, indices that
repeat, positions nothing names, NaN, integers (a mean rounded toward -inf), and the
gradients."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import dvm.torch  # noqa: E402

REDUCTIONS = ["amax", "amin", "prod", "mean", "sum"]

pytestmark = pytest.mark.filterwarnings("ignore:index_reduce\\(\\) is in beta")


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


def scattering(rows: int, dtype: Any, seed: int) -> tuple[Any, Any, Any]:
    """A target of `rows` x 4, an index of rows + 2 x 3 into its dim 0 (repeats, and
    positions it never names), a longer source with a NaN among floats."""
    generator = torch.Generator().manual_seed(seed)
    target = (torch.randn(rows, 4, generator=generator) * 8).to(dtype)
    index = torch.randint(0, rows, (rows + 2, 3), generator=generator)
    source = (torch.randn(rows + 3, 4, generator=generator) * 8).to(dtype)
    if dtype.is_floating_point:
        source[1, 2] = torch.nan
    return target, index, source


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32])
def test_scatter_reduce_gives_eagers_reductions(dtype: Any) -> None:
    def every_reduction(target: Any, index: Any, source: Any) -> Any:
        return [
            target.scatter_reduce(0, index, source, reduce, include_self=include_self)
            for reduce in REDUCTIONS
            for include_self in (True, False)
        ]

    target, index, source = scattering(8, dtype, seed=1)
    empty = (target, index[:0], source)  # (nothing written: the target, as torch's)
    on_dvm(every_reduction, scattering(5, dtype, seed=0), (target, index, source), empty)


@pytest.mark.parametrize("dtype", [torch.float64, torch.int64])
def test_index_reduce_gives_eagers_reductions(dtype: Any) -> None:
    def every_reduction(target: Any, index: Any, source: Any) -> Any:
        return [
            target.index_reduce(1, index, source, reduce, include_self=include_self)
            for reduce in ("amax", "amin", "prod", "mean")
            for include_self in (True, False)
        ]

    generator = torch.Generator().manual_seed(0)
    calls = []
    for n in (4, 7):
        target = (torch.randn(3, n, 2, generator=generator) * 8).to(dtype)
        index = torch.randint(0, n, (n + 2,), generator=generator)
        calls.append((target, index, (torch.randn(3, n + 2, 2, generator=generator) * 8).to(dtype)))
    on_dvm(every_reduction, *calls)


def test_the_gradients_of_scatter_reduce_and_index_reduce_run_on_dvm() -> None:
    def reduced(target: Any, index: Any, source: Any) -> Any:
        total = target.sum()
        for reduce in ("amax", "prod"):
            rows = target.scatter_reduce(0, index, source, reduce, include_self=False)
            columns = target.index_reduce(1, index[0, :3] % 4, source[: len(target), :3], reduce)
            total = total + (rows * rows).sum() + columns.sum()
        return total

    def gradients(fn: Callable[..., Any], target: Any, index: Any, source: Any) -> Any:
        leaves = [target.clone().requires_grad_(), source.clone().requires_grad_()]
        return torch.autograd.grad(fn(leaves[0], index, leaves[1]), leaves)

    torch._dynamo.reset()
    before = len(dvm.torch.reports())
    run = torch.compile(reduced, backend="dvm", dynamic=True)
    for rows in (5, 8):
        target, index, _ = scattering(rows, torch.float64, seed=rows)
        generator = torch.Generator().manual_seed(rows)
        source = torch.randn(index.shape, dtype=target.dtype, generator=generator)
        expected = gradients(reduced, target, index, source)
        torch.testing.assert_close(gradients(run, target, index, source), expected)
    reports = dvm.torch.reports()[before:]
    assert len(reports) == 2 and not any(r["fallbacks"] for r in reports), reports


@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
def test_a_scatter_that_adds_or_multiplies_runs_on_dvm() -> None:
    def scatter(target: Any, index: Any, source: Any) -> Any:
        return [
            target.scatter(0, index, given, reduce=reduce)
            for reduce in ("add", "multiply")
            for given in (source, 2.5)
        ]

    on_dvm(scatter, scattering(5, torch.float32, seed=0), scattering(8, torch.float32, seed=1))


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


def test_searchsorted_by_rows_sides_a_sorter_and_a_number_runs_on_dvm() -> None:
    def searched(sequence: Any, values: Any, shuffled: Any, order: Any) -> Any:
        return (
            torch.searchsorted(sequence, values),
            torch.searchsorted(sequence, values, right=True, out_int32=True),
            torch.searchsorted(shuffled, values, side="right", sorter=order),
            torch.searchsorted(sequence[0], values),
            torch.searchsorted(sequence[0], 0.5),
        )

    generator = torch.Generator().manual_seed(0)
    calls = []
    for n in (5, 9):
        sequence = torch.randint(0, 6, (3, n), generator=generator).float().sort().values
        values = torch.randint(-1, 7, (3, 4), generator=generator).float()
        values[0, 0] = torch.nan  # (past every element, as torch's binary search puts it)
        shuffled = sequence.gather(1, torch.rand(3, n, generator=generator).argsort(1))
        calls.append((sequence, values, shuffled, torch.argsort(shuffled, dim=1, stable=True)))
    on_dvm(searched, *calls)


def test_masked_scatter_and_its_gradients_run_on_dvm_with_a_broadcast_mask() -> None:
    def scattered(x: Any, mask: Any, source: Any) -> Any:
        out = x.masked_scatter(mask, source)
        return out, *torch.autograd.grad((out * out).sum(), (x, source))

    generator = torch.Generator().manual_seed(3)
    calls = []
    for rows in (4, 7):  # (a source longer than the mask's trues, and one just as long)
        x = torch.randn(rows, 5, generator=generator, requires_grad=True)
        mask = torch.rand(5, generator=generator) > 0.4
        count = rows * int(mask.sum()) + (rows == 4)
        calls.append((x, mask, torch.randn(count, generator=generator, requires_grad=True)))
    on_dvm(scattered, *calls)


def test_a_masked_scatter_of_too_short_a_source_raises_torchs_error() -> None:
    def scattered(x: Any, mask: Any, source: Any) -> Any:
        return x.masked_scatter(mask, source)

    run = torch.compile(scattered, backend="dvm", dynamic=True)
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones"):
        run(torch.zeros(3, 2), torch.ones(3, 2, dtype=torch.bool), torch.arange(5.0))


def test_masked_scatter_broadcasts_its_target_to_the_masks_shape() -> None:
    generator = torch.Generator().manual_seed(4)
    calls = [
        (torch.randn(n, generator=generator), torch.rand(3, n, generator=generator) > 0.5,
         torch.randn(3 * n, generator=generator))
        for n in (4, 6)
    ]  # fmt: skip
    on_dvm(lambda x, mask, source: x.masked_scatter(mask, source), *calls)


@pytest.mark.parametrize("accumulate", [False, True])
def test_put_writes_the_flat_source_at_flat_ids(accumulate: bool) -> None:
    def put(x: Any, ids: Any, source: Any, flags: Any, bool_ids: Any) -> Any:
        written = x.put(ids, source, accumulate=accumulate)
        return written, flags.put(bool_ids, flags.flatten()[: len(bool_ids)], accumulate=accumulate)

    generator = torch.Generator().manual_seed(5)
    calls = []
    for n in (4, 7):
        # distinct ids; negative ones (from the end) and repeats where they add up
        ids = torch.randperm(3 * n, generator=generator)[: n + 2] - n * accumulate
        bool_ids = torch.randint(0, 2 * n, (n,), generator=generator) if accumulate else ids
        flags = torch.rand(3, n, generator=generator) > 0.5
        calls.append((torch.randn(3, n, generator=generator), ids,
                      torch.randn(n + 2, generator=generator), flags, bool_ids))  # fmt: skip
    on_dvm(put, *calls)
