"""Fixtures for the tests that use a real Docker engine.

No image registry is reachable in CI, so the images are made locally:
- a base image: Debian bookworm minbase + python3/venv + g++ by tools/make-base-image.sh
  (debootstrap + `docker import`), tagged by the script's hash so it is built once per machine;
- a wheelhouse (torch 2.13.0 CPU and what the image installs beside it: pytest, pytest-xdist, numpy)
  from `pip download`, cached in
  ~/.cache/torch-compat (TORCH_COMPAT_CACHE);
- the `cpu` image, built by the harness itself from those two, with no network at all
  (an air-gapped build), an extra CA bundle and a proxy URL holding a fake password (to
  show neither leaks into the image).

These tests skip only when no engine is reachable *and* CI is not set; in CI they fail.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.errors import DockerUnavailableError
from harness.run.container import CELL_LABEL, leftover_containers
from tests.conftest import in_ci
from tests.parallel import built_once

REPO = Path(__file__).resolve().parents[2]
BASE_SCRIPT = REPO / "tools" / "make-base-image.sh"
CACHE = Path(os.environ.get("TORCH_COMPAT_CACHE") or "~/.cache/torch-compat").expanduser()
TEST_TORCH = "2.13.0"
TEST_CA = Path(__file__).with_name("data") / "test-proxy-ca.crt"
FAKE_PROXY_PASSWORD = "s3cret-proxy-password"
FAKE_PROXY = f"http://ci-user:{FAKE_PROXY_PASSWORD}@proxy.invalid:3128"
# The base image's Python (Debian bookworm): the wheelhouse must match it, not the host's.
IMAGE_PYTHON_TAGS = ("--python-version", "3.11", "--implementation", "cp", "--abi", "cp311")
# Other sessions may share the engine (and run these very tests): every cell id a test uses
# ends with this session's token, and only those containers are this session's business.
SESSION = secrets.token_hex(3)
# One fast test module per feature folder of the real suites.
PER_FEATURE_SUBSET = "test_graph_api or test_svd or test_torchscript or test_hub_trust or test_sparse_format"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.path).parents:
            item.add_marker(pytest.mark.docker)


@pytest.fixture(scope="session")
def docker_client() -> Iterator[Any]:
    from harness.images import docker_engine

    try:
        client = docker_engine.connect()
    except DockerUnavailableError as err:
        if in_ci():
            pytest.fail(f"CI must run the Docker tests, but {err}")
        pytest.skip(f"no Docker engine reachable (and not CI): {err}")
    yield client
    client.close()


def _image_exists(client: Any, ref: str) -> bool:
    import docker.errors

    try:
        client.images.get(ref)
    except docker.errors.ImageNotFound:
        return False
    return True


@pytest.fixture(scope="session")
def base_image(docker_client: Any) -> str:
    """A local Debian base with Python (or TORCH_COMPAT_TEST_BASE_IMAGE where a registry is reachable)."""
    override = os.environ.get("TORCH_COMPAT_TEST_BASE_IMAGE")
    if override:
        return override
    digest = hashlib.sha256(BASE_SCRIPT.read_bytes()).hexdigest()[:10]
    tag = f"torch-compat/local-base:bookworm-{digest}"
    with built_once(f"base-image-{digest}"):  # another worker or run making it: wait, then reuse
        if _image_exists(docker_client, tag):
            return tag
        done = subprocess.run(
            ["bash", str(BASE_SCRIPT), tag], capture_output=True, text=True, timeout=1800, check=False
        )
    if done.returncode != 0:
        pytest.fail(f"could not make the local base image ({BASE_SCRIPT.name}): {(done.stdout + done.stderr)[-2000:]}")
    return tag


@pytest.fixture(scope="session")
def wheelhouse() -> Path:
    from harness.images.recipes import TEST_PACKAGES

    folder = CACHE / f"wheelhouse-cpu-{TEST_TORCH}"
    wanted = [p.replace("-", "_") for p in TEST_PACKAGES]
    with built_once(folder.name):
        _fill_wheelhouse(folder, wanted)
    return folder


def _fill_wheelhouse(folder: Path, wanted: list[str]) -> None:
    from harness.images.recipes import TEST_PACKAGES

    have = {w.name.split("-", 1)[0].lower() for w in folder.glob("*.whl")}
    if not list(folder.glob(f"torch-{TEST_TORCH}*.whl")) or not set(wanted) <= have:
        folder.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [
                sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:", *IMAGE_PYTHON_TAGS,
                "--platform", "manylinux_2_28_x86_64", "--dest", str(folder),
                f"torch=={TEST_TORCH}", *TEST_PACKAGES,
            ],
            capture_output=True, text=True, timeout=1800, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            pytest.fail(f"pip download into {folder} failed: {done.stderr[-2000:]}")


@pytest.fixture(scope="session")
def build_env(base_image: str, wheelhouse: Path) -> dict[str, str]:
    """The HARNESS_* variables that make `harness build/run --backend cpu` use the local inputs."""
    return {
        "HARNESS_BASE_IMAGE": base_image,
        "HARNESS_WHEELHOUSE": str(wheelhouse),
        "HARNESS_CA_BUNDLE": str(TEST_CA),
        "HARNESS_BUILD_NETWORK": "none",  # an air-gapped build: nothing may come from a network
    }


@pytest.fixture(scope="session")
def cpu_spec(build_env: dict[str, str]) -> Any:
    from harness.images import recipes

    return recipes.build_spec("cpu", env=build_env)


@pytest.fixture(scope="session")
def cpu_image(docker_client: Any, cpu_spec: Any) -> Any:
    """The cpu image, built (or reused) by the harness, with a proxy password in the environment."""
    from harness.images import image_build

    saved = {name: os.environ.get(name) for name in ("HTTPS_PROXY", "https_proxy")}
    os.environ.update({"HTTPS_PROXY": FAKE_PROXY, "https_proxy": FAKE_PROXY})
    try:
        lines: list[str] = []
        with built_once("cpu-image"):  # act's cell jobs build the same tag: tests/workflows/conftest.py
            result = image_build.ensure_image(cpu_spec, docker_client, progress=lines.append)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return result


def image_file(client: Any, ref: str, path: str) -> str:
    """A file of an image, copied out of a created (never started) container.

    Not `cat` in `containers.run`: docker-py reads the logs after the container exited, and a
    container that exits at once sometimes has none yet (an empty string, seen in CI)."""
    import io
    import tarfile

    container = client.containers.create(ref, ["true"], network_disabled=True)
    try:
        chunks, _ = container.get_archive(path)
        with tarfile.open(fileobj=io.BytesIO(b"".join(chunks))) as archive:
            member = archive.extractfile(archive.getmembers()[0])
            assert member is not None, f"{path} in {ref} is not a file"
            return member.read().decode("utf-8", "replace")
    finally:
        container.remove(force=True)


def run_output(ref: str, command: list[str]) -> str:
    """stdout and stderr of a throwaway container (no network), removed afterwards.

    The docker CLI attaches before the container starts, so a command that exits at once
    loses no output (docker-py's `containers.run` reads logs afterwards and can)."""
    done = subprocess.run(
        ["docker", "run", "--rm", "--network", "none", ref, *command],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{command} in {ref} exited {done.returncode}: {done.stderr[-2000:]}"
    return done.stdout + done.stderr


def cell_id(name: str) -> str:
    """A cell id unique to this test session (labels of its containers carry it)."""
    return f"{name}-{SESSION}"


def session_containers(client: Any) -> list[Any]:
    return [c for c in leftover_containers(client) if str(c.labels.get(CELL_LABEL, "")).endswith(f"-{SESSION}")]


@pytest.fixture(autouse=True)
def no_leftover_containers(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every docker test must leave no container of the harness behind."""
    if "docker_client" not in request.fixturenames:
        yield
        return
    client = request.getfixturevalue("docker_client")
    yield
    left = session_containers(client)
    described = [f"{c.name} ({c.status})" for c in left]
    for container in left:
        container.remove(force=True)
    assert not left, f"containers left behind: {described}"


def harness_cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 900, cwd: Path = REPO
) -> subprocess.CompletedProcess[str]:
    """`python -m harness ...` as a user runs it (a real process, real exit code)."""
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def wait_for(predicate: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def cell_events(cell_dir: Path) -> list[dict[str, Any]]:
    """The cell plugin's events.jsonl, written as things happen (so it survives a kill)."""
    path = cell_dir / "events.jsonl"
    if not path.exists():
        return []
    events = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue  # the last line of a killed run may be cut short
        if isinstance(event, dict):
            events.append(event)
    return events


def started_tests(cell_dir: Path) -> set[str]:
    return {str(e["nodeid"]) for e in cell_events(cell_dir) if e.get("event") == "start" and e.get("nodeid")}


def passed_tests(cell_dir: Path) -> set[str]:
    """Tests whose call passed: the plugin folds passing phases into each test's `pass` line (or
    its finish line, when more was reported)."""
    return {
        str(e["nodeid"])
        for e in cell_events(cell_dir)
        if e.get("event") == "pass"
        or (e.get("event") == "finish" and "call" in (e.get("passed") or {}))
        or (e.get("event") == "report" and e.get("when") == "call" and e.get("outcome") == "passed")
    }


def only_cell_dir(results: Path) -> Path:
    cells = [p for p in results.iterdir() if p.is_dir()]
    assert len(cells) == 1, f"expected one cell dir in {results}, found {cells}"
    return cells[0]


# -- the CUDA images, built without a GPU from PyPI's wheels -------------------------------------------
# PyPI's plain torch for Linux x86_64 is a CUDA build, and which one depends on the release: 2.15.0 is
# the CUDA 13.2 build (+cu132), 2.13.0 and 2.14.x the CUDA 13.0 build (+cu130). So a real CUDA
# wheelhouse (about 3 GB, 37 wheels) comes from PyPI alone; `harness wheelhouse` ignores this host's
# pip settings that would cap torch or add a local wheel (PIP_CONFIG_FILE, PIP_FIND_LINKS, ...).
PYPI = "https://pypi.org/simple"
CUDA_TORCH = {"cu132": "2.15.0", "cu130": "2.13.0"}
CUDNN_LIBRARY = "nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9"
CUBLAS_LIBRARY = "nvidia/cu13/lib/libcublas.so.13"
CUT_SIZE = 1_000_000


def cuda_wheelhouse(variant: str) -> Path:
    """`harness wheelhouse --backend <variant>` of PyPI's torch for it, cached in ~/.cache/torch-compat."""
    torch = CUDA_TORCH[variant]
    folder = CACHE / f"wheelhouse-{variant}-{torch}"
    with built_once(folder.name):
        _fill_cuda_wheelhouse(folder, variant, torch)
    return folder


def _fill_cuda_wheelhouse(folder: Path, variant: str, torch: str) -> None:
    if not list(folder.glob(f"torch-{torch}*.whl")):
        done = harness_cli(
            "wheelhouse", "--backend", variant, "--index-url", PYPI, "--torch", torch, "-o", str(folder),
            timeout=1800,
        )  # fmt: skip
        if done.returncode != 0:
            pytest.fail(f"harness wheelhouse --backend {variant} failed: {done.stderr[-2000:]}")


@pytest.fixture(scope="session")
def cu132_wheelhouse() -> Path:
    return cuda_wheelhouse("cu132")


@pytest.fixture(scope="session")
def cu130_wheelhouse() -> Path:
    return cuda_wheelhouse("cu130")


def _rewrite_wheel(source: Path, dest: Path, *, drop: str | None = None, cut: str | None = None) -> None:
    """A copy of a wheel with one member left out or cut short, its RECORD left as it was (what a
    broken upload or mirror looks like). Stored, not deflated: seconds, not minutes."""
    import zipfile

    with zipfile.ZipFile(source) as old, zipfile.ZipFile(dest, "w", zipfile.ZIP_STORED) as new:
        for info in old.infolist():
            if info.filename == drop:
                continue
            data = old.read(info)
            if info.filename == cut:
                data = data[:CUT_SIZE]
            new.writestr(info.filename, data)


@pytest.fixture(scope="session")
def broken_cu132_wheelhouse(cu132_wheelhouse: Path) -> Path:
    """The cu132 wheelhouse with libcudnn_engines_precompiled.so.9 taken out of the cuDNN wheel and
    libcublas.so.13 cut short in the cuBLAS wheel (RECORDs unchanged); the other wheels are links."""
    folder = cu132_wheelhouse.with_name(f"{cu132_wheelhouse.name}-broken")
    with built_once(folder.name):
        _break_wheelhouse(cu132_wheelhouse, folder)
    return folder


def _break_wheelhouse(cu132_wheelhouse: Path, folder: Path) -> None:
    marker = folder / ".complete"
    if marker.exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    for wheel in cu132_wheelhouse.glob("*.whl"):
        target = folder / wheel.name
        target.unlink(missing_ok=True)
        if wheel.name.startswith("nvidia_cudnn_cu13-"):
            _rewrite_wheel(wheel, target, drop=CUDNN_LIBRARY)
        elif wheel.name.startswith("nvidia_cublas-"):
            _rewrite_wheel(wheel, target, cut=CUBLAS_LIBRARY)
        else:
            os.link(wheel, target)
    marker.touch()


def remove_image(client: Any, ref: str) -> None:
    """Remove a test image and the parents only it used (the disk of a CI box is small)."""
    import docker.errors

    try:
        client.images.remove(ref)
    except docker.errors.ImageNotFound:
        pass
    except docker.errors.APIError as err:  # another session uses it right now: leave it to them
        print(f"could not remove {ref}: {err}")
