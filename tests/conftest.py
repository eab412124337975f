"""Shared fixtures: sample suites run by real pytest, golden files, CI detection."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Final

import pytest

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "test-artifacts"


# The fast tier (`python -m pytest tests -m "not slow"`, tox -e fast): no torch, no Docker engine,
# no browser, under a minute. A test is slow when it needs one of those, or runs real suites:
# its folder, a fixture that brings one of them, or its module (listed with the reason).
SLOW_FOLDERS: Final = ("docker", "workflows", "suites", "faults")
SLOW_FIXTURES: Final = frozenset({"browser", "docker_client", "sample_suite", "main_job", "taxonomy_cell"})
SLOW_MODULES: Final = {
    "test_ingest.py": "real pytest runs of sample suites (the probe imports torch)",
    "test_integration.py": "the real suites on this machine's torch",
    "test_escaping.py": "a real run of a hostile sample suite",
    "test_markdown.py": "real runs of sample suites",
    "test_matrix.py": "real runs of sample suites",
    "test_verify_torch.py": "imports torch",
    "test_device_proof.py": "runs the suites on torch",
    "test_no_torch.py": "runs the main job",
    "test_cli.py": "runs harness run on torch",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    tests_dir = Path(__file__).parent
    for item in items:
        path = Path(item.path)
        parts = path.relative_to(tests_dir).parts if tests_dir in path.parents else ()
        slow = (
            (len(parts) > 1 and parts[0] in SLOW_FOLDERS)
            or path.name in SLOW_MODULES
            or bool(SLOW_FIXTURES & set(getattr(item, "fixturenames", ())))
        )
        if slow:
            item.add_marker(pytest.mark.slow)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", help="rewrite tests/golden/* from current output")


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture
def golden(request: pytest.FixtureRequest):
    """compare(name, text): assert text equals tests/golden/<name>, or rewrite it with --update-golden."""
    update = request.config.getoption("--update-golden")

    def compare(name: str, text: str) -> None:
        path = REPO / "tests" / "golden" / name
        if update or not path.exists():
            if not update and in_ci():
                pytest.fail(f"golden file {path} is missing; run pytest --update-golden and commit it")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        assert text == path.read_text(encoding="utf-8"), f"{name} differs from its golden file (--update-golden)"

    return compare


@pytest.fixture
def artifacts_dir() -> Path:
    """Where tests save files for humans (screenshots); uploaded by CI."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def sample_suite(tmp_path: Path):
    """make(files) -> a suites dir with features.toml, pytest.ini and the real probe."""
    from tests.cellfactory import write_suite

    def make(files: dict[str, str], features: dict[str, dict[str, str]] | None = None, name: str = "suites") -> Path:
        return write_suite(tmp_path / name, files, features)

    return make


def load_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))
