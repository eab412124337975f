"""How a merge worker hands results over (harness/merge/handoff.py): a TestResult pickled through
the registered reducer comes back equal to the original, and equal to what the plain pickle gives,
for every field set (enums included), for defaults, and for the results of real cells; and the
reducer is the one in use (enums travel by value, not as their class)."""

from __future__ import annotations

import copyreg
import dataclasses
import pickle
from collections.abc import Iterator

import pytest

from harness.merge import handoff
from harness.model import TestResult
from harness.outcomes import Outcome, Scope, SkipClass
from tests.committed import releases_matrix, sample_matrices

EVERY_FIELD = TestResult(
    outcome=Outcome.XFAILED,
    skip_class=SkipClass.KNOWN_ISSUE,
    link="https://github.com/pytorch/pytorch/issues/1",
    message="known | <b>",
    trace="Traceback",
    output="out",
    duration=1.25,
    attempts=2,
    properties={"perf.x": {"value": 1.0, "unit": "x"}, "n": [1, 2]},
    scope=Scope.HOST,
    strict=False,
    signal="SIGABRT",
    extra_messages=("teardown: boom",),
    run="20261201T200409Z-3c9c60",
    at="2026-12-01T20:04:09Z",
)


@pytest.fixture
def plain_pickle() -> Iterator[None]:
    """The default pickle of a dataclass, for comparison; the reducer is registered again after."""
    copyreg.dispatch_table.pop(TestResult, None)
    try:
        yield
    finally:
        handoff.register()


def _round_trip(result: TestResult) -> TestResult:
    return pickle.loads(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))


def test_the_sample_sets_every_field() -> None:
    """A field added to TestResult must be set here too, so the handoff is tested with it."""
    defaults = TestResult(outcome=Outcome.PASSED)
    unset = [
        f.name for f in dataclasses.fields(TestResult) if getattr(EVERY_FIELD, f.name) == getattr(defaults, f.name)
    ]
    assert unset == []
    assert tuple(f.name for f in dataclasses.fields(TestResult)) == handoff.FIELDS


@pytest.mark.parametrize(
    "result",
    [
        EVERY_FIELD,
        TestResult(outcome=Outcome.PASSED),
        TestResult(outcome=Outcome.CRASHED, signal="SIGSEGV", duration=0.0),
        *(TestResult(outcome=o) for o in Outcome),
        *(TestResult(outcome=Outcome.SKIPPED, skip_class=c) for c in SkipClass),
        *(TestResult(outcome=Outcome.PASSED, scope=s) for s in Scope),
    ],
    ids=lambda r: f"{r.outcome.value}-{r.skip_class}-{r.scope.value}",
)
def test_a_result_comes_back_equal_with_its_enums(result: TestResult) -> None:
    back = _round_trip(result)
    assert back == result
    assert type(back.outcome) is Outcome and back.outcome is result.outcome
    assert back.scope is result.scope and back.skip_class is result.skip_class


def test_enums_travel_by_value() -> None:
    data = pickle.dumps(EVERY_FIELD, protocol=pickle.HIGHEST_PROTOCOL)
    assert b"Outcome" not in data and b"SkipClass" not in data and b"Scope" not in data
    assert b"_rebuild" in data


def test_the_plain_pickle_gives_equal_results(plain_pickle: None) -> None:
    assert TestResult not in copyreg.dispatch_table
    data = pickle.dumps(EVERY_FIELD, protocol=pickle.HIGHEST_PROTOCOL)
    assert b"Outcome" in data and b"_rebuild" not in data, "the default dataclass pickle"
    plain = pickle.loads(data)
    handoff.register()
    assert _round_trip(EVERY_FIELD) == plain == EVERY_FIELD


def test_every_result_of_the_real_cells_comes_back_equal() -> None:
    results = [
        result
        for matrix in (releases_matrix(), *sample_matrices())
        for row in matrix.tests
        for result in row.results.values()
    ]
    assert pickle.loads(pickle.dumps(results, protocol=pickle.HIGHEST_PROTOCOL)) == results
