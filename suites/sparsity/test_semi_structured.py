"""to_sparse_semi_structured + matmul on the cuSPARSELt / hipSPARSELt and CUTLASS backends, and FP8 2:4.

Gates (PyTorch's own test gating, torch 2.13):
* CUTLASS: NVIDIA sm8x only; elsewhere the call is made and its refusal judged (sm_90: "Supported only on GPUs
  with compute capability 8.x", _support/refusals.py).
* cuSPARSELt: torch.backends.cusparselt.is_available() and NVIDIA sm8x/sm9x; on ROCm hipSPARSELt
  (ROCm > 6.4, gfx942/gfx950). Other NVIDIA archs (e.g. Blackwell) are tried, and a refusal is
  reported as [unsupported] with the error.
* FP8 float8_e4m3fn through torch._scaled_mm: NVIDIA cc 8.9 / 9.x with cuSPARSELt >= 0.6.2, or ROCm gfx950;
  compared with the float64 product of the dequantised operands.
On CPU (and XPU) the conversion is refused: the test checks that refusal and reports [unsupported].
"""

from __future__ import annotations

import pytest
import torch
from _support.refusals import SEMI_STRUCTURED, refused
from _support.requires import skip_unsupported
from _support.sparse24 import gate, refused_off_cuda, sm
from _support.tolerances import SEMI_STRUCTURED as SPARSE_TOL

TOL = {torch.float16: (1e-3, 1e-3), torch.bfloat16: (2e-2, 2e-2)}


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("backend_name", ["cusparselt", "cutlass"])
def test_semi_structured_matmul_matches_dense(
    device: torch.device, compat_env, monkeypatch, backend_name: str, dtype: torch.dtype
) -> None:
    if device.type != "cuda":
        refused_off_cuda(device, dtype)
    from torch.sparse import (
        SparseSemiStructuredTensor,
        SparseSemiStructuredTensorCUSPARSELT,
        SparseSemiStructuredTensorCUTLASS,
        to_sparse_semi_structured,
    )

    outside_gate = gate(backend_name, compat_env)
    monkeypatch.setattr(SparseSemiStructuredTensor, "_FORCE_CUTLASS", backend_name == "cutlass")
    mask = torch.tensor([0, 0, 1, 1], device=device).tile((256, 32)).bool()
    a = torch.randn(256, 128, device=device, dtype=dtype) * mask
    b = torch.randn(128, 64, device=device, dtype=dtype)
    try:
        a_sparse = to_sparse_semi_structured(a)
        out = torch.mm(a_sparse, b)
    except (RuntimeError, NotImplementedError) as e:
        if outside_gate:  # judged by the refusal table: no text is known, so any error fails
            refused(SEMI_STRUCTURED, e, f"{backend_name} 2:4 on sm_{sm(compat_env)} (outside PyTorch's gate)")
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
    return ok, f"FP8 2:4 needs cc 8.9/9.x with cuSPARSELt >= 0.6.2 (found sm_{sm(compat_env)}, cuSPARSELt {version})"


def test_fp8_e4m3fn_semi_structured_scaled_mm(device: torch.device, compat_env) -> None:
    """FP8 2:4 through torch._scaled_mm against the float64 product of the dequantised operands (scales 1/2 and 4:
    a kernel that ignores them is off by 2x); the dense FP8 product on the same device is held to the same bound."""
    if device.type != "cuda":
        refused_off_cuda(device, torch.float8_e4m3fn)
    ok, why = _fp8_supported(compat_env)
    if not ok:
        skip_unsupported(why)
    from torch.sparse import to_sparse_semi_structured

    gen = torch.Generator().manual_seed(0)
    keep = torch.tensor([0, 0, 1, 1], dtype=torch.bool).tile((256, 32))
    a8 = ((torch.randn(256, 128, generator=gen) * 4) * keep).to(torch.float8_e4m3fn)
    b8 = (torch.randn(256, 128, generator=gen) * 4).to(torch.float8_e4m3fn)
    sa, sb = torch.tensor(0.5), torch.tensor(4.0)
    want = (a8.double() * 0.5) @ (b8.double() * 4.0).t()  # exact operands; the bound is bfloat16's rounding
    a8, b8t, sa, sb = a8.to(device), b8.to(device).t(), sa.to(device), sb.to(device)
    sparse = torch._scaled_mm(to_sparse_semi_structured(a8), b8t, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
    dense = torch._scaled_mm(a8, b8t, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
    tol = SPARSE_TOL[torch.bfloat16]
    atol = tol.atol * float(want.abs().max())
    for name, out in (("2:4 sparse", sparse), ("dense", dense)):
        torch.testing.assert_close(
            out.double().cpu(), want, rtol=tol.rtol, atol=atol, msg=lambda m, n=name: f"FP8 {n} vs float64: {m}"
        )
