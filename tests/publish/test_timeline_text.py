"""harness/publish/render/timeline_text.py: a column's timeline as `harness history` prints it, from
timelines judged by publish/timeline.py (tests/publish/test_history.py runs the verb on a real history)."""

from __future__ import annotations

from harness.publish.render.timeline_text import describe
from harness.publish.timeline import NIGHTLY_SUFFIX, ColumnTimeline, Point, judge


def _timeline(column: str, codes: str, builds: list[str | None], durations: list[float | None]) -> ColumnTimeline:
    points = tuple(
        Point(run=f"gh{i}-1", date=f"2026-12-0{i}", build=b, code=c, duration=d)
        for i, (c, b, d) in enumerate(zip(codes, builds, durations, strict=True), start=1)
    )
    return ColumnTimeline(column, points, judge(codes, builds))


def test_a_test_broken_since_the_first_run_read_has_no_last_good() -> None:
    lines = describe(_timeline("cu130", "ff", ["2.15.0+cu130"] * 2, [0.0, 2.5]))
    assert lines == [
        "cu130  ✘✘  (oldest → newest; latest: failed)",
        "  broken: first bad  run gh1-1, torch 2.15.0+cu130, 2026-12-01",
        "           last good  none in the runs read (bad since the first judged run)",
        "  duration: <1 ms → 2.5 s (min <1 ms, median 1.2 s, max 2.5 s)",
    ]


def test_a_nightly_line_that_changed_once_across_builds_and_a_rerun() -> None:
    builds = ["2.16.0.dev20261201", "2.16.0.dev20261202", "2.16.0.dev20261202", "2.16.0.dev20261202"]
    lines = describe(_timeline("cu132" + NIGHTLY_SUFFIX, "pkf-", builds, [0.2, None, None, None]))
    assert lines[0] == f"cu132{NIGHTLY_SUFFIX}  ✔↻✘·  (oldest → newest; latest: no result)"
    assert lines[1].startswith("  broken: first bad nightly  run gh3-1, torch 2.16.0.dev20261202")
    assert lines[2].startswith("           last good nightly  run gh2-1")
    assert "  changed once: 1 flip(s) between good and bad within torch 2.16.0.dev20261202" in lines
    assert "  passed only on a rerun in 1 run(s)" in lines
    assert lines[-1] == "  duration: 200 ms → 200 ms (min 200 ms, median 200 ms, max 200 ms)"


def test_a_test_that_never_failed_and_a_known_issue() -> None:
    lines = describe(_timeline("cpu", "pK?", [None] * 3, [None] * 3))
    assert lines == ["cpu  ✔⚑   (oldest → newest; latest: not recorded)", "  never failed in the runs read"]
