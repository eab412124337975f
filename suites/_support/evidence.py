"""Evidence of device work: what the profiler saw run while a claimed test ran, recorded with its result.

A claimed test passes on what it did, not on the absence of a failure. While it runs (conftest starts a
:class:`Recorder` for every test the claims cover on this device) the profiler records:

* **kernels**: on an accelerator the device kernels (Kineto's device events; ``Memcpy``/``Memset`` are copies,
  not work, and are counted apart); on the CPU the aten ops that did the work (bookkeeping such as ``empty``,
  ``view`` or ``copy_`` left out);
* **per claimed op**: the watch (:mod:`_support.ondevice`) marks each call of a claimed eager op with a
  ``record_function`` range; the kernels launched inside it (matched to their launch by correlation id) are
  that op's evidence: ``flash_fwd`` for SDPA on sm_90, ``_scaled_dot_product_flash_attention_for_cpu`` on the
  CPU, the cuSPARSELt GEMM for a 2:4 matmul;
* **graphs**: recordings (``cudaGraphInstantiate``/``hipGraphInstantiate``) and replays
  (``cudaGraphLaunch``/``hipGraphLaunch``) from the runtime's own calls.

The result goes into the ``evidence`` property (JSON, bounded) that travels in the JUnit and the event log; the
harness shows it on the test and in the feature cell. On an accelerator a claimed test that ran no device
kernel and replayed no graph fails ("no device work seen"), and so does a claimed op that was called outside a
capture and launched nothing. Only the profiler's own records are read (``_KinetoEvent``: name, device type,
correlation id, times, thread), the same way on torch 2.11 (no ``activity_type``) and later.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final

PROPERTY: Final = "evidence"
OP_MARK: Final = "compat.op:"  # record_function name prefix around each watched claimed-op call
TOP: Final = 8  # kernel names kept per test (and per op): enough to name what ran, bounded
NAME_CAP: Final = 160  # characters of a kernel name (templated CUDA names run to kilobytes)
# Graph recordings and replays, as the runtimes name their calls (CUDA runtime and driver, HIP)
RECORD: Final = re.compile(r"^(cuda|hip)GraphInstantiate|^cuGraphInstantiate")
REPLAY: Final = re.compile(r"^(cuda|hip)GraphLaunch|^cuGraphLaunch")
COPY: Final = re.compile(r"^(Memcpy|Memset|memcpy|memset)")
# CPU aten ops that move or describe data rather than compute the op's result
BOOKKEEPING: Final = frozenset(
    "aten::" + n
    for n in [
        "empty",
        "empty_like",
        "empty_strided",
        "zeros",
        "zeros_like",
        "zero_",
        "ones",
        "ones_like",
        "full",
        "full_like",
        "fill_",
        "view",
        "view_as",
        "reshape",
        "as_strided",
        "transpose",
        "permute",
        "t",
        "expand",
        "expand_as",
        "contiguous",
        "clone",
        "copy_",
        "to",
        "_to_copy",
        "detach",
        "detach_",
        "alias",
        "resize_",
        "item",
        "_local_scalar_dense",
        "resolve_conj",
        "resolve_neg",
        "lift_fresh",
        "numpy_T",
        "select",
        "slice",
        "unsqueeze",
        "squeeze",
        "unbind",
        "split",
        "chunk",
        "narrow",
        "set_",
        "result_type",
        "is_nonzero",
        "_reshape_alias",
        "_unsafe_view",
        "new_empty",
        "new_zeros",
        "new_empty_strided",
        "stride",
        "size",
        "dim",
    ]
)


@dataclass
class Seen:
    """What ran while a test ran (accumulated over every stop of its recorder)."""

    device: str  # cpu | cuda | xpu (the profiler's view of what ran)
    kernels: Counter[str] = field(default_factory=Counter)
    per_op: dict[str, Counter[str]] = field(default_factory=dict)
    ops_called: Counter[str] = field(default_factory=Counter)  # watched calls that returned, outside capture
    copies: int = 0
    recorded: int = 0
    replayed: int = 0

    def add(self, other: Seen) -> None:
        self.kernels.update(other.kernels)
        for op, found in other.per_op.items():
            self.per_op.setdefault(op, Counter()).update(found)
        self.ops_called.update(other.ops_called)
        self.copies += other.copies
        self.recorded += other.recorded
        self.replayed += other.replayed

    @property
    def work(self) -> bool:
        return bool(self.kernels) or self.replayed > 0

    def silent_ops(self) -> list[str]:
        """Claimed ops that were called and launched nothing (a host fallback inside the op, or a no-op)."""
        return sorted(op for op in self.ops_called if not self.per_op.get(op))

    def to_json(self, where: str, required: bool = False) -> dict[str, Any]:
        """`required`: the claim names an op that computes, so the test needs kernels or replays (the harness
        re-checks it when it reads the cell); `silent`: claimed ops called that launched nothing."""

        def top(found: Counter[str]) -> list[list[Any]]:
            return [[name[:NAME_CAP], count] for name, count in found.most_common(TOP)]

        data: dict[str, Any] = {"device": where, "kernels": top(self.kernels), "launches": sum(self.kernels.values())}
        if required:
            data["required"] = True
        silent = self.silent_ops() if where != "cpu" else []  # the CPU's ops are its own work: never silent
        if silent:
            data["silent"] = silent[:TOP]
        if self.per_op:
            data["ops"] = {op: top(found) for op, found in sorted(self.per_op.items())}
        if self.recorded or self.replayed:
            data["graphs"] = {"recorded": self.recorded, "replayed": self.replayed}
        if self.copies:
            data["copies"] = self.copies
        return data


def _time(e: Any, which: str) -> int:
    value = getattr(e, f"{which}_ns", None)
    if value is not None:
        return int(value())
    return int(getattr(e, f"{which}_us")() * 1000)  # older Kineto bindings


def _is_device(e: Any) -> bool:
    return str(e.device_type()) not in ("DeviceType.CPU", "CPU")


def _linked(e: Any) -> int:
    """The correlation id of the CPU event (an aten op) that launched a device event; 0 when unknown."""
    linked = getattr(e, "linked_correlation_id", None)
    return int(linked()) if linked is not None else 0


def parse(events: list[Any], device: str) -> Seen:
    """:class:`Seen` from a stopped profiler's Kineto events (``prof.profiler.kineto_results.events()``).

    A device kernel is attributed to the claimed op whose mark encloses the aten op that launched it (Kineto
    links each device event to that op's correlation id; the runtime's own records use another clock and
    thread numbering, so the op, not the runtime call, is matched against the mark)."""
    seen = Seen(device)
    marks: list[tuple[int, int, int, str]] = []  # (thread, start, end, op)
    frontend: dict[int, tuple[int, int]] = {}  # a CPU event's correlation id -> (thread, start)
    device_events: list[tuple[str, int]] = []
    cpu_ops: list[tuple[int, int, int, str]] = []
    for e in events:
        name = e.name()
        if _is_device(e):
            device_events.append((name, _linked(e)))
            continue
        thread, start = e.start_thread_id(), _time(e, "start")
        if name.startswith(OP_MARK):
            marks.append((thread, start, _time(e, "end"), name[len(OP_MARK) :]))
            continue
        if RECORD.search(name):
            seen.recorded += 1
        elif REPLAY.search(name):
            seen.replayed += 1
        if _linked(e) == 0:
            frontend[e.correlation_id()] = (thread, start)
        if name.startswith("aten::"):
            cpu_ops.append((thread, start, _time(e, "end"), name))

    def owner(thread: int, at: int) -> str | None:
        inside = [m for m in marks if m[0] == thread and m[1] <= at <= m[2]]
        return min(inside, key=lambda m: m[2] - m[1])[3] if inside else None  # the innermost mark

    if device == "cpu":
        work = _cpu_work(cpu_ops)
        seen.kernels.update(_heaviest((name, t) for _, _, name, t in work))
        per_op: dict[str, list[tuple[str, int]]] = {}
        for thread, start, name, t in work:
            op = owner(thread, start)
            if op is not None:
                per_op.setdefault(op, []).append((name, t))
        seen.per_op = {op: _heaviest(found) for op, found in per_op.items()}
        return seen
    for name, linked in device_events:
        if COPY.search(name):
            seen.copies += 1
            continue
        seen.kernels[name] += 1
        launch = frontend.get(linked) if linked else None
        op = owner(*launch) if launch else None
        if op is not None:
            seen.per_op.setdefault(op, Counter())[name] += 1
    return seen


def _cpu_work(ops: list[tuple[int, int, int, str]]) -> list[tuple[int, int, str, int]]:
    """Every aten op outside bookkeeping with its self time (its time less its children's): (thread, start, name,
    self time), in one pass per thread."""
    selfs: list[tuple[int, int, str, int]] = []
    by_thread: dict[int, list[tuple[int, int, int, str]]] = {}
    for op in ops:
        by_thread.setdefault(op[0], []).append(op)
    for thread, found in by_thread.items():
        found.sort(key=lambda o: (o[1], -o[2]))
        _nest(thread, found, selfs)
    return selfs


def _nest(thread: int, found: list[tuple[int, int, int, str]], selfs: list[tuple[int, int, str, int]]) -> None:
    """One thread's ops, sorted by start (outer first): each op's self time, through a stack of open ops."""
    stack: list[list[Any]] = []  # [end, start, name, children's time]

    def close(until: int) -> None:
        while stack and stack[-1][0] <= until:
            end, start, name, inner = stack.pop()
            if stack:
                stack[-1][3] += end - start
            if name not in BOOKKEEPING:
                selfs.append((thread, start, name, max(0, end - start - inner)))

    for _, start, end, name in found:
        close(start)
        stack.append([end, start, name, 0])
    close(1 << 62)


def _heaviest(work: Any) -> Counter[str]:
    """Calls per op, of the ops that hold at least a twentieth of the self time given."""
    work = list(work)
    total = sum(t for _, t in work)
    return Counter(name for name, t in work if total and t * 20 >= total)


class Recorder:
    """A profiler over one test's call, stopped and restarted by :meth:`checkpoint` when the test asks."""

    def __init__(self, device_type: str) -> None:
        self.device_type = device_type
        self.seen = Seen(device_type)
        self._prof: Any = None

    def note_call(self, op: str) -> None:
        """A watched claimed op returned (outside a capture): it must have launched something."""
        self.seen.ops_called[op] += 1

    def start(self) -> None:
        from torch.profiler import ProfilerActivity, profile

        activities = [ProfilerActivity.CPU]
        if self.device_type == "cuda":
            activities.append(ProfilerActivity.CUDA)
        elif self.device_type == "xpu":
            activities.append(ProfilerActivity.XPU)
        self._prof = profile(activities=activities)
        self._prof.__enter__()

    def stop(self) -> Seen:
        if self._prof is not None:
            import torch

            prof, self._prof = self._prof, None
            if self.device_type != "cpu":
                torch.accelerator.synchronize()
            prof.__exit__(None, None, None)
            self.seen.add(parse(list(prof.profiler.kineto_results.events()), self.device_type))
        return self.seen

    def checkpoint(self) -> Seen:
        """Everything seen so far (the profiler restarts): for a test that asserts what ran."""
        seen = self.stop()
        self.start()
        return seen


_ACTIVE: list[Recorder] = []


def active() -> Recorder | None:
    return _ACTIVE[-1] if _ACTIVE else None


def begin(device_type: str) -> Recorder:
    recorder = Recorder(device_type)
    recorder.start()
    _ACTIVE.append(recorder)
    return recorder


def end(recorder: Recorder) -> Seen:
    try:
        return recorder.stop()
    finally:
        _ACTIVE.remove(recorder)


def seen() -> Seen:
    """What the running claimed test has run so far; for tests that assert on the kernel or the graph."""
    recorder = active()
    if recorder is None:
        raise RuntimeError("no evidence recorder runs: only a test the claims cover on this device records one")
    return recorder.checkpoint()


def kernels_of(fn: Any, device_type: str) -> Counter[str]:
    """The kernels ``fn`` launched (copies left out): read from the running test's recorder when there is one
    (a second profiler cannot run beside it), else from a profiler of its own."""
    recorder = active()
    if recorder is None:
        own = Recorder(device_type)
        own.start()
        try:
            fn()
        finally:
            found = own.stop()
        return Counter(found.kernels)
    before = Counter(recorder.checkpoint().kernels)
    fn()
    return Counter(recorder.checkpoint().kernels) - before


def encode(seen: Seen, where: str, required: bool = False) -> str:
    return json.dumps(seen.to_json(where, required), separators=(",", ":"), sort_keys=True)


def summary(data: dict[str, Any]) -> str:
    """One line for a test's evidence: ``flash_fwd_kernel on sm_90; 12 graph replays`` (a claimed op's own
    kernel first, else the test's most frequent one)."""
    parts = []
    per_op = [found[0][0] for found in (data.get("ops") or {}).values() if found]
    kernels = per_op or [k[0] for k in data.get("kernels") or []]
    if kernels:
        parts.append(f"{short(kernels[0])} on {data.get('device', '?')}")
    graphs = data.get("graphs") or {}
    if graphs.get("replayed"):
        parts.append(f"{graphs['replayed']} graph replays")
    return "; ".join(parts) or "no device work"


def short(kernel: str) -> str:
    """A kernel's readable core: ``void pytorch_flash::flash_fwd_kernel<...>(...)`` -> ``flash_fwd_kernel``."""
    core = re.sub(r"^void\s+", "", kernel)
    core = core.split("(", 1)[0].split("<", 1)[0]
    return core.rsplit("::", 1)[-1] or kernel[:40]
