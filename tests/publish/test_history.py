"""Per-test history: the history/2 format, its reading of history/1 entries, the timeline verdict
(first bad, last good, flips within a build) and `harness history TEST_ID`, on the real sample cells."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.matrix_json import load_matrix
from harness.publish.history import (
    HISTORY_SCHEMA,
    append_run,
    duration_code,
    duration_of,
    load_history,
    load_results,
)
from harness.publish.timeline import judge, timelines_for
from tests.publishing_cells import REGRESSED, write_base_and_new

STABLE = "alpha/test_a.py::test_stable"


@pytest.fixture(scope="module")
def matrices(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return write_base_and_new(tmp_path_factory.mktemp("history"))


@pytest.fixture
def three_runs(matrices, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """base (the test passes), new (it fails), base again (passes): published as GitHub runs 11, 12, 13."""
    base, new = matrices
    history = tmp_path / "history"
    monkeypatch.setenv("GITHUB_SERVER_URL", "https://github.com")
    monkeypatch.setenv("GITHUB_REPOSITORY", "torch-compat/torch-compat")
    for run, path in ((11, base), (12, new), (13, base)):
        monkeypatch.setenv("GITHUB_RUN_ID", str(run))
        assert append_run(history, load_matrix(path)) is not None
    return history


def test_a_run_adds_its_summary_and_per_test_results_once(three_runs: Path) -> None:
    summaries = sorted(p.name for p in three_runs.glob("*.json") if p.name != "index.json")
    assert [s.rsplit("-", 2)[-2:] for s in summaries] == [["gh11", "1.json"], ["gh12", "1.json"], ["gh13", "1.json"]]
    per_test = sorted(p.name for p in (three_runs / "tests").iterdir())
    # one results file per run; the id list is shared by runs of the same tests (base twice)
    assert len([n for n in per_test if n.startswith("ids-")]) == 2 and len(per_test) == 5
    summary = json.loads((three_runs / summaries[0]).read_text())
    assert summary["schema"] == HISTORY_SCHEMA and summary["results"] == f"tests/{summaries[0]}"
    assert summary["run_url"] == "https://github.com/torch-compat/torch-compat/actions/runs/11"
    results = json.loads((three_runs / summary["results"]).read_text())
    ids = json.loads((three_runs / results["ids"]).read_text())["ids"]
    codes = results["columns"]["cpu"]["outcomes"]
    assert len(codes) == len(ids) and codes[ids.index(REGRESSED)] == "p" and codes[ids.index(STABLE)] == "p"
    assert codes[ids.index("beta/test_b.py::test_beta_known")] == "x"


def test_timeline_of_a_test_that_broke_and_came_back(three_runs: Path) -> None:
    runs = load_history(three_runs)
    (cpu,) = timelines_for(REGRESSED, runs, load_results(three_runs, runs))
    assert cpu.column == "cpu" and cpu.codes == "pfp"
    verdict = cpu.verdict
    assert (verdict.first_bad, verdict.last_good, verdict.fixed) == (1, 0, 2)
    assert cpu.points[1].run == "gh12-1" and cpu.points[1].build == "2.13.0+cpu"
    assert verdict.flaky_builds == {"2.13.0+cpu": 2}


def test_history_verb_prints_first_bad_last_good_and_flips(three_runs: Path, capsys) -> None:
    assert main(["history", REGRESSED, "--history", str(three_runs)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{REGRESSED}: 3 run(s), ")
    assert out[1].startswith("cpu  ✔✘✔  (oldest → newest; latest: passed)")
    assert out[2].startswith("  was broken: first bad  run gh12-1, torch 2.13.0+cpu, ")
    assert out[2].endswith("(https://github.com/torch-compat/torch-compat/actions/runs/12)")
    assert out[3].startswith("           last good  run gh11-1, torch 2.13.0+cpu, ")
    assert out[4].startswith("           fixed in   run gh13-1, torch 2.13.0+cpu, ")
    assert out[5] == "  flaky across runs: 2 flip(s) between good and bad within torch 2.13.0+cpu"
    assert out[6].startswith("  duration: ")
    assert main(["history", STABLE, "--history", str(three_runs), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [p["outcome"] for p in data["columns"][0]["points"]] == ["passed"] * 3
    assert data["columns"][0]["verdict"] == {}


def test_history_verb_refuses_what_it_cannot_answer(three_runs: Path, tmp_path: Path, capsys) -> None:
    assert main(["history", REGRESSED[:-1], "--history", str(three_runs)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"harness: error: {REGRESSED[:-1]}: no result in the 3 run(s) with per-test results")
    assert f"did you mean {REGRESSED}" in err and err.count("\n") == 1
    assert main(["history", REGRESSED, "--history", str(tmp_path / "nowhere")]) == 4
    assert "no history folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["history", REGRESSED, "--history", str(tmp_path / "empty")]) == 4
    assert "no published run recorded here" in capsys.readouterr().err
    assert main(["history", REGRESSED, "--history", str(three_runs), "--column", "rocm"]) == 2
    assert "--column rocm: no result" in capsys.readouterr().err


def test_entries_from_before_per_test_results_are_still_read(three_runs: Path) -> None:
    """A history/1 summary (no results) keeps its trend point; its run is 'not recorded' per test."""
    old = {
        "schema": "history/1",
        "generated_at": "2026-01-01T00:00:00Z",
        "run": "gh1-1",
        "columns": [{"id": "cpu", "backend": "cpu", "state": "ok", "counts": {"passed": 3}, "torch": "2.12.0+cpu"}],
    }
    (three_runs / "20200101T000000.000000Z-gh1-1.json").write_text(json.dumps(old))
    runs = load_history(three_runs)
    assert [r.run for r in runs] == ["gh1-1", "gh11-1", "gh12-1", "gh13-1"] and runs[0].results is None
    results = load_results(three_runs, runs)
    assert results[0] is None
    (cpu,) = timelines_for(REGRESSED, runs, results)
    assert cpu.codes == "?pfp" and cpu.verdict.first_bad == 2


def test_a_hostile_summary_cannot_point_outside_the_history(three_runs: Path) -> None:
    hostile = {"schema": HISTORY_SCHEMA, "run": "gh9-1", "columns": [], "results": "../../../etc/passwd"}
    (three_runs / "20991231T000000.000000Z-gh9-1.json").write_text(json.dumps(hostile))
    problems: list[str] = []
    runs = load_history(three_runs, problems=problems)
    assert [r.run for r in runs] == ["gh11-1", "gh12-1", "gh13-1"]
    assert "is not a file under history/" in problems[0]


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


def test_durations_keep_a_quarter_step_on_a_log_scale() -> None:
    for seconds in (0.001, 0.037, 0.5, 3.0, 42.0, 600.0):
        back = duration_of(duration_code(seconds))
        assert back is not None and abs(back - seconds) / seconds < 0.125
    assert duration_of(duration_code(None)) is None and duration_of(duration_code(0.0)) == 0.0
    assert duration_of(duration_code(1e6)) == duration_of(duration_code(2e6)), "clamped at the top"
