"""Text symbols for outcomes and states where no colour emoji can be counted on: the page and the
terminal (the Markdown summary uses emoji, harness/outcomes.py)."""

from __future__ import annotations

from typing import Final

from harness.outcomes import Outcome, Rollup

# The page uses text symbols that common fonts (DejaVu, Liberation) draw: the emoji of the
# Markdown summary need a colour-emoji font that many CI browsers and servers lack.
PAGE_OUTCOME_SYMBOLS: Final[dict[Outcome, str]] = {
    Outcome.PASSED: "✔",
    Outcome.FAILED: "✘",
    Outcome.ERROR: "‼",
    Outcome.SKIPPED: "»",
    Outcome.XFAILED: "✗",
    Outcome.XPASSED: "★",
    Outcome.FLAKY: "↻",
    Outcome.TIMEOUT: "◷",
    Outcome.CRASHED: "☠",
    Outcome.NOT_RUN: "○",
}
PAGE_STATE_SYMBOLS: Final[dict[Rollup, str]] = {
    Rollup.SUPPORTED: "✔",
    Rollup.PARTIAL: "◐",
    Rollup.FAILING: "✘",
    Rollup.UNSUPPORTED: "⊘",
    Rollup.NOT_APPLICABLE: "–",
    Rollup.NO_DATA: "?",
    Rollup.NOT_SHIPPED: "∅",
    Rollup.NOT_IN_RELEASE: "◌",
}
