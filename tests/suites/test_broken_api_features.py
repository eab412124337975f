"""Each test of the rows for the public APIs 2.13-2.15 added (issue 27) turns red when what it checks is
broken: real pytest runs of the real ``suites/`` with one breakage from ``sabotage_apis.py`` injected through
a ``sitecustomize``; every listed test must fail with a message that says what is wrong, and a control run
of the same tests without a breakage has no failure. On this machine's torch (2.13.0+cpu) the 2.14/2.15
APIs are absent, so their breakage is a misbehaving stand-in of the API (the test's logic is what is
proven); the 2.13 APIs are bent for real.

Not provable here: ``compile_py315``'s run on a Python 3.15 interpreter (``[hardware]`` on 3.11; it shares
its value check with the admission test, whose twin is below).
"""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest

from tests.suites.twin_runner import run_suites

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the suites need torch"),
]

LCE = "linear_cross_entropy/test_linear_cross_entropy.py"
DEFAULT = "default_backend/test_default_backend.py"
VARLEN = "varlen_attention/test_varlen_attention.py"
RNG = "accelerator_rng/test_accelerator_rng.py"
HOOKS = "cuda_graph_hooks/test_cuda_graph_hooks.py"
PRE = "precompile/test_precompile.py"
ADDMM = "scaled_addmm/test_scaled_addmm.py"
OPTIM = "optim_functional/test_optim_functional.py"

# breakage -> {test it must fail: text the failure must contain}
TWINS: dict[str, dict[str, str]] = {
    "lce-drops-bias": {
        **{
            f"{LCE}::test_linear_cross_entropy_matches_linear_then_cross_entropy[{path}-{reduction}]": "vs float64"
            for path in ("reference", "chunked")
            for reduction in ("mean", "sum", "none")
        },
        f"{LCE}::test_label_smoothing_matches_cross_entropy": "vs float64",
        f"{LCE}::test_linear_cross_entropy_loss_module": "vs float64 linear + cross_entropy of its own weights",
    },
    "lce-never-chunks": {
        f"{LCE}::test_linear_cross_entropy_matches_linear_then_cross_entropy[chunked-mean]": "fell back",
    },
    "default-backend-ignored": {
        f"{DEFAULT}::test_default_backend_starts_as_inductor_and_resets": "must restore inductor",
        f"{DEFAULT}::test_compile_uses_the_default_backend": "gave the default backend 0 graphs",
    },
    "explicit-backend-overridden": {
        f"{DEFAULT}::test_an_explicit_backend_wins_over_the_default": "default backend got 1 graphs",
    },
    "varlen-across-sequences": {
        f"{VARLEN}::test_varlen_attention_shapes_on_meta": "out torch.bfloat16",
        f"{VARLEN}::test_varlen_attention_matches_per_sequence_attention": "output vs float64 attention",
    },
    "accelerator-rng-stand-in": {
        f"{RNG}::test_rng_state_api": "initial_seed(device=None)",
        f"{RNG}::test_rng_state_per_device": "has no accelerator RNG state",
    },
    "cuda-graph-hooks-stand-in": {
        f"{HOOKS}::test_graph_hook_registration": "register_graph_capture_start_hook returned NoneType",
        f"{HOOKS}::test_graph_lifecycle_hooks_fire_in_order": "DID NOT RAISE",
        f"{HOOKS}::test_export_dot_writes_the_captured_graph": "DID NOT RAISE",
    },
    "precompile-bakes-weights": {
        f"{PRE}::test_{form}[{backend}]": "run with another model's weights"
        for form in ("precompile_and_load", "precompile_capture_and_load")
        for backend in ("eager", "inductor")
    },
    "compile-admits-garbage": {
        "compile_py315/test_compile_py315.py::test_compile_admits_python_3_15": "admitted under Python 3.15",
    },
    "scaled-addmm-stand-in": {
        f"{ADDMM}::test_scaled_addmm_signature": "scaled_addmm(",
        f"{ADDMM}::test_scaled_addmm_matches_float64[out-of-place]": "vs float64 beta*input",
        f"{ADDMM}::test_scaled_addmm_matches_float64[in-place]": "must return input",
    },
    "optim-functional-stand-in": {
        f"{OPTIM}::test_functional_optimizers_wrap_the_implementations": "torch.optim.functional.__all__",
        f"{OPTIM}::test_functional_sgd_steps": "vs float64",
        f"{OPTIM}::test_functional_adam_steps": "vs float64",
    },
}


def _run(tests: list[str], tmp_path: Path, mode: str | None) -> tuple[subprocess.CompletedProcess[str], dict]:
    """pytest on the real suites with ``sabotage_apis`` in force under ``mode``."""
    return run_suites(tests, tmp_path, "sabotage_apis", mode)


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
