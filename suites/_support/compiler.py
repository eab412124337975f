"""What torch.compile (Inductor) needs here, and what it generated.

Gates never compile anything: they read the probe and look for the tool on ``PATH``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sysconfig
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _support import env as _env
from _support.requires import DEPENDENCY, HARDWARE, UNSUPPORTED, Requirement

# What Inductor is expected to generate per device type (the release claim: C++/OpenMP on CPUs,
# Triton on GPUs, which covers CUDA, ROCm and XPU).
EXPECTED_CODEGEN = {"cpu": "C++", "cuda": "Triton", "xpu": "Triton"}


def python_headers() -> Requirement:
    """Inductor's C++ kernels and Triton's launcher are Python extensions: they need ``Python.h``
    (Debian: ``python3-dev``) where Inductor looks for it, ``sysconfig.get_path("include")``."""
    include = Path(sysconfig.get_path("include"))
    return Requirement(
        (include / "Python.h").exists(),
        DEPENDENCY,
        f"Inductor builds Python extensions and needs the Python headers; no Python.h in {include} "
        "(install python3-dev)",
    )


def inductor_toolchain() -> Requirement:
    """Inductor's toolchain here: the Python headers, then a C++ compiler (``$CXX`` or g++) on CPU or
    the ``triton`` package on GPUs. The first one missing is the ``[dependency]`` reason."""
    e = _env.get()
    headers = python_headers()
    if not headers.ok:
        return headers
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
    # --predict: the CUDA, ROCm and XPU wheels of torch depend on their triton package on Linux x86_64
    found = found or _env.predicted()
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


def graph_devices() -> frozenset[str]:
    """Device types Inductor records device graphs for (``mode="reduce-overhead"``) in this build.

    2.15 names them in ``torch._inductor.cudagraph_utils._CUDAGRAPH_SUPPORTED_DEVICE_TYPES`` (``{"cuda"}``
    as installed); 2.13 and 2.14 hard-code ``cuda`` in the same check.
    """
    from torch._inductor import cudagraph_utils

    return frozenset(getattr(cudagraph_utils, "_CUDAGRAPH_SUPPORTED_DEVICE_TYPES", ("cuda",)))


def cudagraph_skips() -> int:
    """How many compiled graphs Inductor ran without device graphs although they were asked for.

    ``triton.cudagraph_or_error`` turns a skip into an error only for graphs with CUDA nodes; a CPU or
    XPU graph is skipped silently and only this counter says so (intel/torch-xpu-ops#5338).
    """
    from torch._dynamo.utils import counters

    return int(counters["inductor"]["cudagraph_skips"])


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
