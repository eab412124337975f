"""A torch wheel to read, given as a file or as a version fetched once into a cache.

A version is fetched with `pip download --no-deps --only-binary=:all:` and the caller's own pip
settings (config file, PIP_INDEX_URL, a mirror or proxy): the wheel is only read, never installed, so
whichever build pip picks for this interpreter has the same Python sources as the others of its release.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Final

from harness.errors import InfrastructureError, InputError, UsageError

# A PEP 440 version, optionally with a local tag: 2.15.0, 2.16.0.dev20261130, 2.15.0+cu132.
_VERSION: Final = re.compile(r"\d+(?:\.\d+)*(?:(?:a|b|rc|\.post|\.dev)\d+)*(?:\+[A-Za-z0-9.]+)?")


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "torch-compat" / "wheels"


def _cached(cache: Path, package: str, version: str) -> Path | None:
    """A wheel of exactly this version already in the cache (wheel names write `+` as is)."""
    if not cache.is_dir():
        return None
    found = sorted(p for p in cache.glob(f"{package}-{version}-*.whl") if p.is_file())
    return found[0] if found else None


def _pip_error(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR:")]
    return (errors or lines or ["no output"])[-1]


def wheel_for(spec: str, cache: Path, package: str = "torch", timeout: float = 1800) -> Path:
    """The wheel file `spec` names: an existing `.whl` path, or a version (`2.15.0`) from the cache,
    downloaded there first when missing."""
    path = Path(spec)
    if spec.endswith(".whl") or os.sep in spec:
        if not path.is_file():
            raise InputError(f"{spec}: no such wheel file")
        return path
    if not _VERSION.fullmatch(spec):
        raise UsageError(f"{spec!r} is neither a wheel file nor a {package} version (like 2.15.0)")
    hit = _cached(cache, package, spec)
    if hit is not None:
        return hit
    cache.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--dest", str(cache)]
    try:
        done = subprocess.run(
            [*argv, f"{package}=={spec}"], capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise InfrastructureError(f"pip download of {package}=={spec} took over {timeout:.0f} s") from None
    if done.returncode != 0:
        raise InfrastructureError(
            f"pip download of {package}=={spec} failed: {_pip_error(done.stderr)}",
            hint="check the index is reachable (your pip config is used), or give the wheel file instead",
        )
    hit = _cached(cache, package, spec)
    if hit is None:  # pip normalised the name (a local tag written differently): take what it saved
        saved = sorted(cache.glob(f"{package}-{spec.partition('+')[0]}*.whl"))
        if not saved:
            raise InfrastructureError(f"pip download of {package}=={spec} left no wheel in {cache}")
        hit = saved[0]
    return hit
