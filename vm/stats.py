"""Per-launch statistics (optional: only an instrumented launch pays for them)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class CoreStats:
    """What one core counted during a launch."""

    instructions: Counter[str] = field(default_factory=Counter)
    bytes_read: int = 0
    bytes_written: int = 0
    peak_local: int = 0
    numpy_ns: int = 0
    events: list[tuple[str, int, int]] | None = None

    def reset(self, trace: bool) -> None:
        """Clear the counters before a launch."""
        self.instructions.clear()
        self.bytes_read = self.bytes_written = self.peak_local = self.numpy_ns = 0
        self.events = [] if trace else None

    def count(self, name: str, read: int, written: int, top: int) -> None:
        """Count one executed instruction."""
        self.instructions[name] += 1
        self.bytes_read += read
        self.bytes_written += written
        if top > self.peak_local:
            self.peak_local = top


@dataclass
class LaunchStats:
    """Totals over the cores of one launch.

    `numpy_s` is the time spent inside instructions (numpy); `dispatch_s`
    is the rest of the cores' busy time (the executor's own overhead,
    inflated by the timing itself). `peak_local_memory` is the highest byte
    of local memory any instruction wrote.
    """

    instructions: dict[str, int]
    bytes_read: int
    bytes_written: int
    peak_local_memory: int
    wall_s: float
    numpy_s: float
    dispatch_s: float
    tiles: int
    cores: int
    events: list[list[tuple[str, int, int]]] | None = None

    @property
    def total_instructions(self) -> int:
        return sum(self.instructions.values())

    @staticmethod
    def collect(cores: list[CoreStats], t0: int, t1: int, tiles: int, n: int) -> LaunchStats:
        """Sum the cores' counters into one LaunchStats."""
        total: Counter[str] = Counter()
        for c in cores:
            total.update(c.instructions)
        numpy_ns = sum(c.numpy_ns for c in cores)
        busy = (t1 - t0) * n
        events = [c.events for c in cores if c.events is not None]
        return LaunchStats(
            dict(total),
            sum(c.bytes_read for c in cores),
            sum(c.bytes_written for c in cores),
            max((c.peak_local for c in cores), default=0),
            (t1 - t0) / 1e9,
            numpy_ns / 1e9,
            max(busy - numpy_ns, 0) / 1e9,
            tiles,
            n,
            events or None,
        )

    def chrome_trace(self) -> str:
        """The per-core instruction timeline as Chrome trace JSON (chrome://tracing, Perfetto)."""
        out = []
        starts = [ev[0][1] for ev in self.events or [] if ev]
        base = min(starts, default=0)
        for core, evs in enumerate(self.events or []):
            for name, a, b in evs:
                ts, dur = (a - base) / 1000, (b - a) / 1000
                out.append({"name": name, "ph": "X", "ts": ts, "dur": dur, "pid": 0, "tid": core})
        return json.dumps({"traceEvents": out})
