"""The roll-up: one feature on one column from its tests' outcomes (docs/outcomes.md, the table)."""

from __future__ import annotations

import pytest

from harness.merge.rollup import rollup_counts
from harness.outcomes import Rollup


@pytest.mark.parametrize(
    ("counts", "unsupported", "state"),
    [
        ({}, 0, Rollup.NO_DATA),
        ({"not-run": 4}, 0, Rollup.NO_DATA),
        ({"passed": 5}, 0, Rollup.SUPPORTED),
        ({"passed": 5, "flaky": 1, "xpassed": 1}, 0, Rollup.SUPPORTED),
        ({"passed": 5, "failed": 1}, 0, Rollup.PARTIAL),
        ({"passed": 5, "skipped": 2}, 0, Rollup.PARTIAL),
        ({"passed": 5, "xfailed": 1}, 0, Rollup.PARTIAL),
        ({"passed": 5, "not-run": 1}, 0, Rollup.PARTIAL),
        ({"failed": 2, "crashed": 1}, 0, Rollup.FAILING),
        ({"xfailed": 2}, 0, Rollup.FAILING),
        ({"skipped": 3}, 3, Rollup.UNSUPPORTED),
        ({"skipped": 3}, 1, Rollup.UNSUPPORTED),
        ({"skipped": 3}, 0, Rollup.NOT_APPLICABLE),
        ({"timeout": 1, "skipped": 2}, 2, Rollup.FAILING),
    ],
)
def test_rollup(counts, unsupported, state):
    assert rollup_counts(counts, unsupported) is state
