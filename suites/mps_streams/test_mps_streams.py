"""MPS streams (2.15, pytorch#191415): ``torch.mps.Stream``, ``stream``, ``current_stream``,
``default_stream`` and ``set_stream``, "based on the corresponding ones for CUDA".

Present on every 2.15 build (no MPS device is needed to check the API); work enqueued on a side stream
runs on an Apple GPU only: other hosts assert that a stream cannot be created there, then skip
``[hardware]`` (no backend of the matrix has an MPS device; a native macOS arm64 run has).
"""

from __future__ import annotations

import inspect

import pytest
import torch
from _support.requires import api, requires, skip_hardware

NAMES = ("Stream", "stream", "current_stream", "default_stream", "set_stream")

pytestmark = requires(api("torch.mps.Stream", since="2.15"))


@pytest.mark.host
def test_mps_stream_api_mirrors_cuda() -> None:
    for name in NAMES:
        assert callable(getattr(torch.mps, name, None)), f"torch.mps.{name} missing"
        assert callable(getattr(torch.cuda, name, None)), f"torch.cuda.{name} missing (the API MPS mirrors)"
    for name in ("set_stream", "stream"):
        mps, cuda = inspect.signature(getattr(torch.mps, name)), inspect.signature(getattr(torch.cuda, name))
        assert list(mps.parameters) == list(cuda.parameters) == ["stream"], f"mps.{name}{mps} vs cuda.{name}{cuda}"
    for member in ("synchronize", "stream_id"):
        assert hasattr(torch.mps.Stream, member), f"torch.mps.Stream.{member} missing"


def test_mps_side_stream_runs_work(device: torch.device, compat_env) -> None:
    if not torch.backends.mps.is_available():
        with pytest.raises(RuntimeError):
            torch.mps.Stream()
        skip_hardware(f"MPS streams need an Apple GPU; none here (device {compat_env.device_label})")
    mps = torch.device("mps")
    x = torch.arange(4096, dtype=torch.float32, device=mps)
    side = torch.mps.Stream()
    default = torch.mps.default_stream()
    with torch.mps.stream(side):
        assert torch.mps.current_stream().stream_id == side.stream_id, "the side stream is not current inside"
        y = x * 2 + 1
    assert torch.mps.current_stream().stream_id == default.stream_id, "the default stream is not restored"
    side.synchronize()
    assert torch.equal(y.cpu(), torch.arange(4096, dtype=torch.float32) * 2 + 1)
