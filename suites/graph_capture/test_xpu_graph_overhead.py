"""XPUGraph replay against eager launches (2.14: "Reduced graph capture and replay overhead in XPU Graph").

The release claim compares with 2.13; in one build the proxy is a graph of many tiny kernels replayed
against the same kernels launched one by one. The figure is recorded (a measurement), and the replay's
result is asserted exactly. Builds without an XPU cannot construct an ``XPUGraph``: asserted, then
``[hardware]``.
"""

from __future__ import annotations

import pytest
import torch
from _support.perf import best_time, record_perf, synchronize
from _support.requires import api, requires, skip_hardware

KERNELS = 200
CLAIM = "2.14: reduced graph capture and replay overhead in XPU Graph (pytorch#188874, tracker pytorch#193756)"

pytestmark = [
    pytest.mark.only_builds("xpu"),
    pytest.mark.measurement,
    requires(api("torch.xpu.XPUGraph", since="2.11")),
]


def test_xpu_graph_replay_overhead(device: torch.device, compat_env, record_property) -> None:
    if device.type != "xpu":
        with pytest.raises(RuntimeError):
            torch.xpu.XPUGraph()
        skip_hardware(f"XPUGraph replay needs an XPU device; none here (device {compat_env.device_label})")
    x = torch.zeros(64, device=device)

    def launches() -> None:
        for _ in range(KERNELS):
            x.add_(1)

    side = torch.xpu.Stream()
    side.wait_stream(torch.xpu.current_stream())
    with torch.xpu.stream(side):
        launches()
    torch.xpu.current_stream().wait_stream(side)
    g = torch.xpu.XPUGraph()
    with torch.xpu.graph(g):
        launches()
    x.zero_()
    g.replay()
    synchronize(device)
    assert torch.equal(x, torch.full_like(x, float(KERNELS))), f"one replay of {KERNELS} adds gave {x[:4].tolist()}"
    eager_s = best_time(launches, device, repeats=5)
    replay_s = best_time(g.replay, device, repeats=5)
    record_perf(
        record_property,
        "xpu_graph_replay_vs_eager",
        eager_s / replay_s,
        "x",
        label=f"XPUGraph replay vs eager launches, {KERNELS} tiny kernels",
        shape="(64,)",
        dtype="float32",
        note="eager launch time / graph replay time in this build (the in-version proxy for the overhead claim)",
        claim=CLAIM,
    )
