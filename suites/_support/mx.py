"""Microscaling (MX) operands for ``scaled_mm`` and their exact float64 reference.

An MX tensor is a payload of low-precision elements plus one power-of-two scale (``float8_e8m0fnu``) per
block of 32 consecutive elements along the reduction dimension (OCP MX v1.0): MXFP8 has e4m3/e5m2
elements, MXFP4 has e2m1 elements packed two per byte (``float4_e2m1fn_x2``, element 2i in the low
nibble). Dequantised values are exact in float64, so the reference matmul is exact up to its sum.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

BLOCK = 32
E8M0 = torch.float8_e8m0fnu
# e2m1 code -> value: sign bit 3, exponent bits 2..1, mantissa bit 0
E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
E2M1 = E2M1 + [-v for v in E2M1]


@dataclass(frozen=True)
class MXOperand:
    elements: torch.Tensor  # (rows, K) fp8, or (rows, K // 2) float4_e2m1fn_x2
    scales: torch.Tensor  # (rows, K // 32) float8_e8m0fnu
    values: torch.Tensor  # (rows, K) float64: what the operand stands for


def _scales(rows: int, k: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    exps = torch.randint(-3, 4, (rows, k // BLOCK), generator=gen).double()
    scale = torch.exp2(exps)
    return scale.to(torch.float32).to(E8M0), scale.repeat_interleave(BLOCK, dim=1)


def mxfp8(rows: int, k: int, elem: torch.dtype, gen: torch.Generator) -> MXOperand:
    elements = torch.randn(rows, k, generator=gen).clamp(-6.0, 6.0).to(elem)
    scales, per_element = _scales(rows, k, gen)
    return MXOperand(elements, scales, elements.double() * per_element)


def mxfp4(rows: int, k: int, gen: torch.Generator) -> MXOperand:
    codes = torch.randint(0, 16, (rows, k), generator=gen, dtype=torch.uint8)
    packed = codes[:, 0::2] | (codes[:, 1::2] << 4)
    scales, per_element = _scales(rows, k, gen)
    values = torch.tensor(E2M1, dtype=torch.float64)[codes.long()] * per_element
    return MXOperand(packed.view(torch.float4_e2m1fn_x2), scales, values)


def swizzle_32_4_4(scales: torch.Tensor) -> torch.Tensor:
    """Scales in the 32x4x4 tiled layout (``SwizzleType.SWIZZLE_32_4_4``), flattened.

    The (rows, cols) matrix is padded to 128-row, 4-column tiles; each tile is 512 bytes in which row
    ``32 * i + j`` and column ``c`` sit at byte ``16 * j + 4 * i + c``; tiles follow row-block by row-block.
    """
    raw = scales.view(torch.uint8)
    rows, cols = raw.shape
    row_blocks, col_blocks = -(-rows // 128), -(-cols // 4)
    padded = torch.zeros(row_blocks * 128, col_blocks * 4, dtype=torch.uint8)
    padded[:rows, :cols] = raw
    tiles = padded.view(row_blocks, 4, 32, col_blocks, 4).permute(0, 3, 2, 1, 4)  # (rb, cb, j, i, c)
    return tiles.reshape(-1).view(E8M0)
