"""What a CUDA build targets, and whether the GPU it runs on is one of them (2.15, pytorch#190385).

The 2.15 CUDA matrix makes CUDA 13.2 the stable, PyPI-published build next to CUDA 13.0, and deprecates
CUDA 12.6, the last build for Maxwell, Pascal and Volta: CUDA 13.x builds target Turing (sm_75) and newer
only. Read from the build itself (``torch.cuda.get_arch_list()``, safe without a GPU): a CUDA 13 build
lists nothing below sm_75, a cu126 build still lists sm_50, sm_60 and sm_70, and the wheel's tag agrees
with ``torch.version.cuda``. On an NVIDIA GPU the build must target it (a cubin for its architecture or PTX
it can compile) and run a kernel there; a pre-Turing GPU under a CUDA 13 build is ``[unsupported]``.
"""

from __future__ import annotations

import re

import pytest
import torch
from _support.requires import skip_hardware, skip_unsupported

TURING = (7, 5)
LEGACY_ARCHS = {(5, 0), (6, 0), (7, 0)}  # Maxwell, Pascal, Volta: the cu126 build's (RFC pytorch#190355 table)
_ARCH = re.compile(r"(sm|compute)_(\d+)(\d)[a-z]?")


def _targets() -> tuple[set[tuple[int, int]], set[tuple[int, int]]]:
    """(cubin architectures, PTX architectures) this build was compiled for."""
    cubins, ptx = set(), set()
    for flag in torch.cuda.get_arch_list():
        m = _ARCH.fullmatch(flag)
        assert m, f"unparsable architecture flag {flag!r} in {torch.cuda.get_arch_list()}"
        (cubins if m.group(1) == "sm" else ptx).add((int(m.group(2)), int(m.group(3))))
    return cubins, ptx


def _sm(cc: tuple[int, int]) -> str:
    return f"sm_{cc[0]}{cc[1]}"


@pytest.mark.host
def test_cuda_build_targets(compat_env) -> None:
    if compat_env.build != "cuda":
        skip_unsupported(f"not a CUDA build (variant {compat_env.variant}): it targets no CUDA architecture")
    cuda = compat_env.cuda_runtime
    cubins, ptx = _targets()
    assert cubins, f"CUDA {torch.version.cuda} build lists no architectures: {torch.cuda.get_arch_list()}"
    if cuda[:1] >= (13,):
        older = sorted(cc for cc in cubins | ptx if cc < TURING)
        assert not older, f"CUDA {torch.version.cuda} build targets pre-Turing {[_sm(cc) for cc in older]}"
    if compat_env.variant == "cu126":
        missing = sorted(LEGACY_ARCHS - cubins)
        assert not missing, f"the cu126 build no longer targets {[_sm(cc) for cc in missing]}"
    if compat_env.variant.startswith("cu"):
        tagged = f"cu{cuda[0]}{cuda[1]}"
        assert compat_env.variant == tagged, (
            f"wheel tag {compat_env.variant} but torch.version.cuda {torch.version.cuda}"
        )


def test_gpu_is_a_build_target(device: torch.device, compat_env) -> None:
    if not compat_env.is_nvidia:
        if compat_env.build not in ("cuda", "rocm"):
            targets = torch.cuda.get_arch_list()
            assert targets == [], f"a {compat_env.build} build lists CUDA architectures {targets}"
        skip_hardware(
            f"needs an NVIDIA GPU; none here (variant {compat_env.variant}, device {compat_env.device_label})"
        )
    cc = compat_env.capability
    cubins, ptx = _targets()
    if cc < TURING and compat_env.cuda_runtime[:1] >= (13,):
        skip_unsupported(f"CUDA {torch.version.cuda} builds support Turing (sm_75) and newer; this GPU is {_sm(cc)}")
    runnable = cc in cubins or any(p <= cc for p in ptx)
    assert runnable, f"{compat_env.device_label} is {_sm(cc)}; the build targets {torch.cuda.get_arch_list()}"
    x = torch.arange(1024, dtype=torch.float32, device=device)
    assert x.sum().item() == 1023 * 1024 / 2, "a kernel on the GPU gave a wrong sum"
