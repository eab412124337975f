"""Batched linalg against a Python loop over the batch: the in-version proxy for the release-note speedups.

The release notes compare MAGMA against cuSOLVER on the build *before* the change, which cannot be
reproduced inside one torch version. What can: the batched call versus a Python loop of single-matrix
calls. The ratio is recorded as ``perf.<op>_batched_vs_loop``. On CPU nothing is asserted about speed
(shapes are reduced to keep the suite fast; the shape used is recorded), so there the test is a
*measurement*: shown as figures, never counted as a pass. On accelerators the release-note shapes are
used and a conservative floor is asserted (batched >= 0.5x the loop), so there it keeps backend scope.
No absolute time is asserted anywhere.
"""

from __future__ import annotations

import pytest
import torch
from _support.perf import best_time, record_perf
from _support.scope import measurement_on

ACCELERATOR_FLOOR = 0.5


def _eigh_input(shape: tuple[int, ...], device: torch.device) -> tuple[torch.Tensor, ...]:
    q, _ = torch.linalg.qr(torch.randn(*shape, device=device))  # the input of pytorch#174674
    return (q + q.mH,)


def _square(shape: tuple[int, ...], device: torch.device) -> tuple[torch.Tensor, ...]:
    return (torch.rand(*shape, device=device),)


def _lstsq_input(shape: tuple[int, ...], device: torch.device) -> tuple[torch.Tensor, ...]:
    return torch.rand(*shape, device=device), torch.rand(*shape, device=device)


CASES = {
    # op: (fn, input builder, release-note shape (accelerators), reduced CPU shape, release-note claim, method)
    "eigh": (
        lambda a: torch.linalg.eigh(a),
        _eigh_input,
        (500, 100, 100),
        (48, 100, 100),
        "2.12: batched linalg.eigh on CUDA up to 100x faster",
        "pytorch#174674 input; the claim compares cuSOLVER syevj_batched with the 2.11 heuristic",
    ),
    "svd": (
        lambda a: torch.linalg.svd(a),
        _square,
        (64, 512, 512),
        (16, 96, 96),
        "2.11: linalg.svd 2x-400x faster on CUDA without MAGMA",
        "the claim is the min-max over batches (),(16,),(64,) x sizes 16..2048 against MAGMA",
    ),
    "lstsq": (
        lambda a, b: torch.linalg.lstsq(a, b),
        _lstsq_input,
        (64, 512, 512),
        (16, 128, 128),
        "2.11: linalg.lstsq 1.7x-620x faster on CUDA without MAGMA",
        "the claim compares cuSOLVER/cuBLAS with MAGMA on the build before the change",
    ),
}


@pytest.mark.perf
@measurement_on("cpu")
@pytest.mark.timeout(600)
@pytest.mark.parametrize("op", list(CASES))
def test_batched_vs_loop(device: torch.device, compat_env, record_property, op: str) -> None:
    fn, build, accel_shape, cpu_shape, claim, method = CASES[op]
    shape = cpu_shape if device.type == "cpu" else accel_shape
    args = build(shape, device)

    def batched() -> object:
        return fn(*args)

    def looped() -> list[object]:
        return [fn(*(t[i] for t in args)) for i in range(shape[0])]

    repeats = 3 if device.type == "cpu" else 5
    t_batched = best_time(batched, device, repeats=repeats)
    t_loop = best_time(looped, device, repeats=repeats)
    ratio = t_loop / t_batched
    shape_s = "(" + ",".join(map(str, shape)) + ")"
    common = {"shape": shape_s, "dtype": "float32"}
    record_perf(
        record_property,
        f"{op}_batched_vs_loop",
        ratio,
        "x",
        label=f"{op} batched vs loop",
        note=f"Python loop time / batched time (the in-version proxy); {method}",
        claim=claim,
        **common,
    )
    best = f"best of {repeats} runs"
    record_perf(
        record_property, f"{op}_batched_ms", t_batched * 1e3, "ms", label=f"{op} batched call", note=best, **common
    )
    loop_label = f"{op} Python loop over the batch"
    record_perf(record_property, f"{op}_loop_ms", t_loop * 1e3, "ms", label=loop_label, note=best, **common)
    _check(device, ratio, op, shape_s)


def _check(device: torch.device, ratio: float, op: str, shape: str) -> None:
    assert ratio > 0
    if device.type != "cpu":
        assert ratio >= ACCELERATOR_FLOOR, (
            f"batched {op} on {shape} is {1 / ratio:.1f}x slower than a Python loop (floor {ACCELERATOR_FLOOR}x)"
        )
