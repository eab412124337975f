"""``F.linear_cross_entropy`` and ``nn.LinearCrossEntropyLoss`` (2.13).

Upstream's words (the 2.13 docstring): "Compute the cross entropy loss between inputs, transformed linearly,
and target", equivalent to ``cross_entropy(linear(input, linear_weight), target, **kwargs)``; with
``options=LinearCrossEntropyOptions()`` a chunked implementation "processes the batch dimension in pieces, so
the full (num_batches, num_classes) logits tensor is never materialized". Both paths, on the probed device,
against the float64 reference (linear then cross_entropy), for the loss and the gradients of input, weight
and bias; the chunked path must really run (it falls back to the reference path with a warning when a
configuration is outside what it supports).
"""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn.functional as F
from _support.requires import api, requires
from _support.tolerances import LINEAR_CROSS_ENTROPY

BATCH, IN, CLASSES = 64, 32, 1000

pytestmark = requires(
    api("torch.nn.functional.linear_cross_entropy", since="2.13"),
    api("torch.nn.LinearCrossEntropyLoss", since="2.13"),
    api("torch.nn.LinearCrossEntropyOptions", since="2.13"),
)


def _inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(BATCH, IN, generator=gen)
    weight = torch.randn(CLASSES, IN, generator=gen) * 0.1
    bias = torch.randn(CLASSES, generator=gen) * 0.1
    target = torch.randint(0, CLASSES, (BATCH,), generator=gen)
    target[::7] = -100  # ignored rows: the default ignore_index for class indices
    return x, weight, bias, target


def _reference(x, weight, bias, target, **kwargs) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """The loss and the gradients of (input, weight, bias) in float64, on the CPU."""
    leaves = [t.detach().double().requires_grad_() for t in (x, weight, bias)]
    loss = F.cross_entropy(F.linear(*leaves), target, **kwargs)
    loss.sum().backward()
    return loss.detach(), [leaf.grad for leaf in leaves]


def _close(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    torch.testing.assert_close(
        got.detach().double().cpu(), want, **LINEAR_CROSS_ENTROPY.kwargs(), msg=lambda m: f"{what}: {m}"
    )


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("path", ["reference", "chunked"])
def test_linear_cross_entropy_matches_linear_then_cross_entropy(path: str, reduction: str, device) -> None:
    x, weight, bias, target = _inputs()
    leaves = [t.to(device).requires_grad_() for t in (x, weight, bias)]
    options = torch.nn.LinearCrossEntropyOptions(batch_chunk_size=16) if path == "chunked" else None
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        loss = F.linear_cross_entropy(
            leaves[0], leaves[1], target.to(device), linear_bias=leaves[2], reduction=reduction, options=options
        )
    fell_back = [str(w.message) for w in seen if "ignored" in str(w.message)]
    assert not fell_back, f"the {path} path fell back to the reference implementation: {fell_back}"
    loss.sum().backward()
    want, grads = _reference(x, weight, bias, target, reduction=reduction)
    where = f"{path} linear_cross_entropy ({reduction}) on {device}"
    _close(loss, want, f"{where}: loss vs float64 linear + cross_entropy")
    for name, leaf, grad in zip(("input", "weight", "bias"), leaves, grads, strict=True):
        _close(leaf.grad, grad, f"{where}: d loss / d {name} vs float64")


def test_label_smoothing_matches_cross_entropy(device) -> None:
    x, weight, bias, target = _inputs()
    loss = F.linear_cross_entropy(
        x.to(device), weight.to(device), target.to(device), linear_bias=bias.to(device), label_smoothing=0.1
    )
    want, _ = _reference(x, weight, bias, target, label_smoothing=0.1)
    _close(loss, want, f"linear_cross_entropy(label_smoothing=0.1) on {device} vs float64")


def test_linear_cross_entropy_loss_module(device) -> None:
    """The module owns the projection (``self.linear``) and computes the same loss from it."""
    x, _, _, target = _inputs()
    torch.manual_seed(0)
    module = torch.nn.LinearCrossEntropyLoss(IN, CLASSES, bias=True).to(device)
    assert tuple(module.linear.weight.shape) == (CLASSES, IN) and tuple(module.linear.bias.shape) == (CLASSES,)
    loss = module(x.to(device), target.to(device))
    want, _ = _reference(x, module.linear.weight.cpu(), module.linear.bias.cpu(), target)
    _close(loss, want, f"LinearCrossEntropyLoss on {device} vs float64 linear + cross_entropy of its own weights")
