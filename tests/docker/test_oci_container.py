"""harness/images/oci_container.py on the real engine: the context manager always removes its container
(an error inside, a refused start), HARNESS_KEEP_CONTAINER keeps it, and containers left by a
killed run are cleaned by label before a cell starts, while other runs' live ones are left alone."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.images import oci_container
from harness.images.oci_container import CELL_LABEL, ContainerRefused, OCIContainer, leftover_containers, remove_stale
from harness.registry import get_backend
from harness.run.container import ContainerSettings, run_containerized
from harness.run.execute import RunOptions
from tests.docker.conftest import SESSION, cell_id


def _gone(client: Any, name: str) -> bool:
    return not client.containers.list(all=True, filters={"name": name})


def test_the_container_is_removed_whatever_happens_inside(docker_client: Any, base_image: str) -> None:
    options = {"image": base_image, "command": ["sleep", "300"], "network_mode": "none"}
    with (
        pytest.raises(RuntimeError),
        OCIContainer(
            docker_client, "torch-compat-test-raise", options, labels={CELL_LABEL: cell_id("oci-raise")}, keep=False
        ) as box,
    ):
        assert box.state()["Running"]
        raise RuntimeError("the block failed")
    assert _gone(docker_client, box.name)


def test_a_refused_start_leaves_nothing(docker_client: Any, base_image: str) -> None:
    options = {"image": base_image, "command": ["true"], "devices": ["/dev/no-such-device:/dev/x:rwm"]}
    box = OCIContainer(docker_client, "torch-compat-test-refused", options, labels={CELL_LABEL: cell_id("oci-ref")})
    with pytest.raises(ContainerRefused) as info, box:
        pass
    assert "\n" not in str(info.value) and "no-such-device" in str(info.value)
    assert _gone(docker_client, box.name)


def test_keep_keeps_the_stopped_container(docker_client: Any, base_image: str) -> None:
    options = {"image": base_image, "command": ["sleep", "300"], "network_mode": "none"}
    with OCIContainer(
        docker_client,
        "torch-compat-test-keep",
        options,
        labels={CELL_LABEL: cell_id("oci-keep")},
        keep=True,
        stop_grace=1,
    ) as box:
        pass
    try:
        kept = docker_client.containers.get(box.name)
        assert kept.status == "exited" and kept.labels[oci_container.KEEP_LABEL] == "1"
    finally:
        docker_client.containers.get(box.name).remove(force=True)


def _dead_owner() -> str:
    done = subprocess.Popen(["true"])
    done.wait()
    return oci_container.owner_token().rsplit("/", 2)[0] + f"/{done.pid}/1"


def test_stale_containers_of_killed_runs_are_removed_and_live_ones_kept(docker_client: Any, base_image: str) -> None:
    """A container whose harness died (a cancelled CI job) goes; one whose harness still runs stays."""
    made = []
    for name, owner in (("dead", _dead_owner()), ("live", oci_container.owner_token())):
        container = docker_client.containers.run(
            base_image, ["sleep", "300"], detach=True, network_mode="none", name=f"torch-compat-test-{name}-{SESSION}",
            labels={oci_container.OWNER_LABEL: "1", oci_container.OWNER_PROCESS_LABEL: owner,
                    CELL_LABEL: cell_id(f"stale-{name}")},
        )  # fmt: skip
        made.append(container)
    try:
        removed = remove_stale(docker_client)
        assert f"torch-compat-test-dead-{SESSION}" in removed
        assert f"torch-compat-test-live-{SESSION}" not in removed
        assert _gone(docker_client, f"torch-compat-test-dead-{SESSION}")
        assert not _gone(docker_client, f"torch-compat-test-live-{SESSION}")
    finally:
        for container in made:
            container.remove(force=True) if not _gone(docker_client, container.name) else None


def test_a_cell_starts_by_removing_what_a_killed_run_of_it_left(
    tmp_path: Path, sample_suite: Any, cpu_image: Any, docker_client: Any
) -> None:
    cid = cell_id("cpu-stale")
    leftover = docker_client.containers.run(
        cpu_image.ref, ["sleep", "300"], detach=True, network_mode="none", name=f"torch-compat-{cid}-pytest-old",
        labels={oci_container.OWNER_LABEL: "1", oci_container.OWNER_PROCESS_LABEL: _dead_owner(), CELL_LABEL: cid},
    )  # fmt: skip
    said: list[str] = []
    suites = sample_suite({"alpha/test_a.py": "def test_a():\n    assert True\n"})
    opts = RunOptions(
        suites_dir=suites,
        results_dir=tmp_path / "results",
        backend=get_backend("cpu"),
        cell_id=cid,
        workers="1",
        progress=False,
    )
    try:
        outcome = run_containerized(opts, settings=ContainerSettings(image=cpu_image.ref), progress=said.append)
    finally:
        if not _gone(docker_client, leftover.name):
            leftover.remove(force=True)
    assert outcome.status == "completed", outcome.manifest.error
    assert f"removed container torch-compat-{cid}-pytest-old, left by a run of this cell that was killed" in said
    assert not leftover_containers(docker_client, cid)
