"""The device-agnostic memory API (``torch.accelerator``, 2.9): statistics, peak tracking, empty_cache.

On the device: a tensor's bytes show up in ``memory_allocated()`` and leave it when the tensor is
freed; the caching allocator keeps the block reserved until ``empty_cache()`` returns it to the device;
the peak survives the free and resets on ``reset_peak_memory_stats()``; ``memory_stats()`` agrees with
the scalar queries and ``get_memory_info()`` with the device's size (within 5%). A CPU build has no accelerator:
there the API must refuse clearly (a host-side check) and the device tests skip ``[hardware]``.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
from _support.requires import any_accelerator, attribute, need, requires, torch_at_least

# name -> the release it arrived in: the 2.9 API, and empty_host_cache from 2.12 (pytorch#171270; absent from
# 2.11.0+cu130, seen on an H200): a name newer than the torch that runs is not asked of it
API = {
    "memory_allocated": "2.9",
    "max_memory_allocated": "2.9",
    "memory_reserved": "2.9",
    "max_memory_reserved": "2.9",
    "memory_stats": "2.9",
    "reset_peak_memory_stats": "2.9",
    "reset_accumulated_memory_stats": "2.9",
    "empty_cache": "2.9",
    "empty_host_cache": "2.12",
    "get_memory_info": "2.9",
}
MIB = 1 << 20

pytestmark = requires(torch_at_least("2.9", "the torch.accelerator memory API"))
on_device = requires(any_accelerator("the torch.accelerator memory API on a device"))


@pytest.mark.host
def test_memory_api_present(device: torch.device, compat_env: Any) -> None:
    for name, since in API.items():
        if compat_env.torch_version[:2] < tuple(int(p) for p in since.split(".")):
            continue
        need(attribute(torch, f"accelerator.{name}", "device-agnostic memory API"))
        assert callable(getattr(torch.accelerator, name))
    if device.type == "cpu" and compat_env.build == "cpu":
        with pytest.raises(RuntimeError, match="accelerator"):
            torch.accelerator.memory_allocated()
    elif device.type == "cpu":
        # A device build on a host without its device (2.13/2.14 +cu130): the call answers 0 bytes
        # instead of refusing; nothing is allocated, so 0 is at least true.
        assert torch.accelerator.memory_allocated() == 0
    else:
        assert isinstance(torch.accelerator.memory_allocated(), int)


def _settle(device: torch.device) -> None:
    torch.accelerator.synchronize()
    torch.accelerator.empty_cache()


@on_device
def test_freed_tensor_memory_is_tracked_and_returned(device: torch.device) -> None:
    _settle(device)
    base = torch.accelerator.memory_allocated()
    t = torch.empty(8 * MIB, dtype=torch.uint8, device=device)
    held = torch.accelerator.memory_allocated()
    assert held >= base + 8 * MIB, f"allocated {held - base} bytes for an 8 MiB tensor"
    reserved = torch.accelerator.memory_reserved()
    assert reserved >= held
    del t
    torch.accelerator.synchronize()
    assert torch.accelerator.memory_allocated() == base, "the freed tensor's bytes are still counted"
    assert torch.accelerator.memory_reserved() == reserved, "the caching allocator should keep the block"
    torch.accelerator.empty_cache()
    returned = reserved - torch.accelerator.memory_reserved()
    assert returned >= 8 * MIB, f"empty_cache() returned {returned} bytes, not the freed 8 MiB block"


@on_device
def test_peak_tracking(device: torch.device) -> None:
    _settle(device)
    torch.accelerator.reset_peak_memory_stats()
    base = torch.accelerator.memory_allocated()
    assert torch.accelerator.max_memory_allocated() == base
    t = torch.empty(16 * MIB, dtype=torch.uint8, device=device)
    del t
    torch.accelerator.synchronize()
    assert torch.accelerator.max_memory_allocated() >= base + 16 * MIB, "the peak forgot the freed tensor"
    assert torch.accelerator.max_memory_reserved() >= torch.accelerator.max_memory_allocated()
    torch.accelerator.reset_peak_memory_stats()
    assert torch.accelerator.max_memory_allocated() == torch.accelerator.memory_allocated()


@on_device
def test_memory_stats_agree_with_queries(device: torch.device, compat_env) -> None:
    _settle(device)
    keep = torch.empty(4 * MIB, dtype=torch.uint8, device=device)
    stats = torch.accelerator.memory_stats()
    assert stats["allocated_bytes.all.current"] == torch.accelerator.memory_allocated()
    assert stats["reserved_bytes.all.current"] == torch.accelerator.memory_reserved()
    assert stats["allocated_bytes.all.peak"] >= stats["allocated_bytes.all.current"] >= keep.numel()
    free, total = torch.accelerator.get_memory_info()
    assert 0 < free <= total
    expected_total = (compat_env.info["devices"] or [{}])[0].get("total_memory")
    if expected_total:  # the runtime's total and the device properties may round differently
        assert abs(total - expected_total) <= 0.05 * expected_total, (
            f"get_memory_info total {total} vs device properties {expected_total}"
        )
