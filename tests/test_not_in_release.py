"""A feature a build cannot have is "not in this release": never scored, never "unsupported".

Its `since` is later than the column's torch release, or its `devices` (suites/features.toml) name
other device families than the column's build. The committed real cells of 2.13.0, 2.14.1 and 2.15.0
merged side by side judge no such row; their tests still show; the release view says "arrived in".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cell import FeatureInfo
from harness.errors import InputError
from harness.matrix_json import load_matrix, write_matrix
from harness.model import SCHEMA_VERSION, VERDICT_STATES, Feature, FeatureGroup, Matrix, arrived_after
from harness.outcomes import GOOD, Rollup
from harness.publish.render.badge import column_badge
from harness.publish.render.html import page_data
from harness.publish.render.markdown import render_markdown
from harness.run.suites import load_features
from tests.committed import releases_matrix


def _release(torch: str | None) -> str | None:
    return ".".join(torch.split("+")[0].split(".")[:2]) if torch else None


def test_no_feature_is_judged_on_a_build_that_cannot_have_it() -> None:
    matrix = releases_matrix()
    checked = 0
    for feature in matrix.features:
        for column in matrix.columns:
            cell = matrix.cell(feature.id, column.id)
            assert cell is not None
            too_early = arrived_after(feature.since, _release(column.torch))
            other_family = bool(feature.devices) and column.family not in feature.devices
            other_python = bool(feature.python) and column.python is not None and column.python not in feature.python
            if too_early or other_family or other_python:
                checked += 1
                assert cell.state is Rollup.NOT_IN_RELEASE, (feature.id, column.id, cell.state)
                assert cell.reason, (feature.id, column.id)
            else:
                assert cell.state is not Rollup.NOT_IN_RELEASE, (feature.id, column.id)
    assert checked >= 15  # the suites have rows of 2.14 and 2.15 and four device-family rows


def test_the_rows_the_issue_named_are_not_in_the_release() -> None:
    matrix = releases_matrix()
    cpu, cu130, cu132, _ = (c.id for c in matrix.columns)
    for fid in ("xpu_memory_tracking", "scaled_mm_mx", "rocm_builds", "mps_streams"):
        cell = matrix.cell(fid, cpu)
        assert cell.state is Rollup.NOT_IN_RELEASE, fid
    assert matrix.cell("scaled_mm_mx", cpu).reason == "arrived in 2.14"
    assert matrix.cell("rocm_builds", cu132).reason == "ROCm builds only"
    assert matrix.cell("xpu_telemetry", cu132).reason == "XPU builds only"
    # a CPU-only run of a CUDA build is a CUDA build: the CUDA row is judged there
    assert matrix.cell("cuda_builds", cu132).state is not Rollup.NOT_IN_RELEASE
    assert matrix.cell("cuda_builds", cu130).reason == "arrived in 2.15"


def test_not_in_release_rows_are_left_out_of_the_score_but_their_tests_show() -> None:
    matrix = releases_matrix()
    for column in matrix.columns:
        absent = [f for f in matrix.features if matrix.cell(f.id, column.id).state is Rollup.NOT_IN_RELEASE]
        assert absent
        scored = [f for f in matrix.features if f.scope.value == "backend" and f.id != "unassigned"]
        assert column.score.features == len(scored) - len(absent)
        assert column.score.judged == sum(1 for f in scored if matrix.cell(f.id, column.id).state in VERDICT_STATES)
    cpu = matrix.columns[0].id
    ran = matrix.cell("xpu_telemetry", cpu)
    assert ran.counts and sum(ran.counts.values()) == 12  # its tests ran on the CPU build and are kept
    assert sum(1 for _ in (r for row, r in matrix.results(cpu) if row.feature == "xpu_telemetry")) == 12


def test_a_test_that_passes_before_the_release_is_a_note_not_a_verdict() -> None:
    matrix = releases_matrix()
    cu130 = matrix.columns[1].id
    cell = matrix.cell("cuda_builds", cu130)
    assert cell.state is Rollup.NOT_IN_RELEASE
    assert cell.early == sum(cell.counts.get(o, 0) for o in GOOD) == 1
    notes = [n.note for n in matrix.notes if n.cell == cu130 and n.source == "cuda_builds"]
    assert notes and "before the feature's release 2.15" in notes[0]


def test_a_group_of_a_later_release_does_not_judge_the_row() -> None:
    matrix = releases_matrix()
    cpu, cu130, _, _ = (c.id for c in matrix.columns)
    feature = matrix.feature("graph_capture")
    assert feature.groups and all(g.since == "2.14" for g in feature.groups)
    late = [
        row for row, _ in matrix.results(cpu) if row.feature == "graph_capture" and feature.groups[0].matches(row.id)
    ]
    assert late, "the 2.14 group's tests ran on 2.13 and stay in the test rows"
    on_cpu = matrix.cell("graph_capture", cpu)
    all_tests = sum(1 for row, _ in matrix.results(cpu) if row.feature == "graph_capture")
    assert sum(on_cpu.counts.values()) + on_cpu.later == all_tests  # the group's tests: shown, not judged
    assert on_cpu.later == len(late) + sum(
        1 for row, _ in matrix.results(cpu) if row.feature == "graph_capture" and feature.groups[1].matches(row.id)
    )
    on_cu130 = matrix.cell("graph_capture", cu130)
    assert sum(on_cu130.counts.values()) == sum(1 for row, _ in matrix.results(cu130) if row.feature == "graph_capture")


@pytest.mark.parametrize(
    ("since", "devices", "release", "family", "reason"),
    [
        ("2.14", (), "2.13", "cpu", "arrived in 2.14"),
        ("2.14", (), "2.14", "cpu", None),
        ("2.9", (), "2.13", "cpu", None),  # numeric, not text: 2.9 is before 2.13
        ("2.13", ("xpu",), "2.15", "cuda", "XPU builds only"),
        ("2.13", ("cuda", "rocm"), "2.15", "cpu", "CUDA and ROCm builds only"),
        ("2.13", ("xpu",), "2.15", None, None),  # a build of no known family: nothing says it cannot
        ("2.14", (), None, "cuda", None),  # no release known: judged as before
    ],
)
def test_why_a_build_cannot_have_a_feature(since, devices, release, family, reason) -> None:
    assert Feature(id="f", title="F", since=since, devices=devices).not_in(release, family) == reason


def test_a_group_pattern_is_literal_but_for_its_wildcards() -> None:
    group = FeatureGroup(match="g/test_a.py::test_x[*]", since="2.14")
    assert group.matches("g/test_a.py::test_x[1]")
    assert not group.matches("g/test_a.py::test_x1")
    assert FeatureGroup(match="g/test_?.py::*").matches("g/test_b.py::t")


def test_the_summary_page_and_badges_say_not_in_this_release() -> None:
    matrix = releases_matrix()
    summary = render_markdown(matrix)
    assert "▫️ not in this release<br>_arrived in 2.14_" in summary
    assert "🚫 unsupported<br>1 skipped (1 unsupported) | 🚫" not in summary  # rocm_builds is no longer scored
    page = page_data(matrix)
    assert page["states"]["not-in-release"]["meaning"]
    rocm = next(f for f in page["features"] if f["id"] == "rocm_builds")
    assert [c["state"] for c in rocm["cells"]] == ["not-in-release"] * 4
    assert "not in this release" in column_badge(matrix.columns[0])


def test_the_release_view_says_arrived_not_fixed() -> None:
    summary = render_markdown(releases_matrix())
    view = summary.split("### Release over release", 1)[1]
    assert "`scaled_mm_mx` arrived in 2.14 (unsupported)" in view
    assert "`cuda_builds` arrived in 2.15 (n/a)" in view
    assert "not-in-release →" not in view and "not in this release →" not in view


def test_matrix_json_round_trips_and_the_previous_schema_still_reads(tmp_path: Path) -> None:
    matrix = releases_matrix()
    path = tmp_path / "matrix.json"
    write_matrix(matrix, path)
    again = load_matrix(path)
    assert again.schema_version == SCHEMA_VERSION
    assert again.cell("rocm_builds", again.columns[0].id).reason == "arrived in 2.14"
    assert again.feature("rocm_builds").devices == ("rocm",)
    # a 1.2 matrix (before this outcome existed) is read as it was
    doc = json.loads(path.read_text())
    doc["schema_version"] = "1.2"
    for feature in doc["features"]:
        feature.pop("devices", None)
        feature.pop("groups", None)
    for cells in doc["cells"].values():
        for cell in cells.values():
            if cell["state"] == "not-in-release":
                cell.update(state="unsupported")
                cell.pop("reason", None)
                cell.pop("early", None)
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    assert load_matrix(old).cell("rocm_builds", again.columns[0].id).state is Rollup.UNSUPPORTED


def test_the_features_file_refuses_an_unknown_device_family(tmp_path: Path) -> None:
    (tmp_path / "features.toml").write_text('[features.a]\ntitle = "A"\nsince = "2.14"\ndevices = ["tpu"]\n')
    with pytest.raises(InputError, match=r"features.a.devices: unknown device famil\(ies\) \['tpu'\]"):
        load_features(tmp_path)
    (tmp_path / "features.toml").write_text('[features.a]\ntitle = "A"\nsince = "2.14"\ndevices = ["xpu"]\n')
    assert load_features(tmp_path)["a"] == FeatureInfo(title="A", since="2.14", devices=("xpu",))


def test_the_merge_without_a_features_file_uses_what_the_cells_recorded() -> None:
    from harness.merge.combine import merge_cell_dirs
    from tests.committed import cell_dirs

    recorded: Matrix = merge_cell_dirs(cell_dirs(), jobs=1)
    # the committed cells recorded `since` (so rows of later releases are not in 2.13); the older ones no
    # devices, the 2.15 cells (made later) the devices of today's rows: the newest statement of a row wins
    assert recorded.cell("scaled_mm_mx", recorded.columns[0].id).state is Rollup.NOT_IN_RELEASE
    assert recorded.feature("rocm_builds").devices == ("rocm",)
    assert {recorded.cell("rocm_builds", c.id).reason for c in recorded.columns[1:]} == {"ROCm builds only"}


def test_diff_releases_marks_an_arrival_not_a_fix() -> None:
    from harness.publish.column_diff import diff_matrices, release_pairs
    from harness.publish.render.diff_report import render_diff_markdown

    matrix = releases_matrix()
    text = render_diff_markdown(diff_matrices(matrix, matrix, release_pairs(matrix)))
    row = next(line for line in text.splitlines() if line.startswith("| MX-format scaled\\_mm (`scaled_mm_mx`) |"))
    assert "▫️ not in this release | 🚫 unsupported (arrived: the older build could not have it)" in row
