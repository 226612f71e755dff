"""Programs recorded from torch modules fuse as the hand-written ones do: the
flatten and unflatten around each linear layer and the heads' batched matmuls
(`dvm.passes.reshape_sinking`) stop no kernel."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from test_torch import MMoE  # noqa: E402

import dvm  # noqa: E402
import dvm.torch  # noqa: E402

MMOE_KERNELS = 11
"""The most launches a call of `MMoE` makes (its four expert and four other matmuls
are kernels of their own)."""


# (the launches of the programs recorded from test_torch's modules, BERT's layer, the GPT
# block and SwiGLU, are checked by its test_inference_over_a_stream_of_shapes, on the
# programs of the first call: a trace of its own here took seconds per module)


def test_a_stack_of_experts_keeps_its_static_size() -> None:
    """torch's stack of the experts (a concat, then a view): the concat's size is the
    sum of its operands' static sizes, so the stacked experts are `?x4x32` in the
    program's types, as in a hand-written one; the calls stay within their launches."""
    from dvm import lazy

    torch.manual_seed(0)
    model = MMoE().eval()
    text = dvm.torch.export_mlir(model, torch.randn(5, 16))
    assert "-> tensor<?x128xf32>" in text and "into tensor<?x4x32xf32>" in text
    compiled = torch.compile(model, backend="dvm", dynamic=True)
    launches = []
    with torch.no_grad():
        for batch in (5, 9, 7):
            x = torch.randn(batch, 16)
            before = lazy.stats()["kernels_launched"]
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
            launches.append(lazy.stats()["kernels_launched"] - before)
    assert max(launches) <= MMOE_KERNELS, launches
