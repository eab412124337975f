"""tools/make-base-image.sh on a host without its tools: one line with the install command, exit 3."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.errors import EXIT_INFRASTRUCTURE
from tests.cellfactory import REPO

SCRIPT = REPO / "tools" / "make-base-image.sh"


def _run(path: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["/bin/bash", str(SCRIPT), "torch-compat/test-never-made:x"],
        env={"PATH": path},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.slow  # runs the script
def test_without_debootstrap_it_says_how_to_install_it(tmp_path: Path) -> None:
    docker = tmp_path / "docker"  # an engine that has no such image, so the script goes on to debootstrap
    docker.write_text("#!/bin/sh\nexit 1\n")
    docker.chmod(0o755)
    done = _run(str(tmp_path))
    assert done.returncode == EXIT_INFRASTRUCTURE, done.stderr
    assert done.stderr == (
        "make-base-image: debootstrap not found: install it (apt-get install debootstrap), as root, then rerun\n"
    )
    assert "command not found" not in done.stderr


@pytest.mark.slow  # runs the script
def test_without_docker_it_says_how_to_install_it(tmp_path: Path) -> None:
    done = _run(str(tmp_path))
    assert done.returncode == EXIT_INFRASTRUCTURE
    assert "docker not found: install it (apt-get install docker.io)" in done.stderr
