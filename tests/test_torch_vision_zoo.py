"""`torch.compile(..., backend="dvm", dynamic=True)` on vision modules as people write
them (a MobileNet block, a ViT's convolutional patch embedding, squeeze-excitation, a
ConvNeXt block, instance norms, adaptive poolings to sizes that do not divide the
input, interpolation by a fractional scale, pixel shuffles), over a stream of image
sizes (primes, batch 1, sizes that change every call). Against eager: outputs,
gradients and buffers, every ATen op on dvm, no graph past each size class's first
and every later call a replay of one plan (no plan per size or per remainder)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

from test_torch_llm_zoo import assert_replayed  # noqa: E402
from test_torch_modules_zoo import (  # noqa: E402
    Case,
    assert_same,
    assert_share,
    graphs_of,
    training_steps,
    twins,
)

import dvm.torch  # noqa: E402  (after torch: the extra is optional)

C = 5
"""Channels: a size no image dim of the stream has (dynamo gives equal sizes of a first
call one symbol, and the first call where they differ would compile another graph)."""


class MobileNetBlock(nn.Module):
    """A depthwise-separable convolution (groups = channels, then 1x1), batch norms, ReLU6."""

    def __init__(self) -> None:
        super().__init__()
        self.depthwise = nn.Conv2d(C, C, 3, padding=1, groups=C, bias=False)
        self.pointwise = nn.Conv2d(C, 2 * C, 1, bias=False)
        self.bn1, self.bn2 = nn.BatchNorm2d(C), nn.BatchNorm2d(2 * C)

    def forward(self, x: Any) -> Any:
        return F.relu6(self.bn2(self.pointwise(F.relu6(self.bn1(self.depthwise(x))))))


class ViTEmbedding(nn.Module):
    """A convolution of stride = patch, flattened to tokens; a class token and the
    learned positions cut to the token count."""

    def __init__(self, patch: int = 4, d: int = 16) -> None:
        super().__init__()
        self.proj = nn.Conv2d(3, d, patch, stride=patch)
        self.cls = nn.Parameter(torch.randn(1, 1, d))
        self.positions = nn.Parameter(torch.randn(1, 65, d))
        self.norm = nn.LayerNorm(d)

    def forward(self, x: Any) -> Any:
        tokens = self.proj(x).flatten(2).transpose(1, 2)
        tokens = torch.cat([self.cls.expand(x.shape[0], -1, -1), tokens], dim=1)
        return self.norm(tokens + self.positions[:, : tokens.shape[1]])


class SqueezeExcitation(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.reduce, self.expand = nn.Linear(8, 2), nn.Linear(2, 8)

    def forward(self, x: Any) -> Any:
        y = self.conv(x)
        gate = torch.sigmoid(self.expand(F.relu(self.reduce(y.mean((2, 3))))))
        return y * gate[:, :, None, None]


class ConvNeXtBlock(nn.Module):
    """A 7x7 depthwise convolution, LayerNorm over channels last, an MLP, a layer scale."""

    def __init__(self) -> None:
        super().__init__()
        self.depthwise = nn.Conv2d(C, C, 7, padding=3, groups=C)
        self.norm = nn.LayerNorm(C, eps=1e-6)
        self.up, self.down = nn.Linear(C, 4 * C), nn.Linear(4 * C, C)
        self.gamma = nn.Parameter(0.1 * torch.ones(C))

    def forward(self, x: Any) -> Any:
        y = self.depthwise(x).permute(0, 2, 3, 1)
        y = self.down(F.gelu(self.up(self.norm(y)))) * self.gamma
        return x + y.permute(0, 3, 1, 2)


class InstanceNorms(nn.Module):
    """`InstanceNorm2d` with and without an affine map (a batch norm keeping no running
    statistics, whose weight torch repeats per batch element), one tracking them, and
    a `BatchNorm2d` made without them."""

    def __init__(self) -> None:
        super().__init__()
        self.affine, self.plain = nn.InstanceNorm2d(3, affine=True), nn.InstanceNorm2d(3)
        self.tracked = nn.InstanceNorm2d(3, track_running_stats=True)
        self.untracked = nn.BatchNorm2d(3, track_running_stats=False)

    def forward(self, x: Any) -> Any:
        return self.affine(x) + 2 * self.plain(x), self.tracked(x), self.untracked(x)


class AdaptivePools(nn.Module):
    """Adaptive average poolings to outputs that do not divide the input (torch's windows
    then overlap), 1-, 2- and 3-d, and a global one."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)

    def forward(self, x: Any) -> Any:
        return (F.adaptive_avg_pool2d(self.conv(x), (7, 3)), F.adaptive_avg_pool2d(x, 1),
                F.adaptive_avg_pool1d(x[:, :, 0], 5),
                F.adaptive_avg_pool3d(x[:, None], (2, 3, 4)))  # fmt: skip


class FractionalScales(nn.Module):
    """`interpolate` by scales whose output sizes are floats truncated (`math.trunc`)."""

    def forward(self, x: Any) -> Any:
        return (F.interpolate(x, scale_factor=0.5, mode="bilinear"),
                F.interpolate(x, scale_factor=1.5, mode="nearest"))  # fmt: skip


class PixelShuffles(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 12, 3, padding=1)
        self.shuffle, self.unshuffle = nn.PixelShuffle(2), nn.PixelUnshuffle(2)

    def forward(self, x: Any) -> Any:
        y = self.shuffle(self.conv(x))
        return y, self.unshuffle(y)


class RepeatBySize(nn.Module):
    """`repeat` by counts that are sizes of the call."""

    def forward(self, x: Any, w: Any) -> Any:
        return x.repeat(x.shape[0], 2, 1) * 2, w.repeat(x.shape[2], 1) + 1


def image(channels: int) -> Any:
    return lambda b, t: (torch.randn(b, channels, t + 3, t + 5),)


CASES: dict[str, Case] = {
    "mobilenet_block": Case(MobileNetBlock, image(C)),
    "vit_conv_embedding": Case(
        ViTEmbedding, lambda b, t: (torch.randn(b, 3, 4 * t, 8),), train=False
    ),
    "squeeze_excitation": Case(SqueezeExcitation, image(3), train=False),
    "convnext_block": Case(ConvNeXtBlock, image(C), train=False),
    "instance_norms": Case(InstanceNorms, image(3)),
    "adaptive_pools": Case(AdaptivePools, image(3)),
    "fractional_scales": Case(FractionalScales, image(3)),
    "pixel_shuffles": Case(PixelShuffles, image(3), train=False),
    "repeat_by_size": Case(
        RepeatBySize, lambda b, t: (torch.randn(b, 3, t + 3), torch.randn(6)), train=False
    ),
}
"""Per module: how to build it, its inputs at batch b and size t, and what to check
(a training step where the backward has ops of its own to check: the suite's time)."""

CLASSES = [(2, 5), (1, 1)]
"""A call per size class dynamo compiles a graph for (sizes of 1 are specialized)."""

STREAM = [(3, 7), (4, 4), (5, 11)]
"""Later shapes, every image size new: no graph, no plan more."""


def inference_replays(case: Case) -> None:
    """The module under no_grad over `CLASSES` then `STREAM`: eager's outputs, every op
    on dvm, and no graph or plan made after the classes' calls."""
    model, reference = twins(case.make, "eval")
    seen: list[list[dict[str, Any]]] = []

    def run() -> None:
        compiled = torch.compile(model, backend="dvm", dynamic=True)
        with torch.no_grad():
            for k, (b, t) in enumerate(CLASSES + STREAM):
                if k == len(CLASSES):
                    seen.append(copy.deepcopy(dvm.torch.reports()))
                torch.manual_seed(k)
                inputs = case.data(b, t)
                expected = reference(*(x.clone() for x in inputs))
                assert_same(compiled(*inputs), expected, case.tolerance)

    reports = graphs_of(run)
    assert_share(reports, case.share)
    first = len(dvm.torch.reports()) - len(reports)
    assert_replayed(seen[0][first:], reports, len(STREAM))


@pytest.mark.parametrize("name", CASES)
def test_inference_matches_eager_and_replays_over_a_stream_of_shapes(name: str) -> None:
    inference_replays(CASES[name])


def training_step(case: Case) -> None:
    """Two training steps: eager's gradients and buffers, the forward's and backward's
    ops on dvm."""
    model, reference = twins(case.make, "train")

    def run() -> None:
        training_steps(case, model, reference, [(2, 5), (3, 7)])
        for (key, p), q in zip(model.named_buffers(), reference.buffers(), strict=True):
            torch.testing.assert_close(p, q, rtol=1e-4, atol=1e-5, msg=key)

    reports = graphs_of(run)
    assert_share(reports, case.share)
    assert any("backward" in r["graph"] for r in reports), reports


@pytest.mark.parametrize("name", [name for name, case in CASES.items() if case.train])
def test_a_training_step_gives_eagers_gradients_and_buffers(name: str) -> None:
    training_step(CASES[name])


@pytest.mark.parametrize("name", ["mobilenet_block", "convnext_block", "adaptive_pools"])
def test_a_bfloat16_module_runs_every_op_on_dvm(name: str) -> None:
    """`.to(torch.bfloat16)` vision modules: convolutions, norms and poolings record in
    bf16 (numpy's type for it is not a float kind to numpy), eager's results within
    bf16's precision."""
    case = CASES[name]
    torch.manual_seed(0)
    model = case.make().eval().to(torch.bfloat16)

    def run() -> None:
        compiled = torch.compile(model, backend="dvm", dynamic=True)
        with torch.no_grad():
            for b, t in [(2, 5), (3, 7)]:
                torch.manual_seed(b * t)
                (x,) = case.data(b, t)
                # (assert_close checks the dtypes too: bf16's outputs stay bf16)
                assert_same(compiled(x.bfloat16()), model(x.bfloat16()), (3e-2, 3e-2))

    reports = graphs_of(run)
    assert all(r["ops_on_dvm"] == r["ops_total"] for r in reports), reports
