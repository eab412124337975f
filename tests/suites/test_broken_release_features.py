"""Each test added for the 2.13-2.15 rows (issue 19) turns red when what it checks is broken.

The same method as test_broken_features.py: real pytest runs of the real ``suites/`` with one breakage
from ``sabotage.py`` injected through a ``sitecustomize`` (so rank processes get it too); every listed test
must fail with a message that says what is wrong, and a control run of the same tests without a breakage
has no failure. On this machine's torch (2.13.0+cpu) most of these tests take their CPU path (an API that
must refuse, a build fact) or are ``[unsupported]`` (the API arrived in 2.14/2.15): there the breakage is
a stand-in of the API that misbehaves, so that the test's logic is what is proven.

Two more runs check that known issues follow the build and device that ran: a CUDA wheel's CPU-only run
does not get the CUDA eigh issue, and a ROCm wheel's CPU-only run gets the 2.13 CPU-compile regression (a
strict xfail: where the compile works, XPASS(strict) fails the test).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.suites.twin_runner import run_suites

REPO = Path(__file__).resolve().parents[2]
SUITES = REPO / "suites"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the suites need torch"),
]

CAPTURE = "graph_capture/test_current_stream_capture.py"
TELEMETRY = ("temperature", "clock_rate", "power_draw", "utilization", "memory_usage", "device_memory_used")
PROCESSES = "xpu_memory_tracking/test_xpu_process_memory.py"
SYMM = "symmetric_memory/test_symmetric_memory.py"
MPS = "mps_streams/test_mps_streams.py"

# breakage -> {test it must fail: text the failure must contain}
TWINS: dict[str, dict[str, str]] = {
    "graph-takes-stream": {f"{CAPTURE}::test_graph_takes_no_stream_argument": "Graph takes a stream argument"},
    "graph-builds-without-device": {
        f"{CAPTURE}::test_capture_records_on_the_current_stream": "DID NOT RAISE",
        f"{CAPTURE}::test_capture_on_the_default_stream": "DID NOT RAISE",
    },
    "compile-drops-reduce-overhead": {
        "graph_capture/test_compiled_graphs.py::test_reduce_overhead_on_every_accelerator": "recorded no skip"
    },
    "xpu-graph-builds-without-device": {
        "graph_capture/test_xpu_graph_overhead.py::test_xpu_graph_replay_overhead": "DID NOT RAISE"
    },
    "xpu-telemetry-answers-without-device": {
        f"xpu_telemetry/test_xpu_telemetry.py::test_telemetry_reading[{name}]": "DID NOT RAISE" for name in TELEMETRY
    },
    "xpu-temperature-takes-index": {
        "xpu_telemetry/test_xpu_telemetry.py::test_telemetry_api[temperature]": "want one parameter, device"
    },
    "xpu-process-list-stand-in": {
        f"{PROCESSES}::test_list_gpu_processes_mirrors_cuda": "xpu(device_index=None)",
        f"{PROCESSES}::test_list_gpu_processes_lists_this_process": "DID NOT RAISE",
    },
    "mx-scaled-mm-ignores-scales": {
        "scaled_mm_mx/test_scaled_mm_mx.py::test_mx_scaled_mm_matches_dequantized_reference[mxfp8-e4m3fn]": (
            "vs the dequantized float64 product"
        )
    },
    "symmetric-memory-stand-in": {
        f"{SYMM}::test_symmetric_memory_api": "want (tensor, group)",
        f"{SYMM}::test_symmetric_tensor_rendezvous[1-rank]": "DID NOT RAISE",
        f"{SYMM}::test_symmetric_tensor_rendezvous[2-ranks]": "DID NOT RAISE",
    },
    "cuda13-build-targets-volta": {
        "cuda_builds/test_cuda_builds.py::test_cuda_build_targets": "build targets pre-Turing ['sm_70']"
    },
    "cpu-build-lists-cuda-archs": {
        "cuda_builds/test_cuda_builds.py::test_gpu_is_a_build_target": "a cpu build lists CUDA architectures ['sm_75']"
    },
    "rocm714-facade": {
        "rocm_builds/test_rocm_builds.py::test_rocm_runtime_comes_from_wheels": "has loaded no libamdhip64"
    },
    "mps-streams-stand-in": {
        f"{MPS}::test_mps_stream_api_mirrors_cuda": "mps.set_stream",
        f"{MPS}::test_mps_side_stream_runs_work": "DID NOT RAISE",
    },
}


def _run(
    tests: list[str], tmp_path: Path, mode: str | None, env: dict[str, str] | None = None, header: bool = False
) -> tuple[subprocess.CompletedProcess[str], dict[str, tuple[str, str]]]:
    """pytest on the real suites with ``sabotage`` in force under ``mode`` (with ``header``, the output starts
    with the suites' "compat: backend=... variant=..." lines)."""
    return run_suites(tests, tmp_path, "sabotage", mode, env=env, args=("-rxXs",) if header else ("-q", "-rxXs"))


def test_control_run_without_breakage_has_no_failure(tmp_path: Path) -> None:
    tests = sorted({t for twins in TWINS.values() for t in twins})
    done, results = _run(tests, tmp_path, None)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    for test in tests:
        outcome, message = results.get(test, ("missing", ""))
        assert outcome in ("passed", "skipped"), f"{test}: {outcome}\n{done.stdout[-3000:]}"
        if outcome == "skipped":
            assert message.startswith(("[unsupported]", "[hardware]", "[dependency]")), f"{test}: {message}"


@pytest.mark.parametrize("mode", list(TWINS))
def test_breakage_turns_the_test_red(mode: str, tmp_path: Path) -> None:
    twins = TWINS[mode]
    done, results = _run(list(twins), tmp_path, mode)
    assert done.returncode == 1, f"rc {done.returncode}\n{done.stdout[-4000:]}{done.stderr[-2000:]}"
    for test, says in twins.items():
        outcome, message = results.get(test, ("missing", ""))
        assert outcome == "failed", f"{test} under {mode}: {outcome} {message[:500]}\n{done.stdout[-3000:]}"
        assert says in message, f"{test} failed without saying {says!r}:\n{message[:3000]}"


EIGH = "linalg/test_eigh.py::test_eigh_repeated_calls_stable[complex64-batched]"


def test_cuda_issue_is_not_applied_to_a_cpu_run_of_a_cuda_build(tmp_path: Path) -> None:
    """A +cu130 build on a host without a GPU, labelled cu130 by the harness: eigh ran on the CPU, where
    the CUDA issue does not apply, so it passes plainly (no xfail, no "may be fixed" XPASS)."""
    done, results = _run([EIGH], tmp_path, "cuda13-build-targets-volta", env={"COMPAT_BACKEND": "cu130"}, header=True)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "backend=cu130 variant=cu130" in done.stdout and "device=cpu (cpu)" in done.stdout, done.stdout[:2000]
    assert results.get(EIGH) == ("passed", ""), results
    assert "XPASS" not in done.stdout and "192483" not in done.stdout, done.stdout[-3000:]


def test_rocm_cpu_compile_regression_follows_the_build_that_ran(tmp_path: Path) -> None:
    """A +rocm7.14 build (2.13) on a host without a GPU: the CPU-compile regression (pytorch#189194) is
    applied to the compile tests as a strict xfail; here the compile works, so the test fails as
    XPASS(strict): the entry no longer holds where it applies and must be narrowed."""
    test = "compile/test_compile_modules.py::test_codegen_path"
    done, results = _run([test], tmp_path, "rocm714-facade", header=True)
    assert done.returncode == 1, done.stdout[-3000:]
    assert "variant=rocm7.14" in done.stdout, done.stdout[:2000]
    outcome, message = results.get(test, ("missing", ""))
    assert outcome == "failed" and "XPASS(strict)" in message and "issues/189194" in message, (outcome, message)


def test_probe_reports_variant_and_device_api(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COMPAT_")}
    probe = [sys.executable, str(SUITES / "_support" / "probe.py")]
    info = json.loads(subprocess.run(probe, env=env, capture_output=True, text=True, timeout=120, check=True).stdout)
    assert info["variant"] == info["backend"] == "cpu", info["variant"]
    api = info["device_api"]
    assert {"torch.accelerator", "torch.cuda", "torch.xpu", "torch.mps", "torch.backends.cuda"} <= set(api)
    assert "torch.distributed._symmetric_memory" in api and "rendezvous" in api["torch.distributed._symmetric_memory"]
    assert "Graph" in api["torch.accelerator"] and "temperature" in api["torch.xpu"]
    for namespace, names in api.items():
        assert names == sorted(names) and not any(n.startswith("_") for n in names), namespace
        assert "Any" not in names, f"{namespace}: typing.Any is not torch's API"
    labelled = subprocess.run(probe, env={**env, "COMPAT_BACKEND": "rocm"}, capture_output=True, text=True, timeout=120)
    relabelled = json.loads(labelled.stdout)
    assert (relabelled["backend"], relabelled["variant"]) == ("rocm7.2", "cpu"), "the old 'rocm' label is rocm7.2"
