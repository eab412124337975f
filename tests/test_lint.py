"""The whole tree stays ruff clean (lint and format), so CI catches what an editor missed."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.cellfactory import REPO
from tests.conftest import in_ci


@pytest.mark.slow  # runs ruff
@pytest.mark.parametrize(
    "command", [["ruff", "check", "."], ["ruff", "format", "--check", "."]], ids=["check", "format"]
)
def test_ruff_clean(command):
    if shutil.which("ruff") is None:
        if in_ci():
            pytest.fail("ruff is not installed (the test extra provides it)")
        pytest.skip("ruff is not installed")
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
