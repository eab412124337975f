"""harness/images/docker_engine.py: an engine that does not answer gives one line that says how to fix it."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from harness.errors import DockerUnavailableError
from harness.images import docker_engine

REPO = Path(__file__).resolve().parents[2]


def test_unreachable_engine_says_how_to_fix(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    with pytest.raises(DockerUnavailableError) as info:
        docker_engine.connect(timeout=5)
    message = str(info.value)
    assert "no Docker engine answers at unix://" in message
    assert "dockerd" in message and "DOCKER_HOST" in message
    assert info.value.exit_code == 3
    assert docker_engine.engine_reachable() is False


@pytest.mark.slow  # runs the harness CLI in a subprocess
@pytest.mark.parametrize("verb", [["build", "--backend", "cpu"], ["run", "--backend", "rocm"]])
def test_cli_without_engine_is_one_line_exit_3(verb: list[str], tmp_path: Path) -> None:
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"}
    done = subprocess.run(
        [sys.executable, "-m", "harness", *verb, "--results-dir", str(tmp_path)]
        if verb[0] == "run"
        else [sys.executable, "-m", "harness", *verb],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 3
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("harness: error: no Docker engine answers")
    assert "Traceback" not in done.stderr


@pytest.mark.slow  # runs the harness CLI in a subprocess
def test_a_user_outside_the_docker_group_is_told_to_join_it(request: pytest.FixtureRequest) -> None:
    """A self-hosted runner whose user is not in the docker group: one line naming the fix.
    Run as `nobody` against the real engine's socket (root:docker, 0660)."""
    socket = Path("/var/run/docker.sock")
    setpriv = shutil.which("setpriv")
    if os.getuid() != 0 or not setpriv or not socket.exists():
        pytest.skip("needs root (to become nobody), setpriv and a local engine socket")
    if socket.stat().st_mode & 0o007:
        pytest.skip("the engine socket is world-accessible here")
    # nobody may not read this interpreter's site-packages (e.g. under /root): the packages the
    # command imports are copied where nobody can read them, as a runner's own install would be.
    # (pytest's tmp_path is under a 0700 dir: use one nobody can enter)
    home = Path(tempfile.mkdtemp(prefix="torch-compat-nobody-"))
    home.chmod(0o755)
    request.addfinalizer(lambda: shutil.rmtree(home, ignore_errors=True))
    site = home / "site"
    for name in ("docker", "requests", "urllib3", "idna", "certifi", "charset_normalizer", "packaging"):
        module = importlib.import_module(name)
        source = Path(module.__file__).parent
        shutil.copytree(source, site / source.name)
    for path in site.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    done = subprocess.run(
        [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-m", "harness", "build",
         "--backend", "cpu"],
        cwd=REPO,
        env={
            **os.environ,
            "DOCKER_HOST": f"unix://{socket}",
            "HOME": str(home),
            "PYTHONPATH": f"{REPO}:{site}",
            "PYTHONWARNINGS": "ignore",  # the copied packages may miss optional compiled parts
        },
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert "may not use the Docker engine" in done.stderr and "permission denied" in done.stderr
    assert "usermod -aG docker" in done.stderr and "nothing ran" in done.stderr
