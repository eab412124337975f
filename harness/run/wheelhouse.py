"""A wheelhouse for an air-gapped image build: torch for a backend and everything the image
installs, downloaded with pip for the image's Python and platform (not this host's).

pip does not widen a `--platform` tag: asked for manylinux_2_28 it refuses a wheel tagged
manylinux_2_27 (cuDNN, cuBLAS, cuRAND, cuSOLVER for CUDA 13.0 are), so every manylinux tag the
image's glibc can run is passed. The torch wheel is then read (its torch/version.py) and judged
by harness/torch_build.py, so a wheelhouse of the wrong build is refused before any image.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from harness.errors import InfrastructureError, UsageError
from harness.registry import Backend, get_backend
from harness.run import images
from harness.torch_build import TorchFacts, build_of, mismatches

PYPI: Final = "https://pypi.org/simple"
# The Python and glibc of the base images the registry names (and the local bases made from them).
KNOWN_BASES: Final = (
    ("bookworm", "3.11", 36),
    ("trixie", "3.13", 41),
    ("ubuntu:24.04", "3.12", 39),
    ("noble", "3.12", 39),
    ("ubuntu:22.04", "3.10", 35),
    ("jammy", "3.10", 35),
)
EXTRA_PACKAGES: Final = ()  # beyond torch and images.TEST_PACKAGES (numpy is one of those)
# pip settings that decide where packages come from: this command decides that itself.
_SOURCE_SETTINGS: Final = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX", "PIP_CONFIG_FILE")


@dataclass(frozen=True)
class Target:
    python: str  # e.g. 3.11
    glibc_minor: int  # 36 for glibc 2.36
    arch: str = "x86_64"

    @property
    def platforms(self) -> list[str]:
        """Every manylinux tag this glibc runs, the legacy names included."""
        tags = [f"manylinux_2_{minor}_{self.arch}" for minor in range(self.glibc_minor, 4, -1)]
        return [*tags, f"manylinux2014_{self.arch}", f"manylinux2010_{self.arch}", f"manylinux1_{self.arch}"]


@dataclass(frozen=True)
class Wheelhouse:
    path: Path
    wheels: int
    size: int
    torch: TorchFacts


def target_for(base_image: str, python: str | None = None, glibc: str | None = None) -> Target:
    known = next(((py, minor) for key, py, minor in KNOWN_BASES if key in base_image), None)
    if (python is None or glibc is None) and known is None:
        raise UsageError(
            f"cannot tell the Python and glibc of base image {base_image}",
            hint="pass --python-version 3.X and --glibc 2.NN (what the image has)",
        )
    py = python or known[0]  # type: ignore[index]
    minor = int(glibc.split(".")[1]) if glibc else known[1]  # type: ignore[index]
    if not re.fullmatch(r"3\.\d+", py):
        raise UsageError(f"--python-version must look like 3.11, not {py!r}")
    return Target(python=py, glibc_minor=minor)


def download_argv(
    backend: Backend, requirement: str, target: Target, dest: Path, *, index_url: str, package_index_url: str
) -> list[str]:
    abi = "cp" + target.python.replace(".", "")
    argv = [
        sys.executable, "-m", "pip", "download", "--only-binary=:all:", "--dest", str(dest),
        "--python-version", target.python, "--implementation", "cp", "--abi", abi,
        "--index-url", index_url,
    ]  # fmt: skip
    if package_index_url != index_url:
        argv += ["--extra-index-url", package_index_url]
    for platform in target.platforms:
        argv += ["--platform", platform]
    return [*argv, requirement, *images.TEST_PACKAGES, *EXTRA_PACKAGES]


def pip_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """This environment without the pip settings that would add other sources (a local +cpu wheel)."""
    env = os.environ if env is None else env
    kept = {k: v for k, v in env.items() if k not in _SOURCE_SETTINGS}
    return {**kept, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def torch_wheel_facts(wheel: Path) -> TorchFacts:
    """What a torch wheel says it is, read from its torch/version.py (no install, no import)."""
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read("torch/version.py").decode("utf-8", "replace")
    values = dict(re.findall(r"^(\w+)\s*(?::\s*[^=]+)?=\s*'([^']*)'", text, re.MULTILINE))
    cuda, hip, xpu = (values.get(name) or None for name in ("cuda", "hip", "xpu"))
    version = values.get("__version__", "")
    return TorchFacts(version=version, build=build_of(cuda, hip, xpu), cuda=cuda, hip=hip, xpu=xpu)


def make_wheelhouse(
    backend_id: str,
    dest: Path,
    *,
    torch: str | None = None,
    base_image: str | None = None,
    python: str | None = None,
    glibc: str | None = None,
    index_url: str | None = None,
    package_index_url: str | None = None,
    progress: Callable[[str], None] = print,
) -> Wheelhouse:
    backend = get_backend(backend_id)
    spec = images.build_spec(
        backend_id, torch=torch, base_image=base_image, index_url=index_url, package_index_url=package_index_url
    )
    target = target_for(spec.base_image, python, glibc)
    dest.mkdir(parents=True, exist_ok=True)
    argv = download_argv(
        backend,
        spec.requirement,
        target,
        dest,
        index_url=spec.index_url,
        package_index_url=spec.package_index_url or PYPI,
    )
    progress(
        f"downloading {spec.requirement} for {backend.id} from {spec.index_url}, CPython {target.python}, "
        f"manylinux glibc <= 2.{target.glibc_minor}, into {dest}"
    )
    done = subprocess.run(argv, env=pip_env(), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")] or done.stderr.splitlines()
        raise InfrastructureError(
            f"pip download for the {backend.id} wheelhouse failed: {(errors or ['no output'])[-1]}",
            hint="check the index (--index-url) is reachable from here; run pip download by hand to see more",
        )
    torch_wheels = sorted(dest.glob("torch-*.whl"))
    if not torch_wheels:
        raise InfrastructureError(f"pip download left no torch wheel in {dest}")
    facts = torch_wheel_facts(torch_wheels[-1])
    wrong = mismatches(facts, backend.expected(spec.exact_version))
    if wrong:
        raise InfrastructureError(
            f"{torch_wheels[-1].name} is not the {backend.id} build: {'; '.join(wrong)}",
            hint=f"download from the backend's index ({backend.wheel_index}) or a mirror of it",
        )
    wheels = sorted(dest.glob("*.whl"))
    return Wheelhouse(dest, len(wheels), sum(w.stat().st_size for w in wheels), facts)
