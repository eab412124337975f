"""The Docker engine: reach it once, check it answers, and say how to fix it when it does not.

Only this module creates Docker SDK clients; the SDK is imported lazily so that the CLI
(and `harness run --native`) never pays for it or needs it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Final

from harness.errors import DockerUnavailableError

if TYPE_CHECKING:
    import docker

# Control calls (inspect, create, remove) answer in seconds; a hung engine should not hang us.
CONTROL_TIMEOUT: Final = 120
MIN_API_VERSION: Final = (1, 41)  # Docker 20.10: device requests (--gpus), CDI needs 1.44 (Docker 25)

HOW_TO_FIX: Final = (
    "start the engine (`sudo systemctl start docker`, or as root: "
    "`dockerd --iptables=false --bridge=none --storage-driver=overlay2 &`), "
    "install it (`apt-get install docker.io`), add yourself to the `docker` group, "
    "or point DOCKER_HOST at a reachable engine"
)


def connect(timeout: int = CONTROL_TIMEOUT) -> docker.DockerClient:
    """A client for the engine named by the environment (DOCKER_HOST or the local socket), checked with a ping."""
    try:
        import docker
        import docker.errors
    except ImportError:
        raise DockerUnavailableError(
            "the Docker SDK for Python is not installed", hint="pip install 'docker>=7' (a dependency of the harness)"
        ) from None
    where = os.environ.get("DOCKER_HOST") or "the local socket /var/run/docker.sock"
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
        version = client.version()
    except docker.errors.DockerException as err:
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        if "Permission denied" in reason or "PermissionError" in reason:
            raise _no_permission(where) from None
        raise DockerUnavailableError(f"no Docker engine answers at {where}: {reason}", hint=HOW_TO_FIX) from None
    except Exception as err:  # requests/urllib3 errors escape the SDK's own hierarchy
        raise DockerUnavailableError(
            f"no Docker engine answers at {where}: {type(err).__name__}: {err}", hint=HOW_TO_FIX
        ) from None
    api = tuple(int(p) for p in str(version.get("ApiVersion", "0.0")).split(".")[:2])
    if api < MIN_API_VERSION:
        raise DockerUnavailableError(
            f"the Docker engine at {where} speaks API {version.get('ApiVersion')} "
            f"(engine {version.get('Version')}); the harness needs API {'.'.join(map(str, MIN_API_VERSION))} or newer",
            hint="upgrade to Docker 20.10 or newer",
        )
    return client


def _no_permission(where: str) -> DockerUnavailableError:
    """The engine is there but this user may not use it: the usual state of a fresh self-hosted runner."""
    import getpass

    user = getpass.getuser()
    return DockerUnavailableError(
        f"user {user} may not use the Docker engine at {where} (permission denied on its socket); nothing ran",
        hint=f"add the runner's user to the docker group: `sudo usermod -aG docker {user}`, then log in again "
        "or restart the runner service; or use rootless Docker and point DOCKER_HOST at its socket",
    )


def engine_reachable() -> bool:
    """True when an engine answers (used to decide whether Docker tests can run)."""
    try:
        connect(timeout=10).close()
    except DockerUnavailableError:
        return False
    return True


def is_local(client: docker.DockerClient) -> bool:
    """Whether the engine runs on this host (a unix socket), so host device nodes are its device nodes."""
    base = str(getattr(client.api, "base_url", ""))
    return base.startswith(("http+docker://localhost", "http+docker://localunixsocket", "unix:"))


def is_rootless(client: docker.DockerClient) -> bool:
    """Rootless Docker: container root is the invoking user, other container uids are subordinate ids."""
    try:
        options = client.info().get("SecurityOptions") or []
    except Exception:  # an engine that cannot say is treated as the common, rootful kind
        return False
    return any("rootless" in str(option) for option in options)
