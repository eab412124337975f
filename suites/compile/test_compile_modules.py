"""torch.compile with Inductor gives eager's answer on real modules, forward and backward.

Each module is compiled with ``fullgraph=True`` (a graph break in these plain modules is itself a
regression) and compared with an identical eager copy: the outputs, the loss and every parameter
gradient, within the per-dtype bounds of ``_support/tolerances.py``. The code generation path Inductor
took on this device is recorded as the property ``compile.codegen`` and checked against the release
claim (C++ on CPUs, Triton on CUDA, ROCm and XPU).
"""

from __future__ import annotations

import copy

import pytest
import torch
from _support.compiler import EXPECTED_CODEGEN, codegen_kind, generated_code, inductor_toolchain
from _support.models import MODELS
from _support.requires import requires
from _support.tolerances import COMPILE_FORWARD, COMPILE_GRAD, dtype_name

pytestmark = [requires(inductor_toolchain()), pytest.mark.timeout(240)]

# (module, dtype): every module in float32, the MLP also in the two low-precision dtypes.
CASES = [
    ("mlp", torch.float32),
    ("mlp", torch.bfloat16),
    ("mlp", torch.float16),
    ("conv", torch.float32),
    ("transformer", torch.float32),
]


def _loss(out: torch.Tensor) -> torch.Tensor:
    return out.float().square().mean()


@pytest.mark.parametrize(("name", "dtype"), CASES, ids=[f"{n}-{dtype_name(d)}" for n, d in CASES])
def test_forward_and_backward_match_eager(device: torch.device, name: str, dtype: torch.dtype) -> None:
    torch._dynamo.reset()
    eager, x = MODELS[name].build(device, dtype)
    eager.train()
    model = copy.deepcopy(eager)
    compiled = torch.compile(model, backend="inductor", fullgraph=True)

    out_c = compiled(x)
    out_e = eager(x)
    assert out_c.dtype == out_e.dtype == dtype
    torch.testing.assert_close(out_c, out_e, **COMPILE_FORWARD[dtype].kwargs(), msg=lambda m: f"{name} forward: {m}")

    loss_c, loss_e = _loss(out_c), _loss(out_e)
    loss_c.backward()
    loss_e.backward()
    grads = 0
    for (pname, p_c), (_, p_e) in zip(model.named_parameters(), eager.named_parameters(), strict=True):
        assert p_c.grad is not None, f"{name}: compiled backward left {pname}.grad empty"
        torch.testing.assert_close(
            p_c.grad, p_e.grad, **COMPILE_GRAD[dtype].kwargs(), msg=lambda m, pname=pname: f"{name} grad {pname}: {m}"
        )
        grads += 1
    assert grads == len(list(eager.parameters())) > 0
    # training-mode state (batch-norm running statistics) moves identically
    for (bname, b_c), (_, b_e) in zip(model.named_buffers(), eager.named_buffers(), strict=True):
        torch.testing.assert_close(b_c, b_e, **COMPILE_GRAD[dtype].kwargs(), msg=lambda m, b=bname: f"{name} {b}: {m}")


def test_codegen_path(device: torch.device, record_property) -> None:
    """The kernels Inductor generates here are C++ on CPU and Triton on CUDA/ROCm/XPU."""
    torch._dynamo.reset()

    def fn(x: torch.Tensor) -> torch.Tensor:
        return (x * 2).sin() + x.cos().sum()

    x = torch.randn(64, device=device)
    out, sources = generated_code(torch.compile(fn, backend="inductor", fullgraph=True), x)
    kind = codegen_kind(sources)
    record_property("compile.codegen", kind)
    torch.testing.assert_close(out, fn(x), **COMPILE_FORWARD[torch.float32].kwargs())
    expected = EXPECTED_CODEGEN.get(device.type)
    assert expected is not None, f"no expected Inductor code generator for device type {device.type!r}"
    assert kind == expected, f"Inductor generated {kind} kernels on {device.type}; expected {expected}"
