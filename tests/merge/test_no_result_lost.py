"""No result is ever lost (issue 31): for any JUnit the reader accepts, every <testcase> and every
retried attempt written inside one is one attempt of exactly one row, and every failure written
anywhere is still in the row it went to (its outcome, its message or its extra messages).

A property test over seeded random reports (no extra dependency): nested and sibling suites with
repeated names, testcases without a name, class or file, repeated ids, every result element and
retried-attempt element, under a generic root, pytest's root and a Go report. The seeds are fixed,
so a failure names the seed that shows it. Under pytest's root no retried element is generated:
there a repeated node id's earlier testcase is one rerun, and PyTorch's `<rerun>` inside it is
that rerun's own record, not another attempt (tests/merge/test_dialects.py holds that shape to
PyTorch's real writer)."""

from __future__ import annotations

import random
from pathlib import Path
from xml.sax.saxutils import quoteattr

import pytest

from harness.importer.junit_import import ImportSpec, import_junit
from harness.model import TestResult
from harness.outcomes import Outcome

NAMES = ["", "t", "t", "test_a", "test_b", "a::b", "ünï", None]
CLASSES = ["", "C", "C", "pkg.Mod", None]
SUITES = ["", "S", "S", "T"]
RETRIED = ("flakyFailure", "flakyError", "rerunFailure", "rerunError", "rerun")
ROOTS = ("generic", "pytest", "go")


class _Report:
    """One random report and what it holds: testcases, retried elements, failure tokens."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.testcases = 0
        self.retried = 0
        self.tokens: list[str] = []
        root = ROOTS[seed % len(ROOTS)]
        self.retries = root != "pytest"
        body = "".join(self._suite(depth=0) for _ in range(self.rng.randint(1, 3)))
        if self.testcases == 0:  # the reader refuses a report without one
            body += f"<testsuite>{self._case()}</testsuite>"
        if root == "pytest":
            self.xml = f'<testsuites name="pytest tests"><testsuite name="pytest">{body}</testsuite></testsuites>'
        elif root == "go":
            go = '<properties><property name="go.version" value="go1.22"/></properties>'
            self.xml = f'<testsuites><testsuite name="pkg">{go}{body}</testsuite></testsuites>'
        else:
            self.xml = f"<testsuites>{body}</testsuites>"

    def _token(self) -> str:
        token = f"F{len(self.tokens)}x"
        self.tokens.append(token)
        return token

    def _suite(self, depth: int) -> str:
        rng = self.rng
        parts = []
        for _ in range(rng.randint(0, 5)):
            if depth < 2 and rng.random() < 0.2:
                parts.append(self._suite(depth + 1))
            else:
                parts.append(self._case())
        return f"<testsuite name={quoteattr(rng.choice(SUITES))}>{''.join(parts)}</testsuite>"

    def _case(self) -> str:
        rng = self.rng
        self.testcases += 1
        attrs = ""
        for key, pool in (("name", NAMES), ("classname", CLASSES)):
            value = rng.choice(pool)
            if value is not None:
                attrs += f" {key}={quoteattr(value)}"
        if rng.random() < 0.2:
            attrs += ' file="dir/f.py"'
        if rng.random() < 0.7:
            attrs += f' time="{rng.random():.3f}"'
        inner = []
        for _ in range(rng.choice((0, 0, 0, 1, 2)) if self.retries else 0):
            self.retried += 1
            inner.append(f"<{rng.choice(RETRIED)} message={quoteattr(self._token())}/>")
        kind = rng.choice(("pass", "pass", "failure", "error", "skipped"))
        if kind in ("failure", "error"):
            inner.append(f"<{kind} message={quoteattr(self._token())}>trace</{kind}>")
        elif kind == "skipped":
            inner.append('<skipped message="why"/>')
        return f"<testcase{attrs}>{''.join(inner)}</testcase>"


def _texts(result: TestResult) -> str:
    return " ".join([result.message or "", result.trace or "", *result.extra_messages])


@pytest.mark.parametrize("seed", range(120))
def test_every_testcase_and_every_failure_is_in_a_row(tmp_path: Path, seed: int) -> None:
    report = _Report(seed)
    path = tmp_path / "r.xml"
    path.write_text(report.xml, encoding="utf-8")
    done = import_junit(ImportSpec(files=(path,), backend="cpu", cell_id="p", results_dir=tmp_path / "results"))
    cell = done.cell
    assert cell is not None and cell.errors == [], cell.errors
    assert len(set(cell.nodeids)) == len(cell.nodeids)
    assert sum(r.attempts for r in cell.results) == report.testcases + report.retried, report.xml
    texts = " ".join(_texts(r) for r in cell.results)
    assert [t for t in report.tokens if t not in texts] == [], report.xml


def test_four_nameless_testcases_are_four_tests(tmp_path: Path) -> None:
    """The issue's report: a pass, a skip, a failure and an error, none named: four rows."""
    path = tmp_path / "bare.xml"
    path.write_text(
        '<testsuite><testcase/><testcase><skipped/></testcase><testcase><failure message="f"/></testcase>'
        '<testcase><error message="e"/></testcase></testsuite>',
        encoding="utf-8",
    )
    done = import_junit(ImportSpec(files=(path,), backend="cpu", cell_id="bare", results_dir=tmp_path / "results"))
    assert done.cell is not None
    outcomes = dict(zip(done.cell.nodeids, (r.outcome for r in done.cell.results), strict=True))
    assert outcomes == {
        "(unnamed testcase #1)": Outcome.PASSED,
        "(unnamed testcase #2)": Outcome.SKIPPED,
        "(unnamed testcase #3)": Outcome.FAILED,
        "(unnamed testcase #4)": Outcome.ERROR,
    }
