"""One container's whole lifetime, as a context manager that always removes it (like
cibuildwheel's OCIContainer), and the clean-up of containers a killed run left behind.

    with OCIContainer(client, "torch-compat-<cell>-pytest", options, labels=labels) as box:
        box.wait(timeout)

Entering creates the container under a unique name and starts it; if the engine refuses
either, what was made is removed and `ContainerRefused` says why in one line. Leaving always
runs, however the block ends (an error, Ctrl-C, SIGTERM turned into an exception): a bounded
stop (SIGTERM, SIGKILL after the grace period), then a forced removal, in `finally`.
HARNESS_KEEP_CONTAINER=1 keeps the stopped container for debugging
(`docker ps -a --filter label=torch-compat`).

Every labelled container names its owner (`torch-compat.owner=<host>/<pid>/<process start>`),
so `remove_stale` can tell a container whose harness died (a cancelled CI job, a SIGKILL) from
one another run on the same engine still uses.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, Final

from harness.errors import InfrastructureError

if TYPE_CHECKING:
    import docker

OWNER_LABEL: Final = "torch-compat"  # every container of the harness: torch-compat=1
OWNER_PROCESS_LABEL: Final = "torch-compat.owner"
CELL_LABEL: Final = "torch-compat.cell"
PURPOSE_LABEL: Final = "torch-compat.purpose"
KEEP_LABEL: Final = "torch-compat.keep"
KEEP_ENV: Final = "HARNESS_KEEP_CONTAINER"
STOP_GRACE: Final = 10  # seconds between SIGTERM and SIGKILL
POLL: Final = 0.2
# Build containers carry no labels (a commit would bake them into the image): their name says whose they are.
INSTALL_PREFIX: Final = "torch-compat-install"


class ContainerRefused(InfrastructureError):
    """The engine would not create or start the container (no GPU runtime, a missing device, a bad CDI name)."""


def keep_requested() -> bool:
    return os.environ.get(KEEP_ENV, "").lower() in ("1", "true", "yes")


def _process_start(pid: int) -> str:
    """The start time of a process in clock ticks since boot ('' where /proc cannot say)."""
    try:
        stat = open(f"/proc/{pid}/stat", encoding="ascii", errors="replace").read()  # noqa: SIM115
    except OSError:
        return ""
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else ""


def owner_token(pid: int | None = None) -> str:
    """<host>/<pid>/<start time>: names this process uniquely on this host (pids are reused)."""
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}/{pid}/{_process_start(pid)}"


def owner_alive(token: str) -> bool | None:
    """Whether the process a token names still runs; None when it ran on another host (we cannot say)."""
    host, _, rest = token.partition("/")
    pid_text, _, start = rest.partition("/")
    if host != socket.gethostname() or not pid_text.isdigit():
        return None
    pid = int(pid_text)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it exists, under another user
    return not start or _process_start(pid) == start


def unique_name(prefix: str) -> str:
    return f"{prefix[:200]}-{secrets.token_hex(3)}"


class OCIContainer:
    """A container made on entry and removed on exit, whatever happens in between."""

    def __init__(
        self,
        client: docker.DockerClient,
        name_prefix: str,
        options: dict[str, Any],
        *,
        labels: dict[str, str] | None = None,
        keep: bool | None = None,
        stop_grace: int = STOP_GRACE,
        before_start: Callable[[Any], None] | None = None,
    ) -> None:
        self.client = client
        self.name = unique_name(name_prefix)
        self.keep = keep_requested() if keep is None else keep
        self.stop_grace = stop_grace
        self.options = dict(options)
        if labels is not None:
            self.options["labels"] = {
                **labels,
                OWNER_LABEL: "1",
                OWNER_PROCESS_LABEL: owner_token(),
                **({KEEP_LABEL: "1"} if self.keep else {}),
            }
        self.before_start = before_start  # e.g. copy files in (put_archive) before the command runs
        self.container: Any = None
        self.final_state: dict[str, Any] = {}
        self._pump: threading.Thread | None = None
        self._left = False

    # -- entering and leaving -----------------------------------------------------------------
    def __enter__(self) -> OCIContainer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.remove()

    def start(self) -> OCIContainer:
        """Create and start the container (ContainerRefused when the engine will not); on any
        failure what was made is removed."""
        import docker.errors

        try:
            self.container = self.client.containers.create(name=self.name, detach=True, **self.options)
            if self.before_start is not None:
                self.before_start(self.container)
            self.container.start()
        except docker.errors.APIError as err:
            self._remove()
            reason = (err.explanation or str(err)).strip().splitlines()
            raise ContainerRefused(reason[0] if reason else type(err).__name__) from None
        except BaseException:
            self._remove()
            raise
        return self

    def remove(self) -> None:
        """Stop it if it still runs and remove it (unless kept for debugging). Idempotent: leaving
        twice (done, then the run's ExitStack) is leaving once."""
        if self._left:
            return
        self._left = True
        try:
            if self.state().get("Running"):
                self.stop()
        finally:
            if self._pump is not None:
                self._pump.join(timeout=10)
            if not self.keep:
                self._remove()

    # -- while it lives -----------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """The engine's State of the container ({} once it is gone)."""
        import docker.errors

        if self.container is None:
            return {}
        try:
            self.container.reload()
        except docker.errors.NotFound:
            return {}
        return dict(self.container.attrs.get("State") or {})

    def wait(self, timeout: float | None) -> dict[str, Any] | None:
        """The final state once the container has exited, or None if it still runs after `timeout` s."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            state = self.state()
            if not state or state.get("Status") in ("exited", "dead"):
                self.final_state = state
                if self._pump is not None:
                    self._pump.join(timeout=10)  # all of its output is in before anyone judges it
                return state
            if deadline is not None and time.monotonic() >= deadline:
                return None
            time.sleep(POLL)

    def stop(self) -> dict[str, Any]:
        """SIGTERM, then SIGKILL after the grace period; the final state."""
        import docker.errors

        with contextlib.suppress(docker.errors.NotFound):
            try:
                self.container.stop(timeout=self.stop_grace)
            except docker.errors.APIError:
                with contextlib.suppress(docker.errors.APIError):
                    self.container.kill()
        self.final_state = self.state() or self.final_state
        return self.final_state

    def output(self, *, stdout: bool = True, stderr: bool = True) -> str:
        return self.container.logs(stdout=stdout, stderr=stderr).decode("utf-8", "replace")

    def stream_output(self, sink: IO[bytes] | Callable[[bytes], None]) -> None:
        """Copy the container's output, as it comes, to a file or a callback (in a thread)."""
        write = sink if callable(sink) else _file_writer(sink)

        def pump() -> None:
            with contextlib.suppress(Exception):  # the container went away: nothing more to copy
                for chunk in self.container.logs(stream=True, follow=True, stdout=True, stderr=True):
                    write(chunk)

        self._pump = threading.Thread(target=pump, daemon=True)
        self._pump.start()

    def _remove(self) -> None:
        import docker.errors

        if self.container is None:
            return
        for attempt in range(3):
            try:
                self.container.remove(force=True)
                return
            except docker.errors.NotFound:
                return
            except docker.errors.APIError:  # "removal already in progress" and friends: try again
                time.sleep(1 + attempt)


def _file_writer(handle: IO[bytes]) -> Callable[[bytes], None]:
    def write(chunk: bytes) -> None:
        handle.write(chunk)
        handle.flush()

    return write


# -- what killed runs left behind ----------------------------------------------------------------
def leftover_containers(client: docker.DockerClient, cell_id: str | None = None) -> list[Any]:
    """Containers of the harness still present (all, or one cell's)."""
    label = f"{CELL_LABEL}={cell_id}" if cell_id else f"{OWNER_LABEL}=1"
    return client.containers.list(all=True, filters={"label": label})


def _install_owner(name: str) -> str:
    """The owner token encoded in an install container's name: torch-compat-install-<host>.<pid>.<start>-..."""
    parts = name.removeprefix(INSTALL_PREFIX + "-").rsplit("-", 1)[0].rsplit(".", 2)
    return "/".join(parts) if len(parts) == 3 else ""


def install_name_prefix() -> str:
    host, pid, start = owner_token().split("/")
    return f"{INSTALL_PREFIX}-{host}.{pid}.{start}"


def remove_stale(client: docker.DockerClient, *, cell_id: str | None = None) -> list[str]:
    """Remove the containers that runs of this host left behind when they were killed (their owner
    process is gone), and stopped containers of `cell_id` whatever their owner; containers kept on
    purpose (HARNESS_KEEP_CONTAINER) stay. Returns the names removed."""
    import docker.errors

    removed = []
    candidates = leftover_containers(client)
    candidates += client.containers.list(all=True, filters={"name": INSTALL_PREFIX})
    seen = set()
    for container in candidates:
        if container.id in seen:
            continue
        seen.add(container.id)
        labels = container.labels or {}
        if labels.get(KEEP_LABEL) == "1":
            continue
        token = labels.get(OWNER_PROCESS_LABEL) or (
            _install_owner(container.name) if container.name.startswith(INSTALL_PREFIX) else ""
        )
        alive = owner_alive(token) if token else None
        same_cell_stopped = bool(cell_id) and labels.get(CELL_LABEL) == cell_id and container.status != "running"
        if alive is False or same_cell_stopped:
            with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
                container.remove(force=True)
                removed.append(container.name)
    return removed
