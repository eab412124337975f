"""Pinned (page-locked) host memory and non-blocking copies between it and the device.

Pinning is done by the accelerator's runtime: a CPU build refuses ``pin_memory=True`` (asserted, then
``[hardware]``: the test needs a device). On the device, pinned buffers round-trip through
non-blocking copies exactly once an event recorded after the copies has completed.
"""

from __future__ import annotations

import pytest
import torch
from _support.requires import skip_hardware

N = 1 << 20


def _pinned_or_skip(device: torch.device) -> torch.Tensor:
    if device.type == "cpu":
        # A CPU build refuses with "pin_memory ..."; a CUDA build without a GPU with "Found no NVIDIA driver".
        with pytest.raises(RuntimeError, match=r"pin_memory|driver|device") as refused:
            torch.empty(N, pin_memory=True)
        first = str(refused.value).strip().splitlines()[0]
        skip_hardware(f"pinned host memory needs an accelerator device; this torch refuses it: {first}")
    return torch.empty(N, pin_memory=True)


def test_pinned_host_memory(device: torch.device) -> None:
    buf = _pinned_or_skip(device)
    assert buf.is_pinned() and buf.device.type == "cpu"
    pinned = torch.arange(N, dtype=torch.float32).pin_memory()
    assert pinned.is_pinned()
    assert not torch.arange(4).is_pinned()
    del buf, pinned
    if hasattr(torch.accelerator, "empty_host_cache"):  # 2.12 (pytorch#171270); 2.11 has only torch._C's
        torch.accelerator.empty_host_cache()


def test_non_blocking_copies_round_trip(device: torch.device) -> None:
    src = _pinned_or_skip(device)
    src.copy_(torch.arange(N, dtype=torch.float32))
    dst = torch.empty(N, pin_memory=True)
    on_device = src.to(device, non_blocking=True)
    doubled = on_device * 2
    dst.copy_(doubled, non_blocking=True)
    done = torch.Event(device=device)
    done.record()
    done.synchronize()
    assert torch.equal(dst, torch.arange(N, dtype=torch.float32) * 2), "non-blocking round trip lost data"
