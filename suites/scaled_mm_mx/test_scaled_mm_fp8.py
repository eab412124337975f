"""FP8 ``scaled_mm`` with tensor-wise and row-wise scales, against the float64 product of the dequantised operands.

``float8_e4m3fn`` operands (their values exact in float64), float32 scales whose product is never 1 (tensor-wise
0.5 and 4; row-wise powers of two from 1/4 to 4 per row and per column: a kernel that ignores or inverts a scale is
off by a factor of 2 or more), bfloat16 output: the device sums exact products in float32 and rounds once to
bfloat16, so the bound is bfloat16's rounding relative to the largest |reference| (``SCALED_MM_FP8``). Both entry
points: ``torch._scaled_mm`` (the one every FP8 recipe calls) and the public ``torch.nn.functional.scaled_mm`` with
``ScalingType.TensorWise`` / ``RowWise``. Where PyTorch's own FP8 gating (``PLATFORM_SUPPORTS_FP8``) says yes the
claims cover the device and a refusal fails; elsewhere only the device's listed refusal is ``[unsupported]``.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from _support.drills import exempt
from _support.refusals import refused
from _support.requires import api, need
from _support.tolerances import SCALED_MM_FP8

M, K, N = 64, 128, 96
FP8 = torch.float8_e4m3fn
APIS = ["torch._scaled_mm", "F.scaled_mm"]


def _operands(gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """A (M, K) row-major and B (K, N) column-major, as cuBLASLt takes them; values within e4m3's range."""
    a = (torch.randn(M, K, generator=gen) * 4).to(FP8)
    b = (torch.randn(N, K, generator=gen) * 4).to(FP8).t()
    return a, b


def _scales(recipe: str, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    if recipe == "tensorwise":
        return torch.tensor(0.5), torch.tensor(4.0)
    # powers of two (exact), spread over rows and columns; no row or column where both are 1
    sa = torch.exp2(torch.randint(-2, 3, (M, 1), generator=gen).float())
    sb = torch.exp2(torch.randint(1, 3, (1, N), generator=gen).float())
    return sa, sb


def _call(
    entry: str, a: torch.Tensor, b: torch.Tensor, sa: torch.Tensor, sb: torch.Tensor, recipe: str
) -> torch.Tensor:
    if entry == "torch._scaled_mm":
        return torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)
    kind = F.ScalingType.TensorWise if recipe == "tensorwise" else F.ScalingType.RowWise
    return F.scaled_mm(a, b, sa, kind, sb, kind, output_dtype=torch.bfloat16)


@pytest.mark.parametrize("entry", APIS)
@pytest.mark.parametrize("recipe", ["tensorwise", "rowwise"])
def test_fp8_scaled_mm_matches_float64(device: torch.device, compat_env, entry: str, recipe: str) -> None:
    if entry == "F.scaled_mm":
        need(api("torch.nn.functional.scaled_mm"), api("torch.nn.functional.ScalingType.RowWise"))
    gen = torch.Generator().manual_seed(0 if recipe == "tensorwise" else 1)
    a, b = _operands(gen)
    sa, sb = _scales(recipe, gen)
    with exempt():  # the float64 reference is not the op under test
        want = (a.double() * sa.double()) @ (b.double() * sb.double())
        ignoring_scales = a.double() @ b.double()
    where = f"{entry} {recipe} FP8 e4m3fn on {compat_env.device_label}"
    op = "torch._scaled_mm" if entry == "torch._scaled_mm" else "torch.nn.functional.scaled_mm:fp8"
    try:
        out = _call(entry, a.to(device), b.to(device), sa.to(device), sb.to(device), recipe)
    except (RuntimeError, ValueError, NotImplementedError) as e:  # judged by the claims and the refusal table
        refused(op, e, where)
    assert out.shape == (M, N) and out.dtype == torch.bfloat16, f"{where}: got {out.dtype} {tuple(out.shape)}"
    atol = SCALED_MM_FP8.atol * float(want.abs().max())
    torch.testing.assert_close(
        out.double().cpu(), want, rtol=SCALED_MM_FP8.rtol, atol=atol, msg=lambda m: f"{where} vs float64: {m}"
    )
    # the bound tells the scales apart: a product that ignored them is far outside it
    assert float((ignoring_scales - want).abs().max()) > 10 * atol, "the scales' product is 1: the test cannot fail"
