"""A wheel to read: a file, or a version from the cache, fetched with pip and the user's own pip settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import InfrastructureError, InputError, UsageError
from harness.images.wheel_cache import default_cache, wheel_for
from tests.images.test_wheel_api import make_wheel


def test_a_wheel_file_is_itself(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, {"torch/__init__.py": ""})
    assert wheel_for(str(wheel), tmp_path / "cache") == wheel
    with pytest.raises(InputError, match="no such wheel file"):
        wheel_for(str(tmp_path / "torch-9.9.9-py3-none-any.whl"), tmp_path / "cache")


@pytest.mark.parametrize("spec", ["latest", "2.15;rm -rf", "torch==2.15.0", ""])
def test_not_a_version_is_a_usage_error(tmp_path: Path, spec: str) -> None:
    with pytest.raises(UsageError, match="neither a wheel file nor a torch version"):
        wheel_for(spec, tmp_path)


def test_a_cached_version_is_not_fetched_again(tmp_path: Path) -> None:
    cached = make_wheel(tmp_path, {"torch/__init__.py": ""}, version="2.15.0")
    assert wheel_for("2.15.0", tmp_path) == cached  # no pip run: the fast tier's guard would fail it


def test_default_cache_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache() == tmp_path / "torch-compat" / "wheels"


@pytest.mark.slow  # runs pip
def test_a_version_is_fetched_with_the_users_pip_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's pip configuration decides where the wheel comes from (here: a local find-links
    folder and no index, as a mirror would)."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    make_wheel(mirror, {"torch/__init__.py": "__all__ = ['add']\n"}, version="2.15.0")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(mirror))
    cache = tmp_path / "cache"
    fetched = wheel_for("2.15.0", cache)
    assert fetched.parent == cache and fetched.name.startswith("torch-2.15.0-")
    refused = r"pip download of torch==2\.99\.0 failed: .*(No matching|from versions)"
    with pytest.raises(InfrastructureError, match=refused):
        wheel_for("2.99.0", cache)
