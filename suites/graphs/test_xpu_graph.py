"""torch.xpu.XPUGraph (2.11) on Intel XPU."""

from __future__ import annotations

import pytest
import torch
from _support import graphcount
from _support.requires import accelerator, requires, torch_at_least

pytestmark = [
    pytest.mark.only_builds("xpu"),
    requires(torch_at_least("2.11", "torch.xpu.XPUGraph"), accelerator("xpu", what="XPUGraph capture")),
]


def _sync() -> None:
    # NOT torch.xpu.synchronize(): it SIGSEGVs after a graph replay with the oneAPI 2026.0
    # runtime bundled in torch 2.13.0+xpu (pytorch#187277); stream sync is safe.
    torch.xpu.current_stream().synchronize()


def test_xpu_graph_capture_replay(device: torch.device) -> None:
    x = torch.zeros(256, device=device)
    s = torch.xpu.Stream()
    s.wait_stream(torch.xpu.current_stream())
    with torch.xpu.stream(s):
        x.add_(1)
    torch.xpu.current_stream().wait_stream(s)
    g = torch.xpu.XPUGraph()
    with graphcount.expect("XPUGraph capture, 4 replays", recorded=1, replayed=4):
        with torch.xpu.graph(g):
            assert torch.xpu.is_current_stream_capturing()
            x.add_(1)
        x.zero_()
        for _ in range(4):
            g.replay()
        _sync()
    assert torch.equal(x, torch.full_like(x, 4.0))


def test_xpu_make_graphed_callables_forward_backward(device: torch.device) -> None:
    import copy

    model = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).to(device)
    ref = copy.deepcopy(model)
    with graphcount.expect("XPU make_graphed_callables forward and backward", recorded=2, replayed=2):
        graphed = torch.xpu.make_graphed_callables(model, (torch.randn(8, 32, device=device, requires_grad=True),))
        x = torch.randn(8, 32, device=device)
        xg, xr = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
        out = graphed(xg)
        out.sum().backward()
    ref_out = ref(xr)
    ref_out.sum().backward()
    _sync()
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(xg.grad, xr.grad)
