"""The roll-up: one feature on one column, from its tests' results (docs/outcomes.md, the table).

Judged on backend-scope tests; host-scope tests decide only where a feature has nothing else; a
measurement that worked is a figure, not a pass; hardware, dependency and unclassified skips and
not-run tests give no verdict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from harness.model import GENERIC_KERNEL, FeatureCell, TestResult, short_kernel
from harness.outcomes import BAD, GOOD, Outcome, Rollup, Scope, SkipClass


def rollup_counts(counts: Mapping[str, int], unsupported_skips: int) -> Rollup:
    """The roll-up from outcome counts; see docs/outcomes.md for the table."""
    total = sum(counts.values())
    good = sum(counts.get(o, 0) for o in GOOD)
    bad = sum(counts.get(o, 0) for o in BAD)
    known = counts.get(Outcome.XFAILED, 0)
    skipped = counts.get(Outcome.SKIPPED, 0)
    not_run = counts.get(Outcome.NOT_RUN, 0)
    if total == 0 or total == not_run:
        return Rollup.NO_DATA
    if good and (bad or known or skipped or not_run):
        return Rollup.PARTIAL
    if good:
        return Rollup.SUPPORTED
    if bad or known:
        return Rollup.FAILING
    if unsupported_skips:
        return Rollup.UNSUPPORTED
    return Rollup.NOT_APPLICABLE


def roll_up(results: Sequence[TestResult], *, no_data: bool = False) -> FeatureCell:
    """One feature on one column. The state is judged on backend-scope tests; host-scope ones
    decide only where a feature has nothing else; a measurement that worked is a figure, not a pass."""
    return roll_up_counted(((result, 1) for result in results), no_data=no_data)


def roll_up_counted(pairs: Iterable[tuple[TestResult, int]], *, no_data: bool = False) -> FeatureCell:
    """roll_up() of (result, how many tests have it) pairs."""
    counts: Counter[Outcome] = Counter()
    skips: Counter[SkipClass] = Counter()
    basis: dict[Scope, Counter[Outcome]] = {Scope.BACKEND: Counter(), Scope.HOST: Counter()}
    unsupported = {Scope.BACKEND: 0, Scope.HOST: 0}
    host = measurements = 0
    seen = _Seen()
    for result, n in pairs:
        outcome = result.outcome
        if result.properties:
            seen.add(result.evidence, n)
        if result.scope is Scope.MEASUREMENT and outcome in GOOD:
            measurements += n
            continue
        counts[outcome] += n
        scope = Scope.HOST if result.scope is Scope.HOST else Scope.BACKEND
        basis[scope][outcome] += n
        if scope is Scope.HOST:
            host += n
        if outcome is Outcome.SKIPPED:
            skip_class = result.skip_class or SkipClass.UNCLASSIFIED
            skips[skip_class] += n
            if skip_class is SkipClass.UNSUPPORTED:
                unsupported[scope] += n
    judged_on = Scope.BACKEND if basis[Scope.BACKEND] else Scope.HOST
    if no_data:
        state = Rollup.NO_DATA
    elif not counts and measurements:
        state = Rollup.SUPPORTED  # only measurements, all of which ran
    else:
        state = rollup_counts(basis[judged_on], unsupported[judged_on])
    host_unsupported = unsupported[Scope.HOST]
    return FeatureCell(
        state=state,
        counts=dict(counts),
        skips=dict(skips),
        host_tests=host - host_unsupported if host else 0,
        measurements=measurements,
        evidence=seen.summary(),
    )


class _Seen:
    """The evidence of a feature's tests on one column, summed: the kernels its claimed ops ran (else its tests'
    kernels), by launches, the graph replays, how many tests recorded any."""

    TOP = 3

    def __init__(self) -> None:
        self.kernels: Counter[str] = Counter()
        self.replayed = 0
        self.tests = 0
        self.device: str | None = None

    def add(self, evidence: Mapping | None, n: int) -> None:
        if evidence is None:
            return
        try:  # read whole before anything is counted: a cell from outside may hold a malformed property
            device = evidence.get("device")
            per_op = [k for found in (evidence.get("ops") or {}).values() for k in found or ()]
            kernels = [
                (short_kernel(str(k[0])), k[1] * n)
                for k in per_op or evidence.get("kernels") or ()
                if isinstance(k, list | tuple) and len(k) == 2 and isinstance(k[1], int) and k[1] >= 0
            ]
            replayed = max(0, int((evidence.get("graphs") or {}).get("replayed") or 0)) * n
        except (TypeError, ValueError, AttributeError):
            return
        self.tests += n
        self.device = self.device or (str(device)[:80] if device else None)
        for name, count in kernels:
            self.kernels[name] += count
        self.replayed += replayed

    def summary(self) -> dict | None:
        """None where nothing ran on the device (a host-side feature): there is nothing to show."""
        if not self.tests or not (self.kernels or self.replayed):
            return None
        found: dict = {"device": self.device or "?", "tests": self.tests}
        ranked = sorted(self.kernels.items(), key=lambda kv: (GENERIC_KERNEL.match(kv[0]) is not None, -kv[1]))
        found["kernels"] = [[name, count] for name, count in ranked[: self.TOP]]
        if self.replayed:
            found["replayed"] = self.replayed
        return found
