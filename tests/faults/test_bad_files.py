"""Point 4: bad result files. Each damaged cell is a copy of a REAL cell whose files are then
broken on disk the way uploads break (missing, empty, cut mid-element, not XML, wrong root,
half a JSON line); other tools' dialects are hand-made because no tool here writes them.

Each gives a visible per-cell error or is read correctly, none is silently dropped, and one
bad cell never stops the merge of the others.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.ingest.cell_reader import ingest_cell
from harness.merge.combine import merge_cell_dirs
from tests.faults.conftest import BASE_OUTCOMES, REPO, column_of, merge_in_child, results_of

CELL = "base"  # the cell_id of the real base cell


@pytest.fixture
def damaged(base_cell: Path, tmp_path: Path):
    """copy(name) -> a fresh copy of the real base cell to damage."""

    def copy(name: str) -> Path:
        return Path(shutil.copytree(base_cell, tmp_path / name))

    return copy


def merged(cell: Path) -> tuple[dict, dict, dict]:
    matrix = merge_cell_dirs([cell]).to_json()
    return matrix, column_of(matrix, CELL), {k: v["outcome"] for k, v in results_of(matrix, CELL).items()}


def cut_inside_nth_testcase(junit: Path, n: int) -> int:
    """Truncate junit.xml in the middle of the n-th <testcase ...> start tag; return the cut offset."""
    data = junit.read_bytes()
    at = -1
    for _ in range(n):
        at = data.index(b"<testcase ", at + 1)
    cut = at + 25
    junit.write_bytes(data[:cut])
    return cut


# -- junit.xml ------------------------------------------------------------------------------
def test_junit_missing_events_decide(damaged) -> None:
    cell = damaged("no-junit")
    (cell / "junit.xml").unlink()
    _, column, outcomes = merged(cell)
    assert outcomes == BASE_OUTCOMES
    assert column["errors"] == ["junit.xml: missing although the run completed"]
    assert column["state"] == "partial-run"


def test_junit_empty(damaged) -> None:
    cell = damaged("empty-junit")
    (cell / "junit.xml").write_bytes(b"")
    _, column, outcomes = merged(cell)
    assert outcomes == BASE_OUTCOMES
    assert "junit.xml: empty file" in column["errors"]


def test_junit_truncated_mid_element_salvages_what_came_before(damaged) -> None:
    """No event log either: what JUnit had before the cut is kept, the rest is not-run."""
    cell = damaged("truncated")
    (cell / "events.jsonl").unlink()
    cut_inside_nth_testcase(cell / "junit.xml", 4)
    _, column, outcomes = merged(cell)
    (error,) = [e for e in column["errors"] if e.startswith("junit.xml:")]
    assert "truncated XML" in error and "kept 3 testcases read before it" in error
    read = {k: v for k, v in outcomes.items() if v != "not-run"}
    assert len(read) == 3 and all(BASE_OUTCOMES[k] == v for k, v in read.items())
    assert sorted(outcomes) == sorted(BASE_OUTCOMES), "collected tests went missing"


def test_junit_not_xml(damaged) -> None:
    cell = damaged("not-xml")
    (cell / "junit.xml").write_bytes(b"404: Not Found\n")
    _, column, outcomes = merged(cell)
    assert outcomes == BASE_OUTCOMES  # events still decide
    assert any(e.startswith("junit.xml: not well-formed XML at line 1") for e in column["errors"]), column["errors"]


def test_junit_binary_garbage(damaged) -> None:
    cell = damaged("garbage")
    (cell / "junit.xml").write_bytes(bytes(range(256)) * 64)
    _, column, _ = merged(cell)
    assert any("not well-formed XML" in e for e in column["errors"]), column["errors"]


def test_junit_wrong_root(damaged) -> None:
    cell = damaged("wrong-root")
    (cell / "events.jsonl").unlink()
    (cell / "junit.xml").write_text("<html><body><testcase name='x'/></body></html>", encoding="utf-8")
    _, column, outcomes = merged(cell)
    assert "junit.xml: root element is <html>, expected <testsuites> or <testsuite>" in column["errors"]
    assert set(outcomes.values()) == {"not-run"}
    assert column["state"] == "no-data"  # nothing ran as far as we can tell: NO DATA, never 0%
    assert column["score"] is None


def test_junit_unreadable_path(damaged) -> None:
    cell = damaged("junit-is-a-dir")
    (cell / "junit.xml").unlink()
    (cell / "junit.xml").mkdir()
    _, column, outcomes = merged(cell)
    assert outcomes == BASE_OUTCOMES
    assert any(e.startswith("junit.xml: cannot open") for e in column["errors"]), column["errors"]


# -- events.jsonl, collected.json, manifest.json -----------------------------------------------
def test_events_missing_read_from_junit(damaged) -> None:
    cell = damaged("no-events")
    (cell / "events.jsonl").unlink()
    matrix, column, outcomes = merged(cell)
    assert outcomes == BASE_OUTCOMES  # read correctly from JUnit alone: nothing to report
    assert column["errors"] == []
    failed = results_of(matrix, CELL)["alpha/test_alpha.py::test_two"]
    assert "alpha-two-broke" in failed["message"]


def test_events_half_written_line(damaged) -> None:
    cell = damaged("half-line")
    with (cell / "events.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"event": "report", "nodeid": "alpha/test_alpha.py::test_one", "when": "ca')
    _, column, outcomes = merged(cell)
    assert outcomes == BASE_OUTCOMES
    assert "events.jsonl: 1 unreadable line(s) skipped (a writer died mid-line?)" in column["errors"]


def test_events_giant_line_in_bounded_memory(damaged) -> None:
    """A 100 MB line in events.jsonl (hostile, or a runaway writer) is skipped without being held."""
    cell = damaged("giant-line")
    with (cell / "events.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"event": "report", "message": "')
        block = "z" * (1 << 20)
        for _ in range(100):
            handle.write(block)
        handle.write('"}\n')
    matrix, run = merge_in_child(cell)
    assert run.peak_rss_mb < 150, f"peak RSS {run.peak_rss_mb:.0f} MB"
    assert {k: v["outcome"] for k, v in results_of(matrix, CELL).items()} == BASE_OUTCOMES
    assert "events.jsonl: 1 line(s) over 8 MB skipped" in column_of(matrix, CELL)["errors"]


def test_events_and_junit_both_lost(damaged) -> None:
    cell = damaged("nothing-but-plan")
    (cell / "events.jsonl").unlink()
    (cell / "junit.xml").unlink()
    _, column, outcomes = merged(cell)
    assert outcomes == dict.fromkeys(BASE_OUTCOMES, "not-run")
    assert column["state"] == "no-data" and column["score"] is None
    assert "junit.xml: missing although the run completed" in column["errors"]


def test_collected_corrupt(damaged) -> None:
    cell = damaged("bad-collected")
    (cell / "collected.json").write_text('{"count": 6, "tests": [', encoding="utf-8")
    matrix, column, outcomes = merged(cell)
    assert outcomes == BASE_OUTCOMES
    # No plan: each test's row comes from the suites' folder rule.
    assert {t["id"]: t["feature"] for t in matrix["tests"]} == {k: k.split("/")[0] for k in BASE_OUTCOMES}
    assert any(e.startswith("collected.json: unreadable") for e in column["errors"]), column["errors"]


def _plan_only(cell: Path) -> dict:
    """The cell's plan alone decides its tests (all `not-run`), each in its feature's row."""
    (cell / "events.jsonl").unlink()
    (cell / "junit.xml").unlink()
    matrix = merge_cell_dirs([cell]).to_json()
    return {t["id"]: (t["feature"], t["results"][CELL]["outcome"]) for t in matrix["tests"]}


def test_collected_groups_as_the_plugin_writes_them(damaged) -> None:
    cell = damaged("groups")
    collected = json.loads((cell / "collected.json").read_text())
    assert list(collected) == ["count", "collect_errors", "groups"]  # small fields first
    assert collected["count"] == sum(len(g["tests"]) for g in collected["groups"]) == len(BASE_OUTCOMES)
    planned = _plan_only(cell)
    assert planned == {k: (k.split("/")[0], "not-run") for k in BASE_OUTCOMES}


def test_collected_from_before_groups_is_still_read(damaged) -> None:
    """Cells written before the plugin grouped its ids hold one object per test."""
    cell = damaged("old-collected")
    collected = json.loads((cell / "collected.json").read_text())
    tests = [
        {"nodeid": n, "feature": g["feature"], "scope": g["scope"], "path": "x.py"}
        for g in collected["groups"]
        for n in g["tests"]
    ]
    (cell / "collected.json").write_text(json.dumps({"count": len(tests), "tests": tests, "collect_errors": []}))
    manifest = json.loads((cell / "manifest.json").read_text())
    del manifest["cell_format"]  # written before the format was versioned: cell format 1
    (cell / "manifest.json").write_text(json.dumps(manifest))
    assert _plan_only(cell) == {k: (k.split("/")[0], "not-run") for k in BASE_OUTCOMES}


def test_a_format_2_cell_with_a_format_1_plan_is_said_to_be_unreadable(damaged) -> None:
    """A cell that says it is format 2 lists its tests in groups: a `tests` list is not its plan."""
    cell = damaged("format-2-with-tests")
    (cell / "collected.json").write_text(json.dumps({"count": 1, "tests": [{"nodeid": "a/test_a.py::t"}]}))
    errors = ingest_cell(cell).errors
    assert any(e.startswith("collected.json: unreadable") and "groups" in e for e in errors), errors


def test_collected_groups_hostile(damaged) -> None:
    """A group that is not one, ids that are not strings, a scope that is a list: what can be
    read is planned, the rest is left out, and the cell is read."""
    cell = damaged("hostile-groups")
    collected = json.loads((cell / "collected.json").read_text())
    ids = [n for g in collected["groups"] for n in g["tests"]]
    collected["groups"] = [
        "not a group",
        {"feature": "alpha", "tests": "not a list"},
        {"feature": ["x"], "scope": ["host"], "tests": [ids[0], 7, None, ["y"]]},
        {"feature": "beta", "scope": "host", "tests": ids[1:2]},
    ]
    (cell / "collected.json").write_text(json.dumps(collected))
    planned = _plan_only(cell)
    assert planned == {ids[0]: (ids[0].split("/")[0], "not-run"), ids[1]: ("beta", "not-run")}


def test_collected_groups_not_a_list(damaged) -> None:
    cell = damaged("groups-not-list")
    (cell / "collected.json").write_text('{"count": 6, "groups": {"alpha": []}}', encoding="utf-8")
    _, column, outcomes = merged(cell)
    assert outcomes == BASE_OUTCOMES
    assert any(e.startswith("collected.json: unreadable") for e in column["errors"]), column["errors"]


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda m: m.unlink(), "no manifest.json"),
        (lambda m: m.write_text("{not json", encoding="utf-8"), "not valid JSON"),
        (lambda m: m.write_text("[]", encoding="utf-8"), "manifest must be a JSON object"),
        (lambda m: m.write_text('{"cell_id": "../../etc", "backend": "cpu", "run_id": "r"}'), "invalid cell id"),
    ],
    ids=["missing", "not-json", "not-object", "path-in-cell-id"],
)
def test_bad_manifest_is_an_input_error_and_others_merge(damaged, base_cell: Path, damage, expected: str) -> None:
    cell = damaged("bad-manifest")
    damage(cell / "manifest.json")
    matrix = merge_cell_dirs([cell, base_cell]).to_json()
    (problem,) = matrix["input_errors"]
    assert problem["source"] == str(cell) and expected in problem["message"]
    assert [c["id"] for c in matrix["columns"]] == [CELL]
    assert {k: v["outcome"] for k, v in results_of(matrix, CELL).items()} == BASE_OUTCOMES


# -- one merge, many bad cells ----------------------------------------------------------------
def _retarget(cell: Path, cell_id: str) -> Path:
    manifest = json.loads((cell / "manifest.json").read_text())
    manifest["cell_id"] = cell_id
    (cell / "manifest.json").write_text(json.dumps(manifest))
    return cell


def test_cli_merge_of_good_and_bad_cells(damaged, base_cell: Path, tmp_path: Path) -> None:
    """`harness merge` over a mix: every readable cell is a column, each problem one warning line."""
    empty = _retarget(damaged("m-empty"), "m-empty")
    (empty / "junit.xml").write_bytes(b"")
    cut = _retarget(damaged("m-cut"), "m-cut")
    (cut / "events.jsonl").unlink()
    cut_inside_nth_testcase(cut / "junit.xml", 2)
    no_manifest = damaged("m-no-manifest")
    (no_manifest / "manifest.json").unlink()
    out = tmp_path / "matrix.json"
    argv = [sys.executable, "-m", "harness", "merge", str(base_cell), str(empty), str(cut), str(no_manifest)]
    done = subprocess.run([*argv, "-o", str(out)], cwd=REPO, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("harness: warning:")]
    assert len(warnings) == 1 and warnings[0].startswith(f"harness: warning: {no_manifest}: ")
    assert "no manifest.json" in warnings[0]
    matrix = json.loads(out.read_text())
    assert sorted(c["id"] for c in matrix["columns"]) == ["base", "m-cut", "m-empty"]
    assert {k: v["outcome"] for k, v in results_of(matrix, CELL).items()} == BASE_OUTCOMES
    assert column_of(matrix, CELL)["errors"] == []
    assert "junit.xml: empty file" in column_of(matrix, "m-empty")["errors"]
    assert any("truncated XML" in e for e in column_of(matrix, "m-cut")["errors"])
    strict = subprocess.run([*argv, "-o", str(out), "--strict"], cwd=REPO, capture_output=True, text=True, check=False)
    assert strict.returncode == 4 and "Traceback" not in strict.stderr


# -- other tools' dialects (JUnit-only cells: a manifest and a junit.xml, nothing else) -----------
def junit_only_cell(root: Path, cell_id: str, xml: str) -> Path:
    cell = root / cell_id
    cell.mkdir()
    manifest = {"cell_id": cell_id, "backend": "cpu", "run_id": f"run-{cell_id}", "status": "completed"}
    (cell / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (cell / "junit.xml").write_text(textwrap.dedent(xml).strip(), encoding="utf-8")
    return cell


SUREFIRE = """
    <?xml version="1.0" encoding="UTF-8"?>
    <testsuite name="com.example.FlakyTest" tests="3" failures="1" errors="0" skipped="0" time="1.5">
      <properties><property name="java.version" value="21"/></properties>
      <testcase name="passesOnRerun" classname="com.example.FlakyTest" time="0.2">
        <flakyFailure message="expected:&lt;1&gt; but was:&lt;2&gt;" type="java.lang.AssertionError">
          <stackTrace>java.lang.AssertionError: expected:&lt;1&gt; but was:&lt;2&gt;
    at com.example.FlakyTest.passesOnRerun(FlakyTest.java:12)</stackTrace>
          <system-out>first attempt output</system-out>
        </flakyFailure>
      </testcase>
      <testcase name="failsEveryTime" classname="com.example.FlakyTest" time="0.3">
        <failure message="boom 3" type="java.lang.IllegalStateException">trace 3</failure>
        <rerunFailure message="boom 2" type="java.lang.IllegalStateException">
          <stackTrace>trace 2</stackTrace>
        </rerunFailure>
        <rerunFailure message="boom 1" type="java.lang.IllegalStateException">
          <stackTrace>trace 1</stackTrace>
        </rerunFailure>
      </testcase>
      <testcase name="plain" classname="com.example.FlakyTest" time="1.0"/>
    </testsuite>
"""


def test_surefire_flaky_and_rerun_dialect(tmp_path: Path) -> None:
    matrix = merge_cell_dirs([junit_only_cell(tmp_path, "surefire", SUREFIRE)]).to_json()
    results = results_of(matrix, "surefire")
    flaky = results["com.example.FlakyTest::passesOnRerun"]
    assert flaky["outcome"] == "flaky"
    assert flaky["message"] == "expected:<1> but was:<2>"
    assert "FlakyTest.java:12" in flaky["trace"]
    failing = results["com.example.FlakyTest::failsEveryTime"]
    assert failing["outcome"] == "failed" and failing["message"] == "boom 3"
    assert failing["attempts"] == 3 and failing["extra_messages"] == ["boom 2", "boom 1"]
    assert results["com.example.FlakyTest::plain"]["outcome"] == "passed"
    assert column_of(matrix, "surefire")["errors"] == []


JENKINS = """
    <?xml version="1.0" encoding="UTF-8"?>
    <testsuites>
      <testsuite name="suite-a" package="pkg" id="0" hostname="ci" tests="2" failures="1" errors="0" time="0.5">
        <testcase classname="tests.test_module_a" name="test_ok" time="0.1"/>
        <testcase classname="tests.test_module_a" name="test_bad" time="0.4">
          <failure message="assert 1 == 2" type="AssertionError">Traceback ...</failure>
          <system-out>stdout of test_bad</system-out>
        </testcase>
        <system-out>suite-level output (Ant style)</system-out>
        <system-err>suite-level errors</system-err>
      </testsuite>
      <testsuite name="suite-b" package="pkg" id="1" tests="1" skipped="1">
        <testcase classname="tests.test_module_b" name="test_skip"><skipped message="not on this platform"/></testcase>
      </testsuite>
    </testsuites>
"""


def test_jenkins_dialect(tmp_path: Path) -> None:
    matrix = merge_cell_dirs([junit_only_cell(tmp_path, "jenkins", JENKINS)]).to_json()
    outcomes = {k: v["outcome"] for k, v in results_of(matrix, "jenkins").items()}
    # Not pytest's: the id is the suite path, classname and name (docs/outcomes.md, test identity).
    assert outcomes == {
        "suite-a::tests.test_module_a::test_ok": "passed",
        "suite-a::tests.test_module_a::test_bad": "failed",
        "suite-b::tests.test_module_b::test_skip": "skipped",
    }
    assert column_of(matrix, "jenkins")["errors"] == []


NESTED = """
    <testsuites>
      <testsuite name="outer" tests="3">
        <testsuite name="inner-1" tests="1">
          <testcase classname="nested.inner" name="test_one" time="0.1"/>
        </testsuite>
        <testsuite name="inner-2" tests="1">
          <testsuite name="innermost" tests="1">
            <testcase classname="nested.innermost" name="test_two" time="0.1"><error message="kaput"/></testcase>
          </testsuite>
        </testsuite>
        <testcase classname="nested.outer" name="test_three" time="0.1"/>
      </testsuite>
    </testsuites>
"""


def test_nested_testsuites_each_case_once(tmp_path: Path) -> None:
    matrix = merge_cell_dirs([junit_only_cell(tmp_path, "nested", NESTED)]).to_json()
    results = results_of(matrix, "nested")
    assert {k: v["outcome"] for k, v in results.items()} == {
        "outer::inner-1::nested.inner::test_one": "passed",
        "outer::inner-2::innermost::nested.innermost::test_two": "error",
        "outer::nested.outer::test_three": "passed",
    }
    assert sum(column_of(matrix, "nested")["counts"].values()) == 3


TIMES = """
    <testsuite name="times">
      <testcase classname="t.units" name="test_ms" time="15ms"/>
      <testcase classname="t.units" name="test_comma" time="1,5"/>
      <testcase classname="t.units" name="test_minutes" time="2 min"/>
      <testcase classname="t.units" name="test_seconds" time="0.25"/>
      <testcase classname="t.units" name="test_nonsense" time="soon"/>
    </testsuite>
"""


def test_times_in_odd_units(tmp_path: Path) -> None:
    matrix = merge_cell_dirs([junit_only_cell(tmp_path, "times", TIMES)]).to_json()
    results = results_of(matrix, "times")
    durations = {k.rsplit("::", 1)[1]: v.get("duration") for k, v in results.items()}
    assert durations == {
        "test_ms": pytest.approx(0.015),
        "test_comma": pytest.approx(1.5),
        "test_minutes": pytest.approx(120.0),
        "test_seconds": pytest.approx(0.25),
        "test_nonsense": None,
    }
    assert all(v["outcome"] == "passed" for v in results.values())
    errors = column_of(matrix, "times")["errors"]
    assert errors == ["junit.xml: testcase 'test_nonsense': unreadable time 'soon'; duration left empty"]
