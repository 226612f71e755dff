"""`torch.compile(..., backend="dvm", dynamic=True)` on torch.nn's built-ins as people
write them, against eager: outputs, the gradients of parameters and inputs, buffers,
the share of ATen ops on dvm, and the graphs dynamo compiles (one per size class, not
one per size)."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

import dvm.torch  # noqa: E402  (after torch: the extra is optional)


def assert_same(got: Any, expected: Any, tolerance: tuple[float, float] | None) -> None:
    """Outputs alike, nested (tuples, lists, dicts, None, numbers)."""
    if isinstance(expected, torch.Tensor):
        rtol, atol = tolerance if tolerance is not None else (None, None)
        torch.testing.assert_close(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    elif isinstance(expected, dict):
        assert got.keys() == expected.keys()
        for key in expected:
            assert_same(got[key], expected[key], tolerance)
    elif isinstance(expected, list | tuple):
        assert type(got) is type(expected) and len(got) == len(expected)
        for g, e in zip(got, expected, strict=True):
            assert_same(g, e, tolerance)
    else:
        assert got == expected


def loss_of(output: Any) -> Any:
    """A scalar from every float tensor of `output`."""
    if isinstance(output, torch.Tensor):
        return output.float().square().mean() if output.is_floating_point() else 0
    if isinstance(output, dict):
        return sum(loss_of(v) for v in output.values())
    if isinstance(output, list | tuple):
        return sum(loss_of(v) for v in output)
    return 0


def graphs_of(run: Callable[[], None]) -> list[dict[str, Any]]:
    """The reports of the graphs `run` compiles (dynamo's cache reset first, so the
    graphs are its own), whose programs all compiled."""
    from dvm import lazy

    torch._dynamo.reset()
    first, failed = len(dvm.torch.reports()), lazy.stats()["failed"]
    run()
    assert lazy.stats()["failed"] == failed
    return dvm.torch.reports()[first:]


def assert_share(reports: list[dict[str, Any]], share: float) -> None:
    for report in reports:
        assert report["ops_on_dvm"] >= share * report["ops_total"], report


# -- torch's fused transformer kernels --------------------------------------------------------


def test_the_fused_encoder_kernel_records_with_its_mask_conventions() -> None:
    """In eval mode under no_grad, the layer is one `_transformer_encoder_layer_fwd`,
    which reads a mask as booleans (a nonzero float masks its key, where the layer's own
    path would add it) and gives NaN for a row of masked keys: as eager does."""
    torch.manual_seed(4)
    layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True).eval()
    compiled = torch.compile(layer, backend="dvm", dynamic=True)

    def run() -> None:
        with torch.no_grad():
            for b, t in [(2, 5), (3, 7)]:
                x, padding = torch.randn(b, t, 16), torch.zeros(b, t)
                padding[0, 1], padding[-1, :] = 0.5, float("-inf")  # a whole row masked
                causal = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
                for masks in [{}, {"src_key_padding_mask": padding}, {"src_mask": causal},
                              {"src_mask": causal, "src_key_padding_mask": padding}]:  # fmt: skip
                    expected = layer(x, **masks)
                    assert expected[-1].isnan().all() or "src_key_padding_mask" not in masks
                    assert_same(compiled(x, **masks), expected, (1e-4, 1e-5))

    reports = graphs_of(run)
    assert_share(reports, 1.0)
    assert min(report["ops_total"] for report in reports) == 1  # the kernel alone


# -- half precision ---------------------------------------------------------------------------


class HalfPrecisionNorms(nn.Module):
    def __init__(self, dtype: Any) -> None:
        super().__init__()
        self.dtype = dtype
        self.ln, self.gn = nn.LayerNorm(16).to(dtype), nn.GroupNorm(4, 16).to(dtype)

    def forward(self, x: Any) -> Any:
        y = x.to(self.dtype)
        return (F.softmax(y, -1), F.softmax(y, -1, dtype=torch.float32), F.log_softmax(y, -1),
                self.ln(y), self.gn(y.transpose(1, 2)))  # fmt: skip


@pytest.mark.parametrize(
    ("dtype", "tolerance"), [(torch.float16, (1e-3, 1e-3)), (torch.bfloat16, (1.6e-2, 8e-3))]
)
def test_half_precision_softmax_and_norms_round_once_as_torchs(
    dtype: Any, tolerance: tuple[float, float]
) -> None:
    """torch's CPU kernels compute a float16 or bfloat16 softmax or norm in float32 and
    round once: so do the programs. (The absolute tolerance is for torch's own
    `log_softmax` of half floats, up to 2% off float64's near 0 where the programs'
    round to the nearest.)"""
    torch.manual_seed(8)
    model = HalfPrecisionNorms(dtype).eval()
    compiled = torch.compile(model, backend="dvm", dynamic=True)

    def run() -> None:
        with torch.no_grad():
            for b, t in [(2, 5), (3, 7)]:
                x = torch.randn(b, t, 16) * 3
                assert_same(compiled(x), model(x), tolerance)

    assert_share(graphs_of(run), 1.0)


# -- group norms, paddings, adaptive max poolings ---------------------------------------------


class NormAndPad(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.GroupNorm(2, 4)

    def forward(self, x: Any) -> Any:
        return F.pad(self.norm(x), (1, -1, 2, 0), value=0.5), F.pad(x, (0, 0))


def test_a_group_norm_and_a_padding_record_with_their_gradients() -> None:
    torch.manual_seed(7)
    model = NormAndPad()
    reference = copy.deepcopy(model)
    compiled = torch.compile(model, backend="dvm", dynamic=True)

    def run() -> None:
        for b, h, w in [(2, 5, 7), (3, 6, 3)]:
            x = torch.randn(b, 4, h, w, requires_grad=True)
            given = x.detach().clone().requires_grad_()
            got, expected = compiled(x), reference(given)
            assert_same(got, expected, (1e-4, 1e-5))
            loss_of(got).backward()
            loss_of(expected).backward()
            assert_same(x.grad, given.grad, (1e-4, 1e-5))
        for p, q in zip(model.parameters(), reference.parameters(), strict=True):
            assert_same(p.grad, q.grad, (1e-4, 1e-5))

    assert_share(graphs_of(run), 1.0)


class AdaptiveMax(nn.Module):
    def forward(self, x: Any) -> Any:
        values, indices = F.adaptive_max_pool2d(x, (2, 3), return_indices=True)
        return values * 2, indices


def test_an_adaptive_max_pooling_gives_torchs_maxima_and_indices() -> None:
    torch.manual_seed(6)
    compiled = torch.compile(AdaptiveMax(), backend="dvm", dynamic=True)

    def run() -> None:
        for b, h, w in [(2, 4, 6), (3, 6, 9), (1, 2, 3)]:
            x = torch.randn(b, 3, h, w, requires_grad=True)
            reference = x.detach().clone().requires_grad_()
            got, expected = compiled(x), AdaptiveMax()(reference)
            assert_same(got, expected, (1e-6, 1e-6))
            loss_of(got).backward()
            loss_of(expected).backward()
            assert_same(x.grad, reference.grad, (1e-5, 1e-6))

    assert_share(graphs_of(run), 1.0)


# -- indexing ---------------------------------------------------------------------------------


class Pick(nn.Module):
    """Advanced indexing by two index tensors (rows broadcast against columns)."""

    def forward(self, x: Any, rows: Any, cols: Any) -> Any:
        return x[:, rows[:, None], cols] * 2, x[:, :, -1 - rows] + 1


def test_indexing_by_several_tensors_records_and_checks_its_indices() -> None:
    torch.manual_seed(5)
    compiled = torch.compile(Pick(), backend="dvm", dynamic=True)

    def run() -> None:
        for h, w in [(5, 7), (6, 3)]:
            x = torch.randn(2, h, w, requires_grad=True)
            rows, cols = torch.randint(0, min(h, w), (4,)), torch.randint(0, w, (3,))
            reference = x.detach().clone().requires_grad_()
            got, expected = compiled(x, rows, cols), Pick()(reference, rows, cols)
            assert_same(got, expected, (1e-6, 1e-6))
            loss_of(got).backward()
            loss_of(expected).backward()
            assert_same(x.grad, reference.grad, (1e-5, 1e-6))
        with torch.no_grad(), pytest.raises(IndexError):
            compiled(torch.randn(2, 5, 7), torch.tensor([0, 5]), torch.tensor([1]))

    reports = graphs_of(run)
    assert_share(reports, 1.0)


def test_a_padded_embeddings_backward_replays_its_plan() -> None:
    """The gradient's `index_put` keeps the call's sizes (plain ones would tie the
    plan to one batch and length by a guard, and every call would record anew)."""
    model = nn.Sequential(nn.Embedding(20, 16, padding_idx=0), nn.Linear(16, 4))

    def run() -> None:
        compiled = torch.compile(model, backend="dvm", dynamic=True)
        for b, t in [(2, 5), (3, 7), (4, 3), (2, 6)]:
            compiled(torch.randint(0, 20, (b, t))).square().mean().backward()

    backward = [r for r in graphs_of(run) if "backward" in r["graph"]]
    assert [(r["plans"], r["replayed"]) for r in backward] == [(1, 3)], backward


# -- sizes and numbers in elementwise ops -----------------------------------------------------


class MaskedRegression(nn.Module):
    """A mean squared error (its backward divides by the count as a float tensor,
    `true_divide`) over positions masked with a size test (`mask & (t > 1)`)."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 4)

    def forward(self, x: Any, wanted: Any) -> Any:
        t = x.shape[1]
        keep = (torch.arange(t) < t - 1) & (t > 1)
        return F.mse_loss(self.linear(x) * keep[:, None], wanted)


def test_a_size_test_and_a_mean_squared_error_record() -> None:
    torch.manual_seed(9)
    model = MaskedRegression()
    reference = copy.deepcopy(model)
    compiled = torch.compile(model, backend="dvm", dynamic=True)

    def run() -> None:
        for b, t in [(2, 5), (3, 7)]:
            x, wanted = torch.randn(b, t, 8), torch.randn(b, t, 4)
            loss, expected = compiled(x, wanted), reference(x, wanted)
            assert_same(loss, expected, (1e-5, 1e-6))
            loss.backward()
            expected.backward()
        for p, q in zip(model.parameters(), reference.parameters(), strict=True):
            assert_same(p.grad, q.grad, (1e-4, 1e-6))

    assert_share(graphs_of(run), 1.0)


# -- what runs in torch, and why --------------------------------------------------------------


class ComplexScale(nn.Module):
    def forward(self, z: Any, x: Any) -> Any:
        return (z * 2).abs() + x.sum()


def test_an_unsupported_dtype_runs_in_torch_with_the_reason_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ComplexScale()
    compiled = torch.compile(model, backend="dvm", dynamic=True)

    def run() -> None:
        for n in (3, 5):
            z, x = torch.randn(n, 4, dtype=torch.complex64), torch.randn(n, 4)
            assert_same(compiled(z, x), model(z, x), None)

    with caplog.at_level(logging.INFO, logger="dvm.torch"):
        (report,) = graphs_of(run)
    assert report["fallbacks"] == {"mul": 1, "abs": 1}, report
    assert "torch.complex64" in report["reasons"]["mul"]
    assert any("mul x1 (a tensor of torch.complex64" in r.getMessage() for r in caplog.records)


def test_a_handler_that_fails_leaves_its_op_to_torch_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A bug in a handler is no crash of the model: torch runs the op."""
    from dvm.torch import graph

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise TypeError("a bug")

    monkeypatch.setitem(graph.HANDLERS, "tanh", broken)
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
    compiled = torch.compile(model, backend="dvm", dynamic=True)

    def run() -> None:
        with torch.no_grad():
            x = torch.randn(3, 8)
            assert_same(compiled(x), model(x), (1e-5, 1e-6))

    with caplog.at_level(logging.WARNING, logger="dvm.torch"):
        (report,) = graphs_of(run)
    assert report["fallbacks"] == {"tanh": 1}
    assert "TypeError: a bug" in report["reasons"]["tanh"]
    assert any("tanh ran in torch" in r.getMessage() for r in caplog.records)
