"""MX-format ``scaled_mm`` (2.14: "Added MXFP8 and MXFP4 support for scaled_mm" on XPU, pytorch#193756).

``torch.nn.functional.scaled_mm`` with ``ScalingType.BlockWise1x32`` and ``float8_e8m0fnu`` scales, on
the probed device: MXFP8 (e4m3fn and e5m2 elements) and MXFP4 (packed ``float4_e2m1fn_x2``), 128x128x128,
bfloat16 output, against the exact float64 product of the dequantised operands. Scales are offered in
the 32x4x4 swizzled layout first (what cuBLAS takes), then unswizzled; the layout a backend accepted is
recorded as ``scaled_mm.scale_layout``. A device that refuses every layout lacks MX ``scaled_mm``:
``[unsupported]`` with its own words when each refusal is the backend's known one (``_support/refusals.py``: the
CPU refuses today, CUDA below sm_100 and ROCm below gfx950 say so; before 2.13 an NVIDIA GPU below sm_100 refused
through cuBLASLt, CUBLAS_STATUS_NOT_SUPPORTED, or the fp8 check for e5m2 x e5m2, seen on an H200); a refusal
where the claims cover the device (sm_100/sm_103, gfx950), or any other error, fails.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from _support import claims
from _support.env import get as compat_env
from _support.mx import MXOperand, mxfp4, mxfp8, swizzle_32_4_4
from _support.refusals import refusal_for, refused
from _support.requires import api, requires
from _support.tolerances import MX_SCALED_MM

M = N = K = 128
SCALED_MM = "torch.nn.functional.scaled_mm"
# an NVIDIA GPU below sm_100 has no MX kernels: before 2.13 its refusal came from cuBLASLt or the fp8 checks, words
# the table lists under this op only (the capability bound is here, the release bound in _support/refusals.py)
BELOW_SM100 = f"{SCALED_MM}:mx-below-sm100"
CASES = {
    "mxfp8-e4m3fn": lambda rows, gen: mxfp8(rows, K, torch.float8_e4m3fn, gen),
    "mxfp8-e5m2": lambda rows, gen: mxfp8(rows, K, torch.float8_e5m2, gen),
    "mxfp4": lambda rows, gen: mxfp4(rows, K, gen),
}

pytestmark = requires(
    api("torch.nn.functional.scaled_mm"),
    api("torch.nn.functional.ScalingType.BlockWise1x32"),
    api("torch.nn.functional.SwizzleType.SWIZZLE_32_4_4"),
    api("torch.float8_e8m0fnu"),
    api("torch.float4_e2m1fn_x2"),
)


def _scaled_mm(
    a: MXOperand, b: MXOperand, device: torch.device
) -> tuple[torch.Tensor | None, str, list[tuple[str, Exception]]]:
    """The product on ``device`` in the first scale layout it accepts, that layout, and every refusal."""
    block = F.ScalingType.BlockWise1x32
    layouts = [
        ("SWIZZLE_32_4_4", F.SwizzleType.SWIZZLE_32_4_4, swizzle_32_4_4),
        ("NO_SWIZZLE", F.SwizzleType.NO_SWIZZLE, lambda s: s),
    ]
    refusals = []
    mat_a, mat_b = a.elements.to(device), b.elements.to(device).t()  # mat_b column-major, (K, N)
    for name, swizzle, arrange in layouts:
        scale_a, scale_b = arrange(a.scales).to(device), arrange(b.scales).to(device)
        try:
            out = F.scaled_mm(
                mat_a, mat_b, scale_a, block, scale_b, block, swizzle_a=swizzle, swizzle_b=swizzle,
                output_dtype=torch.bfloat16,
            )  # fmt: skip
        except (RuntimeError, ValueError, NotImplementedError) as e:  # judged by the caller, layout by layout
            refusals.append((name, e))
            continue
        return out, name, refusals
    return None, "", refusals


def _op(error: Exception) -> str:
    """The op whose refusals judge ``error``: BELOW_SM100's on an NVIDIA GPU below sm_100 that says one of them."""
    env = compat_env()
    below = env.is_nvidia and env.capability is not None and env.capability < (10, 0)
    return BELOW_SM100 if below and refusal_for(BELOW_SM100, error, str(error)) else SCALED_MM


@pytest.mark.parametrize("case", list(CASES))
def test_mx_scaled_mm_matches_dequantized_reference(case: str, device: torch.device, record_property) -> None:
    gen = torch.Generator().manual_seed(0)
    a, b = CASES[case](M, gen), CASES[case](N, gen)
    out, layout, refusals = _scaled_mm(a, b, device)
    if out is None:
        said = "; ".join(
            f"{name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}" for name, e in refusals
        )
        where = f"{case} scaled_mm on {device.type} refused every scale layout ({said})"
        for _, e in refusals[:-1]:  # every layout's refusal must be a known one; the last decides the skip
            if refusal_for(_op(e), e, str(e)) is None or claims.current():
                refused(_op(e), e, where)
        refused(_op(refusals[-1][1]), refusals[-1][1], where)
    record_property("scaled_mm.scale_layout", layout)
    want = a.values @ b.values.t()
    assert out.shape == (M, N) and out.dtype == torch.bfloat16, f"{case}: got {out.dtype} {tuple(out.shape)}"
    tol = MX_SCALED_MM.kwargs()
    torch.testing.assert_close(
        out.double().cpu(),
        want,
        rtol=tol["rtol"],
        atol=tol["atol"] * float(want.abs().max()),
        msg=lambda m: f"{case} scaled_mm on {device} ({layout} scales) vs the dequantized float64 product: {m}",
    )
