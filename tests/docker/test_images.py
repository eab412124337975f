"""Real image builds: the cpu image from a local base and a wheelhouse, reused by hash, verified,
and free of secrets; a build whose torch is not the backend's is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.images import image_build, recipes
from tests.docker.conftest import FAKE_PROXY_PASSWORD, TEST_CA, harness_cli, run_output


def _run_in(client: Any, ref: str, command: list[str]) -> str:
    """Output of a throwaway container (no network), removed afterwards."""
    return run_output(ref, command)


def test_cpu_image_is_built_and_labelled(docker_client: Any, cpu_image: image_build.ImageResult) -> None:
    image = docker_client.images.get(cpu_image.ref)
    facts = recipes.describe_image(image, cpu_image.ref)
    assert cpu_image.ref.startswith("torch-compat/cpu:")
    assert facts["backend"] == "cpu"
    labels = facts["labels"]
    assert labels["torch-compat.torch.version"] == "2.13.0+cpu"
    assert labels["org.opencontainers.image.version"] == "2.13.0+cpu"
    # built from a wheelhouse: the label says so, with the wheelhouse's hash; no index is named
    assert labels["torch-compat.torch.source"].startswith("wheelhouse sha256:")
    assert "torch-2.13.0+cpu" in labels["torch-compat.torch.source"]
    assert labels["torch-compat.torch.index"] == ""
    assert "org.opencontainers.image.revision" in labels and "org.opencontainers.image.source" in labels
    assert facts["digest"] == image.id  # built here, never pushed: the image id is the digest
    user = image.attrs["Config"]["User"]
    assert user and user.split(":")[0] not in ("", "0", "root"), f"image runs as {user!r}"


def test_cpu_image_contents(docker_client: Any, cpu_image: image_build.ImageResult) -> None:
    out = _run_in(
        docker_client,
        cpu_image.ref,
        [
            "bash",
            "-c",
            "id -u; g++ --version | head -1; python -c 'import torch, xdist; print(torch.__version__)' 2>/dev/null; "
            "grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt; ls /tmp/wheelhouse 2>&1 | head -1",
        ],
    )
    lines = out.strip().splitlines()
    assert lines[0] != "0", "the image's default user is root"
    assert lines[1].startswith("g++"), f"no C++ compiler for Inductor: {lines[1]}"
    assert lines[2] == "2.13.0+cpu"
    # the extra CA bundle went into the system store
    test_ca_body = TEST_CA.read_text().split("-----BEGIN CERTIFICATE-----")[1].split()[0]
    bundle = _run_in(docker_client, cpu_image.ref, ["cat", "/etc/ssl/certs/ca-certificates.crt"])
    assert test_ca_body in bundle
    assert "No such file" in lines[4], "the wheelhouse was left in the final image"
    wheels = _run_in(
        docker_client, cpu_image.ref, ["bash", "-c", "find / -xdev -name 'torch-*.whl' 2>/dev/null; ls -A /mnt"]
    )
    assert wheels.strip() == "", f"wheels (or a mount point) left in the image: {wheels}"


def test_no_secret_in_image(docker_client: Any, cpu_image: image_build.ImageResult) -> None:
    """The build ran with a proxy URL holding a password: neither history nor config may keep it."""
    image = docker_client.images.get(cpu_image.ref)
    history = "\n".join(str(step.get("CreatedBy", "")) for step in image.history())
    config = str(image.attrs)
    assert FAKE_PROXY_PASSWORD not in history
    assert FAKE_PROXY_PASSWORD not in config
    assert "proxy.invalid" not in config


def test_second_build_reuses_the_image(docker_client: Any, cpu_spec: recipes.BuildSpec, cpu_image: Any) -> None:
    lines: list[str] = []
    again = image_build.ensure_image(cpu_spec, docker_client, progress=lines.append)
    assert again.reused and again.ref == cpu_image.ref
    assert any(line.startswith("reusing image") for line in lines), lines
    assert not any("Step " in line for line in lines), "a reused image must not run a build"


def test_cli_build_twice_does_not_rebuild(build_env: dict[str, str], cpu_image: image_build.ImageResult) -> None:
    first = harness_cli("build", "--backend", "cpu", env=build_env)
    second = harness_cli("build", "--backend", "cpu", env=build_env)
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert first.stdout.strip() == second.stdout.strip() == cpu_image.ref
    assert "reusing image" in second.stderr and "Step " not in second.stderr


def test_build_of_the_wrong_torch_is_refused(docker_client: Any, build_env: dict[str, str], cpu_image: Any) -> None:
    """A cu126 image from the CPU wheelhouse: the verification step fails the build, no image is tagged.
    (The CPU index is passed too, so every layer up to the check comes from the cache.)"""
    env = {**build_env, "HARNESS_TORCH_INDEX_URL": "https://download.pytorch.org/whl/cpu"}
    spec = recipes.build_spec("cu126", env=env)
    with pytest.raises(image_build.ImageVerificationError) as info:
        image_build.ensure_image(spec, docker_client, progress=lambda _line: None)
    message = str(info.value)
    assert "cu126" in message and "+cpu" in message and "+cu126" in message
    plan = recipes.plan_build(spec)
    assert image_build.find_image(docker_client, plan.tag) is None
    assert image_build.find_image(docker_client, plan.venv_tag) is None, "the refused build left its venv image"

    done = harness_cli("build", "--backend", "cu126", env=env)
    assert done.returncode == 3
    error_lines = [line for line in done.stderr.splitlines() if line.startswith("harness: error:")]
    assert len(error_lines) == 1 and "the cu126 image was refused: torch 2.13.0+cpu" in error_lines[0], done.stderr
    assert "Traceback" not in done.stderr


def test_build_without_network_or_base_fails_clearly(docker_client: Any, wheelhouse: Path) -> None:
    spec = recipes.build_spec(
        "cpu", base_image="torch-compat/no-such-base:never", wheelhouse=wheelhouse, network="none", env={}
    )
    with pytest.raises(image_build.ImageBuildError) as info:
        image_build.ensure_image(spec, docker_client, progress=lambda _line: None)
    message = str(info.value)
    assert "base image torch-compat/no-such-base:never is not here and cannot be pulled" in message
    assert "tools/make-base-image.sh" in message and "\n" not in message
