"""``torch.accelerator.Graph`` as this build offers it, for the graph suites.

A build registers a Graph implementation per device type. The installed CUDA wheels (2.13.0, 2.14.1+cu130,
2.15.0+cu132) register none for ``cuda`` (``libtorch_cuda`` has no reference to ``GraphImplRegistry``; the
CUDA adapter is pytorch#190307): there construction raises ``Graph is not supported on device type:
cuda``, a fact about the build that :func:`new_graph` reports as ``[unsupported]`` (its text is in
``_support/refusals.py``). XPU is claimed (2.12, pytorch#176421): a refusal there fails.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

from _support import env as _env
from _support.refusals import refused
from _support.requires import skip_hardware

# Without an accelerator: a CPU build says no accelerator is available, a CUDA build on a host without a
# GPU says its device type has no Graph implementation.
REFUSAL_WITHOUT_DEVICE = r"accelerator|not supported on device type"


def new_graph(**kwargs: Any) -> torch.accelerator.Graph:
    """A Graph for this session's accelerator; one the build has no implementation for is ``[unsupported]``."""
    try:
        return torch.accelerator.Graph(**kwargs)
    except RuntimeError as e:  # XPU is claimed (2.12): a refusal fails there; CUDA's is in _support/refusals.py
        e_env = _env.get()
        refused(
            "torch.accelerator.Graph",
            e,
            f"torch.accelerator.Graph on {e_env.device_label} (torch {e_env.torch_base} registers no Graph "
            f"implementation for {e_env.device_type})",
        )


def refused_without_device(device: torch.device, what: str) -> None:
    """On a host without an accelerator: assert that Graph construction refuses, then skip ``[hardware]``."""
    __tracebackhide__ = True
    if device.type != "cpu":
        return
    with pytest.raises(RuntimeError, match=REFUSAL_WITHOUT_DEVICE):
        torch.accelerator.Graph()
    e = _env.get()
    skip_hardware(
        f"{what} needs a CUDA/ROCm or XPU device; none is available here (backend {e.backend}, device "
        f"{e.device_label}); torch.accelerator.Graph() refused as it must"
    )
