"""The import's rules at unit level (fast tier): what each argument may be, which repeats are
attempts, the streaming reader held to a plain tree read and the copying reader to its plain path
on the real reports of every dialect (the JUnit fast path: tests/ingest/test_junit_reader.py)."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
from collections import Counter
from pathlib import Path
from xml.etree import ElementTree

import pytest

from harness.errors import UsageError
from harness.importer.arguments import check_backend, check_torch, check_url, copied_name
from harness.importer.junit_import import CopyingReader, ImportSpec, import_junit
from harness.ingest import cell_reader as ingest
from harness.ingest.featuremap import glob_problem
from harness.ingest.junit_stream import RERUN_TAGS, JUnitRead, iter_junit
from harness.outcomes import Outcome
from tests.conftest import REPO

DIALECTS = REPO / "tests" / "dialects"
GO_RERUN = DIALECTS / "gotestsum" / "junit-rerun.xml"


# -- arguments -----------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["cuda", "rocm-family", "CU130", "cu130 ", "", "gpu", "cu13.0"])
def test_backend_must_be_a_variant(text: str) -> None:
    with pytest.raises(UsageError, match="is not a build variant"):
        check_backend(text)


@pytest.mark.parametrize(("text", "variant"), [("cu130", "cu130"), ("cu134", "cu134"), ("rocm10.1", "rocm10.1")])
def test_listed_and_named_variants_are_backends(text: str, variant: str) -> None:
    assert check_backend(text).id == variant


@pytest.mark.parametrize("text", ["2.13", "2.13.0+cu130", "2.16.0.dev20261130+rocm10.1", "2.15.0rc1", "2.13.0.post1"])
def test_torch_versions_pep440_with_local_tag(text: str) -> None:
    assert str(check_torch(text)) == text


@pytest.mark.parametrize("text", ["latest", "2.13.0\n", " 2.13.0", "2.13.0+cu130+x", "torch==2.13.0"])
def test_torch_not_a_version(text: str) -> None:
    with pytest.raises(UsageError, match="is not a torch version"):
        check_torch(text)


@pytest.mark.parametrize("text", ["ftp://a/b", "file:///etc/passwd", "https://", "https://a b/c", "https://a/\n"])
def test_run_url_http_only(text: str) -> None:
    with pytest.raises(UsageError, match="is not an http or https URL"):
        check_url(text)


def test_copied_names_are_safe_short_and_in_order() -> None:
    assert copied_name(7, Path("a b/../ünï:cöde.junit-xml")) == "007-n_c_de.xml"
    assert copied_name(1, Path("x" * 250 + ".xml")) == "001-" + "x" * 100 + ".xml"
    assert copied_name(12, Path("...")) == "012-report.xml"
    assert copied_name(5, Path("r.xml"), width=4) == "0005-r.xml"


@pytest.mark.parametrize(
    ("glob", "problem"),
    [
        ("[", "never closed"),
        ("test_[abc", "never closed"),
        ("[z-a]*", "reversed"),
        ("*[9-0]", "reversed"),
        ("*[!]", "never closed"),
        ("*", None),
        ("test_x[[]1]", None),
        ("*[]]*", None),
        ("[!a-z]*", None),
        ("*[a-]", None),
    ],
)
def test_glob_problems(glob: str, problem: str | None) -> None:
    found = glob_problem(glob)
    assert (found is None) if problem is None else (problem in (found or ""))


# -- repeats ---------------------------------------------------------------------------------------
def _imported(tmp_path: Path, *files: Path, cell_id: str = "c") -> ingest.CellResult:
    done = import_junit(ImportSpec(files=files, backend="cpu", cell_id=cell_id, results_dir=tmp_path / "results"))
    return ingest.ingest_cell(done.cell_dir)


def _outcomes(cell: ingest.CellResult) -> dict[str, tuple[Outcome, int]]:
    return {n: (r.outcome, r.attempts) for n, r in zip(cell.nodeids, cell.results, strict=True)}


def test_retries_as_repeated_testcases_are_attempts_in_any_dialect(tmp_path: Path) -> None:
    """gotestsum's `--rerun-fails` report, once as written and once without its `go.version`
    property (so no rule of Go's applies): the same tests, the same outcomes. A failed attempt then
    a pass is flaky; failed every time is failed with every attempt counted."""
    generic = tmp_path / "generic.xml"
    text = GO_RERUN.read_text(encoding="utf-8")
    generic.write_text(re.sub(r'<property name="go.version"[^>]*></property>', "", text), encoding="utf-8")
    assert "go.version" not in generic.read_text(encoding="utf-8")
    go, plain = _outcomes(_imported(tmp_path, GO_RERUN, cell_id="go")), _outcomes(_imported(tmp_path, generic))
    assert go == plain
    assert go["example.com/dialect/edge::TestFlaky"] == (Outcome.FLAKY, 2)
    assert sum(1 for outcome, _ in go.values() if outcome is Outcome.FLAKY) == 1
    assert go["example.com/dialect/calc::TestDivide"][0] is Outcome.FAILED
    assert go["example.com/dialect/calc::TestDivide"][1] == 3  # --rerun-fails=2: three attempts


def test_repeated_titles_in_mocha_are_tests_of_their_own(tmp_path: Path) -> None:
    """Mocha writes every test it ran (its retries: the last attempt only), so equal titles are
    tests: none merged, none flaky (what Mocha counts)."""
    for xml in ("junit.xml", "junit-jenkins.xml"):
        cell = _imported(tmp_path, DIALECTS / "mocha" / xml, cell_id=xml.replace(".", "-"))
        assert not [r for r in cell.results if r.outcome is Outcome.FLAKY]
        assert all(r.attempts == 1 for r in cell.results)


def test_a_pass_repeated_is_never_flaky(tmp_path: Path) -> None:
    """CTest's two passes of one name are two tests (each passed); the same report twice, one test."""
    cell = _imported(tmp_path, DIALECTS / "ctest" / "junit.xml")
    same = [r for n, r in zip(cell.nodeids, cell.results, strict=True) if n.startswith("(empty)::same_name")]
    assert len(same) == 2
    copy = tmp_path / "again.xml"
    shutil.copyfile(DIALECTS / "jest" / "junit-file-attr.xml", copy)
    copy.write_text(copy.read_text(encoding="utf-8").replace("<testsuites ", "<testsuites x='1' ", 1), encoding="utf-8")
    twice = _imported(tmp_path, DIALECTS / "jest" / "junit-file-attr.xml", copy, cell_id="twice")
    once = _imported(tmp_path, DIALECTS / "jest" / "junit-file-attr.xml", cell_id="once")
    assert sorted(_outcomes(twice).items()) == sorted(_outcomes(once).items())
    assert len(twice.notes) == 1 and "the later file decides" in twice.notes[0]


# -- the reader's speed tricks against their plain paths -----------------------------------------------
REPORTS = sorted(
    {
        expected.parent / name
        for expected in DIALECTS.glob("*/expected*.json")
        for name in json.loads(expected.read_text(encoding="utf-8"))["junit_files"]
    }
)


def test_the_copy_and_hash_are_the_same_by_either_path(tmp_path: Path) -> None:
    """CopyingReader's thread and zlib's own gzip framing (the speed trick) against the plain
    path (each block hashed and compressed in the read): the same bytes once unzipped, the same
    sha256, on a real report, also when the parse stops early at a broken tag."""
    report = sorted((DIALECTS / "surefire" / "junit").glob("*.xml"))[0]
    broken = tmp_path / "broken.xml"
    broken.write_bytes(report.read_bytes()[:-40] + b"<oops")
    for source in (report, broken):
        copies = {}
        for plain in (False, True):
            target = tmp_path / f"{source.stem}-{plain}.gz"
            with CopyingReader(source, target, plain=plain) as reader:
                reader.read(100)  # the parse reads a little, then stops; close copies the rest
            copies[plain] = (gzip.decompress(target.read_bytes()), reader.digest.hexdigest())
        assert copies[False] == copies[True]
        assert copies[False][0] == source.read_bytes()
        assert copies[False][1] == hashlib.sha256(source.read_bytes()).hexdigest()


def _by_element_tree(path: Path) -> list[tuple]:
    """Each testcase read the plain way: the whole document as a tree (small files only)."""
    cases = []
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        properties = [
            (p.get("name", ""), p.get("value") if "value" in p.attrib else (p.text or ""))
            for props in case.findall("properties")
            for p in props.findall("property")
        ]
        results = [(r.tag, r.get("type"), r.get("message")) for r in case if r.tag in ("failure", "error", "skipped")]
        reruns = [(r.tag, r.get("message")) for r in case if r.tag in RERUN_TAGS]
        cases.append((dict(case.attrib), properties, results, reruns))
    return cases


@pytest.mark.parametrize("report", REPORTS, ids=lambda p: str(p.relative_to(DIALECTS)))
def test_streaming_reader_agrees_with_a_plain_tree_read(report: Path) -> None:
    """The reader's specialised handlers (inside a testcase, inside <properties>) see what a plain
    ElementTree read of the same real report sees: every testcase, its attributes, properties,
    results and retried attempts, in order."""
    ours = [
        (
            case.attrs,
            case.properties,
            [(r.kind, r.type, r.message) for r in case.results],
            [(r.kind, r.message) for r in case.reruns],
        )
        for case in iter_junit(report, JUnitRead(path=report))
    ]
    assert ours == _by_element_tree(report)


# -- several files, a folder ---------------------------------------------------------------------------
def test_a_folder_imports_its_xml_files_in_name_order(tmp_path: Path) -> None:
    """A folder is its `*.xml` regular files, in name order: the same cell as the files given
    one by one; a link and a file of another kind in it are left alone."""
    folder = DIALECTS / "surefire" / "junit"
    files = tuple(sorted(folder.glob("*.xml")))
    linked = tmp_path / "linked"
    shutil.copytree(folder, linked)
    (linked / "zz-link.xml").symlink_to(files[0])
    (linked / "notes.txt").write_text("not a report", encoding="utf-8")
    by_folder = import_junit(ImportSpec(files=(linked,), backend="cpu", cell_id="f", results_dir=tmp_path / "r"))
    by_files = import_junit(ImportSpec(files=files, backend="cpu", cell_id="g", results_dir=tmp_path / "r"))
    assert [r.path.name for r in by_folder.files] == [p.name for p in files]
    assert by_folder.cell is not None and by_files.cell is not None
    assert by_folder.cell.nodeids == by_files.cell.nodeids and by_folder.cell.results == by_files.cell.results


def test_the_counts_the_import_returns_are_the_written_cells(tmp_path: Path) -> None:
    """The verb prints the rows and each feature-map rule's tests from what the import returns (it read
    the cell it had just written to count them): the same counts a merge's reading of the cell gives."""
    rules = tmp_path / "map.toml"
    rules.write_text(
        '[[rule]]\nmatch = "*CalcTest*"\nfeature = "calc"\n\n[[rule]]\nmatch = "nothing-matches-*"\nfeature = "none"\n',
        encoding="utf-8",
    )
    files = tuple(sorted((DIALECTS / "surefire" / "junit").glob("*.xml")))
    done = import_junit(ImportSpec(files=files, backend="cpu", cell_id="c", results_dir=tmp_path, feature_map=rules))
    read = ingest.ingest_cell(done.cell_dir)
    assert done.rows == dict(Counter(read.test_features)) and sum(done.rows.values()) == len(read.nodeids)
    assert done.feature_map is not None and len(done.rules_taken) == 2 and done.rules_taken[1] == 0
    assert done.rules_taken[0] == sum(done.feature_map.rule_of(n) == 0 for n in read.nodeids) == done.rows["calc"] > 0
    plain = import_junit(ImportSpec(files=files, backend="cpu", cell_id="d", results_dir=tmp_path))
    assert plain.rules_taken == () and set(plain.rows) == {"unassigned"}


def test_the_import_reads_with_the_collector_paused_and_gives_it_back(tmp_path: Path, monkeypatch) -> None:
    """The files are read with cyclic collection off (a few acyclic objects per testcase: its passes
    cost a tenth of a lean import), and the collector is on again after, even when the import fails."""
    import gc

    from harness.errors import InputError
    from harness.importer import junit_import as importjunit

    seen: list[bool] = []
    read = importjunit.read_junit_files

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return read(*args, **kwargs)

    monkeypatch.setattr(importjunit, "read_junit_files", spy)
    assert gc.isenabled()
    _imported(tmp_path, GO_RERUN)
    assert seen == [False] and gc.isenabled()
    empty = tmp_path / "empty.xml"
    empty.write_text("<testsuites></testsuites>", encoding="utf-8")
    with pytest.raises(InputError):
        _imported(tmp_path, empty, cell_id="none")
    assert seen == [False, False] and gc.isenabled()
