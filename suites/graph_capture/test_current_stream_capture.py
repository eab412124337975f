"""``torch.accelerator.Graph`` captures on the current stream (2.12, pytorch#171285).

Unlike ``torch.cuda.graph``, which picks a side stream when none is given, ``torch.accelerator.Graph``
takes no stream: entering it starts the capture on the current stream of the current device. So the work
must be put on a side stream first (``with side, graph:``), and on CUDA a capture on the default stream
raises ("CUDA graphs must be captured on a non-default stream"). Each body runs on the probed device; on a
host without one the construction is asserted to refuse, then the test skips ``[hardware]``.
"""

from __future__ import annotations

import inspect

import pytest
import torch
from _support import graphcount
from _support.graphs import new_graph, refused_without_device
from _support.perf import synchronize
from _support.requires import api, requires

pytestmark = requires(api("torch.accelerator.Graph", since="2.12"), api("torch.Stream.is_capturing"))


def _warm_up(stream: torch.Stream, fn) -> None:
    with stream:
        fn()
    stream.synchronize()


@pytest.mark.host
def test_graph_takes_no_stream_argument() -> None:
    """The API offers no way to choose the capture stream: the current one is used."""
    params = inspect.signature(torch.accelerator.Graph.__init__).parameters
    assert "stream" not in params, f"torch.accelerator.Graph takes a stream argument: {list(params)}"
    assert callable(getattr(torch.accelerator, "current_stream", None)), "torch.accelerator.current_stream missing"
    # the contrast the release note draws: torch.cuda.graph chooses a side stream when given none
    legacy = inspect.signature(torch.cuda.graph.__init__).parameters
    assert "stream" in legacy and legacy["stream"].default is None, f"torch.cuda.graph parameters: {list(legacy)}"


def test_capture_records_on_the_current_stream(device: torch.device) -> None:
    refused_without_device(device, "capture on the current stream")
    x = torch.zeros(512, device=device)
    side, other = torch.Stream(device=device), torch.Stream(device=device)
    _warm_up(side, lambda: x.add_(1))
    g = new_graph()
    seen = {}
    with graphcount.expect("capture on the current stream, 3 replays", recorded=1, replayed=3):
        with side, g:
            seen["current stream is the side stream"] = torch.accelerator.current_stream() == side
            seen["side stream capturing"] = side.is_capturing()
            seen["another stream capturing"] = other.is_capturing()
            x.add_(1)
        want = {
            "current stream is the side stream": True,
            "side stream capturing": True,
            "another stream capturing": False,
        }
        assert seen == want, f"inside `with side, graph:` on {device}: {seen}"
        assert not side.is_capturing(), "the side stream is still capturing after the block"
        x.zero_()
        for _ in range(3):
            g.replay()
        synchronize(device)
    assert torch.equal(x, torch.full_like(x, 3.0)), f"after 3 replays x[:4] = {x[:4].tolist()}"


def test_capture_on_the_default_stream(device: torch.device, compat_env) -> None:
    """CUDA/ROCm refuse a capture on the default stream; other accelerators capture on the current one."""
    refused_without_device(device, "capture on the default stream")
    x = torch.zeros(256, device=device)
    current = torch.accelerator.current_stream()
    g = new_graph()
    if compat_env.build in ("cuda", "rocm"):
        with pytest.raises(RuntimeError, match="non-default stream"), g:
            x.add_(1)
        assert not current.is_capturing(), "the refused capture left the default stream capturing"
        # nothing is left half-captured: a capture on a side stream works right after
        side = torch.Stream(device=device)
        _warm_up(side, lambda: x.add_(1))
        g = new_graph()
        with graphcount.expect("capture on a side stream after the refusal", recorded=1, replayed=1):
            with side, g:
                x.add_(1)
            x.zero_()
            g.replay()
            synchronize(device)
    else:
        with graphcount.expect("capture on the default stream", recorded=1, replayed=1):
            with g:
                assert current.is_capturing(), f"{device}: the current stream is not capturing inside the graph"
                x.add_(1)
            x.zero_()
            g.replay()
            synchronize(device)
    assert torch.equal(x, torch.ones_like(x)), f"after one replay x[:4] = {x[:4].tolist()}"
