"""`harness upstream` on recorded index responses (tests/data/upstream/2026-12-02: PyPI's real answers,
and PyTorch's channel pages written in PEP 691's format; PROVENANCE.md says which is which)."""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from pathlib import Path

import pytest

from harness.cli import main
from harness.images import upstream
from harness.registry import REGISTRY_PATH, parse_registry

RECORDED = Path(__file__).resolve().parents[1] / "data" / "upstream" / "2026-12-02"


def _registry_text(edit=None) -> str:
    text = REGISTRY_PATH.read_text(encoding="utf-8")
    return edit(text) if edit else text


def _compare(text: str, folder: Path = RECORDED) -> upstream.Comparison:
    registry = parse_registry(tomllib.loads(text))
    return upstream.compare(registry, upstream.Recorded(folder), upstream.PYPI)


def _month_ago(text: str) -> str:
    """The registry as it was kept by hand: 2.14.0 as the newest 2.14, a wrong 2.15 date, no Python list
    for 2.15, 2.12 with 2.12.0's free-threaded 3.13."""
    text = text.replace('latest = "2.14.1"', 'latest = "2.14.0"')
    text = text.replace('released = "2026-10-28"', 'released = "2026-10-27"')
    text = re.sub(r'(\[releases\."2\.15"\]\n(?:.*\n)*?)python = .*\n', r"\1", text)
    return text.replace(
        'python = ["3.10", "3.11", "3.12", "3.13", "3.14", "3.14t"]\ncuda_min_arch = { cu126 = "sm_50", cu129',
        'python = ["3.10", "3.11", "3.12", "3.13", "3.14", "3.13t", "3.14t"]\ncuda_min_arch = { cu126 = "sm_50", cu129',
        1,
    )


def test_todays_registry_matches_the_recorded_indexes_but_for_trunks_nightlies() -> None:
    found = _compare(_registry_text())
    assert [(d.release, d.what, d.writable) for d in found.differences] == [("2.17", "nightly", False)]
    assert "2.17.0.dev20261201" in found.differences[0].line()
    assert "https://pypi.org/simple/torch/" in found.read and upstream.CHANNEL_PAGES["nightly"] in found.read


def test_a_registry_kept_by_hand_is_told_what_upstream_published_and_where() -> None:
    found = _compare(_registry_text(_month_ago))
    lines = {(d.release, d.what): d for d in found.differences}
    assert lines[("2.14", "latest")].index == "2.14.1"
    assert (lines[("2.15", "released")].registry, lines[("2.15", "released")].index) == ("2026-10-27", "2026-10-28")
    assert lines[("2.15", "python")].index == "3.11, 3.12, 3.13, 3.14, 3.15, 3.14t, 3.15t"
    assert lines[("2.15", "python")].source == "https://pypi.org/simple/torch/"
    assert lines[("2.12", "python")].index == "3.10, 3.11, 3.12, 3.13, 3.14, 3.14t"  # 2.12.1 has no cp313t
    assert lines[("2.14", "latest")].source == "pip index versions torch --index-url https://pypi.org/simple"


def test_write_proposes_the_plain_facts_and_the_proposal_loads() -> None:
    text = _registry_text(_month_ago)
    found = _compare(text)
    proposed, left = upstream.propose(text, parse_registry(tomllib.loads(text)), found.differences, "2026-12-02")
    registry = parse_registry(tomllib.loads(proposed))
    assert registry.releases["2.14"].latest == "2.14.1" and registry.releases["2.15"].released == "2026-10-28"
    assert registry.releases["2.15"].python == ("3.11", "3.12", "3.13", "3.14", "3.15", "3.14t", "3.15t")
    assert any("harness upstream, 2026-12-02" in s for s in registry.releases["2.15"].sources)
    assert left == [d.line() for d in found.differences if d.what == "nightly"]  # a person decides on 2.17
    assert _compare(proposed).differences == [d for d in found.differences if not d.writable]


def test_a_release_on_pypi_the_registry_lacks_becomes_a_table_to_check() -> None:
    def without_215_and_216(text: str) -> str:
        text = re.sub(r'\[releases\."2\.1[56]"\]\n(?:(?!\n\[|\n# ).*\n)*', "", text)
        return text.replace('current = "2.15"', 'current = "2.14"')

    text = _registry_text(without_215_and_216)
    found = _compare(text)
    assert ("2.15", "new-release") in {(d.release, d.what) for d in found.differences}
    proposed, left = upstream.propose(text, parse_registry(tomllib.loads(text)), found.differences, "2026-12-02")
    new = parse_registry(tomllib.loads(proposed)).releases["2.15"]
    assert (new.latest, new.released, new.python[-1]) == ("2.15.0", "2026-10-28", "3.15t")
    assert new.unverified and "copied from 2.14" in new.unverified[0]
    assert any("2.16.0 (test channel)" in line for line in left)  # the candidates: for a person


def test_a_release_in_candidates_that_reached_pypi_leaves_the_test_channel(tmp_path: Path) -> None:
    folder = tmp_path / "recorded"
    shutil.copytree(RECORDED, folder)
    versions = folder / "pip-index-versions" / "pypi.org" / "simple.txt"
    versions.write_text(versions.read_text().replace("Available versions: ", "Available versions: 2.16.0, "))
    page = folder / "pages" / "pypi.org" / "simple" / "torch.json"
    data = json.loads(page.read_text())
    data["files"].append(
        {"filename": "torch-2.16.0-cp315-cp315t-manylinux_2_28_x86_64.whl", "upload-time": "2026-12-22T15:00:00Z"}
    )
    page.write_text(json.dumps(data))
    text = _registry_text()
    found = _compare(text, folder)
    assert ("2.16", "channel") in {(d.release, d.what) for d in found.differences}
    proposed, _ = upstream.propose(text, parse_registry(tomllib.loads(text)), found.differences, "2026-12-23")
    r216 = parse_registry(tomllib.loads(proposed)).releases["2.16"]
    assert (r216.channel, r216.released, r216.planned) == ("release", "2026-12-22", "")


def test_a_pep_503_html_page_is_read_too() -> None:
    body = (
        '<html><body><a href="/whl/nightly/cu134/torch-2.16.0.dev20261130%2Bcu134-cp315-cp315t-manylinux_2_28_x86_64'
        '.whl#sha256=00">torch-2.16.0.dev20261130+cu134-cp315-cp315t-manylinux_2_28_x86_64.whl</a>'
        '<a href="x">torch-2.16.0.dev20261130+cu134-cp315-cp315-win_amd64.whl</a></body></html>'
    )
    assert upstream.parse_page("text/html", body) == [upstream.Wheel("2.16.0.dev20261130", "cu134", "3.15t")]


def test_offline_says_so_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["upstream", "--responses", str(tmp_path)]) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("harness: error: offline: pip index versions torch")


def test_the_verb_prints_differences_and_writes_atomically(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    registry = tmp_path / "backends.toml"
    registry.write_text(_registry_text(_month_ago), encoding="utf-8")
    out = tmp_path / "proposed.toml"
    assert main(["upstream", "--responses", str(RECORDED), "--registry", str(registry), "--write", str(out)]) == 0
    captured = capsys.readouterr()
    assert "2.15: released: registry 2026-10-27, index 2026-10-28 (source: https://pypi.org/simple/torch/)" in (
        captured.out
    )
    assert f"wrote {out}" in captured.err and "for a person (not written): 2.17: nightly" in captured.err
    assert parse_registry(tomllib.loads(out.read_text())).releases["2.15"].released == "2026-10-28"
    assert not list(tmp_path.glob(".proposed.toml.*")), "no temp file left behind"
    assert main(["upstream", "--responses", str(RECORDED), "--write", str(tmp_path / "none.toml")]) == 0
    assert not (tmp_path / "none.toml").exists() and "nothing to write" in capsys.readouterr().err


def test_each_source_says_what_it_gave_and_a_full_read_matches(capsys: pytest.CaptureFixture[str]) -> None:
    registry = Path(upstream.__file__).parents[1] / "backends.toml"
    assert main(["upstream", "--responses", str(RECORDED), "--registry", str(registry)]) == 0
    captured = capsys.readouterr()
    assert "harness upstream: read pip index versions torch --index-url https://pypi.org/simple: " in captured.err
    assert f"harness upstream: read {upstream.CHANNEL_PAGES['nightly']}: " in captured.err
    assert "not read" not in captured.err


def test_a_channel_not_read_is_could_not_check_never_a_match(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 42: three channel pages unread, and still "the registry matches the indexes" (exit 0)."""
    folder = tmp_path / "recorded"
    shutil.copytree(RECORDED, folder)
    shutil.rmtree(folder / "pages" / "download.pytorch.org")
    assert main(["upstream", "--responses", str(folder)]) == 3
    captured = capsys.readouterr()
    assert "matches" not in captured.out
    assert captured.err.count("harness upstream: not read ") == len(upstream.CHANNEL_PAGES)
    error = [line for line in captured.err.splitlines() if line.startswith("harness: error:")]
    assert len(error) == 1 and error[0].startswith("harness: error: could not check 3 source(s)"), captured.err


def test_an_index_pip_did_not_read_is_not_compared(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """pip answers from its find-links when the index refuses it, without a word: only the versions the
    index's own page serves count, and an index whose page does not answer is not read."""
    folder = tmp_path / "recorded"
    shutil.copytree(RECORDED, folder)
    versions = folder / "pip-index-versions" / "pypi.org" / "simple.txt"
    versions.write_text(versions.read_text().replace("Available versions: ", "Available versions: 2.99.0, "))
    found = _compare(_registry_text(), folder)
    assert not any(d.release == "2.99" for d in found.differences), "a version the index does not serve"
    assert any("2.99.0" in note and "left out" in note for note in found.notes)
    (folder / "pages" / "pypi.org" / "simple" / "torch.json").unlink()
    found = _compare(_registry_text(), folder)
    assert not found.complete and "https://pypi.org/simple/torch/" in found.unread
    assert main(["upstream", "--responses", str(folder)]) == 3
    assert "matches" not in capsys.readouterr().out
