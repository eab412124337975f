"""decide(): the one rule set, and the one "simply passed" rule every shortcut is held to.

The table at the bottom runs each shape of test through the whole fast path as it happens in a
real run: the cell plugin's hooks (harness/run/cellplugin) write events.jsonl (a `pass` line for
a test that only passed, else `report` and `finish` lines), ingest (harness/ingest/cell_reader.py) reads
it with its shortcuts for plain passes, and the result must equal what decide() says of the same
reports as attempts. A shortcut that drifts from the rule fails here, in the fast tier.
"""

from __future__ import annotations

import ast
import dataclasses
import itertools
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.ingest import attempts as normalise
from harness.ingest.cell_reader import ingest_cell
from harness.ingest.decide import (
    Attempt,
    Phase,
    Said,
    Status,
    decide,
    is_plain_pass,
    says_nothing_more,
    simply_passed,
)
from harness.ingest.plainstore import BOOKKEEPING
from harness.outcomes import Outcome, SkipClass
from harness.run.cellplugin.compat_cell_plugin import _JUNIT_ONLY_PROPERTIES, CellRecorder


# -- decide() on attempts ------------------------------------------------------------------------
def A(phase: str, status: str, **kw: Any) -> Attempt:
    return Attempt(Phase(phase), Status(status), **kw)


@pytest.mark.parametrize(
    ("attempts", "outcome", "extra"),
    [
        ([A("setup", "passed", duration=0.1), A("call", "passed", duration=0.2)], Outcome.PASSED, {"duration": 0.3}),
        ([A("test", "passed")], Outcome.PASSED, {"duration": None}),
        ([A("setup", "passed")], Outcome.NOT_RUN, {}),  # a passed setup alone is no verdict
        ([A("call", "failed", message="AssertionError: x")], Outcome.FAILED, {"message": "AssertionError: x"}),
        ([A("setup", "failed", message="boom")], Outcome.ERROR, {"message": "boom"}),
        ([A("call", "passed"), A("teardown", "failed", message="leak")], Outcome.ERROR, {"message": "teardown: leak"}),
        (
            [A("call", "failed", message="a"), A("teardown", "failed", message="b")],
            Outcome.FAILED,
            {"extra_messages": ("teardown: b",)},
        ),
        ([A("call", "skipped", reason="[hardware] needs CUDA")], Outcome.SKIPPED, {"skip_class": SkipClass.HARDWARE}),
        ([A("call", "xfailed", reason="[known-issue https://x/1] bug")], Outcome.XFAILED, {"link": "https://x/1"}),
        ([A("call", "xpassed", reason="r", strict=True)], Outcome.XPASSED, {"strict": True}),
        ([A("test", "disabled", reason="off")], Outcome.SKIPPED, {"skip_class": SkipClass.DISABLED}),
        (
            [A("call", "rerun", message="first"), A("call", "passed")],
            Outcome.FLAKY,
            {"attempts": 2, "message": "first"},
        ),
        ([A("call", "rerun", message="1"), A("call", "failed", message="2")], Outcome.FAILED, {"attempts": 2}),
        ([A("call", "passed"), A("call", "passed")], Outcome.PASSED, {"attempts": 1}),  # repeats that pass: never flaky
        ([A("test", "timeout", message="Timeout: hard")], Outcome.TIMEOUT, {}),
        ([A("in-flight", "crashed", message="died", signal="SIGSEGV")], Outcome.CRASHED, {"signal": "SIGSEGV"}),
        ([A("in-flight", "crashed", signal="Timeout (0:05:00)")], Outcome.TIMEOUT, {"signal": None}),
        ([A("call", "failed", message="Timeout: test exceeded 3 s")], Outcome.TIMEOUT, {}),
        ([A("call", "failed", message="worker 'gw1' crashed while running")], Outcome.CRASHED, {}),
        ([], Outcome.NOT_RUN, {}),
    ],
)
def test_decide_table(attempts: list[Attempt], outcome: Outcome, extra: dict[str, Any]) -> None:
    result = decide(attempts)
    assert result.outcome is outcome
    for name, value in extra.items():
        assert getattr(result, name) == value, name


# What a source may say beyond the verdict and the time: each kept field of Said, with a value.
MORE_SAID: dict[str, Any] = {
    "properties": [("perf.x", "1")],
    "output": "printed",
    "signal": "Fatal Python error: Aborted",
    "kept": True,
}


@pytest.mark.parametrize("call", ["passed", "failed", "skipped", None])
@pytest.mark.parametrize("other", [None, ("teardown", "failed"), ("setup", "passed"), ("call", "rerun")])
@pytest.mark.parametrize("said", [{}, *({name: value} for name, value in MORE_SAID.items()), {"properties": []}])
@pytest.mark.parametrize("duration", [0.25, None])
def test_is_plain_pass_is_simply_passed_for_tests_known_without_attempts(
    call: str | None, other: tuple[str, str] | None, said: dict[str, Any], duration: float | None
) -> None:
    """The shortcuts' one question (is_plain_pass: the verdict phase passed, in a known time, nothing
    else said) answers as simply_passed() and decide() do for the attempts it stands for: only a
    passing call with a time, with no other report and nothing more to keep, is a plain pass."""
    attempts = ([A("call", call, duration=duration)] if call else []) + ([A(*other)] if other else [])
    others = [a for a in attempts if a.status is not Status.PASSED]
    shortcut = is_plain_pass(Said(call == "passed", duration, others=others, **said))
    assert shortcut == (simply_passed(attempts) and duration is not None and not any(said.values()))
    if shortcut:
        assert decide(attempts).outcome is Outcome.PASSED


@pytest.mark.parametrize("name", [f.name for f in dataclasses.fields(Said)][2:])
def test_every_field_of_said_but_the_verdict_and_the_time_keeps_a_test_from_a_plain_pass(name: str) -> None:
    """A field Said gains must be asked by the predicate (and named in MORE_SAID), or a source that
    says it would have it dropped with the test kept as a bare pass."""
    assert [f.name for f in dataclasses.fields(Said)][:2] == ["verdict_passed", "duration"]
    assert is_plain_pass(Said(True, 0.25))
    assert not is_plain_pass(Said(True, 0.25, **{name: MORE_SAID.get(name, ["other report"])}))
    assert not says_nothing_more(Said(False, None, **{name: MORE_SAID.get(name, ["other report"])}))


def test_simply_passed_is_the_rule_decide_starts_with() -> None:
    assert simply_passed([A("setup", "passed"), A("call", "passed"), A("teardown", "passed")])
    assert simply_passed([A("test", "passed")])
    assert not simply_passed([A("setup", "passed")])  # no verdict phase
    assert not simply_passed([A("call", "passed"), A("teardown", "failed")])
    assert not simply_passed([])


# -- every shortcut against the rule --------------------------------------------------------------
def _report(nodeid: str, when: str, outcome: str, **kw: Any) -> SimpleNamespace:
    longrepr = kw.pop("longrepr", None)
    return SimpleNamespace(
        nodeid=nodeid,
        when=when,
        outcome=outcome,
        passed=outcome == "passed",
        failed=outcome == "failed",
        skipped=outcome == "skipped",
        duration=kw.pop("duration", 0.01),
        user_properties=kw.pop("user_properties", []),
        longrepr=longrepr,
        longreprtext=str(longrepr or ""),
        sections=[],
        **kw,
    )


# Each row: a test's phase reports as pytest hands them to the plugin.
SHAPES: dict[str, list[dict[str, Any]]] = {
    "only-passed": [
        {"when": "setup", "outcome": "passed", "duration": 0.001},
        {"when": "call", "outcome": "passed", "duration": 0.25},
        {"when": "teardown", "outcome": "passed", "duration": 0.002},
    ],
    "passed-with-properties": [
        {"when": "call", "outcome": "passed", "user_properties": [("perf.x", "1")]},
    ],
    "skipped": [{"when": "setup", "outcome": "skipped", "longrepr": ("f.py", 1, "[hardware] no GPU")}],
    "failed": [
        {"when": "setup", "outcome": "passed"},
        {"when": "call", "outcome": "failed", "longrepr": "AssertionError: 1 != 2"},
        {"when": "teardown", "outcome": "passed"},
    ],
    "teardown-error": [
        {"when": "call", "outcome": "passed", "duration": 0.5},
        {"when": "teardown", "outcome": "failed", "longrepr": "leaked a file"},
    ],
    "xfailed": [{"when": "call", "outcome": "skipped", "wasxfail": "[known-issue https://x/2] bug"}],
    "xpassed": [{"when": "call", "outcome": "passed", "wasxfail": "[known-issue https://x/3] fixed?"}],
    "rerun-then-passed": [
        {"when": "call", "outcome": "rerun", "longrepr": "flaked"},
        {"when": "call", "outcome": "passed"},
    ],
    "setup-only": [{"when": "setup", "outcome": "passed"}],
}


def _generated_shapes() -> dict[str, list[dict[str, Any]]]:
    """Every way pytest's reports of one test can go: setup, then (after a passing setup) a call that
    passed, failed, skipped, xfailed or xpassed, maybe retried first, then teardown; with no
    properties, bookkeeping ones only, or a figure."""
    calls: dict[str, dict[str, Any]] = {
        "passed": {"outcome": "passed"},
        "failed": {"outcome": "failed", "longrepr": "AssertionError"},
        "skipped": {"outcome": "skipped", "longrepr": ("f.py", 1, "[unsupported] no")},
        "xfailed": {"outcome": "skipped", "wasxfail": "[known-issue https://x/4] bug"},
        "xpassed": {"outcome": "passed", "wasxfail": "[known-issue https://x/5] fixed?"},
    }
    setups = {"passed": {"outcome": "passed"}, "failed": {"outcome": "failed", "longrepr": "fixture"},
              "skipped": {"outcome": "skipped", "longrepr": ("f.py", 1, "[hardware] no GPU")}}  # fmt: skip
    teardowns = {"passed": {"outcome": "passed"}, "failed": {"outcome": "failed", "longrepr": "leak"}}
    properties = {"none": [], "bookkeeping": [("feature", "feat"), ("backend", "cpu")], "figure": [("perf.x", "1")]}
    shapes: dict[str, list[dict[str, Any]]] = {}
    for (setup, s), call, (teardown, t), rerun, (props, p) in itertools.product(
        setups.items(), [None, *calls], teardowns.items(), (False, True), properties.items()
    ):
        if (setup == "passed") == (call is None) or (rerun and call is None):
            continue  # a call runs exactly when its setup passed
        reports = [{"when": "setup", **s, "duration": 0.001}]
        if rerun:
            reports.append({"when": "call", "outcome": "rerun", "longrepr": "flaked"})
        if call is not None:
            reports.append({"when": "call", **calls[call], "duration": 0.25, "user_properties": p})
        reports.append({"when": "teardown", **t, "duration": 0.002, "user_properties": p})
        shapes[f"gen-{setup}-{call}-{teardown}-{'rerun' if rerun else 'once'}-{props}"] = reports
    return shapes


SHAPES.update(_generated_shapes())


def _as_attempts(reports: list[dict[str, Any]]) -> list[Attempt]:
    """The same reports as the rule sees them (every report an attempt, passes included)."""
    out = []
    for report in reports:
        longrepr = report.get("longrepr")
        message = str(longrepr[2]) if isinstance(longrepr, tuple) else longrepr
        event = {
            "when": report["when"],
            "outcome": report["outcome"],
            "duration": report.get("duration", 0.01),
            "wasxfail": report.get("wasxfail"),
            "message": message,
            "longrepr": longrepr if not isinstance(longrepr, tuple) else None,
            "skip_reason": message if report["outcome"] == "skipped" else None,
        }
        out.append(normalise.from_report(event))
    return out


@pytest.fixture(scope="module")
def cell(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A cell whose events the real plugin wrote, read back by the real ingest."""
    path = tmp_path_factory.mktemp("cell")
    config = SimpleNamespace(getoption=lambda name, default=None: "no")
    recorder = CellRecorder(config, str(path))  # type: ignore[arg-type]
    for name, reports in SHAPES.items():
        nodeid = f"feat/test_shapes.py::test_{name}"
        for report in reports:
            recorder.pytest_runtest_logreport(_report(nodeid, **dict(report)))  # type: ignore[arg-type]
        recorder.pytest_runtest_logfinish(nodeid, ("feat/test_shapes.py", 1, name))
    recorder.event("session_finish", exitstatus=1)
    groups = [{"feature": "feat", "scope": "backend", "tests": [f"feat/test_shapes.py::test_{n}" for n in SHAPES]}]
    (path / "collected.json").write_text(json.dumps({"count": len(SHAPES), "collect_errors": [], "groups": groups}))
    manifest = {"manifest_version": 1, "cell_id": "shapes", "run_id": "r1", "backend": "cpu", "mode": "native",
                "status": "completed", "features": {"feat": {"title": "Feat"}}}  # fmt: skip
    (path / "manifest.json").write_text(json.dumps(manifest))
    read = ingest_cell(path)
    events = [json.loads(line) for line in (path / "events.jsonl").read_text().splitlines()]
    return {"results": dict(zip(read.nodeids, read.results, strict=True)), "events": events}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_shortcut_agrees_with_decide(cell: dict[str, Any], shape: str) -> None:
    nodeid = f"feat/test_shapes.py::test_{shape}"
    got = cell["results"][nodeid]
    want = decide(_as_attempts(SHAPES[shape]))
    assert got.outcome is want.outcome, shape
    assert got.duration == (round(want.duration, 4) if want.duration is not None else None), shape
    assert got.attempts == want.attempts and got.skip_class == want.skip_class and got.link == want.link, shape
    assert (got.message is None) == (want.message is None), shape


def _said_of_reports(reports: list[dict[str, Any]]) -> Said:
    """The same reports as the harness normalises them (attempts.from_report, the bookkeeping
    properties left out as the readers leave them), as the one plain-pass record."""
    attempts = _as_attempts(reports)
    passes = [a for a in attempts if a.status is Status.PASSED]
    properties = [p for r in reports for p in r.get("user_properties", []) if p[0] not in BOOKKEEPING]
    return Said(
        verdict_passed=any(a.phase is Phase.CALL for a in passes),
        duration=sum(a.duration or 0.0 for a in passes) if passes else None,
        others=[a for a in attempts if a.status is not Status.PASSED],
        properties=properties,
    )


def test_the_plugin_writes_a_pass_line_exactly_for_a_plain_pass(cell: dict[str, Any]) -> None:
    """The plugin, which may not import the harness, keeps its own copy of the rule for its `pass`
    lines: run on the same reports, it writes one exactly where is_plain_pass() says so (and its
    bookkeeping properties are the readers')."""
    assert _JUNIT_ONLY_PROPERTIES == BOOKKEEPING
    passed_lines = {e["nodeid"].split("::test_", 1)[1] for e in cell["events"] if e["event"] == "pass"}
    plain = {shape for shape, reports in SHAPES.items() if is_plain_pass(_said_of_reports(reports))}
    assert passed_lines == plain
    assert len(plain) >= 3 and len(SHAPES) - len(plain) >= 50  # both sides of the rule are exercised


# -- one rule, one place ---------------------------------------------------------------------------
HARNESS = Path(__file__).resolve().parents[2] / "harness"
# The fields a source or a result says a test by, beyond its verdict and its time: an expression that
# asks three or more of them at once is the plain-pass rule (or its "nothing more said" half) again.
SAID_BY = frozenset(
    {"message", "trace", "output", "skip_class", "link", "strict", "signal", "extra_messages", "properties"}
    | {"user_properties", "run", "at", "attempts", "reruns"}
)
# Functions that ask as many for another question, each with its reason.
OTHER_QUESTIONS = {
    ("merge/store.py", "_plain_key"): "which results hold no text, to share equal ones across the matrix (not a pass)",
}


def _nodes(tree: ast.AST, skip: set[str]) -> list[ast.AST]:
    """Every node of `tree` but those of the functions named in `skip`."""
    out: list[ast.AST] = []
    todo = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.FunctionDef) and node.name in skip:
            continue
        out.append(node)
        todo.extend(ast.iter_child_nodes(node))
    return out


def rule_copies(source: str, skip: set[str] | None = None) -> list[int]:
    """The lines of `source` where one expression (a condition, or the arguments of a call other
    than the record's own constructor) asks three or more of the fields a test is said by."""
    found = []
    for node in _nodes(ast.parse(source), skip or set()):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Said":
            continue  # a reader filling the record: its own source's fields, by name
        if isinstance(node, ast.BoolOp | ast.Call | ast.Tuple | ast.List):
            parts = node.values if isinstance(node, ast.BoolOp) else getattr(node, "args", getattr(node, "elts", []))
            asked = {
                n.attr for part in parts for n in ast.walk(part) if isinstance(n, ast.Attribute) and n.attr in SAID_BY
            }
            if len(asked) >= 3:
                found.append(node.lineno)
    return sorted(found)


def test_the_plain_pass_rule_is_written_once() -> None:
    """decide.py lists what keeps a test from a plain pass; no other module lists it again, and every
    reader and the event-log writer ask decide.is_plain_pass()."""
    copies = {}
    for path in sorted(HARNESS.rglob("*.py")):
        module = path.relative_to(HARNESS).as_posix()
        skip = {function for where, function in OTHER_QUESTIONS if where == module}
        if module != "ingest/decide.py" and (lines := rule_copies(path.read_text(encoding="utf-8"), skip)):
            copies[module] = lines
    assert not copies, f"the plain-pass rule written again (ask decide.is_plain_pass of a Said): {copies}"
    for module in ("ingest/junit_reader.py", "ingest/eventlog_reader.py", "ingest/cell_reader.py",
                   "importer/eventlog_writer.py"):  # fmt: skip
        calls = {
            getattr(n.func, "id", None)
            for n in ast.walk(ast.parse((HARNESS / module).read_text(encoding="utf-8")))
            if isinstance(n, ast.Call)
        }
        assert "is_plain_pass" in calls, f"{module} does not ask decide.is_plain_pass()"


def test_the_rule_copy_check_sees_a_copy() -> None:
    """The check can fail: ingest's own list of a bare result's fields, as it stood before the one rule,
    and the shortcuts' argument lists of then are each a copy; filling the record is not."""
    before = """
plain = (
    result.message is None
    and result.trace is None
    and result.skip_class is None
    and result.attempts == 1
    and not test.properties
)
if passed_plainly(call_passed, test.attempts, extra, signal, test.user_properties, test.output):
    pass
said = Said(call_passed, 0.1, others=test.attempts, properties=test.user_properties, output=test.output)
"""
    assert rule_copies(before) == [3, 9]
    store = (HARNESS / "merge" / "store.py").read_text(encoding="utf-8")
    assert rule_copies(store) and not rule_copies(store, {"_plain_key"}), "store's own question, in one function"
