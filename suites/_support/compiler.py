"""What torch.compile (Inductor) needs here, and what it generated.

Gates never compile anything: they read the probe and look for the tool on ``PATH``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Callable
from typing import Any

from _support import env as _env
from _support.requires import DEPENDENCY, HARDWARE, UNSUPPORTED, Requirement

# What Inductor is expected to generate per device type (the release claim: C++/OpenMP on CPUs,
# Triton on GPUs, which covers CUDA, ROCm and XPU).
EXPECTED_CODEGEN = {"cpu": "C++", "cuda": "Triton", "xpu": "Triton"}


def inductor_toolchain() -> Requirement:
    """CPU Inductor compiles C++ (``$CXX`` or g++); GPU Inductor needs the ``triton`` package."""
    e = _env.get()
    if e.device_type == "cpu":
        cxx = os.environ.get("CXX") or "g++"
        found = shutil.which(cxx) is not None
        return Requirement(
            found, DEPENDENCY, f"Inductor's C++ backend needs a C++ compiler; {cxx!r} is not on PATH (install g++)"
        )
    try:
        found = importlib.util.find_spec("triton") is not None
    except (ImportError, ValueError):
        found = False
    reason = f"Inductor on {e.device_type} needs the 'triton' package; it is not installed"
    return Requirement(found, DEPENDENCY, reason)


def device_graphs() -> Requirement:
    """mode="reduce-overhead" records CUDA graphs: a CUDA/ROCm device (XPU is judged by running it)."""
    e = _env.get()
    if e.accelerator is None:
        return Requirement(
            False,
            HARDWARE,
            'torch.compile(mode="reduce-overhead") records device graphs, which need a CUDA/ROCm or XPU device; '
            f"none is available here (backend {e.backend}, device {e.device_label})",
        )
    return Requirement(True, UNSUPPORTED, "")


def generated_code(fn: Callable[..., Any], *args: Any) -> tuple[Any, list[str]]:
    """Run ``fn`` (already compiled) and return its result and the wrapper code Inductor generated."""
    from torch._inductor.utils import run_and_get_code

    return run_and_get_code(fn, *args)


def codegen_kind(sources: list[str]) -> str:
    """``C++``, ``Triton``, ``C++ and Triton`` or ``none`` from Inductor's generated wrapper code."""
    text = "\n".join(sources)
    kinds = []
    if "cpp_pybinding" in text or "cpp_fused" in text:
        kinds.append("C++")
    if "async_compile.triton(" in text or "@triton.jit" in text:
        kinds.append("Triton")
    return " and ".join(kinds) if kinds else "none"
