"""A submission archive: packed the same way every time, unpacked only when every member is safe."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest

from harness.cell import STATEMENT
from harness.errors import InputError
from harness.provenance import submission
from harness.provenance.submission import MAX_MEMBERS, archive_name, check, pack, unpack
from harness.provenance.verify import verify_cell
from tests.provenance.conftest import Signed


def test_a_signed_cell_packs_the_same_every_time_and_unpacks_verified(signed: Signed, tmp_path: Path) -> None:
    first = pack(signed.cell, tmp_path / "a" / archive_name(signed.cell))
    second = pack(signed.cell, tmp_path / "b" / archive_name(signed.cell))
    assert first.name == "cpu-2.13.0.cell.tar.gz" and first.read_bytes() == second.read_bytes()
    (signed.cell / ".harness-lock").write_text("")  # outputs.py's own files never travel
    assert pack(signed.cell, tmp_path / "c.cell.tar.gz").read_bytes() == first.read_bytes()
    cell = unpack(first, tmp_path / "results")
    assert cell == tmp_path / "results" / "cpu-2.13.0"
    assert sorted(p.name for p in cell.iterdir()) == sorted(
        p.name for p in signed.cell.iterdir() if not p.name.startswith(".")
    )
    assert verify_cell(cell, signed.trust).verified
    again = unpack(first, tmp_path / "results")
    assert again == cell and verify_cell(cell, signed.trust).verified, "a second copy replaces the first whole"


def test_an_unsigned_cell_is_not_packed(signed: Signed, tmp_path: Path) -> None:
    (signed.cell / STATEMENT).unlink()
    with pytest.raises(InputError, match=r"no statement \(provenance.json\)"):
        pack(signed.cell, tmp_path / "x.cell.tar.gz")
    assert not (tmp_path / "x.cell.tar.gz").exists()


def _archive(path: Path, members: list[tarfile.TarInfo | tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                tar.addfile(member)
            else:
                name, data = member
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


def _device(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.CHRTYPE
    return info


MANIFEST = ("cell/manifest.json", b'{"cell_id": "cell"}')
HOSTILE = {
    "a symbolic link": ([MANIFEST, _link("cell/junit.xml", "/etc/passwd")], "is a symbolic link (to '/etc/passwd')"),
    "a hard link": ([MANIFEST, _link("cell/x", "/etc/passwd", tarfile.LNKTYPE)], "is a hard link"),
    "a device": ([MANIFEST, _device("cell/null")], "is a device"),
    "a path that escapes": ([MANIFEST, ("cell/../../escape.txt", b"x")], "escapes the archive's folder"),
    "an absolute path": ([("/tmp/escape.txt", b"x")], "escapes the archive's folder"),
    "two cells": ([MANIFEST, ("other/manifest.json", b"{}")], "members in two folders"),
    "a member twice": ([MANIFEST, MANIFEST], "is there twice"),
    "a hidden file": ([MANIFEST, ("cell/.bashrc", b"x")], "is a hidden file"),
    "no manifest": ([("cell/junit.xml", b"<testsuite/>")], "no cell/manifest.json: not a cell"),
    "a bad folder name": ([("-cell/manifest.json", b"{}")], "is not a cell folder name"),
}


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_a_hostile_archive_is_one_line_and_nothing_is_written(tmp_path: Path, kind: str) -> None:
    members, said = HOSTILE[kind]
    archive = _archive(tmp_path / "bad.cell.tar.gz", members)
    results = tmp_path / "results"
    results.mkdir()
    with pytest.raises(InputError) as err:
        unpack(archive, results)
    assert said in str(err.value) and "\n" not in str(err.value)
    assert list(results.iterdir()) == [], "nothing written, not even a temp folder"
    assert not (tmp_path / "escape.txt").exists() and not Path("/tmp/escape.txt").exists()


def test_what_is_no_archive_or_too_many_members_or_bytes_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "bad.cell.tar.gz"
    bad.write_bytes(b"not gzip at all")
    with pytest.raises(InputError, match=r"not a readable \.tar\.gz archive"):
        check(bad)
    monkeypatch.setattr(submission, "MAX_MEMBERS", 10)  # the bound itself is 100,000: the rule, made small
    many = _archive(tmp_path / "many.cell.tar.gz", [MANIFEST, *((f"cell/f{i}", b"") for i in range(11))])
    with pytest.raises(InputError, match="more than 10 members"):
        check(many)
    monkeypatch.setattr(submission, "MAX_UNPACKED", 1000)
    big = _archive(tmp_path / "big.cell.tar.gz", [MANIFEST, ("cell/junit.xml", b"<" * 2000)])
    with pytest.raises(InputError, match="unpacks to more than"):
        check(big)
    assert submission.MAX_MEMBERS == 10 and MAX_MEMBERS == 100_000


def test_an_archive_cut_short_leaves_nothing(signed: Signed, tmp_path: Path) -> None:
    archive = pack(signed.cell, tmp_path / "x.cell.tar.gz")
    archive.write_bytes(archive.read_bytes()[: os.path.getsize(archive) // 2])
    results = tmp_path / "results"
    results.mkdir()
    with pytest.raises(InputError, match=r"not a readable \.tar\.gz archive"):
        unpack(archive, results)
    assert list(results.iterdir()) == []
