"""``torch.compiler.precompile``: ahead-of-time capture to a self-contained Python artifact (2.14), and its
caller-driven ``capture`` / ``load`` (2.15).

Upstream's words: "precompile returns a self-contained, executable python_code string plus a companion
integrity-tagged cache ... Reload with torch.compiler.precompile.load(python_code, cache)" (2.14); "capture fn
ahead of time from the caller's own calls and lower it to a self-contained Python source artifact plus an
acceleration cache, then reload it" with ``capture(fn, artifact_path=..., cache_path=...)`` and
``load(artifact_path, cache_path)`` (2.15, a prototype). "The artifact embeds NO weights -- you pass the model
again at runtime": the reloaded artifact is run with a second model of the same structure and other weights,
and must give that model's output (float64 reference), for the ``eager`` backend (the captured ATen graph)
and ``inductor`` (generated kernels). 2.15 turned ``precompile`` into a module: the 2.14 call form is gone
there (``[unsupported]``), and 2.14 has no ``capture``.
"""

from __future__ import annotations

import types
from pathlib import Path

import pytest
import torch
from _support.compiler import inductor_toolchain
from _support.requires import api, need, requires, skip_unsupported
from _support.tolerances import PRECOMPILE_FORWARD

pytestmark = [requires(api("torch.compiler.precompile", since="2.14")), pytest.mark.timeout(300)]

BACKENDS = ["eager", "inductor"]


def forward(model: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    return model(x)


def _model(seed: int, device) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).to(device).eval()


def _check(runnable, device, backend: str) -> None:
    """The reloaded artifact, run with another model and input of the same shapes, against float64."""
    other = _model(7, device)
    x = torch.randn(8, 16, generator=torch.Generator().manual_seed(1)).to(device)
    with torch.no_grad():
        out = runnable(other, x)
        want = other.double().cpu()(x.double().cpu())
    torch.testing.assert_close(
        out.double().cpu(), want, **PRECOMPILE_FORWARD.kwargs(),
        msg=lambda m: f"precompiled ({backend}) on {device}, run with another model's weights, vs float64: {m}",
    )  # fmt: skip


def _gate(backend: str) -> None:
    if backend == "inductor":
        need(inductor_toolchain())


@pytest.mark.parametrize("backend", BACKENDS)
def test_precompile_and_load(backend: str, device) -> None:
    precompile = torch.compiler.precompile
    if isinstance(precompile, types.ModuleType) or not callable(precompile):
        skip_unsupported(
            f"torch.compiler.precompile is a module in torch {torch.__version__} (the 2.15 capture/load API): "
            "the 2.14 call form precompile(fn, *example_inputs) is gone"
        )
    _gate(backend)
    x = torch.randn(8, 16, device=device)
    with torch.no_grad():
        python_code, cache = precompile(forward, _model(0, device), x, backend=backend)
    assert isinstance(python_code, str) and isinstance(cache, bytes), f"got {type(python_code)}, {type(cache)}"
    compile(python_code, "<precompiled>", "exec")  # a self-contained Python source
    _check(precompile.load(python_code, cache), device, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_precompile_capture_and_load(backend: str, device, tmp_path: Path) -> None:
    need(api("torch.compiler.precompile.capture", since="2.15"), api("torch.compiler.precompile.load", since="2.15"))
    _gate(backend)
    pre = torch.compiler.precompile
    artifact, cache = tmp_path / "model.py", tmp_path / "model.cache"
    model, x = _model(0, device), torch.randn(8, 16, device=device)
    with torch.no_grad(), pre.capture(forward, artifact_path=artifact, cache_path=cache, backend=backend) as cap:
        during = cap(model, x)
        assert not artifact.exists(), "the artifact is written when the capture block exits"
    with torch.no_grad():
        torch.testing.assert_close(during, model(x), msg=lambda m: f"the captured call must run for real: {m}")
    assert artifact.is_file() and cache.is_file(), f"capture wrote {sorted(p.name for p in tmp_path.iterdir())}"
    compile(artifact.read_text(encoding="utf-8"), str(artifact), "exec")
    runnable = pre.load(artifact, cache)
    assert isinstance(runnable, torch.compiler.precompile.PrecompiledRunnable), (
        f"load returned {type(runnable).__name__}"
    )
    _check(runnable, device, backend)
