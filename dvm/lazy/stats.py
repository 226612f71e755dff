"""What recording has done, for `dvm.lazy.stats()`."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Stats:
    """What recording has done since the process started (or `reset`)."""

    ops_recorded: int = 0
    segments: int = 0
    """Flushes that ran at least one op."""
    compiled: int = 0
    reused: int = 0
    kernels_launched: int = 0
    compile_seconds: float = 0.0
    fallbacks: Counter[str] = field(default_factory=Counter)
    """numpy functions that ran in numpy, by name."""
    failed: int = 0
    """Segments the compiler refused, run op by op in numpy instead."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "ops_recorded": self.ops_recorded,
            "segments": self.segments,
            "compiled": self.compiled,
            "reused": self.reused,
            "kernels_launched": self.kernels_launched,
            "compile_seconds": self.compile_seconds,
            "fallbacks": dict(self.fallbacks),
            "failed": self.failed,
        }


STATS = Stats()
