"""Autocast availability and the op-level dtype rules autocast promises per device.

The rules are the documented autocast op lists ("Autocast Op Reference" in the torch.amp docs):
matmul, linear and convolution run in the lower-precision dtype on every device; mse_loss runs in
float32 on every device; softmax is on the float32 list of CUDA (and of XPU, which shares CUDA's
lists) but not on the CPU's, where it runs in its input's dtype.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import torch

from _support.refusals import refused_silently
from _support.requires import UNSUPPORTED, Requirement, need

LOWER = "lower"  # the autocast dtype under test
FP32 = "float32"

# op name -> expected output dtype class, per device type (None: the CUDA lists, the default)
_SOFTMAX = {"cpu": LOWER}
EXPECTED = {
    "matmul": {None: LOWER},
    "linear": {None: LOWER},
    "conv2d": {None: LOWER},
    "bmm": {None: LOWER},
    "mse_loss": {None: FP32},
    "softmax": {None: FP32, **_SOFTMAX},
}


def expected_dtype(op: str, device_type: str, lower: torch.dtype) -> torch.dtype:
    rules = EXPECTED[op]
    kind = rules.get(device_type, rules[None])
    return lower if kind == LOWER else torch.float32


def autocast_available(device_type: str) -> Requirement:
    ok = bool(torch.amp.is_autocast_available(device_type))
    return Requirement(ok, UNSUPPORTED, f"torch.autocast is not available for device type {device_type!r}")


@contextmanager
def autocast(device_type: str, dtype: torch.dtype) -> Iterator[None]:
    """``torch.autocast(device_type, dtype)``, entered and checked: when autocast refuses ``dtype`` here
    (it warns and disables itself) the test fails where the claims cover the device (every family) and
    otherwise is judged by ``_support/refusals.py``."""
    need(autocast_available(device_type))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ctx = torch.autocast(device_type, dtype=dtype)
    with ctx:
        if not torch.is_autocast_enabled(device_type) or torch.get_autocast_dtype(device_type) != dtype:
            said = [" ".join(str(w.message).split()) for w in caught]
            why = said[0] if said else "autocast is not enabled inside its own context"
            # claimed on every backend family: fails there; no refusal text is listed for another
            refused_silently(
                "torch.autocast", why, f"torch.autocast({device_type!r}, dtype={str(dtype).removeprefix('torch.')})"
            )
        yield
