"""Quantization models, accuracy metric and gates.

Where the quantization APIs live moved across releases: the PT2E flow (``prepare_pt2e`` /
``convert_pt2e``) and ``X86InductorQuantizer`` were removed from torch in 2.11 (pytorch#169151) and
live on in torchao (``torchao.quantization.pt2e``); eager and FX post-training quantization
(``torch.ao.quantization``) still ship in 2.13, deprecated.
"""

from __future__ import annotations

import contextlib
import importlib
import warnings
from collections.abc import Iterator
from types import ModuleType

import torch
from torch import nn

from _support import env as _env
from _support.requires import UNSUPPORTED, Requirement

PT2E_REMOVED_IN = "2.11"
PT2E_REPLACEMENT = (
    "torchao.quantization.pt2e (prepare_pt2e/convert_pt2e from .quantize_pt2e, "
    "X86InductorQuantizer from .quantizer.x86_inductor_quantizer)"
)


class ConvNet(nn.Module):
    """conv -> ReLU -> flatten -> linear: the shape the x86 recipes fuse (conv+relu) and quantize."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.relu = nn.ReLU()
        self.fc = nn.Linear(8 * 14 * 14, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.relu(self.conv(x)).flatten(1))


def float_model() -> nn.Module:
    torch.manual_seed(0)
    return ConvNet().eval()


def calibration_batches(n: int = 8) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    return [torch.randn(4, 3, 16, 16, generator=g) for _ in range(n)]


def eval_batch() -> torch.Tensor:
    return torch.randn(4, 3, 16, 16, generator=torch.Generator().manual_seed(2))


def rel_error(actual: torch.Tensor, expected: torch.Tensor) -> float:
    """||actual - expected|| / ||expected|| (L2 over the whole output)."""
    return ((actual.float() - expected.float()).norm() / expected.float().norm()).item()


def x86_engine() -> Requirement:
    engines = list(torch.backends.quantized.supported_engines)
    return Requirement(
        "x86" in engines, UNSUPPORTED, f"the x86 quantization engine is not in this build's engines {engines}"
    )


def ao_quantization() -> tuple[ModuleType | None, Requirement]:
    """``torch.ao.quantization`` if this torch still ships it (imported with its deprecation hushed)."""
    e = _env.get()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            mod = importlib.import_module("torch.ao.quantization")
    except ImportError as err:
        return None, Requirement(
            False, UNSUPPORTED, f"torch {e.torch_base} has no torch.ao.quantization ({err}); use torchao.quantization"
        )
    return mod, Requirement(True, UNSUPPORTED, "")


@contextlib.contextmanager
def quantized_engine(name: str) -> Iterator[None]:
    previous = torch.backends.quantized.engine
    torch.backends.quantized.engine = name
    try:
        yield
    finally:
        torch.backends.quantized.engine = previous
