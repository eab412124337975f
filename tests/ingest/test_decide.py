"""decide(): the one rule set, and the one "simply passed" rule every shortcut is held to.

The table at the bottom runs each shape of test through the whole fast path as it happens in a
real run: the cell plugin's hooks (harness/run/cellplugin) write events.jsonl (a `pass` line for
a test that only passed, else `report` and `finish` lines), ingest (harness/ingest/cell_reader.py) reads
it with its shortcuts for plain passes, and the result must equal what decide() says of the same
reports as attempts. A shortcut that drifts from the rule fails here, in the fast tier.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest

from harness.ingest import attempts as normalise
from harness.ingest.cell_reader import ingest_cell
from harness.ingest.decide import (
    Attempt,
    Phase,
    Status,
    decide,
    passed_plainly,
    simply_passed,
)
from harness.outcomes import Outcome, SkipClass
from harness.run.cellplugin.compat_cell_plugin import CellRecorder


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


@pytest.mark.parametrize("call", ["passed", "failed", "skipped", None])
@pytest.mark.parametrize("other", [None, ("teardown", "failed"), ("setup", "passed"), ("call", "rerun")])
@pytest.mark.parametrize("said", [(), ("a message",), ([("k", "v")],), (None, "", [])])
def test_passed_plainly_is_simply_passed_for_tests_known_without_attempts(
    call: str | None, other: tuple[str, str] | None, said: tuple
) -> None:
    """The shortcuts' one question (passed_plainly: the verdict phase passed, nothing else said)
    answers as simply_passed() and decide() do for the attempts it stands for: only a passing
    call, with no other report and nothing more to keep, is a bare pass."""
    attempts = ([A("call", call)] if call else []) + ([A(*other)] if other else [])
    others = attempts[1:] if call else attempts  # every report but the verdict's
    shortcut = passed_plainly(call == "passed", [a for a in others if a.status is not Status.PASSED], *said)
    kept_more = any(said)
    assert shortcut == (simply_passed(attempts) and not kept_more)
    if shortcut:
        assert decide(attempts).outcome is Outcome.PASSED


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


def test_the_plugin_writes_a_pass_line_exactly_for_what_simply_passed(cell: dict[str, Any]) -> None:
    """The plugin's own shortcut (one `pass` line) is the rule plus "nothing else to say" (no
    properties): every test it wrote a pass line for simply passed, and each that simply passed
    without properties got one."""
    passed_lines = {e["nodeid"].rsplit("test_", 1)[1] for e in cell["events"] if e["event"] == "pass"}
    for shape, reports in SHAPES.items():
        plain = simply_passed(_as_attempts(reports)) and not any(r.get("user_properties") for r in reports)
        assert (shape in passed_lines) == plain, shape
