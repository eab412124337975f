"""harness/images/wheelhouse.py without a network: the pip command for the image's platform, the pip
settings it ignores, and the torch wheel judged by what it says it is. (The real download of a
cu130 wheelhouse from PyPI runs in tests/docker/conftest.py's cu130_wheelhouse.)"""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from harness.errors import InfrastructureError, UsageError
from harness.images import wheelhouse
from harness.registry import get_backend


def test_every_manylinux_tag_the_glibc_runs_is_asked_for() -> None:
    """pip does not widen --platform: cuDNN/cuBLAS for CUDA 13.0 are manylinux_2_27, torch is _2_28."""
    target = wheelhouse.target_for("debian:bookworm-slim")
    assert (target.python, target.glibc_minor) == ("3.11", 36)
    tags = target.platforms
    assert "manylinux_2_36_x86_64" in tags and "manylinux_2_27_x86_64" in tags and "manylinux_2_28_x86_64" in tags
    assert "manylinux_2_17_x86_64" in tags and "manylinux2014_x86_64" in tags and "manylinux1_x86_64" in tags
    assert "manylinux_2_37_x86_64" not in tags  # newer than the image's glibc: would not run there
    assert wheelhouse.target_for("torch-compat/local-base:bookworm-abc").python == "3.11"
    assert wheelhouse.target_for("ubuntu:24.04").python == "3.12"


def test_an_unknown_base_needs_its_python_and_glibc() -> None:
    with pytest.raises(UsageError, match="--python-version"):
        wheelhouse.target_for("registry.example/base:1")
    assert wheelhouse.target_for("registry.example/base:1", "3.12", "2.35").glibc_minor == 35


def test_the_download_command(tmp_path: Path) -> None:
    argv = wheelhouse.download_argv(
        get_backend("cu130"), "torch==2.13.0", wheelhouse.Target("3.11", 36), tmp_path,
        index_url="https://download.pytorch.org/whl/cu130", package_index_url=wheelhouse.PYPI,
    )  # fmt: skip
    assert argv[1:4] == ["-m", "pip", "download"] and "--only-binary=:all:" in argv
    assert argv[argv.index("--abi") + 1] == "cp311" and argv[argv.index("--python-version") + 1] == "3.11"
    assert argv[argv.index("--index-url") + 1] == "https://download.pytorch.org/whl/cu130"
    assert argv[argv.index("--extra-index-url") + 1] == wheelhouse.PYPI
    assert argv[-4:] == ["torch==2.13.0", "pytest", "pytest-xdist", "numpy"]


def test_pip_settings_that_add_sources_are_ignored() -> None:
    env = wheelhouse.pip_env({"PIP_FIND_LINKS": "/opt/wheels", "PIP_INDEX_URL": "x", "PIP_CERT": "/ca.pem", "A": "1"})
    assert "PIP_FIND_LINKS" not in env and "PIP_INDEX_URL" not in env
    assert env["PIP_CERT"] == "/ca.pem" and env["A"] == "1" and env["PIP_CONFIG_FILE"]


def test_the_torch_wheel_says_what_it_is(tmp_path: Path) -> None:
    """PyPI's plain torch wheel has no tag in its name; its torch/version.py says +cu130."""
    wheel = tmp_path / "torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(
            "torch/version.py",
            "from typing import Optional\n__all__ = ['__version__']\n__version__ = '2.13.0+cu130'\n"
            "debug = False\ncuda: Optional[str] = '13.0'\ngit_version = 'abc'\nhip: Optional[str] = None\n"
            "xpu: Optional[str] = None\n",
        )
    facts = wheelhouse.torch_wheel_facts(wheel)
    assert (facts.version, facts.build, facts.cuda, facts.hip) == ("2.13.0+cu130", "cuda", "13.0", None)


# -- a dependency published only as an sdist (ROCm 7.14's `rocm` meta package) ----------------------
BACKEND_PY = """
import base64, hashlib, zipfile

NAME, VERSION = "fakerocm", "7.14.0"
REQUIRES = ["fakerocm-sdk-core==7.14.0", 'fakerocm-sdk-libraries==7.14.0; extra == "libraries"']


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    info = f"{NAME}-{VERSION}.dist-info"
    files = {
        "fakerocm/__init__.py": "",
        f"{info}/METADATA": "\\n".join(
            ["Metadata-Version: 2.1", f"Name: {NAME}", f"Version: {VERSION}", "Provides-Extra: libraries"]
            + [f"Requires-Dist: {r}" for r in REQUIRES]
        ) + "\\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\\nGenerator: fake\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
    }
    name = f"{NAME}-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(f"{wheel_directory}/{name}", "w") as archive:
        rows = []
        for path, text in files.items():
            archive.writestr(path, text)
            digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
            rows.append(f"{path},sha256={digest},{len(text)}")
        archive.writestr(f"{info}/RECORD", "\\n".join([*rows, f"{info}/RECORD,,"]) + "\\n")
    return name
"""


def _wheel(index: Path, name: str, version: str, files: dict[str, str], requires: tuple[str, ...] = ()) -> None:
    folder = index / name
    folder.mkdir(parents=True, exist_ok=True)
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    meta = [f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}"] + [f"Requires-Dist: {r}" for r in requires]
    files = {**files, f"{info}/METADATA": "\n".join(meta) + "\n", f"{info}/RECORD": ""}
    files[f"{info}/WHEEL"] = "Wheel-Version: 1.0\nGenerator: fake\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    with zipfile.ZipFile(folder / f"{name.replace('-', '_')}-{version}-py3-none-any.whl", "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)


def _sdist(index: Path, name: str, version: str) -> None:
    folder = index / name
    folder.mkdir(parents=True, exist_ok=True)
    members = {
        "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n',
        "backend.py": BACKEND_PY,
        "PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
    }
    with tarfile.open(folder / f"{name}-{version}.tar.gz", "w:gz") as archive:
        for member, text in members.items():
            data = text.encode()
            entry = tarfile.TarInfo(f"{name}-{version}/{member}")
            entry.size = len(data)
            archive.addfile(entry, io.BytesIO(data))


def _simple_index(index: Path) -> str:
    """PEP 503 pages over the folders, so pip reads a file:// URL as an index (no network)."""
    for folder in index.iterdir():
        links = "".join(f'<a href="{f.name}">{f.name}</a>\n' for f in sorted(folder.iterdir()) if f.suffix != ".html")
        (folder / "index.html").write_text(f"<html><body>\n{links}</body></html>\n")
    return index.as_uri()


@pytest.mark.slow  # runs pip (download, wheel) on a local index
def test_an_sdist_only_dependency_is_built_here_and_the_download_goes_on(tmp_path: Path) -> None:
    """torch (a fake 2.15.0+rocm7.14) requires fakerocm[libraries], published only as an sdist as
    AMD's `rocm` is: pip download --platform refuses sdists, so the wheelhouse builds its pure-Python
    wheel first and then resolves what that wheel requires through the extra, all from a local index."""
    index = tmp_path / "index"
    version_py = "__version__ = '2.15.0+rocm7.14'\ncuda = None\nhip = '7.14.25001'\nxpu = None\n"
    _wheel(index, "torch", "2.15.0+rocm7.14", {"torch/version.py": version_py}, ("fakerocm[libraries]==7.14.0",))
    _sdist(index, "fakerocm", "7.14.0")
    _wheel(index, "fakerocm-sdk-core", "7.14.0", {"_fakerocm_sdk_core/__init__.py": ""})
    _wheel(index, "fakerocm-sdk-libraries", "7.14.0", {"_fakerocm_sdk_libraries/__init__.py": ""})
    for name in ("pytest", "pytest-xdist", "numpy"):
        _wheel(index, name, "1.0", {f"{name.replace('-', '_')}/__init__.py": ""})
    url = _simple_index(index)
    lines: list[str] = []
    made = wheelhouse.make_wheelhouse(
        "rocm7.14", tmp_path / "wheels", torch="2.15.0", index_url=url, package_index_url=url, progress=lines.append
    )
    names = sorted(w.name for w in made.path.glob("*.whl"))
    assert names == [
        "fakerocm-7.14.0-py3-none-any.whl",
        "fakerocm_sdk_core-7.14.0-py3-none-any.whl",
        "fakerocm_sdk_libraries-7.14.0-py3-none-any.whl",  # through the extra torch asks for
        "numpy-1.0-py3-none-any.whl",
        "pytest-1.0-py3-none-any.whl",
        "pytest_xdist-1.0-py3-none-any.whl",
        "torch-2.15.0+rocm7.14-py3-none-any.whl",
    ]
    assert made.torch.version == "2.15.0+rocm7.14" and made.torch.build == "rocm"
    assert "  fakerocm==7.14.0 has no wheel for the image: building it from its sdist (pure Python only)" in lines


def test_what_pip_found_no_wheel_of() -> None:
    assert wheelhouse.sdist_only("ERROR: No matching distribution found for rocm[libraries,device-all]==7.14.0") == (
        "rocm==7.14.0"
    )
    assert wheelhouse.sdist_only("ERROR: No matching distribution found for torch==2.15.0") is None  # just missing
    assert wheelhouse.sdist_only("ERROR: Could not install packages due to an OSError") is None


# -- an unreachable backend index: pip quietly takes torch from the other index -----------------------
UNREACHABLE = "http://127.0.0.1:9/whl/cpu"  # the discard port: connection refused at once


def test_an_index_that_does_not_answer_is_named_with_the_reason(tmp_path: Path) -> None:
    index = tmp_path / "index"
    _wheel(index, "torch", "2.13.0", {"torch/version.py": "__version__ = '2.13.0'\n"})
    assert wheelhouse.index_unreachable(_simple_index(index)) is None
    assert wheelhouse.index_unreachable((tmp_path / "none").as_uri()) == f"no such folder {tmp_path / 'none'}"
    why = wheelhouse.index_unreachable(UNREACHABLE, timeout=5)
    assert why and "refused" in why.lower()


def test_only_what_the_download_added_is_removed(tmp_path: Path) -> None:
    (tmp_path / "kept.whl").write_text("mine")
    (tmp_path / "torch-2.13.0-py3-none-any.whl").write_text("fetched")
    (tmp_path / "unpacked").mkdir()
    assert wheelhouse.remove_fetched(tmp_path, {"kept.whl"}) == ["torch-2.13.0-py3-none-any.whl", "unpacked"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.whl"]


@pytest.mark.slow  # runs pip download on a local index
def test_an_unreachable_index_is_named_as_the_cause_and_the_wrong_wheels_are_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cpu index does not answer; the package index (PyPI's role) has the CUDA build of torch,
    which pip takes instead: the error names the index, not the wheel, and the wheels are gone."""
    monkeypatch.setenv("PIP_RETRIES", "0")
    index = tmp_path / "index"
    version_py = "__version__ = '2.13.0+cu130'\ncuda = '13.0'\nhip = None\nxpu = None\n"
    _wheel(index, "torch", "2.13.0", {"torch/version.py": version_py})
    for name in ("pytest", "pytest-xdist", "numpy"):
        _wheel(index, name, "1.0", {f"{name.replace('-', '_')}/__init__.py": ""})
    dest = tmp_path / "wheels"
    dest.mkdir()
    (dest / "mine.txt").write_text("kept")
    with pytest.raises(InfrastructureError) as error:
        wheelhouse.make_wheelhouse(
            "cpu", dest, torch="2.13.0", index_url=UNREACHABLE, package_index_url=_simple_index(index),
            progress=lambda _: None,
        )  # fmt: skip
    message = str(error.value)
    assert message.startswith(f"the cpu index {UNREACHABLE} is unreachable from here (")
    assert "so pip took torch-2.13.0-py3-none-any.whl from file://" in message
    assert "removed the 4 file(s) it fetched" in message and "--index-url a mirror" in message
    assert sorted(p.name for p in dest.iterdir()) == ["mine.txt"]
