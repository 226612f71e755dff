"""`torch.compile(..., backend="dvm", dynamic=True)` on module families the other zoos
do not hold, as people write them: a UNet with transposed convolutions and skip
connections, a MobileNetV3 block, `nn.Bilinear`, `torch.cdist`, Swin-style window
attention, a CLIP-style contrastive loss, a message-passing GNN layer, a DLRM
interaction, PointNet, a VAE head, a selective-scan recurrence, poolings whose windows
reach past the input at some lengths, and outputs' strides. Over a stream of shapes
(primes, 1s, sizes that change every call) against eager: outputs, gradients, the
share of ATen ops on dvm, and no graph or plan after each size class's first call."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

from test_torch_modules_zoo import Case, graphs_of, twins  # noqa: E402
from test_torch_vision_zoo import inference_replays, training_step  # noqa: E402

C = 6
"""Channels: a size no dim of the stream has (dynamo's duck sizing, see the vision zoo)."""


class TinyUNet(nn.Module):
    """Down by a strided convolution, up by transposed ones (2-d with output padding and
    groups, 1-d on a side path), `cat` skip connections."""

    def __init__(self) -> None:
        super().__init__()
        self.enc = nn.Conv2d(3, C, 3, padding=1)
        self.down = nn.Conv2d(C, 2 * C, 3, stride=2, padding=1)
        self.up = nn.ConvTranspose2d(2 * C, C, 3, stride=2, padding=1, output_padding=1,
                                     groups=2)  # fmt: skip
        self.dec = nn.Conv2d(2 * C, 3, 1)
        self.line = nn.ConvTranspose1d(3, 4, 4, stride=3, padding=1, dilation=2)

    def forward(self, x: Any) -> Any:
        skip = F.relu(self.enc(x))
        up = self.up(F.relu(self.down(skip)))[:, :, : x.shape[2], : x.shape[3]]
        return self.dec(torch.cat([up, skip], 1)), self.line(x.mean(3))


class MobileNetV3Block(nn.Module):
    """An inverted residual: hardswish, a strided depthwise convolution, a hardsigmoid
    squeeze-excitation, batch norms."""

    def __init__(self) -> None:
        super().__init__()
        self.expand, self.norm1 = nn.Conv2d(5, 12, 1, bias=False), nn.BatchNorm2d(12)
        self.depthwise = nn.Conv2d(12, 12, 3, stride=2, padding=1, groups=12, bias=False)
        self.norm2 = nn.BatchNorm2d(12)
        self.reduce, self.restore = nn.Conv2d(12, 4, 1), nn.Conv2d(4, 12, 1)
        self.project, self.norm3 = nn.Conv2d(12, 5, 1, bias=False), nn.BatchNorm2d(5)

    def forward(self, x: Any) -> Any:
        y = F.hardswish(self.norm1(self.expand(x)))
        y = F.hardswish(self.norm2(self.depthwise(y)))
        gate = F.hardsigmoid(self.restore(F.relu(self.reduce(F.adaptive_avg_pool2d(y, 1)))))
        return self.norm3(self.project(y * gate))


class Pairwise(nn.Module):
    """`nn.Bilinear` of two feature sets, and their `cdist` by p = 2 and p = 1."""

    def __init__(self) -> None:
        super().__init__()
        self.bilinear = nn.Bilinear(13, 12, 3)

    def forward(self, a: Any, b: Any) -> Any:
        return (
            self.bilinear(a, b[:, : a.shape[1]]),
            torch.cdist(a[..., :12], b),
            torch.cdist(a[..., :12], b, p=1),
        )


class WindowAttention(nn.Module):
    """Swin: a cyclic shift (`torch.roll`), windows by view and permute, attention with a
    relative position bias read from a table by a buffer of indices, windows merged back."""

    def __init__(self, window: int = 2, heads: int = 2, d: int = 8) -> None:
        super().__init__()
        self.window, self.heads = window, heads
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.table = nn.Parameter(0.1 * torch.randn((2 * window - 1) ** 2, heads))
        coords = torch.stack(torch.meshgrid(torch.arange(window), torch.arange(window),
                                            indexing="ij")).flatten(1)  # fmt: skip
        relative = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + window - 1
        self.register_buffer("index", relative[..., 0] * (2 * window - 1) + relative[..., 1])

    def forward(self, x: Any) -> Any:
        b, h, w, d = x.shape
        s = self.window
        x = torch.roll(x, (-1, -1), (1, 2))
        windows = x.view(b, h // s, s, w // s, s, d).permute(0, 1, 3, 2, 4, 5).reshape(-1, s * s, d)
        q, k, v = self.qkv(windows).view(-1, s * s, 3, self.heads, d // self.heads).unbind(2)
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        bias = self.table[self.index.view(-1)].view(s * s, s * s, -1).permute(2, 0, 1)
        scores = q @ k.transpose(-1, -2) * (d // self.heads) ** -0.5 + bias
        out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(-1, s * s, d)
        out = self.proj(out).view(b, h // s, w // s, s, s, d).permute(0, 1, 3, 2, 4, 5)
        return torch.roll(out.reshape(b, h, w, d), (1, 1), (1, 2))


class ClipLoss(nn.Module):
    """CLIP: normalized embeddings, a learned temperature `logit_scale.exp()`, the
    cross-entropy of the similarity matrix both ways."""

    def __init__(self) -> None:
        super().__init__()
        self.image, self.text = nn.Linear(8, 6), nn.Linear(5, 6)
        self.logit_scale = nn.Parameter(torch.tensor(2.6593))

    def forward(self, images: Any, texts: Any) -> Any:
        a, b = F.normalize(self.image(images), dim=-1), F.normalize(self.text(texts), dim=-1)
        logits = self.logit_scale.exp() * a @ b.t()
        labels = torch.arange(logits.shape[0])
        return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2


class MessagePassing(nn.Module):
    """A GNN layer: messages along an edge index input, summed at their targets by
    `index_add_` and by `scatter_add_`, degree-normalized."""

    def __init__(self) -> None:
        super().__init__()
        self.message, self.update = nn.Linear(2 * 5, 7), nn.Linear(5 + 7, 5)

    def forward(self, nodes: Any, edges: Any) -> Any:
        source, target = edges
        messages = F.relu(self.message(torch.cat([nodes[source], nodes[target]], -1)))
        summed = torch.zeros(nodes.shape[0], 7).index_add_(0, target, messages)
        degree = torch.zeros(nodes.shape[0]).scatter_add_(0, target, torch.ones_like(target,
                                                          dtype=nodes.dtype))  # fmt: skip
        return self.update(torch.cat([nodes, summed / degree.clamp(min=1)[:, None]], -1))


class DLRMInteraction(nn.Module):
    """DLRM: a dense feature and embeddings, their pairwise dots by `bmm`, the upper
    triangle gathered by `triu_indices`."""

    def __init__(self) -> None:
        super().__init__()
        self.dense = nn.Linear(4, 6)
        self.tables = nn.ModuleList(nn.Embedding(10, 6) for _ in range(3))
        self.top = nn.Linear(6 + 6, 1)

    def forward(self, dense: Any, sparse: Any) -> Any:
        x = self.dense(dense)
        features = torch.stack([x] + [t(sparse[:, k]) for k, t in enumerate(self.tables)], 1)
        dots = torch.bmm(features, features.transpose(1, 2))
        rows, cols = torch.triu_indices(4, 4, offset=1)
        return self.top(torch.cat([x, dots[:, rows, cols]], 1))


class PointNet(nn.Module):
    """Shared per-point MLPs as 1x1 `Conv1d`s, a max over the points, a classifier."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1, self.conv2 = nn.Conv1d(3, 8, 1), nn.Conv1d(8, 16, 1)
        self.bn = nn.BatchNorm1d(8)
        self.head = nn.Linear(16, 4)

    def forward(self, points: Any) -> Any:
        x = self.conv2(F.relu(self.bn(self.conv1(points.transpose(1, 2)))))
        return self.head(x.max(dim=2).values)


class VAEHead(nn.Module):
    """A VAE's latent: mean and log-variance, a `randn_like` draw (torch's generator, in
    torch), the KL term."""

    def __init__(self) -> None:
        super().__init__()
        self.mean, self.log_var, self.decode = nn.Linear(8, 3), nn.Linear(8, 3), nn.Linear(3, 8)

    def forward(self, x: Any) -> Any:
        mean, log_var = self.mean(x), self.log_var(x)
        z = mean + torch.exp(0.5 * log_var) * torch.randn_like(mean)
        kl = -0.5 * torch.mean(1 + log_var - mean.pow(2) - log_var.exp())
        return self.decode(z), kl


class SelectiveScan(nn.Module):
    """A selective scan written with cumulative sums: input-dependent decays
    (`softplus`), their prefix sums as `exp` differences, the masked causal sum."""

    def __init__(self, d: int = 4) -> None:
        super().__init__()
        self.delta, self.gate = nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, x: Any) -> Any:
        decay = -F.softplus(self.delta(x))
        prefix = decay.cumsum(1)
        t = x.shape[1]
        causal = torch.ones(t, t, dtype=torch.bool).tril()
        weights = torch.exp(prefix[:, :, None] - prefix[:, None, :]).masked_fill(
            ~causal[..., None], 0
        )
        return (weights * x[:, None]).sum(2) * torch.sigmoid(self.gate(x))


class CeilPools(nn.Module):
    """Poolings whose last window reaches past the input at some remainders of its
    length (`ceil_mode`, or a padding a stride skips at even lengths): one plan over
    odd and even sizes, not one per parity."""

    def forward(self, x: Any) -> Any:
        return (F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), F.avg_pool2d(x, 2, ceil_mode=True),
                F.max_pool2d(x, 2, ceil_mode=True), F.max_pool2d(x, 3, 2, 1),
                F.avg_pool1d(x[:, :, 0], 3, 2, 1, ceil_mode=True))  # fmt: skip


def image(b: int, t: int) -> tuple[Any, ...]:
    return (torch.randn(b, 3, 2 * t + 2, 2 * t + 4),)


def pairs(b: int, t: int) -> tuple[Any, ...]:
    return torch.randn(b, t + 2, 13), torch.randn(b, t + 4, 12)


def swin(b: int, t: int) -> tuple[Any, ...]:
    return (torch.randn(b, 2 * t + 2, 2 * t + 4, 8),)


def graph(b: int, t: int) -> tuple[Any, ...]:
    nodes = b * t + 2
    return torch.randn(nodes, 5), torch.randint(0, nodes, (2, 3 * nodes))


def dlrm(b: int, t: int) -> tuple[Any, ...]:
    return torch.randn(b * t, 4), torch.randint(0, 10, (b * t, 3))


CASES: dict[str, Case] = {
    "unet": Case(TinyUNet, image),
    # (the gradients of these poolings are test_torch_nn's)
    "ceil_pools": Case(CeilPools, lambda b, t: (torch.randn(b, 3, t + 2, t + 5),), train=False),
    "mobilenet_v3_block": Case(MobileNetV3Block, lambda b, t: (torch.randn(b, 5, t + 2, t + 5),)),
    "pairwise": Case(Pairwise, pairs),
    # (its backward's ops train below, without the view chains over which torch's own
    # shape reasoning took most of a minute)
    "window_attention": Case(WindowAttention, swin, train=False),
    "clip_loss": Case(ClipLoss, lambda b, t: (torch.randn(b * t, 8), torch.randn(b * t, 5))),
    "message_passing": Case(MessagePassing, graph),
    "dlrm_interaction": Case(DLRMInteraction, dlrm),
    "pointnet": Case(PointNet, lambda b, t: (torch.randn(b, 2 * t + 1, 3),)),
    "selective_scan": Case(SelectiveScan, lambda b, t: (torch.randn(b, t, 4),)),
}
"""Per module: how to build it, its inputs at batch b and size t, and what to check."""


@pytest.mark.parametrize("name", CASES)
def test_inference_matches_eager_and_replays_over_a_stream_of_shapes(name: str) -> None:
    inference_replays(CASES[name])


@pytest.mark.parametrize("name", [name for name, case in CASES.items() if case.train])
def test_a_training_step_gives_eagers_gradients(name: str) -> None:
    training_step(CASES[name])


def test_window_attentions_shift_and_gather_train_as_eager() -> None:
    """The ops of window attention's backward: `torch.roll` (rolled back) and the read
    of the bias table by a buffer of indices (a scatter-add), three sizes, on dvm."""
    table = nn.Parameter(torch.randn(9, 2, generator=torch.Generator().manual_seed(0)))
    index = torch.tensor([[0, 3, 4], [8, 1, 2]])

    def shifted(x: Any, table: Any) -> Any:
        bias = table[index.view(-1)].view(2, 3, 2).permute(2, 0, 1)
        rolled = torch.roll(x, (-1, 2), (1, 2))
        return rolled.square().mean() + (rolled[:, :2, :3, 0] * bias).sum()

    def run() -> None:
        compiled = torch.compile(shifted, backend="dvm", dynamic=True)
        for n in (4, 5, 10):  # (no size of the table's or the indices': one graph)
            x = torch.randn(2, n, n + 1, 7, generator=torch.Generator().manual_seed(n))
            got = torch.autograd.grad(compiled(x.requires_grad_(True), table), (x, table))
            expected = torch.autograd.grad(shifted(x, table), (x, table))
            torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)

    reports = graphs_of(run)
    assert [r["graph"].split()[-1] for r in reports] == ["(forward)", "(backward)"], reports
    assert all(r["ops_on_dvm"] == r["ops_total"] for r in reports), reports


def test_a_vae_heads_draw_runs_in_torch_on_torchs_generator() -> None:
    """`randn_like` is torch's draw (it has no handler: it runs in torch, between
    two programs), so from the same seed the compiled head draws what eager draws."""
    model, reference = twins(VAEHead, "train")

    def run() -> None:
        compiled = torch.compile(model, backend="dvm", dynamic=True)
        for b in (2, 3, 7):
            x = torch.randn(b, 8)
            torch.manual_seed(b)
            expected = reference(x)
            torch.manual_seed(b)
            got = compiled(x)
            torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
            (got[0].square().mean() + got[1]).backward()
            (expected[0].square().mean() + expected[1]).backward()
        for p, q in zip(model.parameters(), reference.parameters(), strict=True):
            torch.testing.assert_close(p.grad, q.grad, rtol=1e-3, atol=1e-5)

    reports = graphs_of(run)
    forward = [r for r in reports if "forward" in r["graph"]]
    assert all(set(r["fallbacks"]) == {"randn_like"} for r in forward), forward
    assert all(r["ops_on_dvm"] == r["ops_total"] for r in reports if r not in forward), reports


def test_triangle_indices_are_torchs() -> None:
    def pairs(n: int) -> Any:
        return (torch.triu_indices(n, n + 2, 1), torch.tril_indices(n + 1, n, -1),
                torch.triu_indices(3, 5, -1, dtype=torch.int32))  # fmt: skip

    compiled = torch.compile(pairs, backend="dvm")
    for n in (2, 4):
        for got, expected in zip(compiled(n), pairs(n), strict=True):
            assert got.dtype == expected.dtype and torch.equal(got, expected)


class Layouts(nn.Module):
    """Outputs whose eager strides follow their input's layout or a transpose."""

    def __init__(self) -> None:
        super().__init__()
        self.conv, self.norm = nn.Conv2d(3, C, 3, padding=1), nn.BatchNorm2d(C)

    def forward(self, x: Any, w: Any) -> Any:
        y = torch.relu(self.norm(self.conv(x)))
        return y, (w @ w.t()).t(), y.sum(1), x.transpose(2, 3) * 2


@pytest.mark.parametrize("mode", ["eval", "train"])
def test_outputs_have_eagers_strides(mode: str) -> None:
    """A `channels_last` convolution's output is `channels_last`, a transposed result
    transposed, as in eager (Inductor's restriding): code that checks the layout or
    calls `.view()` on an output behaves as in eager."""
    model, reference = twins(Layouts, mode)

    def run() -> None:
        compiled = torch.compile(model, backend="dvm", dynamic=True)
        for b, t in [(2, 5), (3, 7), (4, 9)]:
            x = torch.randn(b, 3, t, t + 2).to(memory_format=torch.channels_last)
            w = torch.randn(t, 4)
            got, expected = compiled(x, w), reference(x, w)
            for g, e in zip(got, expected, strict=True):
                torch.testing.assert_close(g, e, rtol=1e-4, atol=1e-5)
                assert g.stride() == e.stride()
            assert got[0].is_contiguous(memory_format=torch.channels_last)
            assert got[1].t().view(-1).shape == (t * t,)

    reports = graphs_of(run)
    assert all(r["ops_on_dvm"] == r["ops_total"] for r in reports), reports
    assert all(r["plans"] == 1 for r in reports), reports
