"""A device graph was recorded and replayed: counted, never inferred from the absence of a skip.

``with expect(what, recorded=1, replayed=4): ...`` counts what happened inside the block and fails the test when
fewer graphs were recorded or replayed than the block asked for. Two counts, from two sides:

* **the runtime** (CUDA and ROCm): the profiler's records of ``cudaGraphInstantiate*``/``hipGraphInstantiate*``
  and ``cudaGraphLaunch``/``hipGraphLaunch`` calls (:mod:`_support.evidence`): what the device was asked to do;
* **the graph objects** (every device, XPU included): the real classes' ``capture_end`` and ``replay`` calls
  (``torch.cuda.CUDAGraph``, ``torch.xpu.XPUGraph``, ``torch.accelerator.Graph``, held at import, so a drill's
  stand-in is not counted), which also count the graphs Inductor's cudagraph trees and
  ``make_graphed_callables`` replay.

On CUDA/ROCm the runtime's count decides (a replay that launches nothing is no replay); elsewhere the objects'
count does. A drill that drops graphs (``--drill=silent-skip``: ``torch.compile`` without reduce-overhead, graph
objects that capture nothing, ``make_graphed_callables`` handing the model back) leaves both at zero.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from _support import env as _env
from _support import evidence


def _real_graph_classes() -> list[type]:
    found = []
    for holder, name in ((torch.cuda, "CUDAGraph"), (getattr(torch, "xpu", None), "XPUGraph"),
                         (torch.accelerator, "Graph")):  # fmt: skip
        cls = getattr(holder, name, None) if holder is not None else None
        if isinstance(cls, type):
            found.append(cls)
    return found


REAL_CLASSES = tuple(_real_graph_classes())


@dataclass
class Counts:
    recorded: int = 0
    replayed: int = 0
    source: str = "graph objects"
    ended: int = 0  # capture_end calls
    exited: int = 0  # a graph's `with` blocks closed

    def settle(self) -> None:
        if self.source == "graph objects":
            self.recorded = max(self.ended, self.exited)


@contextlib.contextmanager
def _object_counts(counts: Counts) -> Iterator[None]:
    saved: list[tuple[type, str, Any]] = []

    def counting(cls: type, method: str, field: str) -> None:
        real = cls.__dict__.get(method)
        inherited = getattr(cls, method, None)
        if inherited is None:
            return

        @functools.wraps(inherited)
        def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
            out = inherited(self, *args, **kwargs)
            setattr(counts, field, getattr(counts, field) + 1)
            return out

        saved.append((cls, method, real))
        setattr(cls, method, counted)

    for cls in REAL_CLASSES:
        counting(cls, "capture_end", "ended")
        counting(cls, "__exit__", "exited")  # a graph used as a context manager may end its capture in C++
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
    recorder = evidence.active()
    own = recorder is None
    if own:
        recorder = evidence.Recorder(_env.get().device_type)
        recorder.start()
    before = recorder.checkpoint() if not own else evidence.Seen(recorder.device_type)
    recorded, replayed = before.recorded, before.replayed
    try:
        yield
    finally:
        after = recorder.stop() if own else recorder.checkpoint()
        counts.recorded, counts.replayed = after.recorded - recorded, after.replayed - replayed
        counts.source = "the runtime (profiler)"


@contextlib.contextmanager
def expect(what: str, *, recorded: int = 1, replayed: int = 1) -> Iterator[Counts]:
    """Fail unless the block records at least ``recorded`` graphs and replays at least ``replayed`` of them."""
    __tracebackhide__ = True
    objects, runtime = Counts(), Counts()
    on_runtime = _env.get().device_type == "cuda"  # NVIDIA and ROCm: the runtime's calls are in the profile
    with _object_counts(objects), _runtime_counts(runtime) if on_runtime else contextlib.nullcontext():
        yield runtime if on_runtime else objects
    objects.settle()
    counts = runtime if on_runtime else objects
    assert counts.recorded >= recorded and counts.replayed >= replayed, (
        f"{what}: {counts.recorded} graph(s) recorded and {counts.replayed} replayed, counted by {counts.source} "
        f"(expected at least {recorded} and {replayed}; the graph objects counted {objects.recorded} and "
        f"{objects.replayed}): the work ran without a device graph"
    )
