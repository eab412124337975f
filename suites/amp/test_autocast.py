"""torch.autocast on the device, float16 and bfloat16: op-level dtype rules and values.

Under ``torch.autocast(device.type, dtype)`` matmul, linear, bmm and conv2d run in ``dtype``; mse_loss
(and softmax on CUDA/XPU) run in float32 (``_support/amp.py`` cites the op lists). Each result is also
compared with the float32 op within ``_support/tolerances.py``'s autocast bound, and a backward pass
under autocast leaves float32 parameters with float32 gradients. When autocast refuses a dtype on
this device (it warns and disables itself), the test skips ``[unsupported]`` with that warning.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from _support.amp import autocast, expected_dtype
from _support.tolerances import AMP_OP, dtype_name

DTYPES = [torch.float16, torch.bfloat16]


def _inputs(device: torch.device) -> dict[str, tuple[torch.Tensor, ...]]:
    g = torch.Generator().manual_seed(0)

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=g).to(device)

    a, b = randn(16, 32), randn(32, 24)
    return {
        "matmul": (a, b),
        "linear": (a, randn(24, 32), randn(24)),
        "bmm": (randn(4, 16, 32), randn(4, 32, 8)),
        "conv2d": (randn(2, 3, 12, 12), randn(8, 3, 3, 3)),
        "mse_loss": (a, randn(16, 32)),
        "softmax": (a, b),
    }


OPS = {
    "matmul": lambda a, b: a @ b,
    "linear": F.linear,
    "bmm": torch.bmm,
    "conv2d": lambda x, w: F.conv2d(x, w, padding=1),
    "mse_loss": F.mse_loss,
    # softmax of a matmul result: the input arrives in the autocast dtype
    "softmax": lambda a, b: torch.softmax(a @ b, dim=-1),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_name)
@pytest.mark.parametrize("op", list(OPS))
def test_autocast_op_dtype_and_value(device: torch.device, op: str, dtype: torch.dtype) -> None:
    args = _inputs(device)[op]
    reference = OPS[op](*args)
    assert reference.dtype == torch.float32
    with autocast(device.type, dtype):
        out = OPS[op](*args)
    want = expected_dtype(op, device.type, dtype)
    assert out.dtype == want, f"{op} under autocast({dtype_name(dtype)}) on {device.type} gave {out.dtype}, want {want}"
    torch.testing.assert_close(out.float(), reference, **AMP_OP[dtype].kwargs(), msg=lambda m: f"{op}: {m}")


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_name)
def test_backward_under_autocast_gives_float32_grads(device: torch.device, dtype: torch.dtype) -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)).to(device)
    x = torch.randn(8, 32, device=device)
    with autocast(device.type, dtype):
        out = model(x)
        loss = out.float().square().mean()
    assert out.dtype == dtype
    loss.backward()
    for name, p in model.named_parameters():
        assert p.dtype == torch.float32 and p.grad is not None and p.grad.dtype == torch.float32, name
        assert torch.isfinite(p.grad).all(), f"{name}.grad is not finite"
