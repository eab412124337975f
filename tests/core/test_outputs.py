"""harness/outputs.py: every write whole or not at all, a folder switched in one rename, one
writer at a time, leftovers of dead writers swept (and a live writer's kept)."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

import pytest

from harness import outputs
from harness.errors import EXIT_OUTPUT, OutputLockedError, WriteError

NEVER_A_PID = 99_999_999  # above Linux's pid_max (4,194,304): never a live process


def test_a_file_is_replaced_whole_and_no_temp_file_stays(tmp_path: Path) -> None:
    target = tmp_path / "out" / "summary.md"
    outputs.write_file(target, "old\n")
    outputs.write_file(target, b"new\n")
    assert target.read_bytes() == b"new\n"
    assert oct(target.stat().st_mode & 0o777) == "0o644"
    assert [p.name for p in target.parent.iterdir()] == ["summary.md"]


def test_a_writer_that_fails_leaves_the_old_file_and_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "badge.svg"
    target.write_text("<svg>old</svg>")

    def half_then_fail(handle) -> None:
        handle.write(b"<svg>ne")
        raise RuntimeError("killed here")

    with pytest.raises(RuntimeError):
        outputs.write_file(target, half_then_fail)
    assert target.read_text() == "<svg>old</svg>"
    assert [p.name for p in tmp_path.iterdir()] == ["badge.svg"]


def test_a_folder_that_cannot_hold_the_file_is_one_write_error(tmp_path: Path) -> None:
    (tmp_path / "site").write_text("a file where a folder should be")
    with pytest.raises(WriteError) as caught:
        outputs.write_file(tmp_path / "site" / "index.html", "x")
    assert caught.value.exit_code == EXIT_OUTPUT == 6
    assert str(caught.value) == f"cannot write {tmp_path / 'site'}: File exists"


def test_write_once_never_replaces(tmp_path: Path) -> None:
    path = tmp_path / "history" / "run.json"
    assert outputs.write_once(path, "first")
    assert not outputs.write_once(path, "second")
    assert path.read_text() == "first"
    assert sorted(p.name for p in path.parent.iterdir()) == ["run.json"]


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_a_folder_is_switched_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exchange: bool) -> None:
    if not exchange:
        monkeypatch.setattr(outputs, "_exchange", lambda a, b: False)
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("old page")
    (site / "history").mkdir()
    (site / "history" / "1.json").write_text("run 1")
    staging = outputs.staging_dir(site)
    assert staging.parent == tmp_path and staging.name.startswith(outputs.TEMP_PREFIX)
    outputs.link_tree(site, staging, skip=lambda rel: rel.name == "index.html")
    assert (staging / "history" / "1.json").stat().st_ino == (site / "history" / "1.json").stat().st_ino
    outputs.write_file(staging / "index.html", "new page")
    old = outputs.switch_dir(staging, site)
    assert _tree(site) == {"index.html": b"new page", "history/1.json": b"run 1"}
    assert old is not None and _tree(old) == {"index.html": b"old page", "history/1.json": b"run 1"}
    outputs.remove_tree(old)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_a_first_publication_is_renamed_into_place(tmp_path: Path) -> None:
    staging = outputs.staging_dir(tmp_path / "site")
    outputs.write_file(staging / "index.html", "page")
    assert outputs.switch_dir(staging, tmp_path / "site") is None
    assert _tree(tmp_path / "site") == {"index.html": b"page"}


def test_sweep_removes_dead_writers_leftovers_and_keeps_live_ones(tmp_path: Path) -> None:
    dead = tmp_path / f"{outputs.TEMP_PREFIX}{NEVER_A_PID}-abcd0123-matrix.json"
    dead_dir = tmp_path / f"{outputs.TEMP_PREFIX}{NEVER_A_PID}-abcd0124-site"
    live = tmp_path / f"{outputs.TEMP_PREFIX}1-abcd0125-matrix.json"  # pid 1 is always alive
    mine = tmp_path / f"{outputs.TEMP_PREFIX}{os.getpid()}-abcd0126-matrix.json"
    old_live = tmp_path / f"{outputs.TEMP_PREFIX}1-abcd0127-diff.md"
    other = tmp_path / ".matrix.json.keep"
    for path in (dead, live, mine, old_live, other):
        path.write_text("x")
    dead_dir.mkdir()
    (dead_dir / "index.html").write_text("half a site")
    day_ago = time.time() - outputs.STALE_AFTER - 60
    os.utime(old_live, (day_ago, day_ago))
    removed = outputs.sweep(tmp_path)
    assert sorted(p.name for p in removed) == sorted([dead.name, dead_dir.name, old_live.name])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, mine.name, other.name])


def test_a_second_writer_waits_a_bounded_time_then_is_refused(tmp_path: Path) -> None:
    with outputs.locked(tmp_path, timeout=0), outputs.locked(tmp_path, timeout=0):  # re-entrant within one process
        pass
    holder = os.open(tmp_path / outputs.LOCK_NAME, os.O_RDWR)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        os.pwrite(holder, b"4242\n", 0)
        started = time.monotonic()
        with pytest.raises(OutputLockedError) as caught, outputs.locked(tmp_path, timeout=0.3, what="the site x"):
            pass
        assert 0.3 <= time.monotonic() - started < 3
        assert str(caught.value).startswith("the site x is being written by process 4242 (it holds ")
        assert caught.value.exit_code == 6
    finally:
        os.close(holder)
    with outputs.locked(tmp_path, timeout=0):  # released: free again
        pass


def test_a_switch_cut_between_its_two_renames_is_put_back(tmp_path: Path) -> None:
    """Without renameat2 a switch is two renames; killed between them, the site waits under a temp
    name, and the next publisher (holding the lock) puts it back before anything else."""
    waiting = tmp_path / f"{outputs.TEMP_PREFIX}{NEVER_A_PID}-abcd0123-site.old"
    waiting.mkdir()
    (waiting / "index.html").write_text("the last publication")
    assert outputs.restore_switched(tmp_path / "site") == tmp_path / "site"
    assert _tree(tmp_path / "site") == {"index.html": b"the last publication"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]
    assert outputs.restore_switched(tmp_path / "site") is None  # there: nothing to do
