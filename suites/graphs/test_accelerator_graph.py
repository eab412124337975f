"""torch.accelerator.Graph (2.12): capture on a side stream, replay, pools, keep_graph.

A build that registers no Graph implementation for the device (the CUDA wheels 2.13-2.15: pytorch#190307
is open) is ``[unsupported]`` through ``_support.graphs.new_graph``.
"""

from __future__ import annotations

import pytest
import torch
from _support import graphcount
from _support.graphs import new_graph
from _support.perf import synchronize
from _support.requires import accelerator, requires, torch_at_least

pytestmark = requires(
    torch_at_least("2.12", "torch.accelerator.Graph"),
    accelerator("cuda", "xpu", what="torch.accelerator.Graph capture"),
)


def _warm_up(stream: torch.Stream, fn) -> None:
    with stream:
        fn()
    stream.synchronize()


@pytest.mark.parametrize("replays", [1, 5])
def test_capture_on_side_stream_and_replay(device: torch.device, replays: int) -> None:
    x = torch.zeros(1024, device=device)
    side = torch.Stream(device=device)
    _warm_up(side, lambda: x.add_(1))
    g = new_graph()
    seen = []
    with graphcount.expect(f"capture on a side stream, {replays} replays", recorded=1, replayed=replays):
        with side, g:  # capture must not run on the default stream
            seen.append(torch.accelerator.current_stream().is_capturing())
            x.add_(1)
        assert seen == [True], f"is_capturing() inside capture = {seen}"
        assert side.is_capturing() is False, "still capturing after the block"
        x.zero_()
        for _ in range(replays):
            g.replay()  # replays on the current stream
        synchronize(device)
    assert torch.equal(x, torch.full_like(x, replays)), f"after {replays} replays x[:4]={x[:4].tolist()}"


def test_replay_reads_updated_static_input(device: torch.device) -> None:
    static_in = torch.randn(256, device=device)
    side = torch.Stream(device=device)
    _warm_up(side, lambda: static_in * 2 + 1)
    g = new_graph()
    with graphcount.expect("static input, 3 replays", recorded=1, replayed=3):
        with side, g:
            static_out = static_in * 2 + 1
        for _ in range(3):
            new = torch.randn(256, device=device)
            static_in.copy_(new)
            g.replay()
            synchronize(device)
            assert torch.equal(static_out, new * 2 + 1)


def test_pool_sharing(device: torch.device) -> None:
    a = torch.randn(512, device=device)
    side = torch.Stream(device=device)
    _warm_up(side, lambda: (a * 2) + 1)
    g1 = new_graph()
    with graphcount.expect("two graphs sharing a pool", recorded=2, replayed=2):
        with side, g1:
            mid = a * 2
        pool = g1.pool()
        assert isinstance(pool, tuple) and len(pool) == 2
        g2 = new_graph(pool=pool)
        with side, g2:
            out = mid + 1
        assert g2.pool() == pool, f"graph built with pool={pool} reports pool {g2.pool()}"
        new = torch.randn(512, device=device)
        a.copy_(new)
        g1.replay()
        g2.replay()
        synchronize(device)
    assert torch.equal(out, new * 2 + 1)


@pytest.mark.parametrize("explicit_instantiate", [True, False], ids=["instantiate", "lazy"])
def test_keep_graph_instantiate(device: torch.device, explicit_instantiate: bool) -> None:
    x = torch.zeros(128, device=device)
    side = torch.Stream(device=device)
    _warm_up(side, lambda: x.mul_(2).add_(1))
    g = new_graph(keep_graph=True)
    with graphcount.expect("keep_graph, 3 replays", recorded=1, replayed=3):
        with side, g:
            x.mul_(2).add_(1)
        if explicit_instantiate:
            g.instantiate()
        x.zero_()
        for _ in range(3):
            g.replay()  # keep_graph=True without instantiate(): the first replay instantiates
        synchronize(device)
    assert torch.equal(x, torch.full_like(x, 7.0))  # 0 -> 1 -> 3 -> 7
    g.reset()
