"""The JUnit reader: a cell's JUnit files (junit.xml, or the files `harness import` reads), every
testcase into the plain-pass store (plainstore.py), by the identity rules of identity.py and the
retry rule of attempts.py.

The speed trick, behind `plain=`: a testcase that passed plainly (decide.is_plain_pass: no result
or retried element, no status but CTest's `run`, a time, only bookkeeping properties) is kept as a
plain pass (an id and a time, like the event log's `pass` lines, decided in bulk by
plainstore.plain_results) instead of attempts, a TestState and decide() per testcase: most of any
report, about a third of the import's per-testcase work (benchmarks/bench_import.py).
`plain=True` reads every testcase the general way; tests/ingest/test_junit_reader.py holds both to the
same results on real reports of every dialect.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from operator import itemgetter
from pathlib import Path
from typing import BinaryIO, Final

from harness.ingest import attempts as normalise
from harness.ingest.decide import Attempt, Phase, Said, Status, is_plain_pass
from harness.ingest.identity import IdentityRules, is_pytest
from harness.ingest.junit_stream import JUnitCase, JUnitRead, iter_junit
from harness.ingest.plainstore import BOOKKEEPING, OUTPUT_CAP, SCOPES, Gather, add_properties
from harness.model import trim
from harness.outcomes import Scope
from harness.regular_file import open_regular

JUNIT_DIR: Final = "junit"
_FIRST: Final = itemgetter(0)


def junit_files(cell: Path) -> list[Path]:
    """junit.xml, and the files `harness import` put under junit/ (in name order)."""
    files = [cell / "junit.xml"] if (cell / "junit.xml").exists() else []
    folder = cell / JUNIT_DIR
    if folder.is_dir():
        files += sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() == ".xml")
    return files


def junit_plain_pass(case: JUnitCase) -> bool:
    """The testcase passed and says nothing else a result would keep: no result or retried
    element, no status (CTest's `run` aside), a time (a plain pass carries one), and only
    bookkeeping properties."""
    status = case.attrs.get("status")
    extra = case.properties and not BOOKKEEPING.issuperset(map(_FIRST, case.properties))
    # Said's fields by position (verdict, time, others, properties): a keyword call costs more, per testcase
    return is_plain_pass(Said(status is None or status == "run", case.time, case.results or case.reruns, extra))


def recorded_of(case: JUnitCase, planned: tuple[str | None, Scope | None] | None) -> tuple[str | None, Scope | None]:
    """The feature and scope a plain pass's properties give (over the plan's)."""
    feature, scope = planned or (None, None)
    for key, value in case.properties:
        if key == "feature" and value:
            feature = sys.intern(value)
        elif key == "scope":
            scope = SCOPES.get(value, scope)
    return feature, scope


def read_junit_files(
    files: list[Path],
    gather: Gather,
    errors: list[str],
    notes: list[str] | None = None,
    *,
    opener: Callable[[Path], BinaryIO] | None = None,
    reads: list[JUnitRead] | None = None,
    label: Callable[[Path], str] = lambda path: path.name,
    plain: bool = False,
) -> int:
    """Every testcase of every file; tests the event log already decided only lend their output.

    Ids are unique within a file (identity.IdentityRules); an id that an earlier file also has
    is a second report of that test, and the later file decides (docs/outcomes.md, "Repeats"):
    the earlier file's runs of it are dropped, never read as attempts. `notes` gets one line per
    file that shared ids with an earlier one. `opener`: how to open each file (harness import
    reads its inputs as it copies them); `reads` gets each file's JUnitRead (its counts); `label`
    names a file in the notes; `plain`: no testcase kept as a plain pass (the plain path)."""
    count = 0
    tests, plain = gather.tests, gather.plain
    junit_plain, plain_from, recorded = gather.junit_plain, gather.junit_plain_from, gather.recorded
    fast = not plain
    for index, path in enumerate(files):
        read = JUnitRead(path=path)
        rules = IdentityRules()
        replaced: dict[int, int] = {}  # earlier file -> how many of its tests this file decides
        pytest_phases: bool | None = None
        if reads is not None:
            reads.append(read)
        for case in iter_junit(path, read, opener(path) if opener is not None else None):
            count += 1
            if fast and junit_plain_pass(case):
                nodeid, copy = rules.test_id(case, read)
                if nodeid in plain or copy:
                    continue  # the event log decided it; or a copy of the previous testcase
                earlier = plain_from.get(nodeid)
                if nodeid not in tests and (earlier is None or earlier != index):
                    if earlier is not None:  # an earlier file reported it too: this one decides
                        replaced[earlier] = replaced.get(earlier, 0) + 1
                    junit_plain[nodeid] = case.time  # type: ignore[assignment]
                    plain_from[nodeid] = index
                    if case.properties:
                        recorded[nodeid] = recorded_of(case, gather.plan.get(nodeid))
                    continue
                runs = [Attempt(Phase.TEST, Status.PASSED, duration=case.time)]
            else:
                if pytest_phases is None:
                    pytest_phases = is_pytest(read)
                runs = normalise.case_attempts(case, pytest_phases=pytest_phases)
                nodeid, copy = rules.test_id(case, read)
                if nodeid in plain:
                    continue  # the event log decided it: it passed
            test = tests.get(nodeid)
            if test is None:
                test = gather.test(nodeid)
                earlier = plain_from.pop(nodeid, None)
                if earlier is not None:  # it looked plain so far: its pass is its first run
                    test.runs = [[Attempt(Phase.TEST, Status.PASSED, duration=junit_plain.pop(nodeid))]]
                    test.source = earlier
                    test.feature, test.scope = recorded.pop(nodeid, (None, None))
            if (case.system_out or case.system_err) and test.output is None:
                test.output = trim("\n".join(t for t in (case.system_out, case.system_err) if t), OUTPUT_CAP)
            if test.reported or copy:
                continue  # the event log decides and has the properties; JUnit adds only output
            if test.source != index:
                if test.source >= 0:  # an earlier file reported it too: this one decides
                    replaced[test.source] = replaced.get(test.source, 0) + 1
                    test.properties = None
                test.source, test.runs = index, [runs]
            else:
                test.runs.append(runs)  # type: ignore[union-attr]
                test.pytest_report = is_pytest(read)  # a repeat: how to read it depends on the report
            if case.properties:
                add_properties(test, case.properties)
        errors.extend(e for e in read.errors if not e.endswith(": missing"))
        if notes is not None:
            for earlier, shared in replaced.items():
                notes.append(
                    f"{label(path)}: {shared} test id(s) also in {label(files[earlier])} (given before it):"
                    f" read as two runs of each test; the later file decides, the earlier file's results"
                    f" of them are left out"
                )
    # The plain passes join the event log's (never the same ids: those were skipped above).
    plain.update(junit_plain)
    junit_plain.clear()
    plain_from.clear()
    return count


def junit_ends_well(path: Path) -> bool:
    """Does the file end with the closing tag of its root (not cut off mid-write)?"""
    try:
        with open_regular(path) as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - 4096))
            tail = handle.read().rstrip()
    except OSError:
        return False
    return tail.endswith((b"</testsuites>", b"</testsuite>"))
