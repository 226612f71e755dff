"""What a replayed call of the torch backend does: the same program as a hand-written
one, the inputs' memory given to it without a copy, each size comparison one guard."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from dvm.torch.sizes import SIZES, Size  # noqa: E402


def test_a_comparison_is_noted_as_the_guard_that_holds() -> None:
    """`a == b` that fails is the guard `a != b` (one guard however a handler spells
    it); a size compared with itself is no guard at all."""
    rows, cols = Size(3, "v[0].shape[0]", 0), Size(4, "v[0].shape[1]", 0)
    SIZES.start()
    try:
        assert not rows == cols  # noqa: SIM201 (the comparison is what is tested)
        assert rows != cols
        assert rows < cols and not rows >= cols
        assert rows == rows
    finally:
        SIZES.stop()
    assert list(SIZES.guards) == [
        "(v[0].shape[0] != v[0].shape[1])",
        "(v[0].shape[0] < v[0].shape[1])",
    ]
