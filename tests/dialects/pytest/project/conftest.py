"""Fixtures whose setup or teardown fails, and a counter that makes tests fail a set number of times."""

import os
from pathlib import Path

import pytest


@pytest.fixture
def broken_setup():
    raise RuntimeError("fixture setup failed")


@pytest.fixture
def broken_teardown():
    yield "resource"
    raise RuntimeError("fixture teardown failed")


@pytest.fixture
def attempt(request: pytest.FixtureRequest) -> int:
    """How many times this test has run in this session (1, 2, ...), kept in $ATTEMPT_DIR across reruns."""
    directory = Path(os.environ.get("ATTEMPT_DIR", request.config.rootpath / ".attempts"))
    directory.mkdir(parents=True, exist_ok=True)
    counter = directory / request.node.nodeid.replace("/", "_").replace(":", "_")
    count = int(counter.read_text()) + 1 if counter.exists() else 1
    counter.write_text(str(count))
    return count
