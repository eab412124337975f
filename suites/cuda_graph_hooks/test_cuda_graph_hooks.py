"""CUDA graph lifecycle hooks and graph export (2.14): ``torch.cuda.graphs.register_graph_capture_start_hook``
and its capture-end, instantiate, replay-start/-end and destroy siblings; ``torch.cuda.export_dot``.

Upstream's words (the 2.14 docstrings): "Register a hook run with each CUDA graph as its capture begins"
(... "when its capture ends", "right after it is instantiated", "at the start of every replay", "at the end
of every replay", ``fn(exec_ids)`` "to run when a CUDA graph is destroyed"), each returning a
``RemovableHandle``; ``export_dot(path)`` "Return[s] a capture-end hook that dumps the captured graph to
path in Graphviz DOT format". On a CUDA/ROCm device: every hook fires once per lifecycle step, in order, for
a graph it did not build, a removed hook no longer fires, and the replayed work computes the right values.
The DOT export needs the ``cuda-bindings`` package (``[dependency]`` without it). Without a device the
registration is checked host-side and ``CUDAGraph`` must refuse, then ``[hardware]``.
"""

from __future__ import annotations

import gc
import inspect
from pathlib import Path

import pytest
import torch
from _support.refusals import EXPORT_DOT, refused
from _support.requires import api, requires, skip_hardware

HOOKS = ("capture_start", "capture_end", "instantiate", "replay_start", "replay_end")
REGISTER = {
    "capture_start": "register_graph_capture_start_hook",
    "capture_end": "register_graph_capture_end_hook",
    "instantiate": "register_graph_instantiate_hook",
    "replay_start": "register_graph_replay_start_hook",
    "replay_end": "register_graph_replay_end_hook",
    "destroy": "register_graph_destroy_hook",
}

pytestmark = requires(
    *(api(f"torch.cuda.graphs.{name}", since="2.14") for name in REGISTER.values()),
    api("torch.cuda.export_dot", since="2.14"),
)


def _register(name: str, fn) -> object:
    return getattr(torch.cuda.graphs, REGISTER[name])(fn)


@pytest.mark.host
def test_graph_hook_registration() -> None:
    from torch.utils.hooks import RemovableHandle

    for name, function in REGISTER.items():
        register = getattr(torch.cuda.graphs, function)
        assert list(inspect.signature(register).parameters) == ["fn"], f"{function}{inspect.signature(register)}"
        handle = _register(name, lambda *args: None)
        assert isinstance(handle, RemovableHandle), f"{function} returned {type(handle).__name__}"
        handle.remove()
    hook = torch.cuda.export_dot("graph.dot")
    assert callable(hook) and len(inspect.signature(hook).parameters) == 1, "export_dot must return a one-argument hook"


def _capture(x: torch.Tensor) -> tuple[torch.cuda.CUDAGraph, torch.Tensor]:
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):  # warm-up outside the graph
            x * 2 + 1
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = x * 2 + 1
    return graph, y


def _without_device(device, compat_env) -> None:
    if device.type == "cuda":
        return
    if device.type == "cpu":
        with pytest.raises(RuntimeError):
            torch.cuda.CUDAGraph()
    skip_hardware(f"CUDA graph hooks need a CUDA/ROCm device; none is here (device {compat_env.device_label})")


def test_graph_lifecycle_hooks_fire_in_order(device, compat_env) -> None:
    _without_device(device, compat_env)
    seen: list[str] = []
    destroyed: list[set] = []
    handles = [_register(name, lambda g, n=name: seen.append(n)) for name in HOOKS]
    handles.append(_register("destroy", lambda ids: destroyed.append(set(ids))))
    try:
        x = torch.arange(1024, dtype=torch.float32, device=device)
        graph, y = _capture(x)
        assert seen == ["capture_start", "capture_end", "instantiate"], f"after capture: {seen}"
        x.copy_(torch.full_like(x, 3.0))
        graph.replay()
        graph.replay()
        torch.cuda.synchronize()
        assert seen[3:] == ["replay_start", "replay_end"] * 2, f"after two replays: {seen}"
        assert torch.equal(y, torch.full_like(y, 7.0)), f"the replayed graph computed {y[:4].tolist()}"
        handles[HOOKS.index("replay_start")].remove()
        graph.replay()
        assert seen[7:] == ["replay_end"], f"a removed replay-start hook still fired: {seen}"
        del graph, y
        gc.collect()
        assert len(destroyed) == 1, f"the destroy hook fired {len(destroyed)} times for one destroyed graph"
    finally:
        for handle in handles:
            handle.remove()


def test_export_dot_writes_the_captured_graph(device, compat_env, tmp_path: Path) -> None:
    _without_device(device, compat_env)
    path = tmp_path / "graph.dot"
    x = torch.ones(256, device=device)
    graph = torch.cuda.CUDAGraph()
    graph.register_capture_end_hook(torch.cuda.export_dot(str(path)))
    try:
        with torch.cuda.graph(graph):
            x.mul_(2)
    except RuntimeError as e:  # "cuda-bindings" missing is a [dependency] (the refusal table); anything else fails
        refused(EXPORT_DOT, e, "torch.cuda.export_dot")
    text = path.read_text(encoding="utf-8", errors="replace")
    assert text.lstrip().startswith("digraph"), f"{path.name} is not Graphviz DOT: {text[:200]!r}"
    assert "kernel" in text.lower() or "->" in text or "node" in text.lower(), (
        f"no node in the DOT output: {text[:300]!r}"
    )
