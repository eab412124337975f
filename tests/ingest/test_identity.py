"""Test identity across JUnit dialects (harness/ingest/identity.py), the rules docs/outcomes.md
states, on the real files of tests/dialects/: pytest ids are node ids (xunit1 and xunit2 agree),
a repeat of an id in one report is a run of that test (Go's reruns, Xcode's repeated suites), except
in Jest, Mocha, CTest and TestNG, where every repeat is a test of its own numbered ` (2)`; a sibling
suite of an equal name is the same suite run again, except there and in Go reports (position kept);
a testcase without a name is a test of its own; jest-junit's doubled stand-in is one row. Ids are
given per file.
Hand-built testcases only for what no producer file here holds."""

from __future__ import annotations

from pathlib import Path

from harness.ingest.identity import (
    IdentityRules,
    generic_id,
    is_jest,
    is_jest_suite_failure,
    is_pytest,
    pytest_nodeid,
)
from harness.ingest.junit_stream import JUnitCase, JUnitRead, read_junit

DIALECTS = Path(__file__).resolve().parents[1] / "dialects"


def _ids(path: Path) -> list[tuple[str, bool]]:
    """(id, copy) of every testcase of one real file, as ingest asks for them."""
    read = read_junit(path)
    rules = IdentityRules()
    return [rules.test_id(case, read) for case in read.cases]


def _case(index: int = 1, suites: tuple[str, ...] = ("s",), **attrs: str) -> JUnitCase:
    return JUnitCase(suites=suites, suite_keys=suites, attrs=attrs, index=index)


def test_pytest_ids_are_node_ids_and_both_junit_families_agree() -> None:
    xunit1, xunit2 = _ids(DIALECTS / "pytest" / "junit-xunit1.xml"), _ids(DIALECTS / "pytest" / "junit-xunit2.xml")
    assert xunit1 == xunit2
    ids = [i for i, _ in xunit1]
    assert not any(copy for _, copy in xunit1), "pytest never writes a copy of a testcase"
    assert "pkg_a/test_calc.py::TestCalc::test_add" in ids and "pkg_b/test_calc.py::TestCalc::test_add" in ids
    assert "test_outcomes.py::test_odd_ids[a::b]" in ids
    assert ids[:2] == ["test_collect_error.py", "test_missing_dep.py"], "a module that failed to collect"
    assert ids.count("test_outcomes.py::test_rerun_fails_twice_then_passes") == 3, "rerunfailures' runs"


def test_an_inherited_test_takes_its_path_from_the_classname_not_the_file() -> None:
    case = _case(classname="test_inherit.TestSlow", name="test_mode_is_fast", file="base_checks.py")
    assert pytest_nodeid(case) == "test_inherit.py::TestSlow::test_mode_is_fast"
    confirmed = _case(classname="pkg.sub.test_m.TestA", name="t", file="pkg/sub/test_m.py")
    assert pytest_nodeid(confirmed) == "pkg/sub/test_m.py::TestA::t"


def test_every_other_testcase_is_a_test_of_its_own() -> None:
    ctest = [i for i, _ in _ids(DIALECTS / "ctest" / "junit.xml")]
    assert ctest.count("(empty)::same_name") == 1 and "(empty)::same_name (2)" in ctest
    assert len(ctest) == len(set(ctest))
    testng = [i for i, _ in _ids(DIALECTS / "testng" / "junitreports" / "TEST-com.example.a.CalcTest.xml")]
    assert testng == [
        "com.example.a.CalcTest::divide",
        "com.example.a.CalcTest::add",
        "com.example.a.CalcTest::add (2)",
        "com.example.a.CalcTest::divide (2)",
    ]


def test_sibling_suites_of_an_equal_name_keep_their_position() -> None:
    ids = [i for i, _ in _ids(DIALECTS / "jest" / "junit.xml")]
    assert "Calculator::Calculator adds" in ids and "Calculator#2::Calculator adds" in ids


def test_repeats_in_one_report_are_runs_of_one_test() -> None:
    ids = _ids(DIALECTS / "gotestsum" / "junit-rerun.xml")
    names = [i for i, _ in ids]
    assert names.count("example.com/dialect/calc::TestDivide") == 3, "two reruns after failures: one test"
    read = JUnitRead(path=Path("go.xml"), suite_properties={"go.version": "go1.22"})
    rules = IdentityRules()
    passed = _case(suites=("pkg",), name="TestX", classname="pkg")
    again = _case(index=2, suites=("pkg",), name="TestX", classname="pkg")
    assert rules.test_id(passed, read) == ("pkg::TestX", False)
    assert rules.test_id(again, read) == ("pkg::TestX", False), "a repeat after a pass: a run of the same test"
    xcode = [i for i, _ in _ids(DIALECTS / "xcresultparser" / "junit_repeated.xml")]
    assert xcode == ["test_repeatTests::test_random()"] * 3, "three repeated sibling suites: one test"


def test_go_sibling_suites_of_an_equal_name_are_two_packages() -> None:
    ids = [i for i, _ in _ids(DIALECTS / "gotestsum" / "junit-short.xml")]
    assert "calc::TestAdd" in ids and "calc#2::TestAdd" in ids


def test_jest_junits_doubled_stand_in_for_a_broken_file_is_one_row() -> None:
    ids = _ids(DIALECTS / "jest" / "junit-file-attr.xml")
    broken = [(i, copy) for i, copy in ids if "broken.test.js" in i]
    name = "__tests__/broken.test.js::Test suite failed to run::__tests__/broken.test.js"
    assert broken == [(name, False), (name, True)], "the second is a copy of the first: one row"


def test_a_recorded_nodeid_property_is_the_id_whatever_the_file_says() -> None:
    case = _case(classname="whatever", name="other")
    case.properties.append(("nodeid", "alpha/test_a.py::test_x[1]"))
    read = JUnitRead(path=Path("j.xml"), root_name="some tool")
    assert IdentityRules().test_id(case, read) == ("alpha/test_a.py::test_x[1]", False)


def test_testcases_without_a_name_are_tests_of_their_own_by_position() -> None:
    for read in (JUnitRead(path=Path("j.xml")), JUnitRead(path=Path("p.xml"), root_name="pytest tests")):
        rules = IdentityRules()
        cases = [JUnitCase(suites=(), suite_keys=(), attrs={}, index=n) for n in (1, 2, 3)]
        cases.append(JUnitCase(suites=("s",), suite_keys=("s",), attrs={"classname": "c"}, index=4))
        given = [rules.test_id(case, read)[0] for case in cases]
        assert given == [f"(unnamed testcase #{n})" for n in (1, 2, 3)] + ["s::c::(unnamed testcase #4)"]


def test_every_repeat_is_a_test_in_jest_mocha_ctest_and_testng() -> None:
    read = JUnitRead(path=Path("j.xml"), root_name="some tool")
    rules = IdentityRules()
    assert rules.test_id(_case(name="t"), read)[0] == "s::t"
    assert rules.test_id(_case(index=2, name="t"), read)[0] == "s::t", "a run of the same test"
    jest = JUnitRead(path=Path("j.xml"), root_name="jest tests")
    rules = IdentityRules()
    assert rules.test_id(_case(name="t"), jest)[0] == "s::t"
    assert rules.test_id(_case(index=2, name="t"), jest)[0] == "s::t (2)", "Jest: every row a test"


def test_a_classname_that_repeats_the_name_or_suite_is_left_out() -> None:
    assert generic_id(_case(classname="adds", name="Calculator adds")) == "s::Calculator adds"
    assert generic_id(_case(suites=("pkg",), classname="pkg", name="TestA")) == "pkg::TestA"
    assert generic_id(_case(classname="com.x.Outer$Inner", name="m")) == "s::com.x.Outer$Inner::m"
    assert generic_id(_case(suites=(), classname="c", name="n", file="src/a.test.js")) == "src/a.test.js::c::n"


def test_dialect_detection() -> None:
    assert is_pytest(read_junit(DIALECTS / "pytest" / "junit-xunit1.xml"))
    assert not is_pytest(read_junit(DIALECTS / "jest" / "junit.xml"))
    assert is_pytest(JUnitRead(path=Path("old.xml"), first_suite="pytest")), "old pytest: a root <testsuite>"
    assert is_jest(read_junit(DIALECTS / "jest" / "junit.xml"))
    assert not is_jest(read_junit(DIALECTS / "surefire" / "junit" / "TEST-com.example.a.CalcTest.xml"))
    stand_ins = [c for c in read_junit(DIALECTS / "jest" / "junit-file-attr.xml").cases if is_jest_suite_failure(c)]
    assert len(stand_ins) == 3, "the afterAll stand-in and the broken file's pair"
