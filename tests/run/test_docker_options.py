"""harness/run/docker_options.py: the docker options each backend gets, derived from the registry,
and the containment every container keeps (no engine needed). The real runs are in tests/docker/."""

from __future__ import annotations

import stat
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.registry import load_registry
from harness.run import docker_options

GIDS = {"video": 44, "render": 992}


def _options(backend_id: str, **kwargs: object) -> dict:
    options, _notes = docker_options.create_options(
        load_registry()[backend_id],
        image="torch-compat/x:1",
        argv=["python", "-V"],
        env={"COMPAT_PIN_VAR": "HIP_VISIBLE_DEVICES"},
        suites_dir=Path("/repo/suites"),
        cell_dir=Path("/results/cell"),
        user="1000:1000",
        **kwargs,
    )
    return options


def _devices(backend_id: str, cdi: bool = False) -> dict:
    options, _notes = docker_options.device_options(
        load_registry()[backend_id], cdi=cdi, gid_of=GIDS.get, node_gids=lambda _nodes: set()
    )
    return options


def test_cpu_gets_no_device() -> None:
    options = _devices("cpu")
    assert "devices" not in options and "device_requests" not in options and "group_add" not in options
    assert options["shm_size"] == load_registry()["cpu"].shm_size


@pytest.mark.parametrize("backend_id", ["cu126", "cu130"])
def test_cuda_gets_all_gpus(backend_id: str) -> None:
    options = _devices(backend_id)
    (request,) = options["device_requests"]
    assert request["Count"] == -1 and request["Capabilities"] == [["gpu"]]  # --gpus all
    assert "devices" not in options
    env = _options(backend_id)["environment"]
    assert env["NVIDIA_DRIVER_CAPABILITIES"] == "compute,utility"


def test_cuda_by_cdi() -> None:
    (request,) = _devices("cu126", cdi=True)["device_requests"]
    assert request["Driver"] == "cdi" and request["DeviceIDs"] == ["nvidia.com/gpu=all"]


def test_rocm_gets_kfd_dri_video_render_and_unconfined_seccomp() -> None:
    options = _devices("rocm")  # the old id of rocm7.2
    assert options["devices"] == ["/dev/kfd:/dev/kfd:rwm", "/dev/dri:/dev/dri:rwm"]
    assert options["group_add"] == [44, 992]  # numeric: resolved on the host
    assert "seccomp=unconfined" in options["security_opt"]
    assert options["shm_size"] == "8g"
    assert "device_requests" not in options
    cdi = _devices("rocm", cdi=True)
    assert "devices" not in cdi and cdi["device_requests"][0]["DeviceIDs"] == ["amd.com/gpu=all"]


def test_xpu_gets_dri_and_render_group() -> None:
    options = _devices("xpu")
    assert options["devices"] == ["/dev/dri:/dev/dri:rwm"]
    assert options["group_add"] == [44, 992]
    assert "seccomp=unconfined" not in options["security_opt"]


def test_groups_missing_on_the_host_are_left_out_with_a_note() -> None:
    options, notes = docker_options.device_options(
        load_registry()["xpu"], gid_of={"video": 44}.get, node_gids=lambda _nodes: set()
    )
    assert options["group_add"] == [44]
    assert notes == ["group 'render' does not exist on this host; not added"]


@pytest.mark.parametrize("backend_id", list(load_registry()))
def test_every_container_is_contained(backend_id: str) -> None:
    options = _options(backend_id, memory="2g")
    assert options["network_mode"] == "none"
    assert options["privileged"] is False
    assert options["cap_drop"] == ["ALL"]
    assert "no-new-privileges:true" in options["security_opt"]
    assert options["user"] == "1000:1000"
    mounts = {m["Target"]: m for m in options["mounts"]}
    assert set(mounts) == {
        docker_options.CONTAINER_SUITES,
        docker_options.CONTAINER_CELL,
        docker_options.CONTAINER_PLUGIN,
    }
    assert mounts[docker_options.CONTAINER_SUITES]["ReadOnly"] is True
    assert mounts[docker_options.CONTAINER_PLUGIN]["ReadOnly"] is True
    assert mounts[docker_options.CONTAINER_CELL]["ReadOnly"] is False
    assert not any("docker.sock" in m["Source"] for m in options["mounts"])
    assert options["mem_limit"] == options["memswap_limit"] == "2g"
    assert options["environment"]["COMPAT_PIN_VAR"] == "HIP_VISIBLE_DEVICES"  # the harness env passes through
    registry_nodes = {f"{d}:{d}:rwm" for d in load_registry()[backend_id].devices}
    assert set(options.get("devices", [])) == registry_nodes  # only the nodes the backend needs


def test_groups_that_own_the_device_nodes_are_added_whatever_their_names() -> None:
    """A host whose render group has another name (or none): the node's own group still gets in."""
    options, _notes = docker_options.device_options(
        load_registry()["rocm"], gid_of={}.get, node_gids=lambda nodes: {109} if "/dev/kfd" in nodes else set()
    )
    assert options["group_add"] == [109]


# A ROCm host as udev leaves it: /dev/kfd and the render nodes belong to the render group, here gid
# 109 (it is 992 or 110 elsewhere), the card nodes to video (44); /dev/dri/by-path is a directory.
FAKE_NODES = {
    "/dev/kfd": (stat.S_IFCHR | 0o660, 109),
    "/dev/dri/card0": (stat.S_IFCHR | 0o660, 44),
    "/dev/dri/renderD128": (stat.S_IFCHR | 0o660, 109),
    "/dev/dri/renderD129": (stat.S_IFCHR | 0o660, 109),
    "/dev/dri/by-path": (stat.S_IFDIR | 0o755, 0),
}


def _fake_list_dir(path: str) -> list[str]:
    if path in FAKE_NODES and not stat.S_ISDIR(FAKE_NODES[path][0]):
        raise NotADirectoryError(path)
    names = [node.rsplit("/", 1)[1] for node in FAKE_NODES if node.rsplit("/", 1)[0] == path]
    if not names:
        raise FileNotFoundError(path)
    return names


def _fake_stat(path: str) -> SimpleNamespace:
    if path not in FAKE_NODES:
        raise FileNotFoundError(path)
    mode, gid = FAKE_NODES[path]
    return SimpleNamespace(st_mode=mode, st_gid=gid)


def _fake_node_gids(nodes: tuple[str, ...]) -> set[int]:
    return docker_options.device_node_gids(nodes, list_dir=_fake_list_dir, stat_of=_fake_stat)  # type: ignore[arg-type]


def test_the_owners_of_the_fake_rocm_nodes_are_read_from_the_nodes() -> None:
    assert _fake_node_gids(("/dev/kfd", "/dev/dri")) == {44, 109}
    assert _fake_node_gids(("/dev/kfd",)) == {109}
    assert _fake_node_gids(("/dev/absent", "/dev/dri/absent")) == set()


@pytest.mark.parametrize("backend_id", ["rocm7.2", "rocm7.14"])
def test_rocm_on_a_host_whose_render_group_is_109_and_the_image_has_none(backend_id: str) -> None:
    """The gid that owns /dev/kfd and /dev/dri/renderD* on this host goes in by number; the host's
    group *names* do not decide (here `render` resolves to a stale 992 that owns nothing), and the
    image's /etc/group is never consulted (it has no render group)."""
    backend = load_registry()[backend_id]
    options, notes = docker_options.device_options(
        backend, gid_of={"video": 44, "render": 992}.get, node_gids=_fake_node_gids
    )
    assert options["group_add"] == [44, 109] and notes == []
    assert options["devices"] == ["/dev/kfd:/dev/kfd:rwm", "/dev/dri:/dev/dri:rwm"]
    assert "seccomp=unconfined" in options["security_opt"] and options["shm_size"] == "8g"
    assert all(isinstance(gid, int) for gid in options["group_add"])
    # a CDI spec passes the same host nodes: their groups are still needed
    cdi, _ = docker_options.device_options(backend, cdi=True, gid_of={}.get, node_gids=_fake_node_gids)
    assert cdi["group_add"] == [44, 109] and "devices" not in cdi


def test_without_readable_nodes_the_registry_groups_are_resolved_on_this_host() -> None:
    """A remote engine's host (or no driver here): the host's video/render ids are the best guess."""
    options, notes = docker_options.device_options(
        load_registry()["rocm7.14"], gid_of={"video": 44, "render": 109}.get, node_gids=lambda _nodes: set()
    )
    assert options["group_add"] == [44, 109] and notes == []


def test_cuda_and_cpu_add_no_group() -> None:
    for backend_id in ("cpu", "cu132"):
        options, notes = docker_options.device_options(
            load_registry()[backend_id], gid_of=GIDS.get, node_gids=_fake_node_gids
        )
        assert "group_add" not in options and notes == []


def test_device_node_gids_reads_the_real_nodes(tmp_path: Path) -> None:
    """Character devices only (a regular file is not a device node); root-owned ones add nothing."""
    (tmp_path / "renderD128").write_text("not a device")
    assert docker_options.device_node_gids((str(tmp_path),)) == set()
    assert docker_options.device_node_gids(("/dev/null",)) == set()  # a char device owned by root:root
    assert docker_options.device_node_gids((str(tmp_path / "absent"),)) == set()


def test_never_root_on_the_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(docker_options.os, "getuid", lambda: 0)
    monkeypatch.setattr(docker_options.os, "getgid", lambda: 0)
    assert docker_options.run_user(1000) == "1000:1000"
    monkeypatch.setattr(docker_options.os, "getuid", lambda: 1234)
    monkeypatch.setattr(docker_options.os, "getgid", lambda: 1235)
    assert docker_options.run_user(1000) == "1234:1235"
    # rootless Docker: container root is the invoking (unprivileged) user itself
    assert docker_options.run_user(1000, rootless=True) == "0:0"


@pytest.mark.slow  # imports the CLI in a fresh interpreter
def test_the_cli_imports_neither_docker_nor_torch() -> None:
    """Container support costs nothing until a container is wanted (and torch never enters the harness)."""
    import subprocess
    import sys

    code = (
        "import sys; from harness.cli import build_parser; build_parser(); "
        "print('docker' in sys.modules, 'torch' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.split() == ["False", "False"]


def test_a_remote_engine_gets_no_group_read_on_this_host() -> None:
    """This host's node owners and group names say nothing of another host's: no group, and a note."""
    from harness.registry import get_backend
    from harness.run import docker_options

    options, notes = docker_options.device_options(
        get_backend("rocm7.14"), local=False, gid_of=lambda name: 109, node_gids=lambda nodes: {109}
    )
    assert "group_add" not in options and options["devices"][0].startswith("/dev/kfd")
    assert notes == ["the Docker engine is on another host: its device groups are unknown here; none added"]
