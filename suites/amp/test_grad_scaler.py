"""torch.amp.GradScaler on the device: a mixed-precision training run converges like float32, and an
overflowing step is skipped and backs the scale off.

The run fits a small MLP to a fixed teacher network (256 samples, Adam, 60 steps) three times from the
same initial weights: in float32, and under autocast with GradScaler in float16 and in bfloat16. The
mixed-precision run must reduce its loss at least ``AMP_MIN_LOSS_REDUCTION`` times and end within
``AMP_FINAL_LOSS_RATIO`` of the float32 run's final loss (``_support/tolerances.py``).
"""

from __future__ import annotations

import pytest
import torch
from _support.amp import autocast
from _support.tolerances import AMP_FINAL_LOSS_RATIO, AMP_MIN_LOSS_REDUCTION, dtype_name
from torch import nn
from torch.nn import functional as F

STEPS = 60
DTYPES = [torch.float16, torch.bfloat16]


def _problem(device: torch.device) -> tuple[torch.Tensor, torch.Tensor, nn.Module]:
    torch.manual_seed(0)
    teacher = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 4))
    x = torch.randn(256, 16)
    with torch.no_grad():
        y = teacher(x)
    torch.manual_seed(1)
    student = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 4))
    return x.to(device), y.to(device), student.to(device)


def _train(device: torch.device, dtype: torch.dtype | None) -> tuple[list[float], torch.amp.GradScaler]:
    x, y, model = _problem(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    scaler = torch.amp.GradScaler(device.type, enabled=dtype is not None)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad(set_to_none=True)
        if dtype is None:
            loss = F.mse_loss(model(x), y)
        else:
            with autocast(device.type, dtype):
                loss = F.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    return losses, scaler


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_name)
def test_mixed_precision_training_converges_like_float32(device: torch.device, dtype: torch.dtype) -> None:
    fp32, _ = _train(device, None)
    amp, scaler = _train(device, dtype)
    assert all(map(torch.isfinite, map(torch.tensor, amp))), f"non-finite loss in the {dtype_name(dtype)} run"
    assert amp[0] / amp[-1] >= AMP_MIN_LOSS_REDUCTION, (
        f"{dtype_name(dtype)} run reduced its loss only {amp[0] / amp[-1]:.1f}x ({amp[0]:.4g} -> {amp[-1]:.4g})"
    )
    assert amp[-1] <= fp32[-1] * AMP_FINAL_LOSS_RATIO, (
        f"{dtype_name(dtype)} final loss {amp[-1]:.4g} vs float32 {fp32[-1]:.4g} (limit {AMP_FINAL_LOSS_RATIO}x)"
    )
    scale = scaler.get_scale()
    assert 0 < scale < float("inf"), f"GradScaler scale {scale}"


def test_overflowing_step_is_skipped_and_scale_backs_off(device: torch.device) -> None:
    x, y, model = _problem(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler(device.type, init_scale=2.0**16, growth_interval=1000)
    with autocast(device.type, torch.float16):
        loss = F.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    first = next(model.parameters())
    first.grad.view(-1)[0] = float("inf")  # an overflow in one gradient element
    before = [p.detach().clone() for p in model.parameters()]
    scaler.step(opt)
    scaler.update()
    assert all(torch.equal(b, p) for b, p in zip(before, model.parameters(), strict=True)), "the inf step was applied"
    assert scaler.get_scale() == 2.0**15, f"scale after an overflow: {scaler.get_scale()} (want backoff to 2**15)"

    opt.zero_grad(set_to_none=True)
    with autocast(device.type, torch.float16):
        loss = F.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert not all(torch.equal(b, p) for b, p in zip(before, model.parameters(), strict=True)), (
        "a finite step was skipped"
    )
    assert scaler.get_scale() == 2.0**15
