"""harness/run/wheelhouse.py without a network: the pip command for the image's platform, the pip
settings it ignores, and the torch wheel judged by what it says it is. (The real download of a
cu130 wheelhouse from PyPI runs in tests/docker/conftest.py's cu130_wheelhouse.)"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from harness.errors import UsageError
from harness.registry import get_backend
from harness.run import wheelhouse


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
