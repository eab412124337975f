"""Attention inputs and the float64 reference every attention kernel is compared with.

The reference is ``F.scaled_dot_product_attention`` through the math kernel in float64 on the CPU
(``sdpa_kernel(SDPBackend.MATH)``), forward and gradients, from the same seeded inputs the kernel under
test sees in its own dtype on the device.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from _support import kernel_reasons
from _support.drills import exempt

NO_VIABLE_BACKEND = "No viable backend for scaled_dot_product_attention"


@dataclass(frozen=True)
class AttentionCase:
    """Shapes and options of one attention call: (batch, heads, tokens, head dim)."""

    q_heads: int = 4
    kv_heads: int = 4
    q_len: int = 64
    kv_len: int = 64
    head_dim: int = 64
    bool_mask: bool = False
    causal: bool = False
    gqa: bool = False
    batch: int = 2


CASES: dict[str, AttentionCase] = {
    "plain": AttentionCase(),
    "causal": AttentionCase(causal=True),
    "bool-mask": AttentionCase(kv_len=80, bool_mask=True),
    "gqa": AttentionCase(q_heads=8, kv_heads=2, gqa=True, causal=True),
    "head-dim-80": AttentionCase(head_dim=80),
    "head-dim-33": AttentionCase(head_dim=33),
}


@dataclass(frozen=True)
class AttentionInputs:
    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    mask: torch.Tensor | None
    grad_out: torch.Tensor

    @property
    def qkv(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.q, self.k, self.v


def make_inputs(case: AttentionCase, seed: int = 0) -> AttentionInputs:
    """Seeded float64 CPU inputs; every row of the boolean mask keeps at least one key."""
    g = torch.Generator().manual_seed(seed)

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g, dtype=torch.float64)

    q = randn(case.batch, case.q_heads, case.q_len, case.head_dim)
    k = randn(case.batch, case.kv_heads, case.kv_len, case.head_dim)
    v = randn(case.batch, case.kv_heads, case.kv_len, case.head_dim)
    mask = None
    if case.bool_mask:
        mask = torch.rand(case.q_len, case.kv_len, generator=g) > 0.3
        mask[:, 0] = True
    grad_out = randn(case.batch, case.q_heads, case.q_len, case.head_dim)
    return AttentionInputs(q, k, v, mask, grad_out)


def run_sdpa(
    inputs: AttentionInputs,
    case: AttentionCase,
    device: torch.device,
    dtype: torch.dtype,
    backward: bool = True,
) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """SDPA on ``device`` in ``dtype`` under the active kernel selection: output and (dq, dk, dv)."""
    q, k, v = (
        t.detach().to(device=device, dtype=dtype).requires_grad_(backward) for t in (inputs.q, inputs.k, inputs.v)
    )
    mask = inputs.mask.to(device) if inputs.mask is not None else None
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=case.causal, enable_gqa=case.gqa)
    grads: list[torch.Tensor] = []
    if backward:
        out.backward(inputs.grad_out.to(device=device, dtype=dtype))
        grads = [t.grad for t in (q, k, v)]  # type: ignore[misc]
    return out, grads


def reference(inputs: AttentionInputs, case: AttentionCase) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """The math kernel in float64 on the CPU: output and gradients."""
    with sdpa_kernel(SDPBackend.MATH), exempt():  # the reference is not the kernel under test: no drill, no watch
        out, grads = run_sdpa(inputs, case, torch.device("cpu"), torch.float64)
    return out.detach(), [g.detach() for g in grads]


@functools.cache
def case_reference(name: str) -> tuple[AttentionInputs, torch.Tensor, list[torch.Tensor]]:
    """Inputs and float64 reference of ``CASES[name]``, computed once per process (read-only)."""
    inputs = make_inputs(CASES[name])
    out, grads = reference(inputs, CASES[name])
    return inputs, out, grads


def additive_mask(keep: torch.Tensor) -> torch.Tensor:
    """A boolean keep-mask as the additive float64 bias SDPA's math kernel takes (0 or -inf)."""
    return torch.zeros(keep.shape, dtype=torch.float64).masked_fill(~keep, float("-inf"))


@contextmanager
def recorded_warnings() -> Iterator[list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


def refusal_reason(error: BaseException, caught: list[warnings.WarningMessage]) -> str:
    """The kernel's own words: the warnings SDPA emitted while choosing (why each kernel was not used),
    then the error's first line. One line, at most 400 characters."""
    reasons = []
    for w in caught:
        text = " ".join(str(w.message).split())
        if text and text not in reasons:
            reasons.append(text)
    reasons.append(" ".join(str(error).splitlines()[0].split()) if str(error) else type(error).__name__)
    line = "; ".join(reasons)
    return line if len(line) <= 400 else line[:397] + "..."


def with_reasons(error: RuntimeError, caught: list[warnings.WarningMessage]) -> RuntimeError:
    """The refusal as one error the refusal table can judge by the kernel's own reasons (the warnings SDPA emitted
    while choosing): same class, the message ``_support.kernel_reasons.compose`` makes, the original as its cause."""
    composed = RuntimeError(kernel_reasons.compose(str(error), [str(w.message) for w in caught]))
    composed.__cause__ = error
    return composed


def max_error(actual: torch.Tensor, expected: torch.Tensor) -> float:
    return (actual.detach().double().cpu() - expected).abs().max().item()
