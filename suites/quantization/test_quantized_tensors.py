"""Quantized tensors on the device: quantize, integer representation, dequantize.

``torch.quantize_per_tensor`` / ``quantize_per_channel`` on the session's device must give exactly
``clamp(round(x / scale) + zero_point)`` (computed in float64 on the CPU) and dequantize to within
half a quantization step (inputs keep clear of rounding ties). The CPU and CUDA are claimed
(``features.toml``): a refusal there fails; elsewhere only the dispatcher's "Could not run" for that
backend (``_support/refusals.py``) is ``[unsupported]``.
"""

from __future__ import annotations

import warnings

import pytest
import torch
from _support.refusals import refused

QDTYPES = {"quint8": (torch.quint8, 0, 255), "qint8": (torch.qint8, -128, 127)}


def _expected_int(x: torch.Tensor, scale: torch.Tensor, zero_point: torch.Tensor, lo: int, hi: int) -> torch.Tensor:
    return torch.clamp(torch.round(x.double() / scale) + zero_point, lo, hi).to(torch.int64)


def _quantize(fn, *args, device: torch.device, what: str):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*quint8.*|.*qint8.*|.*qint32.*", category=UserWarning)
        try:
            return fn(*args)
        except NotImplementedError as e:  # the dispatcher's "Could not run ..."; claimed on cpu and cuda: fails there
            refused("torch.quantize_per_tensor", e, f"{what} on {device.type}")


@pytest.mark.parametrize("qdtype", list(QDTYPES))
def test_quantize_per_tensor(device: torch.device, qdtype: str) -> None:
    dtype, lo, hi = QDTYPES[qdtype]
    scale, zero_point = 0.03, (128 if dtype == torch.quint8 else 0)
    # steps -160..160 (beyond both ends: clamped) plus offsets within +-0.4 of a step: no rounding ties
    steps = torch.arange(-160, 161, dtype=torch.float64)
    offsets = torch.linspace(-0.4, 0.4, steps.numel(), dtype=torch.float64)
    x = ((steps + offsets) * scale).float()
    q = _quantize(torch.quantize_per_tensor, x.to(device), scale, zero_point, dtype, device=device, what="quantize")
    assert q.is_quantized and q.dtype == dtype and q.device.type == device.type
    want = _expected_int(x, torch.tensor(scale, dtype=torch.float64), torch.tensor(zero_point), lo, hi)
    got = q.int_repr().cpu().to(torch.int64)
    assert torch.equal(got, want), f"int_repr differs at {int((got != want).sum())} of {want.numel()} elements"
    inside = (x > (lo - zero_point) * scale) & (x < (hi - zero_point) * scale)
    err = (q.dequantize().cpu() - x)[inside].abs().max().item()
    assert err <= scale / 2 + 1e-6, f"dequantize error {err} > half a step {scale / 2}"


def test_quantize_per_channel(device: torch.device) -> None:
    x = torch.randn(4, 33, generator=torch.Generator().manual_seed(0))
    scales = torch.tensor([0.01, 0.02, 0.05, 0.1], dtype=torch.float64)
    zero_points = torch.tensor([0, 3, -2, 10])
    q = _quantize(
        torch.quantize_per_channel,
        x.to(device),
        scales.to(device),
        zero_points.to(device),
        0,
        torch.qint8,
        device=device,
        what="quantize_per_channel",
    )
    assert q.qscheme() == torch.per_channel_affine
    want = _expected_int(x, scales[:, None], zero_points[:, None], -128, 127)
    got = q.int_repr().cpu().to(torch.int64)
    assert torch.equal(got, want), f"int_repr differs at {int((got != want).sum())} of {want.numel()} elements"
