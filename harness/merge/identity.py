"""Test identity across JUnit dialects: which <testcase>s are one test, and its id.

Rules (docs/outcomes.md, "Test identity", a row per dialect):
- a recorded `nodeid` property (the cell plugin's) is the id;
- pytest's JUnit: the node id rebuilt from file, classname and name; several <testcase>s with
  the same node id are runs or phases of one test (teardown errors, pytest-rerunfailures);
- Go (gotestsum, go-junit-report: a `go.version` suite property): Go names are unique in a
  package, and gotestsum `--rerun-fails` writes each attempt as another <testcase> with the
  same classname and name, so a repeat that follows a failed attempt in the same file is a
  rerun of that test. A repeat after a pass or skip is not a rerun (gotestsum reruns only
  failures; `go test -count=N` repeats every run) and stays a test of its own;
- every other dialect: the suite path (nested <testsuite> names; a sibling suite of an equal
  name is told apart by its position), or the `file` attribute where the producer writes
  one, then classname and name. Each <testcase> is its own test: equal ids get " (2)", " (3)"...
  in the order they appear, so nothing is merged that the producer did not merge. The one
  exception is a report the producer writes twice (jest-junit's "Test suite failed to run"
  pair): the second copy gets the first one's id, ungrouped, so the first decides.

Contract with ingest: `test_id` returns (id, grouped). The first <testcase> of an id sets
`grouped`; when it is true every <testcase> of the id is a run or phase of one test
(attempts.pytest_run_attempts), when it is false the first <testcase> alone decides.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from harness.merge.junit import JUnitCase, JUnitRead

PYTEST_ROOT_NAMES: Final = frozenset({"pytest tests"})
PYTEST_SUITE_NAMES: Final = frozenset({"pytest"})
GO_VERSION_PROPERTY: Final = "go.version"
UNNAMED: Final = "(unnamed testcase)"
SEPARATOR: Final = "::"
# jest-junit's made-up testcases for failures outside any test (jest-junit 17, src/utils/buildJsonResults.js).
JEST_HOOK_FAILURE: Final = "Test execution failure: could be caused by test hooks like 'afterAll'."
JEST_SUITE_FAILURE: Final = "Test suite failed to run"


def is_pytest(read: JUnitRead) -> bool:
    """pytest names its root `<testsuites name="pytest tests">` (older: `<testsuite name="pytest">`)."""
    if read.root_name is not None:
        return read.root_name in PYTEST_ROOT_NAMES
    return read.first_suite in PYTEST_SUITE_NAMES


def is_go(read: JUnitRead) -> bool:
    """gotestsum and go-junit-report put `go.version` in every package's <testsuite> properties."""
    return GO_VERSION_PROPERTY in read.suite_properties


def is_jest_suite_failure(case: JUnitCase) -> bool:
    """jest-junit's stand-ins for a file that failed outside its tests: an `afterAll` (or other
    hook) that threw, or (`reportTestSuiteErrors`) a file that failed to load. Jest counts no
    test for them; it fails the file ("Test Suites: N failed")."""
    classname, name = case.classname.strip(), case.name.strip()
    # The title ends the default templates ("{classname} {title}"); a file that did not load
    # gets the fixed classname whatever the templates say.
    return classname == JEST_SUITE_FAILURE or classname.endswith(JEST_HOOK_FAILURE) or name.endswith(JEST_HOOK_FAILURE)


def pytest_nodeid(case: JUnitCase) -> str:
    """pytest's node id: `path/to/test_mod.py::Class::test[param]`.

    pytest's classname is the node id's path with `/` -> `.` and `.py` dropped, then the classes.
    The `file` attribute (xunit1) is where the function is defined, which for an inherited test
    is the base class's module, not the collected one; so the path comes from the classname,
    and `file` only says where the path ends when it agrees with it.
    """
    classname, name = case.classname, case.name or UNNAMED
    if not classname:
        # Only a collection error has no classname: its name is the module, dotted.
        if name != UNNAMED and all(part.isidentifier() for part in name.split(".")):
            return name.replace(".", "/") + ".py"
        return name
    pieces = classname.split(".")
    file = case.file
    if file and file.endswith(".py"):
        module = file[: -len(".py")].replace("/", ".")
        if classname == module or classname.startswith(module + "."):
            rest = classname[len(module) :].lstrip(".")
            return SEPARATOR.join([file, *(rest.split(".") if rest else []), name])
    # Classes are CamelCase (pytest collects `Test*`); path parts are modules and packages.
    split = next((i for i, piece in enumerate(pieces) if piece[:1].isupper()), len(pieces))
    path, classes = pieces[:split], pieces[split:]
    if not path:
        return SEPARATOR.join([*classes, name])
    return SEPARATOR.join(["/".join(path) + ".py", *classes, name])


def _classname_adds_nothing(classname: str, name: str, suite: str | None) -> bool:
    """The classname repeats what the id already says: the name (jest-junit writes both the
    same), the end of the name (mocha-junit-reporter writes the test's own title as classname
    and its full title as name), or the suite (gotestsum: package; mocha jenkinsMode: the
    suite `Root Suite.A.B` of classname `A.B`)."""
    if classname == name or name.endswith(" " + classname):
        return True
    return suite is not None and (classname == suite or suite.endswith("." + classname))


def generic_id(case: JUnitCase) -> str:
    """Suite path (or file), classname, name; repeated neighbours are written once."""
    parts: list[str] = []
    if case.file:
        parts.append(case.file.strip())
        parts.extend(s.strip() for s in case.suites if s.strip())
    else:
        parts.extend(s.strip() for s in case.suite_keys if s.strip() and s != "#")
    classname, name = case.classname.strip(), case.name.strip() or UNNAMED
    suite = case.suites[-1].strip() if case.suites else None
    if classname and not _classname_adds_nothing(classname, name, suite):
        parts.append(classname)
    parts.append(name)
    kept = [p for i, p in enumerate(parts) if i == 0 or p != parts[i - 1]]
    return SEPARATOR.join(kept)


class IdentityRules:
    """Assigns ids to a cell's testcases as they stream by (over all of its JUnit files)."""

    def __init__(self) -> None:
        self._given: set[str] = set()  # ids handed out to cases that are each their own test
        self._counts: dict[str, int] = {}  # generic id -> the highest n of "id (n)" handed out
        self._file: Path | None = None
        self._previous: tuple[str, str] | None = None  # (generic id, id given) of the file's previous case
        self._go_latest: dict[str, str] = {}  # Go, this file: generic id -> the id its latest case got
        self._go_failed: dict[str, bool] = {}  # Go, this file: id given -> did its latest attempt fail

    def test_id(self, case: JUnitCase, read: JUnitRead) -> tuple[str, bool]:
        """(id, grouped): `grouped` is true when equal ids are one test (runs and phases)."""
        if read.path != self._file:
            self._file, self._previous, self._go_latest, self._go_failed = read.path, None, {}, {}
        recorded = case.property("nodeid")
        if recorded:
            return recorded, True
        if is_pytest(read) and case.name:
            return pytest_nodeid(case), True
        base = generic_id(case)
        if is_go(read) and case.name:
            return self._go_id(case, base)
        previous = self._previous
        if previous is not None and previous[0] == base and is_jest_suite_failure(case):
            return previous[1], False  # the same failure written a second time
        given = self._unique(base)
        self._previous = (base, given)
        return given, False

    def _unique(self, base: str) -> str:
        """`base`, or `base (n)` with the next free n (counted on per base: 50,000 testcases with
        no attributes must not cost 50,000 probes each)."""
        count = self._counts.get(base, 1)
        candidate = base if count == 1 else f"{base} ({count})"
        while candidate in self._given:
            count += 1
            candidate = f"{base} ({count})"
        self._counts[base] = count
        self._given.add(candidate)
        return candidate

    def _go_id(self, case: JUnitCase, base: str) -> tuple[str, bool]:
        """A repeat that follows a failed attempt in this file is a rerun (same id, grouped);
        anything else is a test of its own. Heuristic: `go test -count=2` writing a failed run
        and then a passing one reads as a rerun too; the XML of the two is the same."""
        failed = any(r.kind in ("failure", "error") for r in case.results)
        given = self._go_latest.get(base)
        if given is None or not self._go_failed[given]:
            given = self._unique(base)
            self._go_latest[base] = given
        self._go_failed[given] = failed
        return given, True
