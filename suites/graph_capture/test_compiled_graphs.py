"""``torch.compile(mode="reduce-overhead")`` on every accelerator (claimed for 2.14: pytorch#191906).

#191906 routes Inductor's device-graph capture through a per-device interface "so out-of-tree accelerator
backends can run torch.compile(mode="reduce-overhead")". Whether a device gets graphs is read from what
Inductor did, not from its silence: ``triton.cudagraph_or_error`` raises only for graphs with CUDA nodes,
so the suite also counts Inductor's skips (``cudagraph_skips``). A device the build's Inductor does not
admit (``_support.compiler.graph_devices()``: ``{"cuda"}`` in 2.13, 2.14.1 and 2.15.0 as installed) is
``[unsupported]`` (its refusal is in ``_support/refusals.py``) unless the claims cover it; an admitted or claimed one
that skips fails. On the CPU the skip itself is asserted.
"""

from __future__ import annotations

import contextlib

import pytest
import torch
from _support import graphcount
from _support.compiler import cudagraph_skips, graph_devices, inductor_toolchain
from _support.refusals import REDUCE_OVERHEAD, refused, refused_silently
from _support.requires import requires, skip_hardware

pytestmark = [requires(inductor_toolchain()), pytest.mark.timeout(240)]


def _step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    # a lone matmul: an extern kernel, so the CPU check generates no C++ (no g++ run, no ISA probe)
    return x @ w


@torch.no_grad()
def test_reduce_overhead_on_every_accelerator(device: torch.device, compat_env) -> None:
    torch._dynamo.reset()
    compiled = torch.compile(_step, mode="reduce-overhead", fullgraph=True)
    before = cudagraph_skips()
    with torch._inductor.config.patch({"triton.cudagraph_or_error": True}):
        if device.type == "cpu":
            x, w = torch.randn(16, 16), torch.randn(16, 16)
            torch.testing.assert_close(compiled(x, w), _step(x, w))
            assert cudagraph_skips() > before, 'torch.compile(mode="reduce-overhead") on the CPU recorded no skip'
            skip_hardware(
                'torch.compile(mode="reduce-overhead") records device graphs on an accelerator; none here (backend '
                f"{compat_env.backend}, device {compat_env.device_label}); the CPU graph was skipped as it must"
            )
        results = []
        where = f'torch.compile(mode="reduce-overhead") on {device.type}'
        w = torch.randn(64, 64, device=device)
        graphs = (
            graphcount.expect(f"{where}: warm-up, record, replays", recorded=1, replayed=2)
            if device.type in graph_devices()
            else contextlib.nullcontext()
        )
        try:
            with graphs:
                for n in range(4):  # warm-up, record, replays: each call with new values in the same shape
                    x = torch.full((64, 64), n - 1.5, device=device)
                    torch.compiler.cudagraph_mark_step_begin()
                    results.append((x, compiled(x, w).clone()))
        except RuntimeError as e:
            if "skipping cudagraphs" not in str(e) or device.type in graph_devices():
                raise
            refused(REDUCE_OVERHEAD, e, where)  # fails where the claims cover this device
    skipped = cudagraph_skips() - before
    assert not skipped or device.type not in graph_devices(), (
        f"{where}: Inductor skipped device graphs {skipped} time(s)"
    )
    if skipped:
        refused_silently(
            REDUCE_OVERHEAD,
            f"Inductor ran without device graphs {skipped} time(s); torch {compat_env.torch_base} records them only "
            f"on {sorted(graph_devices())}",
            where,
        )
    for x, out in results:
        torch.testing.assert_close(out, _step(x, w), msg=lambda m, x=x: f"input filled with {x[0, 0].item()}: {m}")
