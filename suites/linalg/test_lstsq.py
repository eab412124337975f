"""torch.linalg.lstsq: optimality on full-rank input, drivers, rank-revealing drivers (LAPACK; CUDA has gels)."""

from __future__ import annotations

import pytest
import torch
from _support.linalg_metrics import DTYPES, THRESHOLD, lstsq_optimality, random_matrix
from _support.refusals import refused

DRIVER = "torch.linalg.lstsq:driver"  # a driver the device has not: its refusal is in _support/refusals.py

LAYOUTS = {"single": ((100, 40), 5), "batched": ((8, 64, 24), 3), "square-batched": ((6, 32, 32), 4)}
CASES = [pytest.param(d, lay, id=f"{d}-{lay}") for d in DTYPES for lay in LAYOUTS]


@pytest.mark.parametrize(("dtype_name", "layout"), CASES)
def test_lstsq_full_rank_optimal(device: torch.device, compat_env, dtype_name: str, layout: str) -> None:
    dtype = DTYPES[dtype_name]
    shape, nrhs = LAYOUTS[layout]
    a = random_matrix(shape, dtype, device)
    b = random_matrix((*shape[:-1], nrhs), dtype, device)
    x = torch.linalg.lstsq(a, b).solution  # default driver: gelsy on CPU, gels on CUDA
    assert x.shape == (*shape[:-2], shape[-1], nrhs) and x.dtype == dtype
    opt = lstsq_optimality(a, b, x)
    limit = THRESHOLD[compat_env.device_class]
    assert opt < limit, f"normal-equation optimality {opt:.3g} n*eps (limit {limit})"


LSTSQ_DRIVERS = ["gels", "gelsy", "gelsd", "gelss"]


@pytest.mark.parametrize("driver", LSTSQ_DRIVERS)
def test_lstsq_driver_full_rank(device: torch.device, compat_env, driver: str) -> None:
    """CPU offers four LAPACK drivers; CUDA only gels: its refusal of the others is [unsupported] (the claims cover
    gels there), any other error fails."""
    a = random_matrix((4, 80, 30), torch.float64, device)
    b = random_matrix((4, 80, 2), torch.float64, device)
    try:
        x = torch.linalg.lstsq(a, b, driver=driver).solution
    except RuntimeError as e:
        refused(DRIVER, e, f"lstsq(driver={driver!r}) on {compat_env.backend}")
    opt = lstsq_optimality(a, b, x)
    limit = THRESHOLD[compat_env.device_class]
    assert opt < limit, f"driver={driver}: optimality {opt:.3g} n*eps (limit {limit})"


@pytest.mark.parametrize("driver", ["gelsy", "gelsd", "gelss"])
def test_lstsq_rank_deficient_rank_revealing_driver(device: torch.device, compat_env, driver: str) -> None:
    """Rank-revealing drivers report the rank and return the minimum-norm solution (LAPACK); on CUDA the call is
    made and its refusal (gels only) is [unsupported] through the refusal table."""
    torch.manual_seed(1)
    left = torch.randn(3, 60, 4, dtype=torch.float64)
    a = left @ torch.randn(3, 4, 10, dtype=torch.float64)  # rank 4, 10 columns
    b = torch.randn(3, 60, 2, dtype=torch.float64)
    try:
        sol = torch.linalg.lstsq(a.to(device), b.to(device), driver=driver)
    except RuntimeError as e:
        refused(DRIVER, e, f"lstsq(driver={driver!r}) on rank-deficient input on {compat_env.backend}")
    assert sol.rank.tolist() == [4, 4, 4], f"rank reported {sol.rank.tolist()}"
    x_min_norm = torch.linalg.pinv(a) @ b
    torch.testing.assert_close(sol.solution.cpu(), x_min_norm, rtol=1e-8, atol=1e-9)
    if driver in ("gelsd", "gelss"):
        sv = sol.singular_values.cpu()
        assert sv.shape == (3, 10)
        assert bool((sv[:, 4:] < 1e-10 * sv[:, :1]).all()), f"singular values beyond the rank: {sv[:, 4:].tolist()}"
