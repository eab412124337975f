"""What this host can run: the install line for its torch (the full host report comes with `harness doctor`)."""

from __future__ import annotations

import os
import shlex

from harness.registry import load_registry


def install_advice(python: str) -> str:
    """The pip command that installs the current release's torch for this host, with why."""
    registry = load_registry()
    release = registry.current
    default = registry.backend(release.pypi_default)
    pip = [python, "-m", "pip", "install"]
    plain = shlex.join([*pip, f"torch=={release.latest}"])
    cpu = shlex.join([*pip, f"torch=={release.latest}", "--index-url", registry.backend("cpu").wheel_index])
    if os.path.exists("/proc/driver/nvidia/version"):
        return f"install it with `{plain}` (PyPI's torch {release.latest} is the {default.display_name} build)"
    return (
        f"install it with `{cpu}` (this host has no NVIDIA driver: the CPU build; plain `{plain}` gives "
        f"PyPI's {default.display_name} build, several GB, which runs on the CPU too)"
    )
