"""Backend images, planned: build inputs from the registry, a tag that is the hash of those
inputs, the build context and the labels. No engine is touched here (harness/images/image_build.py
builds the plan through the Docker SDK).

Every backend builds dockerfiles/Dockerfile (the shared recipe); a backend whose build kind has
its own layer (dockerfiles/Dockerfile.rocm, dockerfiles/Dockerfile.xpu) gets a second build on
top. The build context is a small temp dir holding only those files, install-venv.sh, the
verifier (verify_torch.py, torch_build.py, library_check.py), the registry's host libraries and
the extra CA bundle (if any), never the repository and never the wheelhouse: a wheelhouse is
mounted into an install container instead (see image_build.py), and only its digest enters the tag.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

from harness.errors import UsageError
from harness.interpreters import PythonKey, base_python, parse_python
from harness.registry import Backend, get_backend, host_libraries, load_registry

REPO_DIR: Final = Path(__file__).resolve().parents[2]
DOCKERFILES_DIR: Final = Path(os.environ.get("HARNESS_DOCKERFILES") or REPO_DIR / "dockerfiles")
HARNESS_DIR: Final = Path(__file__).resolve().parents[1]
# The image verifier and the two stdlib-only modules it needs, copied into every image (flat, beside
# each other: in an image there is no harness package).
VERIFIER_FILES: Final = {
    "verify_torch.py": HARNESS_DIR / "images" / "verify_torch.py",
    "torch_build.py": HARNESS_DIR / "torch_build.py",
    "library_check.py": HARNESS_DIR / "images" / "library_check.py",
}
INSTALL_SCRIPT: Final = "install-venv.sh"
PYTHON_SCRIPT: Final = "install-python.sh"  # the interpreter, with venv and headers (system or uv-managed)
HOST_LIBRARIES_FILE: Final = "host-libraries.json"
COMMON_DOCKERFILE: Final = "Dockerfile"
IMAGE_REPO: Final = "torch-compat"
# The release the harness qualifies by default: the registry's current release (--torch overrides it;
# a variant the current release does not ship defaults to the newest release that ships it).
DEFAULT_TORCH: Final = f"torch=={load_registry().current.latest}"
DEFAULT_PYTHON: Final = "python3"
# Where an image's interpreter comes from: the base image or its distribution's packages (Debian forky's
# python3.13-3.15, an official python:3.X image), or uv (a managed CPython; free-threaded builds included).
PYTHON_SOURCES: Final = ("system", "uv")
DEFAULT_UID: Final = 1000
# numpy: torch warns on every import without it, and the suites compare against it.
TEST_PACKAGES: Final = ("pytest", "pytest-xdist", "numpy")
# How harness/images/image_build.py turns a plan into an image; part of the tag, so a change of procedure
# (where a wheelhouse is mounted, what is cleaned) is a new image, not a reused one.
BUILD_PROCEDURE: Final = 2
BUILD_TIMEOUT: Final = 6 * 3600  # seconds of silence a build step may have (pip installing a 3 GB wheel)
# Docker's predefined build arguments: they reach RUN steps but are kept out of the image history.
PROXY_ARGS: Final = tuple(
    name
    for base in ("HTTP_PROXY", "HTTPS_PROXY", "FTP_PROXY", "NO_PROXY", "ALL_PROXY")
    for name in (base, base.lower())
)
# Build arguments that must not change the tag: labels of the checkout (a new commit is not a new
# image) and the venv image of a wheelhouse build (named after the tag itself).
LABEL_ONLY_ARGS: Final = frozenset({"SOURCE_URL", "REVISION", "VENV_IMAGE"})

# Environment defaults for `harness build` / `harness run --backend` (documented in docs/containers.md).
ENV_BASE_IMAGE: Final = "HARNESS_BASE_IMAGE"
ENV_WHEELHOUSE: Final = "HARNESS_WHEELHOUSE"
ENV_TORCH: Final = "HARNESS_TORCH"
ENV_PYTHON: Final = "HARNESS_PYTHON"
ENV_PYTHON_VERSION: Final = "HARNESS_PYTHON_VERSION"
ENV_PYTHON_SOURCE: Final = "HARNESS_PYTHON_SOURCE"
ENV_INDEX_URL: Final = "HARNESS_TORCH_INDEX_URL"
ENV_PACKAGE_INDEX_URL: Final = "HARNESS_PACKAGE_INDEX_URL"
ENV_CA_BUNDLE: Final = "HARNESS_CA_BUNDLE"
ENV_BUILD_NETWORK: Final = "HARNESS_BUILD_NETWORK"

Progress = Callable[[str], None]


@dataclass(frozen=True, kw_only=True)
class BuildSpec:
    """Everything an image is built from; two equal specs give the same tag."""

    backend: Backend
    base_image: str
    python: str = DEFAULT_PYTHON  # the interpreter program (python3, python3.15, python3.14t)
    # The CPython the image is built for (3.15, 3.14t): the verifier proves it; None: the base's python3.
    interpreter: PythonKey | None = None
    python_source: str = "system"  # system | uv (PYTHON_SOURCES)
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
    generated: dict[str, bytes]  # context path -> content made by the harness
    steps: tuple[BuildStep, ...]
    inputs_hash: str

    @property
    def tag(self) -> str:
        return self.steps[-1].tag

    @property
    def venv_tag(self) -> str:
        """The image a wheelhouse build installs the venv into (removed once the image is built)."""
        return f"{self.tag}-venv"


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
        raise UsageError(f"wheelhouse {folder} is not a directory", hint="harness wheelhouse --backend BACKEND -o DIR")
    if not any(folder.glob("*.whl")):
        raise UsageError(
            f"wheelhouse {folder} holds no *.whl files", hint="harness wheelhouse --backend BACKEND -o DIR"
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


def image_python(
    backend: Backend, interpreter: PythonKey | None, base_image: str | None, source: str | None
) -> tuple[str | None, str]:
    """(base image, interpreter source) for a Python: its own base when that is its Python or one was given;
    for another Python on a Debian bookworm base the official python:3.X-slim-bookworm image (the same
    Debian); a free-threaded one, or one for a base of another distribution (Ubuntu, whose layers need
    its repositories), from uv."""
    if source is not None and source not in PYTHON_SOURCES:
        raise UsageError(f"--python-source {source!r} is not one of {', '.join(PYTHON_SOURCES)}")
    if interpreter is None:
        return base_image, source or "system"
    if source is None:
        source = "uv" if interpreter.free_threaded else "system"
    if base_image or source == "uv" or base_python(backend.base_image) == interpreter:
        return base_image, source
    if "bookworm" in backend.base_image:
        return f"python:{interpreter.version}-slim-bookworm", source
    return None, "uv"


def build_spec(
    backend_id: str | Backend,
    *,
    base_image: str | None = None,
    python: str | None = None,
    interpreter: PythonKey | str | None = None,
    python_source: str | None = None,
    torch: str | None = None,
    index_url: str | None = None,
    package_index_url: str | None = None,
    wheelhouse: str | Path | None = None,
    ca_bundle: str | Path | None = None,
    network: str | None = None,
    channel: str | None = None,
    env: Mapping[str, str] | None = None,
) -> BuildSpec:
    """The spec for a backend: explicit values, else HARNESS_* environment variables, else the registry.
    The torch index is the channel's (release, test or nightly; by default what the version implies)."""
    env = os.environ if env is None else env
    backend = backend_id if isinstance(backend_id, Backend) else get_backend(backend_id)
    key = interpreter or env.get(ENV_PYTHON_VERSION) or None
    if isinstance(key, str):
        key = parse_python(key, valid=[k.label for k in load_registry().pythons])
    base, source = image_python(
        backend, key, base_image or env.get(ENV_BASE_IMAGE), python_source or env.get(ENV_PYTHON_SOURCE)
    )
    folder = _wheelhouse(wheelhouse or env.get(ENV_WHEELHOUSE))
    torch = torch or env.get(ENV_TORCH) or (wheelhouse_torch(folder) if folder else None)
    if torch:
        _refuse_unshipped(backend, torch)
    else:
        torch = f"torch=={default_torch(backend, channel)}"
    channel = torch_channel(torch, channel)
    index = index_url or env.get(ENV_INDEX_URL) or backend.index(channel)
    package_index = package_index_url or env.get(ENV_PACKAGE_INDEX_URL) or ""
    spec = BuildSpec(
        backend=backend,
        base_image=base or backend.base_image,
        python=python or env.get(ENV_PYTHON) or (key.program if key else DEFAULT_PYTHON),
        interpreter=key,
        python_source=source,
        torch=torch,
        index_url=_no_credentials(index, "torch index"),
        package_index_url=_no_credentials(package_index, "package index") if package_index else "",
        wheelhouse=folder,
        ca_bundle=_ca_bundle(ca_bundle or env.get(ENV_CA_BUNDLE)),
        network=network or env.get(ENV_BUILD_NETWORK) or None,
    )
    _refuse_other_abi(spec)
    return spec


def _refuse_other_abi(spec: BuildSpec) -> None:
    """A wheelhouse whose torch wheels are all for another CPython than the image's is refused with one
    line before anything is built (pip would only say "no matching distribution", minutes later)."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    python = spec.interpreter  # only a Python asked for: a base image's name may not tell its Python
    if spec.wheelhouse is None or python is None:
        return
    wheels: dict[str, set[str]] = {}
    for wheel in spec.wheelhouse.glob("torch-*.whl"):
        try:
            tags = parse_wheel_filename(wheel.name)[3]
        except InvalidWheelFilename:
            continue
        wheels[wheel.name] = {tag.abi for tag in tags}
    if wheels and not any(python.tag in abis for abis in wheels.values()):
        names = ", ".join(sorted(wheels))
        raise UsageError(
            f"wheelhouse {spec.wheelhouse} holds {names}: a wheel for another ABI than the image's Python "
            f"{python.label} ({python.tag})",
            hint=f"make it for that Python: harness wheelhouse --backend {spec.backend.id} --python {python.label} "
            f"-o DIR",
        )


def _pinned_version(torch: str) -> str | None:
    """2.16.0.dev20261130 of `torch==2.16.0.dev20261130` (or of the bare version); None for a range."""
    match = re.fullmatch(r"(?:torch\s*===?\s*)?([0-9][^\s,;+]*)(\+[\w.]+)?", torch.strip())
    return match.group(1) if match else None


def default_torch(backend: Backend, channel: str | None) -> str:
    """The torch an image pins when none is given: the newest final release that ships the variant;
    on the test channel the release in candidates. A nightly has no default: it is named by its date."""
    registry = load_registry()
    if channel == "nightly":
        raise UsageError(
            "a nightly image names its nightly: --torch <release>.devYYYYMMDD", hint="e.g. --torch 2.16.0.dev20261130"
        )
    if channel == "test":
        candidates = [r for r in registry.releases.values() if not r.final and r.ships(backend.id)]
        if candidates:
            return candidates[-1].latest
    return registry.default_torch(backend.id)


def torch_channel(torch: str, asked: str | None) -> str:
    """The channel of the torch asked for: the asked one, else what a pinned version implies
    (.devYYYYMMDD: nightly; rcN or a release only in candidates: test), else release."""
    if asked:
        return asked
    version = _pinned_version(torch)
    return load_registry().channel_of(version) if version else "release"


def wheelhouse_torch(folder: Path) -> str | None:
    """The torch a wheelhouse holds (`2.13.0` of torch-2.13.0-cp311-...whl), when it holds one
    version: without --torch, a wheelhouse build installs what it was made with, not the registry's
    default (which it cannot hold unless it was made for it)."""
    versions = {w.name.split("-")[1].partition("+")[0] for w in folder.glob("torch-*.whl")}
    return versions.pop() if len(versions) == 1 else None


def _refuse_unshipped(backend: Backend, torch: str) -> None:
    """A pinned torch whose release upstream does not build for this variant cannot install: say so
    before a build fails in pip (a variant or release the registry does not list is let through)."""
    registry = load_registry()
    version = _pinned_version(torch)
    release = registry.release_of(version) if version else None
    if release is not None and backend.listed and not release.ships(backend.id):
        shipped = ", ".join(sorted(release.builds, key=registry.variant_order))
        raise UsageError(
            f"torch {release.id} is not shipped as {backend.id} (it ships {shipped})",
            hint=f"pass --torch {registry.default_torch(backend.id)}, or a release that ships {backend.id} "
            "(harness backends)",
        )


# -- the plan: context files, build arguments, tag ---------------------------------------------
def layer_dockerfile(backend: Backend) -> str | None:
    """The variant's own layer (Dockerfile.rocm, Dockerfile.xpu), as the registry names it."""
    if not backend.layer:
        return None
    name = f"Dockerfile.{backend.layer}"
    if not (DOCKERFILES_DIR / name).is_file():
        raise UsageError(f"{DOCKERFILES_DIR / name} not found (the registry's layer for {backend.id})")
    return name


def context_files(spec: BuildSpec) -> dict[str, Path]:
    """What goes into the build context from this host: context path -> file."""
    common = DOCKERFILES_DIR / COMMON_DOCKERFILE
    if not common.is_file():
        raise UsageError(f"{common} not found", hint="run from a checkout of the harness, or set HARNESS_DOCKERFILES")
    files = {
        COMMON_DOCKERFILE: common,
        INSTALL_SCRIPT: DOCKERFILES_DIR / INSTALL_SCRIPT,
        PYTHON_SCRIPT: DOCKERFILES_DIR / PYTHON_SCRIPT,
    }
    files.update(VERIFIER_FILES)
    layer = layer_dockerfile(spec.backend)
    if layer:
        files[layer] = DOCKERFILES_DIR / layer
    if spec.ca_bundle:
        files["ca-certificates/extra-ca.crt"] = spec.ca_bundle
    return files


def generated_files() -> dict[str, bytes]:
    """Context files the harness writes: the registry's host-provided libraries, for the verifier."""
    table = {lib.pattern: lib.reason for lib in host_libraries()}
    return {HOST_LIBRARIES_FILE: (json.dumps(table, indent=1, sort_keys=True) + "\n").encode()}


def wheelhouse_wheels(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.whl"))


def wheelhouse_digest(folder: Path) -> str:
    """sha256 over the names and contents of a wheelhouse's wheels (the image's torch source)."""
    digest = hashlib.sha256()
    for wheel in wheelhouse_wheels(folder):
        digest.update(f"{wheel.name} {_file_digest(wheel)}\n".encode())
    return digest.hexdigest()


def torch_source(spec: BuildSpec) -> str:
    """Where the image's torch comes from, for its label: the index, or the wheelhouse and its hash."""
    if spec.wheelhouse:
        torch_wheels = [w.name for w in wheelhouse_wheels(spec.wheelhouse) if w.name.startswith("torch-")]
        named = f" ({', '.join(torch_wheels)})" if torch_wheels else ""
        return f"wheelhouse sha256:{wheelhouse_digest(spec.wheelhouse)[:16]}{named}"
    return f"index {redact_url(spec.index_url)}"


def common_buildargs(spec: BuildSpec) -> dict[str, str]:
    backend = spec.backend
    version = spec.exact_version
    return {
        "BASE_IMAGE": spec.base_image,
        "PYTHON": spec.python,
        "PYTHON_SOURCE": spec.python_source,
        "PYTHON_VERSION": spec.interpreter.label if spec.interpreter else "",
        "TORCH_SPEC": spec.requirement,
        # an index only where torch comes from one (the label must not name an index a wheelhouse replaced)
        "TORCH_INDEX_URL": "" if spec.wheelhouse else spec.index_url,
        "PACKAGE_INDEX_URL": "" if spec.wheelhouse else spec.package_index_url,
        "TORCH_SOURCE": torch_source(spec),
        "TEST_PACKAGES": " ".join(TEST_PACKAGES),
        "COMPAT_UID": str(spec.uid),
        "BACKEND": backend.id,
        "EXPECT_LOCAL_TAG": backend.local_tag,
        "EXPECT_BUILD": backend.build,
        "EXPECT_RUNTIME": backend.runtime_version,
        "EXPECT_VERSION": version,
        "EXPECT_PYTHON": spec.interpreter.label if spec.interpreter else "",
        "EXPECT_TOOLS": " ".join(image_tools(backend)),
        "TORCH_VERSION": f"{version}+{backend.local_tag}" if version and backend.local_tag else version,
    }


def image_tools(backend: Backend) -> tuple[str, ...]:
    """The programs the shared recipe's image itself must have on PATH, checked when it is verified:
    the health check's program, unless the host injects it at run time (CUDA: the NVIDIA Container
    Toolkit brings nvidia-smi) or the variant's layer installs it afterwards (rocm7.2's rocminfo from
    AMD's apt repository, xpu's sycl-ls). For rocm7.14 that is rocminfo from the rocm-sdk-core wheel,
    in /opt/venv/bin: an image without it would only fail on the GPU host, at the health gate."""
    if backend.build == "cuda" or backend.layer or not backend.health_check:
        return ()
    return (backend.health_check[0],)


def layer_buildargs(spec: BuildSpec, common_tag: str) -> dict[str, str]:
    args = {"COMPAT_IMAGE": common_tag, "COMPAT_UID": str(spec.uid)}
    if spec.backend.build == "rocm":
        args["ROCM_VERSION"] = spec.backend.runtime_version
    return args


def _file_digest(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def inputs_hash(
    files: Mapping[str, Path],
    buildargs: Iterable[Mapping[str, str]],
    backend: Backend,
    generated: Mapping[str, bytes] | None = None,
) -> str:
    """sha256 over the context files, the build arguments (the wheelhouse's digest among them) and
    the backend's registry entry."""
    digest = hashlib.sha256(f"procedure {BUILD_PROCEDURE}\n".encode())
    for name in sorted(files):
        digest.update(f"file {name} {_file_digest(files[name])}\n".encode())
    for name, content in sorted((generated or {}).items()):
        digest.update(f"file {name} {hashlib.sha256(content).hexdigest()}\n".encode())
    for step, args in enumerate(buildargs):
        kept = {k: v for k, v in sorted(args.items()) if k not in LABEL_ONLY_ARGS}
        digest.update(f"args {step} {json.dumps(kept, sort_keys=True)}\n".encode())
    digest.update(f"backend {json.dumps(dataclasses.asdict(backend), sort_keys=True)}\n".encode())
    return digest.hexdigest()


def plan_build(spec: BuildSpec) -> BuildPlan:
    files = context_files(spec)
    generated = generated_files()
    common_args = common_buildargs(spec)
    layer = layer_dockerfile(spec.backend)
    placeholder = f"{IMAGE_REPO}/{spec.backend.id}:common"  # the layer's FROM; its real tag follows from the hash
    arg_sets = [common_args] + ([layer_buildargs(spec, placeholder)] if layer else [])
    digest = inputs_hash(files, arg_sets, spec.backend, generated)
    tag = f"{IMAGE_REPO}/{spec.backend.id}:{digest[:12]}"
    labels = source_labels()
    common_tag = f"{tag}-common" if layer else tag
    if spec.wheelhouse:
        common_args = {**common_args, "VENV_IMAGE": f"{tag}-venv"}
    steps = [BuildStep(COMMON_DOCKERFILE, common_tag, {**common_args, **labels})]
    if layer:
        steps.append(BuildStep(layer, tag, layer_buildargs(spec, common_tag)))
    return BuildPlan(spec, files, generated, tuple(steps), digest)


# -- the plan, rendered (harness build --dry-run): what would be built, from what, with no engine --
CONTEXT_DIR: Final = "<context>"  # the temp dir assemble_context() would fill


def _docker_build(step: BuildStep, network: str | None, *, target: str | None = None) -> str:
    argv = ["docker", "build", *(["--network", network] if network else []), "-f", step.dockerfile]
    argv += ["--target", target] if target else ["-t", step.tag]
    argv += [item for name, value in sorted(step.buildargs.items()) for item in ("--build-arg", f"{name}={value}")]
    return shlex.join([*argv, CONTEXT_DIR])


def plan_commands(plan: BuildPlan) -> list[str]:
    """The plan as the commands harness/images/image_build.py runs through the SDK (docker CLI spelling)."""
    spec = plan.spec
    commands: list[str] = []
    for index, step in enumerate(plan.steps):
        if index == 0 and spec.wheelhouse:
            install = [
                "docker", "run", "--name", "<install>", "--network", "none", "--user", "0:0",
                "-v", f"{spec.wheelhouse}:/mnt:ro", "<system stage>", "bash", f"/opt/torch-compat/{INSTALL_SCRIPT}",
                spec.python, spec.requirement, " ".join(TEST_PACKAGES), "wheelhouse", "/mnt",
            ]  # fmt: skip
            commands += [
                _docker_build(step, spec.network, target="system"),
                shlex.join(install),
                shlex.join(["docker", "commit", "<install>", plan.venv_tag]),
            ]
        commands.append(_docker_build(step, spec.network))
    if spec.wheelhouse:
        commands.append(shlex.join(["docker", "rmi", plan.venv_tag]))
    return commands


def plan_facts(plan: BuildPlan) -> dict[str, Any]:
    """What `harness build --dry-run --json` prints: the image, its inputs and the steps, nothing built."""
    spec, backend = plan.spec, plan.spec.backend
    return {
        "tag": plan.tag,
        "backend": backend.id,
        "base_image": spec.base_image,
        "python": f"{spec.interpreter.label if spec.interpreter else spec.python} ({spec.python_source})",
        "torch": spec.requirement,
        "torch_source": torch_source(spec),
        "runtime_source": backend.runtime_source,
        "dockerfiles": [step.dockerfile for step in plan.steps],
        "health_check": list(backend.health_check),
        "expect_tools": list(image_tools(backend)),
        "commands": plan_commands(plan),
        "inputs": {
            "hash": plan.inputs_hash,
            "procedure": BUILD_PROCEDURE,
            "files": {name: _file_digest(path)[:16] for name, path in sorted(plan.files.items())},
            "generated": {name: hashlib.sha256(data).hexdigest()[:16] for name, data in sorted(plan.generated.items())},
            "build_args": [
                {k: v for k, v in sorted(step.buildargs.items()) if k not in LABEL_ONLY_ARGS} for step in plan.steps
            ],
            "registry_entry": backend.id,
        },
    }


def render_plan(plan: BuildPlan) -> list[str]:
    """The plan as text lines: the image, what it is made of, what the tag hashes, the steps."""
    facts = plan_facts(plan)
    inputs = facts["inputs"]
    tools = ", ".join(facts["expect_tools"]) or "none (the host or a layer brings the health check's)"
    lines = [
        f"image {plan.tag} (nothing built: --dry-run)",
        f"  base image     {facts['base_image']}",
        f"  python         {facts['python']}",
        f"  torch          {facts['torch']} from {facts['torch_source']}",
        f"  dockerfiles    {', '.join(facts['dockerfiles'])}",
        f"  runtime from   {facts['runtime_source'] or 'n/a'}",
        f"  health check   {shlex.join(facts['health_check'])}; checked on PATH at build time: {tools}",
        f"  tag = sha256[:12] of procedure {inputs['procedure']}, the files, the build arguments of each step "
        f"(labels aside) and the registry entry of {plan.spec.backend.id}:",
    ]
    lines += [f"    file {name} sha256:{digest}" for name, digest in {**inputs["files"], **inputs["generated"]}.items()]
    for index, args in enumerate(inputs["build_args"], start=1):
        lines.append(f"    step {index} args " + " ".join(f"{k}={v}" for k, v in args.items()))
    lines.append("  steps:")
    lines += [f"    {number}. {command}" for number, command in enumerate(facts["commands"], start=1)]
    return lines


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
    """Write the build context into `dest` (a few small files: copies, never links to the checkout)."""
    (dest / "ca-certificates").mkdir(parents=True, exist_ok=True)  # COPY needs it even when empty
    for name, source in plan.files.items():
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        target.chmod(0o644)  # the image gets files readable by its non-root user whatever the host umask
    for name, content in plan.generated.items():
        (dest / name).write_bytes(content)
        (dest / name).chmod(0o644)
    return dest


def proxy_buildargs(env: Mapping[str, str] | None = None) -> dict[str, str]:
    env = os.environ if env is None else env
    return {name: env[name] for name in PROXY_ARGS if env.get(name)}


# -- image facts for the manifest --------------------------------------------------------------
LABEL_PREFIXES: Final = ("org.opencontainers.image.", "torch-compat.")


def describe_image(image: Any, ref: str) -> dict[str, Any]:
    """ref, id, digest (the registry digest when pulled or pushed, else the image id), backend, labels."""
    attrs = image.attrs or {}
    labels = (attrs.get("Config") or {}).get("Labels") or {}
    repo_digests = attrs.get("RepoDigests") or []
    # Pulled by digest: that is its name, whatever other registries the engine also knows it from.
    digest = ref if "@sha256:" in ref and ref in repo_digests else repo_digests[0] if repo_digests else image.id
    return {
        "ref": ref,
        "id": image.id,
        "digest": digest,
        "backend": labels.get("torch-compat.backend"),
        "labels": {k: v for k, v in sorted(labels.items()) if k.startswith(LABEL_PREFIXES)},
    }
