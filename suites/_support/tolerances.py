"""Numerical tolerances of the suites, stated once per suite and dtype.

Every comparison in ``compile/``, ``attention/`` and ``amp/`` takes its bound from here, so a reader
finds in one place how close "the same answer" has to be, and a change of bound is one visible edit.
A value is compared with ``torch.testing.assert_close(actual, expected, rtol=..., atol=...)``:
``|actual - expected| <= atol + rtol * |expected|`` elementwise.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Tol:
    rtol: float
    atol: float

    def kwargs(self) -> dict[str, float]:
        return {"rtol": self.rtol, "atol": self.atol}


# torch.compile (Inductor) against eager on the same device and dtype. Inductor fuses and reorders
# reductions, so float32 differs in the last bits; low precision differs by a rounding or two of the
# output (bfloat16 has 8 significant bits, float16 11).
COMPILE_FORWARD: dict[torch.dtype, Tol] = {
    torch.float32: Tol(rtol=1e-4, atol=1e-5),
    torch.bfloat16: Tol(rtol=2e-2, atol=2e-2),
    torch.float16: Tol(rtol=2e-3, atol=2e-3),
}
# Gradients go through one more chain of reductions (weight gradients sum over the batch).
COMPILE_GRAD: dict[torch.dtype, Tol] = {
    torch.float32: Tol(rtol=1e-3, atol=1e-4),
    torch.bfloat16: Tol(rtol=5e-2, atol=5e-2),
    torch.float16: Tol(rtol=1e-2, atol=1e-2),
}

# Scaled dot-product attention (each SDPA kernel, FlexAttention) against the math kernel run in
# float64 on the CPU, unit-variance inputs, 64 query tokens. Measured on CPU (2.13, math and flash
# kernels) the worst error over all cases is about a quarter of these bounds: float32 6e-7 forward and
# 2e-6 gradients; bfloat16 7e-3 and 2.5e-2; float16 1.1e-3 and 2.8e-3.
ATTENTION_FORWARD: dict[torch.dtype, Tol] = {
    torch.float64: Tol(rtol=1e-7, atol=1e-7),
    torch.float32: Tol(rtol=2e-5, atol=2e-5),
    torch.bfloat16: Tol(rtol=3e-2, atol=3e-2),
    torch.float16: Tol(rtol=5e-3, atol=5e-3),
}
ATTENTION_GRAD: dict[torch.dtype, Tol] = {
    torch.float64: Tol(rtol=1e-7, atol=1e-7),
    torch.float32: Tol(rtol=1e-4, atol=1e-4),
    torch.bfloat16: Tol(rtol=8e-2, atol=8e-2),
    torch.float16: Tol(rtol=1e-2, atol=1e-2),
}

# The calibrated bounds above are also the ceiling of the low-precision bounds on an accelerator (below), and the
# math kernel run in that dtype there is itself held to them: on an H200 (torch 2.11) the fused kernels' worst
# forward error at 256 tokens was 7.8e-3 in bfloat16 and 1e-3 in float16 (tests/data/gpu-facts), inside them.
# Low precision on an accelerator: PyTorch's own practice (test/test_transformers.py: check_out_and_grad, and
# test_mem_efficient_attention_vs_math_ref_grads in v2.13) compares a fused kernel with the float64 math reference
# and allows a fudge factor times the error of the math kernel run in the same low precision on the same device.
# Its factors: output 4 (ROCm 6), grad_query 160 (ROCm 360), grad_key 25 (ROCm 45), grad_value 8. The bound is
# atol = factor x max|math_lowp - float64|, rtol = torch.testing's default for the dtype; the CPU keeps the
# calibrated bounds above (its math kernel is the float32-accumulating reference the bounds were measured on).
MATH_ERROR_FACTOR = {"out": 4.0, "dq": 160.0, "dk": 25.0, "dv": 8.0}
MATH_ERROR_FACTOR_ROCM = {"out": 6.0, "dq": 360.0, "dk": 45.0, "dv": 8.0}
TESTING_RTOL = {torch.bfloat16: 1.6e-2, torch.float16: 1e-3}  # torch.testing.assert_close's defaults
LOW_PRECISION = (torch.bfloat16, torch.float16)


def relative_to_math(math_error: float, factor: float, dtype: torch.dtype, ceiling: Tol | None = None) -> Tol:
    """The bound of a low-precision kernel: ``factor`` times the math kernel's own error in ``dtype``, never looser
    than ``ceiling`` (the bound calibrated against the float64 reference for that dtype): a math kernel that got
    worse cannot loosen every fused kernel's bound with it."""
    atol = max(factor * math_error, 1e-5)
    if ceiling is not None:
        atol = min(atol, ceiling.atol)
    return Tol(rtol=TESTING_RTOL[dtype], atol=atol)


# Autocast: an op run under autocast against the same op in float32; unit-variance inputs, inner
# dimension 32, so outputs reach about 20. Measured on CPU (2.13) the worst |error| / (1 + |expected|)
# is 4.2e-2 in bfloat16 (bmm) and 4.6e-3 in float16: half of these bounds.
AMP_OP: dict[torch.dtype, Tol] = {
    torch.bfloat16: Tol(rtol=8e-2, atol=8e-2),
    torch.float16: Tol(rtol=1e-2, atol=1e-2),
}
# A mixed-precision training run may end at most this much above the float32 run's final loss
# (relative), and must have reduced its loss at least AMP_MIN_LOSS_REDUCTION times.
AMP_FINAL_LOSS_RATIO = 1.5
AMP_MIN_LOSS_REDUCTION = 10.0

# Quantized models against their float model: relative L2 error ||q(x) - f(x)|| / ||f(x)||.
QUANTIZED_REL_ERROR = 0.05


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


# MX scaled_mm (scaled_mm_mx/) against the float64 product of the dequantised operands: the products
# are exact, the device sums 128 of them in float32 and rounds the result to bfloat16 (8 significant
# bits, a relative rounding of 2**-9). atol is relative to the largest |product| (the test scales it).
MX_SCALED_MM = Tol(rtol=2.0**-7, atol=2.0**-7)


# The 2.13-2.15 API rows (issue 27), each against a float64 reference computed from the same inputs.
# linear_cross_entropy (float32 inputs): a mean over 64 rows of log-softmax over 1,000 classes; the
# chunked path accumulates per chunk, so float32 differs in the last few bits of the loss and gradients.
LINEAR_CROSS_ENTROPY = Tol(rtol=1e-4, atol=1e-5)
# Functional optimizer steps (float32 parameters) against the update rule computed in float64.
OPTIM_STEP = Tol(rtol=1e-5, atol=1e-6)
# precompile's reloaded artifact (float32 MLP) against the model evaluated in float64.
PRECOMPILE_FORWARD = Tol(rtol=1e-4, atol=1e-5)
# scaled_addmm: float8 e4m3 operands (exactly representable inputs), float32 accumulation, the result
# rounded to the bfloat16 input/output dtype (8 significant bits); atol scales with max |reference|.
SCALED_ADDMM = Tol(rtol=2.0**-7, atol=2.0**-7)
# varlen attention (bfloat16 Flash kernels) against per-sequence float64 softmax attention.
VARLEN_ATTENTION = Tol(rtol=2e-2, atol=2e-2)
# FP8 scaled_mm, tensor-wise and row-wise (issue 39): e4m3fn operands (exact in float64), power-of-two scales, float32
# accumulation of K=128 exact products, one rounding to bfloat16 (8 significant bits); atol scales with max |reference|.
# Measured on CPU (2.13): 2.5e-3 and 3.1e-3 of max |reference|; an H200 (2.11): 1.8e-3.
SCALED_MM_FP8 = Tol(rtol=2.0**-7, atol=2.0**-7)
# 2:4 semi-structured matmul against float64 (issue 39): float16/bfloat16 operands, float32 accumulation, one rounding
# to the output dtype; float32 through CUTLASS is computed in TF32 (10 mantissa bits) by the sparse tensor cores.
SEMI_STRUCTURED: dict[torch.dtype, Tol] = {
    torch.float16: Tol(rtol=2.0**-9, atol=2.0**-9),
    torch.bfloat16: Tol(rtol=2.0**-7, atol=2.0**-7),
    torch.float32: Tol(rtol=2.0**-9, atol=2.0**-9),
}
