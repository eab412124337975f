"""Variable-length attention, ``torch.nn.attention.varlen`` (2.10, pytorch#164502).

Upstream's words: "variable sequence length support without padding/masking in SDPA": ``varlen_attn`` takes
the sequences of a batch packed one after another, ``(T, H, D)``, with cumulative sequence positions
``cu_seq_q``/``cu_seq_k``, and "calls into the optimized Flash Attention kernels". Each packed sequence must
get exactly the attention of that sequence alone: checked against float64 softmax attention per sequence,
for the output and the log-sum-exp (``AuxRequest(lse=True)``). The shapes are checked on the meta device
(host-side, every build); a device without a varlen kernel (the CPU has no Flash Attention) is
``[unsupported]`` with its own refusal (``_support/refusals.py``); where the claims cover the device it fails.
"""

from __future__ import annotations

import math

import pytest
import torch
from _support.refusals import refused
from _support.requires import api, requires
from _support.tolerances import VARLEN_ATTENTION

VARLEN = "torch.nn.attention.varlen.varlen_attn"
pytestmark = requires(api(VARLEN, since="2.10"))

HEADS, DIM = 4, 64
LENGTHS = (37, 128, 5)  # three sequences of different lengths, packed


def _packed(device, dtype) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    total = sum(LENGTHS)
    q, k, v = (torch.randn(total, HEADS, DIM, generator=gen).to(device=device, dtype=dtype) for _ in range(3))
    cu = torch.tensor([0, *torch.tensor(LENGTHS).cumsum(0).tolist()], dtype=torch.int32, device=device)
    return q, k, v, cu


@pytest.mark.host
def test_varlen_attention_shapes_on_meta() -> None:
    from torch.nn.attention.varlen import AuxRequest, varlen_attn

    q = torch.empty(sum(LENGTHS), HEADS, DIM, device="meta", dtype=torch.bfloat16)
    cu = torch.empty(len(LENGTHS) + 1, device="meta", dtype=torch.int32)
    out, lse = varlen_attn(q, q, q, cu, cu, max(LENGTHS), max(LENGTHS), return_aux=AuxRequest(lse=True))
    assert tuple(out.shape) == tuple(q.shape) and out.dtype == q.dtype, f"out {out.dtype} {tuple(out.shape)}"
    assert lse.dtype == torch.float32 and sorted(lse.shape) == sorted((sum(LENGTHS), HEADS)), f"lse {tuple(lse.shape)}"
    assert varlen_attn(q, q, q, cu, cu, max(LENGTHS), max(LENGTHS)).shape == q.shape, "without return_aux: one tensor"


def test_varlen_attention_matches_per_sequence_attention(device) -> None:
    from torch.nn.attention.varlen import AuxRequest, varlen_attn

    q, k, v, cu = _packed(device, torch.bfloat16)
    try:
        out, lse = varlen_attn(q, k, v, cu, cu, max(LENGTHS), max(LENGTHS), return_aux=AuxRequest(lse=True))
    except (RuntimeError, NotImplementedError) as e:  # [unsupported] only as the table's refusal, unclaimed
        refused(VARLEN, e, f"varlen_attn on {device.type}")
    # the log-sum-exp comes as (H, T) from the Flash kernels (the docstring says (T, H)): take either
    lse = lse if tuple(lse.shape) == (HEADS, q.shape[0]) else lse.transpose(0, 1)
    start = 0
    for length in LENGTHS:
        rows = slice(start, start + length)
        qs, ks, vs = (t[rows].double().cpu().transpose(0, 1) for t in (q, k, v))  # (H, L, D)
        scores = qs @ ks.transpose(-1, -2) / math.sqrt(DIM)
        want = (torch.softmax(scores, dim=-1) @ vs).transpose(0, 1)
        scale = float(want.abs().max())
        torch.testing.assert_close(
            out[rows].double().cpu(), want, rtol=VARLEN_ATTENTION.rtol, atol=VARLEN_ATTENTION.atol * scale,
            msg=lambda m, n=length: f"varlen_attn on {device}, sequence of {n}: output vs float64 attention: {m}",
        )  # fmt: skip
        torch.testing.assert_close(
            lse[:, rows].double().cpu(), torch.logsumexp(scores, dim=-1), **VARLEN_ATTENTION.kwargs(),
            msg=lambda m, n=length: f"varlen_attn on {device}, sequence of {n}: log-sum-exp vs float64: {m}",
        )  # fmt: skip
        start += length
