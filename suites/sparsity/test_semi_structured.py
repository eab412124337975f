"""to_sparse_semi_structured + matmul on the cuSPARSELt / hipSPARSELt and CUTLASS backends, and FP8 2:4.

Gates (PyTorch's own test gating, torch 2.13):
* CUTLASS: NVIDIA sm8x only.
* cuSPARSELt: torch.backends.cusparselt.is_available() and NVIDIA sm8x/sm9x; on ROCm hipSPARSELt
  (ROCm > 6.4, gfx942/gfx950). Other NVIDIA archs (e.g. Blackwell) are tried, and a refusal is
  reported as [unsupported] with the error.
* FP8 float8_e4m3fn through torch._scaled_mm: NVIDIA cc 8.9 / 9.x with cuSPARSELt >= 0.6.2, or ROCm gfx950.
On CPU (and XPU) the conversion is refused: the test checks that refusal and reports [unsupported].
"""

from __future__ import annotations

import pytest
import torch
from _support.refusals import SEMI_STRUCTURED, refused
from _support.requires import skip_unsupported

TOL = {torch.float16: (1e-3, 1e-3), torch.bfloat16: (2e-2, 2e-2)}
CUSPARSELT_ROCM_ARCHS = ("gfx942", "gfx950")


def _refused_off_cuda(device: torch.device, dtype: torch.dtype) -> None:
    """Non-CUDA devices: the conversion must be refused; the matrix cell then reads [unsupported]."""
    __tracebackhide__ = True
    from torch.sparse import to_sparse_semi_structured

    dense = (torch.rand(128, 128) * torch.tensor([0, 0, 1, 1]).tile((128, 32))).to(dtype).to(device)
    try:
        to_sparse_semi_structured(dense)
    except RuntimeError as e:
        refused(SEMI_STRUCTURED, e, f"{device.type} has no 2:4 semi-structured kernels")
    pytest.fail(f"to_sparse_semi_structured on {device.type} did not refuse: the check above expects its refusal")


def _gate(backend_name: str, compat_env) -> bool:
    """Skip with the right class unless ``backend_name`` should work here. True = outside PyTorch's gate, try it."""
    __tracebackhide__ = True
    if backend_name == "cutlass":
        if compat_env.is_rocm:
            skip_unsupported("CUTLASS 2:4 kernels are CUDA-only; ROCm uses hipSPARSELt")
        if compat_env.capability is None or compat_env.capability[0] != 8:
            skip_unsupported(f"CUTLASS 2:4 kernels are built for sm8x (Ampere) only; this GPU is sm_{_sm(compat_env)}")
        return False
    # cuSPARSELt / hipSPARSELt
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


def _sm(compat_env) -> str:
    return "".join(map(str, compat_env.capability)) if compat_env.capability else "unknown"


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("backend_name", ["cusparselt", "cutlass"])
def test_semi_structured_matmul_matches_dense(
    device: torch.device, compat_env, monkeypatch, backend_name: str, dtype: torch.dtype
) -> None:
    if device.type != "cuda":
        _refused_off_cuda(device, dtype)
    from torch.sparse import (
        SparseSemiStructuredTensor,
        SparseSemiStructuredTensorCUSPARSELT,
        SparseSemiStructuredTensorCUTLASS,
        to_sparse_semi_structured,
    )

    outside_gate = _gate(backend_name, compat_env)
    monkeypatch.setattr(SparseSemiStructuredTensor, "_FORCE_CUTLASS", backend_name == "cutlass")
    mask = torch.tensor([0, 0, 1, 1], device=device).tile((256, 32)).bool()
    a = torch.randn(256, 128, device=device, dtype=dtype) * mask
    b = torch.randn(128, 64, device=device, dtype=dtype)
    try:
        a_sparse = to_sparse_semi_structured(a)
        out = torch.mm(a_sparse, b)
    except (RuntimeError, NotImplementedError) as e:
        if outside_gate:  # judged by the refusal table: no text is known, so any error fails
            refused(SEMI_STRUCTURED, e, f"{backend_name} 2:4 on sm_{_sm(compat_env)} (outside PyTorch's gate)")
        raise
    expected_cls = (
        SparseSemiStructuredTensorCUTLASS if backend_name == "cutlass" else SparseSemiStructuredTensorCUSPARSELT
    )
    assert isinstance(a_sparse, expected_cls), type(a_sparse).__name__
    rtol, atol = TOL[dtype]
    torch.testing.assert_close(out, torch.mm(a, b), rtol=rtol, atol=atol)
    torch.testing.assert_close(a_sparse.to_dense(), a, rtol=0, atol=0)
    # the main use: a 2:4 sparse weight in a linear layer
    x = torch.randn(64, 128, device=device, dtype=dtype)
    torch.testing.assert_close(
        torch.nn.functional.linear(x, a_sparse), torch.nn.functional.linear(x, a), rtol=rtol, atol=atol
    )


def _fp8_supported(compat_env) -> tuple[bool, str]:
    if compat_env.is_rocm:
        return compat_env.arch == "gfx950", f"FP8 2:4 on ROCm needs gfx950 (found {compat_env.arch})"
    cap = compat_env.capability or (0, 0)
    version = compat_env.cusparselt or 0
    ok = (cap == (8, 9) or cap[0] == 9) and version >= 602
    return ok, f"FP8 2:4 needs cc 8.9/9.x with cuSPARSELt >= 0.6.2 (found sm_{_sm(compat_env)}, cuSPARSELt {version})"


def _to_fp8(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    fmax = torch.finfo(torch.float8_e4m3fn).max
    scale = fmax / x.abs().max().clamp(min=1e-12)
    return (x * scale).clamp(-fmax, fmax).to(torch.float8_e4m3fn), scale.float().reciprocal()


def test_fp8_e4m3fn_semi_structured_scaled_mm(device: torch.device, compat_env) -> None:
    if device.type != "cuda":
        _refused_off_cuda(device, torch.float8_e4m3fn)
    ok, why = _fp8_supported(compat_env)
    if not ok:
        skip_unsupported(why)
    from torch.sparse import to_sparse_semi_structured

    mask = torch.tensor([0, 0, 1, 1], device=device).tile((256, 32)).to(torch.float16)
    a = mask * torch.rand(256, 128, device=device).half()
    b = torch.rand(256, 128, device=device).half().t()
    a8, sa = _to_fp8(a)
    b8, sb = _to_fp8(b)
    dense = torch._scaled_mm(a8, b8, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
    sparse = torch._scaled_mm(to_sparse_semi_structured(a8), b8, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
    torch.testing.assert_close(sparse, dense, rtol=7e-2, atol=7e-2)
