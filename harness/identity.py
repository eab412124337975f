"""Test identity across JUnit dialects: which <testcase>s are one test, and its id.

Rules (docs/outcomes.md, "Test identity"):
- a recorded `nodeid` property (the cell plugin's) is the id;
- pytest's JUnit: the node id rebuilt from file, classname and name; several <testcase>s with
  the same node id are runs or phases of one test (teardown errors, pytest-rerunfailures);
- every other dialect: the suite path (nested <testsuite> names; a sibling suite of an equal
  name is told apart by its position), or the `file` attribute where the producer writes
  one, then classname and name. Each <testcase> is its own test: equal ids get " (2)", " (3)"...
  in the order they appear, so nothing is merged that the producer did not merge.
"""

from __future__ import annotations

from typing import Final

from harness.junit import JUnitCase, JUnitRead

PYTEST_ROOT_NAMES: Final = frozenset({"pytest tests"})
PYTEST_SUITE_NAMES: Final = frozenset({"pytest"})
UNNAMED: Final = "(unnamed testcase)"
SEPARATOR: Final = "::"


def is_pytest(read: JUnitRead) -> bool:
    """pytest names its root `<testsuites name="pytest tests">` (older: `<testsuite name="pytest">`)."""
    if read.root_name is not None:
        return read.root_name in PYTEST_ROOT_NAMES
    return read.first_suite in PYTEST_SUITE_NAMES


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


def generic_id(case: JUnitCase) -> str:
    """Suite path (or file), classname, name; repeated neighbours are written once."""
    parts: list[str] = []
    if case.file:
        parts.append(case.file)
        parts.extend(s for s in case.suites if s)
    else:
        parts.extend(s for s in case.suite_keys if s and s != "#")
    classname, name = case.classname, case.name or UNNAMED
    if classname and classname != name and not (parts and parts[-1] == classname):
        parts.append(classname)
    parts.append(name)
    kept = [p for i, p in enumerate(parts) if i == 0 or p != parts[i - 1]]
    return SEPARATOR.join(kept)


class IdentityRules:
    """Assigns ids to a cell's testcases as they stream by (over all of its JUnit files)."""

    def __init__(self) -> None:
        self._given: set[str] = set()  # ids handed out to cases that are each their own test

    def test_id(self, case: JUnitCase, read: JUnitRead) -> tuple[str, bool]:
        """(id, groups): `groups` is true when equal ids are one test (pytest runs and phases)."""
        recorded = case.property("nodeid")
        if recorded:
            return recorded, True
        if is_pytest(read):
            return pytest_nodeid(case), True
        base = candidate = generic_id(case)
        count = 1
        while candidate in self._given:
            count += 1
            candidate = f"{base} ({count})"
        self._given.add(candidate)
        return candidate, False
