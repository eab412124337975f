"""Run history (harness/publish/history.py): a run's summary round-trips through its JSON; a
malformed entry is refused with the reason; load_history leaves out bad files and names each one;
publishing the same run twice records it once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.model import ColumnState
from harness.outcomes import Outcome, Rollup
from harness.publish.history import HISTORY_SCHEMA, RunSummary, append_run, load_history, summarize
from tests.committed import releases_matrix, sample_matrices


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
    assert cpu.has_data and cpu.state is ColumnState.OK and cpu.failing == cpu.counts.get(Outcome.FAILED, 0) > 0
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
        ([], "not a history/1 summary"),
        ({**_valid(), "schema": "history/2"}, "not a history/1 summary"),
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
