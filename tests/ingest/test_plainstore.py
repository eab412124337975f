"""The plain-pass store (harness/ingest/plainstore.py): plain passes decided in bulk, one shared
result per (duration, scope), and a plain pass that turns out to have more to say moved out."""

from __future__ import annotations

from harness.ingest.plainstore import Gather, plain_results
from harness.model import TestResult
from harness.outcomes import Outcome, Scope


def test_plain_passes_are_decided_in_bulk_with_shared_results() -> None:
    plain = {"a::t1": 0.12341, "a::t2": 0.12344, "b::t3": 2, "c::t4": 0.5}
    plan = {"a::t1": ("alpha", None), "b::t3": ("beta", Scope.HOST)}
    cache: dict[tuple, TestResult] = {}
    recorded = {"c::t4": ("gamma", None)}
    results, features = plain_results(list(plain), plain, plan, lambda n, _: "mapped", cache, recorded)
    assert features == ["alpha", "mapped", "beta", "gamma"]
    assert [r.duration for r in results] == [0.1234, 0.1234, 2, 0.5]
    assert results[0] is results[1]  # equal results are one object
    assert results[2] == TestResult(outcome=Outcome.PASSED, duration=2, scope=Scope.HOST)
    assert all(r.outcome is Outcome.PASSED and r.attempts == 1 for r in results)


def test_a_plain_pass_with_more_to_say_leaves_the_plain_store() -> None:
    gather = Gather()
    gather.plain["a::t"] = 0.25
    test = gather.test("a::t")
    assert "a::t" not in gather.plain
    assert (test.reported, test.passed, test.passed_time) == (True, 2, 0.25)
    assert gather.order() == ["a::t"]
