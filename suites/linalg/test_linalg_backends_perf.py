"""The release notes' speed-ups measured as they were claimed: cuSOLVER/cuBLAS against MAGMA, on the same build.

2.11 and 2.12 say batched ``svd`` (2x-400x), ``lstsq`` (1.7x-620x) and ``eigh`` (up to 100x) got faster when
cuSOLVER/cuBLAS replaced MAGMA. Where the build still has MAGMA (``preferred_linalg_library("magma")`` accepted, as
on 2.11.0+cu130 with a deprecation warning), both libraries run the same batch and the ratio is recorded next to the
claim, with each result held to its accuracy metric (a fast wrong answer fails); a build without MAGMA refuses in its
own words (``[unsupported]``: the removal itself). Figures only: nothing about speed is asserted. Needs a CUDA GPU.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from _support.linalg_metrics import THRESHOLD, eigh_metrics, lstsq_optimality, svd_metrics
from _support.perf import best_time, record_perf
from _support.refusals import refused
from _support.requires import accelerator, need

LIBRARY = "torch.backends.cuda.preferred_linalg_library"


def _eigh(device: torch.device) -> tuple[Callable[[], object], Callable[[object], float]]:
    a = torch.randn(64, 100, 100, device=device)
    a = a + a.mT
    return (lambda: torch.linalg.eigh(a)), (lambda out: max(eigh_metrics(a, *out).values()))


def _svd(device: torch.device) -> tuple[Callable[[], object], Callable[[object], float]]:
    a = torch.randn(16, 256, 256, device=device)
    return (lambda: torch.linalg.svd(a)), (lambda out: max(svd_metrics(a, *out).values()))


def _lstsq(device: torch.device) -> tuple[Callable[[], object], Callable[[object], float]]:
    a, b = torch.randn(16, 256, 256, device=device), torch.randn(16, 256, 16, device=device)
    return (lambda: torch.linalg.lstsq(a, b)), (lambda out: lstsq_optimality(a, b, out.solution))


CASES = {
    "eigh": (_eigh, "(64,100,100)", "2.12: batched linalg.eigh on CUDA up to 100x faster"),
    "svd": (_svd, "(16,256,256)", "2.11: linalg.svd 2x-400x faster on CUDA without MAGMA"),
    "lstsq": (_lstsq, "(16,256,256)", "2.11: linalg.lstsq 1.7x-620x faster on CUDA without MAGMA"),
}


@pytest.mark.perf
@pytest.mark.measurement
@pytest.mark.timeout(600)
@pytest.mark.parametrize("op", list(CASES))
def test_cusolver_vs_magma(device: torch.device, compat_env, record_property, op: str) -> None:
    need(accelerator("cuda", what="cuSOLVER against MAGMA"))
    build, shape, claim = CASES[op]
    run, error = build(device)
    prefer = torch.backends.cuda.preferred_linalg_library
    before = prefer()
    times, errors = {}, {}
    try:
        for library in ("magma", "cusolver"):
            try:
                prefer(library)
            except RuntimeError as e:
                refused(f"{LIBRARY}:{library}", e, f"preferred_linalg_library({library!r}) on {compat_env.backend}")
            errors[library] = error(run())
            times[library] = best_time(run, device, repeats=3)
    finally:
        prefer(before)
    limit = THRESHOLD["accelerator"]
    assert all(e < limit for e in errors.values()), f"{op}: accuracy in n*eps {errors} (limit {limit})"
    record_perf(
        record_property,
        f"{op}_cusolver_vs_magma",
        times["magma"] / times["cusolver"],
        "x",
        label=f"{op}: cuSOLVER vs MAGMA (same build)",
        shape=shape,
        dtype="float32",
        note="MAGMA time / cuSOLVER time, best of 3, preferred_linalg_library switched on the same build",
        claim=claim,
    )
