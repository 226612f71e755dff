"""ATen patterns that Hugging Face `transformers` models give the backend, each written
here without transformers (the tests do not need it): against eager, with every op on
dvm and no graph compiled past each size class's first."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

from test_torch_modules_zoo import assert_same, graphs_of  # noqa: E402

D, HEADS = 16, 2


class EmptyStartCache(nn.Module):
    """Self-attention whose key and value cache starts empty, as transformers' `DynamicCache`
    does: `torch.tensor([])`, a 1-d tensor of size 0, concatenated with the first keys
    along dim -2. torch's `cat` skips such a tensor beside tensors of higher rank."""

    def __init__(self) -> None:
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D)

    def forward(self, x: Any) -> Any:
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, HEADS, D // HEADS).permute(2, 0, 3, 1, 4)
        keys = torch.cat([torch.tensor([], dtype=k.dtype), k], dim=-2)
        values = torch.cat([torch.tensor([], dtype=v.dtype), v], dim=-2)
        out = F.scaled_dot_product_attention(q, keys, values, is_causal=True)
        return out.transpose(1, 2).reshape(b, t, D)


def test_a_cache_that_starts_empty_concatenates_on_dvm() -> None:
    torch.manual_seed(0)
    model = EmptyStartCache()
    compiled = torch.compile(model, backend="dvm", dynamic=True)
    shapes = [(2, 5), (3, 7), (1, 11), (5, 1), (2, 13)]

    def run() -> None:
        for b, t in shapes:
            x = torch.randn(b, t, D, requires_grad=True)
            got, want = compiled(x), model(x)
            assert_same(got, want, (1e-5, 1e-5))
            (grad,) = torch.autograd.grad(got.square().sum(), x)
            (eager_grad,) = torch.autograd.grad(want.square().sum(), x)
            assert_same(grad, eager_grad, (1e-4, 1e-5))

    reports = graphs_of(run)
    assert all(r["ops_on_dvm"] == r["ops_total"] for r in reports), reports
    # a general graph, batch 1 and length 1: a forward and a backward each
    assert len(reports) == 6, [r["graph"] for r in reports]


def test_cat_keeps_the_dtype_of_a_skipped_empty_tensor() -> None:
    """torch promotes over every tensor of a `cat`, the skipped ones too."""

    def concatenate(x: Any) -> Any:
        return torch.cat([torch.zeros(0, dtype=torch.float64), x], dim=1) + 1

    compiled = torch.compile(concatenate, backend="dvm", dynamic=True)

    def run() -> None:
        for n in (3, 7):
            x = torch.randn(2, n)
            assert_same(compiled(x), concatenate(x), None)

    reports = graphs_of(run)
    assert all(r["ops_on_dvm"] == r["ops_total"] for r in reports), reports


class WeightNormalized(nn.Module):
    """wav2vec2's positional convolution: a grouped `Conv1d` whose weight is normalized
    over its last dim (`parametrizations.weight_norm(..., dim=2)`), then a `Linear`
    normalized per output row (the default, dim 0)."""

    def __init__(self) -> None:
        super().__init__()
        weight_norm = nn.utils.parametrizations.weight_norm
        self.conv = weight_norm(nn.Conv1d(D, D, 5, padding=2, groups=HEADS), dim=2)
        self.out = weight_norm(nn.Linear(D, D))

    def forward(self, x: Any) -> Any:
        return self.out(F.gelu(self.conv(x)).transpose(1, 2))


def test_weight_normalization_trains_on_dvm() -> None:
    """autograd differentiates `_weight_norm_interface` as one op, whose backward has no
    rule in torch's core table: the backend's table writes it as core ops."""
    torch.manual_seed(0)
    model = WeightNormalized()
    compiled = torch.compile(model, backend="dvm", dynamic=True)

    def gradients(module: Any, x: Any) -> list[Any]:
        return torch.autograd.grad(module(x).square().sum(), [x, *model.parameters()])

    def run() -> None:
        for b, t in [(2, 7), (3, 11)]:
            x = torch.randn(b, D, t, requires_grad=True)
            assert_same(gradients(compiled, x), gradients(model, x), (1e-4, 1e-5))

    reports = graphs_of(run)
    assert all(r["ops_on_dvm"] == r["ops_total"] for r in reports), reports
    assert len(reports) == 2, [r["graph"] for r in reports]
