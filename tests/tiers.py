"""Where a test run's time goes, per tier, printed at its end: the figures README "Development" states.

The tiers are the ones a developer picks from: `fast` (`-m "not slow"`: no torch, engine or browser),
`act` (tests/workflows: the workflows run under act), `docker` (the rest of the engine's tests) and `slow`
(everything else marked slow: real suites, drills, faults, the page). Each test counts once, in the first
tier it belongs to, with its setup, call and teardown. Under `-n 2` the sums add both workers' time, so
they exceed the run's wall time, which is printed beside them.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

TIERS: Final = ("fast", "slow", "docker", "act")


def tier_of(nodeid: str, keywords: Iterable[str]) -> str:
    """The tier of one test, from its node id (relative to the rootdir) and its keywords (marks)."""
    marks = set(keywords)
    if nodeid.startswith("tests/workflows/"):
        return "act"
    if "docker" in marks or nodeid.startswith("tests/docker/"):
        return "docker"
    return "slow" if "slow" in marks else "fast"


@dataclass
class Tally:
    """Seconds and tests per tier, filled from the reports as they arrive (in xdist's controller too)."""

    started: float = field(default_factory=time.monotonic)
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(TIERS, 0.0))
    tests: dict[str, set[str]] = field(default_factory=lambda: {t: set() for t in TIERS})

    def add(self, nodeid: str, keywords: Mapping[str, object] | Iterable[str], duration: float) -> None:
        tier = tier_of(nodeid, keywords)
        self.seconds[tier] += duration
        self.tests[tier].add(nodeid)

    def line(self, now: float | None = None) -> str:
        wall = (time.monotonic() if now is None else now) - self.started
        parts = [f"{t} {self.seconds[t]:,.0f} s ({len(self.tests[t])} tests)" for t in TIERS if self.tests[t]]
        return f"test time by tier (summed over workers): {', '.join(parts)}; wall {wall:,.0f} s"
