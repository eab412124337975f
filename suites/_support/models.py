"""Small real modules the suites compile, autocast and train: an MLP, a conv block, a transformer block.

Sizes are small enough that CPU compile and run stay in seconds, large enough that every layer
does real work (no size-1 dimensions, which compilers specialise).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


class MLP(nn.Module):
    def __init__(self, d_in: int = 32, hidden: int = 64, d_out: int = 8) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.GELU(), nn.Linear(hidden, hidden), nn.Tanh())
        self.head = nn.Linear(hidden, d_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.net(x))


class ConvBlock(nn.Module):
    """conv -> batch norm -> ReLU -> conv -> global average pool -> linear."""

    def __init__(self, channels: int = 3, width: int = 8, classes: int = 4) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, width, 3, padding=1)
        self.bn = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1)
        self.fc = nn.Linear(width, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.bn(self.conv1(x)))
        x = F.relu(self.conv2(x))
        return self.fc(x.mean(dim=(2, 3)))


class TransformerBlock(nn.Module):
    """Pre-norm block: x + attention(layer_norm(x)), then x + MLP(layer_norm(x)); causal SDPA."""

    def __init__(self, dim: int = 64, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


@dataclass(frozen=True)
class ModelCase:
    """A module factory and the shape of one input batch."""

    make: Callable[[], nn.Module]
    input_shape: tuple[int, ...]

    def build(self, device: torch.device, dtype: torch.dtype = torch.float32) -> tuple[nn.Module, torch.Tensor]:
        """A freshly seeded module and input on ``device`` in ``dtype`` (the same every call)."""
        gen = torch.Generator().manual_seed(1234)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(1234)
            model = self.make()
        x = torch.randn(self.input_shape, generator=gen)
        return model.to(device=device, dtype=dtype), x.to(device=device, dtype=dtype)


MODELS: dict[str, ModelCase] = {
    "mlp": ModelCase(MLP, (16, 32)),
    "conv": ModelCase(ConvBlock, (4, 3, 16, 16)),
    "transformer": ModelCase(TransformerBlock, (2, 16, 64)),
}
