"""The ops the claims name ran where the test put them, not on a fallback that hands back device tensors.

While a claimed test runs, each eager op its claims name (linear algebra, SDPA, scaled_mm, quantize, 2:4
conversion) is wrapped: its aten calls are watched with a ``TorchDispatchMode``, and every tensor the op's own
kernels touch (``aten::_linalg_eigh`` for ``torch.linalg.eigh``: :data:`KERNELS`) must be on the device under
test (a computation on the CPU or the ``meta`` device fails the test, with the aten op and where it ran). On an
accelerator the first call of each op is also profiled, and the profiler must show a kernel on the device
(``DeviceType.CUDA`` / ``XPU`` events), which catches a fallback inside a kernel that copies to the host and back.
``torch.compile`` must hand back a Dynamo-optimized callable (an uncompiled one is an eager fallback).
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

from _support import drills

EAGER_PREFIXES = (
    "torch.linalg.",
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.functional.scaled_mm",
    "torch._scaled_mm",
    "torch.quantize_per_",
    "torch.sparse.to_sparse_semi_structured",
    "torch.distributed.",
)
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
        def __init__(self) -> None:
            super().__init__()
            self.elsewhere: list[str] = []

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
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
        where = Where()
        profile = device_type != "cpu" and op not in profiled
        if profile:
            profiled.add(op)
            out, kernels = _profiled(real, device_type, args, kwargs, where)
            assert kernels, f"{op} ran no kernel on the {device_type} device (profiler): a host fallback"
        else:
            with where:
                out = real(*args, **kwargs)
        assert not where.elsewhere, f"{op} ran {where.elsewhere[0]}, not on {device_type}: a fallback"
        return out

    return watched


def _profiled(real: Any, device_type: str, args: Any, kwargs: Any, where: Any) -> tuple[Any, int]:
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    activity = ProfilerActivity.XPU if device_type == "xpu" else ProfilerActivity.CUDA
    kind = DeviceType.XPU if device_type == "xpu" else DeviceType.CUDA
    with profile(activities=[ProfilerActivity.CPU, activity]) as prof, where:
        out = real(*args, **kwargs)
        import torch

        torch.accelerator.synchronize()
    return out, sum(1 for e in prof.events() if e.device_type == kind)


def install(monkeypatch: pytest.MonkeyPatch | None, ops: set[str], device_type: str) -> list[str]:
    """Watch every eager op of ``ops`` for the current test (without ``monkeypatch``: for good, in a rank)."""
    profiled: set[str] = set()
    done = []
    for op in sorted(o for o in ops if o.startswith(EAGER_PREFIXES)):
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
