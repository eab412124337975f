"""Run history (harness/publish/history.py): a run's summary round-trips through its JSON; a
malformed entry is refused with the reason; load_history leaves out bad files and names each one;
publishing the same run twice records it once. Per-test history: the history/2 format, its reading
of history/1 entries, the timeline verdict (first bad, last good, flips within a build) and
`harness history TEST_ID`, on the real sample cells."""

from __future__ import annotations

import base64
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.matrix_json import load_matrix
from harness.model import ColumnState
from harness.outcomes import Outcome, Rollup
from harness.publish.history import (
    HISTORY_SCHEMA,
    KEYFRAME_EVERY,
    RESULTS_SCHEMA,
    RESULTS_SCHEMA_V1,
    RunSummary,
    append_codes,
    append_run,
    decode_indices,
    duration_code,
    duration_of,
    encode_indices,
    find_index,
    load_history,
    load_results,
    load_test_results,
    result_codes,
    summarize,
)
from harness.publish.timeline import timelines_for
from tests.committed import releases_matrix, sample_matrices
from tests.publishing_cells import REGRESSED, write_base_and_new

STABLE = "alpha/test_a.py::test_stable"


@pytest.fixture(autouse=True)
def _not_in_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_RUN_ID", raising=False)
    monkeypatch.delenv("GITHUB_RUN_ATTEMPT", raising=False)


def test_a_summary_round_trips() -> None:
    for matrix in (releases_matrix(), sample_matrices()[1]):
        summary = summarize(matrix)
        data = json.loads(json.dumps(summary.to_json()))
        assert data["schema"] == HISTORY_SCHEMA
        assert RunSummary.from_json(data) == summary


def test_a_summary_holds_what_the_trend_needs() -> None:
    matrix = sample_matrices()[1]
    summary = summarize(matrix)
    assert summary.generated_at == matrix.generated_at and len(summary.run) == 12
    cpu, rocm = summary.columns
    assert cpu.has_data and cpu.state is ColumnState.OK and cpu.failures == cpu.counts.get(Outcome.FAILED, 0) > 0
    assert cpu.features["alpha"] is matrix.cells["alpha"]["cpu"].state
    assert not rocm.has_data and rocm.score is None
    assert set(rocm.features.values()) == {Rollup.NO_DATA}


def test_the_run_key_is_the_github_run_when_there_is_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_RUN_ID", "123")
    monkeypatch.setenv("GITHUB_RUN_ATTEMPT", "2")
    assert summarize(releases_matrix()).run == "gh123-2"


def _valid() -> dict[str, Any]:
    return summarize(releases_matrix()).to_json()


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        ([], "not a history/2 summary"),
        ({**_valid(), "schema": "history/3"}, "not a history/2 summary"),
        ({**_valid(), "columns": {}}, "its columns are not a list"),
        ({**_valid(), "columns": [{"state": "ok"}]}, "a column is malformed (KeyError: 'id')"),
        ({**_valid(), "columns": [{"id": "c", "state": "great"}]}, "a column is malformed (ValueError: "),
        ({**_valid(), "columns": [{"id": "c", "state": "ok", "counts": {"passed": "many"}}]}, "a column is malformed"),
        ({**_valid(), "columns": ["c"]}, "a column is malformed"),
    ],
    ids=["list", "schema", "columns-type", "no-id", "bad-state", "bad-count", "column-text"],
)
def test_a_malformed_entry_is_refused_with_its_reason(data: Any, reason: str) -> None:
    with pytest.raises(ValueError) as caught:
        RunSummary.from_json(data)
    assert str(caught.value).startswith(reason)


def test_publishing_a_run_twice_records_it_once(tmp_path: Path) -> None:
    history = tmp_path / "history"
    first = append_run(history, releases_matrix())
    assert first is not None and first.parent == history
    assert append_run(history, releases_matrix()) is None
    assert append_run(history, sample_matrices()[1]) is not None
    index = json.loads((history / "index.json").read_text(encoding="utf-8"))
    assert index["schema"] == HISTORY_SCHEMA and len(index["runs"]) == 2
    assert index["runs"][0]["file"] == first.name
    assert [r.run for r in load_history(history)] == [e["run"] for e in index["runs"]]


def test_load_history_leaves_out_bad_files_and_names_them(tmp_path: Path) -> None:
    history = tmp_path / "history"
    good = append_run(history, releases_matrix())
    assert good is not None
    bad_json = history / "20261201T000001.000000Z-badjson.json"
    bad_json.write_text("{", encoding="utf-8")
    malformed = history / "20261201T000002.000000Z-malformed.json"
    malformed.write_text(json.dumps({"schema": HISTORY_SCHEMA, "columns": 3}), encoding="utf-8")
    (history / "notes.json").write_text("not a summary, not named like one", encoding="utf-8")
    problems: list[str] = []
    runs = load_history(history, problems=problems)
    assert [r.run for r in runs] == [summarize(releases_matrix()).run]
    assert len(problems) == 2
    assert problems[0].startswith(f"{bad_json}: unreadable history entry (")
    assert problems[1] == f"{malformed}: unreadable history entry (its columns are not a list)"
    assert load_history(history) == runs, "without a list to report into, bad files are still left out"


def test_load_history_keeps_the_newest_and_needs_no_dir(tmp_path: Path) -> None:
    assert load_history(tmp_path / "none") == []
    history = tmp_path / "history"
    append_run(history, releases_matrix())
    append_run(history, sample_matrices()[1])
    assert [r.run for r in load_history(history, limit=1)] == [summarize(sample_matrices()[1]).run]


# -- per-test history -----------------------------------------------------------------------------
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


def test_durations_keep_a_quarter_step_on_a_log_scale() -> None:
    for seconds in (0.001, 0.037, 0.5, 3.0, 42.0, 600.0):
        back = duration_of(duration_code(seconds))
        assert back is not None and abs(back - seconds) / seconds < 0.125
    assert duration_of(duration_code(None)) is None and duration_of(duration_code(0.0)) == 0.0
    assert duration_of(duration_code(1e6)) == duration_of(duration_code(2e6)), "clamped at the top"


# -- history-results/2: what changed since the run before -----------------------------------------
def _nightlies(count: int) -> list[tuple[RunSummary, list[str], dict[str, str], dict[str, str]]]:
    """`count` runs of a real matrix's codes, each changing a few tests (an outcome flip, a duration
    step) from the one before; a column that comes for runs 10-14, a test that goes at run 20 (new
    ids: a keyframe), every test of one column changed at run 25. Enough runs to pass KEYFRAME_EVERY."""
    matrix = releases_matrix()
    summary = summarize(matrix)
    ids, outcomes, durations = result_codes(matrix)
    first = next(iter(outcomes))
    runs = []
    for k in range(count):
        n = len(ids)
        o = {c: list(v) for c, v in outcomes.items()}
        d = {c: list(v) for c, v in durations.items()}
        for column in o:
            index = (k * 7 + len(column)) % n
            o[column][index] = "f" if o[column][index] != "f" else "p"
            d[column][(k * 3) % n] = "ABC"[k % 3]
        outcomes = {c: "".join(v) for c, v in o.items()}
        durations = {c: "".join(v) for c, v in d.items()}
        if k == 25:  # every test of one column flaky: a delta column would outweigh its codes
            outcomes[first] = "k" * len(outcomes[first])
        if k == 20:
            ids, outcomes, durations = (
                ids[:-1],
                {c: v[:-1] for c, v in outcomes.items()},
                {c: v[:-1] for c, v in durations.items()},
            )
        these_o, these_d = dict(outcomes), dict(durations)
        if 10 <= k < 15:
            these_o["extra"], these_d["extra"] = outcomes[first][::-1], durations[first][::-1]
        at = dataclasses.replace(
            summary, run=f"n{k:03d}", generated_at=f"2026-{1 + k // 28:02d}-{1 + k % 28:02d}T03:00:00Z"
        )
        runs.append((at, list(ids), these_o, these_d))
    return runs


def _publish(history: Path, runs, schema: str) -> None:
    for summary, ids, outcomes, durations in runs:
        assert append_codes(history, summary, ids, outcomes, durations, results_schema=schema) is not None


def _answers(history: Path, tests, capsys) -> list[str]:
    out = []
    for test in tests:
        assert main(["history", test, "--history", str(history), "--runs", "365", "--format", "json"]) == 0
        out.append(capsys.readouterr().out)
    return out


def test_the_delta_format_gives_the_same_answers_as_the_old_one(tmp_path: Path, capsys) -> None:
    runs = _nightlies(KEYFRAME_EVERY + 25)
    old, new = tmp_path / "old", tmp_path / "new"
    _publish(old, runs, RESULTS_SCHEMA_V1)
    _publish(new, runs, RESULTS_SCHEMA)
    documents = [json.loads(p.read_text()) for p in sorted((new / "tests").glob("2*.json"))]
    kinds = ["key" if d["base"] is None else "delta" for d in documents]
    assert {d["schema"] for d in documents} == {RESULTS_SCHEMA}
    assert kinds[0] == "key" and kinds[20] == "key", "the first run and new test ids are keyframes"
    assert kinds[20 + KEYFRAME_EVERY] == "key", "a keyframe every KEYFRAME_EVERY runs"
    assert kinds.count("delta") == len(runs) - 3 and max(d["depth"] for d in documents) == KEYFRAME_EVERY - 1
    column = next(iter(runs[0][2]))
    assert "at" in documents[5]["columns"][column] and "at" not in documents[10]["columns"]["extra"]
    assert "at" in documents[11]["columns"]["extra"], "a column the base has is a delta"
    assert "at" not in documents[25]["columns"][column] and "at" in documents[26]["columns"][column]
    size = lambda folder: sum(p.stat().st_size for p in (folder / "tests").glob("2*.json"))  # noqa: E731
    assert size(new) < size(old)
    for window in (None, 7, 33):  # from a keyframe, and starting in the middle of a chain
        old_runs, new_runs = load_history(old, limit=window), load_history(new, limit=window)
        assert [r.run for r in old_runs] == [r.run for r in new_runs]
        assert load_results(new, new_runs) == load_results(old, old_runs)
    all_runs, old_runs = load_history(new, limit=None), load_history(old, limit=None)
    full = load_results(new, all_runs)
    ids = runs[0][1]
    for test in ids:
        expected = timelines_for(test, all_runs, full)
        assert timelines_for(test, all_runs, load_test_results(new, all_runs, test)) == expected
        assert timelines_for(test, old_runs, load_test_results(old, old_runs, test)) == expected
    broke = [test for test in ids if any(t.verdict.first_bad is not None for t in timelines_for(test, all_runs, full))]
    assert len(broke) > 5, "the runs compared hold tests that broke"
    asked = [*broke[:4], ids[-1]]  # the last test is gone from run 20 on
    assert _answers(new, asked, capsys) == _answers(old, asked, capsys)


def test_an_old_sites_history_is_read_and_continued(tmp_path: Path, capsys) -> None:
    """A site whose history-results/1 files came before: new runs are deltas against them, and
    every answer is the one an all-old history gives."""
    runs = _nightlies(12)
    old, mixed = tmp_path / "old", tmp_path / "mixed"
    _publish(old, runs, RESULTS_SCHEMA_V1)
    _publish(mixed, runs[:6], RESULTS_SCHEMA_V1)
    _publish(mixed, runs[6:], RESULTS_SCHEMA)
    documents = [json.loads(p.read_text()) for p in sorted((mixed / "tests").glob("2*.json"))]
    assert [d["schema"] for d in documents] == [RESULTS_SCHEMA_V1] * 6 + [RESULTS_SCHEMA] * 6
    assert documents[6]["base"] == f"tests/{sorted((mixed / 'tests').glob('2*.json'))[5].name}"
    assert load_results(mixed, load_history(mixed)) == load_results(old, load_history(old))
    tests = runs[0][1][:3]
    assert _answers(mixed, tests, capsys) == _answers(old, tests, capsys)


def test_a_broken_delta_is_reported_and_the_other_runs_still_read(tmp_path: Path) -> None:
    history = tmp_path / "history"
    nightlies = _nightlies(6)
    _publish(history, nightlies, RESULTS_SCHEMA)
    files = sorted((history / "tests").glob("2*.json"))
    loop = json.loads(files[3].read_text())
    files[3].write_text(json.dumps({**loop, "base": f"tests/{files[3].name}"}))
    past = json.loads(files[4].read_text())
    column = next(iter(past["columns"]))
    count = len(past["columns"][column]["outcomes"])
    past["columns"][column]["at"] = encode_indices([10**6] * count)
    files[4].write_text(json.dumps(past))
    runs = load_history(history)
    for results in (
        load_results(history, runs, problems := []),
        load_test_results(history, runs, nightlies[0][1][0], problems2 := []),
    ):
        assert [r is None for r in results] == [False, False, False, True, True, True], "run 5 builds on the broken 4"
        assert results[0] is not None
    assert "is not an earlier results file" in problems[0] and "unreadable per-test history" in problems[0]
    assert len(problems) == 3 and len(problems2) == 3


def test_a_deltas_indices_round_trip_and_one_is_found_where_it_is() -> None:
    indices = [0, 1, 255, 256, 65_536, 16_777_216 + 1, 50_000]
    packed = base64.b64decode(encode_indices(indices))
    assert list(decode_indices(packed)) == indices
    for k, index in enumerate(indices):
        assert find_index(packed, index) == k
    # 2 = 02 00 00 00 is nowhere; 16,777,216 = 00 00 00 01 appears across 0's and 1's bytes only
    assert find_index(packed, 2) == -1 and find_index(packed, 16_777_216) == -1
    assert find_index(base64.b64decode(encode_indices([3, 9, 3])), 3) == 2, "the last, as applying keeps it"


# -- history records what the page shows (issue 42) ------------------------------------------------
def _restate(source: Path, dest: Path, **changes: Any) -> Path:
    import shutil

    shutil.copytree(source, dest)
    manifest = json.loads((dest / "manifest.json").read_text())
    manifest.update(changes)
    (dest / "manifest.json").write_text(json.dumps(manifest))
    return dest


class _Workstation:
    """A results dir driven as a user drives it: complete runs, partial reruns (some of which ran
    nothing or crashed: never laid over), forgotten runs, publications. The runs are the committed
    sample cells restated as runs of one cell id at increasing times."""

    def __init__(self, root: Path, seed: int) -> None:
        import random

        from tests.committed import SAMPLES

        self.rng = random.Random(seed)
        self.results, self.history = root / "results", root / "site" / "history"
        self.results.mkdir(parents=True)
        self.sources = [SAMPLES / "publishing-base", SAMPLES / "publishing-new"]
        self.n = 0

    def _next(self, **changes: Any) -> Path:
        self.n += 1
        at = f"2026-12-{1 + self.n // 24:02d}T{self.n % 24:02d}:00:00Z"
        source = self.rng.choice(self.sources)
        return _restate(source, self.results / f"run{self.n}", run_id=f"r{self.n}", started_at=at, **changes)

    def run(self) -> None:
        self._next()

    def rerun(self) -> None:
        ended = self.rng.choice(
            [{}, {}, {"status": "crashed"}, {"status": "not-started", "exit": {"code": 5, "meaning": "no tests"}}]
        )
        self._next(selection={"keyword": "test_regress or test_fixed"}, **ended)

    def forget(self) -> None:
        from harness.merge import inventory

        runs = inventory.list_runs(self.results)  # the newest often: the run just made was a mistake
        if runs:
            chosen = runs[-1] if self.rng.random() < 0.5 else self.rng.choice(runs)
            inventory.forget(self.results, [chosen.manifest.run_id])

    def publish(self) -> Any:
        from harness.merge import inventory
        from harness.merge.combine import merge_cell_dirs

        runs = inventory.find_runs(self.results)
        if not runs:
            return None
        matrix = merge_cell_dirs(runs, jobs=1)
        append_run(self.history, matrix)  # what `harness publish` records, beside the page it draws
        return matrix


def _agree(station: _Workstation, matrix: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The newest history entry holds every result the page shows, and `harness history` says so."""
    from harness.publish.history import CODE_OUTCOMES, outcome_code

    runs = load_history(station.history, limit=None)
    (latest,) = load_results(station.history, runs[-1:])
    ids, outcomes, _ = result_codes(matrix)
    assert latest is not None and latest.ids == tuple(ids) and dict(latest.outcomes) == outcomes
    assert main(["history", REGRESSED, "--history", str(station.history), "--format", "json"]) == 0
    told = json.loads(capsys.readouterr().out)
    for line in told["columns"]:
        result = next(r for row, r in matrix.results(line["column"]) if row.id == REGRESSED)
        code = outcome_code(result)
        assert line["points"][-1]["outcome"] == ("known issue" if code == "K" else CODE_OUTCOMES[code].value)


def test_a_forgotten_run_that_brings_a_column_back_is_recorded_again(tmp_path: Path, capsys) -> None:
    """Run A, publish, run B, publish, forget B, publish: the page shows A again, and so must history
    (its key was recorded before: "already recorded" would leave B as the latest)."""
    station = _Workstation(tmp_path, seed=0)
    station.run()
    _agree(station, station.publish(), capsys)
    station.run()
    _agree(station, station.publish(), capsys)
    from harness.merge import inventory

    inventory.forget(station.results, [f"r{station.n}"])
    _agree(station, station.publish(), capsys)
    assert len(load_history(station.history, limit=None)) == 3
    assert station.publish() is not None and len(load_history(station.history, limit=None)) == 3, "the same: once"


def test_a_partial_rerun_is_a_new_publication(tmp_path: Path, capsys) -> None:
    """Issue 42: the key was each column's base run, so `run --test X` then publish said "already
    recorded" and `harness history X` kept the old result the page no longer showed."""
    station = _Workstation(tmp_path, seed=1)
    station.run()
    first = station.publish()
    station._next(selection={"keyword": "test_regress"})
    second = station.publish()
    assert second.columns[0].composite and summarize(first).run != summarize(second).run
    assert len(load_history(station.history, limit=None)) == 2
    _agree(station, second, capsys)


@pytest.mark.parametrize("seed", range(8))
def test_history_agrees_with_the_page_after_any_sequence(tmp_path: Path, seed: int, capsys) -> None:
    """A property over seeded random sequences of runs, reruns, forgets and publishes."""
    station = _Workstation(tmp_path, seed)
    station.run()
    steps = [station.run, station.rerun, station.rerun, station.forget, station.publish, station.publish]
    for _ in range(14):
        step = station.rng.choice(steps)
        matrix = step()
        if step == station.publish and matrix is not None:
            _agree(station, matrix, capsys)
    matrix = station.publish()
    if matrix is not None:
        _agree(station, matrix, capsys)
