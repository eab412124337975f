"""The provenance writers killed at every file operation, for real (SIGKILL to a forked `harness`
child at its Nth operation, tests/faults/file_ops.py): `harness attest` (the statement), `harness
trust add-key` (trust.toml), `harness submit` (the archive) and `harness collect --submissions` (the
unpacked cell). After each kill the output is wholly the old one or wholly the new one, byte for
byte; a rerun completes it and leaves no temp file."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.cell import STATEMENT
from harness.provenance.attestation import attest_cell
from harness.provenance.keys import load_private_key, load_public_key
from harness.provenance.submission import pack
from harness.provenance.trust import add_key, load_trust
from harness.provenance.verify import verify_cell
from tests.faults.file_ops import fresh_copy, operations_of, preload, start_forked, temp_files, tree, wait_forked
from tests.provenance.conftest import CELLS, write_key_pair

KILLED = -9


def _each(count: int, kill: Callable[[int], list[str]], check: Callable[[int, Path], None], tmp: Path) -> None:
    """For n = 1..count: run kill(n)'s argv killed at operation n (a forked child), then check(n, out)."""
    preload()
    for n in range(1, count + 1):
        out = tmp / f"out-{n}"
        ran = wait_forked(start_forked(kill(n), out, at=n), out)
        assert ran.returncode == KILLED, (n, ran.returncode, ran.stderr[-2000:])
        check(n, out)


def _rerun(args: list[str], out: Path) -> None:
    ran = wait_forked(start_forked(args, out), out)
    assert ran.returncode == 0, ran.stderr[-2000:]


@pytest.fixture
def keys(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """Two key pairs: the old signer (A) and the new one (B)."""
    return (*write_key_pair(tmp_path, "a"), *write_key_pair(tmp_path, "b"))  # type: ignore[return-value]


def test_attest_killed_at_every_file_operation_leaves_the_old_or_the_new_statement(
    tmp_path: Path, keys: tuple[Path, Path, Path, Path]
) -> None:
    key_a, _, key_b, pub_b = keys
    old_cell = shutil.copytree(CELLS / "cpu-2.13.0", tmp_path / "old" / "cell")
    attest_cell(old_cell, key=load_private_key(key_a))
    old = (old_cell / STATEMENT).read_bytes()
    reference = fresh_copy(old_cell, tmp_path / "reference" / "cell")
    operations = operations_of(["attest", str(reference), "--key", str(key_b)], tmp_path / "ops.log")
    new = (reference / STATEMENT).read_bytes()
    assert new != old and any(op.startswith("os.rename") for op in operations), operations
    trust = add_key(tmp_path / "trust.toml", load_public_key(pub_b), name="B", backends=["cpu"], columns=[])

    def kill(n: int) -> list[str]:
        return ["attest", str(fresh_copy(old_cell, tmp_path / f"kill-{n}" / "cell")), "--key", str(key_b)]

    def check(n: int, out: Path) -> None:
        cell, what = tmp_path / f"kill-{n}" / "cell", operations[n - 1]
        assert (cell / STATEMENT).read_bytes() in (old, new), (n, what)
        _rerun(["attest", str(cell), "--key", str(key_b)], out)
        assert (cell / STATEMENT).read_bytes() == new and verify_cell(cell, trust).verified, (n, what)
        assert temp_files(cell) == [], (n, what)

    _each(len(operations), kill, check, tmp_path)


def test_trust_add_key_killed_at_every_file_operation_leaves_the_old_or_the_new_file(
    tmp_path: Path, keys: tuple[Path, Path, Path, Path]
) -> None:
    _, pub_a, _, pub_b = keys
    old_dir = tmp_path / "old"
    old_dir.mkdir()
    add_key(old_dir / "trust.toml", load_public_key(pub_a), name="A", backends=["rocm"], columns=[])
    old = (old_dir / "trust.toml").read_bytes()
    args = lambda folder: ["trust", "add-key", str(pub_b), "--backend", "cpu", "--file", str(folder / "trust.toml")]  # noqa: E731
    reference = fresh_copy(old_dir, tmp_path / "reference")
    operations = operations_of(args(reference), tmp_path / "ops.log")
    new = (reference / "trust.toml").read_bytes()
    assert new.startswith(old) and [k.name for k in load_trust(reference / "trust.toml").keys] == ["A", "b"]

    def kill(n: int) -> list[str]:
        return args(fresh_copy(old_dir, tmp_path / f"kill-{n}"))

    def check(n: int, out: Path) -> None:
        folder, what = tmp_path / f"kill-{n}", operations[n - 1]
        assert (folder / "trust.toml").read_bytes() in (old, new), (n, what)
        if (folder / "trust.toml").read_bytes() == old:
            _rerun(args(folder), out)
        assert (folder / "trust.toml").read_bytes() == new and temp_files(folder) == [], (n, what)

    _each(len(operations), kill, check, tmp_path)


def test_submit_killed_at_every_file_operation_leaves_the_old_or_the_new_archive(
    tmp_path: Path, keys: tuple[Path, Path, Path, Path]
) -> None:
    key_a, _, key_b, _ = keys
    cell = shutil.copytree(CELLS / "cpu-2.13.0", tmp_path / "cell")
    attest_cell(cell, key=load_private_key(key_a))
    old_dir = tmp_path / "old"
    pack(cell, old_dir / "cell.cell.tar.gz")
    old = (old_dir / "cell.cell.tar.gz").read_bytes()
    attest_cell(cell, key=load_private_key(key_b))  # signed again: the next submission differs
    args = lambda folder: ["submit", str(cell), "-o", str(folder / "cell.cell.tar.gz")]  # noqa: E731
    reference = fresh_copy(old_dir, tmp_path / "reference")
    operations = operations_of(args(reference), tmp_path / "ops.log")
    new = (reference / "cell.cell.tar.gz").read_bytes()
    assert new != old

    def kill(n: int) -> list[str]:
        return args(fresh_copy(old_dir, tmp_path / f"kill-{n}"))

    def check(n: int, out: Path) -> None:
        folder, what = tmp_path / f"kill-{n}", operations[n - 1]
        assert (folder / "cell.cell.tar.gz").read_bytes() in (old, new), (n, what)
        _rerun(args(folder), out)
        assert (folder / "cell.cell.tar.gz").read_bytes() == new and temp_files(folder) == [], (n, what)

    _each(len(operations), kill, check, tmp_path)


def test_collect_killed_at_every_file_operation_leaves_no_cell_or_the_whole_cell(
    tmp_path: Path, keys: tuple[Path, Path, Path, Path]
) -> None:
    key_a, pub_a, _, _ = keys
    cell = shutil.copytree(CELLS / "cpu-2.13.0", tmp_path / "cpu-2.13.0")
    attest_cell(cell, key=load_private_key(key_a))
    drops = tmp_path / "drops"
    pack(cell, drops / "cpu-2.13.0.cell.tar.gz")
    listing = tmp_path / "submissions.txt"
    listing.write_text("drops/\n")
    trust = add_key(tmp_path / "trust.toml", load_public_key(pub_a), name="A", backends=["cpu"], columns=[])
    args = lambda dest: ["collect", "--submissions", str(listing), "--dest", str(dest)]  # noqa: E731
    operations = operations_of(args(tmp_path / "reference"), tmp_path / "ops.log")
    whole = tree(tmp_path / "reference" / "cpu-2.13.0")
    assert whole == tree(cell) or set(whole) == {p for p in tree(cell) if not p.startswith(".")}

    def kill(n: int) -> list[str]:
        return args(tmp_path / f"kill-{n}")

    def check(n: int, out: Path) -> None:
        dest, what = tmp_path / f"kill-{n}", operations[n - 1]
        cells = [p for p in dest.iterdir() if not p.name.startswith(".")] if dest.exists() else []
        assert cells in ([], [dest / "cpu-2.13.0"]), (n, what, cells)
        if cells:
            assert tree(cells[0]) == whole, (n, what)
        _rerun(args(dest), out)
        assert tree(dest / "cpu-2.13.0") == whole and temp_files(dest) == [], (n, what)
        assert verify_cell(dest / "cpu-2.13.0", trust).verified

    _each(len(operations), kill, check, tmp_path)
