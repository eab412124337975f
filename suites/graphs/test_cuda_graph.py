"""Classic torch.cuda.CUDAGraph (CUDA and ROCm/hipGraph): static inputs and make_graphed_callables."""

from __future__ import annotations

import copy

import pytest
import torch
from _support import graphcount
from _support.requires import HARDWARE, accelerator, fact, requires

pytestmark = [
    pytest.mark.only_builds("cuda", "rocm"),
    requires(
        accelerator("cuda", what="torch.cuda.CUDAGraph capture"),
        fact(torch.cuda.is_available(), HARDWARE, "torch.cuda.is_available() is False"),
    ),
]


def test_cuda_graph_static_input_replay(device: torch.device) -> None:
    lin = torch.nn.Linear(64, 64, device=device)
    static_in = torch.randn(8, 64, device=device)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            lin(static_in)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with graphcount.expect("CUDAGraph capture and 3 replays", recorded=1, replayed=3):
        with torch.cuda.graph(g):
            assert torch.cuda.is_current_stream_capturing()
            static_out = lin(static_in)
        assert not torch.cuda.is_current_stream_capturing()
        news = []
        with torch.no_grad():
            for _ in range(3):
                news.append(torch.randn(8, 64, device=device))
                static_in.copy_(news[-1])
                g.replay()
                torch.cuda.synchronize()
                torch.testing.assert_close(static_out, lin(news[-1]))


def test_graph_pool_handle_shared_between_graphs(device: torch.device) -> None:
    a = torch.randn(1024, device=device)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        (a * 3) - 1
    torch.cuda.current_stream().wait_stream(side)
    pool = torch.cuda.graph_pool_handle()
    g1, g2 = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
    with graphcount.expect("two graphs sharing a pool", recorded=2, replayed=2):
        with torch.cuda.graph(g1, pool=pool):
            mid = a * 3
        with torch.cuda.graph(g2, pool=pool):
            out = mid - 1
        new = torch.randn(1024, device=device)
        a.copy_(new)
        g1.replay()
        g2.replay()
        torch.cuda.synchronize()
    assert torch.equal(out, new * 3 - 1)


def test_make_graphed_callables_forward_backward_match_eager(device: torch.device) -> None:
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)).to(device)
    ref = copy.deepcopy(model)
    sample = torch.randn(16, 32, device=device, requires_grad=True)
    # two graphs (forward, backward) recorded; two steps replay each: make_graphed_callables hands back the same
    # module with its forward replaced (seen on an H200), so only the replays tell a graphed model from the model
    counted = graphcount.expect("make_graphed_callables forward and backward", recorded=2, replayed=4)
    with counted:
        graphed = torch.cuda.make_graphed_callables(model, (sample,))
        _steps(model, ref, graphed, device)


def _steps(model: torch.nn.Module, ref: torch.nn.Module, graphed: torch.nn.Module, device: torch.device) -> None:
    for _ in range(2):
        x = torch.randn(16, 32, device=device)
        xg = x.clone().requires_grad_(True)
        xr = x.clone().requires_grad_(True)
        for p in list(model.parameters()) + list(ref.parameters()):
            p.grad = None
        out = graphed(xg)
        out.pow(2).sum().backward()
        ref_out = ref(xr)
        ref_out.pow(2).sum().backward()
        torch.cuda.synchronize()
        torch.testing.assert_close(out, ref_out)
        torch.testing.assert_close(xg.grad, xr.grad)
        for (name, p), pr in zip(model.named_parameters(), ref.parameters(), strict=True):
            torch.testing.assert_close(p.grad, pr.grad, msg=lambda m, n=name: f"grad of {n}: {m}")
