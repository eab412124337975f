"""Every claimed test fails under every drill: the whole suites, not a selection (issue 38, item 4).

Real pytest runs of the real ``suites/`` on this machine's CPU, once per drill (refuse, wrong-values, fallback):
each test that records a ``claim`` (a support claim covers it on this device) whose claimed APIs the drill
applies to (``ondevice.DRILLS_BY_KIND``: fallback has nowhere to move a statistic or a download) must fail, and
none may pass or skip. suites/README.md states the figures this test checks (``FIGURES``): the count of claimed
tests on the CPU build CI runs, so a claim that grows or shrinks is a visible edit. (silent-skip breaks only graph
capture, which needs a device: its reach is shown on a real GPU, tests/data/gpu-cells/drills-h200-run2.)
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SUITES = REPO / "suites"
README = SUITES / "README.md"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the suites need torch"),
]

DRILLS = ("refuse", "wrong-values", "fallback")
FIGURE = re.compile(
    r"under `--drill=(?P<drill>[\w-]+)`: (?P<failed>\d+) of (?P<claimed>\d+) claimed tests (it applies to )?fail"
)


def _applies(drill: str, node: str) -> bool:
    """Whether the drill breaks one of the APIs the claims covering this test name (ondevice.DRILLS_BY_KIND:
    fallback has nowhere to move a statistic or a hub download, silent-skip touches graphs only)."""
    sys.path.insert(0, str(SUITES))
    try:
        from _support import claims, ondevice

        found = claims.claims_for(node, claims.Device("cpu", None, None, "", variant="cpu", torch=_torch()))
        return any(drill in ondevice.DRILLS_BY_KIND[ondevice.kind(op)] for c in found for op in c.ops)
    finally:
        sys.path.remove(str(SUITES))


def _torch() -> tuple[int, ...]:
    import torch

    return tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:3])


def _claimed_outcomes(drill: str, tmp_path: Path) -> dict[str, str]:
    junit = tmp_path / f"junit-{drill}.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPAT_", "PYTEST_"))}
    subprocess.run(
        [sys.executable, "-m", "pytest", ".", "-q", "-p", "no:cacheprovider", "-n", "2", f"--drill={drill}",
         f"--junitxml={junit}"],
        cwd=SUITES, env=env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    assert junit.exists(), f"--drill={drill} wrote no JUnit"
    out = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        if not any(p.get("name") == "claim" for p in case.iter("property")):
            continue
        bad = case.find("failure") is not None or case.find("error") is not None
        skipped = case.find("skipped")
        xfail = skipped is not None and skipped.get("type") == "pytest.xfail"
        node = f"{case.get('classname', '').replace('.', '/')}.py::{case.get('name')}"
        if not _applies(drill, node):
            continue
        out[f"{case.get('classname')}::{case.get('name')}"] = (
            "failed" if bad else "xfailed" if xfail else "skipped" if skipped is not None else "passed"
        )
    return out


def _readme_figures() -> dict[str, tuple[int, int]]:
    text = README.read_text(encoding="utf-8")
    return {m["drill"]: (int(m["failed"]), int(m["claimed"])) for m in FIGURE.finditer(text)}


@pytest.mark.parametrize("drill", DRILLS)
def test_every_claimed_test_fails_under_the_drill(drill: str, tmp_path: Path) -> None:
    outcomes = _claimed_outcomes(drill, tmp_path)
    survived = sorted(n for n, o in outcomes.items() if o != "failed")
    assert outcomes, "no claimed test ran"
    assert not survived, f"--drill={drill}: {len(survived)} claimed tests did not fail: {survived[:20]}"
    failed = sum(1 for o in outcomes.values() if o == "failed")
    assert _readme_figures().get(drill) == (failed, len(outcomes)), (
        f"suites/README.md must say: under `--drill={drill}`: {failed} of {len(outcomes)} claimed tests it "
        "applies to fail"
    )


def test_the_readme_states_each_drills_figure() -> None:
    assert set(_readme_figures()) == set(DRILLS), _readme_figures()
