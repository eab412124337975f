"""One test's timeline on one column as text (`harness history`; the page draws the same timeline)."""

from __future__ import annotations

from typing import Final

from harness.publish.history import CODE_OUTCOMES
from harness.publish.render.symbols import PAGE_OUTCOME_SYMBOLS
from harness.publish.timeline import NIGHTLY_SUFFIX, ColumnTimeline, Point

_SYMBOL: Final = {"K": "⚑", "-": "·", "?": " "}


def _symbol(point: Point) -> str:
    if point.code in _SYMBOL:
        return _SYMBOL[point.code]
    return PAGE_OUTCOME_SYMBOLS[CODE_OUTCOMES[point.code]]


def _where(point: Point) -> str:
    build = f"torch {point.build}" if point.build else "torch unknown"
    return f"run {point.run}, {build}, {point.date}" + (f" ({point.run_url})" if point.run_url else "")


def _seconds(value: float) -> str:
    if value == 0:
        return "<1 ms"  # the scale's first step holds everything under a millisecond
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.1f} s"


def describe(timeline: ColumnTimeline) -> list[str]:
    """The column's symbols run by run, when it broke (first bad, last good, fixed), its flips within one
    torch build, reruns and how its duration moved."""
    points, verdict = timeline.points, timeline.verdict
    lines = [
        f"{timeline.column}  {''.join(_symbol(p) for p in points)}  (oldest → newest; latest: {points[-1].outcome})"
    ]
    if verdict.first_bad is not None:
        state = "broken" if verdict.fixed is None else "was broken"
        what = " nightly" if timeline.column.endswith(NIGHTLY_SUFFIX) else ""
        lines.append(f"  {state}: first bad{what}  {_where(points[verdict.first_bad])}")
        if verdict.last_good is not None:
            lines.append(f"           last good{what}  {_where(points[verdict.last_good])}")
        else:
            lines.append("           last good  none in the runs read (bad since the first judged run)")
        if verdict.fixed is not None:
            lines.append(f"           fixed in   {_where(points[verdict.fixed])}")
    else:
        lines.append("  never failed in the runs read")
    for build, flips in verdict.flips.items():
        kind = "flaky across runs" if flips >= 2 else "changed once"
        lines.append(f"  {kind}: {flips} flip(s) between good and bad within torch {build or 'unknown'}")
    if verdict.reruns:
        lines.append(f"  passed only on a rerun in {verdict.reruns} run(s)")
    trend = timeline.duration_trend()
    if trend:
        lines.append(
            f"  duration: {_seconds(trend['first'])} → {_seconds(trend['last'])} "
            f"(min {_seconds(trend['min'])}, median {_seconds(trend['median'])}, max {_seconds(trend['max'])})"
        )
    return lines
