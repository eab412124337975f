"""Drills (``--drill=MODE``): the failure a backend regression would cause, injected into the APIs the claims name.

While a test the claims cover runs, each API its claims list in ``ops`` is replaced (``monkeypatch``) by one
that misbehaves on whatever device runs:

* ``refuse``: raises the backend's own refusal for that op (from :data:`_support.refusals.REFUSALS`), else
  ``NotImplementedError``;
* ``wrong-values``: floating results (and the outputs of a returned callable or module) are scaled by
  ``1 + 0.1 * n`` on the n-th call, beyond every tolerance of every dtype, and different on every call so
  that two calls cannot agree by accident; quantized results are requantized from scaled values; integer
  results (a memory statistic, a count, the RNG state's bytes, a dict of statistics) are off by ``n``, booleans
  flipped;
* ``fallback``: the op runs elsewhere than the device under test (the CPU under an accelerator, the ``meta``
  device under the CPU) and hands back tensors on the device under test; ``torch.compile`` hands back the
  function uncompiled (eager);
* ``silent-skip``: graph capture falls back to eager without a word: ``torch.compile`` drops
  ``mode="reduce-overhead"``, graph objects capture nothing and replay nothing.

Under every drill each test of a claimed feature must fail and none may skip as ``[unsupported]``; tests the
claims do not cover are left alone, so they keep their skips. tests/suites/test_drills.py checks it.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from _support import refusals

MODES = ("refuse", "wrong-values", "fallback", "silent-skip")
OPTION = "--drill"
GRAPH_APIS = {
    "torch.accelerator.Graph",
    "torch.cuda.CUDAGraph",
    "torch.cuda.graph",
    "torch.xpu.XPUGraph",
    "torch.xpu.graph",
    "torch.cuda.make_graphed_callables",
}


_EXEMPT = [0]


@contextlib.contextmanager
def exempt() -> Iterator[None]:
    """A reference computation (float64 on the CPU) is not the op under test: drills and watches leave it be."""
    _EXEMPT[0] += 1
    try:
        yield
    finally:
        _EXEMPT[0] -= 1


def exempted() -> bool:
    return _EXEMPT[0] > 0


def _unless_exempt(real: Any, fake: Any) -> Any:
    if isinstance(real, type) or isinstance(fake, type):
        return fake

    @functools.wraps(real)
    def chosen(*args: Any, **kwargs: Any) -> Any:
        return (real if exempted() else fake)(*args, **kwargs)

    return chosen


def split(dotted: str) -> tuple[Any, str] | None:
    """The object that holds ``dotted``'s last part and that part's name (submodules imported); None if absent."""
    parts = dotted.split(":")[0].split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            holder: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for name in parts[cut:-1]:
                holder = getattr(holder, name)
        except AttributeError:
            return None
        return (holder, parts[-1]) if hasattr(holder, parts[-1]) else None
    return None


def _map_tensors(value: Any, fn: Callable[[Any], Any]) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # namedtuple (torch.return_types)
        return type(value)(*(_map_tensors(v, fn) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(_map_tensors(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: _map_tensors(v, fn) for k, v in value.items()}
    return value


def _scaled(t: Any, factor: float) -> Any:
    import torch

    offset = factor - 1  # scaled and shifted: a zero result changes too
    if t.is_quantized:
        wrong = t.dequantize() * factor + offset
        if t.qscheme() in (torch.per_tensor_affine, torch.per_tensor_symmetric):
            return torch.quantize_per_tensor(wrong, t.q_scale(), t.q_zero_point(), t.dtype)
        return torch.quantize_per_channel(
            wrong, t.q_per_channel_scales(), t.q_per_channel_zero_points(), t.q_per_channel_axis(), t.dtype
        )
    if t.is_floating_point() or t.is_complex():
        with torch.no_grad():
            return (t.float() * factor + offset).to(t.dtype) if t.element_size() < 2 else t * factor + offset
    with torch.no_grad():
        if t.dtype == torch.bool:
            return ~t
        return t + round((factor - 1) * 10)  # integers (RNG state bytes, counts, indices): off by the call number


def _in_place(args: tuple[Any, ...], factor: float) -> None:
    """An op that returns nothing wrote its result into its first argument (a collective): scale that."""
    import torch

    first = args[0] if args else None
    targets = first if isinstance(first, (list, tuple)) else [first]
    with torch.no_grad():
        for t in targets:
            if isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex()):
                t.mul_(factor).add_(factor - 1)
            elif isinstance(t, torch.Tensor) and t.dtype in (torch.int32, torch.int64):
                t.add_(1)


def _wrong_values(real: Any) -> Any:
    import torch

    calls = itertools.count(1)

    def perturb(out: Any, args: tuple[Any, ...]) -> Any:
        factor = 1 + 0.1 * next(calls)
        if isinstance(out, bool):
            return not out
        if isinstance(out, int | float):  # a statistic, a count, a clock, a seed: off by the call number
            return out + round((factor - 1) * 10) if isinstance(out, int) else out * factor + (factor - 1)
        if isinstance(out, dict) and out and all(isinstance(v, int | float) for v in out.values()):
            return {k: perturb(v, args) for k, v in out.items()}  # memory_stats()
        if isinstance(out, torch.nn.Module):
            out.register_forward_hook(lambda module, inputs, result: _map_tensors(result, lambda t: _scaled(t, factor)))
            return out
        if callable(out) and not isinstance(out, torch.Tensor):
            return functools.wraps(out)(lambda *a, **k: _map_tensors(out(*a, **k), lambda t: _scaled(t, factor)))
        if out is None or type(out).__name__ == "Work":
            _in_place(args, factor)
            return out
        return _map_tensors(out, lambda t: _scaled(t, factor))

    if isinstance(real, type):
        return _wrong_class(real)

    @functools.wraps(real)
    def drilled(*args: Any, **kwargs: Any) -> Any:
        return perturb(real(*args, **kwargs), args)

    return drilled


def _wrong_class(real: type) -> type:
    """A class API (torch.autocast, GradScaler, a sparsifier) that does its job wrongly: a context manager that
    should lower precision keeps float32, a loss scale comes back negated (gradient ascent), a sparsity mask keeps
    the weights it should drop."""
    import inspect

    import torch

    takes_enabled = "enabled" in inspect.signature(real.__init__).parameters

    class Drilled(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            if takes_enabled and hasattr(real, "__enter__"):
                kwargs["enabled"] = False
            super().__init__(*args, **kwargs)

        if hasattr(real, "update_mask") and callable(real.update_mask):

            def update_mask(self, module: Any, tensor_name: str, *args: Any, **kwargs: Any) -> Any:
                out = super().update_mask(module, tensor_name, *args, **kwargs)
                mask = getattr(module.parametrizations, tensor_name)[0].mask  # a sparsifier keeps the wrong weights
                mask.data = ~mask.data if mask.dtype == torch.bool else 1 - mask.data
                return out

        if hasattr(real, "scale") and callable(real.scale):

            def scale(self, outputs: Any) -> Any:  # type: ignore[override]
                return _map_tensors(super().scale(outputs), lambda t: -t)

    Drilled.__name__ = Drilled.__qualname__ = real.__name__
    return Drilled


def _refuse(op: str, real: Any) -> Any:
    entry = next((r for r in refusals.REFUSALS if r.op == op and refusals.family() in r.families and r.example), None)
    errors = {"RuntimeError": RuntimeError, "ValueError": ValueError, "NotImplementedError": NotImplementedError}
    kind = errors.get(entry.errors[0], NotImplementedError) if entry else NotImplementedError
    message = entry.example if entry else f"{op} is not implemented for this device (--drill=refuse)"

    def drilled(*args: Any, **kwargs: Any) -> Any:
        raise kind(message)

    return functools.wraps(real)(drilled) if not isinstance(real, type) else drilled


def _elsewhere(device_type: str) -> str:
    return "meta" if device_type == "cpu" else "cpu"


def _fallback(op: str, real: Any, device_type: str) -> Any:
    import torch

    if op in ("torch.compile", "torch.jit.script", "torch.jit.trace"):

        def uncompiled(model: Any = None, *args: Any, **kwargs: Any) -> Any:
            return model if model is not None else (lambda fn: fn)

        return uncompiled
    other = _elsewhere(device_type)

    def there(t: Any) -> Any:
        return t.to(other) if isinstance(t, torch.Tensor) and t.device.type == device_type else t

    def back(t: Any) -> Any:
        if t.device.type != "meta":
            return t.to(device_type)
        # the meta device computes no values: what comes back is NaN (or zero), never the right answer
        if t.is_floating_point() or t.is_complex():
            return torch.full_like(t, float("nan"), device=device_type)
        return torch.zeros_like(t, device=device_type)

    if isinstance(real, type):
        return _fallback_class(real, device_type, other, there, back)

    @functools.wraps(real)
    def drilled(*args: Any, **kwargs: Any) -> Any:
        moved = _map_tensors(list(args), there)
        out = real(*moved, **_map_tensors(kwargs, there))
        if isinstance(out, torch.nn.Module):
            # the model comes back living elsewhere, and what it computes comes back through there: packed
            # weights (a dynamically quantized Linear's) do not move with .to(), so its outputs are moved too
            moved_model = out.to(other)
            moved_model.register_forward_hook(
                lambda module, inputs, result: _map_tensors(_map_tensors(result, there), back)
            )
            return moved_model
        if out is None and moved and isinstance(moved[0], torch.Tensor):  # in place (a collective): copied back
            with torch.no_grad():
                args[0].copy_(back(moved[0]))
        return _map_tensors(out, back)

    return drilled


def _fallback_class(real: type, device_type: str, other: str, there: Any, back: Any) -> type:
    """A class API that works for another device: its device argument swapped (``torch.autocast("cpu")`` on a GPU,
    ``"meta"`` on the CPU); a sparsifier's masks computed elsewhere."""

    class Drilled(real):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            args = tuple(other if a == device_type else a for a in args)
            kwargs = {
                k: (other if k in ("device", "device_type") and v == device_type else v) for k, v in kwargs.items()
            }
            super().__init__(*args, **kwargs)

        if hasattr(real, "update_mask") and callable(real.update_mask):

            def update_mask(self, module: Any, tensor_name: str, *args: Any, **kwargs: Any) -> Any:
                out = super().update_mask(module, tensor_name, *args, **kwargs)
                mask = getattr(module.parametrizations, tensor_name)[0].mask
                mask.data = back(there(mask.data))
                return out

    Drilled.__name__ = Drilled.__qualname__ = real.__name__
    return Drilled


class _NoCapture:
    """A graph that captures and replays nothing: the work inside its ``with`` runs once, eagerly."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __enter__(self) -> _NoCapture:
        return self

    def __exit__(self, *exc: Any) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:
        return lambda *a, **k: None


def _silent_skip(op: str, real: Any) -> Any:
    if op == "torch.compile":

        @functools.wraps(real)
        def no_graphs(model: Any = None, **kwargs: Any) -> Any:
            if kwargs.get("mode") in ("reduce-overhead", "max-autotune"):
                kwargs.pop("mode")
            if kwargs.get("backend") == "cudagraphs":
                kwargs["backend"] = "aot_eager"
            return real(model, **kwargs)

        return no_graphs
    if op in GRAPH_APIS:
        if op.endswith("make_graphed_callables"):
            return lambda callables, *a, **k: callables
        return _NoCapture
    return real  # not a graph API: nothing to skip


def drilled(mode: str, op: str, real: Any, device_type: str) -> Any:
    """``real`` (the API at ``op``) as ``mode`` breaks it on ``device_type``."""
    if mode == "refuse":
        return _refuse(op, real)
    if mode == "wrong-values":
        return _wrong_values(real)
    if mode == "fallback":
        return _fallback(op, real, device_type)
    if mode == "silent-skip":
        return _silent_skip(op, real)
    raise ValueError(f"unknown drill {mode!r}; one of {MODES}")


ENV = "COMPAT_DRILL"  # "<mode>|<device type>|<op>,<op>...": how the drill reaches the ranks a test starts


def env_value(mode: str, ops: set[str], device_type: str) -> str:
    return f"{mode}|{device_type}|{','.join(sorted(ops))}"


ACTIVE: list[str] = []  # the session's --drill mode (conftest sets it)


WATCH_ENV = "COMPAT_WATCH"  # "<device type>|<op>,<op>...": the claimed ops a rank watches (_support.ondevice)


def rank_env(feature: str) -> dict[str, str]:
    """What the ranks of ``feature``'s shared group (``multiproc.run_ranks_once``, started by a module fixture before
    any test's own fixtures run) need: the claimed ops to watch and, under ``--drill``, to break."""
    from _support import claims
    from _support import env as _env

    dev = claims.device()
    ops = {op for c in claims.load() if c.feature == feature and c.covers_device(dev) for op in c.ops}
    if not ops:
        return {}
    device_type = _env.get().device_type
    found = {WATCH_ENV: f"{device_type}|{','.join(sorted(ops))}"}
    if ACTIVE:
        found[ENV] = env_value(ACTIVE[0], ops, device_type)
    return found


_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE (CPython 3.10+): a C type whose attributes cannot be set


def _patch(monkeypatch: pytest.MonkeyPatch | None, holder: Any, name: str, value: Any) -> None:
    """``holder.name = value``; a method of an immutable C type (``torch.Stream.is_capturing``) cannot be set, so
    the type is replaced in its module by a subclass that overrides it (new instances take the drilled method)."""
    setter = monkeypatch.setattr if monkeypatch is not None else setattr
    if isinstance(holder, type) and holder.__flags__ & _IMMUTABLE_TYPE:
        module = importlib.import_module(holder.__module__)
        sub = type(holder.__name__, (holder,), {name: value, "__module__": holder.__module__})
        setter(module, holder.__name__, sub)
        return
    setter(holder, name, value)


def install_from_env() -> list[str]:
    """In a process a test started (a distributed rank): break the ops the test's drill names, then watch the
    claimed ops run on the device (_support.ondevice), for good."""
    import os

    from _support import ondevice

    done = []
    raw = os.environ.get(ENV, "")
    if raw:
        mode, device_type, ops = raw.split("|", 2)
        for op in sorted(filter(None, ops.split(","))):
            found = split(op)
            if found is not None:
                holder, name = found
                _patch(None, holder, name, drilled(mode, op, getattr(holder, name), device_type))
                done.append(op)
    watch = os.environ.get(WATCH_ENV, "")
    if watch:
        device_type, ops = watch.split("|", 1)
        ondevice.install(None, set(filter(None, ops.split(","))), device_type)
    return done


def install(monkeypatch: pytest.MonkeyPatch, mode: str, ops: set[str], device_type: str) -> list[str]:
    """Break every API in ``ops`` for the current test (and the processes it starts, through ``COMPAT_DRILL``);
    returns those found (an absent API is left absent)."""
    monkeypatch.setenv(ENV, env_value(mode, ops, device_type))
    done = []
    for op in sorted(ops):
        found = split(op)
        if found is None:
            continue
        holder, name = found
        real = getattr(holder, name)
        _patch(monkeypatch, holder, name, _unless_exempt(real, drilled(mode, op, real, device_type)))
        done.append(op)
    return done
