"""Dynamic shapes, graph breaks and CUDA graphs under torch.compile.

* ``dynamic=True`` and ``torch._dynamo.mark_dynamic``: one compiled graph serves every batch size;
  ``torch.compiler.set_stance("fail_on_recompile")`` turns a recompile into an error.
* A data-dependent branch breaks the graph: compiled without ``fullgraph`` it still gives eager's
  answer on both branches; with ``fullgraph=True`` Dynamo refuses it.
* ``mode="reduce-overhead"`` records device graphs where the device has them; Inductor's
  ``cudagraph_or_error`` turns a silent fallback into an error that names the reason, for graphs with
  CUDA nodes; other devices fall back silently, so Inductor's skip counter is read as well.
"""

from __future__ import annotations

import contextlib
import copy

import pytest
import torch
from _support import graphcount
from _support.compiler import cudagraph_skips, device_graphs, graph_devices, inductor_toolchain
from _support.models import MODELS
from _support.refusals import REDUCE_OVERHEAD, refused, refused_silently
from _support.requires import requires
from _support.tolerances import COMPILE_FORWARD

pytestmark = [requires(inductor_toolchain()), pytest.mark.timeout(240)]
TOL = COMPILE_FORWARD[torch.float32].kwargs()


def _mlp(device: torch.device) -> tuple[torch.nn.Module, torch.nn.Module]:
    model, _ = MODELS["mlp"].build(device)
    model.eval()
    return model, copy.deepcopy(model)


def _batch(n: int, device: torch.device) -> torch.Tensor:
    return torch.randn(n, 32, device=device)


@torch.no_grad()
def test_dynamic_true_serves_every_batch_size_without_recompiling(device: torch.device) -> None:
    torch._dynamo.reset()
    model, eager = _mlp(device)
    compiled = torch.compile(model, backend="inductor", dynamic=True)
    first = _batch(8, device)
    torch.testing.assert_close(compiled(first), eager(first), **TOL)
    with torch.compiler.set_stance("fail_on_recompile"):
        for n in (3, 17, 40):
            x = _batch(n, device)
            torch.testing.assert_close(compiled(x), eager(x), **TOL, msg=lambda m, n=n: f"batch {n}: {m}")


@torch.no_grad()
def test_mark_dynamic_batch_dimension(device: torch.device) -> None:
    torch._dynamo.reset()
    model, eager = _mlp(device)
    compiled = torch.compile(model, backend="inductor")
    first = _batch(6, device)
    torch._dynamo.mark_dynamic(first, 0)
    torch.testing.assert_close(compiled(first), eager(first), **TOL)
    with torch.compiler.set_stance("fail_on_recompile"):
        for n in (5, 23):
            x = _batch(n, device)
            torch.testing.assert_close(compiled(x), eager(x), **TOL, msg=lambda m, n=n: f"batch {n}: {m}")


def _branchy(x: torch.Tensor) -> torch.Tensor:
    y = x.cos() * 1.5
    if y.sum() > 0:  # data-dependent: Dynamo breaks the graph here
        return torch.tanh(y) * 2
    return y.sigmoid() - 1


def test_graph_break_still_gives_eagers_answer(device: torch.device) -> None:
    torch._dynamo.reset()
    positive = torch.linspace(-0.5, 0.5, 64, device=device)  # cos > 0 everywhere: first branch
    negative = torch.linspace(2.0, 4.0, 64, device=device)  # cos < 0 mostly: second branch
    assert (_branchy(positive) > -0.0).all() and _branchy(negative).max() < 0.5  # the inputs take both branches

    explanation = torch._dynamo.explain(_branchy)(positive)
    assert explanation.graph_break_count >= 1, "the data-dependent branch did not break the graph"

    compiled = torch.compile(_branchy, backend="inductor")
    for x in (positive, negative):
        torch.testing.assert_close(compiled(x), _branchy(x), **TOL)

    torch._dynamo.reset()
    with pytest.raises(torch._dynamo.exc.Unsupported, match=r"[Dd]ata-dependent"):
        torch.compile(_branchy, backend="inductor", fullgraph=True)(positive)


@requires(device_graphs())
@torch.no_grad()
def test_reduce_overhead_records_device_graphs(device: torch.device) -> None:
    torch._dynamo.reset()
    model, eager = _mlp(device)
    compiled = torch.compile(model, backend="inductor", mode="reduce-overhead")
    x = _batch(16, device)
    where = f'torch.compile(mode="reduce-overhead") on {device.type}'
    before = cudagraph_skips()
    graphs = (
        graphcount.expect(f"{where}: warm-up, record, replay", recorded=1, replayed=1)
        if device.type in graph_devices()
        else contextlib.nullcontext()
    )
    with torch._inductor.config.patch({"triton.cudagraph_or_error": True}), graphs:
        try:
            outs = [compiled(x).clone() for _ in range(3)]  # warm-up, record, replay
        except RuntimeError as e:
            if "skipping cudagraphs" not in str(e) or device.type in graph_devices():
                raise
            refused(REDUCE_OVERHEAD, e, where)  # fails where the claims cover this device
    skipped = cudagraph_skips() - before
    assert not skipped or device.type not in graph_devices(), (
        f"{where}: Inductor skipped device graphs {skipped} time(s)"
    )
    if skipped:
        # a silent fallback: the skip counter is the only trace (intel/torch-xpu-ops#5338)
        refused_silently(
            REDUCE_OVERHEAD,
            f"Inductor ran without device graphs {skipped} time(s) (it records them only on "
            f"{sorted(graph_devices())} in this build)",
            where,
        )
    for out in outs:
        torch.testing.assert_close(out, eager(x), **TOL)
