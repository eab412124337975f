"""Intel GPU telemetry in ``torch.xpu`` (2.13, pytorch#187807).

Six queries read Level Zero Sysman through ``pyzes``: ``temperature`` (degrees Celsius), ``clock_rate``
(MHz), ``power_draw`` (watts), ``utilization`` and ``memory_usage`` (percent) and ``device_memory_used``
(bytes), each taking ``device=None``. On an XPU every reading must be a finite number in its physical
range; without an XPU every query must refuse with an error (never answer a number). Sysman needs
elevated privileges on some hosts: a refusal that says so is ``[hardware]`` (a capability absent here).
GPUs older than Arc B-Series fail once the XPU runtime is up: a known issue (pytorch#185198).
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass

import pytest
import torch
from _support.perf import synchronize
from _support.refusals import refused
from _support.requires import api, need, requires, skip_hardware

MIB = 1 << 20


@dataclass(frozen=True)
class Reading:
    returns: str  # the annotation as written in torch/xpu/__init__.py
    unit: str
    low: float  # exclusive where ``strict``
    high: float
    strict: bool = False


READINGS = {
    "temperature": Reading("float", "degrees C", 0.0, 125.0, strict=True),
    "clock_rate": Reading("float", "MHz", 0.0, 10_000.0, strict=True),
    "power_draw": Reading("float", "W", 0.0, 2_000.0),
    "utilization": Reading("float", "%", 0.0, 100.0),
    "memory_usage": Reading("float", "%", 0.0, 100.0),
    "device_memory_used": Reading("int", "bytes", 0.0, math.inf, strict=True),
}

pytestmark = [pytest.mark.only_builds("xpu"), requires(api("torch.xpu.temperature", since="2.13"))]


@pytest.mark.host
@pytest.mark.parametrize("name", list(READINGS))
def test_telemetry_api(name: str) -> None:
    need(api(f"torch.xpu.{name}", since="2.13"))
    sig = inspect.signature(getattr(torch.xpu, name))
    assert list(sig.parameters) == ["device"], f"torch.xpu.{name}{sig}: want one parameter, device"
    assert sig.parameters["device"].default is None, f"torch.xpu.{name}{sig}: device must default to None"
    returns = sig.return_annotation
    assert getattr(returns, "__name__", returns) == READINGS[name].returns, f"torch.xpu.{name}{sig}"


def _read(name: str, device: torch.device) -> float:
    try:
        return getattr(torch.xpu, name)(device)
    except (ImportError, RuntimeError) as e:  # pyzes missing, no Sysman privilege: the table says; else it fails
        refused(f"torch.xpu.{name}", e, f"torch.xpu.{name} (needs pyzes and Level Zero Sysman access)")


@pytest.mark.parametrize("name", list(READINGS))
def test_telemetry_reading(name: str, device: torch.device, compat_env) -> None:
    need(api(f"torch.xpu.{name}", since="2.13"))
    spec = READINGS[name]
    if device.type != "xpu":
        with pytest.raises(Exception) as refused:  # any refusal: checked below
            getattr(torch.xpu, name)()
        assert not isinstance(refused.value, (TypeError, AttributeError, NameError)), repr(refused.value)
        assert str(refused.value).strip(), f"torch.xpu.{name}() refused without a message"
        skip_hardware(
            f"torch.xpu.{name} reads an Intel GPU; none here (device {compat_env.device_label}); "
            f"it refused: {type(refused.value).__name__}: {str(refused.value).splitlines()[0]}"
        )
    held = torch.empty(256 * MIB, dtype=torch.uint8, device=device).fill_(1)  # the runtime is up, memory in use
    synchronize(device)
    value = _read(name, device)
    assert isinstance(value, (int, float)) and math.isfinite(value), f"torch.xpu.{name}() = {value!r}"
    above = value > spec.low if spec.strict else value >= spec.low
    assert above and value <= spec.high, f"torch.xpu.{name}() = {value} {spec.unit}, want in ({spec.low}, {spec.high}]"
    if name == "device_memory_used":
        total = torch.xpu.get_device_properties(device).total_memory
        assert held.numel() <= value <= total, f"device memory used {value} B with {held.numel()} B held, total {total}"
