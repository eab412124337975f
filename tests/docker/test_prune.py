"""`harness prune` on the real engine, with tiny images this test makes (`docker import` of a small tar
carrying the harness's labels) and a label of this session, so no other image is ever a candidate."""

from __future__ import annotations

import contextlib
import io
import os
import tarfile
import time
from collections.abc import Iterator
from typing import Any

import docker.errors
import pytest

from harness.images.prune import HARNESS_LABEL, harness_images, human_size
from tests.docker.conftest import SESSION, harness_cli

TEST_LABEL = "torch-compat.prune-test"
REPO = f"torch-compat/prune-test-{SESSION}"
KB = 1000


def _tar(size: int) -> bytes:
    payload = os.urandom(size)  # random: every image has a layer of its own
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("payload")
        info.size = len(payload)
        tar.addfile(info, io.BytesIO(payload))
    return buf.getvalue()


@pytest.fixture
def made_images(docker_client: Any) -> Iterator[dict[str, str]]:
    """Five 200 kB images, oldest first (name -> id), and a cleanup that removes only what this test made."""
    made: dict[str, str] = {}
    token = f"{SESSION}-{time.monotonic_ns()}"
    for name in ("a", "b", "c", "d", "e"):
        docker_client.api.import_image_from_data(
            _tar(200 * KB),
            repository=REPO,
            tag=name,
            changes=[f"LABEL {HARNESS_LABEL}=cpu", f"LABEL {TEST_LABEL}={token}"],
        )
        made[name] = docker_client.images.get(f"{REPO}:{name}").id
        time.sleep(0.05)  # distinct creation times, in order
    made["label"] = f"{TEST_LABEL}={token}"
    yield made
    for container in docker_client.containers.list(all=True, filters={"label": f"{TEST_LABEL}={token}"}):
        container.remove(force=True)
    for image_id in (v for k, v in made.items() if k != "label"):
        with contextlib.suppress(docker.errors.ImageNotFound):  # removed by the test, as intended
            docker_client.images.remove(image_id, force=True)


def _present(client: Any, made: dict[str, str]) -> list[str]:
    have = {i.id for i in client.images.list(filters={"label": made["label"]})}
    return [name for name, image_id in made.items() if name != "label" and image_id in have]


def test_prune_keeps_the_newest_within_the_budget_and_any_image_a_container_uses(docker_client, made_images):
    label = made_images["label"]
    sizes = {i.tags[0].rsplit(":", 1)[1]: i.size for i in harness_images(docker_client, [label])}
    assert sorted(sizes) == ["a", "b", "c", "d", "e"] and all(s >= 200 * KB for s in sizes.values())
    two = sizes["e"] + sizes["d"] + sizes["c"] // 2  # room for the two newest, not a third

    dry = harness_cli("prune", "--budget", str(two), "--label", label, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    assert lines[0].startswith("5 image(s) of the harness") and lines[0].endswith("(dry run: nothing is removed)")
    rows = [line.replace("would remove", "would-remove").split() for line in lines[1:6]]
    assert [(row[0], row[1]) for row in rows] == [
        ("keep", f"{REPO}:e"),
        ("keep", f"{REPO}:d"),
        ("would-remove", f"{REPO}:c"),
        ("would-remove", f"{REPO}:b"),
        ("would-remove", f"{REPO}:a"),
    ], dry.stdout
    assert lines[-1].startswith("would remove 3 image(s)")
    assert _present(docker_client, made_images) == ["a", "b", "c", "d", "e"], "a dry run removed something"

    # a stopped container from an old run still holds image b: it stays, and its size counts first
    docker_client.containers.create(f"{REPO}:b", command=["/payload"], labels={TEST_LABEL: label.split("=", 1)[1]})
    three = two + sizes["b"]
    done = harness_cli("prune", "--budget", str(three), "--label", label)
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()[1:6]]
    assert [(row[0], row[1]) for row in rows] == [
        ("keep", f"{REPO}:e"),
        ("keep", f"{REPO}:d"),
        ("removed", f"{REPO}:c"),
        ("keep", f"{REPO}:b"),
        ("removed", f"{REPO}:a"),
    ], done.stdout
    assert "in use by container" in done.stdout.splitlines()[4]
    summary = done.stdout.splitlines()[-2:]
    assert summary[0] == f"2 image(s) removed, {human_size(sizes['a'] + sizes['c'])} by their sizes", summary
    assert summary[1].startswith("engine layer storage ") and summary[1].endswith(" freed)"), summary
    assert _present(docker_client, made_images) == ["b", "d", "e"]

    again = harness_cli("prune", "--budget", str(three), "--label", label)
    assert again.returncode == 0 and again.stdout.splitlines()[-1] == "nothing to remove", again.stdout


def test_prune_leaves_an_image_also_tagged_elsewhere_and_removes_all_else_at_budget_zero(docker_client, made_images):
    label = made_images["label"]
    adopted = f"i13-adopted-{SESSION}:pinned"
    docker_client.images.get(f"{REPO}:c").tag(adopted)
    try:
        done = harness_cli("prune", "--budget", "0", "--label", label)
        assert done.returncode == 0, done.stderr
        assert f"also tagged {adopted}" in done.stdout, done.stdout
        assert _present(docker_client, made_images) == ["c"]
        assert docker_client.images.get(adopted).id == made_images["c"]
    finally:
        docker_client.images.remove(adopted)


def test_prune_without_an_engine_says_what_to_fix(tmp_path):
    done = harness_cli("prune", "--budget", "1GB", env={"DOCKER_HOST": f"unix://{tmp_path}/no.sock"})
    assert done.returncode == 3
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("harness: error: no Docker engine answers")
