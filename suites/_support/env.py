"""The probed environment of this session, computed once and shared by every helper.

Everything here is derived from :func:`probe.collect` so that there is one probe
implementation; nothing in this module calls an API that raises on a CPU-only build.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from _support import probe


@dataclass(frozen=True)
class Env:
    info: dict[str, Any]
    backend: str  # COMPAT_BACKEND (the harness's column label) or the variant
    variant: str  # the build that runs: cpu, cu130, cu132, rocm7.2, rocm7.14, xpu ... (never a label)
    build: str
    torch_version: tuple[int, ...]
    torch_base: str
    accelerator: str | None  # "cuda" (also ROCm) | "xpu" | None
    device_type: str  # torch device type the suites run on
    device_label: str
    capability: tuple[int, int] | None  # CUDA compute capability (NVIDIA only)
    arch: str | None  # ROCm gfx arch
    cuda_runtime: tuple[int, ...] | None
    hip_runtime: tuple[int, ...] | None
    cusparselt: int | None
    python: tuple[int, ...]

    @property
    def is_nvidia(self) -> bool:
        return self.accelerator == "cuda" and self.build == "cuda"

    @property
    def is_rocm(self) -> bool:
        return self.accelerator == "cuda" and self.build == "rocm"

    @property
    def is_xpu(self) -> bool:
        return self.accelerator == "xpu"

    @property
    def device_kind(self) -> str:
        """What the tests actually run on: ``cpu``, ``cuda`` (NVIDIA), ``rocm`` or ``xpu``. A CUDA or ROCm
        build on a host without its GPU runs on ``cpu``."""
        if self.accelerator is None:
            return "cpu"
        return "rocm" if self.is_rocm else self.accelerator

    @property
    def device_class(self) -> str:
        """``cpu`` or ``accelerator``: selects per-device-class thresholds."""
        return "cpu" if self.accelerator is None else "accelerator"


_OVERRIDE: list[Env] = []  # --predict: the environment of a device this host does not have (_support/predict.py)


def override(env: Env) -> None:
    """From now on the session judges gates, claims and known issues as ``env`` (never while tests run)."""
    _OVERRIDE[:] = [env]


def predicted() -> bool:
    return bool(_OVERRIDE)


def get() -> Env:
    """The probed environment (cached per process: each xdist worker is a process), or the predicted one."""
    return _OVERRIDE[0] if _OVERRIDE else _probed()


@functools.cache
def _probed() -> Env:
    info = probe.collect()
    acc = info["accelerator"]["type"] if info["accelerator"]["available"] else None
    devs = info.get("devices") or []
    cap = None
    if acc == "cuda" and info["build"] == "cuda" and devs and devs[0].get("capability"):
        major, minor = devs[0]["capability"].split(".")
        cap = (int(major), int(minor))
    return Env(
        info=info,
        backend=probe.backend_id(info),
        variant=info.get("variant") or "cpu",
        build=info["build"],
        torch_version=probe.version_tuple(info["torch"]["base_version"]) or (0,),
        torch_base=info["torch"]["base_version"] or "unknown",
        accelerator=acc,
        device_type=acc or "cpu",
        device_label=probe.device_label(info),
        capability=cap,
        arch=devs[0].get("arch") if devs and acc == "cuda" else None,
        cuda_runtime=probe.version_tuple(info["runtime"]["cuda"]),
        hip_runtime=probe.version_tuple(info["runtime"]["hip"]),
        cusparselt=info["runtime"]["cusparselt"],
        python=probe.version_tuple(info.get("python")) or (0,),
    )
