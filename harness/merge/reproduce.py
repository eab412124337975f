"""The command that reruns a column (and one test of it), from the cell's manifest alone.

A containerized cell reruns on its image by digest (the exact bytes, wherever it is pulled
or loaded); a native cell reruns with its torch build installed from its backend's index.
An imported cell was run by another CI: it has no command, only its run URL.
"""

from __future__ import annotations

import re
import shlex
from typing import Final

from harness.cell import ImageInfo, Manifest
from harness.interpreters import PythonKey, id_tag, python_key
from harness.registry import load_registry

_DIGEST_RE: Final = re.compile(r"^sha256:[0-9a-f]{64}$")


def _image_ref(image: ImageInfo) -> str | None:
    """`repo@sha256:...` when the image was pushed, else its local id `sha256:...`, else its tag."""
    digest = image.digest
    if digest and ("@sha256:" in digest or _DIGEST_RE.match(digest)):
        return digest  # repo@sha256:... once pushed or pulled; the image id for a local build
    return image.ref


def _python(manifest: Manifest) -> PythonKey | None:
    """The Python a rerun must ask for: the planned one, else (natively) the recorded one when it is not the
    default image's (a 3.15 venv's column reruns on python3.15)."""
    planned = python_key(manifest.planned.python) if manifest.planned else None
    if planned is not None:
        return planned
    ran = manifest.environment.python_key if manifest.environment else None
    backend = load_registry().get(manifest.backend)
    if manifest.mode != "native" or backend is None or id_tag(ran, backend.base_python) is None:
        return None
    return ran


def _run_args(manifest: Manifest) -> list[str]:
    args = ["--cell-id", manifest.cell_id]
    python = _python(manifest)
    if python is not None:
        args += ["--python", python.label]
    planned = manifest.planned
    if planned and planned.suites:
        args += ["--suites", planned.suites]
    if planned and planned.features:
        args += ["--features", planned.features]
    extra = planned.pytest_args if planned else ()
    if extra:
        args += ["--pytest-args", shlex.join(extra)]
    return args


def column_command(manifest: Manifest) -> str | None:
    """The shell command that reruns this cell, or None when it cannot be rerun from here."""
    backend = manifest.backend
    if manifest.mode == "container":
        ref = _image_ref(manifest.image) if manifest.image else None
        if not ref:
            return None
        return shlex.join(["harness", "run", "--backend", backend, "--image", ref, *_run_args(manifest)])
    if manifest.mode == "native":
        torch = manifest.torch
        info = load_registry().get(backend)
        run = ["harness", "run", "--native", "--backend", backend, *_run_args(manifest)]
        if manifest.variant == "cpu-only":
            run.insert(2, "--cpu-only")
        if not torch or info is None:
            return shlex.join(run)
        # a nightly or a release candidate reinstalls from its own channel's index
        channel = manifest.channel or load_registry().channel_of(torch)
        python = _python(manifest)
        pip = [python.program if python else "python3", "-m", "pip", "install"]
        install = [*pip, f"torch=={torch}", "--index-url", info.index(channel)]
        return f"{shlex.join(install)} && {shlex.join(run)}"
    return None
