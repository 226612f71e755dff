"""`torch.compile(..., backend="dvm", dynamic=True)` on modules whose ATen ops need
handlers of their own: `nn.EmbeddingBag` (DLRM-style tables over offsets with empty
bags, a fastText classifier over 2-d token ids with padding), and its four outputs
against `torch.embedding_bag`'s; `torch.cdist`'s gradient for p other than 1, 2 and
inf; adaptive max poolings whose windows overlap. Over a stream of sizes (1s,
primes) against eager: outputs, gradients, every op on dvm, and no graph or plan
after each size class's first call."""

from __future__ import annotations

import copy
from typing import Any

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

from test_torch_modules_zoo import Case, graphs_of  # noqa: E402
from test_torch_vision_zoo import inference_replays, training_step  # noqa: E402


class DLRMBags(nn.Module):
    """DLRM's sparse features: tables of bags by offsets (a sum, a maximum, a sum
    weighted per index, a mean over offsets with the last one), the dense feature's
    MLP, a top MLP over them all."""

    def __init__(self) -> None:
        super().__init__()
        self.dense = nn.Linear(4, 6)
        self.summed = nn.EmbeddingBag(30, 6, mode="sum")
        self.largest = nn.EmbeddingBag(30, 6, mode="max", padding_idx=2)
        self.weighted = nn.EmbeddingBag(30, 6, mode="sum")
        self.averaged = nn.EmbeddingBag(30, 6, mode="mean", include_last_offset=True)
        self.top = nn.Linear(5 * 6, 1)

    def forward(self, dense: Any, ids: Any, offsets: Any, weights: Any, bounds: Any) -> Any:
        features = [
            F.relu(self.dense(dense)),
            self.summed(ids, offsets),
            self.largest(ids, offsets),
            self.weighted(ids, offsets, per_sample_weights=weights),
            self.averaged(ids, bounds),
        ]
        return self.top(torch.cat(features, 1))


class FastText(nn.Module):
    """fastText: the mean of a document's token embeddings (2-d ids, padding 0 left
    out of the mean), a linear classifier."""

    def __init__(self) -> None:
        super().__init__()
        self.bag = nn.EmbeddingBag(40, 8, mode="mean", padding_idx=0)
        self.classify = nn.Linear(8, 3)

    def forward(self, tokens: Any) -> Any:
        return self.classify(self.bag(tokens))


class PNormDistances(nn.Module):
    """`torch.cdist` by the p-norms between 1, 2 and inf, past 2, and p = 0 (whose
    gradient is zero), of learned projections."""

    def __init__(self) -> None:
        super().__init__()
        self.project = nn.Linear(5, 4)

    def forward(self, a: Any, b: Any) -> Any:
        a, b = self.project(a), self.project(b)
        return torch.cdist(a, b, p=3), torch.cdist(a, b, p=0.5), torch.cdist(a, b, p=0)


def dlrm(b: int, t: int) -> tuple[Any, ...]:
    """b bags over b * t + b - 1 ids (1 at b = t = 1), one bag empty from b = 3."""
    n = b * t + b - 1
    offsets = torch.sort(torch.randint(0, n + 1, (b,))).values
    offsets[0] = 0
    if b > 2:
        offsets[2] = offsets[1]
    ids = torch.randint(0, 30, (n,))
    ids[::3] = 2  # (the max table's padding)
    bounds = torch.cat([offsets, torch.tensor([n])])
    return torch.randn(b, 4), ids, offsets, torch.randn(n), bounds


def documents(b: int, t: int) -> tuple[Any, ...]:
    tokens = torch.randint(0, 40, (b, t + 2))
    tokens[:, -1] = 0
    return (tokens,)


class OverlappingMaxPools(nn.Module):
    """Adaptive max poolings whose output does not divide the input (windows of two
    sizes that overlap): a 2-d one with its indices, a 1-d one, of a convolution's
    outputs in a constant border, where they tie. (Not a border of the convolution's
    input: its equal windows need not give equal sums, BLAS adds in the order of its
    kernels, so a tie there is the BLAS's, and so is the first maximum's index.)"""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=2)
        self.rows = nn.AdaptiveMaxPool1d(5)

    def forward(self, x: Any) -> Any:
        y = F.pad(self.conv(x), (1, 1, 1, 1), value=0.5)
        values, indices = F.adaptive_max_pool2d(y, (3, 5), return_indices=True)
        return values * 2, indices, self.rows(y.flatten(2))


CASES: dict[str, Case] = {
    "dlrm_bags": Case(DLRMBags, dlrm),
    "fasttext": Case(FastText, documents),
    "p_norm_distances": Case(
        PNormDistances, lambda b, t: (torch.randn(b, t + 2, 5), torch.randn(b, t + 4, 5))
    ),
    "overlapping_max_pools": Case(OverlappingMaxPools, lambda b, t: (torch.randn(b, 3, t, t + 2),)),
}


@pytest.mark.parametrize("name", CASES)
def test_inference_matches_eager_and_replays_over_a_stream_of_shapes(name: str) -> None:
    inference_replays(CASES[name])


@pytest.mark.parametrize("name", CASES)
def test_a_training_step_gives_eagers_gradients(name: str) -> None:
    training_step(CASES[name])


def test_a_gradient_scaled_by_frequency_runs_in_torch_on_the_forwards_outputs() -> None:
    """`scale_grad_by_freq` has no handler: torch's backward kernel reads the outputs
    of the forward recorded on dvm (its conventions), and gives eager's gradient."""
    torch.manual_seed(0)
    model = nn.EmbeddingBag(20, 4, mode="mean", scale_grad_by_freq=True)
    reference = copy.deepcopy(model)

    def run() -> None:
        compiled = torch.compile(model, backend="dvm", dynamic=True)
        for n in (7, 11):
            ids, offsets = torch.randint(0, 5, (n,)), torch.tensor([0, 2, 2, 4])
            compiled(ids, offsets).square().sum().backward()
            reference(ids, offsets).square().sum().backward()
        torch.testing.assert_close(model.weight.grad, reference.weight.grad)

    reports = graphs_of(run)
    forward, backward = reports
    assert forward["ops_on_dvm"] == forward["ops_total"], forward
    assert set(backward["fallbacks"]) == {"_embedding_bag_backward"}, backward


def bag(weight: Any, ids: Any, offsets: Any, weights: Any, mode: int, padding: int,
        last: bool) -> Any:  # fmt: skip
    return torch.embedding_bag(weight, ids, offsets, False, mode, False, weights, last, padding)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_the_extra_outputs_are_torchs(dtype: Any) -> None:
    """`offset2bag`, `bag_size` and `max_indices` as torch gives them (empty, zeros,
    the offsets' size: each mode's and path's), so either backward reads them; bf16
    weights as well, whose sums take torch's fast path."""
    settings = [(mode, padding, last) for mode in (0, 1, 2) for padding in (-1, 3)
                for last in (False, True)]  # fmt: skip

    def run() -> None:
        compiled = torch.compile(bag, backend="dvm", dynamic=True)
        for k, (mode, padding, last) in enumerate(settings):
            for n in (7, 11):
                torch.manual_seed(k * n)
                weight, ids = torch.randn(10, 3, dtype=dtype), torch.randint(0, 10, (n,))
                ids[1] = 3
                offsets = torch.tensor([0, 2, 2, 5] + ([n] if last else []))
                weights = torch.randn(n, dtype=dtype) if mode == 0 and n == 11 else None
                arguments = (weight, ids, offsets, weights, mode, padding, last)
                got, expected = compiled(*arguments), bag(*arguments)
                for g, e in zip(got, expected, strict=True):
                    assert g.dtype == e.dtype
                    torch.testing.assert_close(g, e)

    reports = graphs_of(run)
    assert all(r["ops_on_dvm"] == r["ops_total"] for r in reports), reports


def test_a_gru_unrolled_by_allow_rnn_gives_eagers_gradients() -> None:
    """With `allow_rnn`, dynamo unrolls `nn.GRU` over the length (a graph per length)
    into ops that all record, the backward too; a length equal to the
    hidden size (the backward's sums over one step's unit dim beside concats)."""
    torch.manual_seed(0)
    model = nn.GRU(5, 7, batch_first=True)
    reference = copy.deepcopy(model)

    def run() -> None:
        compiled = torch.compile(model, backend="dvm", dynamic=True)
        x = torch.randn(3, 7, 5)
        got, expected = compiled(x), reference(x)
        torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
        got[0].square().sum().backward()
        expected[0].square().sum().backward()
        for p, q in zip(model.parameters(), reference.parameters(), strict=True):
            torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-5)

    with torch._dynamo.config.patch(allow_rnn=True):
        reports = graphs_of(run)
    assert all(r["ops_on_dvm"] == r["ops_total"] for r in reports), reports
    assert any("backward" in r["graph"] for r in reports), reports


def test_an_lstm_in_eval_runs_its_layers_in_torch() -> None:
    """Under no_grad an `nn.LSTM` is one `mkldnn_rnn_layer` per layer (oneDNN's fused
    kernel, no handler: in torch); the ops around it record."""
    torch.manual_seed(0)
    model = nn.LSTM(5, 7, num_layers=2, batch_first=True).eval()

    def run() -> None:
        compiled = torch.compile(model, backend="dvm", dynamic=True)
        with torch.no_grad():
            for b, t in [(2, 5)]:
                x = torch.randn(b, t, 5)
                torch.testing.assert_close(compiled(x), model(x))

    with torch._dynamo.config.patch(allow_rnn=True):
        reports = graphs_of(run)
    assert all(set(r["fallbacks"]) == {"mkldnn_rnn_layer"} for r in reports), reports
