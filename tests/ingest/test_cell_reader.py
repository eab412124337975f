"""The outcome taxonomy end to end: real pytest runs of sample tests -> cell -> records.

Every state of harness/outcomes.py is produced by a real run here, never by hand-written JUnit.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cell import CellStatus
from harness.ingest.cell_reader import ingest_cell
from harness.outcomes import Outcome, SkipClass
from tests.cellfactory import run_sample_cell

SOFT_TIMEOUT_CONFTEST = """
import signal
import pytest

@pytest.fixture(autouse=True)
def _soft_timeout(request):
    # Same contract as suites/conftest.py: a timed-out test fails with "Timeout: ...".
    marker = request.node.get_closest_marker("timeout")
    if marker is None:
        yield
        return
    def fire(signum, frame):
        pytest.fail(f"Timeout: test exceeded {marker.args[0]} s", pytrace=False)
    previous = signal.signal(signal.SIGALRM, fire)
    signal.alarm(marker.args[0])
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
"""

TAXONOMY = """
import json, os, time
from pathlib import Path
import pytest

def test_passes(record_property):
    record_property("perf.speedup", json.dumps({"value": 3.5, "unit": "x", "shape": "(8,8)"}))

def test_fails():
    assert 1 + 1 == 3, "arithmetic is broken"

@pytest.fixture
def broken_setup():
    raise RuntimeError("setup exploded")

@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown exploded")

def test_setup_error(broken_setup):
    pass

def test_teardown_error(broken_teardown):
    pass

def test_fail_and_teardown_error(broken_teardown):
    assert False, "call failed"

@pytest.mark.skip(reason="[unsupported] CPU has no 2:4 kernels")
def test_skip_unsupported():
    pass

def test_skip_hardware():
    pytest.skip("[hardware] needs a GPU with compute capability 9.0")

@pytest.mark.skip(reason="[dependency] flash_attn is not installed")
def test_skip_dependency():
    pass

def test_skip_unclassified():
    pytest.skip("no class tag here")

@pytest.mark.xfail(reason="[known-issue https://github.com/pytorch/pytorch/issues/192483] non-unitary Q", strict=False)
def test_known_issue():
    assert False, "Q is not unitary"

@pytest.mark.xfail(reason="[known-issue https://example.org/issues/1] expected to fail", strict=False)
def test_xpass_nonstrict():
    pass

@pytest.mark.xfail(reason="[known-issue https://example.org/issues/2] strictly expected to fail", strict=True)
def test_xpass_strict():
    pass

@pytest.mark.flaky(reruns=1)
def test_flaky():
    marker = Path(__file__).with_name(".flaky-first-attempt")
    if not marker.exists():
        marker.write_text("x")
        assert False, "first attempt fails"

@pytest.mark.timeout(1)
def test_hangs():
    time.sleep(30)

def test_crashes():
    os.abort()

def test_after_crash():
    pass
"""

DIES = """
import os, signal, time

def test_first():
    pass

def test_kills_runner():
    # The pytest process itself dies (as under the OOM killer): no JUnit is written at all.
    os.kill(os.getppid(), signal.SIGKILL)
    time.sleep(10)

def test_never_runs():
    pass
"""


@pytest.fixture(scope="module")
def taxonomy_cell(tmp_path_factory):
    from tests.cellfactory import write_suite

    root = tmp_path_factory.mktemp("taxonomy")
    suites = write_suite(
        root / "suites",
        {
            "alpha/conftest.py": SOFT_TIMEOUT_CONFTEST,
            "alpha/test_taxonomy.py": TAXONOMY,
            "beta/test_beta.py": "def test_beta_ok():\n    pass\n",
        },
    )
    outcome = run_sample_cell(suites, root / "results", cell_id="cpu-taxonomy")
    return outcome


@pytest.fixture(scope="module")
def records(taxonomy_cell):
    result = ingest_cell(taxonomy_cell.cell_dir)
    return {r.nodeid.split("::")[-1]: r for r in result.records}


def test_cell_completed_with_all_files(taxonomy_cell):
    assert taxonomy_cell.status == CellStatus.COMPLETED.value
    names = {p.name for p in taxonomy_cell.cell_dir.iterdir()}
    assert {"manifest.json", "junit.xml", "events.jsonl", "collected.json", "output.log"} <= names
    manifest = json.loads((taxonomy_cell.cell_dir / "manifest.json").read_text())
    assert manifest["cell_id"] == "cpu-taxonomy"
    assert manifest["environment"]["torch"]["version"].startswith("2.")
    assert manifest["finished_at"] and manifest["exit"]["code"] == 1


def test_every_collected_test_has_one_record(taxonomy_cell, records):
    collected = json.loads((taxonomy_cell.cell_dir / "collected.json").read_text())
    assert collected["count"] == 17
    assert len(records) == 17  # fail + teardown error, and flaky attempts, are one test each


@pytest.mark.parametrize(
    ("name", "outcome"),
    [
        ("test_passes", Outcome.PASSED),
        ("test_fails", Outcome.FAILED),
        ("test_setup_error", Outcome.ERROR),
        ("test_teardown_error", Outcome.ERROR),
        ("test_fail_and_teardown_error", Outcome.FAILED),
        ("test_skip_unsupported", Outcome.SKIPPED),
        ("test_known_issue", Outcome.XFAILED),
        ("test_xpass_nonstrict", Outcome.XPASSED),
        ("test_xpass_strict", Outcome.XPASSED),
        ("test_flaky", Outcome.FLAKY),
        ("test_hangs", Outcome.TIMEOUT),
        ("test_crashes", Outcome.CRASHED),
        ("test_after_crash", Outcome.PASSED),
        ("test_beta_ok", Outcome.PASSED),
    ],
)
def test_outcome(records, name, outcome):
    assert records[name].outcome is outcome, records[name]


@pytest.mark.parametrize(
    ("name", "skip_class", "text"),
    [
        ("test_skip_unsupported", SkipClass.UNSUPPORTED, "CPU has no 2:4 kernels"),
        ("test_skip_hardware", SkipClass.HARDWARE, "needs a GPU with compute capability 9.0"),
        ("test_skip_dependency", SkipClass.DEPENDENCY, "flash_attn is not installed"),
        ("test_skip_unclassified", SkipClass.UNCLASSIFIED, "no class tag here"),
    ],
)
def test_skip_classes(records, name, skip_class, text):
    record = records[name]
    assert record.outcome is Outcome.SKIPPED
    assert record.skip_class is skip_class
    assert record.message == text


def test_known_issue_keeps_link(records):
    record = records["test_known_issue"]
    assert record.skip_class is SkipClass.KNOWN_ISSUE
    assert record.link == "https://github.com/pytorch/pytorch/issues/192483"
    assert record.message == "non-unitary Q"


def test_xpass_strictness(records):
    assert records["test_xpass_nonstrict"].strict is False
    assert records["test_xpass_strict"].strict is True
    assert records["test_xpass_strict"].link == "https://example.org/issues/2"


def test_failure_text_and_teardown_message_kept(records):
    assert "arithmetic is broken" in records["test_fails"].message
    assert "setup exploded" in records["test_setup_error"].message
    assert "teardown exploded" in records["test_teardown_error"].message
    both = records["test_fail_and_teardown_error"]
    assert "call failed" in both.message
    assert any("teardown exploded" in m for m in both.extra_messages)


def test_flaky_counts_once_and_keeps_failure(records):
    flaky = records["test_flaky"]
    assert flaky.attempts == 2
    assert "first attempt fails" in flaky.message


def test_timeout_and_crash_details(records):
    assert "Timeout: test exceeded 1 s" in records["test_hangs"].message
    crashed = records["test_crashes"]
    assert crashed.signal == "Aborted"
    assert "crashed" in crashed.message


def test_properties_and_features(records):
    assert records["test_passes"].properties["perf.speedup"] == {"value": 3.5, "unit": "x", "shape": "(8,8)"}
    assert records["test_passes"].feature == "alpha"
    assert records["test_beta_ok"].feature == "beta"
    assert records["test_passes"].duration is not None


def test_junit_alone_gives_the_same_outcomes(taxonomy_cell, tmp_path):
    """Without the event log (e.g. a foreign runner), JUnit alone still classifies every test,
    except what JUnit cannot encode: a non-strict XPASS is a plain pass there."""
    copy = tmp_path / "cell"
    shutil.copytree(taxonomy_cell.cell_dir, copy)
    (copy / "events.jsonl").unlink()
    junit_only = {r.nodeid.split("::")[-1]: r for r in ingest_cell(copy).records}
    with_events = {r.nodeid.split("::")[-1]: r for r in ingest_cell(taxonomy_cell.cell_dir).records}
    for name, record in with_events.items():
        expected = record.outcome
        if name == "test_xpass_nonstrict":
            expected = Outcome.PASSED
        assert junit_only[name].outcome is expected, name
    assert junit_only["test_known_issue"].link == "https://github.com/pytorch/pytorch/issues/192483"


def _event_kinds(cell) -> dict[str, list[str]]:
    """test name -> the kinds of its event lines after its start line, in order."""
    kinds: dict[str, list[str]] = {}
    for line in (cell / "events.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event.get("nodeid") and event["event"] != "start":
            kinds.setdefault(event["nodeid"].split("::")[-1], []).append(event["event"])
    return kinds


def test_a_test_that_only_passed_is_one_pass_line(taxonomy_cell):
    kinds = _event_kinds(taxonomy_cell.cell_dir)
    assert kinds["test_beta_ok"] == ["pass"]
    assert kinds["test_passes"] == ["finish"]  # it recorded a property: the finish line carries it
    assert kinds["test_fails"] == ["report", "finish"]
    # pytest-rerunfailures ends each attempt: the failed one's rerun report and finish, then the
    # retry, which only passed. The test is one record, flaky (test_flaky_counts_once_...).
    assert kinds["test_flaky"] == ["report", "finish", "pass"]


def test_logs_written_before_pass_lines_read_the_same(taxonomy_cell, tmp_path):
    """Cells from before the plugin wrote `pass` lines have a `finish` with the passed phases."""
    copy = Path(shutil.copytree(taxonomy_cell.cell_dir, tmp_path / "cell"))
    lines = []
    for line in (copy / "events.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["event"] == "pass":
            passed = {"setup": 0.0, "call": event["duration"], "teardown": 0.0}
            event = {"event": "finish", "time": event["time"], "nodeid": event["nodeid"], "passed": passed}
        lines.append(json.dumps(event))
    (copy / "events.jsonl").write_text("\n".join(lines) + "\n")
    assert '"event": "pass"' not in (copy / "events.jsonl").read_text()
    old = {r.nodeid: r.result for r in ingest_cell(copy).records}
    new = {r.nodeid: r.result for r in ingest_cell(taxonomy_cell.cell_dir).records}
    assert old == new


def test_a_pass_line_never_hides_a_reported_failure(taxonomy_cell, tmp_path):
    copy = Path(shutil.copytree(taxonomy_cell.cell_dir, tmp_path / "cell"))
    records = {r.nodeid.split("::")[-1]: r for r in ingest_cell(copy).records}
    failed, passed = records["test_fails"].nodeid, records["test_beta_ok"].nodeid
    with (copy / "events.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"event": "pass", "nodeid": failed, "duration": 1.0}) + "\n")
        handle.write(
            json.dumps({"event": "pass", "nodeid": "alpha/test_new.py::test_bad_time", "duration": "x"}) + "\n"
        )
    again = {r.nodeid: r for r in ingest_cell(copy).records}
    assert again[failed].outcome is Outcome.FAILED
    assert again[passed].outcome is Outcome.PASSED
    assert again["alpha/test_new.py::test_bad_time"].outcome is Outcome.PASSED
    assert again["alpha/test_new.py::test_bad_time"].duration == 0.0


def test_dead_runner_gives_crashed_and_not_run(sample_suite, tmp_path):
    suites = sample_suite({"alpha/test_dies.py": DIES})
    outcome = run_sample_cell(suites, tmp_path / "results", cell_id="cpu-dies")
    assert outcome.status == CellStatus.CRASHED.value
    assert outcome.manifest.exit.signal == "SIGKILL"
    assert not (outcome.cell_dir / "junit.xml").exists()
    by_name = {r.nodeid.split("::")[-1]: r for r in ingest_cell(outcome.cell_dir).records}
    assert by_name["test_first"].outcome is Outcome.PASSED
    assert by_name["test_kills_runner"].outcome is Outcome.CRASHED
    assert by_name["test_never_runs"].outcome is Outcome.NOT_RUN
