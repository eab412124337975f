"""A claimed pass on an accelerator stands on evidence of device work (harness/ingest/device_evidence.py).

On the real cells the H200 wrote (tests/data/gpu-cells): the first one predates the evidence record, so its
claimed passes are failures when the harness reads it; the second one carries evidence, and a copy of it with
one claimed test's evidence removed, moved to the CPU, emptied or naming a silent op fails that test and takes
its feature from supported to failing. A cell whose probe saw no accelerator is judged as it always was.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from harness.ingest.cell_reader import ingest_cell
from harness.ingest.device_evidence import accelerator_of, claimed_accelerator, judged, missing_evidence
from harness.merge.combine import merge_cell_dirs
from harness.model import TestResult
from harness.outcomes import Outcome, Rollup
from harness.probe import Probe

CELLS = Path(__file__).resolve().parents[1] / "data" / "gpu-cells"
RUN1, RUN2 = CELLS / "cu130-2.11.0-h200-run1", CELLS / "cu130-2.11.0-h200-run2"
VARLEN = "varlen_attention/test_varlen_attention.py::test_varlen_attention_matches_per_sequence_attention"


def _by_id(cell: Path) -> dict[str, TestResult]:
    read = ingest_cell(cell)
    return dict(zip(read.nodeids, read.results, strict=True))


def _claimed(results: dict[str, TestResult]) -> dict[str, TestResult]:
    return {n: r for n, r in results.items() if (r.properties or {}).get("claim")}


def test_a_cell_from_before_the_evidence_record_proves_no_claimed_pass() -> None:
    results = _by_id(RUN1)
    claimed = _claimed(results)
    assert len(claimed) > 150
    assert not [n for n, r in claimed.items() if r.outcome in (Outcome.PASSED, Outcome.XPASSED)]
    unproven = [r for r in claimed.values() if "without evidence of device work" in (r.message or "")]
    assert len(unproven) == 153, Counter(r.outcome for r in claimed.values())
    assert unproven[0].message.startswith("claimed on cuda on NVIDIA H200, passed without evidence of device work")
    # unclaimed passes are what they were: nothing was claimed of them
    unclaimed = [r for n, r in results.items() if n not in claimed]
    assert sum(r.outcome is Outcome.PASSED for r in unclaimed) > 20


def test_a_cell_with_evidence_keeps_its_claimed_passes() -> None:
    claimed = _claimed(_by_id(RUN2))
    passed = [r for r in claimed.values() if r.outcome is Outcome.PASSED]
    assert len(passed) == 143
    # claims on statistics or handles need no kernel: evidence recorded on the GPU, nothing launched, still a pass
    assert sum(not r.evidence["kernels"] for r in passed) == 13
    assert not [r for r in claimed.values() if "without evidence" in (r.message or "")]


def _edit(events: Path, nodeid: str, change: Any) -> None:
    """Rewrite one test's `evidence` property in the event log (the source a finished cell is read from)."""
    lines = events.read_text().splitlines()
    done = False
    for i, line in enumerate(lines):
        event = json.loads(line)
        if event.get("event") == "finish" and event.get("nodeid") == nodeid:
            props = [p for p in event["user_properties"] if p[0] != "evidence"]
            if change is not None:
                props.append(["evidence", change if isinstance(change, str) else json.dumps(change)])
            event["user_properties"] = props
            lines[i] = json.dumps(event)
            done = True
    assert done, nodeid
    events.write_text("\n".join(lines) + "\n")


FORGED = {
    "removed": (None, "records no evidence of device work"),
    "on the cpu": ({"device": "cpu", "kernels": [["aten::mm", 1]], "launches": 1}, "ran on cpu"),
    "nothing launched": ({"device": "sm_90", "kernels": [], "launches": 0, "required": True}, "no kernel launched"),
    "a silent op": (
        {"device": "sm_90", "kernels": [["flash_fwd_kernel", 1]], "silent": ["torch.nn.attention.varlen.varlen_attn"]},
        "no device work seen for torch.nn.attention.varlen.varlen_attn",
    ),
    "not an object": ("[1, 2]", "not a JSON object"),
}


@pytest.fixture(scope="module")
def control() -> Any:
    return merge_cell_dirs([RUN2], jobs=1)


@pytest.mark.parametrize("case", sorted(FORGED))
def test_a_claimed_pass_without_device_work_fails_and_so_does_its_feature(
    case: str, control: Any, tmp_path: Path
) -> None:
    change, said = FORGED[case]
    column = control.columns[0].id
    assert control.cells["varlen_attention"][column].state is Rollup.SUPPORTED  # the same cell, untouched
    cell = tmp_path / RUN2.name
    shutil.copytree(RUN2, cell)
    _edit(cell / "events.jsonl", VARLEN, change)
    result = _by_id(cell)[VARLEN]
    assert result.outcome is Outcome.FAILED, result
    assert said in result.message, result.message
    merged = merge_cell_dirs([cell], jobs=1)
    # its one backend-scope test (the host-scope one judges nothing beside it): the feature fails there
    assert merged.cells["varlen_attention"][merged.columns[0].id].state is Rollup.FAILING


def test_on_a_cell_without_an_accelerator_the_claim_says_where_it_ran(tmp_path: Path) -> None:
    """The rule follows the device that ran: where the probe saw none (a CUDA build run CPU-only), a claim that also
    covers the CPU ("cpu/cuda since 1.9") is judged as before; one that covers accelerators only ("cuda sm_80+")
    was matched by the suites to a GPU, so it still needs its evidence."""
    cell = tmp_path / RUN1.name
    shutil.copytree(RUN1, cell)
    manifest = json.loads((cell / "manifest.json").read_text())
    manifest["environment"]["accelerator"] = {"available": False, "type": None, "count": 0}
    (cell / "manifest.json").write_text(json.dumps(manifest))
    claimed = _claimed(_by_id(cell))
    with_cpu = {n: r for n, r in claimed.items() if "cpu" in r.properties["claim"].split(" ")[0].split("/")}
    assert len(with_cpu) > 40
    assert not [r for r in with_cpu.values() if "without evidence" in (r.message or "")]
    gpu_only = [r for n, r in claimed.items() if n not in with_cpu and r.outcome is not Outcome.SKIPPED]
    assert sum("without evidence of device work" in (r.message or "") for r in gpu_only) > 80
    assert not [r for r in gpu_only if r.outcome in (Outcome.PASSED, Outcome.XPASSED)]


def test_an_imported_junit_of_the_suites_is_held_to_its_claims(tmp_path: Path) -> None:
    """`harness import` states no probe: the GPU-only claims of the first H200 cell's JUnit still need evidence,
    and the third cell's JUnit, which carries it, keeps its claimed passes."""
    from harness.importer.junit_import import ImportSpec, import_junit

    def imported(run: str) -> dict[str, TestResult]:
        spec = ImportSpec(
            files=(CELLS / f"cu130-2.11.0-h200-{run}" / "junit.xml",),
            backend="cu130",
            cell_id=run,
            results_dir=tmp_path / "results",
        )
        return _claimed(_by_id(import_junit(spec).cell_dir))

    old = imported("run1")
    gpu_only = {n: r for n, r in old.items() if "cpu" not in r.properties["claim"].split(" ")[0].split("/")}
    assert not [r for r in gpu_only.values() if r.outcome is Outcome.PASSED]
    assert sum("without evidence of device work" in (r.message or "") for r in gpu_only.values()) > 80
    assert sum(r.outcome is Outcome.PASSED for r in old.values()) > 40  # cpu/cuda claims: no probe says GPU
    new = imported("run3")
    assert sum(r.outcome is Outcome.PASSED for r in new.values()) == 206
    assert not [r for r in new.values() if "without evidence" in (r.message or "")]


def test_the_rule_reads_only_claimed_good_results_on_an_accelerator() -> None:
    gpu = Probe.from_json({"accelerator": {"available": True, "type": "rocm"}, "devices": [{"name": "AMD MI300X"}]})
    assert accelerator_of(gpu) == "rocm on AMD MI300X"
    assert accelerator_of(Probe.from_json({"accelerator": {"available": False, "type": "cuda"}})) is None
    assert accelerator_of(None) is None
    bare = TestResult(outcome=Outcome.PASSED, properties={"claim": "cpu/rocm since 2.11 (src)"})
    assert judged(bare, None) is bare  # no accelerator seen, and the claim covers the CPU: it ran there
    gpu_claim = TestResult(outcome=Outcome.PASSED, properties={"claim": "rocm gfx942 since 2.11 (src)"})
    assert "claimed on rocm, passed without evidence" in judged(gpu_claim, None).message
    fake = TestResult(outcome=Outcome.PASSED, properties={"claim": "cuda since 2.11 (src) (fake: COMPAT_FAKE_CLAIM)"})
    assert judged(fake, None) is fake  # a drill's fake claim ran on the CPU on purpose
    assert claimed_accelerator("cuda/rocm since 2.0 (src)") == "cuda/rocm"
    assert claimed_accelerator("cpu/cuda since 1.9 (src)") is None
    failed = TestResult(outcome=Outcome.FAILED, message="boom", properties={"claim": "rocm since 2.11"})
    assert judged(failed, "rocm") is failed  # already not a pass: its own message stays
    unclaimed = TestResult(outcome=Outcome.PASSED, properties={"feature": "x"})
    assert judged(unclaimed, "rocm") is unclaimed
    flaky = TestResult(outcome=Outcome.FLAKY, message="first run: boom", attempts=2, properties={"claim": "c"})
    turned = judged(flaky, "rocm")
    assert turned.outcome is Outcome.FAILED and turned.attempts == 2 and "(it said: first run: boom)" in turned.message
    graphs = {
        "claim": "c",
        "evidence": {"device": "gfx942", "kernels": [], "graphs": {"replayed": 3}, "required": True},
    }
    assert missing_evidence(graphs) is None  # replays are device work


def test_what_the_suites_write_is_what_the_harness_reads() -> None:
    """The suites' encoder (suites/_support/evidence.py, loaded torch-free) against the harness's reading of it."""
    from harness import jsonio
    from tests.suites.support_modules import load

    evidence = load("evidence")

    def read(seen: Any, where: str, required: bool) -> str | None:
        return missing_evidence(
            {"claim": "cuda since 2.11", "evidence": jsonio.loads(evidence.encode(seen, where, required))}
        )

    flash = evidence.Seen(device="cuda", kernels=Counter({"flash_fwd_kernel": 2}))
    flash.per_op["torch.nn.functional.scaled_dot_product_attention"] = Counter({"flash_fwd_kernel": 2})
    flash.ops_called["torch.nn.functional.scaled_dot_product_attention"] += 1
    assert read(flash, "sm_90", True) is None
    silent = evidence.Seen(device="cuda", kernels=Counter({"elementwise_kernel": 1}))
    silent.ops_called["torch.linalg.eigh"] += 1  # called, no kernel of its own: a host fallback
    assert "no device work seen for torch.linalg.eigh on sm_90" in read(silent, "sm_90", True)
    idle = evidence.Seen(device="cuda", copies=3)
    assert "no kernel launched" in read(idle, "sm_90", True)
    assert read(idle, "sm_90", False) is None  # a claim on statistics or handles needs no kernel
    graphs = evidence.Seen(device="cuda", recorded=1, replayed=3)
    assert read(graphs, "gfx942", True) is None
    assert "ran on cpu" in read(flash, "cpu", True)
