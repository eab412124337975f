"""`harness import` given what a new user gives it: each bad argument or input is one line and the
right exit code, and leaves nothing in the results dir; racing imports are both kept; a bad cell
never stops the merge or the report of the others; repeats are attempts only where they are.

The reports are the real ones of tests/dialects (written by pytest, Jest, gotestsum...); only
the hostile inputs (links, FIFOs, a long name, a broken manifest) are made here.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from harness.cell import building_cell
from harness.cli import main
from tests.faults.conftest import REPO

DIALECTS = REPO / "tests" / "dialects"
PYTEST_XML = DIALECTS / "pytest" / "junit-xunit2.xml"
PYTEST_XUNIT1 = DIALECTS / "pytest" / "junit-xunit1.xml"
JEST_XML = DIALECTS / "jest" / "junit.xml"
PROJECT_CELL = REPO / "tests" / "data" / "cells" / "cpu-2.13.0"


def _import(capsys: pytest.CaptureFixture[str], results: Path, *args: str) -> tuple[int, str, str]:
    code = main(["import", *args, "--results-dir", str(results)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _left_in(results: Path) -> list[str]:
    return sorted(p.name for p in results.iterdir()) if results.exists() else []


def _error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("harness: error: "), err
    return lines[0]


def _merge(capsys: pytest.CaptureFixture[str], tmp_path: Path, *cells: Path) -> dict:
    out = tmp_path / "matrix.json"
    assert main(["merge", *map(str, cells), "-o", str(out)]) == 0
    capsys.readouterr()
    return json.loads(out.read_text(encoding="utf-8"))


def _counts(matrix: dict, column: str) -> dict[str, int]:
    return next(c["counts"] for c in matrix["columns"] if c["id"] == column)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--backend", "cu130", "--cell-id", "ok\n"], "--cell-id: invalid cell id 'ok\\n'"),
        (["--backend", "cu130", "--cell-id", "../up"], "--cell-id: invalid cell id '../up'"),
        (["--backend", "cu130", "--cell-id", "x" * 129], "--cell-id: invalid cell id"),
        (["--backend", "cuda", "--cell-id", "ok"], "--backend: 'cuda' is not a build variant"),
        (["--backend", "nvidia", "--cell-id", "ok"], "--backend: 'nvidia' is not a build variant"),
        (["--backend", "cu130", "--cell-id", "ok", "--torch", "latest"], "--torch: 'latest' is not a torch version"),
        (["--backend", "cu130", "--cell-id", "ok", "--torch", "2.13.0\n"], "--torch: '2.13.0\\n' is not a torch"),
        (["--backend", "cu130", "--cell-id", "ok", "--run-url", "file:///etc/passwd"], "--run-url: 'file:///etc"),
        (["--backend", "cu130", "--cell-id", "ok", "--run-url", "javascript:alert(1)"], "is not an http or https"),
        (["--backend", "cu130", "--cell-id", "ok", "--device", "H100\nfake: line"], "--device: 'H100\\nfake"),
    ],
)
def test_bad_arguments_are_one_line_exit_2_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], words: str
) -> None:
    results = tmp_path / "results"
    code, out, err = _import(capsys, results, str(PYTEST_XML), *args)
    assert code == 2, err
    assert words in _error_line(err)
    assert out == ""
    assert _left_in(results) == []


def test_recognisable_variants_and_versions_are_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Not listed in the registry but named like a variant (cu134, rocm10.1); PEP 440 versions with a local tag."""
    results = tmp_path / "results"
    for backend, torch in (("rocm10.1", "2.16.0.dev20261130+rocm10.1"), ("cu134", "2.15.0rc1"), ("cpu", "2.13.0")):
        code, _, err = _import(capsys, results, str(PYTEST_XML), "--backend", backend, "--cell-id", backend,
                               "--torch", torch, "--run-url", "https://ci.example/run/1")  # fmt: skip
        assert code == 0, err
    manifests = [json.loads((p / "manifest.json").read_text()) for p in results.iterdir()]
    assert sorted(m["backend"] for m in manifests) == ["cpu", "cu134", "rocm10.1"]
    assert {m["environment"]["torch"]["version"] for m in manifests} >= {"2.16.0.dev20261130+rocm10.1"}


def test_symlinked_input_is_refused_and_its_target_never_copied(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("AWS_SECRET_ACCESS_KEY=do-not-upload\n", encoding="utf-8")
    link = tmp_path / "report.xml"
    link.symlink_to(secret)
    results = tmp_path / "results"
    code, _, err = _import(capsys, results, str(PYTEST_XML), str(link), "--backend", "cpu", "--cell-id", "c")
    assert code == 4
    assert _error_line(err) == f"harness: error: {link} is a symbolic link, not a file (give the JUnit file itself)"
    assert _left_in(results) == []
    # A link to a JUnit file is refused too: links are never followed.
    link.unlink()
    link.symlink_to(PYTEST_XML)
    code, _, err = _import(capsys, results, str(link), "--backend", "cpu", "--cell-id", "c")
    assert code == 4 and "is a symbolic link" in _error_line(err)
    assert _left_in(results) == []


def test_directory_fifo_and_device_inputs_are_named_as_what_they_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "pipe.xml"
    os.mkfifo(fifo)  # opening it for reading would block: it must never be opened
    results = tmp_path / "results"
    code, _, err = _import(capsys, results, str(tmp_path), "--backend", "cpu", "--cell-id", "c")
    assert code == 4  # a folder is read for its *.xml regular files: a FIFO is none
    hint = "(give the JUnit files or their folder)"
    assert _error_line(err) == f"harness: error: {tmp_path}: a folder without *.xml files {hint}"
    for path, what in (
        (fifo, "a FIFO (named pipe)"),
        (Path("/dev/null"), "a character device"),
    ):
        code, _, err = _import(capsys, results, str(path), "--backend", "cpu", "--cell-id", "c")
        assert code == 4
        assert _error_line(err) == f"harness: error: {path} is {what}, not a file (give the JUnit file itself)"
    code, _, err = _import(capsys, results, str(tmp_path / "absent.xml"), "--backend", "cpu", "--cell-id", "c")
    assert code == 4 and _error_line(err).endswith("absent.xml: no such file")
    assert _left_in(results) == []


def test_very_long_file_name_is_shortened_in_the_cell(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    long = tmp_path / ("r" * 251 + ".xml")  # 255 bytes: the longest name a file system allows
    shutil.copyfile(PYTEST_XML, long)
    results = tmp_path / "results"
    code, out, err = _import(capsys, results, str(long), "--backend", "cpu", "--cell-id", "long")
    assert code == 0, err
    copied = list((Path(out.strip()) / "junit").iterdir())
    assert [p.name for p in copied] == ["001-" + "r" * 100 + ".xml.gz"]
    manifest = json.loads((Path(out.strip()) / "manifest.json").read_text())
    assert manifest["import"]["files"][0]["source"] == str(long)


def test_a_failure_while_building_leaves_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file with no readable testcase fails after the cell was begun; a results dir that is a
    file fails before: one line each, nothing partial, no hidden temp dir."""
    empty = tmp_path / "empty.xml"
    empty.write_text('<?xml version="1.0"?><testsuites name="pytest tests"></testsuites>', encoding="utf-8")
    results = tmp_path / "results"
    code, _, err = _import(capsys, results, str(empty), "--backend", "cpu", "--cell-id", "c")
    assert code == 4 and "none of the files holds a readable testcase" in _error_line(err)
    assert _left_in(results) == []  # not even `.c.<random>.building`
    not_a_dir = tmp_path / "results-file"
    not_a_dir.write_text("", encoding="utf-8")
    code, _, err = _import(capsys, not_a_dir, str(PYTEST_XML), "--backend", "cpu", "--cell-id", "c")
    assert code == 6 and _error_line(err).startswith(f"harness: error: cannot write {not_a_dir}: ")


def test_two_imports_of_one_cell_id_at_once_are_both_kept(tmp_path: Path) -> None:
    """Threads released together build the same cell id in the same second: both renamed into
    place as separate runs, never a FileExistsError; the merge keeps one column."""
    results = tmp_path / "results"
    start = threading.Barrier(4)
    codes: list[int] = []

    def one() -> None:
        start.wait()
        codes.append(main(["import", str(PYTEST_XML), "--backend", "cpu", "--cell-id", "race",
                           "--results-dir", str(results)]))  # fmt: skip

    threads = [threading.Thread(target=one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert codes == [0, 0, 0, 0]
    cells = _left_in(results)
    assert len(cells) == 4 and all(name.startswith("race-") for name in cells), cells
    run_ids = {json.loads((results / c / "manifest.json").read_text())["run_id"] for c in cells}
    assert len(run_ids) == 4


def test_building_cells_of_one_id_racing_in_one_second_never_collide(tmp_path: Path) -> None:
    """building_cell (used by `harness run` and `harness import`) under 8 racing threads."""
    start = threading.Barrier(8)
    made: list[Path] = []

    def one() -> None:
        start.wait()
        with building_cell(tmp_path, "same") as cell:
            (cell.path / "manifest.json").write_text("{}", encoding="utf-8")
        made.append(cell.path)

    threads = [threading.Thread(target=one) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(made)) == 8 and all(p.is_dir() and (p / "manifest.json").exists() for p in made)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_bad_cell_is_left_out_and_the_report_of_the_results_dir_succeeds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cell whose manifest names an id ending in a newline (what an older import wrote) and a
    cell still being built (hidden) beside a good import: the merge of the whole results dir reads
    the good one, reports the bad one as an input problem, and `harness report` succeeds."""
    results = tmp_path / "results"
    code, out, _ = _import(capsys, results, str(PYTEST_XML), "--backend", "cpu", "--cell-id", "good")
    assert code == 0
    bad = results / "bad-20261201T000000Z"
    shutil.copytree(out.strip(), bad)
    manifest = json.loads((bad / "manifest.json").read_text())
    (bad / "manifest.json").write_text(json.dumps({**manifest, "cell_id": "bad\n"}), encoding="utf-8")
    building = results / ".good.x1y2.building"
    shutil.copytree(out.strip(), building)  # a half-built cell: hidden until renamed into place
    matrix_path = tmp_path / "matrix.json"
    assert main(["merge", str(results), "-o", str(matrix_path)]) == 0
    err = capsys.readouterr().err
    assert "bad-20261201T000000Z" in err and "invalid cell id 'bad\\n'" in err
    matrix = json.loads(matrix_path.read_text())
    assert [c["id"] for c in matrix["columns"]] == ["good"]
    assert [e["source"] for e in matrix["input_errors"]] == [str(bad)]
    assert main(["report", str(matrix_path), "-o", str(tmp_path / "summary.md")]) == 0
    assert "invalid cell id" in (tmp_path / "summary.md").read_text(encoding="utf-8")


def test_the_same_report_twice_is_imported_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results"
    copy = tmp_path / "copy-of-jest.xml"
    shutil.copyfile(JEST_XML, copy)
    code, out, err = _import(capsys, results, str(JEST_XML), str(copy), "--backend", "cpu", "--cell-id", "twice")
    assert code == 0
    assert f"harness: warning: {copy}: the same content as {JEST_XML} (sha256 " in err
    assert len(list((Path(out.strip()) / "junit").iterdir())) == 1
    code, out_once, _ = _import(capsys, results, str(JEST_XML), "--backend", "cpu", "--cell-id", "once")
    matrix = _merge(capsys, tmp_path, Path(out.strip()), Path(out_once.strip()))
    assert _counts(matrix, "twice") == _counts(matrix, "once")


def test_two_reports_sharing_ids_the_later_decides_and_nothing_turns_flaky(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pytest's xunit1 and xunit2 reports of one run share every id: imported together they count
    as one report (the later decides, said in one note), and no test that only passed is flaky."""
    results = tmp_path / "results"
    code, out, err = _import(
        capsys, results, str(PYTEST_XUNIT1), str(PYTEST_XML), "--backend", "cpu", "--cell-id", "both"
    )
    assert code == 0
    warnings = [line for line in err.splitlines() if line.startswith("harness: warning: ")]
    assert warnings == [
        f"harness: warning: {PYTEST_XML}: 48 test id(s) also in {PYTEST_XUNIT1} (given before it):"
        " read as two runs of each test; the later file decides, the earlier file's results of them are left out"
    ]
    code, out_once, _ = _import(capsys, results, str(PYTEST_XML), "--backend", "cpu", "--cell-id", "once")
    matrix = _merge(capsys, tmp_path, Path(out.strip()), Path(out_once.strip()))
    assert _counts(matrix, "both") == _counts(matrix, "once")
    expected = json.loads((DIALECTS / "pytest" / "expected.json").read_text())["counts"]
    assert _counts(matrix, "both")["flaky"] == expected["flaky"] == 1  # pytest-rerunfailures' own, in one file


def test_invalid_feature_map_globs_are_refused_naming_rule_and_glob(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = tmp_path / "results"
    for glob, why in (
        ("test_[abc", "the '[' at position 6 is never closed (write '[[]' to match a literal '[')"),
        ("[z-a]*", "the range 'z-a' in '[z-a]' is reversed: it matches nothing"),
    ):
        feature_map = tmp_path / "map.toml"
        feature_map.write_text(
            f'[[rule]]\nmatch = "*x*"\nfeature = "a"\n[[rule]]\nmatch = ["*", "{glob}"]\nfeature = "b"\n'
        )
        code, _, err = _import(capsys, results, str(PYTEST_XML), "--feature-map", str(feature_map),
                               "--backend", "cpu", "--cell-id", "c")  # fmt: skip
        assert code == 4
        assert _error_line(err) == f"harness: error: {feature_map}: rule 2: invalid glob {glob!r}: {why}"
    assert _left_in(results) == []


def test_import_says_what_each_rule_took_and_names_idle_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    feature_map = tmp_path / "map.toml"
    feature_map.write_text(
        '[[rule]]\nmatch = "test_outcomes.py::*"\nfeature = "outcomes"\n'
        '[[rule]]\nmatch = "*test_calc*"\nfeature = "calc"\n'
        '[[rule]]\nmatch = "test_linalg.py::*"\nfeature = "linalg"\n'
    )
    code, _, err = _import(capsys, tmp_path / "results", str(PYTEST_XML), "--feature-map", str(feature_map),
                           "--backend", "cpu", "--cell-id", "c")  # fmt: skip
    assert code == 0
    assert "  rule 1: 'test_outcomes.py::*' -> outcomes: 32 test(s)" in err
    assert "harness: warning: rule 3 ('test_linalg.py::*' -> linalg) took no test" in err
    assert "harness: warning: rule 1" not in err


def test_a_map_naming_a_project_feature_keeps_its_title_release_and_claim(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`graphs` named by a map without a title, merged with a real cell of the suites: the row keeps
    the project's title, release and claim. A map that states a title gets its own where no features
    file is in force (a merge outside the checkout); inside it, suites/features.toml states the project's
    rows (`harness merge --features`), so the project's title stays."""
    feature_map = tmp_path / "map.toml"
    feature_map.write_text('[[rule]]\nmatch = "*"\nfeature = "graphs"\n')
    code, out, err = _import(capsys, tmp_path / "results", str(PYTEST_XML), "--feature-map", str(feature_map),
                             "--backend", "cu130", "--cell-id", "vendor")  # fmt: skip
    assert code == 0, err
    matrix = _merge(capsys, tmp_path, PROJECT_CELL, Path(out.strip()))
    graphs = next(f for f in matrix["features"] if f["id"] == "graphs")
    project = json.loads((PROJECT_CELL / "manifest.json").read_text())["features"]["graphs"]
    assert (graphs["title"], graphs["since"], graphs["claim"]) == (project["title"], project["since"], project["claim"])
    feature_map.write_text('[features.graphs]\ntitle = "Vendor graphs"\n[[rule]]\nmatch = "*"\nfeature = "graphs"\n')
    code, out, err = _import(capsys, tmp_path / "results2", str(PYTEST_XML), "--feature-map", str(feature_map),
                             "--backend", "cu130", "--cell-id", "vendor")  # fmt: skip
    imported = Path(out.strip()).resolve()
    matrix = _merge(capsys, tmp_path, PROJECT_CELL, imported)
    graphs = next(f for f in matrix["features"] if f["id"] == "graphs")
    assert graphs["title"] == project["title"], "the checkout's features file states the project's rows"
    monkeypatch.chdir(tmp_path)  # no suites/features.toml here: the cells' own statements
    matrix = _merge(capsys, tmp_path, PROJECT_CELL.resolve(), imported)
    graphs = next(f for f in matrix["features"] if f["id"] == "graphs")
    assert (graphs["title"], graphs["since"]) == ("Vendor graphs", project["since"])
