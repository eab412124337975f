"""2:4 mask generation and the packed (CUTLASS) metadata format: pure PyTorch, runs on every backend."""

from __future__ import annotations

import itertools

import pytest
import torch

# The 2:4 mask and packed-metadata format are host-side logic; the kernels are in test_semi_structured.py.
pytestmark = pytest.mark.host

PAIRS = list(itertools.combinations(range(4), 2))  # the 6 ways to keep 2 of 4


def _pack():
    from torch.sparse._semi_structured_conversions import (
        sparse_semi_structured_from_dense_cutlass,
        sparse_semi_structured_to_dense_cutlass,
    )

    return sparse_semi_structured_from_dense_cutlass, sparse_semi_structured_to_dense_cutlass


def nibble(keep: tuple[int, int]) -> int:
    """Metadata of one group of 4: the two kept indices, 2 bits each, lowest first."""
    i, j = keep
    return i | (j << 2)


def random_24(rows: int, cols: int, dtype: torch.dtype, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """A dense matrix with exactly 2 non-zeros in every group of 4, and the kept-pair index per group."""
    choice = torch.randint(0, len(PAIRS), (rows, cols // 4), generator=gen)
    mask = torch.zeros(rows, cols // 4, 4, dtype=torch.bool)
    for k, (i, j) in enumerate(PAIRS):
        sel = choice == k
        mask[..., i] |= sel
        mask[..., j] |= sel
    values = torch.randint(1, 8, (rows, cols), generator=gen) * torch.where(
        torch.rand(rows, cols, generator=gen) < 0.5, -1, 1
    )
    return values.to(dtype) * mask.reshape(rows, cols), choice


def magnitude_24_mask(w: torch.Tensor) -> torch.Tensor:
    """Reference 2:4 mask: keep the two largest magnitudes of every group of 4 along the rows."""
    groups = w.abs().reshape(-1, 4)
    keep = groups.topk(2, dim=-1).indices
    mask = torch.zeros_like(groups, dtype=torch.bool).scatter_(-1, keep, True)
    return mask.reshape(w.shape)


def test_weight_norm_sparsifier_makes_a_24_mask() -> None:
    from torch.ao.pruning import WeightNormSparsifier

    lin = torch.nn.Linear(128, 64)
    with torch.no_grad():  # distinct magnitudes so that the top-2 choice is unique
        lin.weight.copy_(torch.randperm(64 * 128).reshape(64, 128).float().add(1) * torch.sign(torch.randn(64, 128)))
    original = lin.weight.detach().clone()
    sp = WeightNormSparsifier(sparsity_level=1.0, sparse_block_shape=(1, 4), zeros_per_block=2)
    sp.prepare(torch.nn.Sequential(lin), [{"tensor_fqn": "0.weight"}])
    sp.step()
    sp.squash_mask()
    w = lin.weight.detach()
    nonzeros = (w.reshape(-1, 4) != 0).sum(-1)
    assert bool((nonzeros == 2).all()), f"groups with !=2 non-zeros: {int((nonzeros != 2).sum())}"
    expected = magnitude_24_mask(original)
    assert torch.equal(w != 0, expected), "sparsifier did not keep the two largest magnitudes per group"
    assert torch.equal(w[expected], original[expected]), "kept weights were modified"


@pytest.mark.parametrize("keep", PAIRS, ids=[f"keep{i}{j}" for i, j in PAIRS])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.int8], ids=["float16", "bfloat16", "int8"])
def test_metadata_encodes_kept_indices(dtype: torch.dtype, keep: tuple[int, int]) -> None:
    """A uniform pattern makes the metadata independent of CUTLASS's reordering: every word is the nibble repeated."""
    pack, unpack = _pack()
    rows, cols = 32, 128
    pattern = torch.zeros(4, dtype=torch.bool)
    pattern[list(keep)] = True
    dense = torch.randint(1, 5, (rows, cols)).to(dtype) * pattern.tile((rows, cols // 4))
    values, meta = pack(dense)
    bits = 16 if dtype != torch.int8 else 32
    assert meta.dtype == (torch.int16 if bits == 16 else torch.int32)
    assert values.shape == (rows, cols // 2) and meta.shape == (rows, cols // (4 * bits // 4))
    word = sum(nibble(keep) << (4 * k) for k in range(bits // 4))
    mask = (1 << bits) - 1
    got = {int(v) & mask for v in meta.flatten().tolist()}
    assert got == {word}, f"metadata words {sorted(hex(g) for g in got)} != {hex(word)}"
    assert torch.equal(values, dense[dense != 0].reshape(rows, cols // 2))
    assert torch.equal(unpack(values, meta), dense)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.int8], ids=["float16", "bfloat16", "int8"])
def test_pack_random_24_roundtrip_and_metadata_multiset(dtype: torch.dtype) -> None:
    """Mixed patterns: exact round trip, row-major values, and the metadata words are those of each row's
    16-element (32 for int8) chunks, up to CUTLASS's interleaved placement."""
    pack, unpack = _pack()
    gen = torch.Generator().manual_seed(7)
    rows, cols = 64, 256
    dense, choice = random_24(rows, cols, dtype, gen)
    values, meta = pack(dense)
    assert torch.equal(unpack(values, meta), dense)
    assert torch.equal(values, dense[dense != 0].reshape(rows, cols // 2))
    bits = 16 if dtype != torch.int8 else 32
    per_word = bits // 4
    nibbles = torch.tensor([nibble(p) for p in PAIRS])[choice]  # (rows, cols/4)
    shifts = torch.tensor([4 * k for k in range(per_word)])
    expected = (nibbles.reshape(rows, -1, per_word) << shifts).sum(-1)
    mask = (1 << bits) - 1
    got = sorted(int(v) & mask for v in meta.flatten().tolist())
    assert got == sorted(int(v) for v in expected.flatten().tolist())
