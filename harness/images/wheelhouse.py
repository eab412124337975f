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
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from harness import outputs
from harness.errors import InfrastructureError, UsageError
from harness.images import recipes
from harness.interpreters import PythonKey, parse_python
from harness.registry import Backend
from harness.torch_build import TorchFacts, build_of, mismatches

PYPI: Final = "https://pypi.org/simple"
# The Python and glibc of the base images the registry names (and the local bases made from them).
KNOWN_BASES: Final = (
    ("bookworm", "3.11", 36),
    ("trixie", "3.13", 41),
    ("forky", "3.14", 42),
    ("ubuntu:24.04", "3.12", 39),
    ("noble", "3.12", 39),
    ("ubuntu:22.04", "3.10", 35),
    ("jammy", "3.10", 35),
)
EXTRA_PACKAGES: Final = ()  # beyond torch and recipes.TEST_PACKAGES (numpy is one of those)
# pip settings that decide where packages come from: this command decides that itself.
# (A constraint decides what may be downloaded too: a machine whose pip caps torch at 2.14.1 must
# still be able to make a 2.15.0 wheelhouse, since --torch pins it.)
_SOURCE_SETTINGS: Final = (
    "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX", "PIP_CONFIG_FILE", "PIP_CONSTRAINT",
)  # fmt: skip
# pip's last word when no candidate fits: `No matching distribution found for rocm[libraries]==7.14.0`.
_NO_DISTRIBUTION: Final = re.compile(
    r"No matching distribution found for ([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?(\S*)"
)
_INDEX_OPTIONS: Final = frozenset({"--index-url", "--extra-index-url"})
MAX_SDISTS: Final = 5  # sdist-only dependencies built per wheelhouse before giving up


@dataclass(frozen=True)
class Target:
    python: str  # e.g. 3.11 (3.14t: free-threaded)
    glibc_minor: int  # 36 for glibc 2.36
    arch: str = "x86_64"

    @property
    def key(self) -> PythonKey:
        return parse_python(self.python, what="--python")

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
    py = parse_python(python or known[0], what="--python").label  # type: ignore[index]
    minor = int(glibc.split(".")[1]) if glibc else known[1]  # type: ignore[index]
    return Target(python=py, glibc_minor=minor)


def download_argv(
    backend: Backend, requirement: str, target: Target, dest: Path, *, index_url: str, package_index_url: str
) -> list[str]:
    key = target.key  # pip takes the version without the free-threaded mark, the ABI with it (cp314t)
    argv = [
        sys.executable, "-m", "pip", "download", "--only-binary=:all:", "--dest", str(dest),
        "--python-version", key.version, "--implementation", "cp", "--abi", key.tag,
        "--index-url", index_url,
    ]  # fmt: skip
    if package_index_url != index_url:
        argv += ["--extra-index-url", package_index_url]
    for platform in target.platforms:
        argv += ["--platform", platform]
    return [*argv, requirement, *recipes.TEST_PACKAGES, *EXTRA_PACKAGES]


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


def _pip_error(stderr: str) -> str:
    errors = [line for line in stderr.splitlines() if line.startswith("ERROR")] or stderr.splitlines()
    return (errors or ["no output"])[-1]


def sdist_only(stderr: str) -> str | None:
    """The dependency pip found no wheel of (`rocm==7.14.0` of `...found for rocm[libraries]==7.14.0`),
    or None; torch itself is never one (a torch missing from the index is just missing)."""
    match = _NO_DISTRIBUTION.search(stderr)
    if not match or _key(match.group(1)) == "torch":
        return None
    return f"{match.group(1)}{match.group(2)}"


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _download(argv: list[str], dest: Path, backend_id: str, *, progress: Callable[[str], None]) -> None:
    """pip download, with the pure-Python dependencies that are published only as an sdist built into
    wheels here first. pip's --platform needs --only-binary=:all:, which refuses an sdist; ROCm 7.14's
    `rocm` meta package is one ("we only distribute it as an sdist": TheRock's setup.py). Built here
    it is the wheel pip would build in the image (py3-none-any; with no GPU, its default target
    family), and the install container then needs no build backend and no network."""
    built: set[str] = set()
    while True:
        done = subprocess.run(argv, env=pip_env(), capture_output=True, text=True, check=False)
        if done.returncode == 0:
            return
        requirement = sdist_only(done.stderr)
        if requirement is None or requirement in built or len(built) >= MAX_SDISTS:
            raise InfrastructureError(
                f"pip download for the {backend_id} wheelhouse failed: {_pip_error(done.stderr)}",
                hint="check the index (--index-url) is reachable from here; run pip download by hand to see more",
            )
        progress(f"  {requirement} has no wheel for the image: building it from its sdist (pure Python only)")
        _build_pure_wheel(argv, requirement, dest)
        built.add(requirement)
        if "--find-links" not in argv:
            argv = [*argv, "--find-links", str(dest)]  # the next download takes the wheel built here


def _build_pure_wheel(download: list[str], requirement: str, dest: Path) -> None:
    """`pip wheel --no-deps` of one sdist, from the same indexes; refused unless the wheel is pure Python
    (a compiled one would be this host's, not the image's)."""
    indexes = [a for i, a in enumerate(download) if a in _INDEX_OPTIONS or download[i - 1] in _INDEX_OPTIONS]
    with tempfile.TemporaryDirectory(prefix="torch-compat-sdist-") as tmp:
        argv = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--ignore-requires-python", "--wheel-dir", tmp]
        done = subprocess.run(
            [*argv, *indexes, requirement], env=pip_env(), capture_output=True, text=True, check=False
        )
        wheels = sorted(Path(tmp).glob("*.whl"))
        if done.returncode != 0 or not wheels:
            raise InfrastructureError(f"building {requirement} from its sdist failed: {_pip_error(done.stderr)}")
        impure = [w.name for w in wheels if not w.name.endswith("-none-any.whl")]
        if impure:
            raise InfrastructureError(
                f"{requirement} is published only as an sdist and is not pure Python (built {impure[0]} here)",
                hint="build its wheel for the image's Python and platform (in a container of the base image) "
                "and put it in the wheelhouse",
            )
        for wheel in wheels:
            outputs.copy_file(wheel, dest / wheel.name)


def index_unreachable(index_url: str, timeout: float = 20.0) -> str | None:
    """Why torch's page of a simple index cannot be read from here, or None when the index answers
    (an HTTP error is an answer). pip skips an unreachable index without a word at its default
    verbosity and resolves from the others, so the wheelhouse asks after a wrong wheel."""
    if index_url.startswith("file:"):  # a local index (a folder of PEP 503 pages)
        folder = Path(urllib.request.url2pathname(urllib.parse.urlparse(index_url).path))
        return None if folder.is_dir() else f"no such folder {folder}"
    try:
        with urllib.request.urlopen(f"{index_url.rstrip('/')}/torch/", timeout=timeout) as response:
            response.read(1)
    except urllib.error.HTTPError:
        return None
    except (OSError, ValueError) as err:
        return str(getattr(err, "reason", None) or err)
    return None


def remove_fetched(dest: Path, there_before: set[str]) -> list[str]:
    """Remove what this download added to `dest` (gigabytes of the wrong wheels), never what was there."""
    removed = sorted(entry.name for entry in dest.iterdir() if entry.name not in there_before)
    for name in removed:
        path = dest / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    return removed


def make_wheelhouse(
    backend_id: str | Backend,
    dest: Path,
    *,
    torch: str | None = None,
    base_image: str | None = None,
    python: str | None = None,
    glibc: str | None = None,
    index_url: str | None = None,
    package_index_url: str | None = None,
    channel: str | None = None,
    progress: Callable[[str], None] = print,
) -> Wheelhouse:
    spec = recipes.build_spec(
        backend_id,  # resolved there, once, when a caller names it in text
        torch=torch,
        base_image=base_image,
        index_url=index_url,
        package_index_url=package_index_url,
        channel=channel,
    )
    backend = spec.backend
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
    there_before = {entry.name for entry in dest.iterdir()}
    try:
        _download(argv, dest, backend.id, progress=progress)
    except InfrastructureError:
        remove_fetched(dest, there_before)
        raise
    torch_wheels = sorted(dest.glob("torch-*.whl"))
    if not torch_wheels:
        remove_fetched(dest, there_before)
        raise InfrastructureError(f"pip download left no torch wheel in {dest}")
    facts = torch_wheel_facts(torch_wheels[-1])
    wrong = mismatches(facts, backend.expected(spec.exact_version))
    if wrong:
        removed = remove_fetched(dest, there_before)
        cleaned = f"removed the {len(removed)} file(s) it fetched"
        unreachable = index_unreachable(spec.index_url)
        if unreachable:  # pip said nothing of it and took torch from the other index: the cause, not the wheel
            raise InfrastructureError(
                f"the {backend.id} index {spec.index_url} is unreachable from here ({unreachable}), so pip took "
                f"{torch_wheels[-1].name} from {spec.package_index_url or PYPI} instead, which is not the "
                f"{backend.id} build; {cleaned}",
                hint="make the index reachable (a proxy: HTTPS_PROXY) or pass --index-url a mirror of it",
            )
        raise InfrastructureError(
            f"{torch_wheels[-1].name} is not the {backend.id} build: {'; '.join(wrong)}; {cleaned}",
            hint=f"download from the backend's index ({spec.index_url}) or a mirror of it",
        )
    wheels = sorted(dest.glob("*.whl"))
    return Wheelhouse(dest, len(wheels), sum(w.stat().st_size for w in wheels), facts)
