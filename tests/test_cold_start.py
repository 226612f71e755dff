"""What a fresh process loads: libraries that cost a large part of a second to import
are loaded only by the programs that need them.

- `ml_dtypes` (bf16) is imported by the first bf16 program, not by `import dvm` or a
  compile and call on other types; bf16 programs still compile and run after that. The
  same through the torch backend: a model on f32 leaves it unimported, one on bf16
  loads it.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

F32_THEN_BF16 = textwrap.dedent(
    """
    import sys
    import numpy as np
    import dvm

    def program(element):
        return (
            "func.func @f(%x: tensor<?xELEMENT>) -> tensor<?xELEMENT> {"
            "  %y = tensor.tanh %x : tensor<?xELEMENT>"
            "  func.return %y : tensor<?xELEMENT>"
            "}"
        ).replace("ELEMENT", element)

    f32 = dvm.compile(program("f32"), cache=False)
    x = np.linspace(-2, 2, 7, dtype=np.float32)
    assert np.allclose(f32(x), np.tanh(x), atol=1e-6)
    print("ml_dtypes" in sys.modules)

    bf16 = dvm.compile(program("bf16"), cache=False)
    import ml_dtypes
    y = bf16(x.astype(ml_dtypes.bfloat16))
    assert y.dtype == ml_dtypes.bfloat16
    assert np.allclose(y.astype(np.float32), np.tanh(x), atol=1e-2)
    print("ok")
    """
)


TORCH_F32_THEN_BF16 = textwrap.dedent(
    """
    import sys
    import torch
    import dvm.torch

    def gelu_mlp(x, w):
        return torch.nn.functional.gelu(x @ w).sum(-1)

    compiled = torch.compile(gelu_mlp, backend="dvm", dynamic=True)
    torch.manual_seed(0)
    x, w = torch.randn(5, 8), torch.randn(8, 3)
    assert torch.allclose(compiled(x, w), gelu_mlp(x, w), atol=1e-5)
    print("ml_dtypes" in sys.modules, dvm.torch.reports()[-1]["ops_on_dvm"] > 0)

    y = compiled(x.bfloat16(), w.bfloat16())
    assert y.dtype == torch.bfloat16
    assert torch.allclose(y.float(), gelu_mlp(x, w), atol=0.1, rtol=0.05)
    print("ml_dtypes" in sys.modules)
    """
)


def output_of(script: str) -> list[str]:
    """What `script` printed in a fresh process, which must succeed."""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_ml_dtypes_is_imported_by_the_first_bf16_program_only() -> None:
    """A compile and call on f32 leaves `ml_dtypes` unimported (it takes most of a
    second); a bf16 program compiled after it loads it and runs."""
    assert output_of(F32_THEN_BF16) == ["False", "ok"]


def test_the_torch_backend_imports_ml_dtypes_for_bf16_tensors_only() -> None:
    """A model run on f32 through the backend leaves `ml_dtypes` unimported; the same
    model on bf16 tensors loads it and runs on dvm."""
    pytest.importorskip("torch")
    assert output_of(TORCH_F32_THEN_BF16) == ["False", "True", "True"]


LIBRARIES_FROZEN = textwrap.dedent(
    """
    import gc
    import sys
    import dvm.runtime
    dvm.runtime.FREEZE_AFTER_FIRST_COMPILE = sys.argv[1] == "on"
    collections = []
    gc.callbacks.append(lambda phase, info: phase == "stop" and collections.append(info))
    import dvm.libraries
    print(gc.isenabled(), gc.get_freeze_count() > 100_000, len(collections) > 0)
    """
)


@pytest.mark.parametrize(
    ("freeze", "printed"), [("on", ["True", "True", "False"]), ("off", ["True", "False", "True"])]
)
def test_the_libraries_are_imported_frozen_without_collections(
    freeze: str, printed: list[str]
) -> None:
    """Importing xDSL and sympy runs no collection and freezes them, with the collector
    left enabled; `FREEZE_AFTER_FIRST_COMPILE = False` leaves the collector alone (it
    collects as the libraries are imported, and freezes nothing)."""
    result = subprocess.run(
        [sys.executable, "-c", LIBRARIES_FROZEN, freeze], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == printed
