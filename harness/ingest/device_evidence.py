"""A claimed pass on an accelerator stands on evidence of device work, re-checked as the cell is read.

The suites fail a claimed test that launched nothing on an accelerator ("no device work seen",
suites/_support/evidence.py). A cell can still hold a claimed pass without that evidence: a producer from
before the evidence record (the first H200 cell), a cell whose `evidence` property was removed or edited, a
test that ran on the CPU beside the GPU. Such a pass proves only that nothing failed, so on a cell whose
probe saw an accelerator it is read as a failure naming what is missing, and the feature cannot roll up
"supported" on it (docs/gpu-evidence.md, "What the harness re-checks").

What counts, from the test's own properties: an `evidence` object, recorded on the accelerator (not `cpu`),
naming no claimed op that was called and launched nothing (`silent`), and with device kernels or graph
replays where the suites said the claim needed them (`required`; a claim on statistics or handles needs
none). Tests without a `claim` property (unclaimed, or JUnit from another tool) are left as they are. Where the
probe saw no accelerator (an imported cell states none), a claim that covers only accelerators ("cuda sm_80+")
says the test ran on one: the suites matched it to the device.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Final

from harness.model import DEVICE_FAMILIES, EVIDENCE, TestResult
from harness.outcomes import GOOD, Outcome
from harness.probe import Probe

CLAIM: Final = "claim"  # the suites' property on a test their support claims cover on that device
ACCELERATORS: Final = frozenset(DEVICE_FAMILIES) - {"cpu"}
FAKE: Final = "(fake: "  # the suites' mark on a claim a drill fakes (COMPAT_FAKE_CLAIM)


def accelerator_of(probe: Probe | None) -> str | None:
    """The accelerator the cell's tests ran on ("cuda on NVIDIA H200"), or None where they ran on the CPU."""
    if probe is None or not probe.accelerator_available:
        return None
    kind = (probe.accelerator_type or probe.build or "").lower()
    if kind not in ACCELERATORS:
        return None
    name = probe.device.name if probe.device else None
    return f"{kind} on {name}" if name else kind


def claimed_accelerator(claim: str) -> str | None:
    """The accelerator families a claim covers ("cuda/rocm"), where it covers no CPU: the suites matched it to the
    device that ran, so the test ran on an accelerator whatever the probe says (an imported cell states no
    probe). None for a claim that also covers the CPU, and for a drill's fake claim (run on the CPU on purpose)."""
    where, _, rest = claim.partition(" ")
    families = where.split("/")
    if not rest or FAKE in claim or not all(f in ACCELERATORS for f in families):
        return None
    return where


def missing_evidence(properties: Mapping[str, Any]) -> str | None:
    """Why a claimed test's properties do not show device work; None when they do (or it is not claimed)."""
    if not properties.get(CLAIM):
        return None
    found = properties.get(EVIDENCE)
    if not isinstance(found, Mapping):
        if found is None:
            return "the cell records no evidence of device work for it (a producer from before the evidence record?)"
        return "its evidence of device work is not a JSON object"
    device = str(found.get("device") or "")
    if not device or device == "cpu":
        return f"its evidence says it ran on {device or 'no named device'}, not on the accelerator"
    silent = found.get("silent")
    if silent:
        names = ", ".join(str(op) for op in silent) if isinstance(silent, list) else str(silent)
        return f"no device work seen for {names[:300]} on {device}: called, launched nothing"
    graphs = found.get("graphs")
    replayed = graphs.get("replayed") if isinstance(graphs, Mapping) else 0
    if found.get("required") is True and not found.get("kernels") and not replayed:
        return f"no device work seen on {device}: no kernel launched, no graph replayed"
    return None


def judged(result: TestResult, accelerator: str | None) -> TestResult:
    """`result`, or a failure naming the missing evidence where a claimed good result on an accelerator has none.
    `accelerator`: the cell's (accelerator_of its probe); else the claim's own families say where it ran."""
    if result.outcome not in GOOD or not result.properties:
        return result
    claim = result.properties.get(CLAIM)
    accelerator = accelerator or (claimed_accelerator(str(claim)) if claim else None)
    why = missing_evidence(result.properties) if accelerator else None  # None too where nothing is claimed
    if why is None:
        return result
    said = f"claimed on {accelerator}, {result.outcome.value} without evidence of device work: {why}"
    if result.message:
        said += f" (it said: {result.message[:500]})"
    return dataclasses.replace(result, outcome=Outcome.FAILED, message=said, skip_class=None, link=None)
