"""The streaming JUnit reader (harness/ingest/junit_stream.py) on real files of real producers
(tests/dialects/), and on those files damaged as runs damage them (cut short, garbage inside,
huge bodies): what precedes a problem is kept, the problem is one message naming the file, text
is capped head and tail, a passing test's output is never kept. Small hand-made XML only where no
producer writes it: DOCTYPE and entities, absurd nesting, a wrong root, an unreadable time."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.ingest.junit_stream import (
    MAX_DEPTH,
    OUTPUT_CAP,
    TEXT_CAP,
    JUnitCase,
    JUnitRead,
    iter_junit,
    parse_time,
    read_junit,
)

DIALECTS = Path(__file__).resolve().parents[1] / "dialects"
XUNIT1 = DIALECTS / "pytest" / "junit-xunit1.xml"
XUNIT2 = DIALECTS / "pytest" / "junit-xunit2.xml"
SUREFIRE = DIALECTS / "surefire" / "junit" / "TEST-com.example.edge.OutcomesTest.xml"


def _names(cases: list[JUnitCase]) -> list[tuple[str, str]]:
    return [(c.classname, c.name) for c in cases]


def _written(tmp_path: Path, data: bytes | str, name: str = "junit.xml") -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


# -- real files ---------------------------------------------------------------------------------
def test_a_real_pytest_file_is_read_whole() -> None:
    read = read_junit(XUNIT1)
    assert read.errors == []
    assert read.count == len(read.cases) == XUNIT1.read_text(encoding="utf-8").count("<testcase ")
    assert (read.root, read.root_name, read.first_suite, read.suites) == ("testsuites", "pytest tests", "pytest", 1)
    assert [c.index for c in read.cases] == list(range(1, read.count + 1))
    divide = next(c for c in read.cases if c.name == "test_divide" and c.classname.startswith("pkg_a"))
    (failure,) = divide.results
    assert failure.kind == "failure" and failure.message == "assert (7 // 2) == 4"
    assert failure.text and "AssertionError" in failure.text
    assert divide.file == "pkg_a/test_calc.py" and divide.attrs["line"] == "7"
    owner = next(c for c in read.cases if c.property("owner"))
    assert owner.property("owner") == "team | <b>core</b>", "entities of the XML itself are decoded"


def test_a_passing_tests_output_is_never_kept_and_a_failing_ones_is() -> None:
    """xunit2 with junit_logging=all writes output for every test: only a failure's is kept."""
    read = read_junit(XUNIT2)
    assert read.errors == []
    passing = [c for c in read.cases if not c.results and not c.reruns]
    failing = [c for c in read.cases if any(r.kind == "failure" for r in c.results)]
    assert passing and failing
    assert all(c.system_out is None and c.system_err is None for c in passing)
    assert any(c.system_out or c.system_err for c in failing)


def test_sibling_suites_of_one_name_are_told_apart_by_position() -> None:
    read = read_junit(DIALECTS / "jest" / "junit.xml")
    keys = {c.suite_keys[-1] for c in read.cases}
    assert {"Calculator", "Calculator#2"} <= keys
    assert {c.suites[-1] for c in read.cases if c.suite_keys[-1] == "Calculator#2"} == {"Calculator"}


def test_suite_properties_say_which_tool_wrote_the_file() -> None:
    assert "go.version" in read_junit(DIALECTS / "gotestsum" / "junit.xml").suite_properties
    assert "go.version" not in read_junit(XUNIT1).suite_properties


def test_surefire_attempts_keep_their_stack_trace_as_text() -> None:
    read = read_junit(SUREFIRE)
    flaky = next(c for c in read.cases if c.name == "flakyFailure")
    (attempt,) = flaky.reruns
    assert (attempt.kind, attempt.message, attempt.type) == ("flakyFailure", "attempt 1", "java.lang.AssertionError")
    assert attempt.text and attempt.text.startswith("java.lang.AssertionError: attempt 1")
    assert flaky.results == [], "a flaky test's last attempt passed"
    always = next(c for c in read.cases if c.name == "alwaysFails")
    assert [r.kind for r in always.reruns] == ["rerunFailure", "rerunFailure"]
    assert [r.kind for r in always.results] == ["failure"]


# -- damaged files: what precedes the damage is kept -------------------------------------------------
def test_a_truncated_file_keeps_every_testcase_before_the_cut(tmp_path: Path) -> None:
    data = XUNIT1.read_bytes()
    whole = read_junit(XUNIT1).cases
    tenth = -1
    for _ in range(10):
        tenth = data.index(b"<testcase ", tenth + 1)
    read = read_junit(_written(tmp_path, data[: tenth + 5]))
    assert _names(read.cases) == _names(whole[:9])
    (error,) = read.errors
    assert re.fullmatch(
        r"junit\.xml: truncated XML at line \d+ column \d+ \(byte \d+\): .+; kept 9 testcases read before it", error
    ), error


def test_a_file_cut_inside_a_failure_body_keeps_the_cases_before_it(tmp_path: Path) -> None:
    data = XUNIT1.read_bytes()
    cut = data.index(b"assert (7 // 2) == 4") + 5
    read = read_junit(_written(tmp_path, data[:cut]))
    assert [c.name for c in read.cases] == ["test_collect_error", "test_missing_dep", "test_add"]
    assert read.errors and "truncated XML" in read.errors[0] and "kept 3 testcases" in read.errors[0]


def test_garbage_inside_a_file_is_not_well_formed_and_keeps_what_precedes_it(tmp_path: Path) -> None:
    data = XUNIT1.read_bytes()
    fifth = data.index(b"<testcase ", data.index(b"<testcase ", data.index(b'name="test_add"') + 1) + 1)
    read = read_junit(_written(tmp_path, data[:fifth] + b"<<oops>>" + data[fifth:]))
    assert len(read.cases) == 4
    (error,) = read.errors
    assert re.fullmatch(r"junit\.xml: not well-formed XML at line \d+ .*; kept 4 testcases read before it", error), (
        error
    )


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (None, "junit.xml: missing"),
        (b"", "junit.xml: empty file"),
        (b"<html><body/></html>", "junit.xml: root element is <html>, expected <testsuites> or <testsuite>"),
    ],
    ids=["missing", "empty", "html"],
)
def test_files_that_are_not_junit(tmp_path: Path, data: bytes | None, error: str) -> None:
    path = tmp_path / "junit.xml" if data is None else _written(tmp_path, data)
    read = read_junit(path)
    assert read.cases == [] and read.errors == [error]


def test_iter_junit_streams_and_reports_into_the_given_read() -> None:
    read = JUnitRead(path=XUNIT1)
    stream = iter_junit(XUNIT1, read)
    first = next(stream)
    assert first.name == "test_collect_error" and read.count >= 1  # handed over in batches
    rest = list(stream)
    assert read.count == 1 + len(rest) and read.cases == [], "streaming keeps nothing itself"


# -- caps -------------------------------------------------------------------------------------------
def _with_failure_body(body: str, output: str = "") -> bytes:
    """The real pytest file with test_divide's failure text (and output) replaced."""
    data = XUNIT1.read_text(encoding="utf-8")
    start = data.index(">", data.index('<failure message="assert (7 // 2) == 4"')) + 1
    end = data.index("</failure>", start)
    return (data[:start] + body + "</failure>" + output + data[end + len("</failure>") :]).encode("utf-8")


def test_a_huge_failure_text_keeps_its_head_and_tail_and_says_how_much_was_dropped(tmp_path: Path) -> None:
    body = "HEAD" + "x" * 300_000 + "TAIL"
    read = read_junit(_written(tmp_path, _with_failure_body(body)))
    assert read.errors == []
    text = next(c for c in read.cases if c.name == "test_divide").results[0].text
    assert text is not None and text.startswith("HEAD") and text.endswith("TAIL")
    dropped = len(body) - TEXT_CAP
    note = f"\n... [{dropped} characters not kept; full text in the cell's files] ...\n"
    assert note in text and len(text) == TEXT_CAP + len(note)


def test_a_failing_tests_output_is_capped(tmp_path: Path) -> None:
    output = "<system-out>" + "o" * 50_000 + "END</system-out>"
    read = read_junit(_written(tmp_path, _with_failure_body("short", output)))
    case = next(c for c in read.cases if c.name == "test_divide")
    assert case.results[0].text == "short"
    assert case.system_out is not None and case.system_out.endswith("END")
    assert len(case.system_out) < OUTPUT_CAP + 200


def test_text_under_the_cap_is_kept_whole(tmp_path: Path) -> None:
    body = "y" * (TEXT_CAP - 1)
    read = read_junit(_written(tmp_path, _with_failure_body(body)))
    assert next(c for c in read.cases if c.name == "test_divide").results[0].text == body


# -- hostile XML (no producer writes these) ------------------------------------------------------
@pytest.mark.parametrize(
    "doc",
    [
        '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;">]>'
        '<testsuites><testsuite name="s"><testcase name="t"><failure>&b;</failure></testcase></testsuite></testsuites>',
        '<?xml version="1.0"?><!DOCTYPE t SYSTEM "file:///etc/passwd">'
        '<testsuite name="s"><testcase name="t"/></testsuite>',
        '<?xml version="1.0"?><!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        '<testsuite name="s"><testcase name="t"><failure>&x;</failure></testcase></testsuite>',
    ],
    ids=["billion-laughs", "external-dtd", "external-entity"],
)
def test_doctype_and_entities_are_refused_before_anything_expands(tmp_path: Path, doc: str) -> None:
    read = read_junit(_written(tmp_path, doc, "evil.xml"))
    assert read.cases == []
    assert read.errors == ["evil.xml: refused: DOCTYPE or entity declarations are not allowed in JUnit files"]


def test_absurd_nesting_is_refused(tmp_path: Path) -> None:
    depth = MAX_DEPTH + 10
    doc = "<testsuites>" + '<testsuite name="s">' * depth + "</testsuite>" * depth + "</testsuites>"
    read = read_junit(_written(tmp_path, doc))
    assert read.errors == [f"junit.xml: refused: elements nested deeper than {MAX_DEPTH} levels"]


def test_an_unreadable_time_leaves_the_duration_empty_and_says_so(tmp_path: Path) -> None:
    doc = '<testsuite name="s"><testcase name="t" time="soon"/><testcase name="u" time="15ms"/></testsuite>'
    read = read_junit(_written(tmp_path, doc))
    assert [(c.name, c.time) for c in read.cases] == [("t", None), ("u", 0.015)]
    assert read.errors == ["junit.xml: testcase 't': unreadable time 'soon'; duration left empty"]


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [("1.5", 1.5), ("15ms", 0.015), ("1,5", 1.5), ("2 min", 120.0), ("3s", 3.0), ("1e-3", 0.001), (" 4 sec ", 4.0)],
)
def test_parse_time_reads_what_producers_write(raw: str, seconds: float) -> None:
    value, problem = parse_time(raw)
    assert problem is None and value == pytest.approx(seconds)


@pytest.mark.parametrize("raw", ["soon", "-1", "1.5h", "NaN"])
def test_parse_time_names_what_it_cannot_read(raw: str) -> None:
    assert parse_time(raw) == (None, f"unreadable time {raw!r}")


def test_parse_time_of_nothing_is_nothing() -> None:
    assert parse_time(None) == parse_time("") == parse_time("  ") == (None, None)
