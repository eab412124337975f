"""Each new suite turns red when its feature is broken.

Real pytest runs of the real ``suites/`` (no sample suite): one breakage per suite is injected with
``sabotage.py`` (through a ``sitecustomize`` on ``PYTHONPATH``, so the distributed suite's rank
processes get it too), and the run must fail exactly the test that checks the broken behaviour, with
a message that says what is wrong. A control run of the same tests without any breakage passes, so
the failure is the breakage's doing.
"""

from __future__ import annotations

import importlib.util
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.suites.twin_runner import run_suites

# torch runs only in the child pytest: importing it here would swell this process, and every child
# forked from it reports that size as its own peak RSS (tests/faults measure children's memory).
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the suites need torch"),
]


@dataclass(frozen=True)
class Breakage:
    mode: str
    test: str  # node id under suites/
    says: str  # text the failure message must contain


BREAKAGES = {
    "compile": Breakage(
        "compile-garbage",
        "compile/test_compile_modules.py::test_forward_and_backward_match_eager[mlp-float32]",
        "mlp forward",
    ),
    "attention": Breakage(
        "sdpa-off",
        "attention/test_sdpa_kernels.py::test_kernel_matches_float64_math[flash-float32-causal]",
        "SDPA flash kernel, float32, causal, on cpu, output",
    ),
    "amp": Breakage(
        "scaler-zeroes-loss",
        "amp/test_grad_scaler.py::test_mixed_precision_training_converges_like_float32[float16]",
        "reduced its loss only",
    ),
    "distributed": Breakage(
        "all-reduce-drops-rank",
        "distributed/test_collectives.py::test_collective[2-ranks-all_reduce_sum]",
        "all_reduce_sum on rank 0 of 2: got [1.0, 1.0, 1.0, 1.0], want [3.0, 3.0, 3.0, 3.0]",
    ),
    "quantization": Breakage(
        "quantizer-distorts",
        "quantization/test_x86_backend.py::test_dynamic_quantization_of_linear",
        "dynamic quantization relative error",
    ),
    "memory": Breakage(
        "memory-api-no-refusal", "memory/test_accelerator_memory.py::test_memory_api_present", "DID NOT RAISE"
    ),
    # the five original features and attention's low precision: each breaks a value check (issue 30)
    "attention-bfloat16": Breakage(
        "sdpa-low-precision-off",
        "attention/test_sdpa_kernels.py::test_kernel_matches_float64_math[flash-bfloat16-plain]",
        "SDPA flash kernel, bfloat16, plain, on cpu, output",
    ),
    "attention-float16": Breakage(
        "sdpa-low-precision-off",
        "attention/test_sdpa_kernels.py::test_kernel_matches_float64_math[math-float16-gqa]",
        "SDPA math kernel, float16, gqa, on cpu, output",
    ),
    "graphs": Breakage("cond-other-branch", "graphs/test_graph_api.py::test_cond_selects_branch_eagerly", "Mismatched"),
    "linalg-eigh": Breakage(
        "eigh-eigenvalues-drift",
        "linalg/test_eigh.py::test_eigh_accuracy_and_ordering[float32-single]",
        "'residual'",
    ),
    "linalg-svd": Breakage(
        "svd-loses-singular-value", "linalg/test_svd.py::test_svd_accuracy_and_ordering[float64-batched]", "limit"
    ),
    "export": Breakage(
        "export-load-flips-bit", "export/test_export_mx.py::test_mxfp8_module_roundtrip[e4m3fn]", "bits changed"
    ),
    "hub": Breakage(
        "hub-trusts-without-asking",
        "hub/test_hub_trust.py::test_check_prompts_and_yes_loads_and_records[y]",
        "the trust prompt was shown 0 time(s)",
    ),
    "sparsity": Breakage(
        "sparsifier-keeps-smallest",
        "sparsity/test_sparse_format.py::test_weight_norm_sparsifier_makes_a_24_mask",
        "did not keep the two largest magnitudes",
    ),
}


def _run(tests: list[str], tmp_path: Path, mode: str | None) -> tuple[subprocess.CompletedProcess[str], dict]:
    """pytest on the real suites with ``sabotage`` in force under ``mode``."""
    return run_suites(tests, tmp_path, "sabotage", mode, args=("-q",), timeout=300)


@pytest.mark.parametrize("feature", list(BREAKAGES))
def test_control_run_without_breakage_passes(feature: str, tmp_path: Path) -> None:
    b = BREAKAGES[feature]
    done, results = _run([b.test], tmp_path, None)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert results.get(b.test, ("missing", ""))[0] == "passed", results


@pytest.mark.parametrize("feature", list(BREAKAGES))
def test_breakage_turns_the_suite_red(feature: str, tmp_path: Path) -> None:
    b = BREAKAGES[feature]
    done, results = _run([b.test], tmp_path, b.mode)
    assert done.returncode == 1, f"rc {done.returncode}\n{done.stdout[-4000:]}{done.stderr[-2000:]}"
    outcome, message = results.get(b.test, ("missing", ""))
    assert outcome == "failed", f"{b.test}: {outcome}\n{done.stdout[-3000:]}"
    assert b.says in message, f"{b.test} failed without saying {b.says!r}:\n{message[:3000]}"
