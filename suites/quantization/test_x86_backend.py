"""The x86 quantization backend (2.0) through the flows torch itself still ships.

Post-training static quantization in eager mode (fuse conv+ReLU, prepare, calibrate, convert) and in
FX graph mode (``prepare_fx`` / ``convert_fx`` with the x86 qconfig mapping), and dynamic quantization
of linear layers, each with the ``x86`` engine: the quantized modules must be the quantized kernels
(not the float ones), and the output within ``QUANTIZED_REL_ERROR`` (relative L2) of the float model.
These are CPU kernels: the feature itself on a CPU build, host-side on an accelerator build.
"""

from __future__ import annotations

import copy
import warnings

import pytest
import torch
from _support.quant import (
    ao_quantization,
    calibration_batches,
    eval_batch,
    float_model,
    quantized_engine,
    rel_error,
    x86_engine,
)
from _support.requires import need, requires
from _support.scope import host_on
from _support.tolerances import QUANTIZED_REL_ERROR
from torch import nn

pytestmark = [requires(x86_engine()), host_on("cuda", "xpu")]


@pytest.fixture
def tq():
    mod, req = ao_quantization()
    need(req)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # deprecated since 2.10, still shipped
        warnings.filterwarnings("ignore", message=".*quint8.*|.*qint8.*|.*qint32.*", category=UserWarning)
        with quantized_engine("x86"):
            yield mod


class _Stubbed(nn.Module):
    """Eager-mode quantization needs explicit quant/dequant boundaries."""

    def __init__(self, tq, inner: nn.Module) -> None:
        super().__init__()
        self.quant, self.inner, self.dequant = tq.QuantStub(), inner, tq.DeQuantStub()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dequant(self.inner(self.quant(x)))


def test_eager_static_ptq(tq) -> None:
    ref_model = float_model()
    x = eval_batch()
    expected = ref_model(x)
    model = _Stubbed(tq, copy.deepcopy(ref_model)).eval()
    model.qconfig = tq.get_default_qconfig("x86")
    tq.fuse_modules(model.inner, [["conv", "relu"]], inplace=True)
    tq.prepare(model, inplace=True)
    for batch in calibration_batches():
        model(batch)
    tq.convert(model, inplace=True)
    assert type(model.inner.conv).__module__.startswith("torch.ao.nn.intrinsic.quantized"), type(model.inner.conv)
    assert type(model.inner.conv).__name__ == "ConvReLU2d"
    assert type(model.inner.fc).__module__.startswith("torch.ao.nn.quantized"), type(model.inner.fc)
    err = rel_error(model(x), expected)
    assert err < QUANTIZED_REL_ERROR, f"eager x86 PTQ relative error {err:.4f} (bound {QUANTIZED_REL_ERROR})"


def test_fx_static_ptq(tq) -> None:
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

    model = float_model()
    x = eval_batch()
    expected = model(x)
    prepared = prepare_fx(copy.deepcopy(model), tq.get_default_qconfig_mapping("x86"), example_inputs=(x,))
    for batch in calibration_batches():
        prepared(batch)
    quantized = convert_fx(prepared)
    targets = {str(n.target) for n in quantized.graph.nodes if n.op == "call_function"}
    assert any("quantize_per_tensor" in t for t in targets), f"no quantize op in the converted graph: {targets}"
    modules = {type(m).__module__ for m in quantized.modules()}
    assert any(m.startswith("torch.ao.nn.intrinsic.quantized") for m in modules), modules
    err = rel_error(quantized(x), expected)
    assert err < QUANTIZED_REL_ERROR, f"FX x86 PTQ relative error {err:.4f} (bound {QUANTIZED_REL_ERROR})"


def test_dynamic_quantization_of_linear(tq) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 8)).eval()
    x = torch.randn(16, 64)
    expected = model(x)
    quantized = tq.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)
    assert type(quantized[0]).__module__ == "torch.ao.nn.quantized.dynamic.modules.linear", type(quantized[0])
    err = rel_error(quantized(x), expected)
    assert err < QUANTIZED_REL_ERROR, f"dynamic quantization relative error {err:.4f} (bound {QUANTIZED_REL_ERROR})"
