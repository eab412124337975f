"""Gradients of eigh, svd and lstsq: autograd against finite differences (``torch.autograd.gradcheck``) in float64.

``gradcheck`` perturbs each input entry, differentiates numerically and compares with the analytical gradient the
device computed; the functions are the gauge-invariant ones PyTorch documents as differentiable: eigenvalues and
the eigenvectors' magnitudes (distinct eigenvalues), singular values and ``|U|``, ``|Vh|`` (distinct singular
values), the least-squares solution of a full-rank system. The forward values are also held to a float64 CPU
reference, so a drifting forward cannot pass on a self-consistent gradient.
"""

from __future__ import annotations

import pytest
import torch
from _support.drills import exempt

# gradcheck's float64 defaults (eps 1e-6, atol 1e-5, rtol 1e-3) are PyTorch's own for linalg in test_linalg.py
GRADCHECK = {"eps": 1e-6, "atol": 1e-5, "rtol": 1e-3}


def _symmetric(x: torch.Tensor) -> torch.Tensor:
    return x + x.mT


def _spread(n: int, batch: int, device: torch.device) -> torch.Tensor:
    """A symmetric batch with well-separated eigenvalues (1..n): gradients of eigenvectors stay well-conditioned."""
    with exempt():  # building the input on the CPU, not the op under test (the watch flags it on a GPU)
        q, _ = torch.linalg.qr(torch.randn(batch, n, n, dtype=torch.float64))
    w = torch.arange(1, n + 1, dtype=torch.float64)
    return ((q * w) @ q.mT / 2).to(device)  # _symmetric doubles it back


def test_eigh_gradient_matches_finite_differences(device: torch.device) -> None:
    a = _spread(5, 2, device).requires_grad_(True)

    def eigh(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        w, v = torch.linalg.eigh(_symmetric(x))
        return w, v.abs()  # |v| is invariant to each eigenvector's sign

    assert torch.autograd.gradcheck(eigh, (a,), **GRADCHECK)
    w, _ = eigh(a)
    with exempt():
        ref = torch.linalg.eigvalsh(_symmetric(a.detach().cpu()))
    torch.testing.assert_close(w.detach().cpu(), ref, rtol=1e-10, atol=1e-10, msg=lambda m: f"eigenvalues: {m}")


def test_svd_gradient_matches_finite_differences(device: torch.device) -> None:
    base = torch.randn(2, 6, 4, dtype=torch.float64)
    with exempt():  # the input's singular vectors, made on the CPU: not the op under test
        u0, _, vh0 = torch.linalg.svd(base, full_matrices=False)
    a = (u0 * torch.tensor([4.0, 3.0, 2.0, 1.0], dtype=torch.float64) @ vh0).to(device).requires_grad_(True)

    def svd(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        u, s, vh = torch.linalg.svd(x, full_matrices=False)
        return s, u.abs(), vh.abs()  # magnitudes: invariant to the sign shared by u_i and v_i

    assert torch.autograd.gradcheck(svd, (a,), **GRADCHECK)
    s, _, _ = svd(a)
    torch.testing.assert_close(
        s.detach().cpu(), torch.tensor([[4.0, 3.0, 2.0, 1.0]] * 2, dtype=torch.float64), rtol=1e-10, atol=1e-10
    )


def test_lstsq_gradient_matches_finite_differences(device: torch.device) -> None:
    a = torch.randn(2, 7, 4, dtype=torch.float64, device=device).requires_grad_(True)
    b = torch.randn(2, 7, 3, dtype=torch.float64, device=device).requires_grad_(True)

    def lstsq(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.linalg.lstsq(x, y).solution  # full rank: gels on CUDA, gelsy on CPU

    assert torch.autograd.gradcheck(lstsq, (a, b), **GRADCHECK)
    with exempt():
        ref = torch.linalg.pinv(a.detach().cpu()) @ b.detach().cpu()
    torch.testing.assert_close(lstsq(a, b).detach().cpu(), ref, rtol=1e-9, atol=1e-10, msg=lambda m: f"solution: {m}")


@pytest.mark.parametrize("op", ["eigh", "svd"])
def test_value_gradient_is_defined_on_a_repeated_spectrum(device: torch.device, op: str) -> None:
    """The documented limit: eigenvector (singular vector) gradients are undefined for repeated values; the
    eigenvalue (singular value) gradient is still defined and finite (the gradient of the trace, the identity)."""
    a = torch.eye(4, dtype=torch.float64, device=device).requires_grad_(True)
    values = torch.linalg.eigh(a).eigenvalues if op == "eigh" else torch.linalg.svd(a).S
    values.sum().backward()
    torch.testing.assert_close(a.grad.cpu(), torch.eye(4, dtype=torch.float64), rtol=1e-12, atol=1e-12)
