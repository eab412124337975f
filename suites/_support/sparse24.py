"""2:4 semi-structured operands and the backend gate shared by the sparsity suites.

PyTorch's own gating (torch 2.13, test/test_sparse_semi_structured.py): CUTLASS kernels are built for NVIDIA sm8x,
cuSPARSELt runs on NVIDIA sm8x/sm9x (``torch.backends.cusparselt.is_available()``), hipSPARSELt on ROCm > 6.4 on
gfx942/gfx950. :func:`gate` skips only what the build cannot even try (no cuSPARSELt library, ROCm's CUTLASS) and
says whether the device is outside PyTorch's gate: there the call is still made, and its refusal is judged by
``_support/refusals.py`` (CUTLASS on sm_90 says "Supported only on GPUs with compute capability 8.x", seen on an H200).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from _support.refusals import SEMI_STRUCTURED, refused
from _support.requires import skip_unsupported

CUSPARSELT_ROCM_ARCHS = ("gfx942", "gfx950")
BACKENDS = ("cusparselt", "cutlass")


def sm(compat_env) -> str:
    return "".join(map(str, compat_env.capability)) if compat_env.capability else "unknown"


def mask(rows: int, cols: int) -> torch.Tensor:
    """Keep the last two of every four along the rows (the pattern PyTorch's own tests use)."""
    return torch.tensor([0, 0, 1, 1], dtype=torch.bool).tile((rows, cols // 4))


def two_way_mask(rows: int, cols: int) -> torch.Tensor:
    """2:4 along the rows and along the columns in every 4x4 tile: what ``prune_dense_static_sort`` keeps whole."""
    tile = torch.tensor([[1, 1, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [1, 0, 0, 1]], dtype=torch.bool)
    return tile.repeat(rows // 4, cols // 4)


def refused_off_cuda(device: torch.device, dtype: torch.dtype) -> None:
    """Non-CUDA devices: the conversion must be refused in the table's words (then ``[unsupported]``)."""
    __tracebackhide__ = True
    from torch.sparse import to_sparse_semi_structured

    dense = (torch.rand(128, 128) * torch.tensor([0, 0, 1, 1]).tile((128, 32))).to(dtype).to(device)
    try:
        to_sparse_semi_structured(dense)
    except RuntimeError as e:
        refused(SEMI_STRUCTURED, e, f"{device.type} has no 2:4 semi-structured kernels")
    pytest.fail(f"to_sparse_semi_structured on {device.type} did not refuse: the check above expects its refusal")


def gate(backend_name: str, compat_env) -> bool:
    """Skip what the build cannot try; True when the device is outside PyTorch's gate (the call is still made)."""
    __tracebackhide__ = True
    if backend_name == "cutlass":
        if compat_env.is_rocm:
            skip_unsupported("CUTLASS 2:4 kernels are CUDA-only; ROCm uses hipSPARSELt")
        return compat_env.capability is None or compat_env.capability[0] != 8
    if not torch.backends.cusparselt.is_available():
        lib = "hipSPARSELt" if compat_env.is_rocm else "cuSPARSELt"
        skip_unsupported(f"this torch build has no {lib} (torch.backends.cusparselt.is_available() is False)")
    if compat_env.is_rocm:
        hip = compat_env.hip_runtime or (0,)
        if hip[:2] <= (6, 4) or compat_env.arch not in CUSPARSELT_ROCM_ARCHS:
            skip_unsupported(
                f"hipSPARSELt 2:4 needs ROCm > 6.4 on {'/'.join(CUSPARSELT_ROCM_ARCHS)} "
                f"(found ROCm {torch.version.hip} on {compat_env.arch})"
            )
        return False
    return compat_env.capability is None or compat_env.capability[0] not in (8, 9)


def sparse_class(backend_name: str) -> type:
    from torch.sparse import SparseSemiStructuredTensorCUSPARSELT, SparseSemiStructuredTensorCUTLASS

    return SparseSemiStructuredTensorCUTLASS if backend_name == "cutlass" else SparseSemiStructuredTensorCUSPARSELT


def device_kernels(fn: Callable[[], object], device: torch.device) -> list[str]:
    """Names of the device kernels ``fn`` launched (copies and memsets are not kernels), from the claimed test's
    evidence recorder (_support.evidence: one profiler per test) or a profiler of its own."""
    from _support import evidence

    return sorted(evidence.kernels_of(fn, device.type))
