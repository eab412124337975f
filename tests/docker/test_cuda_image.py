"""The CUDA 13.0 image, built and verified on a machine without a GPU: from a PyPI wheelhouse made
by `harness wheelhouse`, offline (build network none), every bundled library of torch and its
NVIDIA wheels checked at build time. A wheelhouse with a cuDNN library taken out and cuBLAS cut
short is refused naming both, never "image verified", never a bus error. Images and build stages
are removed afterwards (a CI box has little disk)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from harness.run import image_build, images
from tests.docker.conftest import (
    CUBLAS_LIBRARY,
    CUDNN_LIBRARY,
    CUT_SIZE,
    harness_cli,
    image_file,
    remove_image,
)

pytestmark = pytest.mark.slow


def _env(base_image: str, wheelhouse: Path) -> dict[str, str]:
    return {"HARNESS_BASE_IMAGE": base_image, "HARNESS_WHEELHOUSE": str(wheelhouse), "HARNESS_BUILD_NETWORK": "none"}


def test_cu130_image_from_pypi_wheels_is_built_and_every_library_verified(
    docker_client: Any, base_image: str, cu130_wheelhouse: Path
) -> None:
    env = _env(base_image, cu130_wheelhouse)
    plan = images.plan_build(images.build_spec("cu130", env=env))
    started = time.monotonic()
    done = harness_cli("build", "--backend", "cu130", "--json", env=env, timeout=3000)
    took = time.monotonic() - started
    try:
        assert done.returncode == 0, done.stderr[-3000:]
        verified = [line.strip() for line in done.stderr.splitlines() if "image verified" in line]
        assert verified, done.stderr[-3000:]
        assert verified[0].startswith("image verified: torch 2.13.0+cu130 is the cu130 build; ")
        assert "bundled libraries load" in verified[0] and "need what the GPU host or cluster provides" in verified[0]
        image = docker_client.images.get(plan.tag)
        labels = image.labels
        assert labels["torch-compat.torch.version"] == "2.13.0+cu130"
        assert labels["torch-compat.torch.source"].startswith("wheelhouse sha256:")
        assert "torch-2.13.0-cp311" in labels["torch-compat.torch.source"]
        assert labels["torch-compat.torch.index"] == "", "the label named an index although a wheelhouse was used"
        assert image_build.find_image(docker_client, plan.venv_tag) is None, "the -venv build image was left"
        facts = image_file(docker_client, plan.tag, "/opt/torch-compat/torch.json")
        assert '"cuda": "13.0"' in facts and "libraries" in facts
        print(f"cu130 image built in {took:.0f} s, {image.attrs['Size'] / 1e9:.2f} GB: {verified[0]}")
    finally:
        remove_image(docker_client, plan.tag)
    assert image_build.find_image(docker_client, plan.tag) is None


def test_broken_cuda_wheels_are_refused_naming_the_wheel_and_the_library(
    docker_client: Any, base_image: str, broken_cu130_wheelhouse: Path
) -> None:
    env = _env(base_image, broken_cu130_wheelhouse)
    plan = images.plan_build(images.build_spec("cu130", env=env))
    done = harness_cli("build", "--backend", "cu130", env=env, timeout=3000)
    assert done.returncode == 3, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("harness: error:")]
    assert len(errors) == 1, done.stderr[-3000:]
    error = errors[0]
    print(error)
    assert error.startswith("harness: error: the cu130 image was refused: ")
    assert f"nvidia-cudnn-cu13 9.20.0.48: {CUDNN_LIBRARY} is missing (the wheel's RECORD lists it)" in error
    assert f"nvidia-cublas 13.1.1.3: {CUBLAS_LIBRARY} is {CUT_SIZE} bytes, the wheel's RECORD says " in error
    assert "image verified" not in done.stderr
    assert "Bus error" not in done.stderr and "Traceback" not in done.stderr
    assert "\x1b" not in error, "terminal colour codes of the build log reached the message"
    assert image_build.find_image(docker_client, plan.tag) is None
    assert image_build.find_image(docker_client, plan.venv_tag) is None, "the refused build left its venv image"
