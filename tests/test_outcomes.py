"""The taxonomy's pure rules: reason classes and the feature x column roll-up."""

from __future__ import annotations

import pytest

from harness.outcomes import Rollup, SkipClass, classify_reason, is_timeout_message, rollup_counts


@pytest.mark.parametrize(
    ("reason", "expected"),
    [
        (
            "[unsupported] torch.accelerator.Graph needs torch>=2.12 (found 2.11.0)",
            (SkipClass.UNSUPPORTED, None, "torch.accelerator.Graph needs torch>=2.12 (found 2.11.0)"),
        ),
        ("Skipped: [hardware] needs CUDA", (SkipClass.HARDWARE, None, "needs CUDA")),
        ("/x/suites/a/test_a.py:12: [dependency] no flash_attn", (SkipClass.DEPENDENCY, None, "no flash_attn")),
        (
            "[known-issue https://github.com/pytorch/pytorch/issues/1] bad",
            (SkipClass.KNOWN_ISSUE, "https://github.com/pytorch/pytorch/issues/1", "bad"),
        ),
        ("no tag", (SkipClass.UNCLASSIFIED, None, "no tag")),
        ("[Hardware] wrong case is not a tag", (SkipClass.UNCLASSIFIED, None, "[Hardware] wrong case is not a tag")),
        ("", (SkipClass.UNCLASSIFIED, None, "")),
        (None, (SkipClass.UNCLASSIFIED, None, "")),
    ],
)
def test_classify_reason(reason, expected):
    assert classify_reason(reason) == expected


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("Timeout: test exceeded 300 s", True),
        ("Failed: Timeout: test exceeded 1 s", True),
        ("Failed: Timeout (>2.0s) from pytest-timeout.", True),
        ("AssertionError: Timeout is a word here", False),
        (None, False),
    ],
)
def test_timeout_messages(message, expected):
    assert is_timeout_message(message) is expected


@pytest.mark.parametrize(
    ("counts", "unsupported", "state"),
    [
        ({}, 0, Rollup.NO_DATA),
        ({"not-run": 4}, 0, Rollup.NO_DATA),
        ({"passed": 5}, 0, Rollup.SUPPORTED),
        ({"passed": 5, "flaky": 1, "xpassed": 1}, 0, Rollup.SUPPORTED),
        ({"passed": 5, "failed": 1}, 0, Rollup.PARTIAL),
        ({"passed": 5, "skipped": 2}, 0, Rollup.PARTIAL),
        ({"passed": 5, "xfailed": 1}, 0, Rollup.PARTIAL),
        ({"passed": 5, "not-run": 1}, 0, Rollup.PARTIAL),
        ({"failed": 2, "crashed": 1}, 0, Rollup.FAILING),
        ({"xfailed": 2}, 0, Rollup.FAILING),
        ({"skipped": 3}, 3, Rollup.UNSUPPORTED),
        ({"skipped": 3}, 1, Rollup.UNSUPPORTED),
        ({"skipped": 3}, 0, Rollup.NOT_APPLICABLE),
        ({"timeout": 1, "skipped": 2}, 2, Rollup.FAILING),
    ],
)
def test_rollup(counts, unsupported, state):
    assert rollup_counts(counts, unsupported) is state
