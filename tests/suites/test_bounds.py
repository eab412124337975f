"""Bounds that cannot loosen themselves, and scales that matter (issue 38, item 5), checked on the suites' own
tables and constants.

* a low-precision SDPA bound on an accelerator is a factor times the math kernel's error in that dtype, capped
  by the ceiling calibrated against the float64 reference (tolerances.ATTENTION_FORWARD/GRAD): a math kernel that
  got worse cannot loosen the fused kernels' bounds;
* scaled_addmm's scales multiply to 2, not 1, so a kernel that ignores or inverts them is off the float64
  reference by far more than the bound.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SUITES = Path(__file__).resolve().parents[2] / "suites"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the tolerances are per torch dtype"),
]


@pytest.fixture(scope="module")
def suites_path():
    sys.path.insert(0, str(SUITES))
    yield
    sys.path.remove(str(SUITES))


def test_a_worse_math_kernel_cannot_loosen_a_fused_kernels_bound(suites_path) -> None:
    import torch
    from _support.tolerances import ATTENTION_FORWARD, ATTENTION_GRAD, MATH_ERROR_FACTOR, relative_to_math

    for dtype in (torch.bfloat16, torch.float16):
        ceiling = ATTENTION_FORWARD[dtype]
        good = relative_to_math(1e-4, MATH_ERROR_FACTOR["out"], dtype, ceiling)
        assert good.atol == pytest.approx(4e-4), "a sane math error keeps PyTorch's factor"
        bad = relative_to_math(1.0, MATH_ERROR_FACTOR["dq"], dtype, ATTENTION_GRAD[dtype])
        assert bad.atol == ATTENTION_GRAD[dtype].atol, "a math error of 1.0 would have allowed 160"


def test_the_sdpa_test_holds_the_math_kernel_to_the_ceiling() -> None:
    text = (SUITES / "attention" / "test_sdpa_kernels.py").read_text(encoding="utf-8")
    assert "beyond the calibrated ceiling" in text and "relative_to_math(err, factors[n], dtype, ceilings[n])" in text


def test_ignored_or_inverted_scales_would_fail(suites_path) -> None:
    import torch
    from _support.tolerances import SCALED_ADDMM

    spec = importlib.util.spec_from_file_location(
        "scaled_addmm_suite", SUITES / "scaled_addmm" / "test_scaled_addmm.py"
    )
    suite = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(suite)
    assert suite.SCALE_A * suite.SCALE_B != 1, "scales whose product is 1 pass a kernel that ignores them"
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(suite.M, suite.K, generator=gen).to(torch.float8_e4m3fn).double()
    b = torch.randn(suite.N, suite.K, generator=gen).to(torch.float8_e4m3fn).double()
    base = torch.randn(suite.M, suite.N, generator=gen).to(torch.bfloat16).double()

    def result(sa: float, sb: float) -> torch.Tensor:
        return suite.BETA * base + suite.ALPHA * (a * sa) @ (b * sb).t()

    want = result(suite.SCALE_A, suite.SCALE_B)
    bound = SCALED_ADDMM.atol * float(want.abs().max())
    for what, sa, sb in (("ignored", 1.0, 1.0), ("inverted", 1 / suite.SCALE_A, 1 / suite.SCALE_B)):
        off = float(((result(sa, sb) - want).abs() - SCALED_ADDMM.rtol * want.abs()).max())
        assert off > 10 * bound, f"scales {what}: off by {off:.3g}, within 10x the bound {bound:.3g}"
