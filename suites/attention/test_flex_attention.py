"""FlexAttention (2.5; FlashAttention-4 backend 2.11): a score_mod and a block mask, eager and compiled.

The block mask is causal (``create_block_mask``) and the score_mod a relative-position bias; the
reference is SDPA's math kernel in float64 on the CPU with the equivalent additive mask. Eager and
``torch.compile``d FlexAttention are checked forward; the backward is checked where the device has
one (on CPU, FlexAttention refuses it: ``[unsupported]`` with its own message).
"""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F
from _support.attention import AttentionCase, additive_mask, make_inputs, recorded_warnings, refusal_reason
from _support.compiler import inductor_toolchain
from _support.drills import exempt
from _support.env import get as compat_env
from _support.refusals import FLEX_BACKWARD, refused
from _support.requires import HARDWARE, UNSUPPORTED, Requirement, fact, module, need
from _support.tolerances import (
    ATTENTION_FORWARD,
    ATTENTION_GRAD,
    LOW_PRECISION,
    MATH_ERROR_FACTOR,
    MATH_ERROR_FACTOR_ROCM,
    Tol,
    dtype_name,
    relative_to_math,
)
from torch.nn.attention import SDPBackend, sdpa_kernel

flex = pytest.importorskip("torch.nn.attention.flex_attention", reason="[unsupported] this torch has no FlexAttention")

TOKENS = 256  # two 128-wide blocks per side: the causal block mask skips one of the four
CASE = AttentionCase(q_len=TOKENS, kv_len=TOKENS, causal=False, batch=1)
BIAS = 0.05


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def relative_bias(score, b, h, q_idx, kv_idx):
    return score + (q_idx - kv_idx).to(score.dtype) * BIAS


def _reference(inputs, backward: bool):
    idx = torch.arange(TOKENS)
    bias = (idx[:, None] - idx[None, :]).to(torch.float64) * BIAS + additive_mask(idx[:, None] >= idx[None, :])
    q, k, v = (t.clone().requires_grad_(backward) for t in (inputs.q, inputs.k, inputs.v))
    with sdpa_kernel(SDPBackend.MATH), exempt():  # the float64 reference, not the kernel under test
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    grads = []
    if backward:
        out.backward(inputs.grad_out)
        grads = [t.grad for t in (q, k, v)]
    return out.detach(), grads


def _forward_bound(inputs, ref: torch.Tensor, device: torch.device, dtype: torch.dtype) -> Tol:
    """The CPU's calibrated bound; on an accelerator in low precision, a factor times the error of the math kernel
    run in the same dtype on the device (PyTorch's practice, _support/tolerances.py)."""
    if device.type == "cpu" or dtype not in LOW_PRECISION:
        return ATTENTION_FORWARD[dtype]
    idx = torch.arange(TOKENS)
    bias = (idx[:, None] - idx[None, :]).to(torch.float64) * BIAS + additive_mask(idx[:, None] >= idx[None, :])
    q, k, v = (t.to(device=device, dtype=dtype) for t in (inputs.q, inputs.k, inputs.v))
    with sdpa_kernel(SDPBackend.MATH), exempt():
        math = F.scaled_dot_product_attention(q, k, v, attn_mask=bias.to(device=device, dtype=dtype))
    factors = MATH_ERROR_FACTOR_ROCM if compat_env().is_rocm else MATH_ERROR_FACTOR
    return relative_to_math(float((math.double().cpu() - ref).abs().max()), factors["out"], dtype)


def _flex(fn, inputs, device: torch.device, dtype: torch.dtype, backward: bool):
    q, k, v = (
        t.detach().to(device=device, dtype=dtype).requires_grad_(backward) for t in (inputs.q, inputs.k, inputs.v)
    )
    block_mask = flex.create_block_mask(causal, B=None, H=None, Q_LEN=TOKENS, KV_LEN=TOKENS, device=device)
    out = fn(q, k, v, score_mod=relative_bias, block_mask=block_mask)
    grads = []
    if backward:
        out.backward(inputs.grad_out.to(device=device, dtype=dtype))
        grads = [t.grad for t in (q, k, v)]
    return out, grads


def _implementation(mode: str):
    if mode == "eager":
        return flex.flex_attention
    need(inductor_toolchain())
    torch._dynamo.reset()
    return torch.compile(flex.flex_attention, fullgraph=True)


def test_block_mask_skips_blocks(device: torch.device) -> None:
    block_mask = flex.create_block_mask(causal, B=None, H=None, Q_LEN=TOKENS, KV_LEN=TOKENS, device=device)
    assert block_mask.shape[-2:] == (TOKENS, TOKENS)
    assert block_mask.sparsity() == pytest.approx(25.0), "a causal 2x2-block mask skips exactly one block in four"


@pytest.mark.timeout(240)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=dtype_name)
@pytest.mark.parametrize("mode", ["eager", "compiled"])
def test_flex_forward_matches_reference(device: torch.device, mode: str, dtype: torch.dtype) -> None:
    inputs = make_inputs(CASE)
    ref, _ = _reference(inputs, backward=False)
    out, _ = _flex(_implementation(mode), inputs, device, dtype, backward=False)
    assert out.dtype == dtype
    bound = _forward_bound(inputs, ref, device, dtype)
    torch.testing.assert_close(out.detach().double().cpu(), ref, **bound.kwargs(), msg=lambda m: f"flex {mode}: {m}")


@pytest.mark.timeout(240)
def test_flex_backward_matches_reference(device: torch.device) -> None:
    dtype = torch.float32
    inputs = make_inputs(CASE)
    _, ref_grads = _reference(inputs, backward=True)
    with recorded_warnings() as caught:
        try:
            _, grads = _flex(_implementation("compiled"), inputs, device, dtype, backward=True)
        except (NotImplementedError, torch._dynamo.exc.Unsupported) as e:  # Dynamo's Unsupported wraps it (fullgraph)
            said = re.search(r"FlexAttention does not support backward[^'\"\n]*", str(e))
            reason = refusal_reason(NotImplementedError(said.group(0) if said else str(e)), caught)
            refused(FLEX_BACKWARD, e, f"FlexAttention backward on {device.type}: {reason}")
    for name, grad, ref in zip(("dq", "dk", "dv"), grads, ref_grads, strict=True):
        torch.testing.assert_close(
            grad.double().cpu(), ref, **ATTENTION_GRAD[dtype].kwargs(), msg=lambda m, n=name: f"flex {n}: {m}"
        )


def _flash4_gate() -> Requirement:
    e = compat_env()
    what = "FlexAttention's FLASH (FlashAttention-4) backend"
    if not e.is_nvidia:
        return fact(False, HARDWARE, f"{what} needs an NVIDIA Hopper or Blackwell GPU; this is {e.device_label}")
    ok = e.capability is not None and e.capability[0] in (9, 10)
    return fact(ok, UNSUPPORTED, f"{what} needs compute capability 9.x or 10.x; found {e.capability}")


@pytest.mark.timeout(300)
def test_flex_flash4_backend(device: torch.device) -> None:
    """The 2.11 FlashAttention-4 backend, requested explicitly with kernel_options={"BACKEND": "FLASH"}."""
    need(_flash4_gate(), module("flash_attn.cute", "pip install --pre flash-attn-4"), inductor_toolchain())
    dtype = torch.bfloat16
    inputs = make_inputs(CASE)
    ref, _ = _reference(inputs, backward=False)
    torch._dynamo.reset()
    compiled = torch.compile(flex.flex_attention, fullgraph=True)

    def fa4(q, k, v, score_mod, block_mask):
        return compiled(q, k, v, score_mod=score_mod, block_mask=block_mask, kernel_options={"BACKEND": "FLASH"})

    out, _ = _flex(fa4, inputs, device, dtype, backward=False)
    torch.testing.assert_close(out.double().cpu(), ref, **ATTENTION_FORWARD[dtype].kwargs())
