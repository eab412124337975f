"""The claims are auditable before any GPU runs (issue 38, item 6): ``pytest suites --collect-only
--predict=<device>`` tells per test what it would do there, and docs/predictions/ holds its answer for the GPUs
users have (H200, B200, MI300X with torch 2.15), kept current by this test.

    UPDATE_PREDICTIONS=1 python -m pytest tests/suites/test_predict.py   # rewrite docs/predictions/*.txt
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SUITES = REPO / "suites"
PREDICTIONS = REPO / "docs" / "predictions"
DEVICES = {
    "h200-2.15": "cuda:9.0:cu132:2.15",
    "b200-2.15": "cuda:10.0:cu132:2.15",
    "mi300x-2.15": "rocm:gfx942:rocm7.14:2.15",
}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the suites need torch"),
]


def predict(spec: str) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPAT_", "PYTEST_"))}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", ".", "--collect-only", "-q", "-p", "no:cacheprovider", f"--predict={spec}"],
        cwd=SUITES, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    text = done.stdout
    start = text.find("# suites --predict=")
    end = re.search(r"^\d+(/\d+)? tests? collected", text[start:], re.MULTILINE) if start >= 0 else None
    report = text[start : start + end.start()].rstrip("\n") + "\n" if end else ""
    return done.returncode, report


@pytest.mark.parametrize("name", list(DEVICES))
def test_the_committed_prediction_is_current(name: str) -> None:
    code, report = predict(DEVICES[name])
    assert code == 0 and report, f"--predict={DEVICES[name]} printed no report (exit {code})"
    path = PREDICTIONS / f"{name}.txt"
    if os.environ.get("UPDATE_PREDICTIONS"):
        path.write_text(report, encoding="utf-8")
    assert path.read_text(encoding="utf-8") == report, (
        f"{path.relative_to(REPO)} is stale: UPDATE_PREDICTIONS=1 python -m pytest tests/suites/test_predict.py"
    )


def test_an_h200_runs_flash_attention_as_claimed_and_no_claimed_test_is_skipped() -> None:
    text = (PREDICTIONS / "h200-2.15.txt").read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if "test_kernel_matches_float64_math[flash-bfloat16-plain]" in ln)
    assert "RUN claimed" in line, line
    summary = text.split("# per feature")[1].split("\n", 1)[1]
    assert "varlen_attention: " in summary and "FAIL claimed but skipped" not in summary, summary


@pytest.mark.parametrize("bad", ["tpu:1:x:2.15", "cuda:sm90:cu132:2.15", "rocm:mi300:rocm7.14:2.15", "cuda:9.0:cu132"])
def test_a_bad_device_is_a_usage_error_in_one_line(bad: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPAT_", "PYTEST_"))}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "hub", "--collect-only", "-q", "-p", "no:cacheprovider", f"--predict={bad}"],
        cwd=SUITES, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 4 and "--predict=" in done.stderr, (done.returncode, done.stderr[-500:])


def test_predict_needs_collect_only() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COMPAT_", "PYTEST_"))}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "hub", "-q", "-p", "no:cacheprovider", "--predict=cuda:9.0:cu132:2.15"],
        cwd=SUITES, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 4 and "--collect-only" in done.stderr, done.stderr[-500:]
