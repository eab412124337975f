"""The outcome taxonomy: per-test outcomes, skip classes, scopes, feature states, their symbols
and meanings, and which outcomes are good and bad (defined once: the page takes them from its data).

What a result *means* lives here, so merge, render, diff and gate agree. How an outcome is decided
from a test's attempts is the merge wing's (harness/ingest/decide.py); how a feature's state is
rolled up from its tests too (harness/merge/rollup.py).
"""

from __future__ import annotations

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
    DISABLED = "disabled"  # switched off in the test source or by the producer (status="disabled", @Disabled)
    UNCLASSIFIED = "unclassified"  # a reason without a class tag


class Scope(StrEnum):
    """What a test speaks for. Only backend-scope tests decide a feature's state on a column."""

    BACKEND = "backend"
    HOST = "host"  # host-side logic (formats, API presence): judged only where nothing else ran
    MEASUREMENT = "measurement"  # records figures; shown as figures, never counted as a pass


class Rollup(StrEnum):
    SUPPORTED = "supported"
    PARTIAL = "partial"
    FAILING = "failing"
    UNSUPPORTED = "unsupported"
    NOT_APPLICABLE = "n/a"
    NO_DATA = "no-data"
    NOT_SHIPPED = "not-shipped"  # upstream does not build this variant for this torch release
    # the feature arrived in a later release, or belongs to another device family's builds
    NOT_IN_RELEASE = "not-in-release"


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
    Rollup.NOT_SHIPPED: "📦",
    Rollup.NOT_IN_RELEASE: "▫️",
}

ROLLUP_MEANING: Final[dict[Rollup, str]] = {
    Rollup.SUPPORTED: "every test that could run here passed",
    Rollup.PARTIAL: "some tests pass; others fail, are unsupported, known issues or could not run",
    Rollup.FAILING: "tests ran and none passed",
    Rollup.UNSUPPORTED: "the backend or torch build lacks the feature",
    Rollup.NOT_APPLICABLE: "nothing could be judged here (needs hardware or packages absent here)",
    Rollup.NO_DATA: "no results: not run, not collected, or the cell failed before tests",
    Rollup.NOT_SHIPPED: "upstream does not build this variant for this torch release: nothing to run, never scored",
    Rollup.NOT_IN_RELEASE: "the feature arrived in a later torch release, or belongs to another device family's "
    "builds: its tests may run, never scored",
}

# What the marks beside a state mean (the Markdown legend and the page's, from this one list).
LEGEND_NOTES: Final = (
    "judged without N host-side tests: tests of host-side logic (formats, API presence) ran and are counted, "
    "but they decide a row only where nothing else could run",
    "CPU only (a column's heading, or the page's CPU-ONLY tag): a CUDA, ROCm or XPU build run on a host "
    "without its device; its tests ran on the CPU, it is kept apart from the backend's own columns and is "
    "never the backend's verdict",
    "composite of N runs: a complete run with later reruns of some of its tests laid over it; each test "
    "keeps the run its result came from",
    "partial: a run of some tests only, with no complete run of its cell id to build on",
)

# Outcomes that show the feature working / broken on the column.
GOOD: Final[frozenset[Outcome]] = frozenset({Outcome.PASSED, Outcome.XPASSED, Outcome.FLAKY})
BAD: Final[frozenset[Outcome]] = frozenset({Outcome.FAILED, Outcome.ERROR, Outcome.TIMEOUT, Outcome.CRASHED})
