"""torch.cond captured in a CUDA graph with conditional IF nodes (2.12, CUDA runtime >= 12.4, not ROCm)."""

from __future__ import annotations

import pytest
import torch
from _support import graphcount
from _support.compiler import cudagraph_skips
from _support.requires import cuda_runtime_at_least, nvidia_gpu, requires, torch_at_least

pytestmark = [
    pytest.mark.only_builds("cuda", "rocm"),
    requires(
        torch_at_least("2.12", "torch.cond inside CUDA graphs"),
        nvidia_gpu("torch.cond inside CUDA graphs (conditional graph nodes)"),
        cuda_runtime_at_least("12.4", "torch.cond inside CUDA graphs (conditional IF nodes)"),
    ),
]


def _true(x: torch.Tensor) -> torch.Tensor:
    return x.sin()


def _false(x: torch.Tensor) -> torch.Tensor:
    return x.cos()


def test_cond_eager_capture_device_predicate_switches_branch(device: torch.device) -> None:
    # private dispatch modes, the recipe PyTorch's own tests use for eager capture
    from torch._higher_order_ops.cudagraph_conditional_nodes import (
        ControlFlowOpWarmupDispatchMode,
        CUDAGraphCaptureControlFlowOpDispatchMode,
    )

    x = torch.randn(64, device=device)
    pred = torch.tensor(True, device=device)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side), ControlFlowOpWarmupDispatchMode():
        torch.cond(pred, _true, _false, (x,))
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with graphcount.expect("torch.cond in one capture, four replays", recorded=1, replayed=4):
        with torch.cuda.graph(g, stream=side), CUDAGraphCaptureControlFlowOpDispatchMode():
            out = torch.cond(pred, _true, _false, (x,))
        for value in (True, False, True, False):  # one capture; the branch is chosen on the device
            pred.fill_(value)
            g.replay()
            torch.cuda.synchronize()
            torch.testing.assert_close(out, _true(x) if value else _false(x), msg=f"replay with pred={value}")


@pytest.mark.timeout(600)
def test_cond_compiled_cudagraphs_backend(device: torch.device) -> None:
    """The documented public path: torch.compile(backend="cudagraphs") with a device predicate."""
    import torch._dynamo

    torch._dynamo.reset()

    def foo(p: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode():
            return torch.cond(p, _true, _false, [x])

    cf = torch.compile(foo, backend="cudagraphs")
    x = torch.randn(64, device=device)
    pred = torch.tensor(True, device=device)
    before = cudagraph_skips()
    # the backend runs eagerly when it skips, and eager's outputs match too: a skip must raise instead
    counted = graphcount.expect('torch.compile(backend="cudagraphs") with torch.cond', recorded=1, replayed=3)
    with torch._inductor.config.patch({"triton.cudagraph_or_error": True}), counted:
        for _ in range(3):  # warm-up, capture + replay, replay
            y = cf(pred, x).clone()  # clone: graph outputs are overwritten by later replays
        y_false = cf(~pred, x).clone()
        y_true_again = cf(pred, x).clone()
    assert cudagraph_skips() == before, "the cudagraphs backend skipped capture and ran torch.cond eagerly"
    torch.testing.assert_close(y, _true(x))
    torch.testing.assert_close(y_false, _false(x))
    torch.testing.assert_close(y_true_again, _true(x))
