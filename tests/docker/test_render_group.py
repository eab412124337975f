"""The render group, on a real engine: a host whose ROCm device nodes belong to gid 109 (a group this
host does not even name) and an image that has no such group. The harness reads the owners of the
nodes, passes them by number (`--group-add 109`), and the container's non-root user opens the nodes
with every capability dropped; without the group it cannot.

No AMD GPU is needed: the nodes are clones of /dev/zero (char 1:5) made with mknod in a temp dir
(through a root container, so the test runs whatever the host user is) and passed with `--device`,
exactly as /dev/kfd and /dev/dri are. Docker gives a passed node its host gid inside the container.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from harness.registry import load_registry
from harness.run import docker_options
from harness.run.container import CELL_LABEL
from tests.docker.conftest import cell_id

RENDER_GID = 109  # the render group of this fake host (992 or 110 on others)
VIDEO_GID = 44
ZERO = "c 1 5"  # /dev/zero's major and minor: reading it is harmless


def _run(client: Any, image: str, command: str, **options: Any) -> tuple[int, str]:
    """A short container (no network, labelled as this session's), its exit code and output; removed."""
    labels = {"torch-compat": "1", CELL_LABEL: cell_id("render-group")}
    container = client.containers.create(image, ["sh", "-c", command], network_disabled=True, labels=labels, **options)
    try:
        container.start()
        code = int(container.wait(timeout=120)["StatusCode"])
        return code, container.logs().decode("utf-8", "replace")
    finally:
        container.remove(force=True)


@pytest.fixture
def fake_rocm_nodes(docker_client: Any, base_image: str, tmp_path: Path) -> Path:
    """tmp/kfd and tmp/dri/{renderD128,card0}: char nodes owned by gids 109 (render) and 44 (video), 0660."""
    (tmp_path / "dri").mkdir()
    tmp_path.chmod(0o755)
    make = (
        f"mknod /n/kfd {ZERO} && mknod /n/dri/renderD128 {ZERO} && mknod /n/dri/card0 {ZERO} && "
        f"chgrp {RENDER_GID} /n/kfd /n/dri/renderD128 && chgrp {VIDEO_GID} /n/dri/card0 && "
        "chmod 0660 /n/kfd /n/dri/renderD128 /n/dri/card0"
    )
    code, out = _run(docker_client, base_image, make, user="0:0", volumes={str(tmp_path): {"bind": "/n", "mode": "rw"}})
    assert code == 0, out
    return tmp_path


def test_the_container_user_opens_nodes_of_the_hosts_render_gid_the_image_does_not_know(
    docker_client: Any, base_image: str, fake_rocm_nodes: Path
) -> None:
    kfd, dri = fake_rocm_nodes / "kfd", fake_rocm_nodes / "dri"
    backend = dataclasses.replace(load_registry()["rocm7.14"], devices=(str(kfd), str(dri)))
    options, notes = docker_options.device_options(backend, gid_of={"render": 992}.get)  # a stale name lookup
    assert options["group_add"] == [VIDEO_GID, RENDER_GID] and notes == []
    contained = {
        "user": "1000:1000",
        "cap_drop": ["ALL"],
        "devices": options["devices"],
        "security_opt": options["security_opt"],
    }
    probe = (
        f"getent group {RENDER_GID} || echo 'image: no group {RENDER_GID}'; echo \"groups: $(id -G)\"; "
        f'echo "kfd gid: $(stat -c %g {kfd})"; '
        f"head -c 4 {kfd} | wc -c; head -c 4 {dri}/renderD128 | wc -c"
    )
    code, out = _run(docker_client, base_image, probe, group_add=options["group_add"], **contained)
    print(out)
    assert code == 0, out
    lines = out.split("\n")
    assert f"image: no group {RENDER_GID}" in lines
    assert str(RENDER_GID) in lines[1].split() and str(VIDEO_GID) in lines[1].split()
    assert f"kfd gid: {RENDER_GID}" in lines, "docker did not keep the node's host gid"
    assert lines[3:5] == ["4", "4"], out  # both nodes opened and read by the non-root user
    # Without the groups the same user cannot open them: the group is what gives access.
    code, out = _run(docker_client, base_image, f"head -c 4 {kfd}", **contained)
    assert code != 0 and "Permission denied" in out, out
