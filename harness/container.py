"""Container mode: a cell's commands (probe, health check, pytest) each run in a fresh,
short-lived container of the backend's image, with the device flags of the registry.

Containment: a non-root user, no network, no added privileges or capabilities, only the
device nodes the backend needs, the suites and the cell plugin mounted read-only and the
cell dir read-write; never the Docker socket. Every container carries the label
`torch-compat.cell=<cell id>` and is removed however the run ends (done, failed, killed,
timed out, Ctrl-C, SIGTERM) unless HARNESS_KEEP_CONTAINER=1 asks to keep it for debugging.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import grp
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

from harness import images
from harness.cell import default_cell_id
from harness.cellplugin import PLUGIN_DIR
from harness.errors import UsageError
from harness.execute import CellOutcome, LauncherFactory, RunOptions, run_cell
from harness.launcher import Completed, Launcher
from harness.registry import Backend, get_backend

if TYPE_CHECKING:
    import docker

CONTAINER_PYTHON: Final = "/opt/venv/bin/python"
CONTAINER_SUITES: Final = "/suites"
CONTAINER_CELL: Final = "/cell"
CONTAINER_PLUGIN: Final = "/opt/torch-compat/cellplugin"
CELL_LABEL: Final = "torch-compat.cell"
OWNER_LABEL: Final = "torch-compat"
KEEP_ENV: Final = "HARNESS_KEEP_CONTAINER"
STOP_GRACE: Final = 10  # seconds between SIGTERM and SIGKILL
DOCKER_FAILED: Final = 125  # docker run's own code for "the engine could not run the container"
POLL: Final = 0.2


@dataclass(frozen=True, kw_only=True)
class ContainerSettings:
    image: str | None = None  # use this image instead of building one
    build: images.BuildSpec | None = None  # how to build it (None: from the registry and HARNESS_* variables)
    rebuild: bool = False
    build_log: bool = False
    memory: str | None = None  # hard memory limit, e.g. 16g (swap included)
    cdi: bool = False  # pass devices by CDI names instead of --gpus / device nodes
    keep: bool = False


def add_container_arguments(parser: argparse.ArgumentParser) -> None:
    """`harness run` options for container mode (--image is defined by run itself)."""
    images.add_build_arguments(parser)
    group = parser.add_argument_group("container run")
    group.add_argument("--memory", help="memory limit of the test container, e.g. 16g (default: none)")
    group.add_argument(
        "--cdi", action="store_true", help="pass the GPUs by CDI device names (registry cdi_devices) instead"
    )


def settings_from_args(args: argparse.Namespace) -> ContainerSettings:
    build = images.spec_from_args(args, args.backend) if args.backend and not args.image else None
    return ContainerSettings(
        image=args.image,
        build=build,
        rebuild=args.rebuild,
        build_log=args.build_log,
        memory=args.memory,
        cdi=args.cdi,
        keep=_keep_requested(),
    )


def _keep_requested() -> bool:
    return os.environ.get(KEEP_ENV, "").lower() in ("1", "true", "yes")


# -- what a container of a backend gets -------------------------------------------------------
def host_gid(name: str) -> int | None:
    try:
        return grp.getgrnam(name).gr_gid
    except KeyError:
        return None


def device_options(
    backend: Backend, *, cdi: bool = False, gid_of: Callable[[str], int | None] = host_gid
) -> tuple[dict[str, Any], list[str]]:
    """docker create options for the backend's devices (from the registry), and notes on what was left out."""
    from docker.types import DeviceRequest

    notes: list[str] = []
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
    gids: list[int] = []
    for name in backend.group_add:
        gid = gid_of(name)
        if gid is None:
            notes.append(f"group {name!r} does not exist on this host; not added")
        else:
            gids.append(gid)
    if gids:
        # numeric ids: the names are the host's, the image may not know them
        options["group_add"] = sorted(set(gids))
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


def missing_host_devices(
    backend: Backend, *, cdi: bool = False, exists: Callable[[str], bool] = os.path.exists
) -> list[str]:
    """Why a local engine cannot give this backend its devices (empty: nothing missing)."""
    if cdi and backend.cdi_devices:
        return []
    problems = [f"{node} is missing on this host" for node in backend.devices if not exists(node)]
    if backend.gpus and not exists("/dev/nvidiactl"):
        problems.append("/dev/nvidiactl is missing on this host (no NVIDIA driver loaded)")
    return problems


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
    name: str,
    labels: dict[str, str],
    suites_dir: Path,
    cell_dir: Path,
    user: str,
    cdi: bool = False,
    memory: str | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """Every option of one test container, and notes on devices left out."""
    from docker.types import Mount, Ulimit

    devices, notes = device_options(backend, cdi=cdi)
    options: dict[str, Any] = {
        "image": image,
        "command": argv,
        "environment": {**backend_env(backend), **env},
        "name": name,
        "labels": labels,
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
        "detach": True,
        **devices,
    }
    if memory:
        options["mem_limit"] = memory
        options["memswap_limit"] = memory  # no swap: over the limit means an OOM kill, not a crawl
    return options, notes


# -- the launcher ----------------------------------------------------------------------------
class ContainerProcess:
    """pytest running in a container; its output streams into the cell's output.log."""

    def __init__(self, launcher: ContainerLauncher, container: Any, log: IO[bytes]) -> None:
        self.launcher = launcher
        self.container = container
        self.state: dict[str, Any] = {}
        self._pump = threading.Thread(target=self._copy_output, args=(log,), daemon=True)
        self._pump.start()

    def _copy_output(self, log: IO[bytes]) -> None:
        with contextlib.suppress(Exception):  # the container went away: nothing more to copy
            for chunk in self.container.logs(stream=True, follow=True, stdout=True, stderr=True):
                log.write(chunk)
                log.flush()

    def wait(self, timeout: float | None) -> int | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            state = self.launcher.state_of(self.container)
            if state.get("Status") in ("exited", "dead") or not state:
                self.state = state
                self._pump.join(timeout=10)
                self.launcher.remove(self.container)
                return int(state.get("ExitCode", DOCKER_FAILED)) if state else DOCKER_FAILED
            if deadline is not None and time.monotonic() >= deadline:
                return None
            time.sleep(POLL)

    def stop(self) -> None:
        self.state = self.launcher.stop(self.container)
        self._pump.join(timeout=10)
        self.launcher.remove(self.container)

    def exit_details(self) -> dict[str, Any]:
        """How the container ended, for the manifest's `exit`."""
        if not self.state:
            return {"container": self.container.name}
        return {
            "container": self.container.name,
            "container_exit_code": self.state.get("ExitCode"),
            "oom_killed": bool(self.state.get("OOMKilled")),
            "container_error": self.state.get("Error") or None,
        }


class _FailedStart:
    """The engine refused to start pytest's container: exits at once with docker's 125."""

    def __init__(self, name: str, message: str, log: IO[bytes]) -> None:
        self.name = name
        self.message = message
        log.write(f"{message}\n".encode())
        log.flush()

    def wait(self, timeout: float | None) -> int | None:
        return DOCKER_FAILED

    def stop(self) -> None:
        return None

    def exit_details(self) -> dict[str, Any]:
        return {"container": self.name, "container_error": self.message}


class ContainerLauncher:
    """Runs each command in a new container of `image_ref`; see the module docstring for its flags."""

    mode = "container"
    python = CONTAINER_PYTHON
    suites_path = CONTAINER_SUITES
    cell_path = CONTAINER_CELL
    plugin_path = CONTAINER_PLUGIN

    def __init__(
        self,
        client: docker.DockerClient,
        backend: Backend,
        *,
        image_ref: str,
        image_info: dict[str, Any],
        suites_dir: Path,
        cell_dir: Path,
        cell_id: str,
        user: str,
        settings: ContainerSettings,
    ) -> None:
        self.client = client
        self.backend = backend
        self.image_ref = image_ref
        self.image_info = image_info
        self.suites_dir = suites_dir
        self.cell_dir = cell_dir
        self.cell_id = cell_id
        self.user = user
        self.settings = settings
        self._live: dict[str, Any] = {}  # containers made and not yet removed, by id

    def describe(self) -> dict[str, Any] | None:
        return self.image_info

    def _create(self, argv: list[str], env: dict[str, str], purpose: str) -> Any:
        name = f"torch-compat-{self.cell_id[:60]}-{purpose}-{secrets.token_hex(3)}"
        labels = {OWNER_LABEL: "1", CELL_LABEL: self.cell_id, "torch-compat.purpose": purpose}
        options, _notes = create_options(
            self.backend,
            image=self.image_ref,
            argv=argv,
            env=env,
            name=name,
            labels=labels,
            suites_dir=self.suites_dir,
            cell_dir=self.cell_dir,
            user=self.user,
            cdi=self.settings.cdi,
            memory=self.settings.memory,
        )
        container = self.client.containers.create(**options)
        self._live[container.id] = container
        return container

    def _start(self, argv: list[str], env: dict[str, str], purpose: str) -> tuple[Any | None, str]:
        """Create and start a container; (None, why) when the engine refuses (no GPU runtime, missing device)."""
        import docker.errors

        container = None
        try:
            container = self._create(argv, env, purpose)
            container.start()
            return container, ""
        except docker.errors.APIError as err:
            if container is not None:
                self.remove(container)
            reason = (err.explanation or str(err)).strip().splitlines()[0]
            return None, f"docker could not start the {self.backend.id} container: {reason}"

    def execute(self, argv: list[str], env: dict[str, str], timeout: float) -> Completed:
        container, why = self._start(argv, env, "check")
        if container is None:
            return Completed(DOCKER_FAILED, "", why)
        try:
            deadline = time.monotonic() + timeout
            state = self.state_of(container)
            while state.get("Status") not in ("exited", "dead") and time.monotonic() < deadline:
                time.sleep(POLL)
                state = self.state_of(container)
            if state.get("Status") not in ("exited", "dead"):
                self.stop(container)
                return Completed(124, "", f"{argv[0]}: no answer within {timeout:.0f} s")
            stdout = container.logs(stdout=True, stderr=False).decode("utf-8", "replace")
            stderr = container.logs(stdout=False, stderr=True).decode("utf-8", "replace")
            code = int(state.get("ExitCode", DOCKER_FAILED))
            if code in (126, 127) and not stderr.strip():
                stderr = f"{argv[0]}: not found or not executable in the image (exit {code})"
            return Completed(code, stdout, stderr)
        finally:
            self.remove(container)

    def start(self, argv: list[str], env: dict[str, str], log: IO[bytes]) -> Any:
        container, why = self._start(argv, env, "pytest")
        if container is None:
            return _FailedStart(f"torch-compat-{self.cell_id}-pytest", why, log)
        return ContainerProcess(self, container, log)

    # -- lifecycle helpers (bounded waits, then kill, then force-remove) --------------------------
    def state_of(self, container: Any) -> dict[str, Any]:
        import docker.errors

        try:
            container.reload()
        except docker.errors.NotFound:
            return {}
        return dict(container.attrs.get("State") or {})

    def stop(self, container: Any) -> dict[str, Any]:
        """SIGTERM, SIGKILL after STOP_GRACE seconds; the final state."""
        import docker.errors

        with contextlib.suppress(docker.errors.NotFound):
            try:
                container.stop(timeout=STOP_GRACE)
            except docker.errors.APIError:
                with contextlib.suppress(docker.errors.APIError):
                    container.kill()
        return self.state_of(container)

    def remove(self, container: Any) -> None:
        import docker.errors

        if self.settings.keep:
            return
        with contextlib.suppress(docker.errors.NotFound):
            try:
                container.remove(force=True)
            except docker.errors.APIError:
                time.sleep(1)  # "removal already in progress" and friends: one more try
                with contextlib.suppress(docker.errors.APIError):
                    container.remove(force=True)
        self._live.pop(container.id, None)

    def close(self) -> None:
        # Whatever is still here lost its chance to stop gently (a second Ctrl-C, an error): kill and remove.
        for container in list(self._live.values()):
            if self.settings.keep and self.state_of(container).get("Running"):
                self.stop(container)
            self.remove(container)


class UnavailableLauncher:
    """A container cell that cannot run here (no device, image build failed): every command fails
    with the reason, so run_cell writes an infrastructure-error (NO DATA) cell through its usual path."""

    mode = "container"
    python = CONTAINER_PYTHON
    suites_path = CONTAINER_SUITES
    cell_path = CONTAINER_CELL
    plugin_path = CONTAINER_PLUGIN

    def __init__(self, reason: str, image_info: dict[str, Any] | None = None) -> None:
        self.reason = reason
        self.image_info = image_info

    def describe(self) -> dict[str, Any] | None:
        return self.image_info

    def execute(self, argv: list[str], env: dict[str, str], timeout: float) -> Completed:
        return Completed(DOCKER_FAILED, "", self.reason)

    def start(self, argv: list[str], env: dict[str, str], log: IO[bytes]) -> Any:
        return _FailedStart("torch-compat-unavailable", self.reason, log)

    def close(self) -> None:
        return None


# -- the entry point of `harness run --backend X` -----------------------------------------------
def prepare_cell_dir(cell_dir: Path, user: str) -> None:
    """Under root the container user is not the owner: hand it the cell dir (and nothing else)."""
    if os.getuid() == 0:
        uid, _, gid = user.partition(":")
        os.chown(cell_dir, int(uid), int(gid or uid))


def _image_uid(image: Any) -> int:
    labels = (image.attrs.get("Config") or {}).get("Labels") or {}
    user = str((image.attrs.get("Config") or {}).get("User") or "")
    for text in (labels.get("torch-compat.uid", ""), user.partition(":")[0]):
        if text.isdigit() and int(text) != 0:
            return int(text)
    return images.DEFAULT_UID


def resolve_image(
    client: docker.DockerClient, backend: Backend, settings: ContainerSettings, progress: images.Progress
) -> tuple[str, Any]:
    """The image ref and object: the one asked for (pulled if absent), or built/reused from the registry."""
    import docker.errors

    if settings.image:
        image = images.find_image(client, settings.image)
        if image is None:
            progress(f"pulling {settings.image}")
            try:
                image = client.images.pull(settings.image)
            except docker.errors.DockerException as err:
                raise images.ImageBuildError(
                    f"image {settings.image} is not here and cannot be pulled: {err}"
                ) from None
        return settings.image, image
    spec = settings.build or images.build_spec(backend.id)
    result = images.ensure_image(spec, client, rebuild=settings.rebuild, progress=progress, verbose=settings.build_log)
    return result.ref, client.images.get(result.ref)


def run_containerized(
    opts: RunOptions,
    image: str | None = None,
    settings: ContainerSettings | None = None,
    *,
    progress: images.Progress | None = None,
) -> CellOutcome:
    """Run one cell of `opts.backend` in its container. Problems of the host (no device, no image)
    end as an infrastructure-error cell (NO DATA); only a missing Docker engine is raised directly."""
    from harness import docker_engine

    if not opts.backend:
        raise UsageError("container mode needs a backend", hint="pass --backend, or --native for the local torch")
    backend = get_backend(opts.backend)
    settings = settings or ContainerSettings(image=image, keep=_keep_requested())
    if image and not settings.image:
        settings = dataclasses.replace(settings, image=image)
    say = progress or _stderr
    client = docker_engine.connect()
    try:
        missing = missing_host_devices(backend, cdi=settings.cdi) if docker_engine.is_local(client) else []
        if missing:
            reason = f"{backend.display_name} cannot run here: {'; '.join(missing)}"
            return run_cell(opts, _unavailable(reason), backend_id=backend.id)
        try:
            ref, image_obj = resolve_image(client, backend, settings, say)
        except images.ImageBuildError as err:
            return run_cell(opts, _unavailable(f"no {backend.id} image: {err}"), backend_id=backend.id)
        info = images.describe_image(image_obj, ref)
        user = run_user(_image_uid(image_obj), rootless=docker_engine.is_rootless(client))
        for note in device_options(backend, cdi=settings.cdi)[1]:
            say(f"note: {note}")
        return run_cell(opts, _factory(client, backend, ref, info, opts, user, settings), backend_id=backend.id)
    finally:
        client.close()


def _factory(
    client: docker.DockerClient,
    backend: Backend,
    ref: str,
    info: dict[str, Any],
    opts: RunOptions,
    user: str,
    settings: ContainerSettings,
) -> LauncherFactory:
    def make(_backend: Backend, cell_dir: Path) -> Launcher:
        prepare_cell_dir(cell_dir, user)
        cell_id = opts.cell_id or default_cell_id(backend.id)
        return ContainerLauncher(
            client,
            backend,
            image_ref=ref,
            image_info=info,
            suites_dir=opts.suites_dir,
            cell_dir=cell_dir,
            cell_id=cell_id,
            user=user,
            settings=settings,
        )

    return make


def _unavailable(reason: str) -> LauncherFactory:
    def make(_backend: Backend, _cell_dir: Path) -> Launcher:
        return UnavailableLauncher(reason)

    return make


def _stderr(line: str) -> None:
    import sys

    print(line, file=sys.stderr, flush=True)


def leftover_containers(client: docker.DockerClient, cell_id: str | None = None) -> list[Any]:
    """Containers of the harness still present (all, or one cell's); tests assert this is empty."""
    label = f"{CELL_LABEL}={cell_id}" if cell_id else OWNER_LABEL
    return client.containers.list(all=True, filters={"label": label})
