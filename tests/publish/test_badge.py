from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from harness.cli import main
from harness.matrix_json import write_matrix
from harness.merge.combine import merge_cell_dirs
from harness.model import Matrix
from harness.publish.render.badge import GREY, badge_svg, badges, colour_for, column_badge, matrix_badge
from tests.publishing_cells import real_cells

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def matrix() -> Matrix:
    cells = real_cells()
    return merge_cell_dirs([cells.new, cells.nodata])


def _texts(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return [t.text or "" for t in root.iter(f"{SVG}text")]


def test_column_badge_shows_supported_over_judged(matrix) -> None:
    cpu = matrix.column("cpu")
    score = cpu.score
    svg = column_badge(cpu)
    assert f"{score.supported}/{score.judged} features" in _texts(svg)
    assert f"CPU · torch {cpu.environment.torch}" in _texts(svg), "the column's torch build is on its badge"
    assert "http" not in svg.replace("http://www.w3.org/2000/svg", ""), "badges load nothing from elsewhere"


def test_no_data_column_is_grey_no_data_never_zero(matrix) -> None:
    rocm = matrix.column("rocm")
    svg = column_badge(rocm)
    assert "no data" in _texts(svg)
    assert not any("/" in t for t in _texts(svg)) and GREY in svg


def test_matrix_badge_counts_only_columns_with_data(matrix) -> None:
    score = matrix.column("cpu").score
    texts = _texts(matrix_badge(matrix))
    assert f"{score.supported}/{score.judged} feature cells, 1 no data" in texts


def test_badge_text_is_escaped() -> None:
    svg = badge_svg('<script>"x"&', "1/2 features", "#4c1")
    ET.fromstring(svg)  # still well-formed XML
    assert "<script>" not in svg and '<script>"x"&' in _texts(svg)


@pytest.mark.parametrize(
    ("supported", "judged", "colour"),
    [(5, 5, "#4c1"), (9, 10, "#97ca00"), (1, 2, "#dfb317"), (0, 4, "#e05d44"), (0, 0, GREY)],
)
def test_colour_by_ratio(supported, judged, colour) -> None:
    assert colour_for(supported, judged) == colour


def test_badge_command_writes_one_per_column_and_the_matrix(matrix, tmp_path, capsys) -> None:
    write_matrix(matrix, tmp_path / "matrix.json")
    assert main(["badge", str(tmp_path / "matrix.json"), "-o", str(tmp_path / "badges")]) == 0
    names = sorted(p.name for p in (tmp_path / "badges").iterdir())
    assert names == ["cpu.svg", "matrix.svg", "rocm.svg"] == sorted(badges(matrix))
    for path in (tmp_path / "badges").iterdir():
        ET.fromstring(path.read_text(encoding="utf-8"))
