"""The outcome taxonomy: per-test outcomes, skip classes, and the feature x column roll-up.

Every rule about what a result *means* lives here, so ingest, merge, render and gate agree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Final


class Outcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    XPASSED = "xpassed"
    FLAKY = "flaky"
    TIMEOUT = "timeout"
    CRASHED = "crashed"
    NOT_RUN = "not-run"


class SkipClass(StrEnum):
    UNSUPPORTED = "unsupported"  # the backend or torch build lacks the feature: a compatibility fact
    HARDWARE = "hardware"  # needs a device or capability absent on this runner
    DEPENDENCY = "dependency"  # an optional package is missing
    KNOWN_ISSUE = "known-issue"  # an expectation with a link
    UNCLASSIFIED = "unclassified"  # a reason without a class tag


class Rollup(StrEnum):
    SUPPORTED = "supported"
    PARTIAL = "partial"
    FAILING = "failing"
    UNSUPPORTED = "unsupported"
    NOT_APPLICABLE = "n/a"
    NO_DATA = "no-data"


OUTCOME_SYMBOLS: Final[dict[Outcome, str]] = {
    Outcome.PASSED: "✅",
    Outcome.FAILED: "❌",
    Outcome.ERROR: "💥",
    Outcome.SKIPPED: "⏭️",
    Outcome.XFAILED: "🐞",
    Outcome.XPASSED: "🎉",
    Outcome.FLAKY: "🔁",
    Outcome.TIMEOUT: "⏱️",
    Outcome.CRASHED: "☠️",
    Outcome.NOT_RUN: "⬜",
}

ROLLUP_SYMBOLS: Final[dict[Rollup, str]] = {
    Rollup.SUPPORTED: "✅",
    Rollup.PARTIAL: "🟡",
    Rollup.FAILING: "❌",
    Rollup.UNSUPPORTED: "🚫",
    Rollup.NOT_APPLICABLE: "➖",
    Rollup.NO_DATA: "❔",
}

ROLLUP_MEANING: Final[dict[Rollup, str]] = {
    Rollup.SUPPORTED: "every test that could run here passed",
    Rollup.PARTIAL: "some tests pass; others fail, are unsupported, known issues or could not run",
    Rollup.FAILING: "tests ran and none passed",
    Rollup.UNSUPPORTED: "the backend or torch build lacks the feature",
    Rollup.NOT_APPLICABLE: "nothing could be judged here (needs hardware or packages absent here)",
    Rollup.NO_DATA: "no results: not run, not collected, or the cell failed before tests",
}

# Outcomes that show the feature working / broken on the column.
GOOD: Final[frozenset[Outcome]] = frozenset({Outcome.PASSED, Outcome.XPASSED, Outcome.FLAKY})
BAD: Final[frozenset[Outcome]] = frozenset({Outcome.FAILED, Outcome.ERROR, Outcome.TIMEOUT, Outcome.CRASHED})

_TAG_RE: Final = re.compile(r"^\[(unsupported|hardware|dependency|known-issue)(?: ([^\]]+))?\]\s*")
_PYTEST_SKIP_PREFIX: Final = re.compile(r"^(?:Skipped: |SKIP(?:PED)? ?)")


def classify_reason(reason: str | None) -> tuple[SkipClass, str | None, str]:
    """Split a skip/xfail reason into (class, link, text without the tag).

    Reasons come from the suites' helpers as `[class] text` or `[known-issue <url>] text`.
    pytest may prefix them with `Skipped: ` or a `file:line: ` location.
    """
    text = (reason or "").strip()
    text = _PYTEST_SKIP_PREFIX.sub("", text)
    # JUnit skip bodies look like "path.py:12: [hardware] ..."; drop the location.
    loc = re.match(r"^[^\s\[]+:\d+: ", text)
    if loc:
        text = text[loc.end() :]
    match = _TAG_RE.match(text)
    if not match:
        return SkipClass.UNCLASSIFIED, None, text
    skip_class = SkipClass(match.group(1))
    link = match.group(2).strip() if match.group(2) else None
    return skip_class, link, text[match.end() :]


def is_timeout_message(message: str | None) -> bool:
    """The suites' soft timeout and pytest-timeout both start their message with `Timeout`."""
    text = (message or "").lstrip()
    for prefix in ("Failed: ", "E   ", "Timeout"):
        if text.startswith(prefix) and prefix != "Timeout":
            text = text[len(prefix) :]
    return text.startswith("Timeout") or "Timeout (>" in text


def rollup(outcomes: Iterable[Outcome], skip_classes: Iterable[SkipClass] = ()) -> Rollup:
    """Roll the outcomes of one feature on one column into a state.

    `skip_classes` lists the class of every skipped test (same length as the skips in
    `outcomes`). Hardware/dependency/unclassified skips and not-run tests give no verdict.
    """
    counts: dict[Outcome, int] = {}
    for outcome in outcomes:
        counts[outcome] = counts.get(outcome, 0) + 1
    unsupported = sum(1 for c in skip_classes if c is SkipClass.UNSUPPORTED)
    return rollup_counts(counts, unsupported)


def rollup_counts(counts: Mapping[str, int], unsupported_skips: int) -> Rollup:
    """The roll-up from outcome counts; see docs/outcomes.md for the table."""
    total = sum(counts.values())
    good = sum(counts.get(o, 0) for o in GOOD)
    bad = sum(counts.get(o, 0) for o in BAD)
    known = counts.get(Outcome.XFAILED, 0)
    skipped = counts.get(Outcome.SKIPPED, 0)
    not_run = counts.get(Outcome.NOT_RUN, 0)
    if total == 0 or total == not_run:
        return Rollup.NO_DATA
    if good and (bad or known or skipped or not_run):
        return Rollup.PARTIAL
    if good:
        return Rollup.SUPPORTED
    if bad or known:
        return Rollup.FAILING
    if unsupported_skips:
        return Rollup.UNSUPPORTED
    return Rollup.NOT_APPLICABLE


def is_failure(outcome: Outcome | str) -> bool:
    return Outcome(outcome) in BAD
