"""What a container of a backend gets, as pure functions of the registry entry: device flags,
groups, environment, mounts and the containment every test container keeps. No engine is
touched here (harness/run/container.py creates the containers).

Containment: a non-root user, no network, no added privileges or capabilities, only the device
nodes the backend needs, the suites and the cell plugin mounted read-only and the cell dir
read-write; never the Docker socket.
"""

from __future__ import annotations

import grp
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from harness.registry import Backend
from harness.run.cellplugin import PLUGIN_DIR

CONTAINER_PYTHON: Final = "/opt/venv/bin/python"
CONTAINER_SUITES: Final = "/suites"
CONTAINER_CELL: Final = "/cell"
CONTAINER_PLUGIN: Final = "/opt/torch-compat/cellplugin"


def host_gid(name: str) -> int | None:
    try:
        return grp.getgrnam(name).gr_gid
    except KeyError:
        return None


def device_node_gids(
    nodes: tuple[str, ...],
    *,
    list_dir: Callable[[str], list[str]] = os.listdir,
    stat_of: Callable[[str], os.stat_result] = os.stat,
) -> set[int]:
    """The groups owning the device nodes (and, for a directory such as /dev/dri, the nodes in it:
    renderD*, card*), read from the nodes themselves. Whatever the host calls these groups (render is
    gid 109 on one host, 992 on the next; some hosts have no group of that name), these are the ids
    that open the devices. Root's group (0) is left out: it is never a group to join."""
    gids: set[int] = set()
    for node in nodes:
        try:
            entries = [os.path.join(node, name) for name in sorted(list_dir(node))]
        except NotADirectoryError:
            entries = [node]
        except OSError:
            continue  # not on this host (a remote engine's, or no driver: preflight says so)
        for entry in entries:
            try:
                info = stat_of(entry)
            except OSError:
                continue
            if stat.S_ISCHR(info.st_mode) and info.st_gid != 0:
                gids.add(info.st_gid)
    return gids


def device_groups(
    backend: Backend,
    *,
    gid_of: Callable[[str], int | None] = host_gid,
    node_gids: Callable[[tuple[str, ...]], set[int]] = device_node_gids,
) -> tuple[list[int], list[str]]:
    """The supplementary groups (numeric ids) the container's user needs to open the backend's device
    nodes, and notes on what was left out.

    Resolved on the host when the container is made, never at image build time: the image has no
    render group, and the gid differs from host to host. The owners of the nodes themselves decide
    (the same nodes reach the container with `--device` or a CDI spec, keeping their host gid); the
    registry's group names (video, render) are only the fallback when no node can be read here."""
    if not backend.group_add and not backend.devices:
        return [], []
    owners = node_gids(backend.devices) if backend.devices else set()
    if owners:
        return sorted(owners), []
    gids: set[int] = set()
    notes: list[str] = []
    for name in backend.group_add:
        gid = gid_of(name)
        if gid is None:
            notes.append(f"group {name!r} does not exist on this host; not added")
        else:
            gids.add(gid)
    return sorted(gids), notes


def device_options(
    backend: Backend,
    *,
    cdi: bool = False,
    local: bool = True,
    gid_of: Callable[[str], int | None] = host_gid,
    node_gids: Callable[[tuple[str, ...]], set[int]] = device_node_gids,
) -> tuple[dict[str, Any], list[str]]:
    """docker create options for the backend's devices (from the registry), and notes on what was left out.
    `local`: the engine runs on this host; on another host this host's groups and nodes say nothing
    of the engine's, so no group is added (and a note says how to add it)."""
    from docker.types import DeviceRequest

    options: dict[str, Any] = {
        "security_opt": ["no-new-privileges:true", *backend.security_opt],
        "shm_size": backend.shm_size,
    }
    if cdi and backend.cdi_devices:
        # CDI specs name every node and library a GPU needs; no --gpus, no raw device nodes.
        options["device_requests"] = [DeviceRequest(driver="cdi", device_ids=list(backend.cdi_devices))]
    else:
        if backend.gpus:
            options["device_requests"] = [gpu_request(backend.gpus)]
        if backend.devices:
            options["devices"] = [f"{node}:{node}:rwm" for node in backend.devices]
    # With CDI too: a CDI spec passes the same host nodes, owned by the same host groups.
    if not local:
        wanted = backend.group_add or backend.devices
        note = "the Docker engine is on another host: its device groups are unknown here; none added"
        return options, [note] if wanted else []
    gids, notes = device_groups(backend, gid_of=gid_of, node_gids=node_gids)
    if gids:
        # numeric ids: the names are the host's, the image knows none of them
        options["group_add"] = gids
    return options, notes


def gpu_request(gpus: str) -> Any:
    """`--gpus all` / `--gpus 0,1` as the API's device request."""
    from docker.types import DeviceRequest

    if gpus == "all":
        return DeviceRequest(count=-1, capabilities=[["gpu"]])
    return DeviceRequest(device_ids=[g.strip() for g in gpus.split(",") if g.strip()], capabilities=[["gpu"]])


def backend_env(backend: Backend) -> dict[str, str]:
    env = {"HOME": "/tmp", "TMPDIR": "/tmp", "USER": "compat"}
    if backend.build == "cuda":
        env["NVIDIA_DRIVER_CAPABILITIES"] = "compute,utility"  # CUDA and nvidia-smi, nothing more
    return env


def run_user(image_uid: int, *, rootless: bool = False) -> str:
    """Never root on the host: the invoking user's uid:gid (files in the cell stay theirs), the image's
    user when we are root, and container root under rootless Docker, where that *is* the invoking
    user (any other container uid maps to a subordinate id that cannot write the cell dir)."""
    if rootless:
        return "0:0"
    uid, gid = os.getuid(), os.getgid()
    if uid == 0:
        return f"{image_uid}:{image_uid}"
    return f"{uid}:{gid}"


def create_options(
    backend: Backend,
    *,
    image: str,
    argv: list[str],
    env: dict[str, str],
    suites_dir: Path,
    cell_dir: Path,
    user: str,
    cdi: bool = False,
    memory: str | None = None,
    local: bool = True,
) -> tuple[dict[str, Any], list[str]]:
    """Every option of one test container (its name and labels aside), and notes on devices left out."""
    from docker.types import Mount, Ulimit

    devices, notes = device_options(backend, cdi=cdi, local=local)
    options: dict[str, Any] = {
        "image": image,
        "command": argv,
        "environment": {**backend_env(backend), **env},
        "user": user,
        "working_dir": "/tmp",
        "network_mode": "none",  # the suites never need the network; nothing can leak out either
        "privileged": False,
        "cap_drop": ["ALL"],
        "init": True,  # a real PID 1 forwards SIGTERM to pytest and reaps its workers
        "ulimits": [Ulimit(name="core", soft=0, hard=0)],
        "mounts": [
            Mount(CONTAINER_SUITES, str(suites_dir.resolve()), type="bind", read_only=True),
            Mount(CONTAINER_PLUGIN, str(PLUGIN_DIR), type="bind", read_only=True),
            Mount(CONTAINER_CELL, str(cell_dir.resolve()), type="bind", read_only=False),
        ],
        **devices,
    }
    if memory:
        options["mem_limit"] = memory
        options["memswap_limit"] = memory  # no swap: over the limit means an OOM kill, not a crawl
    return options, notes
