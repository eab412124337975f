"""ROCm 7.14 wheels take the ROCm runtime from pip packages (2.14; RFC pytorch#191688, PR #190276).

From ROCm 7.14 the wheel depends on AMD's ``rocm[libraries,...]`` packages and finds their libraries
through RPATH in ``site-packages`` instead of bundling them or using ``/opt/rocm``. Checked on the
build itself, no GPU needed: the HIP runtime library ``import torch`` loaded lives in a Python package
directory, and the wheel's tag agrees with ``torch.version.hip``. ROCm releases compare structurally
(7.14 > 7.2); earlier ROCm builds, and non-ROCm builds, lack the feature: ``[unsupported]``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from _support.probe import rocm_version
from _support.requires import skip_unsupported

WHEEL_RUNTIME = (7, 14)
HIP_RUNTIME = "libamdhip64"


def _loaded(fragment: str) -> list[str]:
    maps = Path("/proc/self/maps")
    if not maps.exists():
        skip_unsupported("no /proc/self/maps on this platform: ROCm wheels are Linux-only")
    paths = {line.split()[-1] for line in maps.read_text().splitlines() if fragment in line}
    return sorted(p for p in paths if p.startswith("/"))


@pytest.mark.host
def test_rocm_runtime_comes_from_wheels(compat_env) -> None:
    version = rocm_version(compat_env.variant)
    if compat_env.build != "rocm" or version is None:
        skip_unsupported(f"not a ROCm build (variant {compat_env.variant})")
    hip = tuple(int(p) for p in torch.version.hip.split(".")[:2])
    assert hip == version, f"wheel tag {compat_env.variant} but torch.version.hip {torch.version.hip}"
    if version < WHEEL_RUNTIME:
        skip_unsupported(f"{compat_env.variant}: ROCm builds before 7.14 use the system ROCm, not runtime wheels")
    libs = _loaded(HIP_RUNTIME)
    assert libs, f"torch {compat_env.torch_base} ({compat_env.variant}) has loaded no {HIP_RUNTIME}"
    for lib in libs:
        in_package = "site-packages/" in lib or "dist-packages/" in lib
        assert in_package and not lib.startswith("/opt/rocm"), f"{compat_env.variant} loaded the HIP runtime from {lib}"
