"""Build a planned image (harness/images/recipes.py) through the Docker SDK, never the docker CLI, and
leave nothing behind but the image.

- An image whose tag (the hash of its inputs) exists is reused, not rebuilt.
- From the indexes: one classic `docker build` of dockerfiles/Dockerfile.
- From a wheelhouse: the engines this harness supports (Docker 20.10+, the classic builder the
  SDK drives) cannot bind-mount into a RUN step, and a COPY of the wheels would leave a
  multi-GB layer in a build stage. So the `system` stage is built first, install-venv.sh then
  runs in a container of it (network none) that mounts the wheelhouse read-only, the container
  is committed as `<tag>-venv`, and the image is built FROM that: no layer anywhere holds a wheel.
- Afterwards the build's stage images that nothing uses are removed (a refused build leaves no
  multi-GB stage), and the `-venv` tag is dropped (its layers live on as the image's parents).
- The last build step verifies the image (verify_torch.py); a refusal is one line per problem.
"""

from __future__ import annotations

import contextlib
import re
import tarfile
import tempfile
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from harness.errors import InfrastructureError
from harness.images import recipes
from harness.images.oci_container import ContainerRefused, OCIContainer, install_name_prefix, remove_stale
from harness.images.recipes import COMMON_DOCKERFILE, INSTALL_SCRIPT, BuildPlan, BuildSpec, BuildStep, Progress

if TYPE_CHECKING:
    import docker

BUILD_TIMEOUT: Final = 6 * 3600  # seconds of silence a build step may have (pip installing a 3 GB wheel)
VERIFY_FAILED: Final = "image verification failed:"
VERIFY_NOTE: Final = "verification note:"
CONTAINER_WHEELHOUSE: Final = "/mnt"  # exists in every base image: mounting there leaves no empty mount point behind
# Steps that do work (the rest only set metadata and finish at once).
_WORK_STEP: Final = re.compile(r"Step \d+/\d+ : (FROM|RUN|COPY|ADD) ", re.IGNORECASE)
_STEP_IMAGE: Final = re.compile(r"^ ---> ([0-9a-f]{12,64})$")
_ANSI: Final = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # the engine colours a step's stderr


class ImageBuildError(InfrastructureError):
    """docker build failed (no network, a broken index, a missing base image)."""


class ImageVerificationError(ImageBuildError):
    """The image's torch is not the build its backend claims, or one of its wheels is broken."""


@dataclass(frozen=True)
class ImageResult:
    ref: str
    id: str
    reused: bool


@dataclass
class _StepRun:
    """What one `docker build` made: the image of each step, and which ones end a stage."""

    image_id: str = ""
    stage_tips: list[str] = field(default_factory=list)
    last_image: str = ""


def find_image(client: docker.DockerClient, ref: str) -> Any | None:
    import docker.errors

    try:
        return client.images.get(ref)
    except docker.errors.ImageNotFound:
        return None


def ensure_image(
    spec: BuildSpec,
    client: docker.DockerClient,
    *,
    rebuild: bool = False,
    progress: Progress = print,
    verbose: bool = False,
) -> ImageResult:
    """The image for `spec`: reused when its tag (the inputs' hash) exists, else built and verified."""
    plan = recipes.plan_build(spec)
    existing = None if rebuild else find_image(client, plan.tag)
    if existing is not None:
        progress(f"reusing image {plan.tag} (its build inputs are unchanged)")
        return ImageResult(plan.tag, existing.id, reused=True)
    where = f"wheelhouse {spec.wheelhouse}" if spec.wheelhouse else f"index {spec.index_url}"
    progress(f"building image {plan.tag}: {spec.requirement} for {spec.backend.id} on {spec.base_image}, from {where}")
    started = time.monotonic()
    for name in remove_stale(client):
        progress(f"removed container {name}, left by a run that was killed")
    with tempfile.TemporaryDirectory(prefix="torch-compat-context-") as tmp:
        context = recipes.assemble_context(plan, Path(tmp))
        image_id = ""
        for index, step in enumerate(plan.steps):
            if index == 0 and spec.wheelhouse:
                image_id = _build_from_wheelhouse(client, context, plan, step, progress=progress, verbose=verbose)
            else:
                image_id = run_build_step(client, context, step, spec, progress=progress, verbose=verbose)
    progress(f"built image {plan.tag} in {time.monotonic() - started:.0f} s")
    return ImageResult(plan.tag, image_id, reused=False)


# -- a wheelhouse: install in a container that mounts it, commit, build on top ------------------
def _build_from_wheelhouse(
    client: docker.DockerClient, context: Path, plan: BuildPlan, step: BuildStep, *, progress: Progress, verbose: bool
) -> str:
    spec = plan.spec
    system = run_build_step(client, context, step, spec, progress=progress, verbose=verbose, target="system")
    try:
        install_venv(client, spec, system, plan.venv_tag, progress=progress, verbose=verbose)
        return run_build_step(client, context, step, spec, progress=progress, verbose=verbose)
    finally:
        # The tag only; the layers stay as the image's parents, or go with the failed build's stages.
        _remove_images(client, [plan.venv_tag])


def install_venv(
    client: docker.DockerClient, spec: BuildSpec, system_image: str, tag: str, *, progress: Progress, verbose: bool
) -> str:
    """Run install-venv.sh in a container of the system stage with the wheelhouse mounted (no
    network), and commit the result as `tag`. Returns the image id."""
    from docker.types import Mount

    from harness.images import docker_engine

    assert spec.wheelhouse is not None
    local = docker_engine.is_local(client)
    argv = [
        "bash", f"/opt/torch-compat/{INSTALL_SCRIPT}", spec.python, spec.requirement, " ".join(recipes.TEST_PACKAGES),
        "wheelhouse", CONTAINER_WHEELHOUSE,
    ]  # fmt: skip
    options: dict[str, Any] = {"image": system_image, "network_mode": "none", "user": "0:0", "working_dir": "/"}
    if local:
        # zero copies: the engine's host is this host
        options["mounts"] = [Mount(CONTAINER_WHEELHOUSE, str(spec.wheelhouse), type="bind", read_only=True)]
        options["command"] = argv
    else:
        # a remote engine cannot see this host's files: upload them, and delete them before the commit
        script = '"$@"; status=$?; find "$0" -mindepth 1 -delete; exit $status'
        options["command"] = ["bash", "-c", script, CONTAINER_WHEELHOUSE, *argv]
    progress(f"  installing {spec.requirement} from the wheelhouse in a container (no network)")
    tail: deque[str] = deque(maxlen=40)

    def show(chunk: bytes) -> None:
        for line in chunk.decode("utf-8", "replace").splitlines():
            if line.strip():
                tail.append(line.rstrip())
                if verbose:
                    progress(f"    {_short(line.rstrip(), 200)}")

    upload = None if local else _uploader(spec.wheelhouse)
    try:
        with OCIContainer(client, install_name_prefix(), options, labels=None, keep=False, before_start=upload) as box:
            box.stream_output(show)
            state = box.wait(BUILD_TIMEOUT)
            if state is None:
                raise ImageBuildError(f"installing the wheelhouse did not finish within {BUILD_TIMEOUT} s")
            code = int(state.get("ExitCode", -1))
            if code != 0:
                errors = [line for line in tail if line.startswith("ERROR")] or list(tail)[-1:]
                detail = errors[0] if errors else f"exit {code}"
                raise ImageBuildError(
                    f"installing {spec.requirement} from wheelhouse {spec.wheelhouse} failed: {_short(detail, 300)}",
                    hint=f"the wheelhouse must hold torch and every dependency for {spec.python} "
                    "on the image's platform: harness wheelhouse --backend "
                    f"{spec.backend.id} -o DIR makes one",
                )
            repository, _, name = tag.rpartition(":")
            image = box.container.commit(repository=repository, tag=name)
            return str(image.id)
    except ContainerRefused as err:
        raise ImageBuildError(f"the engine refused the install container: {err}") from None


def _uploader(wheelhouse: Path) -> Any:
    """Copy the wheelhouse into a created container (for an engine on another host)."""

    def upload(container: Any) -> None:
        with tempfile.TemporaryFile() as archive:
            with tarfile.open(fileobj=archive, mode="w") as tar:
                tar.add(str(wheelhouse), arcname=CONTAINER_WHEELHOUSE.lstrip("/"))
            archive.seek(0)
            container.put_archive("/", archive)

    return upload


# -- one classic `docker build` ------------------------------------------------------------------
def run_build_step(
    client: docker.DockerClient,
    context: Path,
    step: BuildStep,
    spec: BuildSpec,
    *,
    progress: Progress = print,
    verbose: bool = False,
    target: str | None = None,
) -> str:
    """One `docker build`, streamed: step lines always, every line with `verbose`; errors name their
    cause. Stage images nothing uses are removed afterwards, whether the build worked or not."""
    import docker.errors

    buildargs = {**step.buildargs, **recipes.proxy_buildargs()}
    tail: deque[str] = deque(maxlen=40)
    current_step = ""
    made = _StepRun()
    ok = False
    try:
        stream = client.api.build(
            path=str(context),
            dockerfile=step.dockerfile,
            tag=None if target else step.tag,
            target=target,
            buildargs=buildargs,
            labels=None if target else {"torch-compat.inputs": step.tag.rsplit(":", 1)[-1]},
            rm=True,
            forcerm=True,
            pull=False,
            decode=True,
            network_mode=spec.network,
            timeout=BUILD_TIMEOUT,
        )
        for chunk in stream:
            if "error" in chunk:
                raise _build_failure(step, spec, current_step, str(chunk["error"]).strip(), tail)
            if "aux" in chunk and isinstance(chunk["aux"], dict):
                made.image_id = chunk["aux"].get("ID", made.image_id)
            for line in str(chunk.get("stream") or chunk.get("status") or "").splitlines():
                line = _ANSI.sub("", line).rstrip()
                if not line:
                    continue
                tail.append(line)
                image = _STEP_IMAGE.match(line)
                if image:
                    made.last_image = image.group(1)
                if line.startswith("Step "):
                    if " : FROM " in line and made.last_image:
                        made.stage_tips.append(made.last_image)  # the previous stage ends here
                    current_step = line
                    if verbose or _WORK_STEP.match(line):
                        progress(f"  {_short(line)}")
                elif verbose or line.startswith(("image verified", VERIFY_FAILED)):
                    progress(f"    {_short(line, 200)}")
        ok = True
    except docker.errors.APIError as err:
        raise _build_failure(step, spec, current_step, err.explanation or str(err), tail) from None
    except docker.errors.DockerException as err:
        raise ImageBuildError(f"docker build of {step.tag} failed: {err}") from None
    finally:
        leftovers = made.stage_tips + ([] if ok else [made.last_image])
        final = made.image_id.rpartition(":")[2]
        stale = [i for i in leftovers if i and not (ok and final.startswith(i))]
        _remove_images(client, stale, untagged=True)
    return made.image_id


def _remove_images(client: docker.DockerClient, refs: Iterable[str], *, untagged: bool = False) -> None:
    """Remove images (and their untagged parents nothing else uses); ones still needed stay.
    With `untagged`, images that carry a tag are never touched (a base image, someone's image)."""
    import docker.errors

    for ref in refs:
        with contextlib.suppress(docker.errors.APIError):
            if untagged and client.images.get(ref).tags:
                continue
            client.images.remove(ref)


def _short(line: str, width: int = 110) -> str:
    return line if len(line) <= width else line[: width - 3] + "..."


def _build_failure(step: BuildStep, spec: BuildSpec, current: str, error: str, tail: Iterable[str]) -> ImageBuildError:
    lines = list(tail)
    refused = [line.split(VERIFY_FAILED, 1)[1].strip() for line in lines if VERIFY_FAILED in line]
    if refused:
        source = f"wheelhouse {spec.wheelhouse}" if spec.wheelhouse else f"torch index {spec.index_url}"
        return ImageVerificationError(
            f"the {spec.backend.id} image was refused: {'; '.join(refused)}",
            hint=f"check the {source}; a wheel named here is broken or not the backend's",
        )
    if re.search(r" : FROM ", current) and step.dockerfile == COMMON_DOCKERFILE and "VENV_IMAGE" not in current:
        return ImageBuildError(
            f"base image {spec.base_image} is not here and cannot be pulled: {error}",
            hint="pull it where a registry is reachable, or make one (tools/make-base-image.sh) and pass --base-image",
        )
    output = [line for line in lines if not line.startswith(("Step ", " ---> ", "Removing intermediate"))]
    last = output[-1] if output else ""
    where = f" at {_short(current, 90)}" if current else ""
    detail = f" (last output: {_short(last, 200)})" if last and last not in error else ""
    return ImageBuildError(f"docker build of {step.tag} failed{where}: {error}{detail}")
