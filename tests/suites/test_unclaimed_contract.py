"""No test runs unclaimed by accident (issue 38): on a device where upstream claims a feature, each of its tests is
covered by a claim (``[[features.<id>.claims]]``'s ``tests``) or declared under ``[[features.<id>.unclaimed]]``
with the reason no claim covers it.

The devices are those of the committed predictions (docs/predictions/, kept current by test_predict.py: the H200,
the B200 and the MI300X with torch 2.15), read without torch, and the CPU build CI runs (the installed torch; its
tests collected in a subprocess, so that check is slow). A failure is one line per offender: the test, the device
and the feature; a declared glob that matches no test; a declared test that claims cover on every device checked.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
from types import SimpleNamespace

import pytest

from tests.suites.support_modules import SUITES
from tests.suites.test_predict import DEVICES, PREDICTIONS

FAST = True  # reads features.toml and the committed predictions; the CPU check is marked slow on its own

_LINE = re.compile(r"^(\S+::\S*?)  (RUN claimed|RUN unclaimed|SKIP|FAIL|XFAIL|DESELECTED)\b")


def _support() -> SimpleNamespace:
    """The suites' claims, expectations and predict modules (none imports torch), as the suites import them."""
    import importlib

    sys.path.insert(0, str(SUITES))
    try:
        names = ("claims", "expectations", "predict")
        return SimpleNamespace(**{n: importlib.import_module(f"_support.{n}") for n in names})
    finally:
        sys.path.remove(str(SUITES))


S = _support()


def predicted_runs() -> dict[str, tuple[object, list[str], list[str]]]:
    """label -> (claims.Device, the tests that run there, every test the prediction names) per committed
    prediction, the device built as ``--predict`` makes the session judge it (predict.environment)."""
    runs = {}
    for name, text in DEVICES.items():
        spec = S.predict.parse(text)
        device = S.claims.Device(
            spec.family,
            tuple(int(p) for p in spec.model.split(".")) if spec.family == "cuda" else None,
            spec.model if spec.family == "rocm" else None,
            spec.name,
            variant=spec.variant,
            torch=(*spec.release, 0),
            python=S.claims.python_key(),
        )
        lines = [m for ln in (PREDICTIONS / f"{name}.txt").read_text(encoding="utf-8").splitlines()
                 if (m := _LINE.match(ln))]  # fmt: skip
        assert lines, f"docs/predictions/{name}.txt names no test"
        ran = [m.group(1) for m in lines if m.group(2) != "DESELECTED"]  # another build's API: not collected there
        runs[f"{spec.name} ({spec.family} {spec.model})"] = (device, ran, [m.group(1) for m in lines])
    return runs


def offenders(claims: tuple, unclaimed: tuple, runs: dict[str, tuple[object, list[str], list[str]]],
              whole: bool = True) -> list[str]:  # fmt: skip
    """One line per test that runs unclaimed and undeclared on a device where upstream claims its feature; with
    ``whole`` (every device of the contract given), also per declared glob matching no test and per declared
    test that claims cover on every device."""
    found: list[str] = []
    covered_on: dict[str, list[bool]] = {}
    for label, (device, ran, _) in runs.items():
        claimed = {c.feature for c in claims if c.covers_device(device)}
        for node in ran:
            feature = node.partition("/")[0]
            here = [c for c in claims if c.feature == feature and c.covers_test(node) and c.covers_device(device)]
            covered = any(c.holds_on_python(node, device.python) for c in here)
            covered_on.setdefault(node, []).append(covered)
            declared = any(u.feature == feature and u.matches(node) for u in unclaimed)
            other_python = bool(here) and not covered  # its group is judged on other interpreters: never here
            if feature in claimed and not covered and not declared and not other_python:
                found.append(
                    f"suites/{node} runs unclaimed on {label} where upstream claims {feature}: cover it with a "
                    f"claim's tests or declare it under [[features.{feature}.unclaimed]] with why"
                )
    if not whole:
        return found
    named = sorted({node for _, _, every in runs.values() for node in every})
    stale: set[str] = set()
    for u in unclaimed:
        for glob in u.tests:
            if not any(S.expectations.node_glob(glob).fullmatch(node) for node in named):
                found.append(f"[[features.{u.feature}.unclaimed]] tests {glob!r} matches no collected test")
        for node in named:
            if node not in stale and u.matches(node) and covered_on.get(node) and all(covered_on[node]):
                stale.add(node)
                found.append(
                    f"suites/{node} is declared under [[features.{u.feature}.unclaimed]] but claims cover it on "
                    f"every device checked ({', '.join(runs)}): drop it from the declaration"
                )
    return found


def _real() -> tuple[tuple, tuple]:
    return S.claims.load(), S.claims.load_unclaimed()


def test_every_test_is_claimed_or_declared_on_the_predicted_gpus() -> None:
    found = offenders(*_real(), predicted_runs(), whole=False)
    assert not found, "\n".join(found)


def _cpu_run() -> tuple[object, list[str], list[str]]:
    """The CPU build CI runs: the installed torch, its tests collected once."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPAT_", "PYTEST_"))}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", ".", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=SUITES, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    nodes = [ln.strip() for ln in done.stdout.splitlines() if "::" in ln and not ln.startswith(" ")]
    assert done.returncode == 0 and nodes, f"collecting suites/ failed (exit {done.returncode}): {done.stdout[-800:]}"
    version = importlib.metadata.version("torch")
    release = tuple(int(p) for p in re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version).groups(default="0"))  # type: ignore[union-attr]
    device = S.claims.Device("cpu", None, None, "", variant="cpu", torch=release, python=S.claims.python_key())
    return device, nodes, nodes


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="collecting the suites needs torch")
def test_every_test_is_claimed_or_declared_on_every_device_and_no_declaration_is_idle() -> None:
    device, ran, every = _cpu_run()
    label = f"the CPU build (cpu, torch {device.torch[0]}.{device.torch[1]})"
    runs = {**predicted_runs(), label: (device, ran, every)}
    found = offenders(*_real(), runs)
    assert not found, "\n".join(found)


def test_the_predictions_give_every_unclaimed_run_its_reason() -> None:
    for name in DEVICES:
        text = (PREDICTIONS / f"{name}.txt").read_text(encoding="utf-8")
        bare = [ln for ln in text.splitlines() if ln.endswith("  RUN unclaimed")]
        assert not bare, f"docs/predictions/{name}.txt: an unclaimed run without its reason: {bare[0]}"
        assert "NOT DECLARED" not in text, f"docs/predictions/{name}.txt runs a test unclaimed and undeclared"


H200 = S.claims.Device("cuda", (9, 0), None, "NVIDIA H200", variant="cu132", torch=(2, 15, 0), python="3.11")
MADE_UP = {
    "linalg": {
        "claims": [{"family": "cuda", "since": "2.1", "source": "https://x", "ops": ["torch.linalg.eigh"],
                    "tests": ["linalg/test_a.py::test_claimed"]}],
        "unclaimed": [
            {"tests": ["linalg/test_a.py::test_signature*"], "why": "host-only: checks the signature"},
            {"tests": ["linalg/test_a.py::test_renamed_long_ago"], "why": "a test that is gone"},
            {"tests": ["linalg/test_a.py::test_claimed"], "why": "declared before a claim covered it"},
        ],
    },
    "hub": {"claims": [{"family": "cpu", "since": "2.1", "source": "https://x", "ops": ["torch.hub.load"]}]},
}  # fmt: skip


def test_the_contract_names_each_offender_in_one_line() -> None:
    """The check bites: an uncovered test, an idle glob and a stale declaration, each one line naming it; a test
    of a feature upstream claims nowhere on the device (hub on a GPU) is not an offender."""
    claims, unclaimed = S.claims.parse(MADE_UP)
    tests = ["linalg/test_a.py::test_claimed", "linalg/test_a.py::test_signature[x]",
             "linalg/test_a.py::test_uncovered", "hub/test_h.py::test_load"]  # fmt: skip
    assert offenders(claims, unclaimed, {"NVIDIA H200 (cuda 9.0)": (H200, tests, tests)}) == [
        "suites/linalg/test_a.py::test_uncovered runs unclaimed on NVIDIA H200 (cuda 9.0) where upstream claims "
        "linalg: cover it with a claim's tests or declare it under [[features.linalg.unclaimed]] with why",
        "[[features.linalg.unclaimed]] tests 'linalg/test_a.py::test_renamed_long_ago' matches no collected test",
        "suites/linalg/test_a.py::test_claimed is declared under [[features.linalg.unclaimed]] but claims cover it on "
        "every device checked (NVIDIA H200 (cuda 9.0)): drop it from the declaration",
    ]
    assert S.claims.unclaimed_why("linalg/test_a.py::test_uncovered", H200).startswith("NOT DECLARED")


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ({"tests": ["linalg/test_a.py::*"]}, "missing keys \\['why'\\]"),
        ({"why": "host-only"}, "missing keys \\['tests'\\]"),
        ({"tests": ["linalg/test_a.py::*"], "why": "x", "family": "cuda"}, "unknown keys \\['family'\\]"),
        ({"tests": [], "why": "x"}, "non-empty list"),
        ({"tests": ["hub/test_h.py::*"], "why": "x"}, "not node-id globs of suites/linalg/"),
        ({"tests": ["linalg/test_a.py::*"], "why": " "}, "why must say"),
    ],
)
def test_a_malformed_declaration_is_an_error_naming_it(raw: dict, says: str) -> None:
    with pytest.raises(S.claims.ClaimsError, match=r"\[\[features\.linalg\.unclaimed\]\] #1: .*" + says):
        S.claims.parse({"linalg": {"unclaimed": [raw]}})


def test_predict_shows_why_a_test_runs_unclaimed() -> None:
    why = S.claims.unclaimed_why
    assert why("accelerator_rng/test_accelerator_rng.py::test_rng_state_api", H200).startswith("host-only")
    xpu = S.claims.Device("xpu", None, None, "Intel(R) Arc(TM) B580", variant="xpu", torch=(2, 15, 0))
    assert why("cuda_graph_hooks/test_cuda_graph_hooks.py::test_graph_hook_registration", xpu) == (
        "upstream claims no part of cuda_graph_hooks on this device"
    )


def test_a_claim_ends_at_until_and_a_groups_python_bounds_it() -> None:
    """The quickstart's 2.15 run failed two ways the backstop made visible: the 2.14 call form of precompile,
    claimed past the release that replaced it, and a Python 3.15 group claimed on a 3.11 column. A claim's
    `until` ends it; a test's group with `python` keys bounds its claims like the row's do."""
    table = {
        "precompile": {
            "claims": [{"family": "cpu", "since": "2.14", "until": "2.15", "source": "https://x",
                        "ops": ["torch.compiler.precompile"]}],
        },
        "compile_py315": {
            "claims": [{"family": "cpu", "since": "2.15", "source": "https://x", "ops": ["torch.compile"]}],
            "groups": [{"match": "compile_py315/test_c.py::test_runs*", "since": "2.15", "source": "https://x",
                        "claim": "x", "python": ["3.15"]}],
        },
    }  # fmt: skip
    claims, _ = S.claims.parse(table)
    cpu = {v: S.claims.Device("cpu", None, None, "", variant="cpu", torch=(2, v, 0), python="3.11") for v in (14, 15)}
    (pre,) = (c for c in claims if c.feature == "precompile")
    assert pre.covers_device(cpu[14]) and not pre.covers_device(cpu[15]) and "until 2.15" in pre.label
    (c315,) = (c for c in claims if c.feature == "compile_py315")
    assert c315.holds_on_python("compile_py315/test_c.py::test_admitted", "3.11")
    assert not c315.holds_on_python("compile_py315/test_c.py::test_runs", "3.11")
    assert c315.holds_on_python("compile_py315/test_c.py::test_runs", "3.15")
    with pytest.raises(S.claims.ClaimsError, match=r"until must be a release like '2\.15', later than since"):
        S.claims.parse({"precompile": {"claims": [{**table["precompile"]["claims"][0], "until": "2.14"}]}})
