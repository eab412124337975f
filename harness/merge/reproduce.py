"""The command that reruns a column (and one test of it), from the cell's manifest alone.

A containerized cell reruns on its image by digest (the exact bytes, wherever it is pulled
or loaded); a native cell reruns with its torch build installed from its backend's index.
An imported cell was run by another CI: it has no command, only its run URL.
"""

from __future__ import annotations

import re
import shlex
from typing import Any, Final

from harness.registry import load_registry

_DIGEST_RE: Final = re.compile(r"^sha256:[0-9a-f]{64}$")


def _image_ref(image: dict[str, Any]) -> str | None:
    """`repo@sha256:...` when the image was pushed, else its local id `sha256:...`, else its tag."""
    ref, digest = image.get("ref"), image.get("digest")
    if isinstance(digest, str) and ("@sha256:" in digest or _DIGEST_RE.match(digest)):
        return digest  # repo@sha256:... once pushed or pulled; the image id for a local build
    return str(ref) if ref else None


def _run_args(manifest: dict[str, Any]) -> list[str]:
    args = ["--cell-id", str(manifest["cell_id"])]
    planned = manifest.get("planned") or {}
    extra = planned.get("pytest_args") or []
    if extra:
        args += ["--pytest-args", shlex.join(str(a) for a in extra)]
    return args


def column_command(manifest: dict[str, Any]) -> str | None:
    """The shell command that reruns this cell, or None when it cannot be rerun from here."""
    backend = str(manifest.get("backend") or "")
    mode = manifest.get("mode")
    if mode == "container":
        ref = _image_ref(manifest.get("image") or {})
        if not ref:
            return None
        return shlex.join(["harness", "run", "--backend", backend, "--image", ref, *_run_args(manifest)])
    if mode == "native":
        torch = ((manifest.get("environment") or {}).get("torch") or {}).get("version")
        info = load_registry().get(backend)
        run = ["harness", "run", "--native", "--backend", backend, *_run_args(manifest)]
        if manifest.get("variant") == "cpu-only":
            run.insert(2, "--cpu-only")
        if not torch or info is None:
            return shlex.join(run)
        install = ["python3", "-m", "pip", "install", f"torch=={torch}", "--index-url", info.wheel_index]
        return f"{shlex.join(install)} && {shlex.join(run)}"
    return None


def test_command(column: str | None, nodeid: str) -> str | None:
    """The column's command narrowed to one test."""
    if not column:
        return None
    return f"{column} --test {shlex.quote(nodeid)}"
