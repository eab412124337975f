"""Graph APIs that exist on every build: presence, signatures and what they do without a device."""

from __future__ import annotations

import inspect

import pytest
import torch
from _support.graphs import new_graph
from _support.requires import attribute, need, requires, torch_at_least

# API presence and behaviour without capture: sanity on every build, not the backend's verdict.
pytestmark = pytest.mark.host


@requires(torch_at_least("2.12", "torch.accelerator.Graph"))
def test_accelerator_graph_api_present() -> None:
    need(attribute(torch, "accelerator.Graph", "device-agnostic graphs"))
    g = torch.accelerator.Graph
    params = inspect.signature(g.__init__).parameters
    assert "keep_graph" in params and params["keep_graph"].default is False
    assert params["pool"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["capture_error_mode"].default == "default"
    for method in ("capture_begin", "capture_end", "instantiate", "replay", "reset", "pool", "debug_dump"):
        assert callable(getattr(g, method, None)), f"torch.accelerator.Graph.{method} missing"
    assert hasattr(g, "__enter__") and hasattr(g, "__exit__"), "Graph must be a context manager"
    assert callable(getattr(torch.Stream, "is_capturing", None)), "torch.Stream.is_capturing missing"


@requires(torch_at_least("2.12", "torch.accelerator.Graph"))
def test_accelerator_graph_construction(device: torch.device) -> None:
    """With an accelerator a Graph is constructed; without one construction is refused clearly."""
    if device.type == "cpu":
        # A CPU build says no accelerator is available; a CUDA build on a host without a GPU (torch
        # 2.14.1+cu130) says "Graph is not supported on device type: cuda". Both refuse clearly.
        with pytest.raises(RuntimeError, match=r"accelerator|not supported on device type"):
            torch.accelerator.Graph()
    else:
        g = new_graph(keep_graph=True)  # [unsupported] where the build registers no Graph for the device
        assert isinstance(g, torch.accelerator.Graph)


@requires(torch_at_least("2.12", "torch.Stream.is_capturing"))
def test_stream_not_capturing_outside_capture(device: torch.device) -> None:
    """``Stream.is_capturing()`` is the crash-free capture query on every build."""
    s = torch.Stream(device=device)
    assert s.is_capturing() is False
    with s:
        assert s.is_capturing() is False


def test_cuda_graph_api_present(compat_env) -> None:
    for name in ("CUDAGraph", "graph", "make_graphed_callables", "graph_pool_handle", "is_current_stream_capturing"):
        assert hasattr(torch.cuda, name), f"torch.cuda.{name} missing"
    params = inspect.signature(torch.cuda.graph.__init__).parameters
    assert {"pool", "stream", "capture_error_mode"} <= set(params)
    if compat_env.build in ("cpu", "xpu"):
        # gotcha: on builds without CUDA these raise instead of returning False
        with pytest.raises(RuntimeError, match="dummy base class"):
            torch.cuda.CUDAGraph()
        with pytest.raises(RuntimeError, match="dummy base class"):
            torch.cuda.is_current_stream_capturing()


@requires(torch_at_least("2.11", "torch.xpu.XPUGraph"))
def test_xpu_graph_api_present(compat_env) -> None:
    need(attribute(torch, "xpu.XPUGraph", "XPU graphs"))
    for name in ("XPUGraph", "graph", "graph_pool_handle", "make_graphed_callables", "is_current_stream_capturing"):
        assert hasattr(torch.xpu, name), f"torch.xpu.{name} missing"
    for method in ("capture_begin", "capture_end", "instantiate", "replay", "reset", "pool"):
        assert callable(getattr(torch.xpu.XPUGraph, method, None)), f"XPUGraph.{method} missing"
    if compat_env.build != "xpu":
        with pytest.raises(RuntimeError, match="dummy base class"):
            torch.xpu.XPUGraph()


def test_cond_selects_branch_eagerly(device: torch.device) -> None:
    """torch.cond semantics the graph tests rely on: the predicate picks the branch, on any device."""
    x = torch.randn(16, device=device)
    for value in (True, False):
        pred = torch.tensor(value, device=device)
        out = torch.cond(pred, lambda t: t.sin(), lambda t: t.cos(), (x,))
        torch.testing.assert_close(out, x.sin() if value else x.cos(), rtol=0, atol=0)


@pytest.mark.timeout(240)
def test_cond_selects_branch_compiled_eager_backend(device: torch.device) -> None:
    """torch.compile(backend="eager") of torch.cond: flipping the predicate flips the branch, no recompile needed."""
    import torch._dynamo

    torch._dynamo.reset()

    def f(pred: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.cond(pred, lambda t: t.sin(), lambda t: t.cos(), (x,))

    cf = torch.compile(f, backend="eager", fullgraph=True)
    x = torch.randn(16, device=device)
    pred = torch.tensor(True, device=device)
    torch.testing.assert_close(cf(pred, x), x.sin(), rtol=0, atol=0)
    torch.testing.assert_close(cf(~pred, x), x.cos(), rtol=0, atol=0)
