"""The evidence of device work travels from a real GPU cell to the matrix: per test and per feature cell.

The cell is the second one a real H200 wrote (tests/data/gpu-cells/cu130-2.11.0-h200-run2, torch 2.11.0+cu130):
its claimed tests carry the `evidence` property the suites' profiler recorded. The merge decodes it, the roll-up
sums it per feature (the claimed ops' kernels first, the generic elementwise ones last), matrix.json keeps it
(schema-valid), and the Markdown and the page show it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.matrix_json import load_matrix, write_matrix
from harness.merge.combine import merge_cell_dirs
from harness.merge.rollup import roll_up
from harness.model import TestResult, evidence_text, short_kernel
from harness.outcomes import Outcome, Rollup
from harness.publish.render.markdown import counts_text
from harness.publish.render.page_parts import detail

GPU_CELL = Path(__file__).resolve().parents[1] / "data" / "gpu-cells" / "cu130-2.11.0-h200-run2"


@pytest.fixture(scope="module")
def h200():
    return merge_cell_dirs([GPU_CELL], jobs=1)


def _result(h200, test: str) -> TestResult:
    row = next(r for r in h200.tests if r.id == test)
    return next(iter(row.results.values()))


def test_a_gpu_tests_evidence_names_the_kernel_of_its_claimed_op(h200) -> None:
    flash = _result(h200, "attention/test_sdpa_kernels.py::test_kernel_matches_float64_math[flash-bfloat16-plain]")
    assert flash.evidence is not None and flash.evidence["device"] == "sm_90"
    sdpa = flash.evidence["ops"]["torch.nn.functional.scaled_dot_product_attention"]
    assert short_kernel(sdpa[0][0]) == "flash_fwd_kernel", sdpa
    eigh = _result(h200, "linalg/test_eigh.py::test_eigh_accuracy_and_ordering[float32-batched]")
    assert any("syevbj" in k for k, _ in eigh.evidence["ops"]["torch.linalg.eigh"]), eigh.evidence
    graphs = _result(h200, "graphs/test_cuda_graph.py::test_cuda_graph_static_input_replay")
    assert graphs.evidence["graphs"] == {"recorded": 1, "replayed": 3}


def test_the_feature_cell_sums_what_ran_distinctive_kernels_first(h200) -> None:
    column = h200.columns[0].id
    varlen = h200.cells["varlen_attention"][column]
    assert varlen.state is Rollup.SUPPORTED
    assert varlen.evidence["kernels"][0][0] == "flash_fwd_kernel", varlen.evidence
    linalg = h200.cells["linalg"][column].evidence
    assert linalg["device"] == "sm_90" and linalg["tests"] >= 40
    assert not linalg["kernels"][0][0].startswith(("vectorized_elementwise", "elementwise_kernel")), linalg
    graphs = h200.cells["graphs"][column].evidence
    assert graphs["replayed"] >= 9, graphs
    assert h200.cells["hub"][column].evidence is None, "a host-side feature ran nothing on the device: nothing shown"


def test_evidence_round_trips_through_matrix_json_and_is_shown(h200, tmp_path: Path) -> None:
    path = tmp_path / "matrix.json"
    write_matrix(h200, path)
    again = load_matrix(path)  # validated against the schema on load
    column = h200.columns[0].id
    assert again.cells["varlen_attention"][column].evidence == h200.cells["varlen_attention"][column].evidence
    assert "flash\\_fwd\\_kernel" in counts_text(again.cells["varlen_attention"][column])
    flash = _result(again, "attention/test_sdpa_kernels.py::test_kernel_matches_float64_math[flash-bfloat16-plain]")
    assert detail(flash)["p"]["evidence"].startswith("flash_fwd_kernel on sm_90"), detail(flash)


def test_malformed_evidence_from_outside_is_not_evidence() -> None:
    hostile = [
        {"device": "sm_90", "kernels": "not a list"},
        {"device": ["x"], "kernels": [["k", "many"]], "graphs": {"replayed": "lots"}},
        {"kernels": [["k", -5]]},
    ]
    results = [TestResult(outcome=Outcome.PASSED, duration=0.1, properties={"evidence": e}) for e in hostile]
    cell = roll_up(results)
    assert cell.state is Rollup.SUPPORTED and cell.evidence is None, cell.evidence
    text_only = TestResult(outcome=Outcome.PASSED, duration=0.1, properties={"evidence": "{not json"})
    assert text_only.evidence is None


def test_evidence_text_and_kernel_names() -> None:
    long = "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128>>(Flash_fwd_params)"
    assert short_kernel(long) == "flash_fwd_kernel"
    assert short_kernel("aten::_linalg_eigh") == "aten::_linalg_eigh"
    text = evidence_text(
        {"device": "sm_90", "kernels": [["vectorized_elementwise_kernel", 40], ["flash_fwd_kernel", 2]], "replayed": 12}
    )
    assert text == "flash_fwd_kernel, vectorized_elementwise_kernel on sm_90 · 12 graph replays"
    assert evidence_text({"device": "sm_90", "kernels": []}) == "no device work seen on sm_90"


def test_the_gpu_cell_is_the_one_the_h200_wrote() -> None:
    manifest = json.loads((GPU_CELL / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["environment"]["devices"][0]["name"] == "NVIDIA H200"
    assert manifest["environment"]["torch"]["version"] == "2.11.0+cu130"


RUN3 = GPU_CELL.parent / "cu130-2.11.0-h200-run3"


def test_the_third_h200_cell_runs_cudnn_attention_with_evidence_and_no_sdpa_failure() -> None:
    """After issue 39: cuDNN attention is claimed on sm_90, ran there (its kernel named), and none of SDPA's
    refusals fails any more (each [unsupported] in the kernel's own words)."""
    matrix = merge_cell_dirs([RUN3], jobs=1)
    column = matrix.columns[0].id
    assert matrix.columns[0].python == "3.12", "the H200's Python is part of its column (issue 41)"
    cudnn = _result(matrix, "attention/test_sdpa_kernels.py::test_kernel_matches_float64_math[cudnn-bfloat16-plain]")
    assert cudnn.outcome is Outcome.PASSED and "claim" in cudnn.properties
    kernels = cudnn.evidence["ops"]["torch.nn.functional.scaled_dot_product_attention"]
    assert any("cudnn" in k for k, _ in kernels), kernels
    sdpa = [r for r in matrix.tests if r.id.startswith("attention/test_sdpa_kernels.py")]
    bad = [r.id for r in sdpa if next(iter(r.results.values())).is_bad]
    assert not bad, bad
    assert matrix.cells["memory"][column].state is Rollup.SUPPORTED
