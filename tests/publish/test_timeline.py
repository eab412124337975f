"""A test's timeline (harness/publish/timeline.py): the verdict rules (first bad, last good, fixed, flips
within one build; neutral outcomes), a test's timeline per column from the history, and the
transposition the page's history parts are made of."""

from __future__ import annotations

import pytest

from harness.publish.history import RunResults, RunSummary
from harness.publish.timeline import is_quiet, judge, timelines_for, transposed


@pytest.mark.parametrize(
    ("codes", "builds", "first_bad", "last_good", "fixed", "flips"),
    [
        ("ppff", "aaaa", 2, 1, None, {"a": 1}),
        ("ffpp", "aaaa", 0, None, 2, {"a": 1}),
        ("pfpf", "aaaa", 3, 2, None, {"a": 3}),
        ("pfpf", "aabb", 3, 2, None, {"a": 1, "b": 1}),  # a flip across a build change is not counted
        ("psKx-f", "aaaaaa", 5, 0, None, {"a": 1}),  # skips, known issues, xfails, absences are neutral
        ("ppkp", "aaaa", None, None, None, {}),
        ("????", "aaaa", None, None, None, {}),
    ],
)
def test_the_verdict_rules(codes, builds, first_bad, last_good, fixed, flips) -> None:
    verdict = judge(codes, list(builds))
    assert (verdict.first_bad, verdict.last_good, verdict.fixed, verdict.flips) == (first_bad, last_good, fixed, flips)


def _runs(*codes_per_run: dict[str, str], ids: tuple[str, ...] = ("a", "b")) -> tuple[list, list]:
    runs = [
        RunSummary(generated_at=f"2026-12-0{n + 1}T03:00:00Z", run=f"gh{n + 1}-1", columns=())
        for n in range(len(codes_per_run))
    ]
    results = [
        RunResults(run=r.run, ids=ids, outcomes=codes, durations={c: "H" * len(ids) for c in codes})
        for r, codes in zip(runs, codes_per_run, strict=True)
    ]
    return runs, results


def test_a_tests_timeline_per_column() -> None:
    runs, results = _runs({"cpu": "pp", "cu130": "pf"}, {"cpu": "fp"}, {"cpu": "pp", "cu130": "pp"})
    cpu, cu130 = timelines_for("a", runs, results)
    assert (cpu.column, cpu.codes, cu130.codes) == ("cpu", "pfp", "p?p"), "cu130 sent nothing in run 2"
    assert cpu.verdict.first_bad == 1 and cpu.verdict.fixed == 2
    assert cpu.points[1].outcome == "failed" and cu130.points[1].outcome == "not recorded"
    assert cpu.duration_trend()["median"] == pytest.approx(0.0355, rel=0.01)
    (b_cu130, b_cpu) = sorted(timelines_for("b", runs, results), key=lambda t: t.column, reverse=True)
    assert b_cu130.codes == "f?p" and b_cpu.codes == "ppp"
    assert timelines_for("zzz", runs, results) == []


def test_transposed_follows_each_runs_own_test_list() -> None:
    runs, results = _runs({"cpu": "pf"}, {"cpu": "pf"})
    results.append(RunResults(run="gh3-1", ids=("b", "c"), outcomes={"cpu": "xk"}, durations={"cpu": "12"}))
    runs.append(RunSummary(generated_at="2026-12-03T03:00:00Z", run="gh3-1", columns=()))
    codes, durations = transposed(["a", "b", "c"], runs, results, "cpu")
    assert codes == ["pp-", "ffx", "--k"] and durations == ["HH.", "HH1", "..2"]
    assert transposed(["a"], runs, results, "rocm") == (["???"], ["..."])
    assert is_quiet("ppsKx-?") and not is_quiet("pk") and not is_quiet("pf")


def test_nightlies_read_as_one_line_that_names_the_first_bad_and_last_good_nightly() -> None:
    """Each nightly is a column of its own (named by its date); the line across them, oldest nightly
    first, says which nightly broke the test, even when the nightlies ran in one run or several."""
    runs, results = _runs(
        {"cu130-2.16.0.dev20261128": "pp", "cu130-2.16.0.dev20261129": "pp"},
        {"cu130-2.16.0.dev20261130": "fp", "cu130-2.16.0.dev20261129": "pp"},
        {"cu130-2.16.0.dev20261201": "fp", "cpu": "pp"},
    )
    timelines = {t.column: t for t in timelines_for("a", runs, results)}
    line = timelines["cu130 nightlies"]
    assert line.codes == "ppff" and [p.build for p in line.points] == [
        "2.16.0.dev20261128", "2.16.0.dev20261129", "2.16.0.dev20261130", "2.16.0.dev20261201"
    ]  # fmt: skip
    assert line.points[line.verdict.first_bad].build == "2.16.0.dev20261130"
    assert line.points[line.verdict.last_good].build == "2.16.0.dev20261129"
    assert "cpu nightlies" not in timelines and "cu130-2.16.0.dev20261130" in timelines
    assert "cu130 nightlies" not in {t.column for t in timelines_for("a", runs[2:], results[2:])}  # one nightly
