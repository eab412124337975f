"""Each test issue 39 added to the five release features turns red when what it checks is broken.

The broken-twin method of test_broken_features.py: real pytest runs of the real ``suites/``, one breakage from
``sabotage_depth.py`` injected through a ``sitecustomize`` (so the child processes the suites start get it too);
every listed test must fail with a message that says what is wrong, and a control run of the same tests without a
breakage has no failure. The CPU twins run here. The GPU twins (graphs, the 2:4 paths, the cross-device load) need a
CUDA device: on this CPU they are skipped with that reason, on a GPU host (the H200 device check) the same command
runs them. Two more runs show that a claim decides a refusal: cuDNN attention, refused on this CPU and
``[unsupported]`` there, fails once ``COMPAT_FAKE_CLAIM=cuda:9.0`` puts the session on a device the cuDNN claim covers.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests.suites.twin_runner import run_suites

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the suites need torch"),
]

LG = "linalg/test_linalg_gradients.py"
LS = "linalg/test_linalg_surface.py"
LQ = "linalg/test_lstsq.py"
FP8 = "scaled_mm_mx/test_scaled_mm_fp8.py::test_fp8_scaled_mm_matches_float64"
HUB = "hub/test_hub_sources.py"
EC = "export/test_export_compat.py"
GW = "graphs/test_graph_workflows.py"
SP = "sparsity/test_semi_structured_paths.py"
SDPA = "attention/test_sdpa_kernels.py::test_kernel_matches_float64_math"

# breakage -> {test it must fail: text the failure must contain}, runnable on this CPU
CPU_TWINS: dict[str, dict[str, str]] = {
    "eigh-gradient-halved": {
        f"{LG}::test_eigh_gradient_matches_finite_differences": "Jacobian mismatch",
        f"{LG}::test_value_gradient_is_defined_on_a_repeated_spectrum[eigh]": "Mismatched elements",
    },
    "svd-gradient-halved": {
        f"{LG}::test_svd_gradient_matches_finite_differences": "Jacobian mismatch",
        f"{LG}::test_value_gradient_is_defined_on_a_repeated_spectrum[svd]": "Mismatched elements",
    },
    "lstsq-gradient-halved": {f"{LG}::test_lstsq_gradient_matches_finite_differences": "Jacobian mismatch"},
    "lstsq-not-minimum-norm": {
        f"{LS}::test_underdetermined_gels_is_the_minimum_norm_solution[float64]": "float64 minimum-norm solution"
    },
    "lstsq-refuses-drivers": {
        f"{LQ}::test_lstsq_driver_full_rank[gelsd]": "other than `gels`",
        f"{LQ}::test_lstsq_rank_deficient_rank_revealing_driver[gelsy]": "other than `gels`",
    },
    "eig-eigenvalues-drift": {f"{LS}::test_eig_general_matrix[float64-batched]": "||A V - V diag(w)||"},
    "cholesky-off": {
        f"{LS}::test_cholesky_qr_lu[float64-single]": "||L L^H - A||",
        f"{LS}::test_nan_and_indefinite_inputs_fail_by_batch_element": "L L^T, valid batch",
    },
    "pinv-off": {
        f"{LS}::test_solve_inv_pinv[float32-batched]": "||A A+ A - A||",
        f"{LS}::test_rank_deficient[float64]": "minimum-norm solution vs float64",
    },
    "eigh-ignores-nan": {f"{LS}::test_nan_and_indefinite_inputs_fail_by_batch_element": "DID NOT RAISE"},
    "eigh-eigenvalues-drift": {
        f"{LS}::test_degenerate_spectrum": "eigh residual",
        f"{LS}::test_large_n_algorithm_switches[large]": "eigenvalues vs float64",
        f"{LS}::test_preferred_linalg_library[default]": "eigvalsh",
    },
    "eigh-vectors-decay": {
        "linalg/test_eigh.py::test_eigh_repeated_calls_stable[float64-batched]": "EigenvectorsNotOrthonormal"
    },
    "svd-values-shifted": {f"{LS}::test_rank_deficient[float64]": "trailing singular values"},
    "linalg-library-reads-magma": {f"{LS}::test_preferred_linalg_library[default]": "the getter reads"},
    "fp8-scaled-mm-ignores-scales": {
        f"{FP8}[tensorwise-torch._scaled_mm]": "vs float64",
        f"{FP8}[rowwise-F.scaled_mm]": "vs float64",
    },
    "hub-list-trusts-without-asking": {f"{HUB}::test_list_and_help_prompt[y]": "hub.list prompted 0 time(s)"},
    "hub-none-prompts": {f"{HUB}::test_trust_repo_none_is_not_a_check": "unexpected prompt"},
    "hub-local-prompts": {f"{HUB}::test_source_local": "unexpected prompt"},
    "hub-force-reload-ignored": {f"{HUB}::test_force_reload_fetches_the_new_commit": "force_reload did not download"},
    "hub-skips-fork-check": {f"{HUB}::test_fork_check": "skip_validation=False asked GitHub nothing"},
    "hub-ignores-hashes": {f"{HUB}::test_load_state_dict_from_url": "DID NOT RAISE"},
    "aoti-package-drifts": {f"{EC}::test_aoti_package_built_and_loaded": "AOTI package, batch 3"},
    "export-load-scales-a-buffer": {f"{EC}::test_pt2_saved_by_the_previous_release_loads": "scale: its bytes changed"},
}

# the same on a CUDA device (graphs, 2:4 paths, cross-device load, FP8 on the GPU)
GPU_TWINS: dict[str, dict[str, str]] = {
    "cuda-graph-replays-nothing": {
        f"{GW}::test_rng_in_a_capture_draws_new_numbers_each_replay": "ran without a device graph",
        f"{GW}::test_capture_error_mode_captures_and_replays[thread_local]": "ran without a device graph",
        f"{GW}::test_launch_overhead": "x[0]=",
    },
    "compile-drops-reduce-overhead": {
        f"{GW}::test_training_under_reduce_overhead": "ran without a device graph",
        f"{GW}::test_new_shapes_record_new_graphs": "ran without a device graph",
    },
    "cuda-graph-accepts-any-mode": {f"{GW}::test_capture_errors_fail_loudly": "accepted capture_error_mode='bogus'"},
    "semi-structured-stays-dense": {
        f"{SP}::test_the_sparse_kernel_runs[cusparselt]": "Tensor",
        f"{SP}::test_int8_and_float32[cusparselt-int8]": "Tensor",
        f"{SP}::test_transposed_and_bias_paths[cusparselt]": "Tensor",
        f"{SP}::test_compile_with_sparse_weights": "Tensor",
    },
    "move-to-device-is-a-no-op": {f"{EC}::test_cross_device_load": "a weight stayed on the CPU"},
    "fp8-scaled-mm-ignores-scales": {f"{FP8}[tensorwise-torch._scaled_mm]": "vs float64"},
}


def _run(tests: list[str], tmp_path: Path, mode: str | None, env: dict[str, str] | None = None):
    return run_suites(tests, tmp_path, "sabotage_depth", mode, env=env, args=("-q", "-rxXs"), timeout=900)


def _cuda_here() -> bool:
    """Whether this machine's torch sees a CUDA device (asked in a child: torch stays out of this process)."""
    probe = [sys.executable, "-c", "import torch; print(torch.cuda.is_available())"]
    return subprocess.run(probe, capture_output=True, text=True, timeout=300, check=False).stdout.strip() == "True"


def _check(mode: str, twins: dict[str, str], tmp_path: Path) -> None:
    done, results = _run(list(twins), tmp_path, mode)
    assert done.returncode == 1, f"rc {done.returncode}\n{done.stdout[-4000:]}{done.stderr[-2000:]}"
    for test, says in twins.items():
        outcome, message = results.get(test, ("missing", ""))
        assert outcome == "failed", f"{test} under {mode}: {outcome} {message[:500]}\n{done.stdout[-3000:]}"
        assert says in message, f"{test} failed under {mode} without saying {says!r}:\n{message[:3000]}"


def test_control_run_without_breakage_has_no_failure(tmp_path: Path) -> None:
    tests = sorted({t for twins in CPU_TWINS.values() for t in twins})
    done, results = _run(tests, tmp_path, None)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert all(results.get(t, ("missing", ""))[0] == "passed" for t in tests), {
        t: results.get(t, ("missing", ""))[0] for t in tests if results.get(t, ("missing", ""))[0] != "passed"
    }


@pytest.mark.parametrize("mode", list(CPU_TWINS))
def test_breakage_turns_the_test_red(mode: str, tmp_path: Path) -> None:
    _check(mode, CPU_TWINS[mode], tmp_path)


@pytest.mark.parametrize("mode", list(GPU_TWINS))
def test_gpu_breakage_turns_the_test_red(mode: str, tmp_path: Path) -> None:
    if not _cuda_here():
        pytest.skip("these twins break what the suites check on a CUDA device; this machine's torch sees none")
    _check(mode, GPU_TWINS[mode], tmp_path)


CUDNN = f"{SDPA}[cudnn-bfloat16-plain]"


def test_a_claimed_cudnn_refusal_fails(tmp_path: Path) -> None:
    """cuDNN attention is claimed on sm_90+ (features.toml): the CPU's refusal, [unsupported] here, fails when the
    claims are judged for an H200 (COMPAT_FAKE_CLAIM=cuda:9.0), and not for an A100 (cuda:8.0). It needs a host
    where cuDNN attention refuses: on a real H200 it runs (passed there, tests/data/gpu-cells run3)."""
    if _cuda_here():
        pytest.skip("cuDNN attention runs on this machine's GPU: there is no refusal for the fake claim to judge")
    plain = _run([CUDNN], tmp_path / "plain", None)[1][CUDNN]
    assert plain[0] == "skipped" and plain[1].startswith("[unsupported]"), plain
    hopper = _run([CUDNN], tmp_path / "hopper", None, env={"COMPAT_FAKE_CLAIM": "cuda:9.0"})[1][CUDNN]
    assert hopper[0] == "failed" and "refused on a device the claims cover" in hopper[1], hopper
    ampere = _run([CUDNN], tmp_path / "ampere", None, env={"COMPAT_FAKE_CLAIM": "cuda:8.0"})[1][CUDNN]
    assert ampere[0] == "skipped" and ampere[1].startswith("[unsupported]"), ampere
