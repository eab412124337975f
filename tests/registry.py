"""A real OCI registry on this host for the tests that push and pull: Debian's `docker-registry`
(the distribution registry) serving a temporary folder on a free loopback port, stopped afterwards.
Docker speaks plain HTTP to a registry on 127.0.0.1, so no certificate is needed. Its access log
(one line per request) tells a test what was pushed and pulled."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import in_ci, slow_fixture

BINARY = Path("/usr/bin/docker-registry")


@dataclass
class Registry:
    host: str  # 127.0.0.1:PORT, what image references start with
    log: Path

    def requests(self, method: str = "", path: str = "") -> list[str]:
        """Access log lines of `METHOD /v2/...path...` requests (in order)."""
        lines = self.log.read_text(encoding="utf-8", errors="replace").splitlines()
        return [line for line in lines if f'"{method}' in line and f"/v2/{path}" in line and "HTTP/" in line]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
@slow_fixture("runs a registry (docker-registry)")
def local_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    if not BINARY.exists():
        if in_ci():
            pytest.fail("CI must run the registry tests, but /usr/bin/docker-registry is missing (apt-get install it)")
        pytest.skip("no /usr/bin/docker-registry on this host")
    root = tmp_path_factory.mktemp("registry")
    port = _free_port()
    config = root / "config.yml"
    config.write_text(
        "version: 0.1\nlog:\n  level: info\n  accesslog:\n    disabled: false\n"
        f"storage:\n  filesystem:\n    rootdirectory: {root / 'storage'}\n  delete:\n    enabled: true\n"
        f"http:\n  addr: 127.0.0.1:{port}\n",
        encoding="utf-8",
    )
    log = root / "registry.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([str(BINARY), "serve", str(config)], stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v2/", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"docker-registry did not start: {log.read_text()[-2000:]}") from None
                time.sleep(0.2)
        yield Registry(host=f"127.0.0.1:{port}", log=log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)


@contextlib.contextmanager
def second_engine(root: Path) -> Iterator[str]:
    """A Docker engine of its own (its own data, containerd and socket, no images at all), for as long
    as the block runs: what a fresh runner that pulls an image by its digest sees. Yields DOCKER_HOST."""
    root.mkdir(parents=True, exist_ok=True)
    socket_path = root / "docker.sock"
    log = root / "dockerd.log"
    argv = [
        "dockerd", "--data-root", str(root / "data"), "--exec-root", str(root / "exec"),
        "--pidfile", str(root / "dockerd.pid"), "-H", f"unix://{socket_path}",
        "--iptables=false", "--bridge=none", "--storage-driver=overlay2",
    ]  # fmt: skip
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)
    host = f"unix://{socket_path}"
    try:
        deadline = time.monotonic() + 60
        while subprocess.run(["docker", "-H", host, "info"], capture_output=True, timeout=30, check=False).returncode:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"a second dockerd did not start: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield host
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
        shutil.rmtree(root, ignore_errors=True)
