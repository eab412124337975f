"""The page's test data in parts (harness/publish/render/page_parts.py): rows per feature cut at
ROWS_PER_PART, details cut by size and named from each row, per-test history as per-column strings
with a verdict only where there is something to say; the page holds them all when they are small."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from harness.matrix_json import load_matrix
from harness.publish.history import append_run, load_history, load_results
from harness.publish.render import page_parts
from harness.publish.render.html import render_page
from harness.publish.render.page_parts import build_parts
from tests.publishing_cells import REGRESSED, write_base_and_new


@pytest.fixture(scope="module")
def matrices(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return write_base_and_new(tmp_path_factory.mktemp("parts"))


def test_rows_and_details_are_cut_and_found_again(matrices, monkeypatch: pytest.MonkeyPatch) -> None:
    matrix = load_matrix(matrices[1])
    monkeypatch.setattr(page_parts, "ROWS_PER_PART", 3)
    monkeypatch.setattr(page_parts, "DETAIL_PART_BYTES", 600)
    parts = build_parts(matrix)
    alpha = [f.id for f in matrix.features].index("alpha")
    names = parts.features[alpha]
    rows = [row for name in names for row in parts.data[name]]
    assert len(names) == -(-len(rows) // 3) and all(len(parts.data[n]) <= 3 for n in names)
    assert sorted(r[0] for r in rows) == sorted(t.id for t in matrix.tests if t.feature == "alpha")
    details = [n for n in parts.data if n.startswith("d")]
    assert len(details) > 1, "details are cut by size"
    for row in rows:
        if row[2] >= 0:
            assert row[0] in parts.data[f"d{row[2]}"], "a row names the part that holds its details"
    regressed = next(r for r in rows if r[0] == REGRESSED)
    cpu = [c.id for c in matrix.columns].index("cpu")
    assert parts.data[f"d{regressed[2]}"][REGRESSED][cpu]["m"].startswith("AssertionError: regressed")
    assert regressed[3] == -1, "no history given: no history part"


def test_history_parts_are_strings_per_column_with_verdicts_where_needed(matrices, tmp_path, monkeypatch) -> None:
    base, new = matrices
    monkeypatch.setattr(page_parts, "TIMELINE_TESTS", 4)
    for run, path in ((1, base), (2, new), (3, base)):
        monkeypatch.setenv("GITHUB_RUN_ID", str(run))
        append_run(tmp_path / "history", load_matrix(path))
    runs = load_history(tmp_path / "history")
    matrix = load_matrix(base)
    parts = build_parts(matrix, runs, load_results(tmp_path / "history", runs))
    ids = [t.id for t in matrix.tests]
    number = ids.index(REGRESSED)
    shard = parts.data[f"h{number // 4}"]
    position = number % 4
    assert shard["o"]["cpu"][position * 3 : position * 3 + 3] == "pfp"
    assert shard["v"]["cpu"][position] == {"first_bad": 1, "last_good": 0, "fixed": 2, "flips": [["2.13.0+cpu", 2]]}
    stable = ids.index("alpha/test_a.py::test_stable")
    assert (stable % 4) not in parts.data[f"h{stable // 4}"]["v"].get("cpu", {}), "nothing to say: no verdict"
    assert len(parts.data) - len([n for n in parts.data if not n.startswith("h")]) == -(-len(ids) // 4)


def test_the_page_holds_its_parts_when_small_and_names_them_when_not(matrices) -> None:
    matrix = load_matrix(matrices[1])
    inline = render_page(matrix)
    assert inline.files == {} and inline.part_bytes > 0
    data = json.loads(inline.html.split('id="data">', 1)[1].split("</script>", 1)[0])
    assert set(data["parts"]) == {n for f in data["features"] for n in f["parts"]} | {"d0"}
    split = render_page(matrix, inline_limit=0, site=True)
    assert set(split.files) >= {"r0-0", "d0"} and '"parts":null' in split.html
    assert "connect-src &#39;self&#39;" in split.html, "the page may fetch its parts from its own origin only"


def test_parts_written_as_they_are_made_from_a_lean_matrix_are_the_parts_built_whole(
    matrices, tmp_path, monkeypatch
) -> None:
    """The publication's path (a lean matrix, its details from the rows read again one at a time,
    each part handed on as soon as it is complete) gives the plain path's parts and page."""
    from harness.matrix_json import iter_tests

    base, new = matrices
    monkeypatch.setattr(page_parts, "ROWS_PER_PART", 3)
    monkeypatch.setattr(page_parts, "DETAIL_PART_BYTES", 600)
    for run, path in ((1, base), (2, new)):
        monkeypatch.setenv("GITHUB_RUN_ID", str(run))
        append_run(tmp_path / "history", load_matrix(path))
    runs = load_history(tmp_path / "history")
    results = load_results(tmp_path / "history", runs)
    plain = render_page(load_matrix(new), history=runs, results=results, inline_limit=0, site=True)
    written: dict[str, bytes] = {}
    streamed = render_page(
        load_matrix(new, results="lean"),
        history=runs,
        results=results,
        inline_limit=0,
        site=True,
        write_part=written.__setitem__,
        detail_rows=iter_tests(new),
    )
    assert any(b'"t":' in body for body in plain.files.values()), "the details hold a trace"
    assert streamed.html == plain.html and streamed.files == {} and streamed.written == len(written)
    assert written == plain.files


def _composite_merge(tmp_path: Path, *, spill: bool):
    """The committed real cells and a later partial run of cpu-2.13.0: a composite column whose
    overlaid results carry their run (what a page cache keyed by a freed object's id got wrong)."""
    from harness.merge.combine import merge_cell_dirs
    from tests.committed import CELLS, partial_rerun_cell, stated_features

    later = partial_rerun_cell(tmp_path)
    cells = sorted(p for p in CELLS.iterdir() if p.is_dir())
    return merge_cell_dirs([*cells, later], features=stated_features(), jobs=1, spill=spill)


def test_a_spilled_merges_page_and_history_codes_are_the_in_memory_merges(tmp_path: Path) -> None:
    """A spilled merge's rows are new objects each time they are read, so an id seen earlier may name
    another result now: the page's parts and the history's codes must not reuse what an id held."""
    from harness.publish.history import result_codes
    from harness.publish.render.html import render_html

    in_memory = _composite_merge(tmp_path, spill=False)
    spilled = _composite_merge(tmp_path, spill=True)
    # the two merges' clocks may read different seconds (a loaded machine): the page shows the time
    spilled = dataclasses.replace(spilled, generated_at=in_memory.generated_at)
    page = render_html(in_memory)
    assert page.count("r-partial") > 1, "the overlaid results name their run on the page"
    assert render_html(spilled) == page
    assert result_codes(spilled) == result_codes(in_memory)
