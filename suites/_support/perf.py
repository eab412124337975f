"""Timing helpers for performance tests: record figures, never assert absolute times.

A figure is recorded as the JUnit property ``perf.<name>`` whose value is a JSON object::

    {"label": "eigh batched vs loop", "value": 1.02, "unit": "x", "shape": "(48,100,100)",
     "dtype": "float32", "note": "loop time / batched time", "claim": "up to 100x on CUDA (2.12)",
     "cpu_threads": 1}

``label`` (human text), ``value``, ``unit`` (one of :data:`UNITS`), ``shape``, ``dtype``, ``note`` and
``cpu_threads`` are always present; ``claim`` (the release-note claim the figure is compared with) is
present only where the release notes make one. The harness renders these as a per-feature table.

Tests whose figures are only *recorded* (nothing about speed is asserted on this device) are
*measurements*: mark them ``@pytest.mark.measurement`` (or ``_support.scope.measurement_on`` when a
device class does assert a floor). The harness shows them as figures and never counts them as passes.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from typing import Any

import torch

UNITS = ("x", "s", "ms", "us", "MB", "GB", "GB/s", "%")
"""Units a figure may carry: ratios are ``x``, times ``s``/``ms``/``us``, sizes ``MB``/``GB``."""


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
    label: str,
    shape: str,
    dtype: str,
    note: str = "",
    claim: str | None = None,
    **extra: Any,
) -> None:
    """Record ``perf.<name>`` = JSON {label, value, unit, shape, dtype, note[, claim], cpu_threads, ...}.

    A unit outside :data:`UNITS`, an empty label or a non-finite value is a bug in the test: it raises.
    """
    if unit not in UNITS:
        raise ValueError(f"perf.{name}: unit {unit!r} is not one of {UNITS}")
    if not label.strip():
        raise ValueError(f"perf.{name}: a figure needs a human label")
    if not math.isfinite(float(value)):
        raise ValueError(f"perf.{name}: value {value!r} is not a finite number")
    payload: dict[str, Any] = {
        "label": label,
        "value": float(value),
        "unit": unit,
        "shape": shape,
        "dtype": dtype,
        "note": note,
        "cpu_threads": torch.get_num_threads(),
    }
    if claim:
        payload["claim"] = claim
    payload.update(extra)
    record_property(f"perf.{name}", json.dumps(payload, sort_keys=True))
