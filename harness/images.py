"""Backend images: build inputs from the registry, a tag that is the hash of those inputs,
and `docker build` through the Docker SDK (never the docker CLI), skipped when the tag exists.

Every backend builds dockerfiles/Dockerfile (the shared recipe); a backend whose build kind has
its own layer (dockerfiles/Dockerfile.rocm, dockerfiles/Dockerfile.xpu) gets a second build on
top. The build context is a small temp dir holding only those files, verify_torch.py, the
wheelhouse (if any) and the extra CA bundle (if any), never the repository.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit, urlunsplit

from harness.errors import InfrastructureError, UsageError
from harness.registry import Backend, get_backend

if TYPE_CHECKING:
    import docker

REPO_DIR: Final = Path(__file__).resolve().parent.parent
DOCKERFILES_DIR: Final = Path(os.environ.get("HARNESS_DOCKERFILES") or REPO_DIR / "dockerfiles")
VERIFY_SCRIPT: Final = Path(__file__).with_name("verify_torch.py")
COMMON_DOCKERFILE: Final = "Dockerfile"
IMAGE_REPO: Final = "torch-compat"
# The release the harness qualifies by default (pytorch-ci.md: CURRENT_STABLE_VERSION); --torch overrides it.
DEFAULT_TORCH: Final = "torch==2.13.0"
DEFAULT_PYTHON: Final = "python3"
DEFAULT_UID: Final = 1000
TEST_PACKAGES: Final = ("pytest", "pytest-xdist")
BUILD_TIMEOUT: Final = 6 * 3600  # seconds of silence a build step may have (pip installing a 3 GB wheel)
# Docker's predefined build arguments: they reach RUN steps but are kept out of the image history.
PROXY_ARGS: Final = tuple(
    name
    for base in ("HTTP_PROXY", "HTTPS_PROXY", "FTP_PROXY", "NO_PROXY", "ALL_PROXY")
    for name in (base, base.lower())
)
# Build arguments that only feed labels: they must not change the tag (a new commit is not a new image).
LABEL_ONLY_ARGS: Final = frozenset({"SOURCE_URL", "REVISION"})
VERIFY_FAILED: Final = "image verification failed:"

# Environment defaults for `harness build` / `harness run --backend` (documented in docs/containers.md).
ENV_BASE_IMAGE: Final = "HARNESS_BASE_IMAGE"
ENV_WHEELHOUSE: Final = "HARNESS_WHEELHOUSE"
ENV_TORCH: Final = "HARNESS_TORCH"
ENV_PYTHON: Final = "HARNESS_PYTHON"
ENV_INDEX_URL: Final = "HARNESS_TORCH_INDEX_URL"
ENV_PACKAGE_INDEX_URL: Final = "HARNESS_PACKAGE_INDEX_URL"
ENV_CA_BUNDLE: Final = "HARNESS_CA_BUNDLE"
ENV_BUILD_NETWORK: Final = "HARNESS_BUILD_NETWORK"

Progress = Callable[[str], None]


class ImageBuildError(InfrastructureError):
    """docker build failed (no network, a broken index, a missing base image)."""


class ImageVerificationError(ImageBuildError):
    """The image's torch is not the build its backend claims."""


@dataclass(frozen=True, kw_only=True)
class BuildSpec:
    """Everything an image is built from; two equal specs give the same tag."""

    backend: Backend
    base_image: str
    python: str = DEFAULT_PYTHON
    torch: str = DEFAULT_TORCH
    index_url: str
    package_index_url: str = ""
    wheelhouse: Path | None = None
    ca_bundle: Path | None = None
    network: str | None = None  # build network mode; None: the engine's default
    uid: int = DEFAULT_UID

    @property
    def requirement(self) -> str:
        """The pip requirement: `2.13.0` means `torch==2.13.0`."""
        text = self.torch.strip()
        return f"torch=={text}" if re.fullmatch(r"\d+(\.\d+)*([a-z]+\d*)?(\.dev\d+)?(\+[\w.]+)?", text) else text

    @property
    def exact_version(self) -> str:
        """The version asked for when the requirement pins one (`torch==2.13.0` -> 2.13.0), else ''."""
        match = re.fullmatch(r"torch\s*===?\s*([^\s,;+]+)(\+[\w.]+)?", self.requirement)
        return match.group(1) if match else ""


@dataclass(frozen=True)
class BuildStep:
    dockerfile: str
    tag: str
    buildargs: dict[str, str]


@dataclass(frozen=True)
class BuildPlan:
    spec: BuildSpec
    files: dict[str, Path]  # context path -> source file
    steps: tuple[BuildStep, ...]
    inputs_hash: str

    @property
    def tag(self) -> str:
        return self.steps[-1].tag


@dataclass(frozen=True)
class ImageResult:
    ref: str
    id: str
    reused: bool


# -- the spec ---------------------------------------------------------------------------------
def _no_credentials(url: str, what: str) -> str:
    parts = urlsplit(url)
    if parts.username or parts.password:
        raise UsageError(
            f"{what} {redact_url(url)} carries credentials; they would be baked into the image history",
            hint="download the wheels on the host into a wheelhouse (--wheelhouse), or use an index that needs none",
        )
    return url


def redact_url(url: str) -> str:
    """The URL without user:password@ (for labels, logs and messages)."""
    parts = urlsplit(url)
    if not (parts.username or parts.password):
        return url
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _wheelhouse(path: str | Path | None) -> Path | None:
    if not path:
        return None
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise UsageError(
            f"wheelhouse {folder} is not a directory", hint="pip download torch pytest pytest-xdist -d DIR"
        )
    if not any(folder.glob("*.whl")):
        raise UsageError(
            f"wheelhouse {folder} holds no *.whl files", hint="pip download torch pytest pytest-xdist -d DIR"
        )
    return folder.resolve()


def _ca_bundle(path: str | Path | None) -> Path | None:
    if not path:
        return None
    bundle = Path(path).expanduser()
    try:
        text = bundle.read_text(encoding="ascii", errors="replace")
    except OSError as err:
        raise UsageError(f"cannot read CA bundle {bundle}: {err.strerror}") from None
    if "-----BEGIN CERTIFICATE-----" not in text:
        raise UsageError(f"CA bundle {bundle} holds no PEM certificate", hint="pass a PEM file (BEGIN CERTIFICATE)")
    return bundle.resolve()


def build_spec(
    backend_id: str,
    *,
    base_image: str | None = None,
    python: str | None = None,
    torch: str | None = None,
    index_url: str | None = None,
    package_index_url: str | None = None,
    wheelhouse: str | Path | None = None,
    ca_bundle: str | Path | None = None,
    network: str | None = None,
    env: Mapping[str, str] | None = None,
) -> BuildSpec:
    """The spec for a backend: explicit values, else HARNESS_* environment variables, else the registry."""
    env = os.environ if env is None else env
    backend = get_backend(backend_id)
    index = index_url or env.get(ENV_INDEX_URL) or backend.wheel_index
    package_index = package_index_url or env.get(ENV_PACKAGE_INDEX_URL) or ""
    return BuildSpec(
        backend=backend,
        base_image=base_image or env.get(ENV_BASE_IMAGE) or backend.base_image,
        python=python or env.get(ENV_PYTHON) or DEFAULT_PYTHON,
        torch=torch or env.get(ENV_TORCH) or DEFAULT_TORCH,
        index_url=_no_credentials(index, "torch index"),
        package_index_url=_no_credentials(package_index, "package index") if package_index else "",
        wheelhouse=_wheelhouse(wheelhouse or env.get(ENV_WHEELHOUSE)),
        ca_bundle=_ca_bundle(ca_bundle or env.get(ENV_CA_BUNDLE)),
        network=network or env.get(ENV_BUILD_NETWORK) or None,
    )


def add_build_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared by `harness build` and container runs (each defaults from a HARNESS_* variable)."""
    group = parser.add_argument_group("image build (container mode)")
    group.add_argument("--base-image", help=f"base image (default: the registry's; env {ENV_BASE_IMAGE})")
    group.add_argument(
        "--image-python",
        dest="image_python",
        help=f"interpreter package in the image (default python3; env {ENV_PYTHON})",
    )
    group.add_argument("--torch", help=f"torch version or requirement (default {DEFAULT_TORCH}; env {ENV_TORCH})")
    group.add_argument("--index-url", help=f"torch wheel index (default: the registry's; env {ENV_INDEX_URL})")
    group.add_argument(
        "--package-index-url", help=f"index for pytest and friends (default PyPI; env {ENV_PACKAGE_INDEX_URL})"
    )
    group.add_argument(
        "--wheelhouse", type=Path, help=f"install every wheel from this folder, with no index (env {ENV_WHEELHOUSE})"
    )
    group.add_argument(
        "--ca-bundle", type=Path, help=f"extra CA certificates (PEM) for a TLS proxy (env {ENV_CA_BUNDLE})"
    )
    group.add_argument(
        "--build-network", help=f"network mode of build steps, e.g. host or none (env {ENV_BUILD_NETWORK})"
    )
    group.add_argument("--rebuild", action="store_true", help="build even when an image with the same inputs exists")
    group.add_argument("--build-log", action="store_true", help="print every line of the build, not only its steps")


def spec_from_args(args: argparse.Namespace, backend_id: str) -> BuildSpec:
    return build_spec(
        backend_id,
        base_image=args.base_image,
        python=args.image_python,
        torch=args.torch,
        index_url=args.index_url,
        package_index_url=args.package_index_url,
        wheelhouse=args.wheelhouse,
        ca_bundle=args.ca_bundle,
        network=args.build_network,
    )


# -- the plan: context files, build arguments, tag ---------------------------------------------
def layer_dockerfile(backend: Backend) -> str | None:
    """The backend's own layer (Dockerfile.rocm, Dockerfile.xpu), if its build kind has one."""
    name = f"Dockerfile.{backend.build}"
    return name if (DOCKERFILES_DIR / name).is_file() else None


def context_files(spec: BuildSpec) -> dict[str, Path]:
    """What goes into the build context: context path -> file on this host."""
    common = DOCKERFILES_DIR / COMMON_DOCKERFILE
    if not common.is_file():
        raise UsageError(f"{common} not found", hint="run from a checkout of the harness, or set HARNESS_DOCKERFILES")
    files = {COMMON_DOCKERFILE: common, "verify_torch.py": VERIFY_SCRIPT}
    layer = layer_dockerfile(spec.backend)
    if layer:
        files[layer] = DOCKERFILES_DIR / layer
    if spec.wheelhouse:
        for wheel in sorted(spec.wheelhouse.glob("*.whl")):
            files[f"wheelhouse/{wheel.name}"] = wheel
    if spec.ca_bundle:
        files["ca-certificates/extra-ca.crt"] = spec.ca_bundle
    return files


def common_buildargs(spec: BuildSpec) -> dict[str, str]:
    backend = spec.backend
    version = spec.exact_version
    return {
        "BASE_IMAGE": spec.base_image,
        "PYTHON": spec.python,
        "TORCH_SPEC": spec.requirement,
        "TORCH_INDEX_URL": spec.index_url,
        "PACKAGE_INDEX_URL": spec.package_index_url,
        "TEST_PACKAGES": " ".join(TEST_PACKAGES),
        "COMPAT_UID": str(spec.uid),
        "BACKEND": backend.id,
        "EXPECT_LOCAL_TAG": backend.local_tag,
        "EXPECT_BUILD": backend.build,
        "EXPECT_RUNTIME": backend.runtime_version,
        "EXPECT_VERSION": version,
        "TORCH_VERSION": f"{version}+{backend.local_tag}" if version and backend.local_tag else version,
    }


def layer_buildargs(spec: BuildSpec, common_tag: str) -> dict[str, str]:
    args = {"COMPAT_IMAGE": common_tag, "COMPAT_UID": str(spec.uid)}
    if spec.backend.build == "rocm":
        args["ROCM_VERSION"] = spec.backend.runtime_version
    return args


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def inputs_hash(files: Mapping[str, Path], buildargs: Iterable[Mapping[str, str]], backend: Backend) -> str:
    """sha256 over the context files, the build arguments and the backend's registry entry."""
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(f"file {name} {_file_digest(files[name])}\n".encode())
    for step, args in enumerate(buildargs):
        kept = {k: v for k, v in sorted(args.items()) if k not in LABEL_ONLY_ARGS}
        digest.update(f"args {step} {json.dumps(kept, sort_keys=True)}\n".encode())
    digest.update(f"backend {json.dumps(dataclasses.asdict(backend), sort_keys=True)}\n".encode())
    return digest.hexdigest()


def plan_build(spec: BuildSpec) -> BuildPlan:
    files = context_files(spec)
    common_args = common_buildargs(spec)
    layer = layer_dockerfile(spec.backend)
    placeholder = f"{IMAGE_REPO}/{spec.backend.id}:common"  # the layer's FROM; its real tag follows from the hash
    arg_sets = [common_args] + ([layer_buildargs(spec, placeholder)] if layer else [])
    digest = inputs_hash(files, arg_sets, spec.backend)
    tag = f"{IMAGE_REPO}/{spec.backend.id}:{digest[:12]}"
    labels = source_labels()
    if not layer:
        return BuildPlan(spec, files, (BuildStep(COMMON_DOCKERFILE, tag, {**common_args, **labels}),), digest)
    common_tag = f"{tag}-common"
    steps = (
        BuildStep(COMMON_DOCKERFILE, common_tag, {**common_args, **labels}),
        BuildStep(layer, tag, layer_buildargs(spec, common_tag)),
    )
    return BuildPlan(spec, files, steps, digest)


def source_labels() -> dict[str, str]:
    """SOURCE_URL and REVISION for the OCI labels: the GitHub run's repository, else this checkout's git remote."""
    server, repo = os.environ.get("GITHUB_SERVER_URL"), os.environ.get("GITHUB_REPOSITORY")
    source = f"{server}/{repo}" if server and repo else _git("config", "--get", "remote.origin.url")
    revision = os.environ.get("GITHUB_SHA") or _git("rev-parse", "HEAD")
    return {"SOURCE_URL": redact_url(source), "REVISION": revision}


def _git(*argv: str) -> str:
    try:
        done = subprocess.run(
            ["git", "-C", str(REPO_DIR), *argv], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def assemble_context(plan: BuildPlan, dest: Path) -> Path:
    """Write the build context into `dest` (hard links where possible: wheels are large)."""
    for sub in ("wheelhouse", "ca-certificates"):
        (dest / sub).mkdir(parents=True, exist_ok=True)  # COPY needs them even when empty
    for name, source in plan.files.items():
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source, target)
        except OSError:
            shutil.copyfile(source, target)
        target.chmod(0o644)  # the image gets files readable by its non-root user whatever the host umask
    return dest


# -- the build --------------------------------------------------------------------------------
def proxy_buildargs(env: Mapping[str, str] | None = None) -> dict[str, str]:
    env = os.environ if env is None else env
    return {name: env[name] for name in PROXY_ARGS if env.get(name)}


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
    plan = plan_build(spec)
    existing = None if rebuild else find_image(client, plan.tag)
    if existing is not None:
        progress(f"reusing image {plan.tag} (its build inputs are unchanged)")
        return ImageResult(plan.tag, existing.id, reused=True)
    where = f"wheelhouse {spec.wheelhouse}" if spec.wheelhouse else f"index {spec.index_url}"
    progress(f"building image {plan.tag}: {spec.requirement} for {spec.backend.id} on {spec.base_image}, from {where}")
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="torch-compat-context-") as tmp:
        context = assemble_context(plan, Path(tmp))
        image_id = ""
        for step in plan.steps:
            image_id = run_build_step(client, context, step, spec, progress=progress, verbose=verbose)
    progress(f"built image {plan.tag} in {time.monotonic() - started:.0f} s")
    return ImageResult(plan.tag, image_id, reused=False)


def run_build_step(
    client: docker.DockerClient,
    context: Path,
    step: BuildStep,
    spec: BuildSpec,
    *,
    progress: Progress = print,
    verbose: bool = False,
) -> str:
    """One `docker build`, streamed: step lines always, every line with `verbose`; errors name their cause."""
    import docker.errors

    buildargs = {**step.buildargs, **proxy_buildargs()}
    tail: deque[str] = deque(maxlen=40)
    current_step = ""
    image_id = ""
    try:
        stream = client.api.build(
            path=str(context),
            dockerfile=step.dockerfile,
            tag=step.tag,
            buildargs=buildargs,
            labels={"torch-compat.inputs": step.tag.rsplit(":", 1)[-1]},
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
                image_id = chunk["aux"].get("ID", image_id)
            for line in str(chunk.get("stream") or chunk.get("status") or "").splitlines():
                line = line.rstrip()
                if not line:
                    continue
                tail.append(line)
                if line.startswith("Step "):
                    current_step = line
                    if verbose or _WORK_STEP.match(line):
                        progress(f"  {_short(line)}")
                elif verbose or line.startswith(("image verified", VERIFY_FAILED)):
                    progress(f"    {_short(line, 200)}")
    except docker.errors.APIError as err:
        raise _build_failure(step, spec, current_step, err.explanation or str(err), tail) from None
    except docker.errors.DockerException as err:
        raise ImageBuildError(f"docker build of {step.tag} failed: {err}") from None
    return image_id


# Steps that do work (the rest only set metadata and finish at once).
_WORK_STEP: Final = re.compile(r"Step \d+/\d+ : (FROM|RUN|COPY|ADD) ", re.IGNORECASE)


def _short(line: str, width: int = 110) -> str:
    return line if len(line) <= width else line[: width - 3] + "..."


def _build_failure(step: BuildStep, spec: BuildSpec, current: str, error: str, tail: Iterable[str]) -> ImageBuildError:
    lines = list(tail)
    refused = [line.split(VERIFY_FAILED, 1)[1].strip() for line in lines if VERIFY_FAILED in line]
    if refused:
        return ImageVerificationError(
            f"the {spec.backend.id} image is not the build it claims: {'; '.join(refused)}",
            hint=f"check the torch index ({spec.index_url}) or the wheelhouse",
        )
    if re.search(r" : FROM ", current) and step.dockerfile == COMMON_DOCKERFILE:
        return ImageBuildError(
            f"base image {spec.base_image} is not here and cannot be pulled: {error}",
            hint="pull it where a registry is reachable, or make one (tools/make-base-image.sh) and pass --base-image",
        )
    output = [line for line in lines if not line.startswith(("Step ", " ---> ", "Removing intermediate"))]
    last = output[-1] if output else ""
    where = f" at {_short(current, 90)}" if current else ""
    detail = f" (last output: {_short(last, 200)})" if last and last not in error else ""
    return ImageBuildError(f"docker build of {step.tag} failed{where}: {error}{detail}")


# -- image facts for the manifest --------------------------------------------------------------
LABEL_PREFIXES: Final = ("org.opencontainers.image.", "torch-compat.")


def describe_image(image: Any, ref: str) -> dict[str, Any]:
    """ref, id, digest (the registry digest when pulled or pushed, else the image id), backend, labels."""
    attrs = image.attrs or {}
    labels = (attrs.get("Config") or {}).get("Labels") or {}
    repo_digests = attrs.get("RepoDigests") or []
    return {
        "ref": ref,
        "id": image.id,
        "digest": repo_digests[0] if repo_digests else image.id,
        "backend": labels.get("torch-compat.backend"),
        "labels": {k: v for k, v in sorted(labels.items()) if k.startswith(LABEL_PREFIXES)},
    }
