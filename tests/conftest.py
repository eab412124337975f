"""Shared fixtures: sample suites run by real pytest, golden files, CI detection."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "test-artifacts"


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
