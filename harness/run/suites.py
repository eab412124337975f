"""Facts about the suites a cell runs: their feature rows (features.toml) and their version."""

from __future__ import annotations

import hashlib
import subprocess
import tomllib
from pathlib import Path

from harness.cell import FeatureInfo
from harness.errors import InputError, UsageError
from harness.interpreters import python_key
from harness.model import DEVICE_FAMILIES


def load_features(suites_dir: Path, path: Path | None = None) -> dict[str, FeatureInfo]:
    """The rows the suites declare (title, since, claim, scope, source), for the manifest: from
    `path`, else the suites' own features.toml."""
    # A features file that cannot be read is an input error (exit 4), as a feature map is: one code
    # for one mistake in every verb (merge --features, run --features, import --feature-map).
    path = path or suites_dir / "features.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if path != suites_dir / "features.toml":
            raise InputError(f"{path}: no such features file") from None
        raise UsageError(f"{suites_dir}: no features.toml", hint="is this the suites/ directory?") from None
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a text file") from None
    except tomllib.TOMLDecodeError as err:
        raise InputError(f"{path}: invalid TOML: {err}") from None
    features = data.get("features")
    if not isinstance(features, dict):
        raise InputError(f"{path}: needs [features.<id>] tables")
    rows = {str(fid): FeatureInfo.from_json(info) for fid, info in features.items() if isinstance(info, dict)}
    for fid, info in rows.items():
        unknown = sorted(set(info.devices) - set(DEVICE_FAMILIES))
        if unknown:
            raise InputError(
                f"{path}: features.{fid}.devices: unknown device famil(ies) {unknown}; known: {DEVICE_FAMILIES}"
            )
        for where, pythons in [("python", info.python), *((f"groups.{g.match}.python", g.python) for g in info.groups)]:
            wrong = [p for p in pythons if (key := python_key(p)) is None or key.label != p]
            if wrong:
                raise UsageError(f"{path}: features.{fid}.{where}: {wrong} are no Pythons like 3.15 or 3.14t")
    return rows


def suite_sha(suites_dir: Path) -> str:
    """The git commit of the suites (+dirty when they differ from it), else a content hash."""
    try:
        sha = subprocess.run(
            ["git", "-C", str(suites_dir), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(suites_dir), "status", "--porcelain", "--", "."],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        return sha + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        digest = hashlib.sha256()
        for path in sorted(suites_dir.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(suites_dir)).encode())
                digest.update(path.read_bytes())
        return "content:" + digest.hexdigest()[:16]
