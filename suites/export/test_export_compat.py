"""What a deployment of ``torch.export`` relies on: AOTInductor packages, older files, other devices.

* an AOTInductor package (``aoti_compile_and_package``) built for the device under test from an exported program
  with a dynamic batch, loaded back (``aoti_load_package``) and run at two batch sizes against the float64 model;
* a ``.pt2`` that torch 2.12.1 saved (``previous_release/``: an LSTM and an MXFP8 projection with float8_e8m0fnu
  scales; ``make_pt2.py`` made it with the real 2.12.1 wheel) loaded by this release: every tensor's dtype and bytes
  (SHA-256) as saved, and its output equal to the float64 output the saving release recorded. ``torch.export.load``
  warns that saved files "may not be usable in newer versions": a release whose schema moved refuses in its own
  words ("Serialized schema version ... does not match"), which is ``[unsupported]``; anything else fails;
* a cross-device load: a program exported and saved on the CPU, loaded and moved to the accelerator with
  ``torch.export.passes.move_to_device_pass``, and one saved on the accelerator moved back to the CPU, each against
  float64 (``[hardware]`` without an accelerator).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import torch
from _support.compiler import inductor_toolchain
from _support.drills import exempt
from _support.refusals import refused
from _support.requires import accelerator, api, requires, torch_at_least
from torch.export import Dim

PREVIOUS = Path(__file__).resolve().parent / "previous_release" / "lstm_mxfp8-torch2.12.1.pt2"
LOAD_OLDER = "torch.export.load:older-release"
# a cheap wrapper build (the generated kernels keep their optimisation): AOTInductor's -O1 wrapper and precompiled
# headers cost most of the CPU package's 30 s here
AOTI_CONFIGS = {"aot_inductor.compile_wrapper_opt_level": "O0", "aot_inductor.precompile_headers": False}


class MLP(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.Linear(32, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).softmax(-1)


def _float64_twin(model: torch.nn.Module) -> torch.nn.Module:
    twin = MLP().double()
    twin.load_state_dict({k: v.detach().cpu().double() for k, v in model.state_dict().items()})
    return twin.eval()


def _sha256(t: torch.Tensor) -> str:
    return hashlib.sha256(bytes(t.detach().cpu().contiguous().reshape(-1).view(torch.uint8).tolist())).hexdigest()


def _tol(device: torch.device) -> dict[str, float]:
    return {"rtol": 1e-5, "atol": 1e-6} if device.type == "cpu" else {"rtol": 1e-4, "atol": 1e-5}


@requires(
    api("torch._inductor.aoti_compile_and_package"), api("torch._inductor.aoti_load_package"), inductor_toolchain()
)
@pytest.mark.timeout(600)
def test_aoti_package_built_and_loaded(device: torch.device, tmp_path: Path) -> None:
    model = MLP().to(device).eval()
    x = torch.randn(3, 16, device=device)
    ep = torch.export.export(model, (x,), dynamic_shapes=({0: Dim("batch", min=1, max=64)},))
    path = torch._inductor.aoti_compile_and_package(
        ep, package_path=str(tmp_path / "mlp.pt2"), inductor_configs=AOTI_CONFIGS
    )
    assert Path(path).is_file(), f"no package at {path}"
    loaded = torch._inductor.aoti_load_package(path)
    twin = _float64_twin(model)
    for batch in (3, 7):
        xb = torch.randn(batch, 16, device=device)
        out = loaded(xb)
        out = out[0] if isinstance(out, (list, tuple)) else out
        assert out.device.type == device.type and out.shape == (batch, 4), f"{out.device} {tuple(out.shape)}"
        with torch.no_grad(), exempt():
            want = twin(xb.cpu().double())
        torch.testing.assert_close(
            out.double().cpu(), want, **_tol(device), msg=lambda m, b=batch: f"AOTI package, batch {b}: {m}"
        )


@requires(torch_at_least("2.12", "loading a .pt2 that torch 2.12.1 saved (float8_e8m0fnu serialization)"))
def test_pt2_saved_by_the_previous_release_loads(device: torch.device, compat_env) -> None:
    extra = {"reference.json": ""}
    try:
        ep = torch.export.load(str(PREVIOUS), extra_files=extra)
    except Exception as e:  # SerializeError is private: the refusal table judges the class and the text
        refused(LOAD_OLDER, e, f"torch {compat_env.torch_base} loading {PREVIOUS.name}")
    meta = json.loads(extra["reference.json"])
    assert meta["torch"].startswith("2.12.1"), f"the artifact says it was saved by {meta['torch']}"
    tensors = {**ep.state_dict, **{k: v for k, v in ep.constants.items() if isinstance(v, torch.Tensor)}}
    assert set(tensors) == set(meta["tensors"]), f"tensors {sorted(tensors)}, saved {sorted(meta['tensors'])}"
    for name, saved in meta["tensors"].items():
        t = tensors[name]
        assert str(t.dtype) == saved["dtype"], f"{name}: saved as {saved['dtype']}, loaded as {t.dtype}"
        assert list(t.shape) == saved["shape"] and _sha256(t) == saved["sha256"], f"{name}: its bytes changed"
    x = torch.tensor(meta["input"])
    want = torch.tensor(meta["expected_float64"], dtype=torch.float64)
    module = ep.module().to(device)
    with torch.no_grad():
        out = module(x.to(device))
    torch.testing.assert_close(
        out.double().cpu(), want, **_tol(device), msg=lambda m: f"2.12.1's program run by {compat_env.torch_base}: {m}"
    )


@requires(api("torch.export.passes.move_to_device_pass"), accelerator("cuda", "xpu", what="a cross-device load"))
def test_cross_device_load(device: torch.device, tmp_path: Path) -> None:
    from torch.export.passes import move_to_device_pass

    model = MLP().eval()
    twin = _float64_twin(model)
    x = torch.randn(5, 16)
    with torch.no_grad(), exempt():
        want = twin(x.double())
    # saved on the CPU, run on the accelerator
    torch.export.save(torch.export.export(model, (x,)), str(tmp_path / "cpu.pt2"))
    on_device = move_to_device_pass(torch.export.load(str(tmp_path / "cpu.pt2")), device)
    assert all(t.device.type == device.type for t in on_device.state_dict.values()), "a weight stayed on the CPU"
    with torch.no_grad():
        out = on_device.module()(x.to(device))
    assert out.device.type == device.type, f"the moved program computed on {out.device}"
    torch.testing.assert_close(out.double().cpu(), want, **_tol(device), msg=lambda m: f"CPU program on {device}: {m}")
    # saved on the accelerator, run on the CPU
    dev_model = MLP().to(device).eval()
    dev_model.load_state_dict(model.state_dict())
    torch.export.save(torch.export.export(dev_model, (x.to(device),)), str(tmp_path / "device.pt2"))
    on_cpu = move_to_device_pass(torch.export.load(str(tmp_path / "device.pt2")), "cpu")
    assert all(t.device.type == "cpu" for t in on_cpu.state_dict.values()), "a weight stayed on the accelerator"
    with torch.no_grad():
        back = on_cpu.module()(x)
    cpu_tol = _tol(torch.device("cpu"))
    torch.testing.assert_close(back.double(), want, **cpu_tol, msg=lambda m: f"{device} program on the CPU: {m}")
