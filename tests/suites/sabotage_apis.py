"""Breakages for the rows of the public APIs 2.13-2.15 added (issue 27), injected into real suite runs.

The same mechanism as sabotage.py (a ``sitecustomize`` calls :func:`apply` at start-up; ``COMPAT_SABOTAGE``
names the breakage), kept in its own module so the two lists grow apart. Where the installed torch (2.13.0)
has the API, the breakage bends the real one; where the API arrived in 2.14/2.15, the breakage installs a
stand-in of it that misbehaves the way a faulty build would, so the test's own logic is proven to fail.
"""

from __future__ import annotations

import os

MODE_ENV = "COMPAT_SABOTAGE"


def _linear_cross_entropy_drops_the_bias() -> None:
    """F.linear_cross_entropy computes the logits without linear_bias."""
    import torch.nn.functional as F

    real = F.linear_cross_entropy

    def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, **kwargs):
        return real(input, linear_weight, target, **kwargs)

    F.linear_cross_entropy = linear_cross_entropy


def _linear_cross_entropy_never_chunks() -> None:
    """The chunked path always falls back to the reference implementation, with upstream's warning."""
    import warnings

    import torch.nn.functional as F

    real = F.linear_cross_entropy

    def linear_cross_entropy(*args, options=None, **kwargs):
        if options is not None:
            warnings.warn("linear_cross_entropy: ``options`` ignored; chunked path needs ...", stacklevel=2)
        return real(*args, **kwargs)

    F.linear_cross_entropy = linear_cross_entropy


def _default_backend_ignored() -> None:
    """torch.compile without backend= always uses "eager", and set_default_backend(None) resets nothing."""
    import torch
    import torch.compiler

    real_compile, real_set = torch.compile, torch.compiler.set_default_backend

    def compile(model=None, *, backend=None, **kwargs):
        return real_compile(model, backend=backend or "eager", **kwargs)

    def set_default_backend(backend):
        if backend is not None:
            real_set(backend)

    torch.compile, torch.compiler.set_default_backend = compile, set_default_backend


def _explicit_backend_overridden() -> None:
    """torch.compile uses the default backend even when given backend=."""
    import torch
    import torch.compiler

    real_compile = torch.compile

    def compile(model=None, *, backend=None, **kwargs):
        return real_compile(model, backend=torch.compiler.get_default_backend(), **kwargs)

    torch.compile = compile


def _varlen_attends_across_sequences() -> None:
    """varlen_attn (as a CPU stand-in) attends over the whole packed batch, ignoring the sequence bounds, and
    returns its output as (H, T, D)."""
    import math

    import torch
    import torch.nn.attention.varlen as varlen

    def varlen_attn(query, key, value, cu_seq_q, cu_seq_k, max_q, max_k, *, return_aux=None, **kwargs):
        q, k, v = (t.transpose(0, 1).float() for t in (query, key, value))  # (H, T, D)
        if query.device.type == "meta":
            out, lse = torch.empty_like(q, dtype=query.dtype), torch.empty(q.shape[:2], device="meta")
        else:
            scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
            out, lse = (torch.softmax(scores, -1) @ v).transpose(0, 1).to(query.dtype), torch.logsumexp(scores, -1)
        return (out, lse) if return_aux is not None and return_aux.lse else out

    varlen.varlen_attn = varlen_attn


def _accelerator_rng_stand_in() -> None:
    """torch.accelerator.random (2.14) whose functions take a keyword device and that reports the CPU's RNG
    state as an accelerator's on a host without one."""
    import types

    import torch

    rng = types.ModuleType("torch.accelerator.random")
    rng.initial_seed = lambda device=None: torch.initial_seed()
    rng.get_rng_state = lambda device=None: torch.get_rng_state()
    rng.get_rng_state_all = lambda: [torch.get_rng_state()]
    torch.accelerator.random = rng


def _cuda_graph_hooks_stand_in() -> None:
    """CUDA graph hooks (2.14) that return no handle, and a CUDAGraph that builds without a GPU."""
    import torch
    import torch.cuda.graphs as graphs

    for name in ("capture_start", "capture_end", "instantiate", "replay_start", "replay_end", "destroy"):
        setattr(graphs, f"register_graph_{name}_hook", lambda fn: None)
    torch.cuda.export_dot = lambda path, *, verbose=True: lambda graph: None

    class CUDAGraph:
        def __init__(self, keep_graph=False):
            pass

        def register_capture_end_hook(self, hook):
            return None

    torch.cuda.CUDAGraph = CUDAGraph


def _precompile_bakes_the_weights() -> None:
    """torch.compiler.precompile (2.14 call form, 2.15 capture/load) whose artifact runs the example model's
    weights, whatever model it is given at runtime."""
    import contextlib
    from pathlib import Path

    import torch

    baked: list = []

    def runnable(model, x):
        return baked[-1](x)

    class Runnable:
        def __call__(self, model, x):
            return runnable(model, x)

    class Precompile:
        PrecompiledRunnable = Runnable

        def __call__(self, fn, model, *inputs, backend="inductor", **kwargs):
            baked.append(model)
            return "def forward(model, x):\n    return model(x)\n", b"cache"

        def load(self, python_code, cache):
            return Runnable()

        @contextlib.contextmanager
        def capture(self, fn, *, artifact_path, cache_path, backend="inductor", **kwargs):
            def call(model, *args):
                baked.append(model)
                return fn(model, *args)

            yield call
            Path(artifact_path).write_text("def forward(model, x):\n    return model(x)\n", encoding="utf-8")
            Path(cache_path).write_bytes(b"cache")

    torch.compiler.precompile = Precompile()


def _compile_admits_and_computes_garbage() -> None:
    """torch.compile admits every Python and its compiled function is 1% off."""
    import torch

    def compile(model=None, **kwargs):
        return lambda *args, **kw: model(*args, **kw) * 1.01

    torch.compile = compile


def _scaled_addmm_stand_in() -> None:
    """F.scaled_addmm (2.15) as a CPU stand-in that drops beta and grows an output_dtype parameter;
    scaled_addmm_ returns a new tensor instead of input."""
    import torch.nn.functional as F

    def scaled_addmm(
        input, mat1, mat2, scale_a, scale_recipe_a, scale_b, scale_recipe_b, swizzle_a=None, swizzle_b=None,
        contraction_dim=(), use_fast_accum=False, *, beta=1.0, alpha=1.0, output_dtype=None,
    ):  # fmt: skip
        product = (mat1.float() * scale_a) @ (mat2.float() * scale_b)
        return (input.float() + alpha * product).to(input.dtype)

    def scaled_addmm_(input, *args, **kwargs):
        return scaled_addmm(input, *args, **kwargs).clone()

    F.scaled_addmm, F.scaled_addmm_ = scaled_addmm, scaled_addmm_


def _optim_functional_stand_in() -> None:
    """torch.optim.functional (2.15) with three names missing, an sgd that drops weight decay and an adam
    whose learning rate is 1% high."""
    import functools
    import importlib
    import sys
    import types

    import torch

    functional = types.ModuleType("torch.optim.functional")
    names = ["adadelta", "adagrad", "adam", "adamax", "adamw", "asgd", "nadam", "radam", "rmsprop", "rprop", "sgd"]
    for name in names:
        real = getattr(importlib.import_module(f"torch.optim.{name}"), name)
        wrapper = functools.wraps(real)(lambda *a, _real=real, **k: _real(*a, **k))
        wrapper.__module__ = functional.__name__
        setattr(functional, name, wrapper)
    functional.__all__ = names
    real_sgd, real_adam = functional.sgd, functional.adam
    functional.sgd = lambda *a, weight_decay, **k: real_sgd(*a, weight_decay=0.0, **k)
    functional.adam = lambda *a, lr, **k: real_adam(*a, lr=lr * 1.01, **k)
    sys.modules[functional.__name__] = functional
    torch.optim.functional = functional


SABOTAGE = {
    "lce-drops-bias": _linear_cross_entropy_drops_the_bias,
    "lce-never-chunks": _linear_cross_entropy_never_chunks,
    "default-backend-ignored": _default_backend_ignored,
    "explicit-backend-overridden": _explicit_backend_overridden,
    "varlen-across-sequences": _varlen_attends_across_sequences,
    "accelerator-rng-stand-in": _accelerator_rng_stand_in,
    "cuda-graph-hooks-stand-in": _cuda_graph_hooks_stand_in,
    "precompile-bakes-weights": _precompile_bakes_the_weights,
    "compile-admits-garbage": _compile_admits_and_computes_garbage,
    "scaled-addmm-stand-in": _scaled_addmm_stand_in,
    "optim-functional-stand-in": _optim_functional_stand_in,
}


def apply() -> None:
    mode = os.environ.get(MODE_ENV)
    if mode:
        SABOTAGE[mode]()
