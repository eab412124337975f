"""The per-tier time tally printed at the end of a run (tests/tiers.py)."""

from __future__ import annotations

from tests.tiers import Tally, tier_of


def test_each_test_counts_in_one_tier() -> None:
    assert tier_of("tests/workflows/test_act.py::test_x", {"slow": 1, "docker": 1}) == "act"
    assert tier_of("tests/docker/test_engine.py::test_x", {"slow": 1}) == "docker"
    assert tier_of("tests/run/test_container.py::test_x", {"docker", "slow"}) == "docker"
    assert tier_of("tests/suites/test_drills.py::test_x", {"slow"}) == "slow"
    assert tier_of("tests/core/test_cell.py::test_x", set()) == "fast"


def test_the_line_sums_setup_call_and_teardown_per_tier() -> None:
    tally = Tally(started=100.0)
    for when, seconds in (("setup", 1.0), ("call", 2.5), ("teardown", 0.5)):
        tally.add("tests/docker/test_engine.py::test_x", {"docker": 1, when: 1}, seconds)
    tally.add("tests/core/test_cell.py::test_y", {}, 0.25)
    line = tally.line(now=160.0)
    assert line == "test time by tier (summed over workers): fast 0 s (1 tests), docker 4 s (1 tests); wall 60 s"
