"""`make demo`, the README's main job: LayerNorm through every level, then run on
two shapes against numpy. Run in-process; its output must show each level."""

from __future__ import annotations

import pytest

from dvm import demo


def test_demo_shows_every_level_and_matches_numpy(capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.main() == 0
    out = capsys.readouterr().out
    for title, _ in demo.LEVELS:
        assert title in out, title
    assert "bytecode.arg" in out and "binary of @layernorm_k0:" in out  # IR, disassembly
    for shape in ("33x128", "2048x1024"):
        assert f"=== run on x: {shape}" in out
    assert out.count("max |error| vs numpy") == 2
    assert "the new shape cost" in out and "instructions over" in out  # timing and stats
