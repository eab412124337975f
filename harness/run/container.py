"""Container mode: a cell's commands (probe, health check, pytest) each run in a fresh,
short-lived container of the backend's image, with the device flags of the registry
(harness/run/docker_options.py). Each container lives in an OCIContainer (harness/images/oci_container.py),
which removes it however the run ends (done, failed, killed, timed out, Ctrl-C, SIGTERM) unless
HARNESS_KEEP_CONTAINER=1 asks to keep it for debugging. Every container carries the label
`torch-compat.cell=<cell id>`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

from harness.errors import UsageError
from harness.images import recipes
from harness.images.oci_container import (
    CELL_LABEL,
    PURPOSE_LABEL,
    ContainerRefused,
    OCIContainer,
    keep_requested,
    leftover_containers,
    remove_stale,
)
from harness.registry import Backend
from harness.run import docker_options
from harness.run.docker_options import CONTAINER_CELL, CONTAINER_PLUGIN, CONTAINER_PYTHON, CONTAINER_SUITES
from harness.run.execute import CellOutcome, LauncherFactory, RunOptions, refuse_cell, resolve_cell_id, run_cell
from harness.run.health import CPU_ONLY, explain_refusal, preflight
from harness.run.launcher import Completed, Launcher

if TYPE_CHECKING:
    import docker

__all__ = ["CELL_LABEL", "ContainerLauncher", "ContainerSettings", "leftover_containers", "run_containerized"]

DOCKER_FAILED: Final = 125  # docker run's own code for "the engine could not run the container"


@dataclass(frozen=True, kw_only=True)
class ContainerSettings:
    image: str | None = None  # use this image instead of building one
    build: recipes.BuildSpec | None = None  # how to build it (None: from the registry and HARNESS_* variables)
    rebuild: bool = False
    build_log: bool = False
    memory: str | None = None  # hard memory limit, e.g. 16g (swap included)
    cdi: bool = False  # pass devices by CDI names instead of --gpus / device nodes
    keep: bool = False
    local_engine: bool = True  # the engine runs on this host (its device groups can be read here)


class ContainerProcess:
    """pytest running in a container; its output streams into the cell's output.log."""

    def __init__(self, box: OCIContainer, log: IO[bytes]) -> None:
        self.box = box
        self.state: dict[str, Any] = {}
        box.stream_output(log)

    def wait(self, timeout: float | None) -> int | None:
        state = self.box.wait(timeout)
        if state is None:
            return None
        self.state = state
        self.box.remove()  # gone as soon as it is done
        return int(state.get("ExitCode", DOCKER_FAILED)) if state else DOCKER_FAILED

    def stop(self) -> None:
        try:
            self.state = self.box.stop()
        finally:
            self.box.remove()

    def exit_details(self) -> dict[str, Any]:
        """How the container ended, for the manifest's `exit`."""
        if not self.state:
            return {"container": self.box.name}
        return {
            "container": self.box.name,
            "container_exit_code": self.state.get("ExitCode"),
            "oom_killed": bool(self.state.get("OOMKilled")),
            "container_error": self.state.get("Error") or None,
        }


class _RefusedStart:
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
    """Runs each command in a new container of `image_ref`; see harness/run/docker_options.py for its flags."""

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
        # Owns every container this launcher makes: close() removes what is still there.
        self._containers = contextlib.ExitStack()

    def describe(self) -> dict[str, Any] | None:
        return self.image_info

    def _box(self, argv: list[str], env: dict[str, str], purpose: str) -> OCIContainer:
        options, _notes = docker_options.create_options(
            self.backend,
            image=self.image_ref,
            argv=argv,
            env=env,
            suites_dir=self.suites_dir,
            cell_dir=self.cell_dir,
            user=self.user,
            cdi=self.settings.cdi,
            memory=self.settings.memory,
            local=self.settings.local_engine,
        )
        labels = {CELL_LABEL: self.cell_id, PURPOSE_LABEL: purpose}
        box = OCIContainer(
            self.client, f"torch-compat-{self.cell_id[:60]}-{purpose}", options, labels=labels, keep=self.settings.keep
        )
        self._containers.callback(box.remove)
        return box

    def execute(self, argv: list[str], env: dict[str, str], timeout: float) -> Completed:
        try:
            with self._box(argv, env, "check") as box:
                state = box.wait(timeout)
                if state is None:
                    box.stop()
                    return Completed(124, "", f"{argv[0]}: no answer within {timeout:.0f} s")
                stdout, stderr = box.output(stderr=False), box.output(stdout=False)
                code = int(state.get("ExitCode", DOCKER_FAILED))
                if code in (126, 127) and not stderr.strip():
                    stderr = f"{argv[0]}: not found or not executable in the image (exit {code})"
                return Completed(code, stdout, stderr)
        except ContainerRefused as err:
            return Completed(DOCKER_FAILED, "", str(err), refused=True)

    def start(self, argv: list[str], env: dict[str, str], log: IO[bytes]) -> Any:
        box = self._box(argv, env, "pytest")
        try:
            box.start()
        except ContainerRefused as err:
            return _RefusedStart(box.name, explain_refusal(self.backend, str(err)), log)
        return ContainerProcess(box, log)

    def close(self) -> None:
        # Whatever is still here lost its chance to stop gently (a second Ctrl-C, an error): stop and remove.
        self._containers.close()


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
    return recipes.DEFAULT_UID


def resolve_image(
    client: docker.DockerClient, backend: Backend, settings: ContainerSettings, progress: recipes.Progress
) -> tuple[str, Any]:
    """The image ref and object: the one asked for (pulled if absent), or built/reused from the registry."""
    import docker.errors

    from harness.images import image_build

    if settings.image:
        image = image_build.find_image(client, settings.image)
        if image is None:
            progress(f"pulling {settings.image}")
            try:
                image = client.images.pull(settings.image)
            except docker.errors.DockerException as err:
                raise image_build.ImageBuildError(
                    f"image {settings.image} is not here and cannot be pulled: {err}"
                ) from None
        return settings.image, image
    spec = settings.build or recipes.build_spec(backend)
    result = image_build.ensure_image(
        spec, client, rebuild=settings.rebuild, progress=progress, verbose=settings.build_log
    )
    return result.ref, client.images.get(result.ref)


def run_containerized(
    opts: RunOptions,
    image: str | None = None,
    settings: ContainerSettings | None = None,
    *,
    progress: recipes.Progress | None = None,
) -> CellOutcome:
    """Run one cell of `opts.backend` in its container. Problems of the host (no device, no image)
    end as an infrastructure-error cell (NO DATA); only a missing Docker engine is raised directly."""
    from harness.images import docker_engine, image_build

    backend = opts.backend
    if backend is None:
        raise UsageError("container mode needs a backend", hint="pass --backend, or --native for the local torch")
    settings = settings or ContainerSettings(image=image, keep=keep_requested())
    if image and not settings.image:
        settings = dataclasses.replace(settings, image=image)
    # The cell id, decided once: it names the torch build the image installs, when a build says it.
    planned_torch = None if settings.image else (settings.build or recipes.build_spec(backend)).exact_version
    cpu_only = bool(opts.cpu_only) and backend.needs_device  # a device build's image, run on the CPU
    variant = CPU_ONLY if cpu_only else None
    opts = dataclasses.replace(opts, cell_id=resolve_cell_id(opts, backend, planned_torch, variant))
    say = progress or _stderr
    client = docker_engine.connect()
    try:
        for name in remove_stale(client, cell_id=opts.cell_id):
            say(f"removed container {name}, left by a run of this cell that was killed")
        local = docker_engine.is_local(client)
        settings = dataclasses.replace(settings, local_engine=local)
        missing = preflight(backend, container=True, cdi=settings.cdi) if local and not cpu_only else None
        if missing:
            return refuse_cell(opts, backend, "container", missing)
        try:
            ref, image_obj = resolve_image(client, backend, settings, say)
        except image_build.ImageBuildError as err:
            return refuse_cell(opts, backend, "container", f"no {backend.id} image: {err}; {'nothing ran'}")
        info = recipes.describe_image(image_obj, ref)
        user = docker_options.run_user(_image_uid(image_obj), rootless=docker_engine.is_rootless(client))
        devices = without_devices(backend) if cpu_only else backend
        for note in docker_options.device_options(devices, cdi=settings.cdi, local=local)[1]:
            say(f"note: {note}")
        return run_cell(opts, _factory(client, ref, info, opts, user, settings, devices))
    finally:
        client.close()


def _factory(
    client: docker.DockerClient,
    ref: str,
    info: dict[str, Any],
    opts: RunOptions,
    user: str,
    settings: ContainerSettings,
    devices: Backend | None = None,
) -> LauncherFactory:
    def make(backend: Backend, cell_dir: Path, cell_id: str) -> Launcher:
        prepare_cell_dir(cell_dir, user)
        return ContainerLauncher(
            client,
            devices or backend,
            image_ref=ref,
            image_info=info,
            suites_dir=opts.suites_dir,
            cell_dir=cell_dir,
            cell_id=cell_id,
            user=user,
            settings=settings,
        )

    return make


def without_devices(backend: Backend) -> Backend:
    """The backend's container flags with no device at all: a device build's image run on the CPU (--cpu-only)."""
    return dataclasses.replace(backend, gpus="", cdi_devices=(), devices=(), group_add=(), security_opt=())


def _stderr(line: str) -> None:
    import sys

    print(line, file=sys.stderr, flush=True)
