"""PT2E quantization with the x86 Inductor quantizer: export, prepare, calibrate, convert, compile.

torch shipped this flow (``torch.ao.quantization.quantize_pt2e`` and
``torch.ao.quantization.quantizer.x86_inductor_quantizer``) until it moved to torchao in 2.11
(pytorch#169151). On a torch that still has it, it is tested from torch; on one that does not, that
test says ``[unsupported]`` with the release and the replacement, and the same flow is tested from
torchao when torchao is installed (``[dependency]`` otherwise). The quantized model is compiled with
Inductor (the x86 int8 lowering) and must stay within ``QUANTIZED_REL_ERROR`` of the float model.
"""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest
import torch
from _support.compiler import inductor_toolchain
from _support.env import get as compat_env
from _support.quant import (
    PT2E_REMOVED_IN,
    PT2E_REPLACEMENT,
    calibration_batches,
    eval_batch,
    float_model,
    rel_error,
    x86_engine,
)
from _support.refusals import PT2E_IN_TORCH, refused
from _support.requires import module, need, requires
from _support.scope import host_on
from _support.tolerances import QUANTIZED_REL_ERROR

pytestmark = [requires(x86_engine()), host_on("cuda", "xpu"), pytest.mark.timeout(300)]

IN_TORCH = ("torch.ao.quantization.quantize_pt2e", "torch.ao.quantization.quantizer.x86_inductor_quantizer")
IN_TORCHAO = ("torchao.quantization.pt2e.quantize_pt2e", "torchao.quantization.pt2e.quantizer.x86_inductor_quantizer")


def _pt2e_flow(flow: ModuleType, quantizer_mod: ModuleType) -> None:
    need(inductor_toolchain())
    model = float_model()
    x = eval_batch()
    expected = model(x)
    exported = torch.export.export(model, (x,)).module()
    quantizer = quantizer_mod.X86InductorQuantizer()
    quantizer.set_global(quantizer_mod.get_default_x86_inductor_quantization_config())
    prepared = flow.prepare_pt2e(exported, quantizer)
    for batch in calibration_batches():
        prepared(batch)
    converted = flow.convert_pt2e(prepared)
    targets = {str(n.target) for n in converted.graph.nodes if n.op == "call_function"}
    assert any("quantize_per_tensor" in t for t in targets), f"no quantize op in the converted graph: {targets}"
    err = rel_error(converted(x), expected)
    assert err < QUANTIZED_REL_ERROR, f"PT2E reference-quantized relative error {err:.4f}"
    torch._dynamo.reset()
    with torch.no_grad():
        compiled = torch.compile(converted, backend="inductor")
        err = rel_error(compiled(x), expected)
    assert err < QUANTIZED_REL_ERROR, f"PT2E x86 Inductor (int8) relative error {err:.4f} (bound {QUANTIZED_REL_ERROR})"


def test_pt2e_x86_inductor_quantizer_in_torch() -> None:
    try:
        flow, quantizer = (importlib.import_module(name) for name in IN_TORCH)
    except ModuleNotFoundError as e:  # removed in 2.11 (the refusal table's bound); before it, a regression: fails
        refused(
            PT2E_IN_TORCH,
            e,
            f"PT2E quantization and X86InductorQuantizer in torch {compat_env().torch_base} (removed in "
            f"{PT2E_REMOVED_IN}, pytorch#169151; replacement: {PT2E_REPLACEMENT})",
        )
    _pt2e_flow(flow, quantizer)


def test_pt2e_x86_inductor_quantizer_from_torchao() -> None:
    need(module("torchao", "pip install torchao"))
    flow, quantizer = (importlib.import_module(name) for name in IN_TORCHAO)
    _pt2e_flow(flow, quantizer)
