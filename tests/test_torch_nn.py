"""`torch.compile(..., backend="dvm")` on the ATen ops of `dvm/torch/aten_index.py`
(scatters, sorts): modules written the way people write them, over a stream of
shapes and one training step, against eager, with the share of ops on dvm."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

import dvm.torch  # noqa: E402  (after torch: the extra is optional)


def compiled_reports(run: Callable[[], None]) -> list[dict[str, Any]]:
    """The reports of the graphs `run` compiles (dynamo's cache reset first, so each
    test's graphs are its own), whose programs all compiled (none ran in numpy)."""
    from dvm import lazy

    torch._dynamo.reset()
    first, failed = len(dvm.torch.reports()), lazy.stats()["failed"]
    run()
    reports = dvm.torch.reports()[first:]
    assert reports and lazy.stats()["failed"] == failed
    return reports


def assert_on_dvm(
    reports: Sequence[dict[str, Any]], ops: Sequence[str], share: float = 0.9
) -> None:
    """Every graph ran at least `share` of its ops on dvm, and none of `ops` in torch."""
    for report in reports:
        assert report["ops_on_dvm"] >= share * report["ops_total"], report
        assert not set(ops) & set(report["fallbacks"]), report


# -- scatter ---------------------------------------------------------------------------------


class OneHotEncoder(nn.Module):
    """Class ids to one-hot rows (a scatter of 1.0), then a linear layer."""

    def __init__(self, classes: int = 10, d: int = 16) -> None:
        super().__init__()
        self.classes, self.linear = classes, nn.Linear(classes, d)

    def forward(self, ids: Any) -> Any:
        one_hot = torch.zeros(ids.shape[0], self.classes).scatter(1, ids.unsqueeze(1), 1.0)
        return self.linear(one_hot)


class Classifier(nn.Module):
    def __init__(self, d: int = 12, classes: int = 7) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, 32), nn.ReLU(), nn.Linear(32, classes))

    def forward(self, x: Any) -> Any:
        return self.net(x)


def test_a_one_hot_by_scatter_records_over_a_stream_of_batches() -> None:
    torch.manual_seed(0)
    model = OneHotEncoder().eval()

    def run() -> None:
        compiled = torch.compile(model, backend="dvm", dynamic=True)
        with torch.no_grad():
            for batch in (3, 7, 1, 2, 13):
                ids = torch.randint(0, 10, (batch,))
                torch.testing.assert_close(compiled(ids), model(ids))

    assert_on_dvm(compiled_reports(run), ["scatter"], share=1.0)


def test_a_cross_entropy_training_step_runs_on_dvm() -> None:
    """cross_entropy's backward is a scatter of -1 at the targets (`scatter.value`)."""
    torch.manual_seed(1)
    model, reference = Classifier(), Classifier()
    reference.load_state_dict(model.state_dict())

    def run() -> None:
        compiled = torch.compile(model, backend="dvm", dynamic=True)
        for batch in (5, 3, 11):
            x, target = torch.randn(batch, 12), torch.randint(0, 7, (batch,))
            loss = F.cross_entropy(compiled(x), target)
            expected = F.cross_entropy(reference(x), target)
            torch.testing.assert_close(loss, expected)
            loss.backward()
            expected.backward()

    reports = compiled_reports(run)
    assert_on_dvm(reports, ["scatter", "gather"], share=1.0)
    assert any("backward" in r["graph"] for r in reports)
    for p, q in zip(model.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-6)


def distinct_rows(rows: int, n: int, k: int) -> Any:
    return torch.stack([torch.randperm(n)[:k] for _ in range(rows)])


def scatters(x: Any, ids: Any, source: Any) -> Any:
    """Each scatter form: a value and a source, by an index shorter than the target
    and a source longer than the index, along each dim; adds and reductions."""
    along_rows = ids[:2] % x.shape[0]
    return (
        x.scatter(1, ids, -1.5),
        x.scatter(1, ids, source),
        x.scatter(0, along_rows[:1], source),
        x.scatter_add(1, ids, source),
        x.scatter_add(0, along_rows, source),
        x.scatter_reduce(1, ids, source, "sum"),
        x.scatter_reduce(0, along_rows, source, "mean", include_self=False),
        x.scatter(1, (ids * 2) % x.shape[1], 0.5),
    )


def test_the_scatter_forms_record_over_a_stream_of_shapes() -> None:
    torch.manual_seed(2)

    def run() -> None:
        compiled = torch.compile(scatters, backend="dvm", dynamic=True)
        for rows, n in [(4, 9), (6, 5), (3, 11), (6, 5)]:
            x, ids = torch.randn(rows, n), distinct_rows(rows - 1, n, 3)
            source = torch.randn(rows + 1, 4)
            for got, expected in zip(
                compiled(x, ids, source), scatters(x, ids, source), strict=True
            ):
                torch.testing.assert_close(got, expected)

    reports = compiled_reports(run)
    assert_on_dvm(reports, ["scatter", "scatter_add", "scatter_reduce"], share=1.0)
    assert sum(r["replayed"] for r in reports) >= 1, reports


def test_a_scatter_whose_index_repeats_runs_in_torch() -> None:
    """torch leaves which of equal indices' sources is written undefined: such a call
    runs in torch (and gives its answer), one without repeats replays the plan."""
    torch.manual_seed(3)

    def write(x: Any, ids: Any, source: Any) -> Any:
        return x.scatter(1, ids, source) * 2

    def run() -> None:
        compiled = torch.compile(write, backend="dvm", dynamic=True)
        x, source = torch.randn(4, 6), torch.randn(4, 3)
        ids = distinct_rows(4, 6, 3)
        torch.testing.assert_close(compiled(x, ids, source), write(x, ids, source))
        ids[2, 1] = ids[2, 0]
        torch.testing.assert_close(compiled(x, ids, source), write(x, ids, source))
        ids = distinct_rows(5, 6, 3)
        x, source = torch.randn(5, 6), torch.randn(5, 3)
        torch.testing.assert_close(compiled(x, ids, source), write(x, ids, source))

    (report,) = compiled_reports(run)
    assert report["fallbacks"] == {} and report["plans"] == 2, report


def test_a_scatter_index_out_of_range_is_an_index_error() -> None:
    compiled = torch.compile(lambda x, ids: x.scatter(1, ids * 3, 1.0), backend="dvm", dynamic=True)
    x = torch.zeros(3, 5)
    torch.testing.assert_close(
        compiled(x, torch.ones(3, 1, dtype=torch.int64)), x.scatter(1, torch.full((3, 1), 3), 1.0)
    )
    with pytest.raises(IndexError):
        compiled(x, torch.full((3, 1), 2))


# -- sort ------------------------------------------------------------------------------------


def top_p_filter(logits: Any, p: float = 0.8, stable: bool = False) -> Any:
    """Nucleus sampling's filter, as samplers write it: the logits outside the
    smallest set of largest ones whose probabilities reach `p` become -inf."""
    sorted_logits, order = torch.sort(logits, descending=True, stable=stable)
    cumulative = torch.softmax(sorted_logits, dim=-1).cumsum(dim=-1)
    remove = cumulative > p
    remove[..., 1:] = remove[..., :-1].clone()
    remove[..., 0] = False
    return logits.masked_fill(remove.scatter(1, order, remove), float("-inf"))


def test_a_top_p_sampler_records_over_a_stream_of_batches() -> None:
    torch.manual_seed(4)

    def run() -> None:
        compiled = torch.compile(top_p_filter, backend="dvm", dynamic=True)
        for batch in (3, 5, 1, 2, 8):
            logits = torch.randn(batch, 50)
            logits[:, ::5] = logits[:, 1:2]  # equal logits: ties, in the stable order
            assert torch.equal(compiled(logits), top_p_filter(logits, stable=True))

    assert_on_dvm(compiled_reports(run), ["sort", "scatter", "cumsum"], share=1.0)


def sorts(x: Any) -> tuple[Any, ...]:
    return (
        *torch.sort(x, dim=-1, stable=True),
        *torch.sort(x, dim=0, descending=True, stable=True),
        torch.argsort(x, dim=1, stable=True),
        torch.argsort(x, dim=-1, descending=True, stable=True),
    )


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_sorts_give_torchs_stable_order_ties_and_nans_included(dtype: Any) -> None:
    torch.manual_seed(5)
    compiled = torch.compile(sorts, backend="dvm", dynamic=True)
    for rows, n in [(3, 7), (5, 300), (4, 1)]:
        x = torch.randint(-3, 3, (rows, n)).to(dtype)
        if dtype == torch.float32:
            x[0, ::3], x[1, 0] = float("nan"), -0.0
        for got, expected in zip(compiled(x), sorts(x), strict=True):
            assert torch.equal(got, expected) or torch.equal(got.isnan(), expected.isnan())
            assert torch.equal(got.nan_to_num(), expected.nan_to_num())
    extremes = torch.tensor([[torch.iinfo(torch.int64).min, 5, torch.iinfo(torch.int64).max, 5]])
    if dtype == torch.int64:
        for got, expected in zip(compiled(extremes), sorts(extremes), strict=True):
            assert torch.equal(got, expected)


def test_an_unstable_sort_gives_a_sorted_order() -> None:
    """torch's unstable sort promises no order of equal values: dvm's is the stable
    one, whose values are torch's and whose indices take them from the input."""
    torch.manual_seed(6)
    compiled = torch.compile(lambda x: torch.sort(x, dim=-1), backend="dvm", dynamic=True)
    x = torch.randint(0, 20, (4, 400)).float()
    values, indices = compiled(x)
    assert torch.equal(values, torch.sort(x, dim=-1).values)
    assert torch.equal(indices, torch.sort(x, dim=-1, stable=True).indices)


def test_a_sort_trains_through_its_indices() -> None:
    """A sort's backward is a scatter of the gradient through the saved indices (an
    input of the backward graph, checked for repeats at each call)."""
    torch.manual_seed(7)
    weights = torch.linspace(1.0, 2.0, 9)

    def sorted_loss(x: Any) -> Any:
        return (torch.sort(x * 2, dim=-1, descending=True).values * weights).sum()

    def run() -> None:
        compiled = torch.compile(sorted_loss, backend="dvm", dynamic=True)
        for rows in (3, 5, 2):
            x = torch.randn(rows, 9, requires_grad=True)
            y = x.detach().clone().requires_grad_(True)
            compiled(x).backward()
            sorted_loss(y).backward()
            torch.testing.assert_close(x.grad, y.grad)

    assert_on_dvm(compiled_reports(run), ["sort", "scatter"], share=1.0)


# -- pooling ---------------------------------------------------------------------------------

POOLINGS: dict[str, Callable[[Any], Any]] = {
    "max": lambda x: F.max_pool2d(x, 2),
    "max_padded_ceil": lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True),
    "max_dilated": lambda x: F.max_pool2d(x, (3, 2), (1, 2), (1, 0), dilation=(2, 1)),
    "avg_padded_ceil": lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
    "avg_without_padding_counted": lambda x: F.avg_pool2d(
        x, 3, 2, 1, ceil_mode=True, count_include_pad=False
    ),
    "avg_divisor": lambda x: F.avg_pool2d(x, 2, divisor_override=3),
    "adaptive_global": lambda x: F.adaptive_avg_pool2d(x, 1),
    "max_1d": lambda x: F.max_pool1d(x.flatten(1, 2), 3, 2, 1),
    "avg_1d": lambda x: F.avg_pool1d(x.flatten(1, 2), 2),
    "max_3d": lambda x: F.max_pool3d(x, 2, padding=1),
    "avg_3d": lambda x: F.avg_pool3d(x, (1, 2, 2)),
    "adaptive_max_3d": lambda x: F.adaptive_max_pool3d(x, (2, 3, 4), return_indices=True),
}
"""Pooling forms as modules call them (the 1-d ones reach ATen as 2-d ones)."""

POOLING_OPS = [
    f"{op}{d}d{part}"
    for op in ("max_pool", "avg_pool", "_adaptive_avg_pool", "adaptive_max_pool")
    for d in (2, 3)
    for part in ("", "_with_indices", "_backward", "_with_indices_backward")
]


def first(y: Any) -> Any:
    """A pooling's output (without its indices)."""
    return y if torch.is_tensor(y) else y[0]


SPATIAL = [(2, 3, 8, 9), (1, 3, 13, 5), (2, 3, 8, 9)]
"""Batch, channels, height, width: primes, a batch of 1, a shape met again."""


@pytest.mark.parametrize("name", POOLINGS)
def test_poolings_match_eager_with_their_gradients(name: str) -> None:
    pool = POOLINGS[name]
    torch.manual_seed(8)

    def run() -> None:
        compiled = torch.compile(pool, backend="dvm", dynamic=True)
        for shape in SPATIAL:
            x = torch.randn(*shape)
            x[0, 0, 1, :2] = 5.0  # equal maxima: the first one is chosen
            x = x.requires_grad_(True)
            y = x.detach().clone().requires_grad_(True)
            got, expected = compiled(x), pool(y)
            torch.testing.assert_close(got, expected)
            weights = torch.randn(first(expected).shape)
            (first(got) * weights).sum().backward()
            (first(expected) * weights).sum().backward()
            torch.testing.assert_close(x.grad, y.grad)

    assert_on_dvm(compiled_reports(run), POOLING_OPS, share=1.0)


def test_a_max_pooling_propagates_nan_and_never_chooses_padding() -> None:
    compiled = torch.compile(
        lambda x: F.max_pool2d(x, 3, 2, 1, return_indices=True), backend="dvm", dynamic=True
    )
    x = torch.full((1, 1, 5, 5), -float("inf"))
    x[0, 0, 4, 4], x[0, 0, 0, 1] = 1.0, float("nan")
    for got, expected in zip(
        compiled(x), F.max_pool2d(x, 3, 2, 1, return_indices=True), strict=True
    ):
        assert torch.equal(got.nan_to_num(), expected.nan_to_num())


@pytest.mark.parametrize("output", [(2, 2), (1, 1, 1)])
def test_an_adaptive_max_pooling_points_at_the_last_nan_of_a_window(output: Any) -> None:
    """torch's kernel takes a value above the maximum so far, or a NaN: the first of
    equal maxima, the last NaN."""
    pool = F.adaptive_max_pool2d if len(output) == 2 else F.adaptive_max_pool3d
    compiled = torch.compile(
        lambda x: pool(x, output, return_indices=True), backend="dvm", dynamic=True
    )
    x = torch.zeros(1, 2, 4, 4)
    x[0, :, 0, 0], x[0, :, 1, 1], x[0, 0, 0, 3] = float("nan"), float("nan"), 5.0
    for got, expected in zip(compiled(x), pool(x, output, return_indices=True), strict=True):
        assert torch.equal(got.nan_to_num(), expected.nan_to_num())


# -- convolution -----------------------------------------------------------------------------


CONVOLUTIONS: dict[str, tuple[Callable[[], Any], int]] = {
    "3x3_padded": (lambda: nn.Conv2d(4, 6, 3, padding=1), 2),
    "strided_dilated_grouped": (
        lambda: nn.Conv2d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2),
        2,
    ),
    "pointwise_without_bias": (lambda: nn.Conv2d(4, 8, 1, bias=False), 2),
    "depthwise": (lambda: nn.Conv2d(4, 4, (3, 2), padding=(1, 0), groups=4), 2),
    "1d_strided_dilated": (lambda: nn.Conv1d(4, 6, 3, stride=3, dilation=2), 1),
    "3d": (lambda: nn.Conv3d(4, 3, 2, padding=1), 3),
}
"""Convolution modules, and how many spatial dims their input has."""


@pytest.mark.parametrize("name", CONVOLUTIONS)
def test_convolutions_match_eager_with_their_gradients(name: str) -> None:
    make, spatial = CONVOLUTIONS[name]
    torch.manual_seed(11)
    model, reference = make(), make()
    reference.load_state_dict(model.state_dict())

    def run() -> None:
        compiled = torch.compile(model, backend="dvm", dynamic=True)
        for b, n in [(2, 9), (1, 7)]:
            x = torch.randn(b, 4, *[n + k for k in range(spatial)], requires_grad=True)
            y = x.detach().clone().requires_grad_(True)
            got, expected = compiled(x), reference(y)
            torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
            weights = torch.randn(expected.shape)
            (got * weights).sum().backward()
            (expected * weights).sum().backward()
            torch.testing.assert_close(x.grad, y.grad, rtol=1e-4, atol=1e-5)
        for p, q in zip(model.parameters(), reference.parameters(), strict=True):
            torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-4)

    assert_on_dvm(compiled_reports(run), ["convolution", "convolution_backward"], share=1.0)


class SmallCNN(nn.Module):
    """An image classifier as tutorials write one."""

    def __init__(self, classes: int = 5) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.MaxPool2d(2, ceil_mode=True),
            nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False),
            nn.ReLU(),
            nn.Conv2d(16, 16, 3, padding=2, dilation=2, groups=4),
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Linear(16, classes)

    def forward(self, x: Any) -> Any:
        return self.head(torch.flatten(self.features(x), 1))


class TextCNN(nn.Module):
    """A 1-d convolution text classifier: embeddings, convolutions over the length,
    a max over time."""

    def __init__(self, vocabulary: int = 40, d: int = 16, classes: int = 3) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocabulary, d)
        self.conv = nn.Conv1d(d, 24, 3, padding=1)
        self.pool = nn.AvgPool1d(2, ceil_mode=True)
        self.wide = nn.Conv1d(24, 24, 5, padding=2, groups=2)
        self.head = nn.Linear(24, classes)

    def forward(self, ids: Any) -> Any:
        h = F.relu(self.conv(self.embedding(ids).transpose(1, 2)))
        h = F.relu(self.wide(self.pool(h)))
        return self.head(h.amax(dim=2))


NETWORKS: dict[str, tuple[Callable[[], Any], Callable[[int, int], Any]]] = {
    "small_cnn": (SmallCNN, lambda b, n: torch.randn(b, 3, n, n + 2)),
    "text_cnn": (TextCNN, lambda b, n: torch.randint(0, 40, (b, 2 * n))),
}
"""Per network: how to build it, and an input of batch b and spatial size n."""

CONV_OPS = [
    "convolution",
    "convolution_backward",
    "_native_batch_norm_legit_no_training",
    *POOLING_OPS,
]


@pytest.mark.parametrize("name", NETWORKS)
def test_networks_match_eager_over_a_stream_of_shapes(name: str) -> None:
    make, data = NETWORKS[name]
    torch.manual_seed(9)
    model = make().eval()

    def run() -> None:
        compiled = torch.compile(model, backend="dvm", dynamic=True)
        with torch.no_grad():
            for b, n in [(2, 8), (3, 11), (1, 7), (3, 11)]:
                x = data(b, n)
                torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)

    assert_on_dvm(compiled_reports(run), CONV_OPS)


@pytest.mark.parametrize("name", NETWORKS)
def test_a_network_trains_one_step_with_torchs_gradients(name: str) -> None:
    """A cross-entropy step (batch norm in eval mode: its statistics fixed)."""
    make, data = NETWORKS[name]
    torch.manual_seed(10)
    model, reference = make().eval(), make().eval()
    reference.load_state_dict(model.state_dict())

    def run() -> None:
        compiled = torch.compile(model, backend="dvm", dynamic=True)
        for b, n in [(3, 9)]:
            x = data(b, n)
            target = torch.randint(0, 3, (b,))
            loss = F.cross_entropy(compiled(x), target)
            expected = F.cross_entropy(reference(x), target)
            torch.testing.assert_close(loss, expected, rtol=1e-4, atol=1e-5)
            loss.backward()
            expected.backward()

    reports = compiled_reports(run)
    assert_on_dvm(reports, CONV_OPS)
    assert any("backward" in r["graph"] for r in reports)
    for (key, p), q in zip(model.named_parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-5, msg=key)


def test_a_batch_norm_trains_with_torchs_statistics() -> None:
    """Batch norm in training mode: the batch's statistics normalize, and the running
    ones move towards them (the variance unbiased), as torch's do."""
    torch.manual_seed(12)

    def make() -> Any:
        return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU()).train()

    model, reference = make(), make()
    reference.load_state_dict(model.state_dict())

    def run() -> None:
        compiled = torch.compile(model, backend="dvm", dynamic=True)
        for b, n in [(3, 7), (5, 6)]:
            x = torch.randn(b, 3, n, n + 1)
            got, expected = compiled(x), reference(x)
            torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
            weights = torch.randn(expected.shape)
            (got * weights).sum().backward()
            (expected * weights).sum().backward()

    reports = compiled_reports(run)
    assert_on_dvm(reports, ["_native_batch_norm_legit_functional"], share=1.0)
    # its sizes kept, a forward call leaves a plan (the backward's graph divides sizes
    # as floats: it records at each call)
    assert all(r["plans"] >= 1 for r in reports if "forward" in r["graph"]), reports
    for (key, p), q in zip(model.named_parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-4, msg=key)
    for key in ("running_mean", "running_var", "num_batches_tracked"):
        torch.testing.assert_close(getattr(model[1], key), getattr(reference[1], key), msg=key)
