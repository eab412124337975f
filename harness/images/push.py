"""Build once, pull by digest: a backend's image pushed to a registry, named by its digest.

`harness build --backend X --push REGISTRY` (a build job on a hosted runner) looks the image's tag,
the hash of its build inputs, up in the registry first: there already, it is neither built nor
pushed again. Else it is built (or reused from this engine), tagged with the registry's name,
pushed, and the registry's name taken off this engine again. Either way the answer is
`REGISTRY/torch-compat/<backend>@sha256:...`, the reference cell jobs pull (`harness run --image`)
and a column's rerun command names: the exact bytes, wherever they run.

Credentials come from the engine's client configuration (`docker login`); a registry on this host
(127.0.0.1:PORT) is spoken to over plain HTTP, as Docker allows for loopback addresses.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from harness.errors import InfrastructureError, UsageError
from harness.images import image_build, recipes
from harness.images.recipes import BuildSpec, Progress

if TYPE_CHECKING:
    import docker

# host[:port][/path...]: a registry and an optional namespace, no scheme, no tag, no digest.
_REGISTRY_RE: Final = re.compile(r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]+)?(/[a-z0-9]([a-z0-9._-]*[a-z0-9])?)*$")
_DIGEST_RE: Final = re.compile(r"^sha256:[0-9a-f]{64}$")


class PushError(InfrastructureError):
    """The registry refused the image or could not be reached."""


@dataclass(frozen=True)
class Pushed:
    ref: str  # REGISTRY/torch-compat/<backend>@sha256:...
    tag: str  # REGISTRY/torch-compat/<backend>:<inputs hash>
    built: bool  # built on this engine now (False: reused from it, or already in the registry)
    pushed: bool  # False: the registry had this tag already


def check_registry(registry: str) -> str:
    """The registry as given (`ghcr.io/owner`, `127.0.0.1:5000`), or a UsageError saying what is wrong."""
    text = registry.strip().rstrip("/")
    if "://" in text:
        raise UsageError(f"--push {registry!r}: give the registry without a scheme (e.g. ghcr.io/OWNER)")
    if not _REGISTRY_RE.match(text) or ("." not in text.split("/")[0] and ":" not in text.split("/")[0]):
        raise UsageError(
            f"--push {registry!r} is not a registry",
            hint="a host with a dot or a port, and a namespace if it needs one: ghcr.io/OWNER, 127.0.0.1:5000",
        )
    return text


def remote_name(registry: str, local_tag: str) -> tuple[str, str]:
    """(repository, tag) in the registry for a local `torch-compat/<backend>:<hash>`."""
    repository, _, tag = local_tag.rpartition(":")
    return f"{registry}/{repository}", tag


def remote_digest(client: docker.DockerClient, ref: str) -> str | None:
    """The digest the registry holds for `ref`, None when it holds none."""
    import docker.errors

    try:
        digest = client.images.get_registry_data(ref).id
    except docker.errors.NotFound:
        return None
    except docker.errors.APIError as err:
        text = str(err.explanation or err)
        if "not found" in text.lower() or "unknown" in text.lower():
            return None
        raise PushError(f"cannot look {ref} up in its registry: {text}") from None
    return digest if isinstance(digest, str) and _DIGEST_RE.match(digest) else None


def push(client: docker.DockerClient, repository: str, tag: str, progress: Progress) -> str:
    """Push `repository:tag` (streamed); the digest the registry gave it."""
    import docker.errors

    digest = ""
    try:
        for chunk in client.api.push(repository, tag=tag, stream=True, decode=True):
            if "error" in chunk:
                detail = chunk.get("errorDetail", {}).get("message") or chunk["error"]
                raise PushError(f"pushing {repository}:{tag} failed: {str(detail).strip()}")
            aux = chunk.get("aux")
            if isinstance(aux, dict) and aux.get("Digest"):
                digest = str(aux["Digest"])
            elif chunk.get("status") in ("Pushed", "Layer already exists"):
                progress(f"  {chunk.get('id', '')}: {chunk['status']}")
    except docker.errors.APIError as err:
        raise PushError(f"pushing {repository}:{tag} failed: {err.explanation or err}") from None
    if not _DIGEST_RE.match(digest):
        raise PushError(f"pushing {repository}:{tag} gave no digest")
    return digest


def publish_image(
    spec: BuildSpec,
    client: docker.DockerClient,
    registry: str,
    *,
    rebuild: bool = False,
    progress: Progress = print,
    verbose: bool = False,
    ensure: Callable[..., Any] | None = None,
) -> Pushed:
    """The image of `spec` in `registry`, by digest: looked up first, else built (or reused) and pushed."""
    registry = check_registry(registry)
    plan = recipes.plan_build(spec)
    repository, tag = remote_name(registry, plan.tag)
    if not rebuild:
        found = remote_digest(client, f"{repository}:{tag}")
        if found is not None:
            progress(f"{repository}:{tag} is in the registry already ({found}): not built, not pushed")
            return Pushed(ref=f"{repository}@{found}", tag=f"{repository}:{tag}", built=False, pushed=False)
    result = (ensure or image_build.ensure_image)(spec, client, rebuild=rebuild, progress=progress, verbose=verbose)
    image = client.images.get(result.ref)
    image.tag(repository, tag)
    try:
        progress(f"pushing {repository}:{tag}")
        digest = push(client, repository, tag, progress)
    finally:
        # The registry's name is the registry's: this engine keeps the image under its own tag only.
        with contextlib.suppress(Exception):
            client.images.remove(f"{repository}:{tag}", noprune=True)
    progress(f"pushed {repository}@{digest}")
    return Pushed(ref=f"{repository}@{digest}", tag=f"{repository}:{tag}", built=not result.reused, pushed=True)
