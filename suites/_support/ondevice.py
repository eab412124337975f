"""The ops the claims name ran where the test put them, not on a fallback that hands back device tensors.

While a claimed test runs, each eager op its claims name (linear algebra, SDPA, scaled_mm and scaled_addmm,
quantize, 2:4 conversion, collectives, linear_cross_entropy, FlexAttention, varlen attention, the functional
optimizers: :data:`EAGER_PREFIXES`) is wrapped: its aten calls are watched with a ``TorchDispatchMode``, and every
tensor the op's own kernels touch (``aten::_linalg_eigh`` for ``torch.linalg.eigh``: :data:`KERNELS`) must be on
the device under test (a computation on the CPU or the ``meta`` device fails the test, with the aten op and where
it ran). Each call is also marked for the test's evidence recorder (:mod:`_support.evidence`): the kernels it
launched are that op's evidence, and on an accelerator an op that launched no device kernel (only copies: a host
fallback inside the kernel) fails the test. In a process a test starts (a distributed rank), where no recorder
runs, the first call of each op is profiled on its own with the same rule. ``torch.compile`` must hand back a
Dynamo-optimized callable (an uncompiled one is an eager fallback).

:func:`kind` says how every API a claim may name is held to its work (tests/suites/test_suite_contract.py checks
that each claimed op has one): ``eager`` ops are watched here; ``graph`` APIs prove a recording and replays
(:mod:`_support.graphcount`); ``compile`` APIs hand back compiled code (:func:`compile_guard`) and their kernels
are the test's evidence; ``class`` APIs (a module, a context manager) and ``info`` APIs (statistics, handles,
build facts) are judged by their values, which every drill breaks.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

import pytest

from _support import drills, evidence

EAGER_PREFIXES = (
    "torch.linalg.",
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.functional.scaled_mm",
    "torch.nn.functional.scaled_addmm",
    "torch._scaled_mm",
    "torch.quantize_per_",
    "torch.sparse.to_sparse_semi_structured",
    "torch.distributed.all_",
    "torch.distributed.reduce",
    "torch.distributed.broadcast",
    "torch.distributed._functional_collectives.",
    "torch.nn.functional.linear_cross_entropy",
    "torch.nn.attention.flex_attention.flex_attention",
    "torch.nn.attention.varlen.",
    "torch.optim.functional.",
    "torch.cond",
    "torch.matmul",  # free_threading: ops from several threads
    "torch.nn.functional.conv2d",
)
GRAPH_PREFIXES = (
    "torch.accelerator.Graph",
    "torch.cuda.CUDAGraph",
    "torch.cuda.graph",
    "torch.xpu.XPUGraph",
    "torch.xpu.graph",
    "torch.cuda.make_graphed_callables",
)
COMPILE_PREFIXES = ("torch.compile", "torch.compiler.", "torch.export.", "torch.jit.", "torch.ao.quantization.")
CLASSES = (
    "torch.autocast",
    "torch.amp.GradScaler",
    "torch.ao.pruning.WeightNormSparsifier",
    "torch.nn.LinearCrossEntropyLoss",
    "torch.mps.Stream",
)
# Statistics, handles, build facts, host-side APIs: judged by their values (wrong-values perturbs numbers and
# integers; refuse raises), they launch nothing of their own
INFO_PREFIXES = (
    "torch.accelerator.memory_",
    "torch.accelerator.max_memory_",
    "torch.accelerator.reset_peak_memory_stats",
    "torch.accelerator.empty_cache",
    "torch.accelerator.random.",
    "torch.Stream.is_capturing",  # the capture query: judged by its answer inside and outside a capture
    "torch.cuda.export_dot",
    "torch.cuda.graphs.register_",  # lifecycle hooks: judged by the callbacks they fire
    "torch.cuda.get_arch_list",
    "torch.cuda.memory.",
    "torch.distributed._symmetric_memory.",
    "torch.hub.",
    "torch.mps.",
    "torch.version.",
    "torch.xpu.",
)
# The drills that break each kind (tests/suites: every claimed op is broken by each drill of its kind)
DRILLS_BY_KIND = {
    "eager": ("refuse", "wrong-values", "fallback"),
    "graph": ("refuse", "silent-skip"),
    "compile": ("refuse", "wrong-values", "fallback"),
    "class": ("refuse", "wrong-values", "fallback"),
    "info": ("refuse", "wrong-values"),
}
# Ops that compile themselves (eager FlexAttention and torch.cond run Dynamo inside): a dispatch mode around them makes
# Dynamo refuse to compile, so they are held to their work by the profiler alone (their kernels, per call)
PROFILER_ONLY = frozenset({"torch.nn.attention.flex_attention.flex_attention", "torch.cond"})
# Collectives run in the ranks a test starts (_support.multiproc): their kernels are checked there, per op (the
# test's own process launches nothing). On a world of one rank a collective is a copy or nothing: NCCL launched no
# kernel for any of them on an H200 (torch 2.11: all_reduce a device-to-device copy, broadcast nothing), so there
# their evidence is their values.
RANK_PREFIXES = ("torch.distributed.",)


def in_ranks(op: str) -> bool:
    """An op the test's ranks run (a collective): its evidence is judged in the rank, not the test's process."""
    return op.startswith(RANK_PREFIXES)


def kind(op: str) -> str | None:
    """``eager`` | ``graph`` | ``compile`` | ``class`` | ``info``: how a claimed API is held to its work; None for
    an API no table names (the suites' contract test fails on it: every claimed op has its kind)."""
    if op.startswith(GRAPH_PREFIXES):
        return "graph"
    if op.startswith(EAGER_PREFIXES):
        return "eager"
    if op.startswith(COMPILE_PREFIXES):
        return "compile"
    if op in CLASSES:
        return "class"
    if op.startswith(INFO_PREFIXES):
        return "info"
    return None


# aten ops that move data between devices: allowed to touch another device
LARGE = 1024  # elements: a host-side helper tensor (a batch's info codes, a 0-dim scalar) is smaller
# The aten ops that do each claimed op's work (helpers such as an info tensor's error check are not watched: a
# kernel may legitimately read those on the host). Default: the op's own name ("eigh" for torch.linalg.eigh).
KERNELS = {
    "torch.nn.functional.scaled_dot_product_attention": "scaled_dot_product",
    "torch.nn.functional.scaled_mm": "scaled_mm",
    "torch.sparse.to_sparse_semi_structured": "cslt|sparse_semi_structured|_to_sparse",
}


def _watch(op: str, real: Any, device_type: str, profiled: set[str]) -> Any:
    import re

    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_leaves

    kernel = re.compile(KERNELS.get(op, re.escape(op.rsplit(".", 1)[-1])))

    class Where(TorchDispatchMode):
        # FlexAttention is a higher-order operator: it passes through (the ops inside it are checked as the
        # kernels it runs, on the device, by the profiler)
        supports_higher_order_operators = True

        def __init__(self) -> None:
            super().__init__()
            self.elsewhere: list[str] = []

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            if isinstance(func, torch._ops.HigherOrderOperator):
                return func(*args, **(kwargs or {}))
            name = func.name() if hasattr(func, "name") else str(func)  # "aten::_linalg_eigh"
            for t in tree_leaves((args, kwargs or {})):
                if not isinstance(t, torch.Tensor) or t.device.type == device_type:
                    continue
                # the op's own kernel anywhere else, the meta device (no values at all), or data-sized work
                if kernel.search(name) or t.device.type == "meta" or t.numel() >= LARGE:
                    self.elsewhere.append(f"{name} on {t.device.type}")
                    break
            return func(*args, **(kwargs or {}))

    @functools.wraps(real)
    def watched(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        if drills.exempted() or torch.compiler.is_compiling():  # under Dynamo the compiled graph is watched as a whole
            return real(*args, **kwargs)
        where = Where() if op not in PROFILER_ONLY else _NoWhere()
        recorder = evidence.active()
        if recorder is not None:
            marked = not _capturing(device_type) and not _identity_here(op)
            with where, torch.profiler.record_function(evidence.OP_MARK + op) if marked else _nothing():
                out = real(*args, **kwargs)
            if marked:
                recorder.note_call(op)
        elif device_type != "cpu" and op not in profiled and not _identity_here(op):
            profiled.add(op)
            out, kernels = _profiled(real, device_type, args, kwargs, where)
            assert kernels, f"{op} ran no kernel on the {device_type} device (profiler): a host fallback"
        else:
            with where:
                out = real(*args, **kwargs)
        assert not where.elsewhere, f"{op} ran {where.elsewhere[0]}, not on {device_type}: a fallback"
        return out

    return watched


@contextlib.contextmanager
def _nothing() -> Iterator[None]:
    yield


class _NoWhere(contextlib.nullcontext):
    elsewhere: tuple[str, ...] = ()


def _capturing(device_type: str) -> bool:
    """Inside a graph capture kernels are recorded, not run: no evidence can come from the call itself."""
    import torch

    if device_type == "cpu":
        return False
    if device_type == "cuda":
        return bool(torch.cuda.is_current_stream_capturing())
    stream = getattr(torch.accelerator, "current_stream", None)
    is_capturing = getattr(stream() if stream else None, "is_capturing", None)
    return bool(is_capturing()) if callable(is_capturing) else False


def _identity_here(op: str) -> bool:
    if not op.startswith(RANK_PREFIXES):
        return False
    import torch.distributed as dist

    return dist.is_initialized() and dist.get_world_size() == 1


def _profiled(real: Any, device_type: str, args: Any, kwargs: Any, where: Any) -> tuple[Any, int]:
    """One call under its own profiler (a rank process: no recorder there): the device kernels it launched,
    copies (Memcpy/Memset) left out."""
    from torch.profiler import ProfilerActivity, profile

    activity = ProfilerActivity.XPU if device_type == "xpu" else ProfilerActivity.CUDA
    with profile(activities=[ProfilerActivity.CPU, activity]) as prof, where:
        out = real(*args, **kwargs)
        import torch

        torch.accelerator.synchronize()
    seen = evidence.parse(list(prof.profiler.kineto_results.events()), device_type)
    return out, sum(seen.kernels.values())


def install(monkeypatch: pytest.MonkeyPatch | None, ops: set[str], device_type: str) -> list[str]:
    """Watch every eager op of ``ops`` for the current test (without ``monkeypatch``: for good, in a rank)."""
    profiled: set[str] = set()
    done = []
    for op in sorted(o for o in ops if kind(o) == "eager"):
        found = drills.split(op)
        if found is None:
            continue
        holder, name = found
        watched = _watch(op, getattr(holder, name), device_type, profiled)
        if monkeypatch is None:
            setattr(holder, name, watched)
        else:
            monkeypatch.setattr(holder, name, watched)
        done.append(op)
    return done


def _is_compiled(out: Any) -> bool:
    from torch._dynamo.eval_frame import OptimizedModule

    return isinstance(out, OptimizedModule) or hasattr(out, "_torchdynamo_orig_callable")


def compile_guard(monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """torch.compile (the drill's or the real one, whichever is installed) must hand back a Dynamo-optimized
    callable: one that is the model or function itself, or any other plain callable, runs eagerly."""
    import torch

    real = torch.compile

    @functools.wraps(real)
    def checked(model: Any = None, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        if model is None:  # decorator form: torch.compile(mode=...)(fn)
            return lambda fn: checked(fn, **kwargs)
        out = real(model, **kwargs)
        if not drills.exempted() and not _is_compiled(out):
            pytest.fail(f"{where}: torch.compile handed back {type(out).__name__}, not a compiled callable: eager")
        return out

    monkeypatch.setattr(torch, "compile", checked)
