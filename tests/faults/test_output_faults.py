"""What CI does to the outputs, done for real to real `harness` children: SIGKILL at every file
operation of publish, merge, report and badge; a full disk (a small tmpfs), a read-only bind mount
(those two and the next also for import's new cell);
a folder the user may not write; two publishers at once. After each: the outputs are wholly the old
version or wholly the new one (byte for byte), a rerun's diff.md is an uninterrupted run's, no temp
file is left, and a failure is one line with exit 6, never a traceback.

Mounts need root (CI runs as root): outside CI a test skips only when mounting is impossible.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness import jsonio
from harness.errors import EXIT_OUTPUT
from harness.matrix_json import SPLIT_SCHEMA_VERSION, load_matrix
from tests.faults.conftest import REPO
from tests.faults.file_ops import (
    CHILD,
    Ran,
    fresh_copy,
    operations_of,
    preload,
    run_harness,
    start_forked,
    temp_files,
    tree,
    wait_forked,
)
from tests.publishing_cells import real_cells, write_base_and_new

IN_CI = os.environ.get("CI") == "true"
KILLED = -9


@pytest.fixture(scope="module")
def matrices(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """base.json and new.json: merges of the real publishing cells (a baseline run, then a run with a
    regression, a fix, an added and a removed test and a NO DATA column)."""
    return write_base_and_new(tmp_path_factory.mktemp("matrices"))


def _publish(site: Path, matrix: Path, *extra: str) -> list[str]:
    return ["publish", str(site), "--matrix", str(matrix), *extra]


def _each(count: int, kill: Callable[[int, Path], list[str]], check: Callable[[int, Path], None], tmp: Path) -> None:
    """For n = 1..count, two at a time: kill(n, out) gives the argv to run killed at operation n
    (a forked child), then check(n, out) judges what it left and reruns it."""
    preload()
    for first in range(1, count + 1, 2):
        batch = [n for n in (first, first + 1) if n <= count]
        started = [(n, start_forked(kill(n, tmp / f"out-{n}"), tmp / f"out-{n}", at=n)) for n in batch]
        for n, pid in started:
            ran = wait_forked(pid, tmp / f"out-{n}")
            assert ran.returncode == KILLED, (n, ran.stderr[-2000:])
        for n in batch:
            check(n, tmp / f"out-{n}")


def _rerun(args: list[str], out: Path) -> Ran:
    return wait_forked(start_forked(args, out), out)


def _one_error_line(stderr: str) -> str:
    assert "Traceback" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("harness: error: ")]
    assert len(errors) == 1, stderr
    return errors[0]


# -- kills -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("first", "nightly"),
    [(False, False), (True, False), (False, True)],
    ids=["next-publication", "first-publication", "next-nightly-delta"],
)
def test_publish_killed_at_every_file_operation_leaves_the_old_or_the_new_site(
    matrices: tuple[Path, Path], tmp_path: Path, first: bool, nightly: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, new = matrices
    old_root = tmp_path / "old"
    old_root.mkdir()
    if nightly:  # the same tests published again by the next run: its per-test history is a delta
        base = new
        monkeypatch.setenv("GITHUB_RUN_ID", "1")
    if not first:
        assert run_harness(_publish(old_root / "site", base)).returncode == 0
    if nightly:
        monkeypatch.setenv("GITHUB_RUN_ID", "2")
        # What killed runs of older versions left in place: swept by the next publication.
        (old_root / "site" / ".matrix.json.k3x9_a2b").write_text("half a matrix")
        (old_root / "site" / "history" / "tests" / ".ids-1.json.4242.tmp").write_text("{")
        (old_root / "site" / ".data.new").mkdir()
        (old_root / ".harness-tmp-99999999-0badf00d-site").mkdir()  # a killed publisher's staging
    old = tree(old_root / "site") if not first else None
    reference = fresh_copy(old_root, tmp_path / "reference")
    operations = operations_of(_publish(reference / "site", new), tmp_path / "ops.log")
    new_site = tree(reference / "site", normalise=True)
    diff_md = (reference / "site" / "diff.md").read_bytes() if not first and not nightly else None
    assert temp_files(reference) == [] and not (reference / "site" / ".data.new").exists()
    assert any(op.startswith(("harness.outputs.exchange", "os.rename")) for op in operations)
    assert 20 < len(operations) < 200, operations
    if nightly:
        results = [json.loads(p.read_text()) for p in (reference / "site" / "history" / "tests").glob("2*.json")]
        assert sorted(r.get("base") is not None for r in results) == [False, True], "one keyframe, one delta"

    def kill(n: int, out: Path) -> list[str]:
        return _publish(fresh_copy(old_root, tmp_path / f"kill-{n}") / "site", new)

    def check(n: int, out: Path) -> None:
        root, what = tmp_path / f"kill-{n}", operations[n - 1]
        if (root / "site").exists() or not first:
            after = tree(root / "site")
            assert after == old or tree(root / "site", normalise=True) == new_site, (n, what)
        rerun = _rerun(_publish(root / "site", new), out)
        assert rerun.returncode == 0, (n, what, rerun.stderr[-2000:])
        assert tree(root / "site", normalise=True) == new_site, (n, what)
        if diff_md is not None:  # the baseline of the rerun is the last complete publication
            assert (root / "site" / "diff.md").read_bytes() == diff_md, (n, what)
        assert temp_files(root) == [], (n, what)
        shutil.rmtree(root)

    _each(len(operations), kill, check, tmp_path)


@pytest.mark.parametrize("split", [False, True], ids=["one-process-write", "two-process-write"])
def test_merge_killed_at_every_file_operation_leaves_the_old_or_the_new_matrix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, split: bool
) -> None:
    """`two-process-write`: matrix.json's rows split over a forked child (jsonio.write_json_lines_object_split,
    taken here from 2 rows); the children are forked from this process, so they take it too."""
    if split:
        monkeypatch.setattr(jsonio, "MIN_ROWS", 2)
    cells = real_cells()
    root = tmp_path / "old"
    (root / "cells").mkdir(parents=True)
    shutil.copytree(cells.new, root / "cells" / "new")
    shutil.copytree(cells.nodata, root / "cells" / "nodata")
    assert run_harness(["merge", str(cells.base), "-o", str(root / "out" / "matrix.json")]).returncode == 0
    old = (root / "out" / "matrix.json").read_bytes()
    args = lambda at: ["merge", str(at / "cells"), "-o", str(at / "out" / "matrix.json")]  # noqa: E731
    reference = fresh_copy(root, tmp_path / "reference")
    operations = operations_of(args(reference), tmp_path / "ops.log")
    new = _same(reference, (reference / "out" / "matrix.json").read_bytes())
    spool = [op for op in operations if op.startswith(f"open {tempfile.gettempdir()!r}")]
    assert bool(spool) == split, "the child's unnamed temp file (its open counts twice): only where the write is split"

    def kill(n: int, out: Path) -> list[str]:
        return args(fresh_copy(root, tmp_path / f"kill-{n}"))

    def check(n: int, out: Path) -> None:
        at = tmp_path / f"kill-{n}"
        after = (at / "out" / "matrix.json").read_bytes()
        assert after == old or _same(at, after) == new, (n, operations[n - 1])
        assert _rerun(args(at), out).returncode == 0
        assert _same(at, (at / "out" / "matrix.json").read_bytes()) == new
        assert temp_files(at) == [], (n, operations[n - 1])

    _each(len(operations), kill, check, tmp_path)


def test_cells_forget_killed_at_every_file_operation_leaves_each_run_whole_and_the_old_or_the_new_matrix(
    tmp_path: Path,
) -> None:
    """`harness cells forget` moves a run to the trash, then merges results/matrix.json again (issue 42):
    killed at each of its file operations, every run is whole in one place (results/ or its trash),
    matrix.json is the old one or the new one, and what the user does next (forget again, or the
    merge it names) ends with the new matrix and no temp file."""
    cells = real_cells()
    root = tmp_path / "old"
    results = root / "results"
    shutil.copytree(cells.new, results / "cpu-run")
    shutil.copytree(cells.nodata, results / "rocm-run")
    assert run_harness(["merge", str(results), "-o", str(results / "matrix.json")]).returncode == 0
    old = (results / "matrix.json").read_bytes()
    runs = {name: tree(results / name) for name in ("cpu-run", "rocm-run")}
    args = lambda at: ["cells", "forget", "rocm", "--results-dir", str(at / "results")]  # noqa: E731
    reference = fresh_copy(root, tmp_path / "reference")
    operations = operations_of(args(reference), tmp_path / "ops.log")
    new = _same(reference, (reference / "results" / "matrix.json").read_bytes())
    assert new != _same(root, old) and any(op.startswith("os.rename") for op in operations)

    def kill(n: int, out: Path) -> list[str]:
        return args(fresh_copy(root, tmp_path / f"kill-{n}"))

    def check(n: int, out: Path) -> None:
        at, what = tmp_path / f"kill-{n}", operations[n - 1]
        for name, files in runs.items():
            places = [p for p in (at / "results" / name, at / "results" / ".trash" / name) if p.exists()]
            assert len(places) == 1 and tree(places[0]) == files, (n, what, name)
        after = (at / "results" / "matrix.json").read_bytes()
        assert after == old or _same(at, after) == new, (n, what)
        if (at / "results" / "rocm-run").exists():  # killed before the move: the user forgets again
            again = _rerun(args(at), out)
        else:  # killed after it: the merge the docs name
            again = _rerun(["merge", str(at / "results"), "-o", str(at / "results" / "matrix.json")], out)
        assert again.returncode == 0, (n, what, again.stderr[-2000:])
        assert _same(at, (at / "results" / "matrix.json").read_bytes()) == new, (n, what)
        assert temp_files(at) == [], (n, what)

    _each(len(operations), kill, check, tmp_path)


def _same(root: Path, matrix: bytes) -> bytes:
    """A matrix without what differs between two merges of the same cells: the time, the folder."""
    matrix = matrix.replace(str(root).encode(), b"ROOT")
    return re.sub(rb'"generated_at": "[^"]*"', b'"generated_at": "T"', matrix)


@pytest.mark.parametrize("verb", ["report", "badge"])
def test_report_and_badges_killed_at_every_file_operation_leave_old_or_new_files(
    matrices: tuple[Path, Path], tmp_path: Path, verb: str
) -> None:
    base, new = matrices
    out_name = "summary.md" if verb == "report" else "badges"
    args = lambda matrix, at: [verb, str(matrix), "-o", str(at / out_name)]  # noqa: E731
    root = tmp_path / "old"
    root.mkdir()
    assert run_harness(args(base, root)).returncode == 0
    old = tree(root)
    reference = fresh_copy(root, tmp_path / "reference")
    operations = operations_of(args(new, reference), tmp_path / "ops.log")
    fresh = tree(reference)
    assert fresh != old

    def kill(n: int, out: Path) -> list[str]:
        return args(new, fresh_copy(root, tmp_path / f"kill-{n}"))

    def check(n: int, out: Path) -> None:
        at = tmp_path / f"kill-{n}"
        for name, body in tree(at).items():  # each file whole: the old one or the new one, never 0 bytes
            if not Path(name).name.startswith(".harness-tmp-"):
                assert body in (old.get(name), fresh.get(name)), (n, name, operations[n - 1])
        assert _rerun(args(new, at), out).returncode == 0
        assert tree(at) == fresh and temp_files(at) == [], (n, operations[n - 1])

    _each(len(operations), kill, check, tmp_path)


# -- a write that fails, at every file operation --------------------------------------------------------
ERRORS = ("ENOSPC", "EROFS", "EACCES", "EDQUOT")


def _fails_at_every_operation(
    args: list[str], root: Path, tmp: Path, *, normalise: bool = False, same: Callable[[Path], object] = tree
) -> None:
    """`args` (writing below `root`) with its Nth file operation failing, for every N, the errors
    taking turns: exit 6 with one line and every output as it was, or (a failure in the clean-up
    after the switch) exit 0 with the new outputs; never a traceback."""
    preload()
    reference = fresh_copy(root, tmp / "reference")
    swap = lambda argv, at: [str(at) + a[len(str(root)) :] if a.startswith(str(root)) else a for a in argv]  # noqa: E731
    operations = operations_of(swap(args, reference), tmp / "ops.log")
    old, new = same(root), same(reference)
    for n, what in enumerate(operations, 1):
        cause = ERRORS[n % len(ERRORS)]
        at = fresh_copy(root, tmp / f"fail-{n}")
        ran = wait_forked(
            start_forked(swap(args, at), tmp / f"out-{n}", at=n, action=f"error:{cause}"), tmp / f"out-{n}"
        )
        assert ran.returncode in (0, EXIT_OUTPUT), (n, what, ran.stderr[-2000:])
        if ran.returncode == EXIT_OUTPUT:
            line = _one_error_line(ran.stderr)
            assert line.endswith(f": {os.strerror(getattr(errno, cause))}") and ".harness-tmp-" not in line, (n, line)
            assert same(at) == old, (n, what)
            removal = what.startswith(("os.remove", "os.rmdir"))
            assert temp_files(at) == [] or removal, (n, what, temp_files(at))
        else:
            assert "Traceback" not in ran.stderr and same(at) == new, (n, what)
        shutil.rmtree(at)


def test_publish_failing_at_every_file_operation_is_exit_6_and_the_old_site(
    matrices: tuple[Path, Path], tmp_path: Path
) -> None:
    base, new = matrices
    root = tmp_path / "old"
    assert run_harness(_publish(root / "site", base)).returncode == 0
    _fails_at_every_operation(
        _publish(root / "site", new), root, tmp_path, same=lambda r: tree(r / "site", normalise=True)
    )


def test_merge_and_report_failing_at_every_file_operation_are_exit_6_and_the_old_outputs(
    matrices: tuple[Path, Path], tmp_path: Path
) -> None:
    base, new = matrices
    cells = real_cells()
    root = tmp_path / "old"
    assert run_harness(["merge", str(cells.base), "-o", str(root / "matrix.json")]).returncode == 0
    assert run_harness(["report", str(base), "-o", str(root / "summary.md")]).returncode == 0
    merge = ["merge", str(cells.new), str(cells.nodata), "-o", str(root / "matrix.json")]
    _fails_at_every_operation(
        merge, root, tmp_path / "merge", same=lambda r: _same(r, (r / "matrix.json").read_bytes())
    )
    report = ["report", str(new), "-o", str(root / "summary.md")]
    _fails_at_every_operation(report, root, tmp_path / "report", same=lambda r: tree(r))


# -- full, read-only and forbidden folders ---------------------------------------------------------------
@contextlib.contextmanager
def _mounted(argv: list[str], where: Path) -> Iterator[None]:
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([*argv, str(where)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        if IN_CI:
            pytest.fail(f"cannot mount in CI (the runner is root): {done.stderr.strip()}")
        pytest.skip(f"mount is impossible here (not root, or no CAP_SYS_ADMIN): {done.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(folder: Path) -> None:
    """Write until the file system is full."""
    with (folder / "filler").open("wb", buffering=0) as handle, contextlib.suppress(OSError):
        while True:
            handle.write(b"\0" * 4096)


def _three_outputs(root: Path, base: Path) -> None:
    """A published site, a merged matrix and a summary, as a previous run left them."""
    cells = real_cells()
    assert run_harness(_publish(root / "site", base)).returncode == 0
    assert run_harness(["merge", str(cells.base), "-o", str(root / "matrix.json")]).returncode == 0
    assert run_harness(["report", str(base), "-o", str(root / "summary.md")]).returncode == 0
    (root / "results").mkdir()


def _writes_fail_and_keep_the_old(root: Path, new: Path, cause: str, preexec_fn=None) -> None:
    before = tree(root)
    cells = real_cells()
    junit = REPO / "tests" / "dialects" / "pytest" / "junit-xunit2.xml"
    for args in (
        _publish(root / "site", new),
        ["merge", str(cells.new), str(cells.nodata), "-o", str(root / "matrix.json")],
        ["report", str(new), "-o", str(root / "summary.md")],
        ["badge", str(new), "-o", str(root / "badges")],
        # a new cell: exit 6 as every writer's (issue 42: import said 4, an unreadable input)
        ["import", str(junit), "--backend", "cpu", "--cell-id", "c", "--results-dir", str(root / "results")],
    ):
        ran = run_harness(args, preexec_fn=preexec_fn)
        assert ran.returncode == EXIT_OUTPUT == 6, (args[0], ran.stderr[-2000:])
        line = _one_error_line(ran.stderr)
        assert re.fullmatch(rf"harness: error: cannot write {re.escape(str(root))}/\S+: {cause}", line), line
        assert ".harness-tmp-" not in line, line  # the output's own name, not a temp file's
        assert tree(root) == before, args[0]  # the previous outputs exactly as they were
        assert temp_files(root) == []


def test_a_full_disk_is_one_line_exit_6_and_the_old_outputs_stay(matrices: tuple[Path, Path], tmp_path: Path) -> None:
    base, new = matrices
    disk = tmp_path / "disk"
    with _mounted(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs"], disk):
        _three_outputs(disk, base)
        _fill(disk)
        _writes_fail_and_keep_the_old(disk, new, "No space left on device")


def test_a_read_only_mount_is_one_line_exit_6_and_the_old_outputs_stay(
    matrices: tuple[Path, Path], tmp_path: Path
) -> None:
    base, new = matrices
    source, view = tmp_path / "source", tmp_path / "view"
    source.mkdir()
    _three_outputs(source, base)
    with _mounted(["mount", "--bind", str(source)], view):
        done = subprocess.run(["mount", "-o", "remount,bind,ro", str(view)], capture_output=True, check=False)
        assert done.returncode == 0, done.stderr
        _writes_fail_and_keep_the_old(view, new, "Read-only file system")


def _without_root_powers() -> Callable[[], None] | None:
    """As root, a child that obeys file permissions: CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH
    dropped from its bounding set before exec (root then gets neither). Otherwise nothing to do."""
    if os.geteuid() != 0:
        return None

    def drop() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        for capability in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
            if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
                raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")

    return drop


def test_a_folder_the_user_may_not_write_is_one_line_exit_6(matrices: tuple[Path, Path], tmp_path: Path) -> None:
    base, new = matrices
    root = tmp_path / "outputs"
    root.mkdir()
    _three_outputs(root, base)
    for folder in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        folder.chmod(0o555)
    try:
        _writes_fail_and_keep_the_old(root, new, "Permission denied", preexec_fn=_without_root_powers())
    finally:
        for folder in [root, *(p for p in root.rglob("*") if p.is_dir())]:
            folder.chmod(0o755)


# -- two publishers ----------------------------------------------------------------------------------
def _paused_publisher(args: list[str], at: int, seconds: float) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "FAULT_AT": str(at), "FAULT_ACTION": f"pause:{seconds}"}
    child = subprocess.Popen([sys.executable, "-c", CHILD, *args], cwd=REPO, env=env, stderr=subprocess.PIPE, text=True)
    assert child.stderr is not None
    line = child.stderr.readline()  # "fault: paused": it holds the lock from here
    assert line.strip() == "fault: paused", line
    return child


def test_two_publishers_at_once_take_turns_and_never_interleave(matrices: tuple[Path, Path], tmp_path: Path) -> None:
    base, new = matrices
    site = tmp_path / "site"
    assert run_harness(_publish(site, base)).returncode == 0
    probe = fresh_copy(site, tmp_path / "probe" / "site")
    operations = operations_of(_publish(probe, new), tmp_path / "ops.log")
    locked_at = next(i for i, op in enumerate(operations, 1) if op.startswith("fcntl.flock"))
    first = _paused_publisher(_publish(site, new), locked_at + 2, 4.0)
    try:
        refused = run_harness(_publish(site, base, "--lock-timeout", "0.5"))
        assert refused.returncode == 6
        line = _one_error_line(refused.stderr)
        assert f"the site {site} is being written by process {first.pid}" in line, line
        assert "gave up after 0.5 s" in line and "--lock-timeout" in line, line
        started = time.monotonic()
        second = run_harness(_publish(site, base, "--lock-timeout", "60"))  # waits for the first
        assert second.returncode == 0, second.stderr
        assert time.monotonic() - started > 1.5
    finally:
        first.wait(timeout=60)
    assert first.returncode == 0
    # The second published last, against the first's publication: its baseline was read under the lock.
    published = load_matrix(site / "matrix.json").to_json()  # the split form (index and parts)
    head = json.loads(base.read_text())
    split = max(head["schema_version"], SPLIT_SCHEMA_VERSION, key=lambda v: tuple(map(int, v.split("."))))
    assert published == {**head, "schema_version": split}  # the split form is 1.4 or the matrix's, if later
    new_time = json.loads(new.read_text())["generated_at"]
    assert f"Baseline generated {new_time}" in (site / "diff.md").read_text()
    assert temp_files(tmp_path) == []


# -- bad cells ---------------------------------------------------------------------------------------
def test_an_unreadable_cell_folder_or_file_is_that_columns_error(tmp_path: Path) -> None:
    cells = real_cells()
    good = shutil.copytree(cells.new, tmp_path / "cells" / "good")
    closed = shutil.copytree(cells.nodata, tmp_path / "cells" / "closed")
    (good / "junit.xml").chmod(0)
    closed.chmod(0)
    out = tmp_path / "out"
    out.mkdir()
    merge = ["merge", str(tmp_path / "cells"), "-o"]
    try:
        ran = run_harness([*merge, str(out / "m.json")], preexec_fn=_without_root_powers())
        strict = run_harness([*merge, str(out / "s.json"), "--strict"], preexec_fn=_without_root_powers())
    finally:
        closed.chmod(0o755)
        (good / "junit.xml").chmod(0o644)
    assert ran.returncode == 0, ran.stderr
    assert "Traceback" not in ran.stderr
    warnings = [line for line in ran.stderr.splitlines() if line.startswith("harness: warning:")]
    assert warnings == [f"harness: warning: {closed}/manifest.json: cannot read: Permission denied"]
    matrix = json.loads((out / "m.json").read_text())
    column = next(c for c in matrix["columns"] if c["id"] == "cpu")
    assert "junit.xml: cannot open: Permission denied" in column["errors"]
    assert column["counts"], "the column keeps the results its event log holds"
    assert [e["source"] for e in matrix["input_errors"]] == [str(closed)]
    assert strict.returncode == 4 and "1 input(s) could not be read" in strict.stderr


@pytest.mark.parametrize("name", ["manifest.json", "junit.xml", "events.jsonl", "collected.json"])
def test_a_fifo_where_a_cell_file_should_be_is_refused_without_opening_it(tmp_path: Path, name: str) -> None:
    cell = shutil.copytree(real_cells().new, tmp_path / "cells" / "cell")
    (cell / name).unlink()
    os.mkfifo(cell / name)  # opened for reading, it would block until a writer comes: forever
    ran = run_harness(["merge", str(cell), "-o", str(tmp_path / "m.json")], timeout=60)
    said = "it is a FIFO (named pipe), not a file (refused without reading it)"
    if name == "manifest.json":  # the only cell unreadable: nothing read, nothing written (exit 4)
        assert ran.returncode == 4 and not (tmp_path / "m.json").exists(), ran.stderr
        assert f"{cell}/manifest.json: cannot read: {said}" in _one_error_line(ran.stderr)
    else:
        assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stderr
        matrix = json.loads((tmp_path / "m.json").read_text())
        (column,) = matrix["columns"]
        assert any(name in e and said in e for e in column["errors"]), column["errors"]


def test_history_json_parses_with_a_damaged_entry_and_warns_on_stderr(
    matrices: tuple[Path, Path], tmp_path: Path
) -> None:
    base, new = matrices
    site = tmp_path / "site"
    assert run_harness(_publish(site, base)).returncode == 0
    assert run_harness(_publish(site, new)).returncode == 0
    entry = sorted((site / "history").glob("2*.json"))[0]
    entry.write_text("{ cut off")
    test_id = "alpha/test_a.py::test_regress"
    ran = run_harness(["history", test_id, "--history", str(site / "history"), "--format", "json"])
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["test"] == test_id
    assert f"harness: warning: {entry}: unreadable history entry" in ran.stderr


def test_every_verbs_json_on_stdout_parses(matrices: tuple[Path, Path], tmp_path: Path) -> None:
    """`--format json` of every verb that has it, with a damaged input where the verb warns: stdout
    is the JSON alone, diagnostics go to stderr."""
    base, new = matrices
    cell = shutil.copytree(real_cells().new, tmp_path / "cells" / "cell")
    with (cell / "events.jsonl").open("a") as events:
        events.write('{"event": "pass", "nodeid": "cut off')  # a half line: the report carries the error
    assert run_harness(["merge", str(cell), "-o", str(tmp_path / "m.json")]).returncode == 0
    for args in (
        ["plan", "--format", "json"],
        ["backends", "--format", "json"],
        ["report", str(tmp_path / "m.json"), "--format", "json"],
        ["diff", str(base), str(new), "--format", "json"],
        ["doctor", "--format", "json"],
    ):
        ran = run_harness(args)
        assert ran.returncode == 0, (args, ran.stderr[-2000:])
        json.loads(ran.stdout)  # the whole of stdout is one JSON document
