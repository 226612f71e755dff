"""Programs recorded from torch modules fuse as the hand-written ones do: the
flatten and unflatten around each linear layer and the heads' batched matmuls
(`dvm.passes.reshape_sinking`) stop no kernel."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from test_torch import MODULES  # noqa: E402

import dvm  # noqa: E402
import dvm.torch  # noqa: E402

KERNELS = {"bert_layer": 15, "gpt_block": 14, "swiglu": 4}
"""The most launches each module's program makes (when the flatten around each
matmul stopped fusion: 21, 22 and 6)."""


@pytest.mark.parametrize("name", KERNELS)
def test_a_module_compiles_to_fused_kernels(name: str) -> None:
    make, data, _ = MODULES[name]
    torch.manual_seed(0)
    model = make().eval()
    x = data(2, 5)
    program = dvm.compile(dvm.torch.export_mlir(model, x))
    assert program.variants[frozenset()].launches <= KERNELS[name]
    with torch.no_grad():
        compiled = torch.compile(model, backend="dvm", dynamic=True)
        for b, t in [(2, 5), (3, 7), (4, 3)]:
            x = data(b, t)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-5)
