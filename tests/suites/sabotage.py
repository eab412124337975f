"""Deliberate breakage injected into a real pytest run of the real suites.

``COMPAT_SABOTAGE`` names one breakage; a ``sitecustomize`` module that calls :func:`apply` is put on
``PYTHONPATH``, so it takes effect at start-up in the pytest process and in every process the suites
start (the distributed suite's ranks). Each one breaks the feature a suite checks the way a faulty
backend would: wrong numbers, a dropped rank, a quantizer that distorts, an API that stops refusing
on a CPU build.
"""

from __future__ import annotations

import os

MODE_ENV = "COMPAT_SABOTAGE"


def _compile_returns_garbage() -> None:
    """torch.compile hands back a callable whose outputs are 1% off (no Inductor involved)."""
    import torch

    class Garbage(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *args, **kwargs):
            return self.inner(*args, **kwargs) * 1.01

    def compile(model, *args, **kwargs):
        if isinstance(model, torch.nn.Module):
            return Garbage(model)
        return lambda *a, **k: model(*a, **k) * 1.01

    torch.compile = compile


def _sdpa_off_by_a_little() -> None:
    """Every SDPA call below float64 (the reference) is 1% off."""
    import torch
    import torch.nn.functional as F

    real = F.scaled_dot_product_attention

    def sdpa(query, *args, **kwargs):
        out = real(query, *args, **kwargs)
        return out if query.dtype == torch.float64 else out * 1.01

    F.scaled_dot_product_attention = sdpa


def _grad_scaler_zeroes_the_loss() -> None:
    """GradScaler.scale multiplies the loss by 0 instead of the scale: no gradient, no training."""
    import torch

    real = torch.amp.GradScaler.scale

    def scale(self, outputs):
        return real(self, outputs) * 0.0

    torch.amp.GradScaler.scale = scale


def _all_reduce_drops_a_rank() -> None:
    """all_reduce on rank 1 contributes zeros instead of its tensor."""
    import torch.distributed as dist

    real = dist.all_reduce

    def all_reduce(tensor, *args, **kwargs):
        if dist.get_rank() == 1:
            tensor.zero_()
        return real(tensor, *args, **kwargs)

    dist.all_reduce = all_reduce


def _quantizer_distorts() -> None:
    """quantize_dynamic returns a quantized model whose outputs are 20% off."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch.ao.quantization as tq

    real = tq.quantize_dynamic

    def quantize_dynamic(model, *args, **kwargs):
        quantized = real(model, *args, **kwargs)
        quantized.register_forward_hook(lambda module, inputs, out: out * 1.2)
        return quantized

    tq.quantize_dynamic = quantize_dynamic


def _memory_api_stops_refusing() -> None:
    """torch.accelerator.memory_allocated answers 0 on a CPU build instead of refusing."""
    import torch

    torch.accelerator.memory_allocated = lambda *a, **k: 0


SABOTAGE = {
    "compile-garbage": _compile_returns_garbage,
    "sdpa-off": _sdpa_off_by_a_little,
    "scaler-zeroes-loss": _grad_scaler_zeroes_the_loss,
    "all-reduce-drops-rank": _all_reduce_drops_a_rank,
    "quantizer-distorts": _quantizer_distorts,
    "memory-api-no-refusal": _memory_api_stops_refusing,
}


def apply() -> None:
    mode = os.environ.get(MODE_ENV)
    if mode:
        SABOTAGE[mode]()
