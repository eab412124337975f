"""torch.linalg.lstsq: optimality on full-rank input, drivers, and rank-revealing drivers on CPU."""

from __future__ import annotations

import pytest
import torch
from _support.linalg_metrics import DTYPES, THRESHOLD, lstsq_optimality, random_matrix
from _support.requires import skip_unsupported

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
    """CPU offers four LAPACK drivers; CUDA only gels and refuses the others."""
    a = random_matrix((4, 80, 30), torch.float64, device)
    b = random_matrix((4, 80, 2), torch.float64, device)
    if compat_env.accelerator == "cuda" and driver != "gels":
        with pytest.raises(RuntimeError, match="driver"):
            torch.linalg.lstsq(a, b, driver=driver)
        return
    x = torch.linalg.lstsq(a, b, driver=driver).solution  # no refusal is known off CPU and CUDA: an error fails
    opt = lstsq_optimality(a, b, x)
    limit = THRESHOLD[compat_env.device_class]
    assert opt < limit, f"driver={driver}: optimality {opt:.3g} n*eps (limit {limit})"


@pytest.mark.parametrize("driver", ["gelsy", "gelsd", "gelss"])
def test_lstsq_rank_deficient_rank_revealing_driver(device: torch.device, driver: str) -> None:
    """Rank-revealing drivers report the rank and return the minimum-norm solution (CPU/LAPACK only)."""
    if device.type != "cpu":
        skip_unsupported(
            f"lstsq driver {driver!r} is LAPACK-only; on {device.type} the only driver is gels, which assumes full rank"
        )
    torch.manual_seed(1)
    left = torch.randn(3, 60, 4, dtype=torch.float64)
    a = left @ torch.randn(3, 4, 10, dtype=torch.float64)  # rank 4, 10 columns
    b = torch.randn(3, 60, 2, dtype=torch.float64)
    sol = torch.linalg.lstsq(a, b, driver=driver)
    assert sol.rank.tolist() == [4, 4, 4], f"rank reported {sol.rank.tolist()}"
    x_min_norm = torch.linalg.pinv(a) @ b
    torch.testing.assert_close(sol.solution, x_min_norm, rtol=1e-8, atol=1e-9)
    if driver in ("gelsd", "gelss"):
        assert sol.singular_values.shape == (3, 10)
        assert bool((sol.singular_values[:, 4:] < 1e-10 * sol.singular_values[:, :1]).all())
