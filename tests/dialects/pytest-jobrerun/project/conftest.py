"""A counter that survives between pytest sessions: which session (job run) this is."""

import os
from pathlib import Path

import pytest


@pytest.fixture
def session_number(request: pytest.FixtureRequest) -> int:
    """1 in the first job run, 2 in the re-run (kept in $ATTEMPT_DIR, one file per test)."""
    directory = Path(os.environ["ATTEMPT_DIR"])
    counter = directory / request.node.nodeid.replace("/", "_").replace(":", "_")
    count = int(counter.read_text()) + 1 if counter.exists() else 1
    counter.write_text(str(count))
    return count
