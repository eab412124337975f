"""The suites' claims, refusal table and known issues read against what a real H200 did (issue 39).

``tests/data/gpu-facts/h200-2.11.0+cu130.json`` (tools/gpu-facts.py on an H200, torch 2.11.0+cu130: each SDPA kernel
x dtype x case, the 2:4 backends, lstsq's drivers, eigh on NaN) and the cell ``tests/data/gpu-cells/cu130-2.11.0-h200-
run1`` (its JUnit) are the gold: every refusal the H200 said where no claim covers the test is listed in
``suites/_support/refusals.py`` in the words it said (so it reads ``[unsupported]``, not a failure), no claimed
configuration refused there, every cuDNN configuration that ran is claimed, and the eigh known issue no longer applies
to 2.11 (it passed there). Fast: no torch (the refusal rows are matched here as refusals.py matches them).
"""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator

import pytest

from tests.suites.support_modules import SUITES, load

FAST = True

REPO = SUITES.parent
FACTS = json.loads((REPO / "tests/data/gpu-facts/h200-2.11.0+cu130.json").read_text(encoding="utf-8"))
CELL = REPO / "tests/data/gpu-cells/cu130-2.11.0-h200-run1/junit.xml"
TORCH = (2, 11, 0)
KERNELS = {"MATH": "math", "FLASH_ATTENTION": "flash", "EFFICIENT_ATTENTION": "efficient", "CUDNN_ATTENTION": "cudnn"}
CASES = {
    "plain": "plain",
    "causal": "causal",
    "bool-mask": "bool-mask",
    "gqa": "gqa",
    "hd80": "head-dim-80",
    "hd33": "head-dim-33",
}  # fmt: skip  (the facts' hd256 has no suite case)
SDPA = "torch.nn.functional.scaled_dot_product_attention"


@pytest.fixture(scope="module")
def suites_modules() -> Iterator[tuple]:
    sys.path.insert(0, str(SUITES))  # refusals, claims and kernel_reasons import their siblings as _support.*
    try:
        from _support import claims, kernel_reasons, refusals

        yield claims, kernel_reasons, refusals
    finally:
        sys.path.remove(str(SUITES))


def _h200(claims):
    return claims.Device("cuda", (9, 0), None, "NVIDIA H200", variant="cu130", torch=TORCH)


def _listed(refusals, op: str, error: str, message: str) -> list:
    """The rows that list this refusal for CUDA on torch 2.11 (op, family, exception class, text, release bounds)."""
    release = TORCH[:2]

    def within(entry) -> bool:
        since, until = getattr(entry, "since", None), getattr(entry, "until", None)
        return not (since and release < tuple(map(int, since.split(".")))) and not (
            until and release >= tuple(map(int, until.split(".")))
        )

    return [
        r
        for r in refusals.REFUSALS
        if r.op == op and "cuda" in r.families and error in r.errors and within(r) and re.search(r.text, message)
    ]


def _sdpa_facts() -> Iterator[tuple[str, dict]]:
    for key, value in FACTS["sdpa"].items():
        parts = key.split()
        if len(parts) != 3 or parts[0] not in KERNELS or parts[2] not in CASES:
            continue
        kernel, dtype, case = KERNELS[parts[0]], parts[1], CASES[parts[2]]
        yield f"attention/test_sdpa_kernels.py::test_kernel_matches_float64_math[{kernel}-{dtype}-{case}]", value


def test_every_sdpa_refusal_of_the_h200_is_listed_and_unclaimed(suites_modules) -> None:
    claims, kernel_reasons, refusals = suites_modules
    refused = 0
    for node, value in _sdpa_facts():
        if "error" not in value:
            continue
        refused += 1
        kind, _, text = value["error"].partition(": ")
        message = kernel_reasons.compose(text, value.get("warnings", []))
        assert not claims.claims_for(node, _h200(claims)), f"{node}: refused on the H200 ({message}) yet claimed"
        assert _listed(refusals, SDPA, kind, message), f"{node}: the H200's refusal is in no row: {message}"
    assert refused == 22, f"the facts hold 22 SDPA refusals in the suites' cases (the cell's 22), found {refused}"


def test_no_claimed_sdpa_configuration_refused_and_cudnn_is_claimed(suites_modules) -> None:
    claims = suites_modules[0]
    cudnn_ran = []
    for node, value in _sdpa_facts():
        claimed = claims.claims_for(node, _h200(claims))
        if "error" in value:
            assert not claimed, node
        elif "[cudnn-" in node:
            cudnn_ran.append(node)
            assert claimed, f"{node} ran on the H200 (cuDNN) but no claim covers it"
    assert len(cudnn_ran) == 10, cudnn_ran  # bfloat16/float16 x plain, causal, head-dim-80, bool-mask, gqa


def test_the_cell_failures_in_issue_39s_areas_are_now_judged(suites_modules) -> None:
    """The cell's SDPA and MX failures: each one's error is a listed refusal of an unclaimed test (its warnings are
    in the facts, above), and lstsq, 2:4 and eigh's NaN texts match what the suites now expect."""
    claims, _, refusals = suites_modules
    failures = {}
    for case in ET.parse(CELL).getroot().iter("testcase"):
        bad = case.find("failure")
        if bad is not None:
            failures[f"{case.get('classname').replace('.', '/')}.py::{case.get('name')}"] = bad.get("message") or ""
    mx = "scaled_mm_mx/test_scaled_mm_mx.py::test_mx_scaled_mm_matches_dequantized_reference"
    for case, error in (("mxfp8-e4m3fn", "RuntimeError"), ("mxfp8-e5m2", "ValueError")):
        node = f"{mx}[{case}]"
        text = failures[node].partition(": ")[2]
        assert not claims.claims_for(node, _h200(claims)), f"{node} is claimed on sm_90"
        assert _listed(refusals, "torch.nn.functional.scaled_mm:mx-below-sm100", error, text), f"{node}: {text}"
    sdpa = [n for n in failures if n.startswith("attention/test_sdpa_kernels.py")]
    assert len(sdpa) == 22 and all(failures[n].endswith("No available kernel. Aborting execution.") for n in sdpa)
    linalg = FACTS["linalg"]
    for driver in ("gelsd", "gelss", "gelsy"):
        kind, _, text = linalg[f"lstsq driver {driver}"].partition(": ")
        assert _listed(refusals, "torch.linalg.lstsq:driver", kind, text), text
        node = f"linalg/test_lstsq.py::test_lstsq_driver_full_rank[{driver}]"
        assert not claims.claims_for(node, _h200(claims)), f"{node}: CUDA's claim covers gels only"
    assert claims.claims_for("linalg/test_lstsq.py::test_lstsq_driver_full_rank[gels]", _h200(claims))
    for key in ("cutlass torch.float16", "default torch.float32"):
        kind, _, text = FACTS["sparse24"][key]["error"].partition(": ")
        assert _listed(refusals, "torch.sparse.to_sparse_semi_structured", kind, text), f"{key}: {text}"
    nan = FACTS["linalg"]["eigh nan"].partition(": ")[2]
    assert re.search(r"^linalg\.eigh: \(Batch element 0\): The algorithm failed", nan), nan


def test_the_eigh_known_issue_is_narrowed_to_where_it_was_seen() -> None:
    """2.11.0+cu130 passed the test on the H200 (XPASS(strict)): the entry starts at 2.12 and expects its named
    failure only."""
    expectations = load("expectations")
    issues = expectations.load(SUITES / "expectations")
    node = "linalg/test_eigh.py::test_eigh_repeated_calls_stable[complex64-batched]"
    ctx = {"variant": "cu130", "device": "cuda", "device_name": "NVIDIA H200", "python": (3, 12)}
    on_211 = expectations.applicable(issues, expectations.RunContext(**ctx, torch=TORCH))
    assert not expectations.match(on_211, node), "the known issue still applies to 2.11, which passed"
    on_212 = expectations.match(expectations.applicable(issues, expectations.RunContext(**ctx, torch=(2, 12, 1))), node)
    assert [i.raises for i in on_212] == [("_support.linalg_metrics.EigenvectorsNotOrthonormal",)], on_212
