"""Scale-free accuracy metrics for linalg tests, in units of n*eps of the real dtype."""

from __future__ import annotations

import torch

# worst metric allowed, in units of n*eps (CPU probe on 2.13.0: eigh <= 1.8, svd <= 2.7, lstsq <= 0.04)
THRESHOLD = {"cpu": 50.0, "accelerator": 100.0}

DTYPES = {
    "float32": torch.float32,
    "float64": torch.float64,
    "complex64": torch.complex64,
    "complex128": torch.complex128,
}


class EigenvectorsNotOrthonormal(AssertionError):
    """eigh's eigenvectors are not orthonormal (||V^H V - I|| beyond the limit): the failure pytorch#192483 reports,
    raised under its own name so that a known issue can expect exactly it and any other value regression fails."""


def eps(dtype: torch.dtype) -> float:
    return torch.finfo(dtype.to_real() if dtype.is_complex else dtype).eps


def random_matrix(shape: tuple[int, ...], dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    return torch.randn(*shape, dtype=dtype, device=device)


def hermitian(shape: tuple[int, ...], dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    x = random_matrix(shape, dtype, device)
    return x + x.mH


def _fro(t: torch.Tensor) -> torch.Tensor:
    return torch.linalg.matrix_norm(t)


def eye_like(n: int, ref: torch.Tensor) -> torch.Tensor:
    return torch.eye(n, dtype=ref.dtype, device=ref.device)


def eigh_metrics(a: torch.Tensor, w: torch.Tensor, v: torch.Tensor) -> dict[str, float]:
    """residual ||AV - V diag(w)||/||A||, orthogonality ||V^H V - I||, both / (n eps)."""
    n = a.shape[-1]
    unit = n * eps(a.dtype)
    res = _fro(a @ v - v * w.unsqueeze(-2).to(a.dtype)) / _fro(a).clamp_min(torch.finfo(w.dtype).tiny)
    orth = _fro(v.mH @ v - eye_like(n, v))
    return {"residual": float(res.max()) / unit, "orthogonality": float(orth.max()) / unit}


def svd_metrics(a: torch.Tensor, u: torch.Tensor, s: torch.Tensor, vh: torch.Tensor) -> dict[str, float]:
    """reconstruction ||U S Vh - A||/||A|| and orthogonality of U and Vh, / (max(m, n) eps)."""
    k = min(a.shape[-2:])
    unit = max(a.shape[-2:]) * eps(a.dtype)
    rec = _fro(u[..., :, :k] * s.unsqueeze(-2).to(a.dtype) @ vh[..., :k, :] - a) / _fro(a)
    ou = _fro(u.mH @ u - eye_like(u.shape[-1], u))
    ov = _fro(vh @ vh.mH - eye_like(vh.shape[-2], vh))
    return {
        "reconstruction": float(rec.max()) / unit,
        "orthogonality_u": float(ou.max()) / unit,
        "orthogonality_v": float(ov.max()) / unit,
    }


def lstsq_optimality(a: torch.Tensor, b: torch.Tensor, x: torch.Tensor) -> float:
    """Normal-equation optimality ||A^H (AX - B)|| / (||A||^2 ||X||) / (max(m, n) eps)."""
    unit = max(a.shape[-2:]) * eps(a.dtype)
    num = _fro(a.mH @ (a @ x - b))
    den = _fro(a) ** 2 * _fro(x).clamp_min(torch.finfo(num.dtype).tiny)
    return float((num / den).max()) / unit


def ascending(w: torch.Tensor) -> bool:
    return bool((w[..., 1:] >= w[..., :-1]).all())


def descending_nonnegative(s: torch.Tensor) -> bool:
    return bool((s[..., :-1] >= s[..., 1:]).all()) and bool((s >= 0).all())
