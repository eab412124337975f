from __future__ import annotations

import json
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from harness.cli import main
from harness.matrix_json import load_matrix
from harness.model import ColumnState
from harness.outcomes import Outcome, Rollup
from harness.publish.history import append_run, load_history
from harness.publish.render.markdown import GITHUB_SUMMARY_LIMIT
from tests.publishing_cells import REGRESSED, write_base_and_new


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


def test_publish_diffs_against_the_matrix_the_site_held(matrices, tmp_path: Path, monkeypatch, capsys) -> None:
    base, new = matrices
    site = tmp_path / "site"
    assert main(["publish", str(site), "--matrix", str(base)]) == 0
    assert not (site / "diff.json").exists(), "the first publication has nothing to compare with"
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert main(["publish", str(site), "--matrix", str(new), "--page-url", "https://example.org/m/"]) == 0
    assert "diff: 1 new regression(s) since " in capsys.readouterr().err
    diff = json.loads((site / "diff.json").read_text())
    assert diff["regressions"] == 1 and diff["columns_added"][0]["id"] == "rocm"
    (cpu,) = diff["columns"]
    assert [c["test"] for c in cpu["changes"]["newly_failing"]] == [REGRESSED]
    assert f"`{REGRESSED}` (passed → failed)" in (site / "diff.md").read_text()
    assert "Since the previous publication (" in summary.read_text()
    assert "1 new regression(s), 1 test(s) newly passing (https://example.org/m/diff.md)" in summary.read_text()
    # --no-baseline: no diff, and the old one does not pass for this run's
    assert main(["publish", str(site), "--matrix", str(new), "--no-baseline"]) == 0
    assert not (site / "diff.json").exists() and not (site / "diff.md").exists()


class _Site(ThreadingHTTPServer):
    """A Pages stand-in: serves a folder; /broken/ answers 500."""


def _serve(root: Path):
    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def do_GET(self):
            if self.path.startswith("/broken/"):
                self.send_error(500, "boom")
                return
            super().do_GET()

        def log_message(self, *args):
            pass

    server = _Site(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_the_baseline_comes_from_the_published_site(matrices, tmp_path: Path, capsys) -> None:
    base, new = matrices
    published = tmp_path / "published"
    assert main(["publish", str(published), "--matrix", str(base), "--no-history"]) == 0
    server = _serve(tmp_path)
    url = f"http://127.0.0.1:{server.server_port}"
    try:
        site = tmp_path / "site"
        assert main(["publish", str(site), "--matrix", str(new), "--baseline", f"{url}/published/matrix.json"]) == 0
        assert json.loads((site / "diff.json").read_text())["regressions"] == 1
        capsys.readouterr()
        assert main(["publish", str(site), "--matrix", str(new), "--baseline", f"{url}/none/matrix.json"]) == 0
        assert "baseline: none at" in capsys.readouterr().err and not (site / "diff.json").exists()
        assert main(["publish", str(site), "--matrix", str(new), "--baseline", f"{url}/broken/matrix.json"]) == 4
        assert "HTTP 500" in capsys.readouterr().err
        # the gate takes the same URL; there a missing baseline is an error
        gate = ["gate", str(new), "--new-regressions", "--backend", "cpu", "--baseline"]
        assert main([*gate, f"{url}/published/matrix.json"]) == 1
        assert main([*gate, f"{url}/none/matrix.json"]) == 4
    finally:
        server.shutdown()


def test_a_large_matrix_is_published_split_and_with_a_split_page(matrices, tmp_path: Path, monkeypatch) -> None:
    from harness import matrix_json

    base, new = matrices
    site = tmp_path / "site"
    site.mkdir()
    matrix_json.write_matrix_gzip(load_matrix(new), site / "matrix.json.gz")  # an older site's whole matrix
    monkeypatch.setattr(matrix_json, "PART_BYTES", 500)
    assert main(["publish", str(site), "--matrix", str(new), "--inline-limit", "0"]) == 0
    index = json.loads((site / "matrix.json").read_text())
    assert "tests" not in index and len(index["parts"]) > 1 and index["schema_version"] == "1.5"
    assert sorted(p.name for p in (site / "matrix-parts").iterdir()) == sorted(
        Path(e["path"]).name for e in index["parts"]
    )
    assert not (site / "matrix.json.gz").exists(), "the split matrix.json replaces an older site's gzip"
    assert load_matrix(site / "matrix.json").to_json() == {**load_matrix(new).to_json(), "schema_version": "1.5"}
    # report, diff and gate read the split form as they read the whole one
    for form, path in (("whole", new), ("split", site / "matrix.json")):
        assert main(["report", str(path), "--format", "md", "-o", str(tmp_path / f"{form}.md")]) == 0
        assert main(["diff", str(base), str(path), "--format", "json", "-o", str(tmp_path / f"{form}.json")]) == 0
        assert main(["gate", str(path), "--new-regressions", "--baseline", str(path), "--backend", "cpu"]) == 0
        assert main(["gate", str(path), "--new-regressions", "--baseline", str(base), "--backend", "cpu"]) == 1
    assert (tmp_path / "split.md").read_text() == (tmp_path / "whole.md").read_text()
    assert (tmp_path / "split.json").read_text() == (tmp_path / "whole.json").read_text()
    parts = sorted(p.name for p in (site / "data").iterdir())
    assert parts and all(p.endswith(".json") for p in parts)
    page = (site / "index.html").read_text(encoding="utf-8")
    assert '"parts":null' in page and '"r0-0"' in page and "loads its tests from data/" in page
    # a smaller matrix later keeps its tests inside the page again, and data/ goes
    assert main(["publish", str(site), "--matrix", str(new)]) == 0
    assert not (site / "data").exists()


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_site_is_swapped_whole_and_keeps_what_it_does_not_write(matrices, tmp_path: Path) -> None:
    """A publication is built beside the site and swapped in: the previous folder is gone afterwards,
    files the harness does not write (a CNAME) stay, older versions' temp files are not taken over,
    and nothing but the site and its lock is left beside it."""
    base, new = matrices
    site = tmp_path / "site"
    assert main(["publish", str(site), "--matrix", str(base)]) == 0
    (site / "CNAME").write_text("matrix.example.org\n")
    (site / ".matrix.json.k3x9_a2b").write_text("left by a killed run of an older harness")
    inode = site.stat().st_ino
    assert main(["publish", str(site), "--matrix", str(new)]) == 0
    assert site.stat().st_ino != inode, "a new folder was switched in"
    assert (site / "CNAME").read_text() == "matrix.example.org\n"
    assert not (site / ".matrix.json.k3x9_a2b").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".harness-lock", "site"]


def test_a_rerun_of_a_published_matrix_keeps_its_diff(matrices, tmp_path: Path, capsys) -> None:
    """Killed after its switch, a publish is rerun with the site already holding its matrix: the
    diff against the publication before stays (never the matrix against itself)."""
    base, new = matrices
    site = tmp_path / "site"
    assert main(["publish", str(site), "--matrix", str(base)]) == 0
    assert main(["publish", str(site), "--matrix", str(new)]) == 0
    published = _files(site)
    capsys.readouterr()
    assert main(["publish", str(site), "--matrix", str(new)]) == 0
    assert "this matrix is published already; its diff is kept" in capsys.readouterr().err
    assert _files(site) == published
    assert f"`{REGRESSED}` (passed → failed)" in (site / "diff.md").read_text()


def test_a_site_that_cannot_be_written_is_exit_6_and_stays(matrices, tmp_path: Path, capsys) -> None:
    base, new = matrices
    site = tmp_path / "site"
    assert main(["publish", str(site), "--matrix", str(base)]) == 0
    (site / "history" / "tests").rename(tmp_path / "moved")
    (site / "history" / "tests").write_text("a file where the per-test folder should be")
    before = _files(site)
    capsys.readouterr()
    assert main(["publish", str(site), "--matrix", str(new)]) == 6
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"harness: error: cannot write {site}/history/tests") and ".harness-tmp-" not in err[-1]
    assert _files(site) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".harness-lock", "moved", "site"]


def test_a_site_path_that_is_a_file_is_exit_6_and_left_alone(matrices, tmp_path: Path, capsys) -> None:
    base, _ = matrices
    (tmp_path / "site").write_text("not a folder")
    assert main(["publish", str(tmp_path / "site"), "--matrix", str(base)]) == 6
    assert capsys.readouterr().err.strip().endswith(f"cannot write {tmp_path / 'site'}: it is a file, not a folder")
    assert (tmp_path / "site").read_text() == "not a folder"


def test_nothing_good_is_replaced_by_nothing(tmp_path: Path, capsys) -> None:
    """Issue 42: an empty matrix (a merge of a mistyped folder, every runner down) was published over a
    site with results, "Columns removed", a history entry appended. Refused (exit 1, one line), locally
    and in CI (a baseline by URL or path), unless --allow-empty."""
    from tests.committed import SAMPLES

    good, empty = tmp_path / "good.json", tmp_path / "empty.json"
    assert main(["merge", str(SAMPLES / "publishing-base"), "-o", str(good)]) == 0
    assert main(["merge", str(SAMPLES / "publishing-nodata"), "-o", str(empty)]) == 0
    site = tmp_path / "site"
    assert main(["publish", str(site), "--matrix", str(good)]) == 0
    before = {p: p.read_bytes() for p in site.rglob("*") if p.is_file()}
    capsys.readouterr()
    for extra in ([], ["--no-baseline"], ["--no-history"]):
        assert main(["publish", str(site), "--matrix", str(empty), *extra]) == 1
        err = capsys.readouterr().err
        (line,) = [text for text in err.splitlines() if text.startswith("harness: error:")]
        assert line.startswith(f"harness: error: {empty} has no column with results and the last publication (")
        assert "--allow-empty" in line
        assert {p: p.read_bytes() for p in site.rglob("*") if p.is_file()} == before, "the site as it was"
    fresh = tmp_path / "fresh"  # CI publishes into a new folder, the previous publication given as --baseline
    assert main(["publish", str(fresh), "--matrix", str(empty), "--baseline", str(site / "matrix.json")]) == 1
    assert not fresh.exists()
    assert main(["publish", str(fresh), "--matrix", str(empty)]) == 0, "nothing to lose: a first publication"
    assert main(["publish", str(site), "--matrix", str(empty), "--allow-empty"]) == 0
