"""A test's timeline across published runs, per column: when it broke (first bad, and the last good
run before it), whether it came back, how often it flipped within one torch build (flaky across
runs), and how its duration moved. Read from the history (harness/publish/history.py); shown by
`harness history TEST_ID` and, per test, by the page.

Nightlies are columns of their own, one per date (`cu130-2.16.0.dev20261130`); their results are
also read as one line per build, oldest nightly first (`cu130 nightlies`), so the verdict names the
first bad and the last good nightly.

Only a judged outcome counts for good and bad (GOOD and BAD of harness/outcomes.py); a skip, a
known issue, an xfail, not-run or a run without a result for the test are neutral: they neither
break a streak nor end one.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from harness.publish.history import (
    BAD_CODES,
    CODE_OUTCOMES,
    GOOD_CODES,
    NO_DURATION,
    UNRECORDED_CODE,
    RunResults,
    RunSummary,
    duration_of,
)
from harness.torch_build import version_sort_key


@dataclass(frozen=True, slots=True)
class Point:
    """One run's result of the test on one column."""

    run: str
    date: str
    build: str | None  # the column's torch build in that run
    code: str  # history.OUTCOME_CODES, '-' absent, '?' not recorded
    duration: float | None
    run_url: str | None = None

    @property
    def outcome(self) -> str:
        found = CODE_OUTCOMES.get(self.code)
        if found is not None:
            return "known issue" if self.code == "K" else found.value
        return "no result" if self.code == "-" else "not recorded"

    @property
    def bad(self) -> bool:
        return self.code in BAD_CODES

    @property
    def good(self) -> bool:
        return self.code in GOOD_CODES

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "date": self.date,
            "build": self.build,
            "outcome": self.outcome,
            "duration": self.duration,
            "run_url": self.run_url,
        }


@dataclass(frozen=True)
class Verdict:
    """What a column's run of outcome codes says (indexes into the points, oldest first)."""

    first_bad: int | None = None  # the start of the latest bad streak
    last_good: int | None = None  # the last good run before it (None: bad since the first judged run)
    fixed: int | None = None  # the first good run after it, when the streak ended
    flips: dict[str | None, int] = field(default_factory=dict)  # build -> good<->bad changes within it
    reruns: int = 0  # runs where it passed only on a rerun (flaky within the run)

    @property
    def flaky_builds(self) -> dict[str | None, int]:
        """Builds in which it went both ways (two flips or more): flaky across runs."""
        return {build: n for build, n in self.flips.items() if n >= 2}

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for name in ("first_bad", "last_good", "fixed"):
            if getattr(self, name) is not None:
                data[name] = getattr(self, name)
        if self.flips:
            data["flips"] = [[build, n] for build, n in self.flips.items()]
        if self.reruns:
            data["reruns"] = self.reruns
        return data


def judge(codes: str, builds: Sequence[str | None]) -> Verdict:
    """The verdict over one column's codes (oldest first) and the build of each run."""
    judged = [i for i, c in enumerate(codes) if c in BAD_CODES or c in GOOD_CODES]
    reruns = codes.count("k")
    if not judged:
        return Verdict(reruns=reruns)
    flips: dict[str | None, int] = {}
    for a, b in itertools.pairwise(judged):
        if builds[a] == builds[b] and (codes[a] in BAD_CODES) != (codes[b] in BAD_CODES):
            flips[builds[b]] = flips.get(builds[b], 0) + 1
    bad = [i for i in judged if codes[i] in BAD_CODES]
    if not bad:
        return Verdict(flips=flips, reruns=reruns)
    last_bad = bad[-1]
    position = judged.index(last_bad)
    start = position
    while start > 0 and codes[judged[start - 1]] in BAD_CODES:
        start -= 1
    first_bad = judged[start]
    last_good = judged[start - 1] if start > 0 else None
    fixed = judged[position + 1] if position + 1 < len(judged) else None
    return Verdict(first_bad=first_bad, last_good=last_good, fixed=fixed, flips=flips, reruns=reruns)


# A bad outcome, or a pass only on a rerun: the codes that give a timeline something to say.
NOTEWORTHY: Final = re.compile("[" + re.escape("".join(sorted(BAD_CODES | {"k"}))) + "]")


def is_quiet(codes: str) -> bool:
    """Nothing to say beyond the codes themselves: never bad, never passed on a rerun."""
    return NOTEWORTHY.search(codes) is None


@dataclass(frozen=True)
class ColumnTimeline:
    column: str
    points: tuple[Point, ...]
    verdict: Verdict

    @property
    def codes(self) -> str:
        return "".join(p.code for p in self.points)

    def durations(self) -> list[float]:
        return [p.duration for p in self.points if p.duration is not None]

    def duration_trend(self) -> dict[str, float] | None:
        values = self.durations()
        if not values:
            return None
        return {
            "first": values[0],
            "last": values[-1],
            "min": min(values),
            "median": statistics.median(values),
            "max": max(values),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "column": self.column,
            "points": [p.to_json() for p in self.points],
            "verdict": self.verdict.to_json(),
            "duration_trend": self.duration_trend(),
        }


def column_builds(runs: Sequence[RunSummary], column: str) -> list[str | None]:
    builds = []
    for run in runs:
        found = next((c for c in run.columns if c.id == column), None)
        builds.append(found.torch if found is not None and found.has_data else None)
    return builds


def timelines_for(test: str, runs: Sequence[RunSummary], results: Sequence[RunResults | None]) -> list[ColumnTimeline]:
    """The test's timeline on every column that ever had a result for it, oldest run first."""
    columns: dict[str, None] = {}
    positions: list[int | None] = []
    for found in results:
        index = None
        if found is not None:
            try:
                index = found.ids.index(test)
            except ValueError:
                index = None
            if index is not None:
                columns.update((c, None) for c, codes in found.outcomes.items() if codes[index] != "-")
        positions.append(index)
    timelines = []
    for column in columns:
        builds = column_builds(runs, column)
        points = []
        for run, found, index, build in zip(runs, results, positions, builds, strict=True):
            code, duration = UNRECORDED_CODE, None
            if found is not None and column in found.outcomes:
                code = "-" if index is None else found.outcomes[column][index]
                if index is not None and found.durations[column][index] != NO_DURATION:
                    duration = duration_of(found.durations[column][index])
            points.append(Point(run.run, run.generated_at, build, code, duration, run.run_url))
        codes = "".join(p.code for p in points)
        timelines.append(ColumnTimeline(column, tuple(points), judge(codes, builds)))
    return timelines + nightly_lines(timelines)


# A nightly's column: <backend>-<version>.devYYYYMMDD, maybe with a suffix (-cpu-only, a host).
_NIGHTLY_COLUMN: Final = re.compile(r"^(?P<line>.+?)-(?P<version>\d+(?:\.\d+)+\.dev\d{8})(?P<rest>-.+)?$")
NIGHTLY_SUFFIX: Final = " nightlies"


def nightly_lines(timelines: Sequence[ColumnTimeline]) -> list[ColumnTimeline]:
    """One timeline per build across its nightlies (each nightly a column of its own), ordered by the
    nightly's date: each nightly's latest judged result (else its latest result), so the verdict's
    first bad and last good are nightlies. Only where two nightlies or more have a result."""
    groups: dict[str, list[tuple[tuple, str, ColumnTimeline]]] = {}
    for timeline in timelines:
        match = _NIGHTLY_COLUMN.match(timeline.column)
        if match:
            line = match["line"] + (match["rest"] or "")
            groups.setdefault(line, []).append((version_sort_key(match["version"]), match["version"], timeline))
    lines = []
    for line, members in groups.items():
        points = []
        for _, version, timeline in sorted(members, key=lambda member: member[0]):
            judged = [p for p in timeline.points if p.good or p.bad]
            present = [p for p in timeline.points if p.code not in ("-", UNRECORDED_CODE)]
            pick = (judged or present or [None])[-1]
            if pick is not None:
                points.append(dataclasses.replace(pick, build=pick.build or version))
        if len(points) >= 2:
            codes = "".join(p.code for p in points)
            lines.append(ColumnTimeline(line + NIGHTLY_SUFFIX, tuple(points), judge(codes, [p.build for p in points])))
    return lines


def transposed(
    tests: Sequence[str], runs: Sequence[RunSummary], results: Sequence[RunResults | None], column: str
) -> tuple[list[str], list[str]]:
    """For every test of `tests`, its outcome codes and duration codes across the runs, on one column
    (what the page's per-test panel reads, for all tests at once). Runs of the same test list are
    read without a lookup per test."""
    n = len(tests)
    o_rows: list[str] = []
    d_rows: list[str] = []
    order: dict[tuple[str, ...], list[int] | None] = {}
    wanted = tuple(tests)
    for found in results:
        if found is None or column not in found.outcomes:
            o_rows.append(UNRECORDED_CODE * n)
            d_rows.append(NO_DURATION * n)
            continue
        if found.ids == wanted:
            o_rows.append(found.outcomes[column])
            d_rows.append(found.durations[column])
            continue
        mapping = order.get(found.ids)
        if found.ids not in order:
            position = found.position()
            mapping = order[found.ids] = [position.get(t, -1) for t in tests]
        assert mapping is not None
        o_src, d_src = found.outcomes[column], found.durations[column]
        o_rows.append("".join(o_src[i] if i >= 0 else "-" for i in mapping))
        d_rows.append("".join(d_src[i] if i >= 0 else NO_DURATION for i in mapping))
    if not o_rows:
        return [""] * n, [""] * n
    return ["".join(chars) for chars in zip(*o_rows, strict=True)], ["".join(c) for c in zip(*d_rows, strict=True)]
