"""Scope markers that depend on the device: which tests speak for this backend.

* ``measurement``: the test records figures and asserts nothing about them on this device; the
  harness shows its figures and never counts it as a pass.
* ``host``: the test checks host-side logic (API presence, formats, CPU kernels of an accelerator
  build); the harness judges a backend without it unless nothing else ran there.

Both are plain pytest markers; the helpers below apply one only on some device types, decided once
per session from the probe (at import, so the marker is on the test from collection on).
"""

from __future__ import annotations

import pytest

from _support import env as _env

# a mark that changes nothing: usable as a decorator and in ``pytestmark`` lists alike
_BACKEND_SCOPE = pytest.mark.skipif(False, reason="backend scope on this device")


def measurement_on(*device_types: str) -> pytest.MarkDecorator:
    """``pytest.mark.measurement`` where the session's device type is one of ``device_types``: a perf
    test that only records figures there (CPU) but asserts a floor elsewhere keeps backend scope there."""
    return pytest.mark.measurement if _env.get().device_type in device_types else _BACKEND_SCOPE


def host_on(*device_types: str) -> pytest.MarkDecorator:
    """``pytest.mark.host`` where the session's device type is one of ``device_types``: e.g. the x86
    CPU quantization engine is the feature itself on a CPU build, host-side on a CUDA build."""
    return pytest.mark.host if _env.get().device_type in device_types else _BACKEND_SCOPE
