from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.matrix_json import load_matrix
from harness.model import ColumnState
from harness.outcomes import Outcome, Rollup
from harness.publish.history import append_run, load_history
from harness.publish.render.markdown import GITHUB_SUMMARY_LIMIT
from tests.publishing_cells import write_base_and_new


@pytest.fixture(scope="module")
def matrices(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return write_base_and_new(tmp_path_factory.mktemp("publish"))


@pytest.fixture(autouse=True)
def _no_github_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)


def _history_files(site: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (site / "history").glob("*.json") if p.name != "index.json"}


def test_publish_writes_the_site_and_appends_history(matrices, tmp_path: Path, capsys) -> None:
    base, new = matrices
    site = tmp_path / "site"
    assert main(["publish", str(site), "--matrix", str(base)]) == 0
    for rel in ("index.html", "matrix.json", "badges/cpu.svg", "badges/matrix.svg", "history/index.json"):
        assert (site / rel).is_file(), rel
    first = _history_files(site)
    assert len(first) == 1

    # Publishing the same run again adds nothing; a new run adds one file and leaves the first intact.
    assert main(["publish", str(site), "--matrix", str(base)]) == 0
    assert _history_files(site) == first
    assert "already recorded" in capsys.readouterr().err
    assert main(["publish", str(site), "--matrix", str(new)]) == 0
    after = _history_files(site)
    assert len(after) == 2
    assert all(after[name] == data for name, data in first.items()), "an earlier summary was rewritten"

    index = json.loads((site / "history" / "index.json").read_text())
    assert [r["file"] for r in index["runs"]] == sorted(after)
    runs = load_history(site / "history")
    assert [[c.id for c in r.columns] for r in runs] == [["cpu"], ["cpu", "rocm"]]
    summary = runs[1].columns[0]
    assert summary.features["alpha"] in (Rollup.PARTIAL, Rollup.FAILING) and summary.counts[Outcome.FAILED] >= 1
    assert runs[1].columns[1].state is ColumnState.NO_DATA and runs[1].columns[1].score is None
    page = (site / "index.html").read_text(encoding="utf-8")
    assert '"trend":{"cpu":[[' in page, "the page carries the per-column trend"
    assert json.loads((site / "matrix.json").read_text())["columns"][1]["id"] == "rocm"


def test_github_run_ids_name_history_entries(matrices, tmp_path: Path, monkeypatch) -> None:
    base, _ = matrices
    monkeypatch.setenv("GITHUB_RUN_ID", "4242")
    monkeypatch.setenv("GITHUB_RUN_ATTEMPT", "2")
    entry = append_run(tmp_path / "history", load_matrix(base))
    assert entry is not None and entry.name.endswith("-gh4242-2.json")
    assert append_run(tmp_path / "history", load_matrix(base)) is None


def test_a_corrupt_history_entry_is_reported_and_skipped(matrices, tmp_path: Path, capsys) -> None:
    base, _ = matrices
    site = tmp_path / "site"
    (site / "history").mkdir(parents=True)
    (site / "history" / "20250101T000000.000000Z-broken.json").write_text("{oops", encoding="utf-8")
    assert main(["publish", str(site), "--matrix", str(base)]) == 0
    err = capsys.readouterr().err
    assert "20250101T000000.000000Z-broken.json: unreadable history entry" in err
    assert (site / "history" / "20250101T000000.000000Z-broken.json").read_text() == "{oops"


def test_job_summary_is_appended_within_the_limit(matrices, tmp_path: Path, monkeypatch, capsys) -> None:
    _, new = matrices
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert main(["publish", str(tmp_path / "site"), "--matrix", str(new), "--page-url", "https://example.org/m/"]) == 0
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# earlier step\n") and "## PyTorch compatibility matrix" in text
    assert "alpha/test_a.py::test_regress" in text and "Full matrix: https://example.org/m/" in text

    # A summary file that is nearly full gets only what fits: the whole file stays <= 1 MiB.
    summary.write_text("x" * (GITHUB_SUMMARY_LIMIT - 3000), encoding="utf-8")
    assert main(["publish", str(tmp_path / "site2"), "--matrix", str(new)]) == 0
    assert summary.stat().st_size <= GITHUB_SUMMARY_LIMIT
    assert summary.stat().st_size > GITHUB_SUMMARY_LIMIT - 3000


def test_bad_matrix_exits_4_and_writes_nothing(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "m.json"
    bad.write_text("[]", encoding="utf-8")
    assert main(["publish", str(tmp_path / "site"), "--matrix", str(bad)]) == 4
    assert not (tmp_path / "site").exists()
