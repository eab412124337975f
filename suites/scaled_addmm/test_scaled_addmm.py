"""``torch.nn.functional.scaled_addmm`` and ``scaled_addmm_`` (2.15).

Upstream's words (the 2.15 docstring): "Compute a scaled matrix product and add it to input": out = beta *
input + alpha * scaled_mm(mat1, mat2), with "the dtype of input; there is no separate output dtype". "CUDA
recipes are supported when their selected implementation uses cuBLASLt; non-cuBLAS fallbacks and ROCm are
not supported." So this is CUDA-only: on the CPU and XPU the call must be refused with the dispatcher's words
(``_support/refusals.py``), reported as ``[unsupported]``; ROCm's refusal text is not known yet (it comes from
the C++ library), so a ROCm refusal is re-raised until the table lists it; on an NVIDIA GPU with
FP8 cuBLASLt kernels (sm_89+) the result must match the float64 computation of the same formula. FP8 e4m3
operands with tensor-wise power-of-two scales, bfloat16 ``input``; the in-place form must return ``input``
itself, accumulated.
"""

from __future__ import annotations

import inspect

import pytest
import torch
import torch.nn.functional as F
from _support.refusals import refused
from _support.requires import api, requires
from _support.tolerances import SCALED_ADDMM

M, N, K = 64, 96, 128
# powers of two (exact in every dtype) whose product is not 1: a kernel that ignores the scales, or applies
# them inverted, is off by 4x or 1/4x in the product term, far outside the bound (asserted below)
SCALE_A, SCALE_B, ALPHA, BETA = 0.5, 4.0, 0.25, 2.0

pytestmark = requires(
    api("torch.nn.functional.scaled_addmm", since="2.15"),
    api("torch.nn.functional.scaled_addmm_", since="2.15"),
    api("torch.nn.functional.ScalingType.TensorWise"),
    api("torch.float8_e4m3fn"),
)


@pytest.mark.host
def test_scaled_addmm_signature() -> None:
    want = [
        "input", "mat1", "mat2", "scale_a", "scale_recipe_a", "scale_b", "scale_recipe_b",
        "swizzle_a", "swizzle_b", "contraction_dim", "use_fast_accum", "beta", "alpha",
    ]  # fmt: skip
    for fn in (F.scaled_addmm, F.scaled_addmm_):
        params = inspect.signature(fn).parameters
        assert list(params) == want, f"{fn.__name__}{inspect.signature(fn)}"
        assert params["beta"].kind is params["alpha"].kind is inspect.Parameter.KEYWORD_ONLY, "beta/alpha keyword-only"
        assert "output_dtype" not in params, "the result has the dtype of input"


def _operands(device) -> tuple[torch.Tensor, ...]:
    gen = torch.Generator().manual_seed(0)
    a8 = torch.randn(M, K, generator=gen).to(torch.float8_e4m3fn)
    b8 = torch.randn(N, K, generator=gen).to(torch.float8_e4m3fn)
    base = torch.randn(M, N, generator=gen).to(torch.bfloat16)
    want = BETA * base.double() + ALPHA * (a8.double() * SCALE_A) @ (b8.double() * SCALE_B).t()
    to = [t.to(device) for t in (a8, b8, base)]
    return to[0], to[1].t(), to[2], want  # mat2 column-major (K, N), as cuBLASLt takes it


@pytest.mark.parametrize("form", ["out-of-place", "in-place"])
def test_scaled_addmm_matches_float64(form: str, device, compat_env) -> None:
    mat1, mat2, base, want = _operands(device)
    scale_a, scale_b = (torch.tensor(s, dtype=torch.float32, device=device) for s in (SCALE_A, SCALE_B))
    tensorwise = F.ScalingType.TensorWise
    fn = F.scaled_addmm_ if form == "in-place" else F.scaled_addmm
    target = base.clone()
    try:
        out = fn(target, mat1, mat2, scale_a, tensorwise, scale_b, tensorwise, beta=BETA, alpha=ALPHA)
    except (RuntimeError, NotImplementedError, ValueError) as e:  # [unsupported] only as the table's refusal
        refused(f"torch.nn.functional.{fn.__name__}", e, f"{form} scaled_addmm on {compat_env.device_label}")
    assert out.dtype == torch.bfloat16 and tuple(out.shape) == (M, N), f"got {out.dtype} {tuple(out.shape)}"
    if form == "in-place":
        assert out is target or out.data_ptr() == target.data_ptr(), "scaled_addmm_ must return input, accumulated"
    else:
        assert torch.equal(target, base), "the out-of-place form changed input"
    torch.testing.assert_close(
        out.double().cpu(), want, rtol=SCALED_ADDMM.rtol, atol=SCALED_ADDMM.atol * float(want.abs().max()),
        msg=lambda m: f"{form} scaled_addmm on {device} vs float64 beta*input + alpha*(a*sa)@(b*sb): {m}",
    )  # fmt: skip
