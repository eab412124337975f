"""Drills: a backend regression cannot hide as "unsupported" (issue 30), proven on this CPU.

Real pytest runs of the real ``suites/`` with ``--drill=MODE`` (suites/_support/drills.py): the APIs the support
claims of ``features.toml`` name are broken the way a backend regression would break them. Each run is compared
with a baseline run of the same tests:

* every test the claims cover on this device (the ``claim`` property) fails;
* no test a claim covers skips as ``[unsupported]``, and the ``[unsupported]`` count does not grow;
* tests the claims do not cover keep their baseline outcome (their skips included).

``COMPAT_FAKE_CLAIM=<family>:<arch>`` judges the claims as if the session ran on that GPU, so the GPU branches of
the skip logic run here: a refusal that was ``[unsupported]`` on the CPU fails once a claim covers it, and the
silent-skip drill (graph capture falling back to eager) fails the reduce-overhead check.

The selection is one or two tests per feature the CPU claims plus the CPU's refusals (one compiled graph, a 1-rank
gloo group); the fake-claim runs take only the refusals they turn into failures.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SUITES = REPO / "suites"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the suites need torch"),
]

SDPA = "attention/test_sdpa_kernels.py::test_kernel_matches_float64_math"
VARLEN = "varlen_attention/test_varlen_attention.py::test_varlen_attention_matches_per_sequence_attention"
SELECTION = [
    "linalg/test_eigh.py::test_eigh_accuracy_and_ordering[float32-single]",
    "linalg/test_eigh.py::test_eigh_uplo_reads_only_one_triangle",
    "linalg/test_svd.py::test_svd_accuracy_and_ordering[complex64-batched]",
    "linalg/test_svd.py::test_svd_driver_keyword[gesvd]",  # the CPU's refusal: not claimed here
    "linalg/test_lstsq.py::test_lstsq_driver_full_rank[gelsd]",
    f"{SDPA}[math-bfloat16-causal]",
    f"{SDPA}[flash-float16-plain]",
    f"{SDPA}[efficient-float32-plain]",  # refused on the CPU: [unsupported], unclaimed
    f"{SDPA}[efficient-bfloat16-plain]",
    "scaled_mm_mx/test_scaled_mm_mx.py::test_mx_scaled_mm_matches_dequantized_reference[mxfp8-e4m3fn]",
    "sparsity/test_semi_structured.py::test_semi_structured_matmul_matches_dense[cusparselt-float16]",
    "sparsity/test_sparse_format.py::test_weight_norm_sparsifier_makes_a_24_mask",
    "quantization/test_quantized_tensors.py::test_quantize_per_channel",
    "amp/test_autocast.py::test_autocast_op_dtype_and_value[matmul-bfloat16]",
    "export/test_export_mx.py::test_cast_to_e8m0_roundtrip",
    "hub/test_hub_trust.py::test_trust_repo_true_loads_without_prompt",
    "graphs/test_graph_api.py::test_cond_selects_branch_eagerly",
    "compile/test_compile_dynamic.py::test_graph_break_still_gives_eagers_answer",
    "distributed/test_collectives.py::test_collective[1-rank-all_reduce_sum]",
    "linear_cross_entropy/test_linear_cross_entropy.py::test_linear_cross_entropy_loss_module",
    "default_backend/test_default_backend.py::test_compile_uses_the_default_backend",
    "default_backend/test_default_backend.py::test_default_backend_starts_as_inductor_and_resets",  # not claimed
    VARLEN,  # the CPU's refusal (no Flash kernel): [unsupported], claimed on CUDA only
]
# (fake device, the tests whose CPU refusal the fake claim covers: they must fail instead of skipping)
FAKES = {
    "cuda:9.0": [f"{SDPA}[efficient-bfloat16-plain]", VARLEN],
    "cuda:8.0": ["sparsity/test_semi_structured.py::test_semi_structured_matmul_matches_dense[cusparselt-float16]"],
    "rocm:gfx942": [f"{SDPA}[efficient-bfloat16-plain]"],
}
MX = "scaled_mm_mx/test_scaled_mm_mx.py::test_mx_scaled_mm_matches_dequantized_reference[mxfp8-e4m3fn]"
COMPILED_GRAPHS = "graph_capture/test_compiled_graphs.py::test_reduce_overhead_on_every_accelerator"


@dataclass(frozen=True)
class Result:
    outcome: str  # passed | failed | skipped | xfailed
    message: str
    claimed: bool


def run(tests: list[str], tmp_path: Path, drill: str | None = None, fake: str | None = None) -> dict[str, Result]:
    junit = tmp_path / f"junit-{drill}-{fake}.xml".replace(":", "_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPAT_", "PYTEST_"))}
    if fake:
        env["COMPAT_FAKE_CLAIM"] = fake
    argv = [sys.executable, "-m", "pytest", *tests, "-p", "no:cacheprovider", "-q", f"--junitxml={junit}"]
    done = subprocess.run(
        argv + ([f"--drill={drill}"] if drill else []),
        cwd=SUITES, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert junit.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    results = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name')}"
        props = {p.get("name") for p in case.iter("property")}
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        skipped = case.find("skipped")
        if bad is not None:
            outcome, message = "failed", (bad.get("message") or "") + (bad.text or "")
        elif skipped is not None:
            xfail = skipped.get("type") == "pytest.xfail"
            outcome, message = ("xfailed" if xfail else "skipped"), skipped.get("message") or ""
        else:
            outcome, message = "passed", ""
        results[name] = Result(outcome, message, "claim" in props)
    assert set(results) == set(tests), f"ran {sorted(results)}\n{done.stdout[-3000:]}"
    return results


def unsupported(results: dict[str, Result]) -> int:
    return sum(1 for r in results.values() if r.outcome == "skipped" and r.message.startswith("[unsupported]"))


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Result]:
    results = run(SELECTION, tmp_path_factory.mktemp("baseline"))
    failed = {n: r.message[:500] for n, r in results.items() if r.outcome == "failed"}
    assert not failed, f"the baseline run must pass: {failed}"
    return results


def test_baseline_claims_what_the_cpu_claims(baseline: dict[str, Result]) -> None:
    claimed = {n.partition("/")[0] for n, r in baseline.items() if r.claimed}
    assert claimed == {
        "linalg", "attention", "sparsity", "quantization", "amp", "export", "hub", "graphs", "compile", "distributed",
        "linear_cross_entropy", "default_backend",
    }, claimed  # fmt: skip
    assert not baseline["linalg/test_svd.py::test_svd_driver_keyword[gesvd]"].claimed, "driver= is claimed on CUDA"
    assert baseline[f"{SDPA}[efficient-float32-plain]"].message.startswith("[unsupported]")
    assert unsupported(baseline) == 5, {n: r.message[:80] for n, r in baseline.items() if r.outcome == "skipped"}


@pytest.mark.parametrize("drill", ["refuse", "wrong-values", "fallback"])
def test_drill_fails_every_claimed_test(drill: str, baseline: dict[str, Result], tmp_path: Path) -> None:
    results = run(SELECTION, tmp_path, drill)
    survived = {n: (r.outcome, r.message[:300]) for n, r in results.items() if r.claimed and r.outcome != "failed"}
    assert not survived, f"--drill={drill}: claimed tests that did not fail: {survived}"
    changed = {
        n: (baseline[n].outcome, r.outcome, r.message[:200])
        for n, r in results.items()
        if not r.claimed and (r.outcome, r.message) != (baseline[n].outcome, baseline[n].message)
    }
    assert not changed, f"--drill={drill} changed tests the claims do not cover: {changed}"
    assert unsupported(results) <= unsupported(baseline)


def test_fallback_is_caught_by_the_on_device_watch(tmp_path: Path) -> None:
    """The fallback drill's results come back on the right device: the watch of where the op ran says it."""
    test = "linalg/test_eigh.py::test_eigh_uplo_reads_only_one_triangle"
    result = run([test], tmp_path, "fallback")[test]
    assert result.outcome == "failed" and "ran aten::_linalg_eigh on meta, not on cpu" in result.message, result


@pytest.mark.parametrize("fake", list(FAKES))
def test_a_claimed_gpu_turns_refusals_into_failures(fake: str, baseline: dict[str, Result], tmp_path: Path) -> None:
    results = run(FAKES[fake], tmp_path, fake=fake)
    for test in FAKES[fake]:
        assert baseline[test].message.startswith("[unsupported]"), f"{test} must be refused on the CPU"
        got = results[test]
        assert got.claimed and got.outcome == "failed", f"{test} under {fake}: {got}"
        assert "refused on a device the claims cover" in got.message, got.message[:500]
    claimed_skips = {n: r.message[:120] for n, r in results.items() if r.claimed and r.outcome == "skipped"}
    assert not any(m.startswith("[unsupported]") for m in claimed_skips.values()), claimed_skips
    assert unsupported(results) == 0


def test_silent_skip_drill_fails_the_graph_check_of_a_claimed_gpu(tmp_path: Path) -> None:
    """Under a fake CUDA claim the reduce-overhead test is claimed; its CPU branch asserts Inductor's skip counter
    moved. The silent-skip drill drops mode="reduce-overhead": no skip is recorded, and the test fails."""
    plain = run([COMPILED_GRAPHS], tmp_path, fake="cuda:9.0")[COMPILED_GRAPHS]
    assert plain.claimed and plain.message.startswith("[hardware]"), plain
    drilled = run([COMPILED_GRAPHS], tmp_path, "silent-skip", fake="cuda:9.0")[COMPILED_GRAPHS]
    assert drilled.outcome == "failed" and "recorded no skip" in drilled.message, drilled


def test_a_gpu_cell_without_its_gpu_stops_at_once(tmp_path: Path) -> None:
    """The harness planned a CUDA cell (COMPAT_EXPECT_DEVICE=cuda) and torch sees only the CPU: no test runs, and
    pytest exits 3 (the cell's infra-error) naming both, instead of a column of [hardware] skips."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPAT_", "PYTEST_"))}
    test = "linalg/test_eigh.py::test_eigh_uplo_reads_only_one_triangle"
    argv = [sys.executable, "-m", "pytest", test, "-p", "no:cacheprovider", "-q"]
    done = subprocess.run(
        argv, cwd=SUITES, env={**env, "COMPAT_EXPECT_DEVICE": "cuda"}, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 3, done.stdout[-2000:] + done.stderr[-2000:]
    said = done.stdout + done.stderr
    assert "COMPAT_EXPECT_DEVICE=cuda" in said and "sees cpu" in said and "passed" not in said, said[-2000:]
    same = subprocess.run(
        argv, cwd=SUITES, env={**env, "COMPAT_EXPECT_DEVICE": "cpu"}, capture_output=True, text=True, timeout=300
    )
    assert same.returncode == 0, same.stdout[-2000:]


def test_a_claim_of_a_later_release_does_not_cover_this_build(tmp_path: Path) -> None:
    """MX scaled_mm is claimed on sm_100 from 2.14: on this 2.13 build the fake sm_100 leaves the CPU's refusal
    [unsupported], as the claim's ``since`` says."""
    from importlib.metadata import version

    if tuple(int(p) for p in version("torch").split("+")[0].split(".")[:2]) >= (2, 14):
        pytest.skip("[dependency] this check needs a torch older than the MX claim (2.14)")
    result = run([MX], tmp_path, fake="cuda:10.0")[MX]
    assert not result.claimed and result.message.startswith("[unsupported]"), result
