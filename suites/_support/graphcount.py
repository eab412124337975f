"""A device graph was recorded and replayed: counted, never inferred from the absence of a skip.

``with expect(what, recorded=1, replayed=4) as counts: ...`` counts what happened inside the block and fails the test
when fewer graphs were recorded or replayed than asked. On CUDA and ROCm the profiler counts the runtime's own calls
(``cudaGraphInstantiate*`` / ``hipGraphInstantiate*`` records, ``cudaGraphLaunch`` / ``hipGraphLaunch`` replays: on
an H200, 12 ``CUDAGraph.replay()`` calls showed 12 ``cudaGraphLaunch`` runtime events, and 10 calls of a
``mode="reduce-overhead"`` function 10); elsewhere the graph objects' ``capture_end`` and ``replay`` calls are
counted. A drill that drops graphs (graph objects that capture nothing, ``torch.compile`` without reduce-overhead)
leaves both at zero.

(issue 39; issue 38 brings a module of the same name and interface that also feeds the test's evidence: where both
exist, that one is the one to keep.)
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from _support import env as _env

INSTANTIATE = ("cudaGraphInstantiate", "hipGraphInstantiate")
LAUNCH = ("cudaGraphLaunch", "hipGraphLaunch")


@dataclass
class Counts:
    recorded: int = 0
    replayed: int = 0
    source: str = "graph objects"


def _real_graph_classes() -> list[type]:
    found = []
    for holder, name in ((torch.cuda, "CUDAGraph"), (getattr(torch, "xpu", None), "XPUGraph"),
                         (torch.accelerator, "Graph")):  # fmt: skip
        cls = getattr(holder, name, None) if holder is not None else None
        if isinstance(cls, type):
            found.append(cls)
    return found


REAL_CLASSES = tuple(_real_graph_classes())


@contextlib.contextmanager
def _object_counts(counts: Counts) -> Iterator[None]:
    saved: list[tuple[type, str, Any]] = []

    def counting(cls: type, method: str, field: str) -> None:
        inherited = getattr(cls, method, None)
        if inherited is None:
            return

        @functools.wraps(inherited)
        def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
            out = inherited(self, *args, **kwargs)
            setattr(counts, field, getattr(counts, field) + 1)
            return out

        saved.append((cls, method, cls.__dict__.get(method)))
        setattr(cls, method, counted)

    for cls in REAL_CLASSES:
        counting(cls, "capture_end", "recorded")
        counting(cls, "replay", "replayed")
    try:
        yield
    finally:
        for cls, method, real in reversed(saved):
            if real is None:
                delattr(cls, method)
            else:
                setattr(cls, method, real)


@contextlib.contextmanager
def _runtime_counts(counts: Counts) -> Iterator[None]:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        yield
        torch.cuda.synchronize()
    names = [e.name for e in prof.events()]
    counts.recorded = sum(1 for n in names if n.startswith(INSTANTIATE))
    counts.replayed = sum(1 for n in names if n in LAUNCH)
    counts.source = "the runtime (profiler)"


@contextlib.contextmanager
def expect(what: str, *, recorded: int = 1, replayed: int = 1) -> Iterator[Counts]:
    """Fail unless the block records at least ``recorded`` graphs and replays at least ``replayed`` of them."""
    __tracebackhide__ = True
    counts = Counts()
    on_runtime = _env.get().device_type == "cuda"  # NVIDIA and ROCm: the runtime's calls are in the profile
    with _runtime_counts(counts) if on_runtime else _object_counts(counts):
        yield counts
    assert counts.recorded >= recorded and counts.replayed >= replayed, (
        f"{what}: {counts.recorded} graph(s) recorded and {counts.replayed} replayed, counted by {counts.source} "
        f"(expected at least {recorded} and {replayed}): the work ran without a device graph"
    )
