"""What a fresh process loads: libraries that cost a large part of a second to import
are loaded only by the programs that need them.

- `ml_dtypes` (bf16) is imported by the first bf16 program, not by `import dvm` or a
  compile and call on other types; bf16 programs still compile and run after that.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

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


def test_ml_dtypes_is_imported_by_the_first_bf16_program_only() -> None:
    """A compile and call on f32 leaves `ml_dtypes` unimported (it takes most of a
    second); a bf16 program compiled after it loads it and runs."""
    result = subprocess.run(
        [sys.executable, "-c", F32_THEN_BF16], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "ok"]
