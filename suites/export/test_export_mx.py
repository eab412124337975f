"""torch.export save/load of Microscaling (MX) formats (2.12: float8_e8m0fnu serialization).

MX modules keep the element payload and the shared block scales as buffers and dequantise in
forward. Round trips must be bit-exact (compared through a uint8 view) and keep every dtype.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest
import torch
from _support.refusals import EXPORT_MX_SAVE, refused
from _support.requires import skip_unsupported

BLOCK = 32
E8M0 = torch.float8_e8m0fnu


def _bits(t: torch.Tensor) -> torch.Tensor:
    """The raw bytes of a tensor: bit-exact comparison for any dtype, NaNs included."""
    t = t.detach().cpu().contiguous()
    return t.reshape(-1).view(torch.uint8) if t.numel() else t.reshape(-1).to(torch.uint8)


class CastToE8M0(torch.nn.Module):
    """The reproducer of pytorch#176621: an e8m0 dtype as an op argument."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.to(E8M0)


class MXFP8Linear(torch.nn.Module):
    """MXFP8: fp8 elements with one power-of-two e8m0 scale per block of 32."""

    EMAX: ClassVar[dict[torch.dtype, int]] = {torch.float8_e4m3fn: 8, torch.float8_e5m2: 15}

    def __init__(self, out_f: int, in_f: int, elem: torch.dtype, device: torch.device) -> None:
        super().__init__()
        w = torch.randn(out_f, in_f // BLOCK, BLOCK, device=device)
        amax = w.abs().amax(-1, keepdim=True).clamp_min(2.0**-126)
        scale = torch.exp2(torch.floor(torch.log2(amax)) - self.EMAX[elem])
        self.register_buffer("scale", scale.to(E8M0))
        fmax = torch.finfo(elem).max
        self.register_buffer("qweight", (w / scale).clamp(-fmax, fmax).to(elem))  # saturate, as OCP MX does

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.qweight.to(torch.float32) * self.scale.to(torch.float32)
        return x @ w.reshape(w.shape[0], -1).t()


class MXFP4Packed(torch.nn.Module):
    """MXFP4 as torchao stores it: two e2m1 codes per uint8 byte plus e8m0 block scales."""

    # e2m1 code -> value (sign bit 3, exponent bits 2..1, mantissa bit 0)
    LUT: ClassVar[list[float]] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
    LUT = LUT + [-v for v in LUT]

    def __init__(self, out_f: int, in_f: int, device: torch.device, payload_dtype: torch.dtype = torch.uint8) -> None:
        super().__init__()
        raw = torch.randint(0, 256, (out_f, in_f // 2), dtype=torch.uint8, device=device)
        self.register_buffer("packed", raw if payload_dtype == torch.uint8 else raw.view(payload_dtype))
        exps = torch.randint(-3, 4, (out_f, in_f // BLOCK, 1), device=device).float()
        self.register_buffer("scale", torch.exp2(exps).to(E8M0))
        self.register_buffer("lut", torch.tensor(self.LUT, device=device))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p = self.packed.view(torch.uint8).to(torch.int64)
        codes = torch.stack([p & 0xF, p >> 4], dim=-1).reshape(p.shape[0], -1)
        w = self.lut[codes].reshape(p.shape[0], -1, BLOCK) * self.scale.to(torch.float32)
        return x @ w.reshape(p.shape[0], -1).t()


def _roundtrip(mod: torch.nn.Module, args: tuple, path: Path, compat_env) -> None:
    ep = torch.export.export(mod, args, strict=False)
    try:
        torch.export.save(ep, str(path))
    except KeyError as e:  # before 2.12 the MX dtypes have no serialized name (the refusal table bounds it)
        refused(EXPORT_MX_SAVE, e, f"torch.export.save of MX dtypes on torch {compat_env.torch_base}")
    ep2 = torch.export.load(str(path))
    for name, before in ep.state_dict.items():
        after = ep2.state_dict[name]
        assert after.dtype == before.dtype, f"{name}: dtype {before.dtype} became {after.dtype} after load"
        assert torch.equal(_bits(after), _bits(before)), f"{name}: bits changed after save/load"
    for name, before in ep.constants.items():
        if isinstance(before, torch.Tensor):
            after = ep2.constants[name]
            assert after.dtype == before.dtype and torch.equal(_bits(after), _bits(before)), name
    outs = torch.utils._pytree.tree_leaves(ep.module()(*args))
    outs2 = torch.utils._pytree.tree_leaves(ep2.module()(*args))
    eager = torch.utils._pytree.tree_leaves(mod(*args))
    for o, o2, e in zip(outs, outs2, eager, strict=True):
        assert o2.dtype == o.dtype
        assert torch.equal(_bits(o2), _bits(o)), "loaded program output differs bitwise from the exported one"
        assert torch.equal(_bits(o), _bits(e)), "exported program output differs bitwise from eager"


def test_cast_to_e8m0_roundtrip(device: torch.device, compat_env, tmp_path: Path) -> None:
    """pytorch#176621: x.to(float8_e8m0fnu) inside the graph; e8m0 rounds to powers of two."""
    x = torch.tensor([[0.5, 1.0, 3.0], [1000.0, 0.25, 7.0]], device=device)
    assert torch.equal(x.to(E8M0).float().cpu(), torch.tensor([[0.5, 1.0, 4.0], [1024.0, 0.25, 8.0]]))
    _roundtrip(CastToE8M0(), (x,), tmp_path / "cast.pt2", compat_env)


@pytest.mark.parametrize("elem", [torch.float8_e4m3fn, torch.float8_e5m2], ids=["e4m3fn", "e5m2"])
def test_mxfp8_module_roundtrip(device: torch.device, compat_env, tmp_path: Path, elem: torch.dtype) -> None:
    mod = MXFP8Linear(16, 128, elem, device)
    assert mod.scale.dtype == E8M0 and mod.qweight.dtype == elem
    assert bool(torch.isfinite(mod.qweight.float()).all())
    _roundtrip(mod, (torch.randn(4, 128, device=device),), tmp_path / "mxfp8.pt2", compat_env)


def test_mxfp4_uint8_packed_roundtrip(device: torch.device, compat_env, tmp_path: Path) -> None:
    mod = MXFP4Packed(8, 64, device)
    _roundtrip(mod, (torch.randn(3, 64, device=device),), tmp_path / "mxfp4.pt2", compat_env)


def test_float4_e2m1fn_x2_dtype_roundtrip(device: torch.device, compat_env, tmp_path: Path) -> None:
    """The native packed-fp4 dtype as the payload (known issue: export serde lacks it in 2.13)."""
    if not hasattr(torch, "float4_e2m1fn_x2"):
        skip_unsupported(f"torch {compat_env.torch_base} has no torch.float4_e2m1fn_x2 dtype")
    mod = MXFP4Packed(8, 64, device, payload_dtype=torch.float4_e2m1fn_x2)
    assert mod.packed.dtype == torch.float4_e2m1fn_x2
    _roundtrip(mod, (torch.randn(3, 64, device=device),), tmp_path / "fp4x2.pt2", compat_env)
