"""The setup-harness action on a runner without actions/setup-python: it finds the runner's own Python
3.11+ past an older `python3`, and says in one line what to install when there is none.

The older interpreters are stand-ins: scripts named python3 / python / python3.X that fail the
action's version check, as a Python 3.10 does (a CI box has no second real interpreter to spare).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.workflows.actrun import FakeGitHub, snapshot

FIXTURE = Path(__file__).with_name("fixtures") / "setup-harness.yml"
# Stands in for a Python 3.10: it fails the version check, as `sys.version_info < (3, 11)` does there.
OLD_PYTHON = "#!/bin/sh\nexit 1\n"


def old_pythons(folder: Path, names: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text(OLD_PYTHON, encoding="utf-8")
        (folder / name).chmod(0o755)
    return folder


@pytest.fixture
def runner(tmp_path: Path, act: str) -> tuple[FakeGitHub, Path]:
    github = FakeGitHub(tmp_path)
    source = snapshot(tmp_path / "src", lambda tree: shutil.copy(FIXTURE, tree / ".github" / "workflows"))
    github.push(source)
    return github, source


def path_with(first: Path, github: FakeGitHub) -> str:
    env = github.runner_env(github.root / "unused", {})
    return f"{first}:{env['PATH']}"


def test_the_runners_own_python_311_is_found_past_an_older_python3(runner) -> None:
    github, source = runner
    stubs = old_pythons(github.root / "old", ["python3", "python"])
    run = github.run(source, "setup-harness.yml", runner_env={"PATH": path_with(stubs, github)})
    assert run.returncode == 0, run.digest()
    made_from = run.output("install", "python") or ""
    assert Path(made_from).name == f"python{sys.version_info.major}.{sys.version_info.minor}", made_from
    assert Path(made_from).parent != stubs


def test_no_python_311_on_the_runner_is_one_line_saying_what_to_install(runner) -> None:
    github, source = runner
    stubs = old_pythons(github.root / "old", ["python3", "python", "python3.11", "python3.12", "python3.13"])
    run = github.run(source, "setup-harness.yml", runner_env={"PATH": path_with(stubs, github)})
    assert run.returncode != 0
    digest = run.digest()
    assert (
        "install: ::error::no Python 3.11 or newer on this runner: install one "
        "(apt-get install python3.11 python3.11-venv) or set HARNESS_RUNNER_PYTHON in the runner's .env"
    ) in digest, digest
