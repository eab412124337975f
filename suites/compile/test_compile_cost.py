"""Compile time and speedup over eager: measurements, recorded and never asserted.

A transformer block's training step (forward + backward) is compiled and its first call timed: a
cold compile, checked with Inductor's cache counters (on a cache hit, e.g. when another worker of the
session compiled the same graph first, it is compiled again with the caches disabled). Inductor's
one-off start-up (the C++ compiler probe on CPU) is paid by a warm-up compile and not counted. Then
eager and compiled steps are timed side by side. Speed depends on the machine and its load; the
suite records it and asserts only that the compiled step is correct, so these tests are
*measurements* on every device. On CPU the block and batch are those of the correctness test
(``test_compile_modules.py``), so whichever runs second reuses the compiled graph: one compile,
not two, per session. (The file sorts first so that it usually is the one that compiles.)
"""

from __future__ import annotations

import copy
import time

import pytest
import torch
from _support.compiler import inductor_toolchain
from _support.models import MODELS, TransformerBlock
from _support.perf import best_time, record_perf, synchronize
from _support.requires import requires
from _support.tolerances import COMPILE_FORWARD

pytestmark = [requires(inductor_toolchain()), pytest.mark.perf, pytest.mark.measurement, pytest.mark.timeout(300)]

CLAIM = (
    "2.0: torch.compile makes training 43% faster on average over 163 open-source models on an NVIDIA A100 "
    "(21% in float32, 51% with AMP)"
)
SHAPES = {"cpu": MODELS["transformer"].input_shape, "accelerator": (32, 256, 256)}  # (batch, tokens, width)


def _cache_hits() -> int:
    from torch._dynamo.utils import counters

    return counters["inductor"]["fxgraph_cache_hit"] + counters["aot_autograd"]["autograd_cache_hit"]


def _cold_compile(model, step, device: torch.device, disable_caches: bool):
    """Compile and time the first step; the time is None when a compile cache served it."""
    compiled = torch.compile(model, backend="inductor", fullgraph=True)
    hits = _cache_hits()
    with torch._inductor.config.patch(force_disable_caches=disable_caches):
        synchronize(device)
        t0 = time.perf_counter()
        out = step(compiled)
        synchronize(device)
        elapsed = time.perf_counter() - t0
    return compiled, out, (None if _cache_hits() > hits else elapsed)


def test_transformer_train_step_compile_time_and_speedup(device: torch.device, compat_env, record_property) -> None:
    batch, tokens, width = SHAPES[compat_env.device_class]
    shape = f"({batch},{tokens},{width})"
    torch.manual_seed(0)
    eager = TransformerBlock(dim=width, heads=4).to(device)
    model = copy.deepcopy(eager)
    x = torch.randn(batch, tokens, width, device=device)

    def step(m: torch.nn.Module) -> torch.Tensor:
        out = m(x)
        out.square().mean().backward()
        return out

    torch._dynamo.reset()
    torch.compile(lambda t: (t * 2).relu(), backend="inductor")(x)  # Inductor start-up, not counted
    compiled, out, compile_s = _cold_compile(model, step, device, disable_caches=False)
    if compile_s is None:  # a cache hit: the figure would be a warm start
        torch._dynamo.reset()
        compiled, out, compile_s = _cold_compile(model, step, device, disable_caches=True)
    torch.testing.assert_close(out, step(eager), **COMPILE_FORWARD[torch.float32].kwargs())

    repeats = 5 if device.type == "cpu" else 20
    t_eager = best_time(lambda: step(eager), device, repeats=repeats, warmup=2)
    t_compiled = best_time(lambda: step(compiled), device, repeats=repeats, warmup=2)
    speedup = t_eager / t_compiled
    common = {"shape": shape, "dtype": "float32"}
    record_perf(
        record_property,
        "compile_time_s",
        compile_s,
        "s",
        label="torch.compile cold compile, transformer block train step",
        note="first compiled forward+backward, no compile-cache hit (Inductor start-up excluded)",
        **common,
    )
    record_perf(
        record_property,
        "train_step_speedup",
        speedup,
        "x",
        label="torch.compile speedup over eager, transformer block train step",
        note=f"eager step time / compiled step time, best of {repeats}",
        claim=CLAIM,
        **common,
    )
    record_perf(record_property, "eager_step_ms", t_eager * 1e3, "ms", label="eager train step", note="best", **common)
    record_perf(
        record_property, "compiled_step_ms", t_compiled * 1e3, "ms", label="compiled train step", note="best", **common
    )
    assert compile_s > 0 and speedup > 0
