"""Timing helpers for performance tests: record figures, never assert absolute times."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import torch


def synchronize(device: torch.device) -> None:
    if device.type == "cpu":
        return
    if device.type == "xpu":
        # not torch.xpu.synchronize(): SIGSEGV after graph replay with oneAPI 2026.0 (pytorch#187277)
        torch.xpu.current_stream().synchronize()
        return
    torch.accelerator.synchronize()


def best_time(fn: Callable[[], Any], device: torch.device, repeats: int = 3, warmup: int = 1) -> float:
    """Minimum wall time in seconds of ``fn`` over ``repeats`` runs, device-synchronized."""
    for _ in range(warmup):
        fn()
    synchronize(device)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        synchronize(device)
        best = min(best, time.perf_counter() - t0)
    return best


def record_perf(
    record_property: Callable[[str, object], None],
    name: str,
    value: float,
    unit: str,
    *,
    shape: str,
    dtype: str,
    note: str = "",
    **extra: Any,
) -> None:
    """``perf.<name>`` = JSON {value, unit, shape, dtype, note, ...} (the harness reads it)."""
    payload: dict[str, Any] = {"value": float(value), "unit": unit, "shape": shape, "dtype": dtype, "note": note}
    payload["cpu_threads"] = torch.get_num_threads()
    payload.update(extra)
    record_property(f"perf.{name}", json.dumps(payload, sort_keys=True))
