"""Every SDPA kernel selectable with ``torch.nn.attention.sdpa_kernel`` against a float64 reference.

One test per kernel x dtype x case (causal, boolean mask with more keys than queries, grouped-query
attention with ``enable_gqa``, head dims 80 and 33). The kernel is forced with ``sdpa_kernel(kernel)``
so nothing else can stand in for it; its output and gradients are compared with the math kernel
run in float64 on the CPU, within ``_support/tolerances.py``'s attention bounds (on an accelerator in bfloat16 and
float16: a factor times the math kernel's own error in that dtype, PyTorch's practice in test_transformers.py).

Whether a kernel takes these inputs on this device and dtype is itself the compatibility fact: when
SDPA refuses ("No viable backend ..."), the test skips ``[unsupported]`` with the kernel's own refusal
reason (the warnings SDPA emits while choosing, then its error), unless ``features.toml``'s claims say the
kernel takes this case on this device: then the refusal fails (``_support/refusals.py``). ``overrideable``
is the fused path of out-of-tree and XPU backends.
"""

from __future__ import annotations

import pytest
import torch
from _support.attention import CASES, case_reference, recorded_warnings, refusal_reason, run_sdpa, with_reasons
from _support.drills import exempt
from _support.env import get as compat_env
from _support.refusals import refused
from _support.tolerances import (
    ATTENTION_FORWARD,
    ATTENTION_GRAD,
    LOW_PRECISION,
    MATH_ERROR_FACTOR,
    MATH_ERROR_FACTOR_ROCM,
    Tol,
    dtype_name,
    relative_to_math,
)
from torch.nn.attention import SDPBackend, sdpa_kernel

KERNELS = {
    "math": SDPBackend.MATH,
    "flash": SDPBackend.FLASH_ATTENTION,
    "efficient": SDPBackend.EFFICIENT_ATTENTION,
    "cudnn": SDPBackend.CUDNN_ATTENTION,
    "overrideable": SDPBackend.OVERRIDEABLE,
}
DTYPES = [torch.float32, torch.bfloat16, torch.float16]
SDPA = "torch.nn.functional.scaled_dot_product_attention"


def _bounds(inputs, spec, ref_out, ref_grads, device: torch.device, dtype: torch.dtype) -> dict[str, Tol]:
    """The calibrated bounds on the CPU and in float32; in low precision on an accelerator, PyTorch's practice:
    a factor times the error of the math kernel run in the same dtype on the same device (tolerances.py)."""
    names = ("out", "dq", "dk", "dv")
    if device.type == "cpu" or dtype not in LOW_PRECISION:
        return {n: (ATTENTION_FORWARD if n == "out" else ATTENTION_GRAD)[dtype] for n in names}
    with sdpa_kernel(SDPBackend.MATH), exempt():
        out, grads = run_sdpa(inputs, spec, device, dtype, backward=True)
    factors = MATH_ERROR_FACTOR_ROCM if compat_env().is_rocm else MATH_ERROR_FACTOR
    pairs = zip([out, *grads], [ref_out, *ref_grads], strict=True)
    errors = [float((t.detach().double().cpu() - r).abs().max()) for t, r in pairs]
    ceilings = {n: (ATTENTION_FORWARD if n == "out" else ATTENTION_GRAD)[dtype] for n in names}
    for n, err in zip(names, errors, strict=True):  # the math kernel is held to the float64 reference itself
        assert err <= ceilings[n].atol, (
            f"the math kernel in {dtype_name(dtype)} on {device.type} is off the float64 reference by {err:.3g} "
            f"({n}), beyond the calibrated ceiling {ceilings[n].atol:g}: no fused kernel is judged against it"
        )
    return {n: relative_to_math(err, factors[n], dtype, ceilings[n]) for n, err in zip(names, errors, strict=True)}


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_name)
@pytest.mark.parametrize("kernel", list(KERNELS))
def test_kernel_matches_float64_math(device: torch.device, kernel: str, dtype: torch.dtype, case: str) -> None:
    spec = CASES[case]
    inputs, ref_out, ref_grads = case_reference(case)
    where = f"SDPA {kernel} kernel, {dtype_name(dtype)}, {case}, on {device.type}"
    bounds = _bounds(inputs, spec, ref_out, ref_grads, device, dtype)

    with recorded_warnings() as caught:
        try:
            with sdpa_kernel(KERNELS[kernel]):
                out, _ = run_sdpa(inputs, spec, device, dtype, backward=False)
        except RuntimeError as e:  # judged with the kernel's reasons (warnings): the table lists refusals by them
            refused(SDPA, with_reasons(e, caught), f"{where}: refused: {refusal_reason(e, caught)}")
    assert out.dtype == dtype and out.shape == ref_out.shape
    torch.testing.assert_close(
        out.double().cpu(), ref_out, **bounds["out"].kwargs(), msg=lambda m: f"{where}, output: {m}"
    )

    with recorded_warnings() as caught:
        try:
            with sdpa_kernel(KERNELS[kernel]):
                _, grads = run_sdpa(inputs, spec, device, dtype, backward=True)
        except NotImplementedError as e:
            # the forward passed above: a backward the table does not list as refused fails
            refused(f"{SDPA}:backward", e, f"{where}: forward checked; backward: {refusal_reason(e, caught)}")
    for name, grad, ref in zip(("dq", "dk", "dv"), grads, ref_grads, strict=True):
        assert grad is not None and grad.shape == ref.shape, f"{where}: {name} missing or misshapen"
        torch.testing.assert_close(
            grad.double().cpu(),
            ref,
            **bounds[name].kwargs(),
            msg=lambda m, name=name: f"{where}, {name}: {m}",
        )
