"""Per-process Intel GPU memory tracking: ``torch.xpu.list_gpu_processes`` (2.14, pytorch#185192).

"Analogous to the existing CUDA counterpart": same signature as ``torch.cuda.list_gpu_processes``
(``device=None``, returns a printout of each process on the device and its memory in MB). On an XPU the
printout lists this process while it holds memory there; without an XPU the query refuses.
"""

from __future__ import annotations

import inspect
import os

import pytest
import torch
from _support.perf import synchronize
from _support.refusals import XPU_PROCESSES
from _support.requires import api, requires, skip_hardware

MIB = 1 << 20

pytestmark = [pytest.mark.only_builds("xpu"), requires(api("torch.xpu.list_gpu_processes", since="2.14"))]


@pytest.mark.host
def test_list_gpu_processes_mirrors_cuda() -> None:
    xpu = inspect.signature(torch.xpu.list_gpu_processes)
    cuda = inspect.signature(torch.cuda.list_gpu_processes)
    assert list(xpu.parameters) == list(cuda.parameters) == ["device"], f"xpu{xpu} vs cuda{cuda}"
    assert xpu.parameters["device"].default is None, f"torch.xpu.list_gpu_processes{xpu}"
    assert getattr(xpu.return_annotation, "__name__", xpu.return_annotation) == "str", f"returns {xpu}"


def test_list_gpu_processes_lists_this_process(device: torch.device, compat_env) -> None:
    if device.type != "xpu":
        with pytest.raises(Exception) as refused:  # any refusal: checked below
            torch.xpu.list_gpu_processes()
        assert not isinstance(refused.value, (TypeError, AttributeError, NameError)), repr(refused.value)
        skip_hardware(
            f"torch.xpu.list_gpu_processes reads an Intel GPU; none here (device {compat_env.device_label}); it "
            f"refused: {type(refused.value).__name__}: {str(refused.value).splitlines()[0]}"
        )
    held = torch.empty(64 * MIB, dtype=torch.uint8, device=device).fill_(1)
    synchronize(device)
    try:
        text = torch.xpu.list_gpu_processes(device)
    except (ImportError, RuntimeError) as e:  # pyzes missing, no Sysman privilege: the table says; else it fails
        refused(XPU_PROCESSES, e, "torch.xpu.list_gpu_processes (needs pyzes>=0.1.2 and Level Zero Sysman access)")
    assert isinstance(text, str), f"list_gpu_processes returned {type(text).__name__}"
    assert str(os.getpid()) in text, f"pid {os.getpid()} (holding {held.numel() // MIB} MiB) not listed:\n{text}"
